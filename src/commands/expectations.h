// Expectations: data-quality rules a pipeline declares on a table
// (CONSTRAINT name EXPECT (condition) [ON VIOLATION DROP ROW | FAIL UPDATE | QUARANTINE]),
// checked against the rows a write adds before any of them is written
// (docs/pipelines.md "Expectations").
//
// A row fails an expectation when its condition is not TRUE (FALSE or NULL), as a CHECK
// constraint does. What then happens to it:
// - warn (no ON VIOLATION): the row is kept and counted;
// - DROP ROW: the row is left out and counted;
// - FAIL UPDATE: the write fails, naming the expectation and the first failing row, and
//   commits nothing;
// - QUARANTINE: the row is left out and handed to the quarantine (every column, plus the
//   names of all the expectations it failed), which commits it before the write does.
//
// Thread safety: functions; what they run uses the connection given.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "basin/status.h"
#include "delta/actions.h"
#include "engine/duckdb.h"

namespace basin::commands {

struct Expectation {
  enum class Action { kWarn, kDropRow, kFailUpdate, kQuarantine };
  std::string name;
  std::string condition;  // SQL over the table's columns, by their names
  Action action = Action::kWarn;
};

// The expectations on the rows written into one table, and where their outcomes go.
struct TableExpectations {
  std::string table_root;  // the table they hold for (WriteTarget::table_root)
  std::vector<Expectation> rules;
  // Commits `rows_sql` (the quarantined rows: the table's columns by their names, then
  // failed_expectations VARCHAR[]), `count` of them, for the write whose idempotent id is
  // `txn` (nullopt: none). Called once per write that has some, before it commits; its
  // error fails the write.
  std::function<Status(const std::string& rows_sql, int64_t count,
                       const std::optional<delta::SetTransaction>& txn)>
      quarantine;
  // Hears, per write that goes on (no FAIL UPDATE rule failed), how many rows failed each
  // rule (in `rules`' order) and how many rows were checked, with the write's idempotent id
  // `txn`, before anything is written; its error fails the write.
  std::function<Status(const std::vector<int64_t>& failed, int64_t rows,
                       const std::optional<delta::SetTransaction>& txn)>
      counted;
};

// Checks the rows of `rows_table` (a table or view with the rows' columns by their names)
// against `expectations`: counts them, fails on a FAIL UPDATE expectation (InvalidArgument
// naming it, the count and the first failing row as JSON), quarantines. Returns a query of
// the rows to write. `txn` is handed to the quarantine.
Result<std::string> ApplyExpectations(engine::Connection& conn, const TableExpectations& expectations,
                                      const std::string& rows_table,
                                      const std::optional<delta::SetTransaction>& txn);

}  // namespace basin::commands
