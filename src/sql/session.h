// Session: runs Basin SQL text. Statements DuckDB knows are passed through to it after
// delta_scan('path' [, version => N | timestamp => '...']) calls are replaced by scans of
// the selected snapshot (with data skipping); Basin's own statements (DESCRIBE HISTORY ...)
// are handled here.
//
// Thread safety: one thread at a time.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "engine/duckdb.h"

namespace basin::sql {

struct SessionOptions {
  std::string warehouse_dir;  // relative delta_scan paths resolve against it; "" = cwd
  bool data_skipping = true;  // off only to prove skipping never changes a result
};

struct StatementResult {
  std::string statement;       // the statement text as given
  engine::QueryResult result;  // empty for statements that return no rows
  bool returns_rows = false;
  // What skipping did, for EXPLAIN-like output and tests: files read / files in snapshots.
  size_t files_read = 0;
  size_t files_total = 0;
};

class Session {
 public:
  static Result<std::unique_ptr<Session>> Open(const SessionOptions& options);

  // Runs every statement in `text` in order; stops at the first failure, returning its error
  // (prefixed with the statement number when there are several).
  Result<std::vector<StatementResult>> Execute(const std::string& text);

  engine::Connection& connection();
  const SessionOptions& options() const;

  ~Session();

 private:
  struct Impl;
  explicit Session(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace basin::sql
