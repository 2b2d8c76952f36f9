// AttachLakehouse and the connection state behind engine/lakehouse.h.
#include "engine/lakehouse.h"

#include "common/uuid.h"
#include "duckdb/catalog/catalog.hpp"
#include "duckdb/main/capi/capi_internal.hpp"
#include "duckdb/main/config.hpp"
#include "duckdb/main/connection.hpp"
#include "duckdb/main/valid_checker.hpp"
#include "duckdb/planner/binder.hpp"
#include "duckdb/transaction/meta_transaction.hpp"
#include "engine/duckdb/catalog.h"
#include "engine/duckdb/client_state.h"
#include "engine/duckdb/delta_scan.h"
#include "engine/duckdb/table_changes_function.h"
#include "engine/status_transport.h"

namespace basin::engine {

namespace duckdb_ext {

ClientState& GetClientState(duckdb::ClientContext& context) {
  auto state = context.registered_state->Get<ClientState>(kClientStateKey);
  if (!state) throw duckdb::InternalException("Basin's state is missing from this DuckDB connection");
  return *state;
}

std::shared_ptr<const DeltaScanSource> ClientState::FindScan(const std::string& token) {
  std::lock_guard<std::mutex> lock(scans_mutex);
  auto it = scans.find(token);
  return it == scans.end() ? nullptr : it->second;
}

void ClientState::KeepUntilQueryEnd(std::shared_ptr<const void> object) {
  std::lock_guard<std::mutex> lock(scans_mutex);
  query_objects.push_back(std::move(object));
}

void ClientState::QueryEnd() {
  std::vector<std::shared_ptr<const void>> released;
  {
    std::lock_guard<std::mutex> lock(scans_mutex);
    released.swap(query_objects);
  }
  // Released outside the lock: registered scans unregister themselves under it.
}

duckdb::DatabaseInstance& GetDatabaseInstance(Database& db) {
  return *reinterpret_cast<duckdb::DatabaseWrapper*>(db.raw())->database->instance;
}

duckdb::ClientContext& GetClientContext(Connection& conn) {
  return *reinterpret_cast<duckdb::Connection*>(conn.raw())->context;
}

namespace {

std::mutex registration_mutex;

// Basin's functions and storage extension, once per database.
void RegisterWithDatabase(duckdb::DatabaseInstance& db) {
  std::lock_guard<std::mutex> lock(registration_mutex);
  auto& config = duckdb::DBConfig::GetConfig(db);
  if (config.storage_extensions.count(kStorageExtensionName) > 0) return;
  RegisterDeltaScan(db);
  RegisterTableChanges(db);
  config.storage_extensions[kStorageExtensionName] = MakeStorageExtension();
}

}  // namespace

// Basin's table functions in the connection's database and its state in the connection;
// a connection without a lakehouse can still read registered scans.
duckdb::shared_ptr<ClientState> EnsureClientState(Connection& conn) {
  RegisterWithDatabase(GetDatabaseInstance(*conn.database()));
  return GetClientContext(conn).registered_state->GetOrCreate<ClientState>(kClientStateKey);
}

}  // namespace duckdb_ext

class RegisteredScan {
 public:
  RegisteredScan(duckdb::shared_ptr<duckdb_ext::ClientState> state, std::string token)
      : state_(std::move(state)), token_(std::move(token)) {}
  ~RegisteredScan() {
    std::lock_guard<std::mutex> lock(state_->scans_mutex);
    state_->scans.erase(token_);
  }
  RegisteredScan(const RegisteredScan&) = delete;
  RegisteredScan& operator=(const RegisteredScan&) = delete;
  const std::string& token() const { return token_; }

 private:
  duckdb::shared_ptr<duckdb_ext::ClientState> state_;
  std::string token_;
};

std::shared_ptr<const RegisteredScan> RegisterScan(Connection& conn,
                                                   std::shared_ptr<const delta::Snapshot> snapshot,
                                                   std::optional<std::vector<size_t>> files,
                                                   std::string name) {
  auto state = duckdb_ext::EnsureClientState(conn);
  auto source = duckdb_ext::MakeScanSource(std::move(snapshot), std::move(name));
  if (files) {
    auto indexes = std::make_shared<std::vector<uint32_t>>();
    indexes->reserve(files->size());
    for (size_t i : *files) indexes->push_back(static_cast<uint32_t>(i));
    source->files = std::move(indexes);
  }
  static std::atomic<uint64_t> counter{0};
  std::string token = std::to_string(reinterpret_cast<uintptr_t>(state.get())) + "-" +
                      std::to_string(counter.fetch_add(1) + 1) + "-" + NewUuid();
  {
    std::lock_guard<std::mutex> lock(state->scans_mutex);
    state->scans[token] = std::move(source);
  }
  return std::make_shared<const RegisteredScan>(std::move(state), std::move(token));
}

std::string ScanTableSql(const RegisteredScan& scan) {
  return std::string(duckdb_ext::kDeltaScanFunction) + "('" + duckdb_ext::kScanTokenPrefix + scan.token() +
         "')";
}

Result<ResolvedTableName> ResolveTableName(Connection& conn, const std::vector<std::string>& parts) {
  if (parts.empty() || parts.size() > 3) {
    return Status::InvalidArgument("a table name has one to three parts, not " +
                                   std::to_string(parts.size()));
  }
  std::string catalog_name = parts.size() == 3 ? parts[0] : "";
  std::string schema_name = parts.size() >= 2 ? parts[parts.size() - 2] : "";
  const std::string& table_name = parts.back();
  ResolvedTableName resolved;
  auto& context = duckdb_ext::GetClientContext(conn);
  auto state = duckdb_ext::EnsureClientState(conn);
  struct NamesOnly {
    duckdb_ext::ClientState& state;
    explicit NamesOnly(duckdb_ext::ClientState& s) : state(s) { state.resolving_names = true; }
    ~NamesOnly() { state.resolving_names = false; }
  } names_only(*state);
  try {
    context.RunFunctionInTransaction([&] {
      duckdb::Binder::BindSchemaOrCatalog(context, catalog_name, schema_name);
      duckdb::EntryLookupInfo lookup(duckdb::CatalogType::TABLE_ENTRY, table_name);
      auto entry = duckdb::Catalog::GetEntry(context, catalog_name, schema_name, lookup,
                                             duckdb::OnEntryNotFound::RETURN_NULL);
      if (!entry) return;
      if (entry->type != duckdb::CatalogType::TABLE_ENTRY ||
          entry->ParentCatalog().GetCatalogType() != duckdb_ext::kStorageExtensionName) {
        resolved.kind = ResolvedTableName::Kind::kDuckDB;
        return;
      }
      resolved.kind = ResolvedTableName::Kind::kWarehouse;
      resolved.warehouse_entry = duckdb_ext::WarehouseEntryOf(*entry);
    });
  } catch (std::exception& e) {
    duckdb::ErrorData error(e);
    if (auto status = DecodeStatus(error.RawMessage())) return *status;
    return Status::InvalidArgument(error.Message());
  }
  return resolved;
}

Status AttachLakehouse(Connection& conn, std::shared_ptr<const Lakehouse> lakehouse) {
  try {
    duckdb_ext::EnsureClientState(conn)->lakehouse = std::move(lakehouse);
  } catch (std::exception& e) {
    return Status::Internal(std::string("cannot set up Basin in DuckDB: ") + e.what());
  }
  return conn.Execute(std::string("ATTACH IF NOT EXISTS '' AS ") + kLakehouseCatalog + " (TYPE " +
                      duckdb_ext::kStorageExtensionName + "); USE " + kLakehouseCatalog + ".\"" +
                      catalog::kDefaultSchema + "\"");
}

ScanStats TakeScanStats(Connection& conn) {
  auto& counters = duckdb_ext::EnsureClientState(conn)->counters;
  ScanStats stats;
  stats.files_read = counters.files_read.exchange(0);
  stats.files_total = counters.files_total.exchange(0);
  return stats;
}

TransactionBlock TransactionBlockOf(Connection& conn) {
  duckdb::ClientContext& context = duckdb_ext::GetClientContext(conn);
  if (context.transaction.IsAutoCommit() || !context.transaction.HasActiveTransaction()) {
    return TransactionBlock::kNone;
  }
  return duckdb::ValidChecker::IsInvalidated(context.transaction.ActiveTransaction())
             ? TransactionBlock::kAborted
             : TransactionBlock::kOpen;
}

void SetScanSettings(Connection& conn, const ScanSettings& settings) {
  duckdb_ext::EnsureClientState(conn)->settings = settings;
}

}  // namespace basin::engine
