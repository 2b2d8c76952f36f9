// CREATE / DROP / ALTER TABLE, SHOW TABLES, SHOW TBLPROPERTIES and DESCRIBE on the
// warehouse's Delta tables (TryDdlStatement in sql/statements.h).
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>

#include "commands/table_ddl.h"
#include "common/strings.h"
#include "sql/statements.h"
#include "sql/type_names.h"

namespace basin::sql {

namespace {

namespace fs = std::filesystem;

using StatementOutcome = Result<std::optional<StatementResult>>;

StatementResult NoRows(const std::string& statement, std::vector<std::string> notices = {}) {
  StatementResult out;
  out.statement = statement;
  out.notices = std::move(notices);
  return out;
}

StatementResult Rows(const std::string& statement, std::vector<std::string> names,
                     std::vector<std::string> types) {
  StatementResult out;
  out.statement = statement;
  out.returns_rows = true;
  out.result.column_names = std::move(names);
  out.result.column_types = std::move(types);
  return out;
}

std::optional<std::string> Text(std::string value) { return std::optional<std::string>(std::move(value)); }

// ('k' = 'v', k.x = true, ...): keys are strings or dotted names, values strings, numbers
// or words (true, false).
Result<std::map<std::string, std::string>> PropertyList(TokenCursor& tokens, bool with_values) {
  std::map<std::string, std::string> out;
  RETURN_IF_ERROR(tokens.ExpectSymbol("("));
  do {
    std::string key;
    if (tokens.Peek().kind == Token::Kind::kString) {
      ASSIGN_OR_RETURN(key, tokens.StringLiteral("a property name"));
    } else {
      ASSIGN_OR_RETURN(std::vector<std::string> parts, tokens.QualifiedName("a property name"));
      for (const auto& part : parts) key += (key.empty() ? "" : ".") + part;
    }
    std::string value;
    if (with_values) {
      tokens.AcceptSymbol("=");
      const bool negative = tokens.AcceptSymbol("-");
      const Token& t = tokens.Peek();
      if (tokens.AtEnd() || (t.kind != Token::Kind::kString && t.kind != Token::Kind::kNumber &&
                             t.kind != Token::Kind::kIdentifier)) {
        return tokens.Error("a property value");
      }
      value = (negative ? "-" : "") + t.text;
      tokens.Reset(tokens.position() + 1);
    }
    if (out.count(key)) return Status::InvalidArgument("table property " + key + " is given twice");
    out[key] = value;
  } while (tokens.AcceptSymbol(","));
  RETURN_IF_ERROR(tokens.ExpectSymbol(")"));
  return out;
}

Result<std::vector<std::string>> NameList(TokenCursor& tokens, std::string_view what) {
  std::vector<std::string> out;
  RETURN_IF_ERROR(tokens.ExpectSymbol("("));
  do {
    ASSIGN_OR_RETURN(std::string name, tokens.Identifier(what));
    out.push_back(std::move(name));
  } while (tokens.AcceptSymbol(","));
  RETURN_IF_ERROR(tokens.ExpectSymbol(")"));
  return out;
}

// "(expr)" as written, without the outer parentheses.
Result<std::string> ParenthesizedExpression(TokenCursor& tokens, std::string_view what) {
  RETURN_IF_ERROR(tokens.ExpectSymbol("("));
  ASSIGN_OR_RETURN(std::string expr, tokens.TextUntil(what, {}));
  RETURN_IF_ERROR(tokens.ExpectSymbol(")"));
  return expr;
}

// name TYPE [NOT NULL] [GENERATED ALWAYS AS (expr) | AS (expr)] [COMMENT '...'], the
// options in any order.
Result<delta::StructField> ColumnDefinition(TokenCursor& tokens) {
  delta::StructField field;
  ASSIGN_OR_RETURN(field.name, tokens.Identifier("a column name"));
  ASSIGN_OR_RETURN(field.type, ParseColumnType(tokens));
  for (;;) {
    if (tokens.AcceptKeywords({"NOT", "NULL"})) {
      field.nullable = false;
    } else if (tokens.AcceptKeywords({"NULL"})) {
      field.nullable = true;
    } else if (tokens.AcceptKeywords({"GENERATED", "ALWAYS", "AS"}) || tokens.AcceptKeywords({"AS"})) {
      ASSIGN_OR_RETURN(std::string expr, ParenthesizedExpression(tokens, "a generation expression"));
      field.metadata["delta.generationExpression"] = expr;
      // DuckDB's spelling may say how the value is kept; Delta always stores it.
      tokens.AcceptKeywords({"STORED"});
    } else if (tokens.AcceptKeywords({"COMMENT"})) {
      ASSIGN_OR_RETURN(std::string comment, tokens.StringLiteral("a comment string"));
      field.metadata["comment"] = comment;
    } else if (tokens.PeekKeywords({"DEFAULT"}) || tokens.PeekKeywords({"PRIMARY"}) ||
               tokens.PeekKeywords({"UNIQUE"}) || tokens.PeekKeywords({"REFERENCES"}) ||
               tokens.PeekKeywords({"GENERATED"})) {
      return Status::NotImplemented("column " + field.name + ": " + AsciiLower(tokens.Peek().text) +
                                    " is not supported on Delta tables (NOT NULL, GENERATED ALWAYS AS (...), "
                                    "COMMENT and CONSTRAINT ... CHECK are)");
    } else {
      return field;
    }
  }
}

struct CreateStatement {
  std::vector<std::string> name;
  bool if_not_exists = false;
  bool has_columns = false;
  commands::CreateTableRequest request;
  std::optional<std::string> location;
  std::optional<std::string> query;
};

Result<CreateStatement> ParseCreateTable(TokenCursor& tokens) {
  CreateStatement create;
  if (tokens.AcceptKeywords({"IF", "NOT", "EXISTS"})) create.if_not_exists = true;
  ASSIGN_OR_RETURN(create.name, tokens.QualifiedName("a table name"));
  if (tokens.AcceptSymbol("(")) {
    create.has_columns = true;
    do {
      if (tokens.AcceptKeywords({"CONSTRAINT"})) {
        ASSIGN_OR_RETURN(std::string name, tokens.Identifier("a constraint name"));
        RETURN_IF_ERROR(tokens.ExpectKeywords({"CHECK"}));
        ASSIGN_OR_RETURN(std::string expr, ParenthesizedExpression(tokens, "a CHECK expression"));
        const std::string key = "delta.constraints." + AsciiLower(name);
        if (create.request.properties.count(key)) {
          return Status::InvalidArgument("CHECK constraint " + name + " is given twice");
        }
        create.request.properties[key] = expr;
      } else if (tokens.PeekKeywords({"CHECK"})) {
        return tokens.Error("a named constraint: CONSTRAINT name CHECK (...)");
      } else if (tokens.PeekKeywords({"PRIMARY"}) || tokens.PeekKeywords({"UNIQUE"}) ||
                 tokens.PeekKeywords({"FOREIGN"})) {
        return Status::NotImplemented(AsciiLower(tokens.Peek().text) +
                                      " keys are not supported on Delta tables");
      } else {
        ASSIGN_OR_RETURN(delta::StructField field, ColumnDefinition(tokens));
        create.request.schema.fields.push_back(std::move(field));
      }
    } while (tokens.AcceptSymbol(","));
    RETURN_IF_ERROR(tokens.ExpectSymbol(")"));
  }
  for (;;) {
    if (tokens.AcceptKeywords({"USING"})) {
      ASSIGN_OR_RETURN(std::string format, tokens.Identifier("a table format"));
      if (AsciiLower(format) != "delta") {
        return Status::InvalidArgument("Basin creates Delta tables only, not USING " + format);
      }
    } else if (tokens.AcceptKeywords({"PARTITIONED", "BY"})) {
      ASSIGN_OR_RETURN(create.request.partition_columns, NameList(tokens, "a partition column"));
    } else if (tokens.AcceptKeywords({"TBLPROPERTIES"})) {
      ASSIGN_OR_RETURN(auto properties, PropertyList(tokens, true));
      for (auto& [key, value] : properties) {
        if (create.request.properties.count(key)) {
          return Status::InvalidArgument("table property " + key + " is given twice");
        }
        create.request.properties[key] = value;
      }
    } else if (tokens.AcceptKeywords({"LOCATION"})) {
      ASSIGN_OR_RETURN(create.location, tokens.StringLiteral("a location string"));
    } else if (tokens.AcceptKeywords({"COMMENT"})) {
      ASSIGN_OR_RETURN(create.request.description, tokens.StringLiteral("a comment string"));
    } else {
      break;
    }
  }
  if (tokens.AcceptKeywords({"AS"})) {
    if (tokens.AtEnd()) return tokens.Error("a query after AS");
    create.query = tokens.Rest();
  }
  RETURN_IF_ERROR(tokens.ExpectEnd());
  return create;
}

bool HasDeltaLog(const std::string& folder) {
  std::error_code ec;
  return fs::is_directory(fs::path(folder) / "_delta_log", ec) &&
         !fs::is_empty(fs::path(folder) / "_delta_log", ec);
}

bool IsMissingOrEmptyFolder(const std::string& folder) {
  std::error_code ec;
  return !fs::exists(folder, ec) || (fs::is_directory(folder, ec) && fs::is_empty(folder, ec));
}

// A LOCATION as the catalog records it: absolute, normalized, relative ones under the
// warehouse.
std::string CatalogLocation(const catalog::Warehouse& warehouse, const std::string& location) {
  fs::path path(location);
  if (path.is_relative()) path = fs::path(warehouse.root()) / path;
  std::string out = fs::absolute(path).lexically_normal().string();
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

// CREATE OR REPLACE TABLE of the warehouse table `entry`: a new commit of the table at its
// location; the catalog entry stays as it is.
StatementOutcome RunReplaceTable(SessionContext& session, const std::string& statement,
                                 CreateStatement& create, const catalog::TableEntry& entry) {
  const std::string what = "CREATE OR REPLACE TABLE " + entry.name.ToString();
  if (create.location && CatalogLocation(session.warehouse(), *create.location) != entry.location) {
    return Status::InvalidArgument(what + ": LOCATION '" + *create.location +
                                   "' is not the table's location " + entry.location +
                                   "; a replaced table stays where it is");
  }
  if (!create.has_columns && !create.query) {
    return Status::InvalidArgument(what + ": give the new columns or an AS query");
  }
  if (!HasDeltaLog(entry.location)) {
    return Status::NotFound(what + ": no Delta table is at its location " + entry.location +
                            " to replace; DROP TABLE " + entry.name.ToString() + ", then CREATE TABLE it");
  }
  ASSIGN_OR_RETURN(auto snapshot, session.LoadTable(entry.location));
  create.request.name = entry.name.table;
  create.request.is_managed = !entry.external;
  std::unique_ptr<ResolvedQuery> source;
  if (create.query) {
    ASSIGN_OR_RETURN(source, session.ResolveQuery(*create.query));
    create.request.source_sql = source->sql;
  }
  ASSIGN_OR_RETURN(commands::CommandResult replaced,
                   commands::ReplaceTable(session.MakeCommandContext(), snapshot, create.request));
  std::vector<std::string> metrics;
  if (create.query) metrics = {"numOutputRows"};
  return std::optional<StatementResult>(CommandResultRow(statement, replaced, metrics));
}

StatementOutcome RunCreateTable(SessionContext& session, const std::string& statement, TokenCursor& tokens,
                                bool or_replace) {
  ASSIGN_OR_RETURN(CreateStatement create, ParseCreateTable(tokens));
  ASSIGN_OR_RETURN(catalog::TableName name, catalog::MakeTableName(create.name));
  if (or_replace && create.if_not_exists) {
    return Status::InvalidArgument("CREATE OR REPLACE TABLE " + name.ToString() +
                                   ": OR REPLACE and IF NOT EXISTS contradict each other");
  }
  const catalog::Warehouse& warehouse = session.warehouse();
  ASSIGN_OR_RETURN(std::optional<catalog::TableEntry> existing, warehouse.Lookup(name));
  if (existing) {
    if (create.if_not_exists) {
      return std::optional<StatementResult>(
          NoRows(statement, {"table " + name.ToString() + " already exists; nothing was created"}));
    }
    if (or_replace) return RunReplaceTable(session, statement, create, *existing);
    return Status::AlreadyExists("table " + name.ToString() + " already exists");
  }

  catalog::TableEntry entry;
  entry.name = name;
  if (create.location) {
    entry.location = CatalogLocation(warehouse, *create.location);
    entry.external = true;
  } else {
    entry.location = warehouse.DefaultLocation(name);
  }

  const bool defines_table = create.has_columns || create.query.has_value();
  if (HasDeltaLog(entry.location)) {
    if (create.location && !defines_table && create.request.properties.empty() &&
        create.request.partition_columns.empty()) {
      // Registering an existing table: it must be one Basin can read.
      ASSIGN_OR_RETURN(auto snapshot, session.LoadTable(entry.location));
      RETURN_IF_ERROR(warehouse.Register(entry));
      commands::CommandResult registered;
      registered.commit.version = snapshot->version;
      return std::optional<StatementResult>(CommandResultRow(statement, registered, {}));
    }
    if (create.location) {
      return Status::AlreadyExists("a Delta table already exists at " + entry.location +
                                   "; register it without columns, properties or a query: CREATE TABLE " +
                                   name.ToString() + " LOCATION '" + *create.location + "'");
    }
    return Status::AlreadyExists("folder " + entry.location +
                                 " already holds a Delta table that no name refers to "
                                 "(left by an interrupted CREATE or DROP TABLE, or being created right now); "
                                 "remove the folder, or register it with CREATE TABLE " +
                                 name.ToString() + " LOCATION '" + entry.location + "'");
  }
  if (!defines_table) {
    return Status::NotFound("no Delta table at " + entry.location +
                            " to register; give columns or AS query to create one there");
  }
  if (create.location && !IsMissingOrEmptyFolder(entry.location)) {
    return Status::InvalidArgument(
        "folder " + entry.location +
        " is not empty and holds no Delta table; create the table in an empty folder");
  }

  create.request.name = name.table;
  create.request.is_managed = !entry.external;
  std::unique_ptr<ResolvedQuery> source;
  if (create.query) {
    ASSIGN_OR_RETURN(source, session.ResolveQuery(*create.query));
    create.request.source_sql = source->sql;
  }
  ASSIGN_OR_RETURN(std::shared_ptr<ObjectStore> store, OpenLocalObjectStore(entry.location));
  commands::CommandContext ctx = session.MakeCommandContext();
  auto created = commands::CreateTable(ctx, store, entry.location, create.request);
  if (!created.ok()) {
    // A managed folder this statement made and left without a table goes again.
    if (!entry.external && !HasDeltaLog(entry.location)) {
      std::error_code ignored;
      fs::remove_all(entry.location, ignored);
    }
    return created.status();
  }
  Status registered = warehouse.Register(entry);
  if (!registered.ok()) {
    if (!entry.external) {
      // The name went to another table meanwhile; the folder made here is nobody's.
      std::error_code ignored;
      fs::remove_all(entry.location, ignored);
    }
    return registered;
  }
  std::vector<std::string> metrics;
  if (create.query) metrics = {"numOutputRows"};
  return std::optional<StatementResult>(CommandResultRow(statement, *created, metrics));
}

StatementOutcome RunDropTable(SessionContext& session, const std::string& statement, TokenCursor& tokens) {
  const bool if_exists = tokens.AcceptKeywords({"IF", "EXISTS"});
  ASSIGN_OR_RETURN(std::vector<std::string> parts, tokens.QualifiedName("a table name"));
  // CASCADE / RESTRICT and lists of names are DuckDB's forms.
  if (!tokens.AtEnd()) return std::optional<StatementResult>();
  auto name = catalog::MakeTableName(parts);
  if (!name.ok()) return std::optional<StatementResult>();
  ASSIGN_OR_RETURN(std::optional<catalog::TableEntry> entry, session.warehouse().Lookup(*name));
  if (!entry) {
    (void)if_exists;  // DuckDB answers for names the warehouse does not hold, IF EXISTS included
    return std::optional<StatementResult>();
  }
  // Unregister first: a crash before the files are gone leaves only unreferenced files.
  RETURN_IF_ERROR(session.warehouse().Unregister(*name));
  std::vector<std::string> notices;
  if (!entry->external) {
    std::error_code ec;
    fs::remove_all(entry->location, ec);
    if (ec) {
      notices.push_back("table " + name->ToString() + " was dropped but its folder " + entry->location +
                        " could not be removed: " + ec.message());
    }
  }
  return std::optional<StatementResult>(NoRows(statement, std::move(notices)));
}

// ALTER TABLE name <change>: nullopt when `name` is not a warehouse table.
StatementOutcome RunAlterTable(SessionContext& session, const std::string& statement, TokenCursor& tokens) {
  ASSIGN_OR_RETURN(std::vector<std::string> parts, tokens.QualifiedName("a table name"));
  auto name = catalog::MakeTableName(parts);
  if (!name.ok()) return std::optional<StatementResult>();
  ASSIGN_OR_RETURN(std::optional<catalog::TableEntry> entry, session.warehouse().Lookup(*name));
  if (!entry) return std::optional<StatementResult>();

  using Kind = commands::AlterTableRequest::Kind;
  commands::AlterTableRequest request;
  if (tokens.AcceptKeywords({"ADD", "CONSTRAINT"})) {
    request.kind = Kind::kAddConstraint;
    ASSIGN_OR_RETURN(request.constraint_name, tokens.Identifier("a constraint name"));
    RETURN_IF_ERROR(tokens.ExpectKeywords({"CHECK"}));
    ASSIGN_OR_RETURN(request.constraint_expr, ParenthesizedExpression(tokens, "a CHECK expression"));
  } else if (tokens.AcceptKeywords({"ADD"})) {
    request.kind = Kind::kAddColumns;
    if (!tokens.AcceptKeywords({"COLUMNS"})) tokens.AcceptKeywords({"COLUMN"});
    const bool parenthesized = tokens.AcceptSymbol("(");
    do {
      ASSIGN_OR_RETURN(delta::StructField field, ColumnDefinition(tokens));
      request.columns.push_back(std::move(field));
    } while (tokens.AcceptSymbol(","));
    if (parenthesized) RETURN_IF_ERROR(tokens.ExpectSymbol(")"));
  } else if (tokens.AcceptKeywords({"SET", "TBLPROPERTIES"})) {
    request.kind = Kind::kSetProperties;
    ASSIGN_OR_RETURN(request.properties, PropertyList(tokens, true));
  } else if (tokens.AcceptKeywords({"UNSET", "TBLPROPERTIES"})) {
    request.kind = Kind::kUnsetProperties;
    request.if_exists = tokens.AcceptKeywords({"IF", "EXISTS"});
    ASSIGN_OR_RETURN(auto keys, PropertyList(tokens, false));
    for (const auto& [key, unused] : keys) request.property_keys.push_back(key);
  } else if (tokens.AcceptKeywords({"DROP", "CONSTRAINT"})) {
    request.kind = Kind::kDropConstraint;
    request.if_exists = tokens.AcceptKeywords({"IF", "EXISTS"});
    ASSIGN_OR_RETURN(request.constraint_name, tokens.Identifier("a constraint name"));
  } else if (tokens.AcceptKeywords({"ALTER"}) || tokens.AcceptKeywords({"CHANGE"})) {
    tokens.AcceptKeywords({"COLUMN"});
    ASSIGN_OR_RETURN(request.column, tokens.Identifier("a column name"));
    if (tokens.AcceptKeywords({"SET", "NOT", "NULL"})) {
      request.kind = Kind::kSetNotNull;
    } else if (tokens.AcceptKeywords({"DROP", "NOT", "NULL"})) {
      request.kind = Kind::kDropNotNull;
    } else {
      return tokens.Error("SET NOT NULL or DROP NOT NULL");
    }
  } else if (tokens.AcceptKeywords({"RENAME", "COLUMN"})) {
    request.kind = Kind::kRenameColumn;
    ASSIGN_OR_RETURN(request.column, tokens.Identifier("a column name"));
    RETURN_IF_ERROR(tokens.ExpectKeywords({"TO"}));
    ASSIGN_OR_RETURN(request.new_name, tokens.Identifier("the new column name"));
  } else if (tokens.AcceptKeywords({"DROP", "COLUMNS"}) || tokens.AcceptKeywords({"DROP", "COLUMN"})) {
    request.kind = Kind::kDropColumn;
    request.if_exists = tokens.AcceptKeywords({"IF", "EXISTS"});
    const bool parenthesized = tokens.AcceptSymbol("(");
    std::vector<std::string> names;
    do {
      ASSIGN_OR_RETURN(std::string column, tokens.Identifier("a column name"));
      names.push_back(std::move(column));
    } while (tokens.AcceptSymbol(","));
    if (parenthesized) RETURN_IF_ERROR(tokens.ExpectSymbol(")"));
    request.column = names[0];
    request.more_columns.assign(names.begin() + 1, names.end());
  } else {
    return tokens.Error(
        "ADD COLUMNS, SET/UNSET TBLPROPERTIES, ADD/DROP CONSTRAINT, ALTER COLUMN, RENAME COLUMN or DROP "
        "COLUMN");
  }
  RETURN_IF_ERROR(tokens.ExpectEnd());
  ASSIGN_OR_RETURN(auto snapshot, session.LoadTable(entry->location));
  auto altered = commands::AlterTable(session.MakeCommandContext(), snapshot, request);
  if (!altered.ok()) return altered.status().WithContext("ALTER TABLE " + name->ToString());
  return std::optional<StatementResult>(CommandResultRow(statement, *altered, {}));
}

StatementOutcome RunShowTables(SessionContext& session, const std::string& statement, TokenCursor& tokens) {
  std::optional<std::string> schema;
  if (tokens.AcceptKeywords({"IN"}) || tokens.AcceptKeywords({"FROM"})) {
    ASSIGN_OR_RETURN(std::string name, tokens.Identifier("a schema name"));
    schema = AsciiLower(name);
  }
  if (!tokens.AtEnd()) return std::optional<StatementResult>();  // LIKE patterns etc.: DuckDB's
  ASSIGN_OR_RETURN(auto entries, session.warehouse().List(schema));
  StatementResult out =
      Rows(statement, {"schema", "name", "type", "location"}, {"VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR"});
  for (const auto& entry : entries) {
    out.result.rows.push_back({Text(entry.name.schema), Text(entry.name.table),
                               Text(entry.external ? "EXTERNAL" : "MANAGED"), Text(entry.location)});
  }
  return std::optional<StatementResult>(std::move(out));
}

// The table a DESCRIBE / SHOW TBLPROPERTIES names, with optional VERSION AS OF n or
// TIMESTAMP AS OF '...'; nullopt when the name is not a warehouse table or more follows.
Result<std::optional<std::shared_ptr<const delta::Snapshot>>> DescribedTable(SessionContext& session,
                                                                             TokenCursor& tokens) {
  using Out = std::optional<std::shared_ptr<const delta::Snapshot>>;
  auto parts = tokens.QualifiedName("a table name");
  if (!parts.ok()) return Out();
  delta::SnapshotOptions options;
  if (tokens.AcceptKeywords({"VERSION", "AS", "OF"})) {
    ASSIGN_OR_RETURN(options.version, tokens.Integer("a version number"));
  } else if (tokens.AcceptKeywords({"TIMESTAMP", "AS", "OF"})) {
    ASSIGN_OR_RETURN(options.timestamp, tokens.StringLiteral("a timestamp string"));
  }
  if (!tokens.AtEnd()) return Out();
  auto name = catalog::MakeTableName(*parts);
  if (!name.ok()) return Out();
  ASSIGN_OR_RETURN(std::optional<catalog::TableEntry> entry, session.warehouse().Lookup(*name));
  if (!entry) return Out();
  ASSIGN_OR_RETURN(auto snapshot, session.LoadTable(entry->location, options));
  return Out(std::move(snapshot));
}

StatementOutcome RunDescribe(SessionContext& session, const std::string& statement, TokenCursor& tokens) {
  tokens.AcceptKeywords({"TABLE"});
  ASSIGN_OR_RETURN(auto snapshot, DescribedTable(session, tokens));
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

StatementOutcome RunShowProperties(SessionContext& session, const std::string& statement,
                                   TokenCursor& tokens) {
  ASSIGN_OR_RETURN(auto snapshot, DescribedTable(session, tokens));
  if (!snapshot) return std::optional<StatementResult>();
  StatementResult out = Rows(statement, {"key", "value"}, {"VARCHAR", "VARCHAR"});
  for (const auto& [key, value] : (*snapshot)->metadata.configuration) {
    out.result.rows.push_back({Text(key), Text(value)});
  }
  return std::optional<StatementResult>(std::move(out));
}

}  // namespace

Result<std::optional<StatementResult>> TryDdlStatement(SessionContext& session, const std::string& statement,
                                                       TokenCursor& tokens) {
  if (tokens.AcceptKeywords({"CREATE"})) {
    const bool or_replace = tokens.AcceptKeywords({"OR", "REPLACE"});
    // CREATE TEMP TABLE, views, macros...: DuckDB's.
    if (!tokens.AcceptKeywords({"TABLE"})) return std::optional<StatementResult>();
    return RunCreateTable(session, statement, tokens, or_replace);
  }
  if (tokens.AcceptKeywords({"DROP", "TABLE"})) return RunDropTable(session, statement, tokens);
  if (tokens.AcceptKeywords({"ALTER", "TABLE"})) return RunAlterTable(session, statement, tokens);
  if (tokens.AcceptKeywords({"SHOW", "TABLES"})) return RunShowTables(session, statement, tokens);
  if (tokens.AcceptKeywords({"SHOW", "TBLPROPERTIES"})) return RunShowProperties(session, statement, tokens);
  if (tokens.AcceptKeywords({"DESCRIBE"}) || tokens.AcceptKeywords({"DESC"})) {
    // DESCRIBE HISTORY / DETAIL name are the session's.
    if ((tokens.PeekKeywords({"HISTORY"}) || tokens.PeekKeywords({"DETAIL"})) && tokens.Peek(1).text != "") {
      return std::optional<StatementResult>();
    }
    return RunDescribe(session, statement, tokens);
  }
  return std::optional<StatementResult>();
}

}  // namespace basin::sql
