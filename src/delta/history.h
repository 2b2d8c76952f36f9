// Commit timestamps, time travel by timestamp, and reading a commit's commitInfo.
//
// A commit's timestamp is its in-commit timestamp (commitInfo.inCommitTimestamp, PROTOCOL.md
// "In-Commit Timestamps") when it has one, else its file's modification time. Versions
// before in-commit timestamps were enabled use modification times, made monotonic as Delta
// does (each at least 1 ms after the previous one).
//
// Thread safety: stateless functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "basin/object_store.h"
#include "basin/status.h"
#include "delta/actions.h"
#include "delta/log_segment.h"

namespace basin::delta {

// Milliseconds since the epoch (UTC) for 'YYYY-MM-DD', 'YYYY-MM-DD HH:MM:SS[.ffffff]' or
// ISO-8601 with 'T' and an optional 'Z' or '+hh:mm' offset. InvalidArgument otherwise.
Result<int64_t> ParseTimestampMs(std::string_view text);
// "2024-01-31 12:00:00.000 UTC"
std::string FormatTimestampMs(int64_t ms);

// The first commitInfo action in a commit file's content, nullopt when there is none.
// Only lines that mention commitInfo are parsed.
Result<std::optional<CommitInfo>> FindCommitInfo(std::string_view content, const std::string& where);

// The commitInfo of the commit file `object`, reading only its beginning when that holds it.
Result<std::optional<CommitInfo>> ReadCommitInfo(ObjectStore& store, const ObjectInfo& object);

// The latest version whose commit timestamp is at or before `timestamp_ms`; the latest
// version when the timestamp is after every commit. NotFound when it precedes the earliest
// commit a snapshot can be built for. `table` names the table in messages.
Result<int64_t> VersionAtTimestamp(ObjectStore& store, const LogListing& listing, int64_t timestamp_ms,
                                   const std::string& table);

}  // namespace basin::delta
