// The DuckDB boundary: an embedded database and connections to it, through DuckDB's C API.
//
// Database: one per process or warehouse; sets the session defaults Basin relies on
// (TimeZone=UTC, Parquet metadata cache). Connection: one per thread of work.
//
// Thread safety: a Database may be shared; a Connection is used by one thread at a time,
// except Interrupt() and Progress(), which any thread may call.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

struct _duckdb_database;
struct _duckdb_connection;

namespace basin::engine {

struct DatabaseOptions {
  std::string path;          // empty: in-memory
  int threads = 0;           // 0: DuckDB's default (one per core)
  std::string memory_limit;  // empty: DuckDB's default, e.g. "2GB"
};

class Database {
 public:
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
  // Runs the statement and returns the number of rows it produced, without materializing.
  Result<uint64_t> CountRows(const std::string& sql);

  // Asks the running query to stop; it then fails with Cancelled.
  void Interrupt();
  // Fraction done of the running query, -1 when unknown.
  double Progress();

  _duckdb_connection* raw() const { return conn_; }
  const std::shared_ptr<Database>& database() const { return db_; }

 private:
  explicit Connection(std::shared_ptr<Database> db) : db_(std::move(db)) {}
  std::shared_ptr<Database> db_;
  _duckdb_connection* conn_ = nullptr;
};

// 'it''s' — a SQL string literal.
std::string QuoteLiteral(std::string_view s);
// "a""b" — a SQL identifier.
std::string QuoteIdentifier(std::string_view s);

}  // namespace basin::engine
