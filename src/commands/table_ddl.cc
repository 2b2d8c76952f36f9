#include "commands/table_ddl.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <set>

#include "commands/maintenance_internal.h"
#include "commands/table_features.h"
#include "commands/table_rows.h"
#include "common/strings.h"
#include "common/uuid.h"
#include "delta/protocol.h"
#include "delta/transaction.h"
#include "engine/parquet_writer.h"
#include "engine/scan.h"

namespace basin::commands {

namespace {

using json = nlohmann::json;

constexpr std::string_view kConstraintPrefix = "delta.constraints.";
constexpr std::string_view kFeaturePrefix = "delta.feature.";

bool StartsWith(const std::string& text, std::string_view prefix) { return text.rfind(prefix, 0) == 0; }

bool SameName(const std::string& a, const std::string& b) { return EqualsIgnoreCase(a, b); }

// Index of the top-level column `name` (case-insensitive, as Spark), or -1.
int FindColumn(const delta::StructType& schema, const std::string& name) {
  for (size_t i = 0; i < schema.fields.size(); i++) {
    if (SameName(schema.fields[i].name, name)) return static_cast<int>(i);
  }
  return -1;
}

// Characters Delta does not allow in column names without column mapping (Parquet and Hive
// tools cannot take them).
constexpr std::string_view kInvalidNameCharacters = " ,;{}()\n\t=";

Status CheckFieldNames(const delta::StructType& schema, bool column_mapping, const std::string& where,
                       const std::string& prefix = "") {
  std::set<std::string> seen;
  for (const auto& field : schema.fields) {
    const std::string path = prefix + field.name;
    if (field.name.empty()) return Status::InvalidArgument(where + ": a column has an empty name");
    if (!seen.insert(AsciiLower(field.name)).second) {
      return Status::InvalidArgument(where + ": column '" + path +
                                     "' appears twice (names are case-insensitive)");
    }
    if (!column_mapping && field.name.find_first_of(kInvalidNameCharacters) != std::string::npos) {
      return Status::InvalidArgument(
          where + ": column name '" + path +
          "' has a character Delta allows only with column mapping (one of \" ,;{}()=\" "
          "or a tab or newline); set TBLPROPERTIES ('delta.columnMapping.mode' = 'name')");
    }
    if (field.type && field.type->kind == delta::DataType::Kind::kStruct) {
      RETURN_IF_ERROR(CheckFieldNames(field.type->struct_type, column_mapping, where, path + "."));
    }
  }
  return Status::OK();
}

// "SELECT NULL::T AS c, ..." over `schema`'s columns (those `keep` accepts): a relation with
// the table's column names and types, for binding expressions against it.
std::string TypedColumnsSql(const delta::StructType& schema,
                            const std::function<bool(const delta::StructField&)>& keep) {
  std::string sql;
  for (const auto& field : schema.fields) {
    if (!keep(field)) continue;
    sql += sql.empty() ? "SELECT " : ", ";
    sql += "NULL::" + field.type->ToDuckDBType() + " AS " + engine::QuoteIdentifier(field.name);
  }
  return sql.empty() ? "SELECT 1 AS \"__basin_no_columns\"" : sql;
}

// What an expression refers to, from DuckDB's syntax tree.
struct ExpressionInfo {
  std::set<std::string> columns;  // lower-cased first part of each column reference
  bool has_subquery = false;
};

void CollectExpressionInfo(const json& node, ExpressionInfo& info) {
  if (node.is_object()) {
    auto cls = node.find("class");
    if (cls != node.end() && cls->is_string()) {
      if (*cls == "SUBQUERY") info.has_subquery = true;
      if (*cls == "COLUMN_REF") {
        auto names = node.find("column_names");
        if (names != node.end() && names->is_array() && !names->empty() && (*names)[0].is_string()) {
          info.columns.insert(AsciiLower((*names)[0].get<std::string>()));
        }
      }
    }
    for (const auto& [key, child] : node.items()) CollectExpressionInfo(child, info);
  } else if (node.is_array()) {
    for (const auto& child : node) CollectExpressionInfo(child, info);
  }
}

Result<ExpressionInfo> InspectExpression(engine::Connection& conn, const std::string& expr,
                                         const std::string& what) {
  ASSIGN_OR_RETURN(engine::QueryResult r, conn.Query("SELECT json_serialize_sql(" +
                                                     engine::QuoteLiteral("SELECT (" + expr + ")") + ")"));
  json tree = json::parse(r.row_count() ? r.at(0, 0).value_or("") : "", nullptr, false);
  if (tree.is_discarded() || !tree.is_object() || tree.value("error", true)) {
    std::string message = tree.is_object() ? tree.value("error_message", std::string()) : std::string();
    return Status::InvalidArgument(what + ": cannot parse '" + expr + "'" +
                                   (message.empty() ? "" : ": " + message));
  }
  ExpressionInfo info;
  CollectExpressionInfo(tree, info);
  if (info.has_subquery) return Status::InvalidArgument(what + ": '" + expr + "' may not contain a subquery");
  return info;
}

// Binds `expr` against the columns `keep` accepts and returns its DuckDB result type.
// InvalidArgument naming `what` when it does not bind (an unknown column, a type error).
Result<std::string> BindExpression(engine::Connection& conn, const delta::StructType& schema,
                                   const std::string& expr,
                                   const std::function<bool(const delta::StructField&)>& keep,
                                   const std::string& what) {
  RETURN_IF_ERROR(InspectExpression(conn, expr, what).status());
  auto columns =
      conn.DescribeQuery("SELECT (" + expr + ") AS v FROM (" + TypedColumnsSql(schema, keep) + ")");
  if (!columns.ok()) {
    return Status::InvalidArgument(what + ": '" + expr +
                                   "' is not valid over the table's columns: " + columns.status().message());
  }
  if (columns->size() != 1) return Status::InvalidArgument(what + ": '" + expr + "' must be one expression");
  return (*columns)[0].type_name;
}

Status ValidateGenerationExpressions(engine::Connection& conn, const delta::StructType& schema,
                                     const std::string& where) {
  for (const auto& field : schema.fields) {
    auto expr = field.GenerationExpression();
    if (!expr) continue;
    const std::string what = where + ": generated column '" + field.name + "'";
    // Generated columns may use the other, non-generated columns only (as in Delta).
    auto not_generated = [](const delta::StructField& f) { return !f.GenerationExpression().has_value(); };
    RETURN_IF_ERROR(BindExpression(conn, schema,
                                   "CAST((" + *expr + ") AS " + field.type->ToDuckDBType() + ")",
                                   not_generated, what)
                        .status());
  }
  return Status::OK();
}

Status ValidateCheckConstraint(engine::Connection& conn, const delta::StructType& schema,
                               const std::string& name, const std::string& expr, const std::string& where) {
  const std::string what = where + ": CHECK constraint " + name;
  ASSIGN_OR_RETURN(std::string type, BindExpression(
                                         conn, schema, expr, [](const auto&) { return true; }, what));
  if (type != "BOOLEAN") {
    return Status::InvalidArgument(what + ": '" + expr + "' must be a boolean expression, not " + type);
  }
  return Status::OK();
}

bool IsPrimitive(const delta::StructField& field) {
  return field.type && field.type->kind == delta::DataType::Kind::kPrimitive;
}

Status ValidateNewSchema(const delta::StructType& schema, const std::vector<std::string>& partition_columns,
                         bool column_mapping, const std::string& where) {
  if (schema.fields.empty()) return Status::InvalidArgument(where + ": a table needs at least one column");
  RETURN_IF_ERROR(CheckFieldNames(schema, column_mapping, where));
  std::set<std::string> seen;
  for (const auto& name : partition_columns) {
    int index = FindColumn(schema, name);
    if (index < 0)
      return Status::InvalidArgument(where + ": partition column '" + name + "' is not a column");
    if (!IsPrimitive(schema.fields[index])) {
      return Status::InvalidArgument(where + ": partition column '" + name +
                                     "' must have a primitive type, not a struct, array or map");
    }
    if (!seen.insert(AsciiLower(name)).second) {
      return Status::InvalidArgument(where + ": partition column '" + name + "' is listed twice");
    }
  }
  if (!partition_columns.empty() && partition_columns.size() == schema.fields.size()) {
    return Status::InvalidArgument(where +
                                   ": every column is a partition column; a table needs a data column too");
  }
  return Status::OK();
}

// Partition column names as the schema spells them.
std::vector<std::string> CanonicalPartitionColumns(const delta::StructType& schema,
                                                   const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const auto& name : names) out.push_back(schema.fields[FindColumn(schema, name)].name);
  return out;
}

std::map<std::string, std::string> WithoutFeatureKeys(std::map<std::string, std::string> configuration) {
  for (auto it = configuration.begin(); it != configuration.end();) {
    it = StartsWith(it->first, kFeaturePrefix) ? configuration.erase(it) : std::next(it);
  }
  return configuration;
}

bool SameProtocol(const delta::Protocol& a, const delta::Protocol& b) {
  return a.min_reader_version == b.min_reader_version && a.min_writer_version == b.min_writer_version &&
         a.reader_features == b.reader_features && a.writer_features == b.writer_features;
}

json FieldJson(const delta::StructField& field) {
  delta::StructType one;
  one.fields.push_back(field);
  return delta::SchemaToJson(one)["fields"][0];
}

// A no-op outcome (DROP ... IF EXISTS of something absent): nothing is committed.
CommandResult NothingChanged(const delta::Snapshot& table, std::string notice) {
  CommandResult result;
  result.commit.version = table.version;
  result.notices.push_back(std::move(notice));
  return result;
}

// One ALTER TABLE commit: the new metadata (with `schema`), and a protocol upgrade when the
// new configuration or schema needs one. `protocol_configuration` may hold
// delta.feature.<name> keys, which go into the protocol only.
struct MetadataChange {
  delta::Metadata metadata;
  delta::StructType schema;
  std::string operation;
  json parameters = json::object();
  bool read_whole_table = false;
};

Result<CommandResult> CommitMetadataChange(const CommandContext& ctx,
                                           const std::shared_ptr<const delta::Snapshot>& table,
                                           MetadataChange change, const std::string& where) {
  change.metadata.schema_string = delta::SchemaToJson(change.schema).dump();
  ASSIGN_OR_RETURN(delta::Protocol protocol,
                   RequiredProtocol(change.metadata, change.schema, table->protocol));
  RETURN_IF_ERROR(delta::CheckWritable(protocol, change.schema, where));
  change.metadata.configuration = WithoutFeatureKeys(std::move(change.metadata.configuration));

  delta::Transaction txn(table, ctx.txn_options);
  if (change.read_whole_table) txn.ReadWholeTable();
  if (!SameProtocol(protocol, table->protocol)) txn.UpdateProtocol(protocol);
  txn.UpdateMetadata(std::move(change.metadata));
  txn.SetOperation(change.operation, std::move(change.parameters));
  auto committed = CommitCommand(ctx, txn, json::object(), where);
  if (!committed.ok()) return committed.status().WithContext(where);
  return committed;
}

// Rows of `table` for which `predicate_sql` (over logical names) holds.
Result<int64_t> CountMatchingRows(engine::Connection& conn, const delta::Snapshot& table,
                                  const std::string& predicate_sql) {
  ASSIGN_OR_RETURN(engine::ScanPlan plan, engine::BuildScanSql(table, conn));
  auto counted = conn.Query("SELECT count(*) FROM (" + plan.sql + ") AS __basin_rows WHERE " + predicate_sql);
  if (!counted.ok()) return counted.status();
  return std::stoll(counted->at(0, 0).value_or("0"));
}

// Constraint names (lower-case, as Delta stores them) of `configuration`.
std::map<std::string, std::string> Constraints(const std::map<std::string, std::string>& configuration) {
  std::map<std::string, std::string> out;
  for (const auto& [key, value] : configuration) {
    if (StartsWith(key, kConstraintPrefix)) out[key.substr(kConstraintPrefix.size())] = value;
  }
  return out;
}

// InvalidArgument when a CHECK constraint or generated column refers to `column`, which a
// rename or drop would leave dangling.
Status CheckNotReferenced(engine::Connection& conn, const delta::Snapshot& table, const std::string& column,
                          const std::string& action, const std::string& where) {
  const std::string lower = AsciiLower(column);
  for (const auto& [name, expr] : Constraints(table.metadata.configuration)) {
    ASSIGN_OR_RETURN(ExpressionInfo info,
                     InspectExpression(conn, expr, where + ": CHECK constraint " + name));
    if (info.columns.count(lower)) {
      return Status::InvalidArgument(where + ": cannot " + action + " column '" + column +
                                     "': CHECK constraint " + name + " (" + expr +
                                     ") uses it; drop the constraint first");
    }
  }
  for (const auto& field : table.schema.fields) {
    auto expr = field.GenerationExpression();
    if (!expr) continue;
    ASSIGN_OR_RETURN(ExpressionInfo info,
                     InspectExpression(conn, *expr, where + ": generated column " + field.name));
    if (info.columns.count(lower)) {
      return Status::InvalidArgument(where + ": cannot " + action + " column '" + column +
                                     "': generated column '" + field.name + "' (" + *expr + ") uses it");
    }
  }
  return Status::OK();
}

Status RequireColumnMapping(const delta::Snapshot& table, const std::string& action,
                            const std::string& where) {
  if (delta::ColumnMappingMode(table.metadata.configuration) != "none") return Status::OK();
  return Status::InvalidArgument(
      where + ": " + action +
      " needs column mapping, so that data files keep their column names; enable it "
      "first with ALTER TABLE ... SET TBLPROPERTIES ('delta.columnMapping.mode' = 'name')");
}

std::string PropertiesJsonText(const std::map<std::string, std::string>& properties) {
  json out = json::object();
  for (const auto& [key, value] : properties) out[key] = value;
  return out.dump();
}

// The table a CREATE TABLE (or CREATE OR REPLACE TABLE) request defines, validated.
struct TableDefinition {
  delta::Metadata metadata;
  delta::StructType schema;
  delta::Protocol protocol;
};

// `replaced` is the table a CREATE OR REPLACE TABLE replaces (null for a new table): its id
// stays, and its protocol is never lowered.
Result<TableDefinition> DefineTable(const CommandContext& ctx, const CreateTableRequest& request,
                                    const delta::Snapshot* replaced, const std::string& where) {
  engine::Connection& conn = *ctx.conn;
  RETURN_IF_ERROR(ValidateTableProperties(request.properties).WithContext(where));
  TableDefinition table;
  delta::StructType& schema = table.schema;
  schema = request.schema;
  if (schema.fields.empty() && request.source_sql) {
    auto inferred = engine::InferDeltaSchema(conn, *request.source_sql);
    if (!inferred.ok()) return inferred.status().WithContext(where);
    schema = std::move(*inferred);
  }
  std::map<std::string, std::string> configuration = request.properties;
  const bool column_mapping = delta::ColumnMappingMode(configuration) != "none";
  RETURN_IF_ERROR(ValidateNewSchema(schema, request.partition_columns, column_mapping, where));
  RETURN_IF_ERROR(ValidateGenerationExpressions(conn, schema, where));
  for (const auto& [name, expr] : Constraints(configuration)) {
    RETURN_IF_ERROR(ValidateCheckConstraint(conn, schema, name, expr, where));
  }
  // Delta keeps constraint names lower-case.
  for (const auto& [name, expr] : Constraints(configuration)) {
    configuration.erase(std::string(kConstraintPrefix) + name);
    configuration[std::string(kConstraintPrefix) + AsciiLower(name)] = expr;
  }
  AssignColumnMapping(schema, configuration);

  delta::Metadata& metadata = table.metadata;
  metadata.id = replaced ? replaced->metadata.id : NewUuid();
  if (!request.name.empty()) metadata.name = request.name;
  metadata.description = request.description;
  metadata.schema_string = delta::SchemaToJson(schema).dump();
  metadata.partition_columns = CanonicalPartitionColumns(schema, request.partition_columns);
  metadata.configuration = configuration;
  metadata.created_time = internal::NowMs(ctx.txn_options);
  std::optional<delta::Protocol> current;
  if (replaced) current = replaced->protocol;
  ASSIGN_OR_RETURN(table.protocol, RequiredProtocol(metadata, schema, current));
  RETURN_IF_ERROR(delta::CheckWritable(table.protocol, schema, where));
  metadata.configuration = WithoutFeatureKeys(std::move(metadata.configuration));
  return table;
}

// The rows of the request's query (none without one) written as new files of `table`.
Result<std::vector<delta::AddFile>> WriteSourceRows(
    const CommandContext& ctx, std::shared_ptr<ObjectStore> store, const std::string& table_root,
    const TableDefinition& table, const CreateTableRequest& request, const std::string& where) {
  if (!request.source_sql) return std::vector<delta::AddFile>();
  WriteTarget target{std::move(store), table_root,   table.protocol,
                     table.metadata,   table.schema, ctx.file_layout};
  ctx.Report("writing", 0);
  auto planned = PlanRows(*ctx.conn, target, *request.source_sql);
  if (!planned.ok()) return planned.status().WithContext(where);
  auto written = WriteRows(*ctx.conn, target, planned->stored_rows_sql);
  if (!written.ok()) return written.status().WithContext(where);
  return std::move(*written);
}

// commitInfo.operationParameters of CREATE [OR REPLACE] TABLE, as Delta writes them.
json DefinitionParameters(const CreateTableRequest& request, const delta::Metadata& metadata) {
  return {
      {"isManaged", request.is_managed ? "true" : "false"},
      {"description", request.description ? json(*request.description) : json(nullptr)},
      {"partitionBy", json(metadata.partition_columns).dump()},
      {"properties", PropertiesJsonText(metadata.configuration)},
  };
}

// operationMetrics of a write of `adds` (CTAS, or CREATE OR REPLACE TABLE AS SELECT).
json WriteMetrics(const std::vector<delta::AddFile>& adds) {
  int64_t rows = 0, bytes = 0;
  for (const auto& add : adds) {
    rows += delta::StatsNumRecords(add).value_or(0);
    bytes += add.size;
  }
  return {
      {"numFiles", static_cast<int64_t>(adds.size())}, {"numOutputRows", rows}, {"numOutputBytes", bytes}};
}

}  // namespace

Result<CommandResult> CreateTable(const CommandContext& ctx, std::shared_ptr<ObjectStore> store,
                                  const std::string& table_root, const CreateTableRequest& request) {
  const std::string where =
      "creating table " + (request.name.empty() ? table_root : request.name) + " at " + table_root;
  ASSIGN_OR_RETURN(auto existing, store->List("_delta_log/"));
  if (!existing.empty()) return Status::AlreadyExists(where + ": a Delta table already exists there");
  ASSIGN_OR_RETURN(TableDefinition table, DefineTable(ctx, request, nullptr, where));
  ASSIGN_OR_RETURN(std::vector<delta::AddFile> adds,
                   WriteSourceRows(ctx, store, table_root, table, request, where));

  delta::Transaction txn = delta::Transaction::CreateTable(store, table_root, ctx.txn_options);
  txn.UpdateProtocol(table.protocol);
  txn.UpdateMetadata(table.metadata);
  json parameters = DefinitionParameters(request, table.metadata);
  json metrics = json::object();
  if (request.source_sql) {
    metrics = WriteMetrics(adds);
    txn.SetOperation("CREATE TABLE AS SELECT", std::move(parameters));
  } else {
    txn.SetOperation("CREATE TABLE", std::move(parameters));
  }
  for (auto& add : adds) txn.Add(std::move(add));
  auto committed = CommitCommand(ctx, txn, std::move(metrics), where);
  if (!committed.ok()) {
    if (committed.status().IsConflict()) {
      return Status::AlreadyExists(where + ": another writer created a Delta table there first");
    }
    return committed.status().WithContext(where);
  }
  return committed;
}

Result<CommandResult> ReplaceTable(const CommandContext& ctx, std::shared_ptr<const delta::Snapshot> table,
                                   const CreateTableRequest& request) {
  const std::string where = "replacing table " + (request.name.empty() ? table->table_root : request.name) +
                            " at " + table->table_root;
  // As in Delta, removing rows from an append-only table is refused, replacing included.
  if (!table->files.empty() && TablePropertyIsTrue(table->metadata, "delta.appendOnly")) {
    return Status::InvalidArgument(where +
                                   ": the table is append-only (delta.appendOnly = true) and replacing it "
                                   "would remove its rows; set delta.appendOnly to false first");
  }
  ASSIGN_OR_RETURN(TableDefinition replacement, DefineTable(ctx, request, table.get(), where));
  ASSIGN_OR_RETURN(std::vector<delta::AddFile> adds,
                   WriteSourceRows(ctx, table->store, table->table_root, replacement, request, where));

  delta::Transaction txn(table, ctx.txn_options);
  // Every live file goes: a file another writer adds meanwhile would survive the
  // replacement under the old schema, so it conflicts.
  txn.ReadWholeTable();
  txn.ReadFiles(table->files);
  if (!SameProtocol(replacement.protocol, table->protocol)) txn.UpdateProtocol(replacement.protocol);
  txn.UpdateMetadata(replacement.metadata);
  for (const auto& file : table->files) txn.Remove(delta::RemoveOf(file, /*data_change=*/true));
  json metrics = {{"numRemovedFiles", static_cast<int64_t>(table->files.size())}};
  if (request.source_sql) metrics.update(WriteMetrics(adds));
  txn.SetOperation(request.source_sql ? "CREATE OR REPLACE TABLE AS SELECT" : "CREATE OR REPLACE TABLE",
                   DefinitionParameters(request, replacement.metadata));
  for (auto& add : adds) txn.Add(std::move(add));
  auto committed = CommitCommand(ctx, txn, std::move(metrics), where);
  if (!committed.ok()) return committed.status().WithContext(where);
  return committed;
}

Result<CommandResult> AlterTable(const CommandContext& ctx, std::shared_ptr<const delta::Snapshot> table,
                                 const AlterTableRequest& request) {
  const std::string where =
      "altering table " + (table->metadata.name ? *table->metadata.name : table->table_root);
  engine::Connection& conn = *ctx.conn;
  RETURN_IF_ERROR(delta::CheckWritable(table->protocol, table->schema, where));
  MetadataChange change{table->metadata, table->schema, "", json::object(), false};
  delta::Metadata& metadata = change.metadata;
  delta::StructType& schema = change.schema;
  const std::string mode = delta::ColumnMappingMode(metadata.configuration);

  using Kind = AlterTableRequest::Kind;
  switch (request.kind) {
    case Kind::kAddColumns: {
      if (request.columns.empty()) return Status::InvalidArgument(where + ": ADD COLUMNS needs a column");
      json added = json::array();
      for (const auto& column : request.columns) {
        if (FindColumn(schema, column.name) >= 0) {
          return Status::AlreadyExists(where + ": column '" + column.name + "' already exists");
        }
        if (!column.nullable) {
          return Status::InvalidArgument(
              where + ": column '" + column.name +
              "' cannot be added as NOT NULL: existing rows have no value for it; add it, "
              "fill it, then ALTER COLUMN ... SET NOT NULL");
        }
        if (column.GenerationExpression()) {
          return Status::InvalidArgument(
              where + ": generated column '" + column.name +
              "' cannot be added to an existing table (existing rows have no value)");
        }
        schema.fields.push_back(column);
      }
      RETURN_IF_ERROR(CheckFieldNames(schema, mode != "none", where));
      AssignColumnMapping(schema, metadata.configuration);
      for (size_t i = schema.fields.size() - request.columns.size(); i < schema.fields.size(); i++) {
        added.push_back({{"column", FieldJson(schema.fields[i])}});
      }
      change.operation = "ADD COLUMNS";
      change.parameters = {{"columns", added.dump()}};
      break;
    }
    case Kind::kSetProperties: {
      RETURN_IF_ERROR(ValidateTableProperties(request.properties).WithContext(where));
      for (const auto& [key, value] : request.properties) {
        if (StartsWith(key, kConstraintPrefix)) {
          return Status::InvalidArgument(
              where + ": set CHECK constraints with ALTER TABLE ... ADD CONSTRAINT " +
              key.substr(kConstraintPrefix.size()) + " CHECK (...), which checks the existing rows");
        }
      }
      auto new_mode = request.properties.find("delta.columnMapping.mode");
      if (new_mode != request.properties.end() && AsciiLower(new_mode->second) != mode) {
        if (mode != "none" || AsciiLower(new_mode->second) != "name") {
          return Status::InvalidArgument(where + ": delta.columnMapping.mode cannot change from '" + mode +
                                         "' to '" + AsciiLower(new_mode->second) +
                                         "' on an existing table; only 'none' to 'name' is possible");
        }
      }
      for (const auto& [key, value] : request.properties) metadata.configuration[key] = value;
      // Existing files hold the columns under their current names.
      AssignColumnMapping(schema, metadata.configuration, PhysicalNames::kSameAsName);
      change.operation = "SET TBLPROPERTIES";
      change.parameters = {{"properties", PropertiesJsonText(request.properties)}};
      break;
    }
    case Kind::kUnsetProperties: {
      for (const auto& key : request.property_keys) {
        if (StartsWith(key, kConstraintPrefix)) {
          return Status::InvalidArgument(where +
                                         ": remove CHECK constraints with ALTER TABLE ... DROP CONSTRAINT " +
                                         key.substr(kConstraintPrefix.size()));
        }
        if (key == "delta.columnMapping.mode" || key == "delta.columnMapping.maxColumnId") {
          if (mode != "none") {
            return Status::InvalidArgument(where + ": " + key +
                                           " cannot be unset: the table's data files rely on column mapping");
          }
        }
        if (metadata.configuration.erase(key) == 0 && !request.if_exists) {
          return Status::NotFound(where + ": table property " + key +
                                  " is not set (use UNSET TBLPROPERTIES IF EXISTS)");
        }
      }
      change.operation = "UNSET TBLPROPERTIES";
      change.parameters = {{"properties", json(request.property_keys).dump()},
                           {"ifExists", request.if_exists}};
      break;
    }
    case Kind::kAddConstraint: {
      const std::string name = AsciiLower(request.constraint_name);
      if (name.empty()) return Status::InvalidArgument(where + ": a CHECK constraint needs a name");
      const std::string key = std::string(kConstraintPrefix) + name;
      if (metadata.configuration.count(key)) {
        return Status::AlreadyExists(where + ": CHECK constraint " + name + " already exists (" +
                                     metadata.configuration[key] + ")");
      }
      RETURN_IF_ERROR(ValidateCheckConstraint(conn, schema, name, request.constraint_expr, where));
      ctx.Report("checking existing rows", 0);
      ASSIGN_OR_RETURN(
          int64_t violating,
          CountMatchingRows(conn, *table, "(" + request.constraint_expr + ") IS DISTINCT FROM true"));
      if (violating > 0) {
        return Status::InvalidArgument(where + ": CHECK constraint " + name + " (" + request.constraint_expr +
                                       ") is violated by " + std::to_string(violating) + " existing row(s)");
      }
      metadata.configuration[key] = request.constraint_expr;
      change.operation = "ADD CONSTRAINT";
      change.parameters = {{"name", name}, {"expr", request.constraint_expr}};
      change.read_whole_table = true;
      break;
    }
    case Kind::kDropConstraint: {
      const std::string name = AsciiLower(request.constraint_name);
      auto it = metadata.configuration.find(std::string(kConstraintPrefix) + name);
      if (it == metadata.configuration.end()) {
        if (request.if_exists)
          return NothingChanged(*table, "CHECK constraint " + name + " does not exist; nothing changed");
        return Status::NotFound(where + ": CHECK constraint " + name + " does not exist");
      }
      change.parameters = {{"name", name}, {"expr", it->second}};
      metadata.configuration.erase(it);
      change.operation = "DROP CONSTRAINT";
      break;
    }
    case Kind::kSetNotNull:
    case Kind::kDropNotNull: {
      int index = FindColumn(schema, request.column);
      if (index < 0) return Status::NotFound(where + ": column '" + request.column + "' does not exist");
      delta::StructField& field = schema.fields[index];
      if (request.kind == Kind::kSetNotNull && field.nullable) {
        ctx.Report("checking existing rows", 0);
        ASSIGN_OR_RETURN(int64_t nulls,
                         CountMatchingRows(conn, *table, engine::QuoteIdentifier(field.name) + " IS NULL"));
        if (nulls > 0) {
          return Status::InvalidArgument(where + ": column '" + field.name + "' cannot be NOT NULL: " +
                                         std::to_string(nulls) + " existing row(s) hold NULL in it");
        }
        change.read_whole_table = true;
      }
      field.nullable = request.kind == Kind::kDropNotNull;
      change.operation = "CHANGE COLUMN";
      change.parameters = {{"column", FieldJson(field).dump()}};
      break;
    }
    case Kind::kRenameColumn: {
      RETURN_IF_ERROR(RequireColumnMapping(*table, "RENAME COLUMN", where));
      int index = FindColumn(schema, request.column);
      if (index < 0) return Status::NotFound(where + ": column '" + request.column + "' does not exist");
      const int clash = FindColumn(schema, request.new_name);
      if (clash >= 0 && clash != index) {
        return Status::AlreadyExists(where + ": column '" + request.new_name + "' already exists");
      }
      const std::string old_name = schema.fields[index].name;
      RETURN_IF_ERROR(CheckNotReferenced(conn, *table, old_name, "rename", where));
      schema.fields[index].name = request.new_name;
      RETURN_IF_ERROR(CheckFieldNames(schema, true, where));
      for (auto& partition : metadata.partition_columns) {
        if (SameName(partition, old_name)) partition = request.new_name;
      }
      change.operation = "RENAME COLUMN";
      change.parameters = {{"oldColumnPath", old_name}, {"newColumnPath", request.new_name}};
      break;
    }
    case Kind::kDropColumn: {
      RETURN_IF_ERROR(RequireColumnMapping(*table, "DROP COLUMN", where));
      std::vector<std::string> names = {request.column};
      names.insert(names.end(), request.more_columns.begin(), request.more_columns.end());
      std::vector<std::string> dropped;
      for (const auto& requested : names) {
        int index = FindColumn(schema, requested);
        if (index < 0) {
          if (request.if_exists) continue;
          return Status::NotFound(where + ": column '" + requested + "' does not exist");
        }
        const std::string name = schema.fields[index].name;
        for (const auto& partition : metadata.partition_columns) {
          if (SameName(partition, name)) {
            return Status::InvalidArgument(where + ": cannot drop partition column '" + name + "'");
          }
        }
        RETURN_IF_ERROR(CheckNotReferenced(conn, *table, name, "drop", where));
        schema.fields.erase(schema.fields.begin() + index);
        dropped.push_back(name);
      }
      if (dropped.empty()) return NothingChanged(*table, "no column to drop exists; nothing changed");
      if (schema.fields.empty())
        return Status::InvalidArgument(where + ": cannot drop every column of the table");
      change.operation = "DROP COLUMNS";
      change.parameters = {{"columns", json(dropped).dump()}};
      break;
    }
  }
  return CommitMetadataChange(ctx, table, std::move(change), where);
}

}  // namespace basin::commands
