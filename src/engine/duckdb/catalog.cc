#include "engine/duckdb/catalog.h"

#include <set>

#include "common/strings.h"
#include "duckdb/catalog/catalog.hpp"
#include "duckdb/catalog/catalog_entry/schema_catalog_entry.hpp"
#include "duckdb/catalog/catalog_entry/table_catalog_entry.hpp"
#include "duckdb/catalog/catalog_entry/view_catalog_entry.hpp"
#include "duckdb/main/attached_database.hpp"
#include "duckdb/parser/constraints/not_null_constraint.hpp"
#include "duckdb/parser/parsed_data/create_schema_info.hpp"
#include "duckdb/parser/parsed_data/create_table_info.hpp"
#include "duckdb/parser/parsed_data/create_view_info.hpp"
#include "duckdb/parser/parsed_data/drop_info.hpp"
#include "duckdb/planner/tableref/bound_at_clause.hpp"
#include "duckdb/storage/database_size.hpp"
#include "duckdb/storage/table_storage_info.hpp"
#include "duckdb/transaction/transaction.hpp"
#include "duckdb/transaction/transaction_manager.hpp"
#include "engine/duckdb/client_state.h"
#include "engine/duckdb/delta_scan.h"
#include "engine/duckdb/errors.h"
#include "engine/duckdb/type_mapping.h"

namespace basin::engine::duckdb_ext {

namespace {

using duckdb::CatalogType;

[[noreturn]] void RefuseWrite(const std::string& what) {
  throw duckdb::NotImplementedException(
      "%s of a Delta table of the warehouse cannot be part of another statement (PREPARE, EXPLAIN, a "
      "CTE...): run "
      "it as a statement of its own",
      what);
}

class BasinCatalog;

// The OID clients see for a warehouse table (pg_class.oid): DuckDB numbers entries as it
// makes them, and the catalog makes a table's entry anew in each transaction, so a client
// that looks the OID up and then reads pg_attribute by it (psql's \d) would find nothing.
// A hash of the table's id (its location for tables registered before ids existed) stays
// the same for the table's life, above PostgreSQL's first user OID and below 2^31.
duckdb::idx_t StableOid(const catalog::TableEntry& table) {
  constexpr uint64_t kFirstUserOid = 16384;
  constexpr uint64_t kOidRange = (uint64_t{1} << 31) - kFirstUserOid;
  uint64_t hash = 14695981039346656037ULL;  // FNV-1a
  for (unsigned char c : table.id.empty() ? table.location : table.id) {
    hash = (hash ^ c) * 1099511628211ULL;
  }
  return kFirstUserOid + hash % kOidRange;
}

class BasinTableEntry : public duckdb::TableCatalogEntry {
 public:
  BasinTableEntry(duckdb::Catalog& catalog, duckdb::SchemaCatalogEntry& schema, duckdb::CreateTableInfo& info,
                  catalog::TableEntry warehouse_entry, std::shared_ptr<const DeltaScanSource> source)
      : TableCatalogEntry(catalog, schema, info),
        warehouse_entry_(std::move(warehouse_entry)),
        source_(std::move(source)) {
    oid = StableOid(warehouse_entry_);
  }

  const catalog::TableEntry& warehouse_entry() const { return warehouse_entry_; }

  duckdb::unique_ptr<duckdb::BaseStatistics> GetStatistics(duckdb::ClientContext&,
                                                           duckdb::column_t) override {
    return nullptr;
  }
  duckdb::TableFunction GetScanFunction(duckdb::ClientContext& context,
                                        duckdb::unique_ptr<duckdb::FunctionData>& bind_data) override {
    return BindDeltaScan(context, Source(), bind_data);
  }
  duckdb::TableFunction GetScanFunction(duckdb::ClientContext& context,
                                        duckdb::unique_ptr<duckdb::FunctionData>& bind_data,
                                        const duckdb::EntryLookupInfo&) override {
    return BindDeltaScan(context, Source(), bind_data);
  }
  duckdb::TableStorageInfo GetStorageInfo(duckdb::ClientContext&) override {
    duckdb::TableStorageInfo info;
    if (!source_) return info;
    int64_t rows = source_->snapshot->num_records();
    if (rows >= 0) info.cardinality = static_cast<duckdb::idx_t>(rows);
    return info;
  }
  void BindUpdateConstraints(duckdb::Binder&, duckdb::LogicalGet&, duckdb::LogicalProjection&,
                             duckdb::LogicalUpdate&, duckdb::ClientContext&) override {
    RefuseWrite("UPDATE");
  }

  const std::shared_ptr<const DeltaScanSource>& Source() const {
    if (!source_) throw duckdb::InternalException("table %s was resolved by name only", name);
    return source_;
  }

 private:
  catalog::TableEntry warehouse_entry_;
  std::shared_ptr<const DeltaScanSource> source_;
};

// A DuckDB transaction on the warehouse: the table entries (and so the snapshots) it
// resolved, kept until it ends.
class BasinTransaction : public duckdb::Transaction {
 public:
  BasinTransaction(duckdb::TransactionManager& manager, duckdb::ClientContext& context)
      : Transaction(manager, context) {}

  // Catalog scans of one query (duckdb_tables() twice, in pg_class and pg_description) run
  // on several threads at once.
  std::mutex tables_mutex;
  std::map<std::string, duckdb::unique_ptr<BasinTableEntry>>
      tables;  // by "schema.table@version"; GUARDED_BY(tables_mutex)
};

class BasinTransactionManager : public duckdb::TransactionManager {
 public:
  explicit BasinTransactionManager(duckdb::AttachedDatabase& db) : TransactionManager(db) {}

  duckdb::Transaction& StartTransaction(duckdb::ClientContext& context) override {
    auto transaction = duckdb::make_uniq<BasinTransaction>(*this, context);
    auto& result = *transaction;
    std::lock_guard<std::mutex> lock(mutex_);
    transactions_[&result] = std::move(transaction);
    return result;
  }
  duckdb::ErrorData CommitTransaction(duckdb::ClientContext&, duckdb::Transaction& transaction) override {
    std::lock_guard<std::mutex> lock(mutex_);
    transactions_.erase(&transaction);
    return duckdb::ErrorData();
  }
  void RollbackTransaction(duckdb::Transaction& transaction) override {
    std::lock_guard<std::mutex> lock(mutex_);
    transactions_.erase(&transaction);
  }
  void Checkpoint(duckdb::ClientContext&, bool) override {}

 private:
  std::mutex mutex_;
  std::map<duckdb::Transaction*, duckdb::unique_ptr<BasinTransaction>> transactions_;
};

class BasinSchemaEntry : public duckdb::SchemaCatalogEntry {
 public:
  BasinSchemaEntry(duckdb::Catalog& catalog, duckdb::CreateSchemaInfo& info)
      : SchemaCatalogEntry(catalog, info) {}

  void Scan(duckdb::ClientContext& context, CatalogType type,
            const std::function<void(duckdb::CatalogEntry&)>& callback) override;
  void Scan(CatalogType, const std::function<void(duckdb::CatalogEntry&)>&) override {
    throw duckdb::NotImplementedException("scanning the warehouse catalog without a connection");
  }
  duckdb::optional_ptr<duckdb::CatalogEntry> LookupEntry(duckdb::CatalogTransaction transaction,
                                                         const duckdb::EntryLookupInfo& lookup_info) override;

  duckdb::optional_ptr<duckdb::CatalogEntry> CreateView(duckdb::CatalogTransaction transaction,
                                                        duckdb::CreateViewInfo& info) override;
  void DropEntry(duckdb::ClientContext& context, duckdb::DropInfo& info) override;

  duckdb::optional_ptr<duckdb::CatalogEntry> CreateIndex(duckdb::CatalogTransaction, duckdb::CreateIndexInfo&,
                                                         duckdb::TableCatalogEntry&) override {
    throw duckdb::NotImplementedException("indexes on Delta tables are not supported");
  }
  duckdb::optional_ptr<duckdb::CatalogEntry> CreateFunction(duckdb::CatalogTransaction,
                                                            duckdb::CreateFunctionInfo&) override {
    RefuseObject("functions and macros", "CREATE TEMP MACRO");
  }
  duckdb::optional_ptr<duckdb::CatalogEntry> CreateTable(duckdb::CatalogTransaction,
                                                         duckdb::BoundCreateTableInfo&) override {
    RefuseWrite("CREATE TABLE");
  }
  duckdb::optional_ptr<duckdb::CatalogEntry> CreateSequence(duckdb::CatalogTransaction,
                                                            duckdb::CreateSequenceInfo&) override {
    RefuseObject("sequences", "CREATE TEMP SEQUENCE");
  }
  duckdb::optional_ptr<duckdb::CatalogEntry> CreateTableFunction(duckdb::CatalogTransaction,
                                                                 duckdb::CreateTableFunctionInfo&) override {
    RefuseObject("table functions", "CREATE TEMP MACRO ... AS TABLE");
  }
  duckdb::optional_ptr<duckdb::CatalogEntry> CreateCopyFunction(duckdb::CatalogTransaction,
                                                                duckdb::CreateCopyFunctionInfo&) override {
    RefuseObject("copy functions", "a DuckDB extension");
  }
  duckdb::optional_ptr<duckdb::CatalogEntry> CreatePragmaFunction(
      duckdb::CatalogTransaction, duckdb::CreatePragmaFunctionInfo&) override {
    RefuseObject("pragma functions", "a DuckDB extension");
  }
  duckdb::optional_ptr<duckdb::CatalogEntry> CreateCollation(duckdb::CatalogTransaction,
                                                             duckdb::CreateCollationInfo&) override {
    RefuseObject("collations", "a DuckDB extension");
  }
  duckdb::optional_ptr<duckdb::CatalogEntry> CreateType(duckdb::CatalogTransaction,
                                                        duckdb::CreateTypeInfo&) override {
    RefuseObject("types", "CREATE TEMP TYPE");
  }
  void Alter(duckdb::CatalogTransaction, duckdb::AlterInfo&) override { RefuseWrite("ALTER"); }

 private:
  [[noreturn]] void RefuseObject(const std::string& what, const std::string& instead) const {
    throw duckdb::NotImplementedException(
        "the warehouse catalog holds Delta tables and views; create %s in the session instead (%s)", what,
        instead);
  }
  BasinCatalog& Basin();
  duckdb::optional_ptr<duckdb::CatalogEntry> GetTable(duckdb::ClientContext& context, const std::string& name,
                                                      duckdb::optional_ptr<duckdb::BoundAtClause> at_clause);
};

class BasinCatalog : public duckdb::Catalog {
 public:
  BasinCatalog(duckdb::AttachedDatabase& db, std::shared_ptr<const Lakehouse> lakehouse)
      : Catalog(db), lakehouse_(std::move(lakehouse)) {}

  const Lakehouse& lakehouse() const { return *lakehouse_; }

  void Initialize(bool) override { Schema(catalog::kDefaultSchema); }
  std::string GetCatalogType() override { return kStorageExtensionName; }
  std::string GetDefaultSchema() const override { return catalog::kDefaultSchema; }
  bool SupportsTimeTravel() const override { return true; }
  bool InMemory() override { return false; }
  std::string GetDBPath() override { return lakehouse_->warehouse->root(); }
  duckdb::DatabaseSize GetDatabaseSize(duckdb::ClientContext&) override { return duckdb::DatabaseSize(); }

  duckdb::optional_ptr<duckdb::CatalogEntry> CreateSchema(duckdb::CatalogTransaction,
                                                          duckdb::CreateSchemaInfo& info) override {
    return Schema(Lower(info.schema));
  }
  void DropSchema(duckdb::ClientContext&, duckdb::DropInfo& info) override {
    throw duckdb::NotImplementedException(
        "DROP SCHEMA %s: drop its tables instead; a schema without tables "
        "disappears",
        info.name);
  }

  void ScanSchemas(duckdb::ClientContext&,
                   std::function<void(duckdb::SchemaCatalogEntry&)> callback) override {
    std::set<std::string> names = {catalog::kDefaultSchema};
    auto tables = lakehouse_->warehouse->List();
    if (tables.ok()) {
      for (const auto& t : *tables) names.insert(t.name.schema);
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (const auto& [name, schema] : schemas_) names.insert(name);
    }
    for (const std::string& name : names) callback(*Schema(name));
  }

  duckdb::optional_ptr<duckdb::SchemaCatalogEntry> LookupSchema(
      duckdb::CatalogTransaction, const duckdb::EntryLookupInfo& lookup,
      duckdb::OnEntryNotFound if_not_found) override {
    std::string name = Lower(lookup.GetEntryName());
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = schemas_.find(name);
      if (it != schemas_.end()) return it->second.get();
    }
    // A schema exists when the warehouse has tables in it.
    auto tables = lakehouse_->warehouse->List(name);
    if (tables.ok() && !tables->empty()) return Schema(name);
    if (if_not_found == duckdb::OnEntryNotFound::THROW_EXCEPTION) {
      throw duckdb::CatalogException("schema %s does not exist in the warehouse", name);
    }
    return nullptr;
  }

  duckdb::PhysicalOperator& PlanCreateTableAs(duckdb::ClientContext&, duckdb::PhysicalPlanGenerator&,
                                              duckdb::LogicalCreateTable&,
                                              duckdb::PhysicalOperator&) override {
    RefuseWrite("CREATE TABLE AS");
  }
  duckdb::PhysicalOperator& PlanInsert(duckdb::ClientContext&, duckdb::PhysicalPlanGenerator&,
                                       duckdb::LogicalInsert&,
                                       duckdb::optional_ptr<duckdb::PhysicalOperator>) override {
    RefuseWrite("INSERT");
  }
  duckdb::PhysicalOperator& PlanDelete(duckdb::ClientContext&, duckdb::PhysicalPlanGenerator&,
                                       duckdb::LogicalDelete&, duckdb::PhysicalOperator&) override {
    RefuseWrite("DELETE");
  }
  duckdb::PhysicalOperator& PlanUpdate(duckdb::ClientContext&, duckdb::PhysicalPlanGenerator&,
                                       duckdb::LogicalUpdate&, duckdb::PhysicalOperator&) override {
    RefuseWrite("UPDATE");
  }
  duckdb::PhysicalOperator& PlanMergeInto(duckdb::ClientContext&, duckdb::PhysicalPlanGenerator&,
                                          duckdb::LogicalMergeInto&, duckdb::PhysicalOperator&) override {
    RefuseWrite("MERGE");
  }

  // Views of the session, by schema then name.
  std::mutex view_mutex;
  std::map<std::string, std::map<std::string, duckdb::unique_ptr<duckdb::ViewCatalogEntry>>> views;

 private:
  static std::string Lower(const std::string& s) { return AsciiLower(s); }

  BasinSchemaEntry* Schema(const std::string& name) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto& slot = schemas_[name];
    if (!slot) {
      duckdb::CreateSchemaInfo info;
      info.schema = name;
      slot = duckdb::make_uniq<BasinSchemaEntry>(*this, info);
    }
    return slot.get();
  }

  std::shared_ptr<const Lakehouse> lakehouse_;
  std::mutex mutex_;
  std::map<std::string, duckdb::unique_ptr<BasinSchemaEntry>> schemas_;
};

BasinCatalog& BasinSchemaEntry::Basin() { return catalog.Cast<BasinCatalog>(); }

// The version or time an AT clause asks for.
delta::SnapshotOptions SnapshotOptionsOf(duckdb::optional_ptr<duckdb::BoundAtClause> at_clause) {
  delta::SnapshotOptions options;
  if (!at_clause) return options;
  std::string unit = AsciiLower(at_clause->Unit());
  const duckdb::Value& value = at_clause->GetValue();
  if (value.IsNull()) throw duckdb::BinderException("AT (%s => NULL): give a version or a time", unit);
  if (unit == "version") {
    int64_t version = value.GetValue<int64_t>();
    if (version < 0) throw duckdb::BinderException("AT (VERSION => %lld): versions start at 0", version);
    options.version = version;
  } else if (unit == "timestamp") {
    options.timestamp = value.ToString();
  } else {
    throw duckdb::BinderException("AT (%s => ...): Delta tables travel by VERSION or TIMESTAMP", unit);
  }
  return options;
}

duckdb::optional_ptr<duckdb::CatalogEntry> BasinSchemaEntry::GetTable(
    duckdb::ClientContext& context, const std::string& name,
    duckdb::optional_ptr<duckdb::BoundAtClause> at_clause) {
  const Lakehouse& lakehouse = Basin().lakehouse();
  auto table_name = catalog::MakeTableName({this->name, name});
  if (!table_name.ok()) return nullptr;  // not a name the warehouse can hold
  auto entry = lakehouse.warehouse->Lookup(*table_name);
  if (!entry.ok()) ThrowStatus(entry.status());
  if (!*entry) return nullptr;
  auto& transaction = duckdb::Transaction::Get(context, catalog).Cast<BasinTransaction>();
  if (GetClientState(context).resolving_names) {
    // Which table the name is, not what it holds: no snapshot (the table may be unreadable).
    std::lock_guard<std::mutex> lock(transaction.tables_mutex);
    auto& slot = transaction.tables[table_name->ToString() + "@name"];
    if (!slot) {
      duckdb::CreateTableInfo info(*this, table_name->table);
      slot = duckdb::make_uniq<BasinTableEntry>(catalog, *this, info, **entry, nullptr);
    }
    return slot.get();
  }

  if (lakehouse.authorize_read) {
    Status allowed = lakehouse.authorize_read(*table_name, (*entry)->location);
    if (!allowed.ok()) ThrowStatus(allowed);
  }
  delta::SnapshotOptions options = SnapshotOptionsOf(at_clause);
  auto store = lakehouse.snapshots->StoreOf((*entry)->location, lakehouse.open_table_store);
  if (!store.ok()) ThrowStatus(store.status().WithContext("table " + table_name->ToString()));
  // Cached by location, as the session's commands look tables up: a table dropped and
  // created again under this name is another folder, or the same one started over.
  auto snapshot = lakehouse.snapshots->Get(*store, (*entry)->location, options);
  if (!snapshot.ok()) ThrowStatus(snapshot.status().WithContext("table " + table_name->ToString()));

  std::string key = table_name->ToString() + "@" + std::to_string((*snapshot)->version);
  std::lock_guard<std::mutex> lock(transaction.tables_mutex);
  auto& slot = transaction.tables[key];
  if (!slot) {
    // A statement that names a table twice reads one version of it: the first resolved.
    auto source = MakeScanSource(*snapshot, table_name->ToString());
    duckdb::CreateTableInfo info(*this, table_name->table);
    for (const delta::StructField& field : (*snapshot)->schema.fields) {
      // NOT NULL columns say so, as pg_attribute.attnotnull and information_schema show.
      if (!field.nullable) {
        info.constraints.push_back(duckdb::make_uniq<duckdb::NotNullConstraint>(
            duckdb::LogicalIndex(info.columns.LogicalColumnCount())));
      }
      info.columns.AddColumn(duckdb::ColumnDefinition(field.name, ToLogicalType(*field.type)));
    }
    slot = duckdb::make_uniq<BasinTableEntry>(catalog, *this, info, **entry, std::move(source));
  }
  return slot.get();
}

duckdb::optional_ptr<duckdb::CatalogEntry> BasinSchemaEntry::LookupEntry(
    duckdb::CatalogTransaction transaction, const duckdb::EntryLookupInfo& lookup_info) {
  CatalogType type = lookup_info.GetCatalogType();
  if (type != CatalogType::TABLE_ENTRY && type != CatalogType::VIEW_ENTRY) return nullptr;
  std::string name = AsciiLower(lookup_info.GetEntryName());
  {
    BasinCatalog& basin = Basin();
    std::lock_guard<std::mutex> lock(basin.view_mutex);
    auto schema = basin.views.find(this->name);
    if (schema != basin.views.end()) {
      auto view = schema->second.find(name);
      if (view != schema->second.end()) return view->second.get();
    }
  }
  if (type == CatalogType::VIEW_ENTRY || !transaction.context) return nullptr;
  return GetTable(*transaction.context, name, lookup_info.GetAtClause());
}

void BasinSchemaEntry::Scan(duckdb::ClientContext& context, CatalogType type,
                            const std::function<void(duckdb::CatalogEntry&)>& callback) {
  if (type == CatalogType::VIEW_ENTRY || type == CatalogType::TABLE_ENTRY) {
    BasinCatalog& basin = Basin();
    std::lock_guard<std::mutex> lock(basin.view_mutex);
    auto schema = basin.views.find(this->name);
    if (schema != basin.views.end()) {
      for (auto& [name, view] : schema->second) callback(*view);
    }
  }
  if (type != CatalogType::TABLE_ENTRY) return;
  auto tables = Basin().lakehouse().warehouse->List(this->name);
  if (!tables.ok()) ThrowStatus(tables.status());
  const Lakehouse& lakehouse = Basin().lakehouse();
  for (const catalog::TableEntry& table : *tables) {
    // A listing (information_schema, pg_class, psql's \dt) shows the tables the user may read.
    if (lakehouse.authorize_read) {
      Status allowed = lakehouse.authorize_read(table.name, table.location);
      if (allowed.IsPermissionDenied()) continue;
      if (!allowed.ok()) ThrowStatus(allowed);
    }
    auto entry = GetTable(context, table.name.table, nullptr);
    if (entry) callback(*entry);
  }
}

duckdb::optional_ptr<duckdb::CatalogEntry> BasinSchemaEntry::CreateView(
    duckdb::CatalogTransaction transaction, duckdb::CreateViewInfo& info) {
  std::string name = AsciiLower(info.view_name);
  if (const Lakehouse& lakehouse = Basin().lakehouse(); lakehouse.authorize_create_view) {
    Status allowed = lakehouse.authorize_create_view(this->name);
    if (!allowed.ok()) ThrowStatus(allowed);
  }
  if (transaction.context) {
    auto table_name = catalog::MakeTableName({this->name, name});
    if (table_name.ok()) {
      auto table = Basin().lakehouse().warehouse->Lookup(*table_name);
      if (table.ok() && *table) {
        throw duckdb::CatalogException("%s is a table of the warehouse; a view cannot take its name",
                                       table_name->ToString());
      }
    }
  }
  BasinCatalog& basin = Basin();
  std::lock_guard<std::mutex> lock(basin.view_mutex);
  auto& slot = basin.views[this->name][name];
  if (slot) {
    switch (info.on_conflict) {
      case duckdb::OnCreateConflict::IGNORE_ON_CONFLICT:
        return slot.get();
      case duckdb::OnCreateConflict::REPLACE_ON_CONFLICT:
        break;
      default:
        throw duckdb::CatalogException("view %s.%s already exists", this->name, name);
    }
  }
  info.view_name = name;
  slot = duckdb::make_uniq<duckdb::ViewCatalogEntry>(catalog, *this, info);
  return slot.get();
}

void BasinSchemaEntry::DropEntry(duckdb::ClientContext&, duckdb::DropInfo& info) {
  std::string name = AsciiLower(info.name);
  if (info.type == CatalogType::VIEW_ENTRY) {
    BasinCatalog& basin = Basin();
    std::lock_guard<std::mutex> lock(basin.view_mutex);
    auto schema = basin.views.find(this->name);
    if (schema != basin.views.end() && schema->second.erase(name) > 0) return;
    if (info.if_not_found == duckdb::OnEntryNotFound::RETURN_NULL) return;
    throw duckdb::CatalogException("view %s.%s does not exist", this->name, name);
  }
  RefuseWrite("DROP");
}

duckdb::unique_ptr<duckdb::Catalog> Attach(duckdb::optional_ptr<duckdb::StorageExtensionInfo>,
                                           duckdb::ClientContext& context, duckdb::AttachedDatabase& db,
                                           const std::string&, duckdb::AttachInfo&, duckdb::AttachOptions&) {
  auto lakehouse = GetClientState(context).lakehouse;
  if (!lakehouse) throw duckdb::InvalidInputException("this connection has no warehouse to attach");
  return duckdb::make_uniq<BasinCatalog>(db, std::move(lakehouse));
}

duckdb::unique_ptr<duckdb::TransactionManager> CreateTransactionManager(
    duckdb::optional_ptr<duckdb::StorageExtensionInfo>, duckdb::AttachedDatabase& db, duckdb::Catalog&) {
  return duckdb::make_uniq<BasinTransactionManager>(db);
}

}  // namespace

const catalog::TableEntry& WarehouseEntryOf(duckdb::CatalogEntry& entry) {
  return entry.Cast<BasinTableEntry>().warehouse_entry();
}

duckdb::unique_ptr<duckdb::StorageExtension> MakeStorageExtension() {
  auto extension = duckdb::make_uniq<duckdb::StorageExtension>();
  extension->attach = Attach;
  extension->create_transaction_manager = CreateTransactionManager;
  return extension;
}

}  // namespace basin::engine::duckdb_ext
