// The DuckDB boundary: an embedded database and connections to it, through DuckDB's C API.
//
// Database: one per process or warehouse; sets the session defaults Basin relies on
// (TimeZone=UTC, Parquet metadata cache) and installs the file system behind basin://
// URLs, through which DuckDB reads and writes Basin's object stores
// (engine/store_registry.h). Connection: one per thread of work.
//
// Thread safety: a Database may be shared; a Connection is used by one thread at a time,
// except Interrupt(), Progress() and cancellation(), which any thread may use.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "basin/status.h"
#include "common/cancellation.h"
#include "common/strings.h"

// DuckDB's own handle types (duckdb.h), declared here to keep its header out of ours.
struct _duckdb_database;    // NOLINT(bugprone-reserved-identifier)
struct _duckdb_connection;  // NOLINT(bugprone-reserved-identifier)
struct _duckdb_appender;    // NOLINT(bugprone-reserved-identifier)

namespace basin::engine {

struct DatabaseOptions {
  std::string path;          // empty: in-memory
  int threads = 0;           // 0: DuckDB's default (one per core)
  std::string memory_limit;  // empty: DuckDB's default, e.g. "2GB"
};

// After a task whose allocations peaked past this, DuckDB's allocator flushes the task's
// thread's caches (Database::Open says why Basin sets it).
inline constexpr const char* kAllocatorFlushThreshold = "4MiB";

class Database {
 public:
  // Opens DuckDB as Basin runs it: `options`, no external file cache
  // (docs/duckdb-integration.md), and an allocator that hands freed memory back
  // (kAllocatorFlushThreshold, jemalloc's background threads).
  static Result<std::shared_ptr<Database>> Open(const DatabaseOptions& options = {});
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  _duckdb_database* raw() const { return db_; }

 private:
  Database() = default;
  _duckdb_database* db_ = nullptr;
};

// A fully materialized result: cells as DuckDB renders them as text (NULL is nullopt).
struct QueryResult {
  std::vector<std::string> column_names;
  std::vector<std::string> column_types;  // DuckDB type names, "BIGINT", "STRUCT(a INTEGER)"
  std::vector<std::vector<std::optional<std::string>>> rows;

  size_t row_count() const { return rows.size(); }
  size_t column_count() const { return column_names.size(); }
  // REQUIRES: row < row_count(), col < column_count()
  const std::optional<std::string>& at(size_t row, size_t col) const { return rows[row][col]; }
};

// One result cell with its nested structure kept (Connection::QueryValues): what Basin
// reads when it needs the parts of a STRUCT, LIST or MAP, e.g. COPY ... RETURN_STATS.
struct Value {
  enum class Kind { kNull, kScalar, kList, kStruct, kMap };
  Kind kind = Kind::kNull;
  std::string text;  // kScalar: DuckDB's text rendering of the value
  // kList: elements; kStruct: field values; kMap: values. `child_names` runs parallel to
  // `children`: field names (kStruct), key texts (kMap), empty strings (kList).
  std::vector<std::string> child_names;
  std::vector<Value> children;

  void AddChild(std::string name, Value child) {
    child_names.push_back(std::move(name));
    children.push_back(std::move(child));
  }

  bool is_null() const { return kind == Kind::kNull; }
  // The text QueryResult shows: 1, {'a': 1, 'b': x}, [1, 2], {k=v}.
  std::string ToString() const;
  // kStruct/kMap: the child named `name`, or nullptr.
  const Value* Find(std::string_view name) const;
};

// A result column's type as a tree (Connection::DescribeQuery).
struct ColumnType {
  enum class Kind { kScalar, kList, kStruct, kMap };
  std::string name;  // column or struct field name; empty for list elements, map keys/values
  Kind kind = Kind::kScalar;
  std::string type_name;             // DuckDB's name: "BIGINT", "DECIMAL(10,2)", "STRUCT(...)", "INTEGER[]"
  int width = 0, scale = 0;          // DECIMAL
  std::vector<ColumnType> children;  // kStruct: fields; kList: [element]; kMap: [key, value]
};

// A DuckDB integer type: its name, width in bits, and signedness.
struct IntegerType {
  const char* name;
  int bits;
  bool is_signed;
};

// The integer type named `type_name` ("BIGINT"); nullptr when it names no integer type.
const IntegerType* FindIntegerType(const std::string& type_name);

struct ValueResult {
  std::vector<std::string> column_names;
  std::vector<std::string> column_types;
  std::vector<std::vector<Value>> rows;
};

// A query's result read chunk by chunk as DuckDB produces it (Connection::Stream), so
// that printing or copying a large result keeps memory bounded.
class QueryStream {
 public:
  virtual ~QueryStream() = default;
  virtual const std::vector<std::string>& column_names() const = 0;
  virtual const std::vector<std::string>& column_types() const = 0;
  // Replaces `rows` with the next rows (at most one DuckDB chunk, 2048 rows), cells
  // rendered as QueryResult renders them; false when the result is exhausted. The query's
  // errors (a failed cast, an interrupt) surface here.
  virtual Result<bool> Next(std::vector<std::vector<std::optional<std::string>>>* rows) = 0;
};

class Connection {
 public:
  static Result<std::unique_ptr<Connection>> Open(std::shared_ptr<Database> db);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Runs one or more statements, discarding results. InvalidArgument with DuckDB's message
  // on a bad statement; IOError when DuckDB reports an I/O failure.
  Status Execute(const std::string& sql);
  // Runs statements and materializes the last one's result.
  Result<QueryResult> Query(const std::string& sql);
  // As Query, keeping nested values as trees.
  Result<ValueResult> QueryValues(const std::string& sql);
  // The result columns of a SELECT (or any statement usable as a subquery) without reading
  // its rows.
  Result<std::vector<ColumnType>> DescribeQuery(const std::string& select_sql);
  // What DuckDB's binder says of `sql`, prepared, not run: the types of its parameters
  // $1..$n ("" for one whose type it cannot tell) and its result's columns, unless they
  // depend on a parameter whose type it cannot tell. nullopt when DuckDB cannot prepare
  // `sql`.
  struct PreparedShape {
    std::vector<std::string> parameter_types;
    bool columns_known = false;
    std::vector<std::string> column_names;
    std::vector<std::string> column_types;
  };
  std::optional<PreparedShape> DescribePrepared(const std::string& sql);
  // Runs one statement and returns its result as a stream. The connection runs nothing
  // else until the stream is exhausted or destroyed.
  Result<std::unique_ptr<QueryStream>> Stream(const std::string& sql);
  // Runs the statement and returns the number of rows it produced, without materializing.
  Result<uint64_t> CountRows(const std::string& sql);

  // Forgets the files DuckDB's readers opened on this connection's database. DuckDB keeps
  // an entry for every file path a reader opened (its external file cache's, a few hundred
  // bytes, even with the cache off) for as long as the database lives: a database that
  // reads each new file of a growing table, as a stream's compaction does, grows by them
  // for ever. Turning enable_external_file_cache off (again) empties them.
  // REQUIRES: no query runs on the database meanwhile (a reader's handle refers to its
  // file's entry).
  Status ForgetOpenedFiles();

  // Asks the running query to stop; it then fails with Cancelled. Also cancels
  // cancellation(), which stops what Basin itself waits for between queries (a commit's
  // retry backoff).
  void Interrupt();
  // The token Interrupt() cancels; the session resets it when a statement starts.
  CancellationToken& cancellation() { return cancellation_; }
  // Fraction done of the running query, -1 when unknown.
  double Progress();

  _duckdb_connection* raw() const { return conn_; }
  const std::shared_ptr<Database>& database() const { return db_; }

 private:
  explicit Connection(std::shared_ptr<Database> db) : db_(std::move(db)) {}
  std::shared_ptr<Database> db_;
  _duckdb_connection* conn_ = nullptr;
  CancellationToken cancellation_;
};

// Appends rows to a table through DuckDB's appender (much faster than INSERT for many
// rows). Rows become visible when Close() returns OK. Thread safety: like its Connection.
class Appender {
 public:
  // `schema` "temp" for a temporary table. NotFound when the table does not exist.
  static Result<std::unique_ptr<Appender>> Open(Connection& conn, const std::string& schema,
                                                const std::string& table);
  ~Appender();
  Appender(const Appender&) = delete;
  Appender& operator=(const Appender&) = delete;

  // One value per column, in table order, then EndRow().
  Status Append(int64_t value);
  Status Append(std::string_view value);
  Status AppendNull();
  Status EndRow();
  // Flushes the appended rows; errors name the table.
  Status Close();

 private:
  Appender() = default;
  Status Check(int state, const char* what);
  _duckdb_appender* appender_ = nullptr;
  std::string table_;
};

// SQL quoting (common/strings.h), used throughout engine/ and by its callers.
using ::basin::QuoteIdentifier;
using ::basin::QuoteLiteral;

}  // namespace basin::engine
