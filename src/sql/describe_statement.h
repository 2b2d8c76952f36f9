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

#include "basin/session.h"
#include "basin/status.h"
#include "sql/session.h"

namespace basin::sql {

// basin::StatementDescription (basin/session.h) says what each part holds. InvalidArgument
// when the statement does not parse.
Result<basin::StatementDescription> DescribeStatement(Session& session, std::string_view statement);

}  // namespace basin::sql
