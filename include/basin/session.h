// Session: runs SQL scripts against a warehouse (warehouse.h): DuckDB's SQL, in which
// warehouse tables are named like any other table ("SELECT * FROM sales.orders VERSION AS
// OF 3"), Delta tables elsewhere are read with delta_scan('path'), and Basin's own
// statements (CREATE/ALTER/DROP TABLE, INSERT, UPDATE, DELETE, MERGE, OPTIMIZE, VACUUM,
// RESTORE, DESCRIBE HISTORY/DETAIL, SET basin.*) work on Delta tables. docs/sql.md is the
// reference. Each session has its own embedded DuckDB database: temporary tables, views
// and settings are the session's.
//
// Results come back whole (Execute) or row chunk by row chunk (ExecuteStatement with
// stream = true, through a RowStream), cells as text: DuckDB's rendering of each value,
// NULL as nullopt.
//
// Thread safety: one thread at a time, except Interrupt() and Progress(), which any thread
// may call while a statement runs. A RowStream belongs to its session's thread and must be
// read to its end or destroyed before the session runs another statement.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "basin/copy_format.h"
#include "basin/status.h"

namespace basin {

class ObjectStore;

// The table snapshots (each table's files and metadata, read from its Delta log) that
// sessions share when given the same cache, with the database that reads the logs'
// checkpoints. Sessions sharing one read a table's log once and hold its file list once,
// however many of them read the table: a server's connections share the server's. Sharing
// changes nothing a session sees: each statement still reads the latest version, and each
// session's grants are checked before a table is read.
//
// Thread safety: any number of sessions, on any threads, may share one.
class TableCache;
// A cache keeping the snapshots of up to `table_versions` table versions; the least recently
// read goes first. Each session otherwise keeps 32 of its own.
std::shared_ptr<TableCache> NewTableCache(size_t table_versions);

struct SessionOptions {
  // The warehouse's local folder ("" is the working folder) or "memory://<name>";
  // relative delta_scan paths resolve against it too.
  std::string warehouse = {};
  // Off only to prove that skipping never changes a result: every file of each snapshot
  // is read.
  bool data_skipping = true;
  // Track how far a running query is, for Progress().
  bool track_progress = false;
  // The warehouse user the session runs as: each statement is checked against the user's
  // grants and refused with PermissionDenied, naming the missing privilege, before it
  // touches anything (docs/governance.md); Open() fails with Unauthenticated when there is
  // no such user. Empty: unchecked, with the rights of the process (the CLI without --user,
  // programs embedding Basin).
  std::string user = {};
  // COPY ... TO STDOUT gives its rows to the caller (StatementResult::copy_out), who sends
  // them on, as a server to its client, and COPY ... FROM STDIN fails with NotImplemented.
  // Off: DuckDB copies to and from the process's own stdout and stdin.
  bool copy_to_caller = false;
  // PostgreSQL's statement_timeout, until `SET statement_timeout` changes it (RESET comes
  // back to this): a statement running longer, reading its rows included, is interrupted and
  // fails with Cancelled "canceling statement due to statement timeout"; a write stopped so
  // commits nothing. 0: no limit. basin/duration.h reads PostgreSQL's spellings ("5s").
  int64_t statement_timeout_ms = 0;
  // Writes (INSERT, MERGE, UPDATE, DELETE, CREATE TABLE ... AS) record the warehouse tables
  // they read in the table basin_system.lineage (docs/lineage.md). basin serve's
  // sessions, streams and pipelines record it; off by default for embedding programs.
  bool record_lineage = false;
  // The snapshots the session reads tables through; null: a cache of the session's own.
  std::shared_ptr<TableCache> tables = nullptr;
};

// One row: a cell per column, NULL as nullopt.
using Row = std::vector<std::optional<std::string>>;

// A whole result.
struct QueryResult {
  std::vector<std::string> column_names;
  std::vector<std::string> column_types;  // DuckDB's type names: "BIGINT", "DECIMAL(10,2)"
  std::vector<Row> rows;
  size_t row_count() const { return rows.size(); }
  size_t column_count() const { return column_names.size(); }
};

// A query's rows as DuckDB produces them, so that memory stays bounded however large the
// result. The query's errors (a failed cast, an interrupt) surface from Next().
class RowStream {
 public:
  virtual ~RowStream() = default;
  virtual const std::vector<std::string>& column_names() const = 0;
  virtual const std::vector<std::string>& column_types() const = 0;
  // Replaces `rows` with the next rows (at most 2048); false when there are no more.
  virtual Result<bool> Next(std::vector<Row>* rows) = 0;
};

// Data skipping: of the data files in the snapshots a statement scanned, how many it read.
struct ScanStats {
  size_t files_read = 0;
  size_t files_total = 0;
};

// What a long command (OPTIMIZE, MERGE, a large INSERT) is doing.
struct CommandProgress {
  std::string phase;  // "scanning", "writing", "committing", "deleting files", ...
  int64_t done = 0;
  int64_t total = -1;  // -1 when unknown
};

struct StatementResult {
  std::string statement;  // the statement's text as given
  // Its kind, in the words of PostgreSQL's command tags: "SELECT", "INSERT", "UPDATE",
  // "DELETE", "MERGE", "CREATE TABLE", "OPTIMIZE", ...; DuckDB's statement type for
  // statements DuckDB runs ("COPY", "CREATE"); "BEGIN", "COMMIT", "ROLLBACK".
  std::string command;
  bool returns_rows = false;
  QueryResult result;  // the rows, unless streamed
  // With ExecuteStatement(..., stream = true), a query's rows (`result` stays empty). Read
  // it to the end, then TakeScanStats() tells what its scans read. Null for statements
  // Basin answers itself, whose rows are in `result`.
  std::unique_ptr<RowStream> rows;
  size_t files_read = 0;  // as ScanStats, for results that are not streamed
  size_t files_total = 0;
  // Things the user should know that did not fail the statement (a write skipped by its
  // txn id, a checkpoint that could not be written).
  std::vector<std::string> notices;
  // COPY ... TO STDOUT with SessionOptions::copy_to_caller: how its rows (in `rows` or
  // `result`, as for a query) are to be written.
  std::optional<CopyFormat> copy_out;
  // With Session::ExecuteStatementToParquet, for a query: how many rows the Parquet file
  // holds (`result` and `rows` stay empty). nullopt otherwise.
  std::optional<int64_t> parquet_rows;
};

// Where a session is between BEGIN and its COMMIT or ROLLBACK. Writes to warehouse tables
// commit when their statement ends, in a block or not: ROLLBACK does not undo them
// (docs/server.md).
enum class TransactionStatus {
  kIdle,     // outside a block: each statement commits alone
  kInBlock,  // after BEGIN
  // A statement failed in the block: the others fail with TransactionAborted until COMMIT
  // or ROLLBACK, both of which roll back (PostgreSQL's rule).
  kAborted,
};

// One statement of a script: `text` is script[offset, offset + text.size()), from its
// first token to its last, without the ';' that ends it. `line` and `column` (1-based,
// columns counting characters) are where it starts.
struct StatementText {
  std::string text;
  size_t offset = 0;
  size_t line = 1;
  size_t column = 1;
};

// The statements of `script`, split where DuckDB's parser splits them (';' in strings,
// comments and dollar quotes does not split). Empty statements are dropped.
std::vector<StatementText> SplitStatements(std::string_view script);

// Whether `text` holds at least one statement, every string and comment in it is closed,
// and it ends with ';': what an interactive shell waits for before running input.
bool IsCompleteInput(std::string_view text);

// The placeholders $1, $2, ... of a statement sent with parameters (PostgreSQL's extended
// protocol), found by DuckDB's tokenizer, so that "$1" in a string, a quoted name or a
// comment is left alone.
struct StatementParameters {
  int count = 0;  // the highest placeholder number, 0 when there is none
};
// InvalidArgument (a syntax error naming line and column) when `statement` cannot be
// tokenized.
Result<StatementParameters> FindParameters(std::string_view statement);
// `statement` with each placeholder $n replaced by literals[n - 1], SQL text the caller made
// (a quoted string, a CAST, NULL). InvalidArgument naming the placeholder when it has no
// literal.
Result<std::string> BindParameters(std::string_view statement, const std::vector<std::string>& literals);

// What Session::Describe tells of a statement.
struct StatementDescription {
  std::string command;  // as StatementResult::command
  // The types of its parameters $1..$n (DuckDB type names, by number - 1; "" for one whose
  // type nothing tells), as DuckDB's binder gives them and, for a cell of an INSERT's
  // VALUES, as the column it fills: what a value sent untyped is cast to.
  std::vector<std::string> parameter_types;
  // Its result's columns, known for queries and the other statements DuckDB prepares;
  // Basin's own statements (writes to warehouse tables, DESCRIBE HISTORY, OPTIMIZE...)
  // tell theirs when they run.
  bool columns_known = false;
  std::vector<std::string> column_names;
  std::vector<std::string> column_types;  // DuckDB type names
};

class Session {
 public:
  // InvalidArgument when the warehouse folder is a file; NotImplemented for a URL other
  // than memory://.
  static Result<std::unique_ptr<Session>> Open(const SessionOptions& options);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Runs every statement of `script` in order; stops at the first failure and returns its
  // error (prefixed with "statement N (line L)" when the script has several). What the
  // statements before it did stays done. Syntax errors name the line and column.
  Result<std::vector<StatementResult>> Execute(const std::string& script);

  // Runs one statement of `script`, as SplitStatements(script) gave it; syntax errors name
  // the line and column in `script`. With `stream`, a query's rows come as a RowStream.
  Result<StatementResult> ExecuteStatement(std::string_view script, const StatementText& statement,
                                           bool stream = false);

  // As ExecuteStatement, but a query's rows (COPY ... TO STDOUT's too, with copy_to_caller)
  // are written by DuckDB as one Parquet file, the object `key` of `store`, instead of being
  // returned: the query runs once, the file's columns have the query's types, and
  // `parquet_rows` counts its rows. Other statements (writes, Basin's own statements) run as
  // ExecuteStatement runs them, their rows in `result`. After a failure the object may exist,
  // partly written: the caller deletes it.
  Result<StatementResult> ExecuteStatementToParquet(std::string_view script, const StatementText& statement,
                                                    std::shared_ptr<ObjectStore> store,
                                                    const std::string& key);

  // What `statement` would give, told without running it (PostgreSQL's Describe of a
  // prepared statement). InvalidArgument when the statement does not parse.
  Result<StatementDescription> Describe(std::string_view statement);

  // Files read and files in the snapshots scanned by the statements run since the last
  // call (for a streamed result: call it after reading the stream to its end).
  ScanStats TakeScanStats();

  TransactionStatus transaction_status();

  // Asks the running statement to stop: it fails with Cancelled (a commit waiting to
  // retry included; nothing is committed then). Any thread; no effect when idle, and the
  // next statement starts afresh.
  void Interrupt();
  // Fraction done of the running query in percent, -1 when unknown (or when the session
  // was opened without track_progress). Any thread.
  double Progress();

  // Receives the progress of long commands, on the thread running the statement. Empty
  // to stop.
  void SetProgressCallback(std::function<void(const CommandProgress&)> callback);

  const SessionOptions& options() const;

 private:
  struct Impl;
  explicit Session(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace basin
