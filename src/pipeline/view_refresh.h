// Refreshing a pipeline's materialized view (docs/pipelines.md, "Materialized views"):
// incrementally when its query allows it, whole otherwise, and not at all when nothing it
// reads changed.
//
// The query is read from DuckDB's syntax tree (engine/syntax_tree.h). It refreshes
// incrementally when it is one SELECT over Delta tables of the warehouse, joined (inner
// joins, or the outer side of LEFT/RIGHT, SEMI and ANTI joins for the table that changed),
// without CTEs, subqueries, window functions, DISTINCT, HAVING, QUALIFY, ORDER BY or LIMIT,
// and either
// - aggregates nothing ("append"): the view gets the query's rows over what the changed
//   table appended, or
// - groups (GROUP BY, GROUP BY ALL, or a global aggregate) with only COUNT, SUM, MIN, MAX,
//   AVG and COUNT(DISTINCT ...), without ORDER BY inside them ("aggregate"): each group's
//   partial aggregates (a count, a sum; an average as both; a distinct count as the group's
//   distinct values, so its state grows with them) are kept in the view's state, the rows
//   the changed table appended are aggregated the same way and combined with them, and the
//   view is rewritten from the combined groups (its cost grows with the groups, not the
//   rows read before).
// and, since the last refresh, exactly one table it reads changed, by appends only (a
// commit that removed or rewrote rows, as DELETE, UPDATE, MERGE and overwrites do, forces a
// full refresh; OPTIMIZE changes no data). Everything else is recomputed whole, and the
// result says why.
//
// State: the view's folder (the pipeline's checkpoints/<view>/) holds, per refresh, the
// query, the versions of the tables read, the version of the view's table the refresh left,
// and (aggregate) the groups' partial aggregates (stream/batch_state.h). A refresh is
// incremental only from a state whose query is the view's query and whose view version is
// the table's latest version: a refresh cut short (between its commit and its state)
// leads to a full one, never to rows counted twice. The tables are read at the versions
// recorded, so a table changing while the view refreshes is picked up by the next refresh.
//
// Thread safety: one thread, the session's.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "basin/object_store.h"
#include "basin/status.h"
#include "engine/sql_text.h"
#include "sql/session.h"

namespace basin::pipeline {

struct ViewRefresh {
  enum class Mode { kUnchanged, kIncremental, kFull };
  Mode mode = Mode::kFull;
  // kFull: why the view was recomputed whole ("first refresh", "orders changed by DELETE
  // at version 7", "it reads read_files(...)"); kIncremental: what it read ("orders versions
  // 8 to 9"); kUnchanged: "no table it reads changed".
  std::string reason;
  int64_t rows_written = 0;  // rows the view's table got (all of them after a rewrite)
};

// "unchanged", "incremental", "full"
const char* ViewRefreshModeName(ViewRefresh::Mode mode);

struct ViewTarget {
  engine::SqlTableName name;  // the view's table: schema and name
  std::string query;          // its query, as DuckDB parses it
  // The view's state folder, kept between refreshes.
  std::shared_ptr<ObjectStore> state;
  // Replaces the view's table (creating it when absent) with the rows of `select_sql`, in
  // one commit: the caller's CREATE OR REPLACE TABLE ... AS, with the dataset's
  // properties. Returns the rows written.
  std::function<Result<int64_t>(const std::string& select_sql)> replace;
  // Why the view cannot refresh incrementally whatever its query (it has expectations, it
  // declares its columns); empty when it may.
  std::string always_full;
};

// Brings the view up to date with the tables its query reads (see above).
Result<ViewRefresh> RefreshView(sql::Session& session, const ViewTarget& view);

}  // namespace basin::pipeline
