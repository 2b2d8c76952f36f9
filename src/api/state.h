// What the facades of include/basin/ share behind their handles: the state of an open
// warehouse, and how a table's snapshots are loaded. Nothing here is public.
//
// Thread safety: WarehouseState is shared by every handle on one warehouse; its mutex
// guards what it opens lazily.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "basin/object_store.h"
#include "basin/snapshot.h"
#include "basin/status.h"
#include "basin/table.h"
#include "catalog/warehouse.h"
#include "delta/snapshot.h"
#include "engine/parquet_log_io.h"
#include "sql/session.h"

namespace basin::api {

struct WarehouseState {
  // The warehouse's absolute folder; "" for a table opened by location (sessions then work
  // in the working folder).
  std::string location;
  std::shared_ptr<catalog::Warehouse> catalog;  // null for a table opened by location

  std::mutex mu;
  // Runs CREATE and DROP TABLE (sql/statements.h) for the Warehouse; opened on first use.
  std::unique_ptr<sql::Session> ddl_session;  // GUARDED_BY(mu)
  // Reads checkpoints for snapshot loads; thread-safe once made.
  std::shared_ptr<engine::DuckDBParquetLogIO> log_io;  // GUARDED_BY(mu)

  // REQUIRES: mu held.
  Result<sql::Session*> DdlSession();
  // The log reader, made on first use.
  Result<std::shared_ptr<engine::DuckDBParquetLogIO>> LogIO();
};

// A session on the warehouse's folder, as Session::Open makes one.
Result<std::unique_ptr<sql::Session>> OpenSqlSession(const std::string& warehouse, bool data_skipping);

// "schema.table" or "table" as the catalog's name parts (no quoting: a name holding '.'
// cannot be given this way).
std::vector<std::string> NameParts(const std::string& name);
// The catalog's name for `name`; InvalidArgument naming it when malformed.
Result<catalog::TableName> ParseTableName(const std::string& name);

}  // namespace basin::api

namespace basin {

struct Table::Impl {
  std::shared_ptr<api::WarehouseState> warehouse;
  std::string name;                    // "schema.table", or "" when opened by location
  std::string location;                // as the catalog or the caller gave it
  std::shared_ptr<ObjectStore> store;  // rooted at the table
};

struct Snapshot::Impl {
  std::shared_ptr<const delta::Snapshot> snapshot;
};

}  // namespace basin
