// CREATE / DROP / ALTER TABLE, SHOW TABLES, SHOW TBLPROPERTIES and DESCRIBE on the
// warehouse's Delta tables (sql/statements.h).
#include <algorithm>
#include <cctype>
#include <map>

#include "commands/table_ddl.h"
#include "common/strings.h"
#include "sql/statements.h"
#include "sql/type_names.h"

namespace basin::sql {

namespace {

std::optional<std::string> Text(std::string value) { return std::optional<std::string>(std::move(value)); }

// Whether a Delta log is at `location` (an object below its _delta_log/).
Result<bool> HasDeltaLog(const std::string& location) {
  ASSIGN_OR_RETURN(std::shared_ptr<ObjectStore> store, OpenStoreAt(location));
  return store->HasObjectsWithPrefix("_delta_log/");
}

Result<bool> HasObjects(const std::string& location) {
  ASSIGN_OR_RETURN(std::shared_ptr<ObjectStore> store, OpenStoreAt(location));
  return store->HasObjectsWithPrefix("");
}

// A LOCATION as the catalog records it: a URL as written, a local folder absolute and
// normalized, relative ones under the warehouse.
Result<std::string> CatalogLocation(const catalog::Warehouse& warehouse, std::string location) {
  while (location.size() > 1 && location.back() == '/') location.pop_back();
  if (location.find("://") != std::string::npos || location.starts_with("file:")) return location;
  if (!location.starts_with('/')) location = warehouse.root() + "/" + location;
  if (location.find("://") != std::string::npos) return location;  // under a warehouse that is a URL
  return AbsoluteLocalPath(location);
}

// The table a DESCRIBE / SHOW TBLPROPERTIES names, as of its time travel; nullopt when the
// name is not a warehouse table.
Result<std::optional<std::shared_ptr<const delta::Snapshot>>> DescribedTable(
    SessionContext& session, const grammar::QualifiedName& parts, const grammar::TimeTravel& at) {
  using Out = std::optional<std::shared_ptr<const delta::Snapshot>>;
  delta::SnapshotOptions options;
  options.version = at.version;
  options.timestamp = at.timestamp;
  ASSIGN_OR_RETURN(std::optional<catalog::TableEntry> entry, session.ResolveTable(parts));
  if (!entry) return Out();
  RETURN_IF_ERROR(session.governor().RequireOnTable(security::Privilege::kSelect, entry->name));
  ASSIGN_OR_RETURN(auto snapshot, session.LoadTable(entry->location, options));
  return Out(std::move(snapshot));
}

// CREATE OR REPLACE TABLE of the warehouse table `entry`: a new commit of the table at its
// location; the catalog entry stays as it is.
StatementOutcome RunReplaceTable(SessionContext& session, const std::string& statement,
                                 grammar::CreateTable& create, const catalog::TableEntry& entry) {
  const std::string what = "CREATE OR REPLACE TABLE " + entry.name.ToString();
  std::optional<std::string> location;
  if (create.location) {
    ASSIGN_OR_RETURN(location, CatalogLocation(session.warehouse(), *create.location));
  }
  if (location && *location != entry.location) {
    return Status::InvalidArgument(what + ": LOCATION '" + *create.location +
                                   "' is not the table's location " + entry.location +
                                   "; a replaced table stays where it is");
  }
  if (!create.has_columns && !create.query) {
    return Status::InvalidArgument(what + ": give the new columns or an AS query");
  }
  ASSIGN_OR_RETURN(bool has_log, HasDeltaLog(entry.location));
  if (!has_log) {
    return Status::NotFound(what + ": no Delta table is at its location " + entry.location +
                            " to replace; DROP TABLE " + entry.name.ToString() + ", then CREATE TABLE it");
  }
  ASSIGN_OR_RETURN(auto snapshot, session.LoadTable(entry.location));
  create.request.name = entry.name.table;
  create.request.is_managed = !entry.external;
  if (create.query) create.request.source_sql = create.query->sql;
  ASSIGN_OR_RETURN(commands::CommandResult replaced,
                   commands::ReplaceTable(session.MakeCommandContext(), snapshot, create.request));
  std::vector<std::string> metrics;
  if (create.query) metrics = {"numOutputRows"};
  return std::optional<StatementResult>(CommandResultRow(statement, replaced, metrics));
}

}  // namespace

StatementOutcome RunCreateTable(SessionContext& session, const std::string& statement,
                                const grammar::CreateTable& parsed) {
  grammar::CreateTable create = parsed;
  const bool or_replace = create.or_replace;
  ASSIGN_OR_RETURN(catalog::TableName name, catalog::MakeTableName(create.name));
  if (create.query) RETURN_IF_ERROR(RefuseStreams(create.query->streams, "CREATE TABLE ... AS"));
  if (or_replace && create.if_not_exists) {
    return Status::InvalidArgument("CREATE OR REPLACE TABLE " + name.ToString() +
                                   ": OR REPLACE and IF NOT EXISTS contradict each other");
  }
  Governor& governor = session.governor();
  RETURN_IF_ERROR(governor.Require(security::Privilege::kCreate, security::Securable::Schema(name.schema)));
  // A folder outside the warehouse, or another table's, is not the schema's to give.
  if (create.location) RETURN_IF_ERROR(governor.RequireAdmin("CREATE TABLE ... LOCATION"));
  const catalog::Warehouse& warehouse = session.warehouse();
  ASSIGN_OR_RETURN(std::optional<catalog::TableEntry> existing, warehouse.Lookup(name));
  if (existing) {
    if (create.if_not_exists) {
      return std::optional<StatementResult>(
          NoRows(statement, {"table " + name.ToString() + " already exists; nothing was created"}));
    }
    if (or_replace) {
      RETURN_IF_ERROR(governor.RequireOnTable(security::Privilege::kManage, name));
      return RunReplaceTable(session, statement, create, *existing);
    }
    return Status::AlreadyExists("table " + name.ToString() + " already exists");
  }

  catalog::TableEntry entry;
  entry.name = name;
  const bool defines_table = create.has_columns || create.query.has_value();
  if (create.location) {
    ASSIGN_OR_RETURN(entry.location, CatalogLocation(warehouse, *create.location));
    entry.external = true;
    ASSIGN_OR_RETURN(bool has_log, HasDeltaLog(entry.location));
    if (has_log) {
      if (!defines_table && create.request.properties.empty() && create.request.partition_columns.empty()) {
        // Registering an existing table: it must be one Basin can read.
        ASSIGN_OR_RETURN(auto snapshot, session.LoadTable(entry.location));
        RETURN_IF_ERROR(warehouse.Register(entry));
        RETURN_IF_ERROR(governor.TableCreated(name));
        commands::CommandResult registered;
        registered.commit.version = snapshot->version;
        return std::optional<StatementResult>(CommandResultRow(statement, registered, {}));
      }
      return Status::AlreadyExists("a Delta table already exists at " + entry.location +
                                   "; register it without columns, properties or a query: CREATE TABLE " +
                                   name.ToString() + " LOCATION '" + *create.location + "'");
    }
    if (!defines_table) {
      return Status::NotFound("no Delta table at " + entry.location +
                              " to register; give columns or AS query to create one there");
    }
    ASSIGN_OR_RETURN(bool has_objects, HasObjects(entry.location));
    if (has_objects) {
      return Status::InvalidArgument(
          "folder " + entry.location +
          " is not empty and holds no Delta table; create the table in an empty folder");
    }
  } else {
    if (!defines_table) {
      return Status::InvalidArgument(
          "CREATE TABLE " + name.ToString() +
          ": give the columns or an AS query (or the LOCATION of an existing Delta table)");
    }
    // A folder of this incarnation's own: a DROP of an earlier one cannot delete it.
    ASSIGN_OR_RETURN(entry.location, warehouse.ClaimManagedLocation(name));
  }

  create.request.name = name.table;
  create.request.is_managed = !entry.external;
  if (create.query) create.request.source_sql = create.query->sql;
  ASSIGN_OR_RETURN(std::shared_ptr<ObjectStore> store, OpenStoreAt(entry.location));
  commands::CommandContext ctx = session.MakeCommandContext();
  auto created = commands::CreateTable(ctx, store, entry.location, create.request);
  // A managed folder this statement claimed and left without a name goes again.
  auto give_back = [&](Status failed) {
    if (entry.external) return failed;
    Status deleted = warehouse.DeleteManagedFolder(entry.location);
    if (deleted.ok()) return failed;
    return failed.WithContext("table " + name.ToString() + " (its folder " + entry.location +
                              " could not be removed after the error below: " + deleted.ToString() + ")");
  };
  if (!created.ok()) return give_back(created.status());
  // The name may have gone to another table meanwhile.
  Status registered = warehouse.Register(entry);
  if (!registered.ok()) return give_back(registered);
  RETURN_IF_ERROR(governor.TableCreated(name));
  std::vector<std::string> metrics;
  if (create.query) metrics = {"numOutputRows"};
  return std::optional<StatementResult>(CommandResultRow(statement, *created, metrics));
}

StatementOutcome RunDropTable(SessionContext& session, const std::string& statement,
                              const grammar::DropTable& drop) {
  ASSIGN_OR_RETURN(std::optional<catalog::TableEntry> entry, session.ResolveTable(drop.name));
  // DuckDB answers for names that are not the warehouse's, IF EXISTS included.
  if (!entry) return std::optional<StatementResult>();
  RETURN_IF_ERROR(session.governor().RequireOnTable(security::Privilege::kManage, entry->name));
  const std::string name = entry->name.ToString();
  // Unregister first: a crash before the files are gone leaves only unreferenced files.
  // Only the incarnation looked up goes: a table of this name created since stays.
  Status unregistered = session.warehouse().Unregister(*entry);
  if (unregistered.IsNotFound() && drop.if_exists) return std::optional<StatementResult>(NoRows(statement));
  RETURN_IF_ERROR(unregistered);
  std::vector<std::string> notices;
  // A table created again under this name starts without them.
  if (Status forgotten = session.governor().TableDropped(entry->name); !forgotten.ok()) {
    notices.push_back("table " + name +
                      " was dropped but its grants could not be removed: " + forgotten.ToString());
  }
  if (!entry->external) {
    session.WaitForCheckpoints();
    Status deleted = session.warehouse().DeleteManagedFolder(entry->location);
    if (!deleted.ok()) {
      notices.push_back("table " + name + " was dropped but its folder " + entry->location +
                        " could not be removed: " + deleted.ToString());
    }
  }
  return std::optional<StatementResult>(NoRows(statement, std::move(notices)));
}

StatementOutcome RunAlterTable(SessionContext& session, const std::string& statement,
                               const grammar::AlterTable& alter) {
  ASSIGN_OR_RETURN(std::optional<catalog::TableEntry> entry, session.ResolveTable(alter.name));
  if (!entry) return std::optional<StatementResult>();
  const catalog::TableName* name = &entry->name;
  if (!alter.unsupported.ok()) return alter.unsupported;
  RETURN_IF_ERROR(session.governor().RequireOnTable(security::Privilege::kManage, *name));

  ASSIGN_OR_RETURN(auto snapshot, session.LoadTable(entry->location));
  auto altered = commands::AlterTable(session.MakeCommandContext(), snapshot, alter.request);
  if (!altered.ok()) return altered.status().WithContext("ALTER TABLE " + name->ToString());
  return std::optional<StatementResult>(CommandResultRow(statement, *altered, {}));
}

StatementOutcome RunShowTables(SessionContext& session, const std::string& statement,
                               const grammar::ShowTables& show) {
  ASSIGN_OR_RETURN(auto entries, session.warehouse().List(show.schema));
  StatementResult out =
      Rows(statement, {"schema", "name", "type", "location"}, {"VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR"});
  const security::Access& access = session.governor().access();
  for (const auto& entry : entries) {
    // The tables the user may read, as the catalog lists them.
    if (!access.Holds(security::Privilege::kSelect, TableSecurable(entry.name))) continue;
    out.result.rows.push_back({Text(entry.name.schema), Text(entry.name.table),
                               Text(entry.external ? "EXTERNAL" : "MANAGED"), Text(entry.location)});
  }
  return std::optional<StatementResult>(std::move(out));
}

StatementOutcome RunDescribeTable(SessionContext& session, const std::string& statement,
                                  const grammar::DescribeTable& describe) {
  ASSIGN_OR_RETURN(auto snapshot, DescribedTable(session, describe.name, describe.at));
  if (!snapshot) return std::optional<StatementResult>();
  const delta::Snapshot& table = **snapshot;
  StatementResult out =
      Rows(statement, {"col_name", "data_type", "nullable", "partition_index", "generated_as", "comment"},
           {"VARCHAR", "VARCHAR", "BOOLEAN", "INTEGER", "VARCHAR", "VARCHAR"});
  const auto& partitions = table.metadata.partition_columns;
  for (const auto& field : table.schema.fields) {
    std::optional<std::string> partition_index;
    for (size_t i = 0; i < partitions.size(); i++) {
      if (AsciiLower(partitions[i]) == AsciiLower(field.name)) partition_index = std::to_string(i);
    }
    auto string_metadata = [&](const char* key) -> std::optional<std::string> {
      if (!field.metadata.is_object()) return std::nullopt;
      auto it = field.metadata.find(key);
      if (it == field.metadata.end() || !it->is_string()) return std::nullopt;
      return it->get<std::string>();
    };
    out.result.rows.push_back({Text(field.name), Text(DeltaTypeName(*field.type)),
                               Text(field.nullable ? "true" : "false"), partition_index,
                               string_metadata("delta.generationExpression"), string_metadata("comment")});
  }
  return std::optional<StatementResult>(std::move(out));
}

StatementOutcome RunShowTblProperties(SessionContext& session, const std::string& statement,
                                      const grammar::ShowTblProperties& show) {
  ASSIGN_OR_RETURN(auto snapshot, DescribedTable(session, show.name, show.at));
  if (!snapshot) return std::optional<StatementResult>();
  StatementResult out = Rows(statement, {"key", "value"}, {"VARCHAR", "VARCHAR"});
  for (const auto& [key, value] : (*snapshot)->metadata.configuration) {
    out.result.rows.push_back({Text(key), Text(value)});
  }
  return std::optional<StatementResult>(std::move(out));
}

}  // namespace basin::sql
