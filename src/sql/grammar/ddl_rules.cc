// CREATE / DROP / ALTER TABLE, SHOW TABLES, SHOW TBLPROPERTIES, DESCRIBE (rules.h).
#include "common/strings.h"
#include "sql/grammar/rules.h"
#include "sql/grammar/slots.h"

namespace basin::sql::grammar {

namespace {

using Kind = commands::AlterTableRequest::Kind;

// The clauses after the column list, then [AS query].
Status CreateTableClauses(TokenStream& tokens, CreateTable& create) {
  ASSIGN_OR_RETURN(TableClauses clauses, ParseTableClauses(tokens, /*warehouse_table=*/true));
  commands::CreateTableRequest& request = create.request;
  request.partition_columns = std::move(clauses.partition_columns);
  for (auto& [key, value] : clauses.properties) {
    if (!request.properties.emplace(key, value).second) {
      return Status::InvalidArgument("table property " + key + " is given twice");
    }
  }
  request.description = std::move(clauses.comment);
  create.location = std::move(clauses.location);
  if (tokens.AcceptWords({"AS"})) {
    ASSIGN_OR_RETURN(create.query, QueryToEnd(tokens, "a query after AS"));
  }
  return tokens.ExpectEnd();
}

// ADD [COLUMN | COLUMNS] [(] column, ... [)]
Status AddColumns(TokenStream& tokens, AlterTable& alter) {
  alter.request.kind = Kind::kAddColumns;
  if (!tokens.AcceptWords({"COLUMNS"})) tokens.AcceptWords({"COLUMN"});
  const bool parenthesized = tokens.AcceptSymbol("(");
  do {
    ASSIGN_OR_RETURN(ColumnDefinition column, ParseColumnDefinition(tokens));
    if (alter.unsupported.ok()) alter.unsupported = column.unsupported;
    alter.request.columns.push_back(std::move(column.field));
  } while (tokens.AcceptSymbol(","));
  if (parenthesized) RETURN_IF_ERROR(tokens.ExpectSymbol(")"));
  return Status::OK();
}

Status AlterChange(TokenStream& tokens, AlterTable& alter) {
  commands::AlterTableRequest& request = alter.request;
  if (tokens.AcceptWords({"ADD", "CONSTRAINT"})) {
    request.kind = Kind::kAddConstraint;
    ASSIGN_OR_RETURN(request.constraint_name, tokens.Name("a constraint name"));
    RETURN_IF_ERROR(tokens.ExpectWords({"CHECK"}));
    ASSIGN_OR_RETURN(request.constraint_expr, ParenthesizedExpression(tokens, "a CHECK expression"));
  } else if (tokens.AcceptWords({"ADD"})) {
    RETURN_IF_ERROR(AddColumns(tokens, alter));
  } else if (tokens.AcceptWords({"SET", "TBLPROPERTIES"})) {
    request.kind = Kind::kSetProperties;
    ASSIGN_OR_RETURN(request.properties, PropertyList(tokens, true));
  } else if (tokens.AcceptWords({"UNSET", "TBLPROPERTIES"})) {
    request.kind = Kind::kUnsetProperties;
    request.if_exists = tokens.AcceptWords({"IF", "EXISTS"});
    ASSIGN_OR_RETURN(auto keys, PropertyList(tokens, false));
    for (const auto& [key, unused] : keys) request.property_keys.push_back(key);
  } else if (tokens.AcceptWords({"DROP", "CONSTRAINT"})) {
    request.kind = Kind::kDropConstraint;
    request.if_exists = tokens.AcceptWords({"IF", "EXISTS"});
    ASSIGN_OR_RETURN(request.constraint_name, tokens.Name("a constraint name"));
  } else if (tokens.AcceptWords({"ALTER"}) || tokens.AcceptWords({"CHANGE"})) {
    tokens.AcceptWords({"COLUMN"});
    ASSIGN_OR_RETURN(request.column, tokens.Name("a column name"));
    if (tokens.AcceptWords({"SET", "NOT", "NULL"})) {
      request.kind = Kind::kSetNotNull;
    } else if (tokens.AcceptWords({"DROP", "NOT", "NULL"})) {
      request.kind = Kind::kDropNotNull;
    } else {
      return tokens.Error("SET NOT NULL or DROP NOT NULL");
    }
  } else if (tokens.AcceptWords({"RENAME", "COLUMN"})) {
    request.kind = Kind::kRenameColumn;
    ASSIGN_OR_RETURN(request.column, tokens.Name("a column name"));
    RETURN_IF_ERROR(tokens.ExpectWords({"TO"}));
    ASSIGN_OR_RETURN(request.new_name, tokens.Name("the new column name"));
  } else if (tokens.AcceptWords({"DROP", "COLUMNS"}) || tokens.AcceptWords({"DROP", "COLUMN"})) {
    request.kind = Kind::kDropColumn;
    request.if_exists = tokens.AcceptWords({"IF", "EXISTS"});
    ASSIGN_OR_RETURN(std::vector<std::string> names, OptionallyParenthesizedNames(tokens, "a column name"));
    request.column = names[0];
    request.more_columns.assign(names.begin() + 1, names.end());
  } else {
    return tokens.Error(
        "ADD COLUMNS, SET/UNSET TBLPROPERTIES, ADD/DROP CONSTRAINT, ALTER COLUMN, RENAME COLUMN or DROP "
        "COLUMN");
  }
  return tokens.ExpectEnd();
}

// {name | delta_scan('path' [, version => n | timestamp => '...'])}
Result<std::variant<QualifiedName, DeltaScanArguments>> TableOrScan(TokenStream& tokens) {
  if (!tokens.PeekWords({"delta_scan"}) || !tokens.IsSymbolAt(tokens.position() + 1, "(")) {
    ASSIGN_OR_RETURN(QualifiedName name, tokens.QualifiedName("a table name or delta_scan(...)"));
    return std::variant<QualifiedName, DeltaScanArguments>(std::move(name));
  }
  tokens.Reset(tokens.position() + 2);
  DeltaScanArguments scan;
  ASSIGN_OR_RETURN(scan.path, tokens.StringLiteral("the table's path"));
  while (tokens.AcceptSymbol(",")) {
    if (tokens.AcceptWords({"version"})) {
      RETURN_IF_ERROR(tokens.ExpectSymbol("=>"));
      ASSIGN_OR_RETURN(scan.at.version, tokens.Integer("a version number"));
    } else if (tokens.AcceptWords({"timestamp"})) {
      RETURN_IF_ERROR(tokens.ExpectSymbol("=>"));
      ASSIGN_OR_RETURN(scan.at.timestamp, tokens.StringLiteral("a timestamp string"));
    } else {
      return tokens.Error("version => n or timestamp => '...'");
    }
  }
  RETURN_IF_ERROR(tokens.ExpectSymbol(")"));
  if (scan.at.version && scan.at.timestamp) {
    return Status::InvalidArgument("delta_scan: give version or timestamp, not both");
  }
  return std::variant<QualifiedName, DeltaScanArguments>(std::move(scan));
}

}  // namespace

Result<StatementBody> ParseCreateTable(TokenStream& tokens, bool or_replace) {
  CreateTable create;
  create.or_replace = or_replace;
  create.if_not_exists = tokens.AcceptWords({"IF", "NOT", "EXISTS"});
  ASSIGN_OR_RETURN(create.name, tokens.QualifiedName("a table name"));
  if (tokens.PeekSymbol("(")) {
    create.has_columns = true;
    ASSIGN_OR_RETURN(TableElements elements, ParseTableElements(tokens, /*pipeline_table=*/false));
    RETURN_IF_ERROR(elements.unsupported);
    create.request.schema.fields = std::move(elements.columns);
    for (const auto& [name, expr] : elements.checks)
      create.request.properties["delta.constraints." + name] = expr;
  }
  RETURN_IF_ERROR(CreateTableClauses(tokens, create));
  return StatementBody(std::move(create));
}

BodyOrDuckDb ParseDropTable(TokenStream& tokens) {
  DropTable drop;
  drop.if_exists = tokens.AcceptWords({"IF", "EXISTS"});
  auto name = tokens.QualifiedName("a table name");
  // Lists of names, CASCADE / RESTRICT: DuckDB's forms.
  if (!name.ok() || !tokens.AtEnd()) return std::optional<StatementBody>();
  drop.name = std::move(*name);
  return std::optional<StatementBody>(std::move(drop));
}

BodyOrDuckDb ParseAlterTable(TokenStream& tokens) {
  AlterTable alter;
  ASSIGN_OR_RETURN(alter.name, tokens.QualifiedName("a table name"));
  RETURN_IF_ERROR(AlterChange(tokens, alter));
  return std::optional<StatementBody>(std::move(alter));
}

BodyOrDuckDb ParseShowTables(TokenStream& tokens) {
  ShowTables show;
  if (tokens.AcceptWords({"IN"}) || tokens.AcceptWords({"FROM"})) {
    auto schema = tokens.Name("a schema name");
    if (!schema.ok()) return std::optional<StatementBody>();
    show.schema = AsciiLower(*schema);
  }
  if (!tokens.AtEnd()) return std::optional<StatementBody>();  // LIKE patterns etc.: DuckDB's
  return std::optional<StatementBody>(std::move(show));
}

Result<StatementBody> ParseShowTblProperties(TokenStream& tokens) {
  ShowTblProperties show;
  ASSIGN_OR_RETURN(show.name, tokens.QualifiedName("a table name"));
  ASSIGN_OR_RETURN(show.at, ParseTimeTravel(tokens));
  RETURN_IF_ERROR(tokens.ExpectEnd());
  return StatementBody(std::move(show));
}

BodyOrDuckDb ParseDescribe(TokenStream& tokens) {
  const size_t start = tokens.position();
  const bool history = tokens.PeekWords({"HISTORY"});
  if ((history || tokens.PeekWords({"DETAIL"})) && tokens.size() > start + 1) {
    tokens.Reset(start + 1);
    ASSIGN_OR_RETURN(auto table, TableOrScan(tokens));
    if (!history) {
      RETURN_IF_ERROR(tokens.ExpectEnd());
      return std::optional<StatementBody>(DescribeDetail{std::move(table)});
    }
    DescribeHistory describe{std::move(table), std::nullopt};
    if (tokens.AcceptWords({"LIMIT"})) {
      ASSIGN_OR_RETURN(describe.limit, tokens.Integer("a row count after LIMIT"));
      if (*describe.limit < 0) return Status::InvalidArgument("LIMIT must not be negative");
    }
    RETURN_IF_ERROR(tokens.ExpectEnd());
    return std::optional<StatementBody>(std::move(describe));
  }
  // DESCRIBE [TABLE] name [time travel]; anything else (DESCRIBE SELECT ...) is DuckDB's.
  tokens.AcceptWords({"TABLE"});
  DescribeTable describe;
  auto name = tokens.QualifiedName("a table name");
  if (!name.ok()) return std::optional<StatementBody>();
  describe.name = std::move(*name);
  auto at = ParseTimeTravel(tokens);
  if (!at.ok() || !tokens.AtEnd()) return std::optional<StatementBody>();
  describe.at = *at;
  return std::optional<StatementBody>(std::move(describe));
}

}  // namespace basin::sql::grammar
