// The warehouse as a DuckDB catalog (a storage extension, attached as `basin`): schemas and
// tables come from the warehouse, each table's columns from its Delta snapshot, and its
// scan is delta_scan bound to that snapshot. So DuckDB's binder resolves every name, with
// its scoping rules, and `AT (VERSION => n | TIMESTAMP => t)` reaches the lookup.
//
// Snapshots are pinned per DuckDB transaction: every reference to a table within one
// statement (or one explicit transaction) reads the same version. Views created in the
// catalog are kept for the life of the attached catalog (the session). Writes to Delta
// tables are Basin's commands, not DuckDB's: the Plan* hooks refuse, naming the statement
// to run instead.
//
// Thread safety: DuckDB calls the catalog from many connections and threads; its state is
// guarded by a mutex, each transaction's by DuckDB's own rules (one thread at a time).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "duckdb.hpp"
#include "duckdb/storage/storage_extension.hpp"
#include "engine/lakehouse.h"

namespace basin::engine::duckdb_ext {

inline constexpr char kStorageExtensionName[] = "basin";

// The storage extension that ATTACH '...' (TYPE basin) uses; the attached catalog reads
// the lakehouse of the connection that attaches it (ClientState).
duckdb::unique_ptr<duckdb::StorageExtension> MakeStorageExtension();

// The warehouse's catalog entry for `entry`, a table of the attached catalog that a lookup
// found (read once per lookup: ResolveTableName need not read the catalog again).
const catalog::TableEntry& WarehouseEntryOf(duckdb::CatalogEntry& entry);

}  // namespace basin::engine::duckdb_ext
