// The tables a query reads, as DuckDB's parser sees them: what a pipeline's dependency graph
// and lineage are built from. DuckDB's syntax tree is walked, so a name is a table wherever
// DuckDB's grammar puts a table reference (joins, subqueries, set operations, LATERAL,
// expressions' subqueries), and a CTE's name hides a table of that name within the query
// that defines it, as DuckDB's binder resolves it.
//
// Thread safety: a function of its argument.
#pragma once

#include <string_view>
#include <vector>

#include "basin/status.h"
#include "engine/sql_text.h"

namespace basin::engine {

// The distinct tables `query` (one query DuckDB parses: SELECT, VALUES, WITH, FROM...)
// names, in the order they are first written, with the tables its STREAM(t) sources and
// change feeds (table_changes('t', ...)) read; other table functions (read_kafka(...),
// delta_scan(...)) read no table. STREAM markers must have been desugared first
// (sql/grammar/desugar.h), as a grammar::Query's `sql` is.
// InvalidArgument with DuckDB's message when the text is not one query.
Result<std::vector<SqlTableName>> TablesReadBy(std::string_view query);

// Whether `query` (as TablesReadBy takes it) reads nothing but its STREAM sources (calls
// carrying kStreamSourceParameter, engine/stream_calls.h), VALUES and constants: no table,
// view or other table function anywhere in it, so that only its sources can change its
// columns from one run to the next. InvalidArgument as TablesReadBy.
Result<bool> ReadsOnlyStreamSources(std::string_view query);

}  // namespace basin::engine
