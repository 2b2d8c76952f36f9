// Helpers shared by the maintenance commands (optimize.cc, vacuum.cc, restore.cc): the
// table as a write target, table properties they read, and commitInfo metrics in Delta's
// form.
//
// Thread safety: functions of their arguments.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>

#include "commands/table_rows.h"
#include "common/status.h"
#include "delta/actions.h"
#include "delta/snapshot.h"
#include "delta/transaction.h"

namespace basin::commands::internal {

// Where new data files of `table` go, with its current protocol, metadata and schema.
WriteTarget TargetOf(const delta::Snapshot& table);

// delta.targetFileSize in bytes ("134217728", "64mb", "1g"; k/m/g with an optional b,
// case-insensitive); 128 MiB when unset. InvalidArgument naming the property otherwise.
Result<int64_t> TargetFileSizeBytes(const delta::Metadata& metadata);

// The transaction clock's time (the system clock when the options set none).
int64_t NowMs(const delta::TransactionOptions& options);

// operationMetrics as Delta writes them into commitInfo: every value a string (nested
// objects as their JSON text).
nlohmann::json CommitMetrics(const nlohmann::json& metrics);

}  // namespace basin::commands::internal
