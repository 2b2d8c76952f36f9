// AttachLakehouse and the connection state behind engine/lakehouse.h.
#include "duckdb/catalog/catalog.hpp"
#include "duckdb/main/capi/capi_internal.hpp"
#include "duckdb/main/config.hpp"
#include "duckdb/main/connection.hpp"
#include "engine/duckdb/catalog.h"
#include "engine/duckdb/client_state.h"
#include "engine/duckdb/delta_scan.h"
#include "engine/functions.h"
#include "engine/lakehouse.h"

namespace basin::engine {

namespace duckdb_ext {

ClientState& GetClientState(duckdb::ClientContext& context) {
  auto state = context.registered_state->Get<ClientState>(kClientStateKey);
  if (!state) throw duckdb::InternalException("Basin's state is missing from this DuckDB connection");
  return *state;
}

duckdb::DatabaseInstance& GetDatabaseInstance(Database& db) {
  return *reinterpret_cast<duckdb::DatabaseWrapper*>(db.raw())->database->instance;
}

duckdb::ClientContext& GetClientContext(Connection& conn) {
  return *reinterpret_cast<duckdb::Connection*>(conn.raw())->context;
}

namespace {

// Basin's functions and storage extension, once per database.
void RegisterWithDatabase(duckdb::DatabaseInstance& db) {
  auto& config = duckdb::DBConfig::GetConfig(db);
  if (config.storage_extensions.count(kStorageExtensionName) > 0) return;
  RegisterDeltaScan(db);
  config.storage_extensions[kStorageExtensionName] = MakeStorageExtension();
}

}  // namespace

}  // namespace duckdb_ext

Status AttachLakehouse(Connection& conn, std::shared_ptr<const Lakehouse> lakehouse) {
  RETURN_IF_ERROR(RegisterBasinFunctions(conn));
  try {
    duckdb_ext::RegisterWithDatabase(duckdb_ext::GetDatabaseInstance(*conn.database()));
    auto& context = duckdb_ext::GetClientContext(conn);
    auto state = context.registered_state->GetOrCreate<duckdb_ext::ClientState>(duckdb_ext::kClientStateKey);
    state->lakehouse = std::move(lakehouse);
  } catch (std::exception& e) {
    return Status::Internal(std::string("cannot set up Basin in DuckDB: ") + e.what());
  }
  return conn.Execute(std::string("ATTACH IF NOT EXISTS '' AS ") + kLakehouseCatalog + " (TYPE " +
                      duckdb_ext::kStorageExtensionName + "); USE " + kLakehouseCatalog + ".\"" +
                      catalog::kDefaultSchema + "\"");
}

ScanStats TakeScanStats(Connection& conn) {
  auto& counters = duckdb_ext::GetClientState(duckdb_ext::GetClientContext(conn)).counters;
  ScanStats stats;
  stats.files_read = counters.files_read.exchange(0);
  stats.files_total = counters.files_total.exchange(0);
  return stats;
}

void SetScanSettings(Connection& conn, const ScanSettings& settings) {
  duckdb_ext::GetClientState(duckdb_ext::GetClientContext(conn)).settings = settings;
}

}  // namespace basin::engine
