// A session's statement_timeout, as PostgreSQL defines it: a statement (reading its rows
// included) that runs longer is interrupted and fails with Cancelled "canceling statement
// due to statement timeout" (SQLSTATE 57014). A write interrupted before its commit commits
// nothing: the commit checks the connection's cancellation before it writes.
//
// The default is SessionOptions::statement_timeout_ms; SET statement_timeout changes it for
// the session and RESET goes back to the default. 0: no limit.
//
// Thread safety: the session's thread; the watchdog interrupts the connection from its own.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "basin/status.h"
#include "common/watchdog.h"
#include "engine/duckdb.h"

namespace basin::sql {

class StatementTimeout {
 public:
  // REQUIRES: `conn` outlives this.
  StatementTimeout(engine::Connection& conn, int64_t default_ms);

  int64_t ms() const { return ms_; }
  // nullopt: back to the default.
  void Set(std::optional<int64_t> ms) { ms_ = ms.value_or(default_ms_); }

  // A statement starts: its deadline, when there is a timeout. Returns its number (0: none).
  uint64_t Start();
  // The statement numbered `started` ended with `status`: its deadline is cleared, and a
  // Cancelled that the deadline caused says so.
  Status Finish(uint64_t started, Status status);
  // The statement numbered `started` returned `rows`: its deadline holds until they are read
  // to their end or dropped.
  std::unique_ptr<engine::QueryStream> Guard(uint64_t started, std::unique_ptr<engine::QueryStream> rows);

 private:
  const int64_t default_ms_;
  int64_t ms_;
  Watchdog watchdog_;
};

}  // namespace basin::sql
