// Raising Basin errors inside DuckDB: a Status becomes a DuckDB exception whose message
// carries the code (engine/status_transport.h), so the caller of the query gets the same
// Status back.
#pragma once

#include "basin/status.h"

namespace basin::engine::duckdb_ext {

// REQUIRES: !status.ok()
[[noreturn]] void ThrowStatus(const Status& status);

}  // namespace basin::engine::duckdb_ext
