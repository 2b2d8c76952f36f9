// The types of a statement's parameters $1..$n, for clients that send them untyped (the
// PostgreSQL protocol's type 0): what DuckDB's binder gives them, and for a parameter that is a
// cell of an INSERT's VALUES into a warehouse table, the type of the column it fills (Basin's
// writes take no string for a number, so an untyped value needs its column's type).
//
// Thread safety: on the session's thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "basin/status.h"
#include "sql/session.h"

namespace basin::sql {

// DuckDB type names by parameter number - 1; "" where neither tells. InvalidArgument when
// the statement does not parse.
Result<std::vector<std::string>> ParameterTypes(Session& session, std::string_view statement);

}  // namespace basin::sql
