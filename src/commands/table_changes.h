// The change data feed of a table between two versions, as a DuckDB query: every row
// changed, with _change_type (insert, delete, update_preimage, update_postimage),
// _commit_version and _commit_timestamp. Commits with cdc actions contribute their
// _change_data files; commits without (plain appends and deletes) are derived from their
// add (insert) and remove (delete) actions with dataChange=true.
//
// Thread safety: functions; `conn` is used by one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "basin/object_store.h"
#include "basin/status.h"
#include "engine/duckdb.h"
#include "engine/scan.h"

namespace basin::commands {

struct ChangesScan {
  std::string sql;  // usable as a subquery in FROM while `scans` live
  std::vector<std::shared_ptr<const engine::RegisteredScan>> scans;
  // AppendedRowsSql with skip_change_commits: the commits it skipped, as "version 7 (DELETE)".
  std::vector<std::string> skipped_commits;
};

// Changes from `start_version` to `end_version` inclusive (the latest when unset).
// InvalidArgument when the feed was not enabled for a version in the range (naming it) or
// start > end; NotFound when a version is no longer in the log or a file was vacuumed.
Result<ChangesScan> TableChangesSql(engine::Connection& conn, std::shared_ptr<ObjectStore> store,
                                    const std::string& table_root, int64_t start_version,
                                    std::optional<int64_t> end_version);

// The rows commits `start_version` to `end`'s version (inclusive; empty when start is one
// past it) appended to the table, with `end`'s columns: what a stream of the table
// (STREAM(t)) reads in one batch. The commits are read by key, so the cost is the range's,
// not the log's. Commits that change no data (OPTIMIZE) add nothing. A commit that removed
// or rewrote rows (DELETE, UPDATE, MERGE, overwrites) is skipped whole with
// `skip_change_commits` (its added rows too, as Delta's skipChangeCommits does; the result
// names it in skipped_commits), and is
// otherwise InvalidArgument naming the version and operation. NotFound when a commit is no
// longer in the log.
Result<ChangesScan> AppendedRowsSql(engine::Connection& conn, std::shared_ptr<const delta::Snapshot> end,
                                    int64_t start_version, bool skip_change_commits);

}  // namespace basin::commands
