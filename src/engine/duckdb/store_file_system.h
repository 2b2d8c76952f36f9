// Installs the file system behind basin:// URLs (engine/store_registry.h) into a DuckDB
// database. This header is free of DuckDB's C++ API, so engine/duckdb.cc can call it.
//
// Thread safety: call once per database, before it runs queries.
#pragma once

#include "basin/status.h"

struct _duckdb_database;  // NOLINT(bugprone-reserved-identifier): DuckDB's C handle type

namespace basin::engine {

// Registers the basin:// file system as a sub-system of the database's virtual file system.
// Internal when DuckDB refuses it.
Status InstallStoreFileSystem(_duckdb_database* database);

}  // namespace basin::engine
