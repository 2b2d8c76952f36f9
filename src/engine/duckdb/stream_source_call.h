// Telling a STREAM source's call in DuckDB's syntax tree, for the walks of stream_calls.cc
// and table_refs.cc.
//
// Thread safety: a function of its argument.
#pragma once

#include "duckdb/parser/parsed_expression.hpp"

namespace basin::engine::duckdb_ext {

// Whether `function` (a table function reference's call) is a STREAM source's: it carries
// the named argument kStreamSourceParameter (engine/stream_calls.h).
bool IsStreamSourceCall(duckdb::ParsedExpression& function);

}  // namespace basin::engine::duckdb_ext
