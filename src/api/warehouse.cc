// basin::Warehouse (include/basin/warehouse.h) over catalog::Warehouse; CREATE and DROP
// TABLE run through the same statement handlers as SQL's (sql/statements.h), on parsed
// statements built here rather than on SQL text.
#include "basin/warehouse.h"

#include <utility>

#include "api/state.h"
#include "engine/sql_text.h"
#include "sql/grammar/token_stream.h"
#include "sql/statements.h"
#include "sql/type_names.h"

namespace basin {

namespace api {

Result<sql::Session*> WarehouseState::DdlSession() {
  if (!ddl_session) {
    ASSIGN_OR_RETURN(ddl_session, OpenSqlSession(location, /*data_skipping=*/true));
  }
  return ddl_session.get();
}

Result<std::shared_ptr<engine::DuckDBParquetLogIO>> WarehouseState::LogIO() {
  std::lock_guard<std::mutex> lock(mu);
  if (!log_io) log_io = std::make_shared<engine::DuckDBParquetLogIO>();
  return log_io;
}

Result<std::unique_ptr<sql::Session>> OpenSqlSession(const std::string& warehouse, bool data_skipping) {
  return sql::Session::Open({.warehouse_dir = warehouse, .data_skipping = data_skipping});
}

std::vector<std::string> NameParts(const std::string& name) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t dot = name.find('.', start);
    parts.push_back(name.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return parts;
}

Result<catalog::TableName> ParseTableName(const std::string& name) {
  auto parsed = catalog::MakeTableName(NameParts(name));
  if (!parsed.ok()) return parsed.status().WithContext("table name '" + name + "'");
  return parsed;
}

}  // namespace api

namespace {

// One column type as CREATE TABLE reads it: the whole text must be one type.
Result<delta::DataTypePtr> ParseType(const ColumnDefinition& column) {
  auto tokens = engine::TokenizeSql(column.type);
  if (!tokens.ok()) {
    return Status::InvalidArgument("column " + column.name + ": type '" + column.type +
                                   "': " + tokens.error().message);
  }
  sql::grammar::TokenStream stream(column.type, std::move(tokens.value()));
  auto type = sql::ParseColumnType(stream);
  if (!type.ok()) return type.status().WithContext("column " + column.name + ": type '" + column.type + "'");
  if (!stream.AtEnd()) {
    return Status::InvalidArgument("column " + column.name + ": type '" + column.type +
                                   "' is not one type (unexpected text at offset " +
                                   std::to_string(stream.OffsetOf(stream.position())) + ")");
  }
  return type;
}

Table MakeTable(std::shared_ptr<api::WarehouseState> state, const catalog::TableEntry& entry,
                std::shared_ptr<ObjectStore> store) {
  auto impl = std::make_shared<Table::Impl>();
  impl->warehouse = std::move(state);
  impl->name = entry.name.ToString();
  impl->location = entry.location;
  impl->store = std::move(store);
  return Table(std::move(impl));
}

}  // namespace

struct Warehouse::Impl {
  std::shared_ptr<api::WarehouseState> state;
};

Warehouse::Warehouse(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

Result<Warehouse> Warehouse::Open(const std::string& location) {
  if (location.starts_with("file:")) {
    return Status::NotImplemented("warehouse '" + location + "': give a local folder as a path");
  }
  auto state = std::make_shared<api::WarehouseState>();
  ASSIGN_OR_RETURN(state->catalog, catalog::Warehouse::Open(location));
  state->location = state->catalog->root();
  auto impl = std::make_shared<Impl>();
  impl->state = std::move(state);
  return Warehouse(std::move(impl));
}

const std::string& Warehouse::location() const { return impl_->state->location; }

Result<std::vector<std::string>> Warehouse::ListTables() const {
  ASSIGN_OR_RETURN(std::vector<catalog::TableEntry> entries, impl_->state->catalog->List());
  std::vector<std::string> names;
  names.reserve(entries.size());
  for (const catalog::TableEntry& entry : entries) names.push_back(entry.name.ToString());
  return names;
}

Result<Table> Warehouse::GetTable(const std::string& name) const {
  ASSIGN_OR_RETURN(catalog::TableName table_name, api::ParseTableName(name));
  ASSIGN_OR_RETURN(catalog::TableEntry entry, impl_->state->catalog->Get(table_name));
  ASSIGN_OR_RETURN(std::shared_ptr<ObjectStore> store, OpenStoreAt(entry.location));
  return MakeTable(impl_->state, entry, std::move(store));
}

Result<Table> Warehouse::CreateTable(const std::string& name, const std::vector<ColumnDefinition>& columns,
                                     const CreateTableOptions& options) {
  sql::grammar::CreateTable create;
  create.name = api::NameParts(name);
  ASSIGN_OR_RETURN(catalog::TableName table_name, api::ParseTableName(name));
  if (columns.empty()) {
    return Status::InvalidArgument("CREATE TABLE " + table_name.ToString() + ": a table needs columns");
  }
  create.has_columns = true;
  for (const ColumnDefinition& column : columns) {
    delta::StructField field;
    field.name = column.name;
    auto type = ParseType(column);
    if (!type.ok()) return type.status().WithContext("CREATE TABLE " + table_name.ToString());
    field.type = std::move(type).value();
    field.nullable = column.nullable;
    create.request.schema.fields.push_back(std::move(field));
  }
  create.request.partition_columns = options.partition_columns;
  create.request.properties = options.properties;
  create.request.description = options.description;
  {
    std::lock_guard<std::mutex> lock(impl_->state->mu);
    ASSIGN_OR_RETURN(sql::Session * session, impl_->state->DdlSession());
    ASSIGN_OR_RETURN(
        std::optional<sql::StatementResult> created,
        sql::RunCreateTable(session->context(), "CREATE TABLE " + table_name.ToString(), create));
  }
  return GetTable(table_name.ToString());
}

Status Warehouse::DropTable(const std::string& name) {
  sql::grammar::DropTable drop;
  drop.name = api::NameParts(name);
  ASSIGN_OR_RETURN(catalog::TableName table_name, api::ParseTableName(name));
  // NotFound naming the table, before DuckDB's rules could find another table of the name.
  RETURN_IF_ERROR(impl_->state->catalog->Get(table_name));
  std::lock_guard<std::mutex> lock(impl_->state->mu);
  ASSIGN_OR_RETURN(sql::Session * session, impl_->state->DdlSession());
  ASSIGN_OR_RETURN(std::optional<sql::StatementResult> dropped,
                   sql::RunDropTable(session->context(), "DROP TABLE " + table_name.ToString(), drop));
  if (!dropped) return Status::NotFound("table " + table_name.ToString() + " does not exist");
  return Status::OK();
}

}  // namespace basin
