// Writing Delta commits: the atomic creation of _delta_log/<version>.json (PROTOCOL.md
// "Delta Log Entries"). Conflict detection and retries belong to the transaction layer
// built on top; this is the put-if-absent step and the commitInfo every commit carries.
//
// Thread safety: stateless functions; concurrent writers of one version race safely (one
// wins, the others get Conflict).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "basin/object_store.h"
#include "basin/status.h"
#include "delta/actions.h"

namespace basin::delta {

inline constexpr char kEngineInfo[] = "Basin/0.1.0";

// Writes `actions` as commit `version`, one JSON line each. Conflict (naming the version)
// when that version already exists; the store's error otherwise.
Status WriteCommit(ObjectStore& store, int64_t version, const std::vector<Action>& actions);

// A commitInfo action with timestamp, operation, operationParameters and engineInfo.
CommitInfo MakeCommitInfo(int64_t timestamp_ms, const std::string& operation,
                          nlohmann::json operation_parameters = nlohmann::json::object());

}  // namespace basin::delta
