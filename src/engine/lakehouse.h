// Delta tables inside DuckDB (docs/duckdb-integration.md): the `delta_scan` table function
// and the warehouse attached as the DuckDB catalog `basin`, so that DuckDB's binder
// resolves every table name and plans Delta scans like its own.
//
// AttachLakehouse() prepares one connection: it registers Basin's table functions and
// storage extension in the connection's database (once per database), attaches the
// warehouse as catalog `basin` and makes its schema `default` the connection's default.
// After that, plain DuckDB SQL on the connection reads warehouse tables by name
// (`events`, `sales.orders`, `basin.default.events`), with `AT (VERSION => n)` /
// `AT (TIMESTAMP => ...)` time travel, and Delta tables by path (`delta_scan('path')`).
//
// Thread safety: AttachLakehouse once per connection, before it runs queries; the
// bindings it installs are shared by the database's threads.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "basin/object_store.h"
#include "basin/status.h"
#include "catalog/warehouse.h"
#include "delta/snapshot.h"
#include "engine/duckdb.h"
#include "engine/snapshot_cache.h"

namespace basin::engine {

inline constexpr char kLakehouseCatalog[] = "basin";

// What the catalog and delta_scan read tables through.
struct Lakehouse {
  std::shared_ptr<catalog::Warehouse> warehouse;
  std::shared_ptr<SnapshotCache> snapshots;
  // Opens the store of a table folder: a warehouse table's location, or a delta_scan path
  // (relative paths are relative to `base_dir`). NotFound when no Delta table is there.
  std::function<Result<std::shared_ptr<ObjectStore>>(const std::string& location)> open_table_store;
  std::string base_dir;  // for relative delta_scan paths
  // Whether the connection's user may read a table, asked before its snapshot is read: the
  // warehouse table the binder found by name (`location` its folder), or for
  // delta_scan('path') nullopt and the path's location. PermissionDenied refuses the read,
  // and leaves the table out of the catalog's listings. Unset: every table may be read.
  std::function<Status(const std::optional<catalog::TableName>& table, const std::string& location)>
      authorize_read;
  // Whether the connection's user may create a view in the warehouse schema `schema` (the
  // view itself lives in the session). PermissionDenied refuses it. Unset: anyone may.
  std::function<Status(const std::string& schema)> authorize_create_view;
  // table_changes('table', start [, end]): the query over the table's change files, and
  // what must live while a query reads it (the scans it registers). Built above this layer
  // (commands/table_changes.h); unset on connections without a change feed.
  struct ChangeFeed {
    std::string sql;
    std::shared_ptr<const void> keepalive;
  };
  std::function<Result<ChangeFeed>(const std::vector<std::string>& table, int64_t start_version,
                                   std::optional<int64_t> end_version)>
      table_changes;
  // basin_stream_table('table'), what STREAM(table) reads: the rows of the running
  // stream's batch (`changes_from` unset), or with basin_stream_changes('table', start),
  // what STREAM table_changes('table', start) reads: the batch's change feed, which the
  // stream starts at `changes_from`. `source` is the call's basin_stream_source
  // (engine/stream_calls.h). Unset, or an error, outside a stream.
  std::function<Result<ChangeFeed>(const std::vector<std::string>& table, std::optional<int64_t> changes_from,
                                   std::optional<int64_t> source)>
      stream_table;
  // read_files('folder', option => value, ...): the query reading the folder's files (a
  // running stream's batch of them, inside a stream), given the options as text by their
  // lowercase names; `source` is the call's basin_stream_source (a STREAM source's,
  // engine/stream_calls.h). Built above this layer (sql/read_files.h); unset: no read_files.
  std::function<Result<ChangeFeed>(const std::string& folder,
                                   const std::map<std::string, std::string>& options,
                                   std::optional<int64_t> source)>
      read_files;
};

// Per-connection switches and counters of the scans a connection runs.
struct ScanCounters {
  std::atomic<uint64_t> files_read{0};   // data files the scans read
  std::atomic<uint64_t> files_total{0};  // data files in the snapshots they scanned
};
struct ScanSettings {
  bool data_skipping = true;  // off only to prove skipping never changes a result
};

Status AttachLakehouse(Connection& conn, std::shared_ptr<const Lakehouse> lakehouse);

// The counters of the scans `conn` ran since the last call, reset to zero.
struct ScanStats {
  uint64_t files_read = 0;
  uint64_t files_total = 0;
};
ScanStats TakeScanStats(Connection& conn);
void SetScanSettings(Connection& conn, const ScanSettings& settings);

// Where `conn` is between BEGIN and its COMMIT or ROLLBACK: outside a block (each statement
// commits alone), inside one, or inside one an error has aborted (DuckDB refuses all but
// ROLLBACK).
enum class TransactionBlock { kNone, kOpen, kAborted };
TransactionBlock TransactionBlockOf(Connection& conn);

// Which table `parts` (["t"], ["s", "t"] or ["c", "s", "t"], unquoted) names in a statement
// on `conn`, by DuckDB's rules: temporary tables first, then the search path, schema or
// catalog qualification as DuckDB binds it. kNone when no table (or view) has the name.
struct ResolvedTableName {
  enum class Kind { kNone, kDuckDB, kWarehouse };
  Kind kind = Kind::kNone;
  catalog::TableEntry warehouse_entry;  // kWarehouse: the catalog entry, as the lookup read it
};
Result<ResolvedTableName> ResolveTableName(Connection& conn, const std::vector<std::string>& parts);

// A scan of `snapshot` (of the files at `files`, indexes into snapshot->files; all when
// nullopt) that SQL on `conn` can use while the returned handle lives, as the table
// `ScanTableSql(handle)`. Its columns are the table's, plus the virtual columns
// `filename`, `file_row_number` and kScanFileIndexColumn (the row's file's index in
// snapshot->files). `name` names the table in messages and EXPLAIN.
// Works on any connection (AttachLakehouse is needed only to resolve names and paths).
inline constexpr char kScanFileIndexColumn[] = "__basin_file_index";
class RegisteredScan;
std::shared_ptr<const RegisteredScan> RegisterScan(Connection& conn,
                                                   std::shared_ptr<const delta::Snapshot> snapshot,
                                                   std::optional<std::vector<size_t>> files,
                                                   std::string name);
std::string ScanTableSql(const RegisteredScan& scan);

}  // namespace basin::engine
