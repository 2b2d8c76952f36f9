// table_changes('table', start [, end]): a warehouse table's change data feed as a table
// function DuckDB binds like any other, so that it works wherever a table function may
// stand (joins, CTEs, views, subqueries, COPY, EXPLAIN). At bind time it is replaced by
// the query over the commits' change files and data files that the connection's lakehouse
// builds (Lakehouse::table_changes); the scans that query registers live until the query
// ends. The name is resolved as the warehouse resolves names ('t', 's.t', quoted parts).
//
// basin_stream_table('table', basin_stream_source => n) is what `STREAM(table)` reads
// (sql/grammar/desugar.h writes the call): the rows a running stream's batch takes from the
// table for its source n, replaced at bind time by the query the lakehouse builds for the
// batch (Lakehouse::stream_table). Outside a stream it fails with the lakehouse's error.
// basin_stream_changes('table', start, basin_stream_source => n) is what `STREAM
// table_changes('table', start)` reads, the same way: the batch's change feed.
//
// read_files('folder', format => 'json' | 'csv' | 'parquet', ...) reads a folder of files,
// replaced at bind time by the query the lakehouse builds (Lakehouse::read_files: every
// file, or as a stream's source, with basin_stream_source, the batch's files); its named
// options reach the lakehouse as text.
//
// Thread safety: registered once per database; binding runs on the querying thread.
#pragma once

#include "duckdb.hpp"
#include "engine/stream_calls.h"

namespace basin::engine::duckdb_ext {

// Registers table_changes, basin_stream_table, basin_stream_changes and read_files.
void RegisterTableChanges(duckdb::DatabaseInstance& db);

}  // namespace basin::engine::duckdb_ext
