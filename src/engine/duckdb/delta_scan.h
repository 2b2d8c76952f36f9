// The Delta scan: DuckDB's own Parquet scan (`parquet_scan`, taken from its catalog) with
// Basin's MultiFileReader in it, so that DuckDB plans it like its own: projection and
// filter pushdown, parallel reading, late materialization of row positions.
//
// The file list is a snapshot's active files. Per file, the reader gets the partition
// values as constant columns, the deletion vector as a delete filter (loaded when the file
// is opened, so only read files pay for it), the mapping from the files' physical columns
// to the table's logical ones (column mapping, nested fields, missing columns as NULL),
// casts from narrower file types (type widening), and Variant groups decoded to JSON text.
// Filters DuckDB pushes into the scan narrow the file list by partition values and
// statistics (data skipping). count(*) without a filter is answered from the statistics.
//
// Virtual columns besides the table's: `filename`, `file_row_number` (the row's position
// in its file, counting rows a deletion vector hides) and kScanFileIndexColumn (engine/lakehouse.h; the index
// of the row's file in the snapshot's file list), for commands that change rows.
//
// Thread safety: the function and its sources are immutable once bound; DuckDB calls them
// from its worker threads.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "delta/snapshot.h"
#include "duckdb.hpp"
#include "duckdb/function/table_function.hpp"
#include "engine/lakehouse.h"
#include "engine/store_registry.h"

namespace basin::engine::duckdb_ext {

inline constexpr char kDeltaScanFunction[] = "delta_scan";

// What one scan reads: a snapshot, and which of its files (all when `files` is null).
struct DeltaScanSource {
  std::shared_ptr<const delta::Snapshot> snapshot;
  std::shared_ptr<const std::vector<uint32_t>> files;
  std::string name;  // the table's name or path, for messages and EXPLAIN
  // The snapshot's store, registered for as long as the scan lives: DuckDB opens the data
  // files as basin:// URLs of it (engine/store_registry.h), so every read goes through
  // the ObjectStore.
  std::shared_ptr<const StoreHandle> store;
};

// A scan of every file of `snapshot`, its store registered.
std::shared_ptr<DeltaScanSource> MakeScanSource(std::shared_ptr<const delta::Snapshot> snapshot,
                                                std::string name);

// Registers delta_scan(path [, version => n | timestamp => '...']) in `db`. Paths are
// resolved, and snapshots cached, through the connection's lakehouse (engine/lakehouse.h).
void RegisterDeltaScan(duckdb::DatabaseInstance& db);

// delta_scan bound to `source`, for a catalog table (or a command's scan), with its bind
// data in `bind_data`.
duckdb::TableFunction BindDeltaScan(duckdb::ClientContext& context,
                                    std::shared_ptr<const DeltaScanSource> source,
                                    duckdb::unique_ptr<duckdb::FunctionData>& bind_data);

}  // namespace basin::engine::duckdb_ext
