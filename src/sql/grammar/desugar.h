// Token-level rewrites that turn Basin's (Delta's and Databricks') spellings inside
// DuckDB SQL into text DuckDB's parser reads:
//
// - Time travel: `name VERSION AS OF n [[AS] alias]` and `name TIMESTAMP AS OF expr [[AS]
//   alias]` after a table reference become DuckDB's `name [AS alias] AT (VERSION => n)` /
//   `AT (TIMESTAMP => expr)` (DuckDB wants the alias before AT). The expression is the
//   longest run of tokens (at most kMaxValueTokens, not past a ',' or the enclosing
//   bracket) that DuckDB reads as one expression.
// - Streaming sources: after FROM, JOIN, USING, ',' or LATERAL, `STREAM name(...)` loses
//   its marker (replaced by spaces) and `STREAM(name)` becomes the call
//   `basin_stream_table('name') [AS name]` (engine/stream_calls.h; the alias keeps the
//   table's name as the rows' qualifier when none is given); each call ends with the
//   source's place, `basin_stream_source => n` (from 0); a `WATERMARK col DELAY OF
//   interval` after the source (or its alias) is removed; each is recorded as a
//   StreamSource. DuckDB accepts `STREAM(name)` as written (a call of a table function
//   `stream`, and `STREAM f('x')` as a table aliased), so callers also apply this when
//   engine::ReadsStreamMarker says so.
// - Spark's qualified SET targets (`UPDATE t SET t.c = 1`): the qualifier is blanked.
// - Keywords DuckDB reserves, where Basin's spelling uses them as names: a named argument
//   (`delta_scan('p', timestamp => '...')`), a qualifier (`default.t`) or Spark's function
//   `window(ts, '1 minute')` (engine/functions.h) is quoted.
// - PostgreSQL's spellings in its clients' catalog queries (psql's \d, JDBC's metadata),
//   which DuckDB's parser accepts but reads otherwise: `OPERATOR(pg_catalog.~)` loses its
//   schema (DuckDB would call a function named pg_catalog), `COLLATE pg_catalog.default`
//   goes (the default collation), a type after `::` loses its `pg_catalog.` qualifier,
//   `'name'::regclass` becomes a call of engine::kRegclassFunction, and
//   `pg_catalog.generate_series(...) s` is DuckDB's, its column named s as PostgreSQL names it.
//
// Only tokens are rewritten, never text inside strings or comments. Callers apply this
// only to text DuckDB's parser refused, or that HasStreamCall or HasPostgresSpelling finds,
// and report DuckDB's error on the original text when the rewritten text is refused too.
//
// Thread safety: functions of their arguments.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/sql_text.h"
#include "sql/grammar/statement.h"
#include "sql/grammar/token_stream.h"

namespace basin::sql::grammar {

struct Desugared {
  std::string sql;
  std::vector<StreamSource> streams;  // offsets into `sql`
};

inline constexpr size_t kMaxValueTokens = 64;

// Whether tokens [from, to) hold STREAM followed by "(" or by a name and "(": a
// STREAM(table) or STREAM function(...) source, which DuckDB's parser may accept as
// something of its own (engine::ReadsStreamMarker tells from its tree), so Desugar must
// rewrite even text DuckDB takes as written.
bool HasStreamCall(const TokenStream& tokens, size_t from, size_t to);

// Whether tokens [from, to) hold one of PostgreSQL's spellings above, which DuckDB's parser
// accepts as written, so Desugar must rewrite even text DuckDB takes.
bool HasPostgresSpelling(const TokenStream& tokens, size_t from, size_t to);

// `sql` rewritten as above; nullopt when it holds nothing to rewrite. With
// `stream_relation` (a table's name), every STREAM source, marker and call, becomes that
// relation instead, with the alias its rows had, and a hopping window(ts, size, slide) is
// basin_hop(basin_window, ts, size, slide) (engine/stream_calls.h): how a stateful stream's
// statement reads the rows its state prepared (stream/stateful.h).
// REQUIRES: `tokens` are TokenizeSql(sql)'s.
std::optional<Desugared> Desugar(std::string_view sql, const std::vector<engine::SqlToken>& tokens,
                                 std::string_view stream_relation = {});

}  // namespace basin::sql::grammar
