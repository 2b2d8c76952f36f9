// What every table command (write, DML, maintenance) gets from its caller, and what it
// gives back. Commands work on Delta snapshots and DuckDB SQL; they know nothing of SQL
// statements or table names (src/sql/ parses those and resolves names to snapshots).
//
// Thread safety: a CommandContext is used by one command at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "basin/clock.h"
#include "commands/expectations.h"
#include "delta/actions.h"
#include "delta/transaction.h"
#include "engine/duckdb.h"
#include "engine/parquet_writer.h"

namespace basin::commands {

// Progress of a long command, for the CLI's progress line.
struct Progress {
  std::string phase;  // "scanning", "writing", "committing", "deleting files", ...
  int64_t done = 0;
  int64_t total = -1;  // -1 when unknown
};

struct CommandContext {
  engine::Connection* conn = nullptr;  // REQUIRES: non-null
  // Clock, seed, retry bounds and checkpoint_io for the transactions the command
  // commits.
  delta::TransactionOptions txn_options;
  // What the command itself reads the time from (VACUUM's retention cut-off).
  std::shared_ptr<const Clock> clock = SystemClock();
  // Idempotent write id (appId, version): the command writes it with its data, and skips
  // (CommandResult::commit.skipped) when the table already has a version >= it.
  std::optional<delta::SetTransaction> txn_id;
  std::function<void(const Progress&)> progress;  // may be empty
  // Set (a stream with a dead-letter table): an INSERT or MERGE leaves out the rows its
  // table's NOT NULL and CHECK constraints refuse instead of failing (a MERGE's refused
  // update leaves its target row as it was), and first calls this with a query of them
  // (RefusedRowsSql's columns: value, error), once, before writing; its error fails the write.
  std::function<Status(const std::string& refused_rows_sql)> set_aside_refused;
  // Set (a pipeline's table with expectations): an INSERT into the table it names checks
  // the rows it adds against them first (commands/expectations.h).
  std::shared_ptr<const TableExpectations> expectations;
  // Set (a stream's batch, whose offsets must be durable before anything it writes
  // commits): called before the commit; its error fails the command, which commits nothing.
  std::function<Status()> before_commit;
  // Set (a stream's batch, whose query's columns do not change from batch to batch): what
  // a write's source query gives, in place of engine::Connection::DescribeQuery (a stream
  // describes it once instead of once a batch).
  std::function<Result<std::vector<engine::ColumnType>>(const std::string& source_sql)> describe_source;
  // How the data files a write makes are laid out (a stream's batch sets it).
  engine::FileLayout file_layout;

  void Report(const std::string& phase, int64_t done, int64_t total = -1) const {
    if (progress) progress(Progress{phase, done, total});
  }
};

// The outcome of a command that committed (or skipped) one transaction.
struct CommandResult {  // NOLINT(bugprone-exception-escape): nlohmann::json's constructor
  delta::CommitResult commit;
  // The operationMetrics written to commitInfo, as Delta names them (numOutputRows,
  // numAddedFiles, numRemovedFiles, numDeletedRows, numUpdatedRows, numTargetRowsInserted,
  // ...), values as numbers.
  nlohmann::json metrics = nlohmann::json::object();
  // Things the user should know that did not fail the command (a checkpoint that could
  // not be written, a write skipped by its txn id).
  std::vector<std::string> notices;
};

// operationMetrics as Delta writes them into commitInfo: every value a string (nested
// objects as their JSON text).
nlohmann::json CommitMetrics(const nlohmann::json& metrics);

// Commits `txn` (its actions and operation set) with ctx.txn_id and with `metrics` as its
// operationMetrics, reporting the "committing" phase, and returns the command's outcome:
// the commit, `metrics`, and notices for what did not fail the command: a write skipped
// because `table` (named in the notice) already has ctx.txn_id, a checkpoint or log
// cleanup that failed after the commit succeeded. Errors: the commit's.
Result<CommandResult> CommitCommand(const CommandContext& ctx, delta::Transaction& txn,
                                    nlohmann::json metrics, const std::string& table);

}  // namespace basin::commands
