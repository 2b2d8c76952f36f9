// Basin's state in a DuckDB connection (a ClientContextState): the lakehouse its tables
// come from, its scan settings, and the counters its scans report.
//
// Thread safety: the lakehouse and settings are set before queries run; counters are
// atomic, since DuckDB's worker threads update them.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "duckdb.hpp"
#include "duckdb/main/client_context_state.hpp"
#include "engine/lakehouse.h"

namespace basin::engine::duckdb_ext {

inline constexpr char kClientStateKey[] = "basin";

struct DeltaScanSource;

struct ClientState : public duckdb::ClientContextState {
  std::shared_ptr<const Lakehouse> lakehouse;
  ScanSettings settings;
  // While set, the catalog resolves table names without loading their snapshots
  // (ResolveTableName only asks which table a name is).
  bool resolving_names = false;
  ScanCounters counters;

  // Scans registered by RegisterScan, by the token their table SQL names.
  std::mutex scans_mutex;
  std::map<std::string, std::shared_ptr<const DeltaScanSource>> scans;  // guarded by scans_mutex
  std::shared_ptr<const DeltaScanSource> FindScan(const std::string& token);

  // What the running query's table functions need alive until it ends (table_changes'
  // registered scans); released when DuckDB ends the query.
  void KeepUntilQueryEnd(std::shared_ptr<const void> object);
  void QueryEnd() override;
  std::vector<std::shared_ptr<const void>> query_objects;  // guarded by scans_mutex
};

// delta_scan('basin-scan:<token>') reads a registered scan.
inline constexpr char kScanTokenPrefix[] = "basin-scan:";

// The connection's state; InternalException (DuckDB's) when AttachLakehouse was not run on it.
ClientState& GetClientState(duckdb::ClientContext& context);

// The DuckDB objects behind Basin's C API handles.
duckdb::DatabaseInstance& GetDatabaseInstance(Database& db);
duckdb::ClientContext& GetClientContext(Connection& conn);

}  // namespace basin::engine::duckdb_ext
