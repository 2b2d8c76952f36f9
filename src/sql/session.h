// Session: runs Basin SQL text against a warehouse of named Delta tables. A script is split
// where DuckDB splits it (engine::SplitSqlScript) and each statement parsed by Basin's
// grammar (sql/grammar/parse.h). Basin's own statements (CREATE/ALTER/DROP TABLE, INSERT,
// DELETE, UPDATE, MERGE, OPTIMIZE, VACUUM, RESTORE, DESCRIBE HISTORY/DETAIL, SET basin.*)
// are handled by sql/statements.h; the rest goes to DuckDB as written. DuckDB's binder
// resolves Basin's tables (named tables with time travel, delta_scan('path' [, version => N
// | timestamp => '...']), table_changes('name', start [, end])) through the lakehouse
// catalog and table functions (engine/lakehouse.h), which scan the selected snapshots with
// data skipping.
//
// Thread safety: one thread at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "basin/copy_format.h"
#include "basin/status.h"
#include "catalog/warehouse.h"
#include "commands/command_context.h"
#include "delta/actions.h"
#include "engine/duckdb.h"
#include "engine/lakehouse.h"
#include "engine/parquet_writer.h"
#include "engine/sql_text.h"
#include "sql/grammar/statement.h"
#include "sql/read_files.h"

namespace basin::sql {

class SessionContext;

struct SessionOptions {
  // The warehouse of named tables: a folder ("" = the current one) or "memory://<name>";
  // relative delta_scan paths resolve against it too.
  std::string warehouse_dir;
  bool data_skipping = true;  // off only to prove skipping never changes a result
  // COPY ... TO STDOUT returns its rows to the caller (StatementResult::copy_out), who sends
  // them on (a server to its client); otherwise DuckDB writes the process's stdout.
  bool copy_to_caller = false;
  // PostgreSQL's statement_timeout for the session's statements until SET changes it
  // (sql/statement_timeout.h); 0: no limit.
  int64_t statement_timeout_ms = 0;
  // The warehouse user the statements run as, each checked against the user's grants
  // (sql/governor.h); empty: the warehouse's owner, unchecked.
  std::string user = {};
  // Writes record which warehouse tables they read in basin_system.lineage (sql/lineage.h).
  bool record_lineage = false;
  // DuckDB's threads for the session's statements; 0: one per core. A session doing
  // background work (a stream's compaction of its sink) takes one, leaving the other cores
  // to the work it runs beside.
  int threads = 0;
  // The snapshot cache to read tables through (it is thread-safe); null: one of the
  // session's own. A stream's compaction shares its stream's session's: one copy of the
  // sink's snapshot in memory, and one DuckDB database writing its checkpoints, not two.
  std::shared_ptr<engine::SnapshotCache> snapshots = nullptr;
};

// Where the session is between BEGIN and its COMMIT or ROLLBACK. In an aborted block (a
// statement failed), statements other than COMMIT and ROLLBACK fail with
// TransactionAborted, and COMMIT rolls back, as PostgreSQL does.
enum class TransactionStatus { kIdle, kInBlock, kAborted };

struct StatementResult {
  std::string statement;       // the statement text as given
  std::string command;         // its kind, as CommandOf() names it
  engine::QueryResult result;  // empty for statements that return no rows, or streamed ones
  bool returns_rows = false;
  // With ExecuteStatement(..., stream = true), a query's rows as DuckDB produces them
  // (`result` stays empty): read it to the end, then Session::TakeScanStats() tells what
  // its scans read. Null for statements Basin answers itself.
  std::unique_ptr<engine::QueryStream> rows;
  // What skipping did, for EXPLAIN-like output and tests: files read / files in snapshots.
  size_t files_read = 0;
  size_t files_total = 0;
  // Things the user should know that did not fail the statement (a write skipped by its
  // txn id, a checkpoint that could not be written); the CLI prints them to stderr.
  std::vector<std::string> notices;
  // COPY ... TO STDOUT with SessionOptions::copy_to_caller: how its rows (in `rows` or
  // `result`) are to be written.
  std::optional<CopyFormat> copy_out;
  // With ExecuteStatementToParquet, for a query: the rows DuckDB wrote to the file (`result`
  // and `rows` stay empty).
  std::optional<int64_t> parquet_rows;
};

// What STREAM(table) reads while a stream's batch runs: which commits of the table.
struct TableStreamRead {
  enum class Kind {
    kNothing,   // no rows, with the table's latest columns (binding, or a source idle this batch)
    kSnapshot,  // every row of version `end_version` (a stream's first batch)
    kAppends,   // the rows commits start_version..end_version appended
    kChanges,   // the change feed of commits start_version..end_version
  };
  Kind kind = Kind::kNothing;
  int64_t start_version = 0;
  int64_t end_version = 0;
  // kAppends: commits that removed or rewrote rows are skipped whole (skipChangeCommits)
  // instead of stopping the stream.
  bool skip_change_commits = false;
};

// A stream's batch as STREAM(table) sources see it (stream/runner.h installs one). Called
// while the statement is bound, on the session's thread.
class TableStream {
 public:
  virtual ~TableStream() = default;
  // `changes_from` is STREAM table_changes(t, start)'s start; unset for STREAM(t).
  virtual Result<TableStreamRead> Read(const catalog::TableEntry& table,
                                       std::optional<int64_t> changes_from) = 0;
  // The read's last version was committed at `commit_time_ms` (its in-commit timestamp, or
  // its commit file's time): the batch's source time.
  virtual void ReadUpTo(int64_t commit_time_ms) {}
};

// What STREAM read_files(...) reads while a stream's batch runs: the files of `folder`
// (the store of request.folder) the batch takes, and the schema they are read with
// (nullopt: inferred from them). Called while the statement is bound, on the session's
// thread.
struct FilesStreamRead {
  std::vector<InputFile> files;
  std::optional<FileSchema> schema;
};
class FilesStream {
 public:
  virtual ~FilesStream() = default;
  virtual Result<FilesStreamRead> Read(const ReadFilesRequest& request,
                                       const std::shared_ptr<ObjectStore>& folder) = 0;
};

class Session {
 public:
  static Result<std::unique_ptr<Session>> Open(const SessionOptions& options);

  // Runs every statement in `text` in order; stops at the first failure, returning its error
  // (prefixed with the statement number and line when there are several). Syntax errors
  // name the line and column in `text`.
  Result<std::vector<StatementResult>> Execute(const std::string& text);
  // Runs one statement of `script`, as engine::SplitSqlScript(script) gave it; syntax
  // errors name the line and column in `script`.
  Result<StatementResult> ExecuteStatement(std::string_view script, const engine::ScriptStatement& statement,
                                           bool stream = false);
  // As ExecuteStatement, but a query's rows (COPY ... TO STDOUT's too, with copy_to_caller)
  // are written by DuckDB as one Parquet file at `parquet_url` (a basin:// URL,
  // engine/store_registry.h), its types DuckDB's, instead of being returned; the result's
  // `parquet_rows` counts them. The query runs once. Other statements run as
  // ExecuteStatement runs them (not streamed).
  Result<StatementResult> ExecuteStatementToParquet(std::string_view script,
                                                    const engine::ScriptStatement& statement,
                                                    const std::string& parquet_url);
  // Runs a statement grammar::ParseStatement parsed earlier: a stream runs the same one every
  // batch and parses it once. `txn`, when given, makes its write idempotent as SET
  // basin.txn_app_id / basin.txn_version before it would (the app id stays set).
  Result<StatementResult> ExecuteParsed(const grammar::ParsedStatement& parsed,
                                        const std::optional<delta::SetTransaction>& txn = std::nullopt);
  // Files read and in the snapshots scanned by the statements run since the last call
  // (for a streamed result: call it after reading the stream to the end).
  engine::ScanStats TakeScanStats();
  TransactionStatus transaction_status();

  engine::Connection& connection();
  // Receives the progress of long commands (OPTIMIZE, MERGE, ...), on the session's thread
  // while Execute() runs. Empty to stop.
  void SetProgressCallback(std::function<void(const commands::Progress&)> callback);
  const SessionOptions& options() const;
  // The snapshot cache the session reads tables through, for another session to share
  // (SessionOptions::snapshots).
  const std::shared_ptr<engine::SnapshotCache>& snapshot_cache() const;
  // Whether an INSERT or a MERGE may read STREAM sources (refused as not yet run otherwise): a stream
  // runner (stream/runner.h) turns it on while it runs a micro-batch's statement, whose
  // sources then read the batch it installed.
  void AllowStreams(bool allowed);
  // What the statement's STREAM(table) source number `source` (engine/stream_calls.h)
  // reads while streams are allowed; null for none (it fails).
  // REQUIRES: `stream` outlives its installation.
  void SetTableStream(int64_t source, TableStream* stream);
  // What STREAM read_files(...) source number `source` reads while streams are allowed;
  // null for none (it fails). A read_files(...) that is no STREAM source reads every file.
  // REQUIRES: `stream` outlives its installation.
  void SetFilesStream(int64_t source, FilesStream* stream);
  // The next write's rows that its table's NOT NULL and CHECK constraints refuse are handed
  // to `set_aside` (commands::CommandContext::set_aside_refused: a query of them, run on this
  // session) instead of failing it; the write consumes it. Null: none.
  void SetAsideRefusedRows(std::function<Status(const std::string& refused_rows_sql)> set_aside);
  // Until called again, every INSERT into the table `expectations` names checks its rows
  // against them (commands::CommandContext::expectations). Null: none.
  void ExpectOnWrites(std::shared_ptr<const commands::TableExpectations> expectations);
  // Until called again, every command's commit first calls `gate`
  // (commands::CommandContext::before_commit); its error fails the command. Null: none.
  void GateCommits(std::function<Status()> gate);
  // Until called again, every write's data files are laid out as `layout` says
  // (commands::CommandContext::file_layout). Default: the defaults.
  void LayOutFiles(engine::FileLayout layout);
  // Until called again, every write describes its source query with `describe`
  // (commands::CommandContext::describe_source) instead of having DuckDB bind it. Null: DuckDB's.
  void DescribeSourcesWith(
      std::function<Result<std::vector<engine::ColumnType>>(const std::string& source_sql)> describe);
  // What statement handlers get (sql/session_context.h): for callers that run commands on
  // this session's connection and snapshots, as the public API's transactions do.
  SessionContext& context();

  ~Session();

 private:
  struct Impl;
  explicit Session(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace basin::sql
