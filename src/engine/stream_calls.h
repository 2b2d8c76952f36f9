// What only DuckDB's syntax tree can tell about Basin's STREAM(table) marker: DuckDB's
// grammar accepts `FROM STREAM(t)` as a call of a table function named stream with the
// column reference t for first argument (DuckDB has no such function; options follow), so the marker is found
// in the tree DuckDB builds, wherever a table reference may stand: joins, subqueries, CTEs, set operations,
// MERGE's USING, UPDATE's FROM, DELETE's USING.
//
// Thread safety: a function of its argument.
#pragma once

#include <string_view>

namespace basin::engine {

// The table function STREAM(table) is read through (engine/duckdb/table_changes_function.h).
inline constexpr char kStreamTableFunction[] = "basin_stream_table";
// The table function STREAM table_changes('table', start) is read through.
inline constexpr char kStreamChangesFunction[] = "basin_stream_changes";

// The named argument each STREAM source's relation carries (sql/grammar/desugar.h): the
// source's place among the statement's STREAM sources, from 0, so that a stream reading
// several sources has each read its own batch. A call without it is no stream's source.
inline constexpr char kStreamSourceParameter[] = "basin_stream_source";

// A stateful stream's hopping window: its statement reads each row once per window holding it,
// the window in the column kHoppingWindowColumn, and `window(ts, size, slide)` becomes
// `basin_hop(basin_window, ts, size, slide)`, a macro giving that column (stream/stateful.h).
inline constexpr char kHoppingWindowColumn[] = "basin_window";
inline constexpr char kHopFunction[] = "basin_hop";

// Whether DuckDB's parser reads a STREAM marker in `sql` (one or more statements) as its
// own SQL: `STREAM(t)` as calling stream(column) as a table function, or
// `STREAM f('x')` as the table stream with the alias f and the column alias 'x'. False
// when DuckDB refuses the text.
bool ReadsStreamMarker(std::string_view sql);

// Whether `query` (a query with its STREAM sources desugared, sql/grammar/desugar.h) joins two
// of them: a join with STREAM sources on both sides, or a query reading one in its FROM and
// another in a subquery of its expressions, a CTE counting where it is named. Without state a
// batch would match only rows that arrived in the same batch. Sources a set operation
// (UNION ALL) combines are not joined. False when DuckDB refuses the text.
bool JoinsStreamSources(std::string_view query);

}  // namespace basin::engine
