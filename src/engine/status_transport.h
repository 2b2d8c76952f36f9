// Basin errors raised inside DuckDB (in the catalog, a scan, a table function) travel
// through DuckDB's exceptions as text. These two functions let the code and message
// survive the trip: the message DuckDB carries starts with a marker naming the code, and
// Connection turns it back into that Status (engine/duckdb.h).
//
// Thread safety: functions of their arguments.
#pragma once

#include <optional>
#include <string>

#include "basin/status.h"

namespace basin::engine {

// "[basin:Unsupported] <message>"
std::string EncodeStatus(const Status& status);

// The Status a DuckDB error message carries, when it carries one (DuckDB's own prefix,
// such as "IO Error: ", and the "LINE 1: ..." excerpt it may append are dropped).
std::optional<Status> DecodeStatus(const std::string& duckdb_message);

}  // namespace basin::engine
