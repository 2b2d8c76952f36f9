// table_changes('table', start [, end]): a warehouse table's change data feed as a table
// function DuckDB binds like any other, so that it works wherever a table function may
// stand (joins, CTEs, views, subqueries, COPY, EXPLAIN). At bind time it is replaced by
// the query over the commits' change files and data files that the connection's lakehouse
// builds (Lakehouse::table_changes); the scans that query registers live until the query
// ends. The name is resolved as the warehouse resolves names ('t', 's.t', quoted parts).
//
// Thread safety: registered once per database; binding runs on the querying thread.
#pragma once

#include "duckdb.hpp"

namespace basin::engine::duckdb_ext {

void RegisterTableChanges(duckdb::DatabaseInstance& db);

}  // namespace basin::engine::duckdb_ext
