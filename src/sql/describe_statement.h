// What a statement would give, told without running it (the PostgreSQL protocol's Describe
// of a prepared statement): its command, the types of its parameters $1..$n, and for
// statements DuckDB prepares, its result's columns.
//
// A parameter's type is what DuckDB's binder gives it and, for a cell of an INSERT's VALUES
// into a warehouse table, the type of the column it fills (Basin's writes take no string for
// a number, so a value sent untyped needs its column's type).
//
// Thread safety: on the session's thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "basin/status.h"
#include "sql/session.h"

namespace basin::sql {

struct StatementDescription {
  std::string command;  // as StatementResult::command
  // DuckDB type names by parameter number - 1; "" where nothing tells.
  std::vector<std::string> parameter_types;
  // Known for the statements DuckDB runs and prepares (queries above all); Basin's own
  // statements tell theirs when they run.
  bool columns_known = false;
  std::vector<std::string> column_names;
  std::vector<std::string> column_types;  // DuckDB type names
};

// InvalidArgument when the statement does not parse.
Result<StatementDescription> DescribeStatement(Session& session, std::string_view statement);

}  // namespace basin::sql
