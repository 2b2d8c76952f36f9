// INSERT INTO, INSERT OVERWRITE and INSERT INTO ... REPLACE WHERE on warehouse tables
// (TryWriteStatement in sql/statements.h), handed to commands/write.h. INSERTs into a
// table the warehouse does not have are DuckDB's.
#include <algorithm>
#include <cctype>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands/write.h"
#include "engine/duckdb.h"
#include "sql/statements.h"

namespace basin::sql {

namespace {

using engine::QuoteIdentifier;

// PARTITION (p = value, q): a partition column, with the value it is given (static) or not
// (dynamic).
struct PartitionSpec {
  std::string column;
  std::optional<std::string> value;  // SQL text
};

struct InsertStatement {
  bool schema_evolution = false;
  bool overwrite = false;
  catalog::TableEntry table;
  std::vector<PartitionSpec> partitions;
  std::optional<std::vector<std::string>> columns;
  bool by_name = false;
  std::optional<std::string> replace_where;
  std::string query;
};

bool AtQueryStart(const TokenCursor& tokens, size_t ahead = 0) {
  for (std::string_view word : {"SELECT", "WITH", "VALUES", "FROM", "TABLE"}) {
    const Token& t = tokens.Peek(ahead);
    if (t.kind == Token::Kind::kIdentifier && t.text.size() == word.size() &&
        std::equal(word.begin(), word.end(), t.text.begin(),
                   [](char a, char b) { return std::toupper(static_cast<unsigned char>(b)) == a; })) {
      return true;
    }
  }
  return false;
}

Result<std::vector<PartitionSpec>> ParsePartitionClause(TokenCursor& tokens) {
  std::vector<PartitionSpec> out;
  RETURN_IF_ERROR(tokens.ExpectSymbol("("));
  do {
    PartitionSpec spec;
    ASSIGN_OR_RETURN(spec.column, tokens.Identifier("a partition column"));
    if (tokens.AcceptSymbol("=")) {
      ASSIGN_OR_RETURN(spec.value, tokens.TextUntil("a partition value", {}, /*stop_at_comma=*/true));
    }
    out.push_back(std::move(spec));
  } while (tokens.AcceptSymbol(","));
  RETURN_IF_ERROR(tokens.ExpectSymbol(")"));
  return out;
}

// Parses the statement after its table name was found in the warehouse.
Status ParseRest(TokenCursor& tokens, InsertStatement& insert) {
  if (tokens.AcceptKeywords({"PARTITION"})) {
    ASSIGN_OR_RETURN(insert.partitions, ParsePartitionClause(tokens));
  }
  if (tokens.PeekSymbol("(") && !AtQueryStart(tokens, 1)) {
    std::vector<std::string> columns;
    tokens.AcceptSymbol("(");
    do {
      ASSIGN_OR_RETURN(std::string column, tokens.Identifier("a column name"));
      columns.push_back(std::move(column));
    } while (tokens.AcceptSymbol(","));
    RETURN_IF_ERROR(tokens.ExpectSymbol(")"));
    insert.columns = std::move(columns);
  }
  if (tokens.AcceptKeywords({"BY", "NAME"})) insert.by_name = true;
  if (tokens.AcceptKeywords({"BY", "POSITION"})) insert.by_name = false;
  if (!insert.overwrite && tokens.AcceptKeywords({"REPLACE", "WHERE"})) {
    ASSIGN_OR_RETURN(insert.replace_where,
                     tokens.TextUntil("a predicate", {"SELECT", "WITH", "VALUES", "FROM", "TABLE"}));
  }
  if (tokens.AtEnd()) return tokens.Error("a query or VALUES");
  if (!AtQueryStart(tokens) && !tokens.PeekSymbol("(")) return tokens.Error("a query or VALUES");
  insert.query = tokens.Rest();
  if (insert.by_name && insert.columns) {
    return Status::InvalidArgument("INSERT ... BY NAME cannot also name its columns");
  }
  return Status::OK();
}

// The write a parsed INSERT asks for. Static partition values become columns added to the
// query (and, for an overwrite, the predicate of the rows replaced).
Result<commands::WriteRequest> BuildRequest(SessionContext& session, const InsertStatement& insert,
                                            const delta::Snapshot& table, std::string resolved_query) {
  commands::WriteRequest request;
  request.shape.schema_evolution = insert.schema_evolution;
  request.shape.by_name = insert.by_name;
  request.shape.columns = insert.columns;
  std::string static_columns, static_predicate;
  bool dynamic = false;
  std::vector<std::string> static_names;
  for (const PartitionSpec& spec : insert.partitions) {
    const delta::StructField* field = table.schema.Find(spec.column);
    const bool is_partition =
        field != nullptr &&
        std::any_of(table.metadata.partition_columns.begin(), table.metadata.partition_columns.end(),
                    [&](const std::string& p) { return table.schema.Find(p) == field; });
    if (!is_partition) {
      return Status::InvalidArgument("table " + table.table_root + ": " + spec.column +
                                     " is not a partition column of the table");
    }
    if (!spec.value) {
      dynamic = true;
      continue;
    }
    static_columns += ", " + *spec.value + " AS " + QuoteIdentifier(field->name);
    static_predicate += (static_predicate.empty() ? "" : " AND ") + QuoteIdentifier(field->name) +
                        " IS NOT DISTINCT FROM (" + *spec.value + ")";
    static_names.push_back(field->name);
  }
  request.source_sql = resolved_query;
  if (!static_names.empty()) {
    request.source_sql = "SELECT *" + static_columns + " FROM (" + resolved_query + "\n) AS __basin_query";
    if (!insert.by_name) {
      // By position, the query gives the other columns in table order (or those it names).
      std::vector<std::string> columns;
      if (insert.columns) {
        columns = *insert.columns;
      } else {
        for (const delta::StructField& f : table.schema.fields) {
          bool is_static = std::find(static_names.begin(), static_names.end(), f.name) != static_names.end();
          if (!is_static && !f.metadata.contains("delta.generationExpression")) columns.push_back(f.name);
        }
      }
      columns.insert(columns.end(), static_names.begin(), static_names.end());
      request.shape.columns = std::move(columns);
    }
  }

  if (insert.replace_where) {
    request.mode = commands::WriteMode::kReplaceWhere;
    request.replace_where = *insert.replace_where;
  } else if (insert.overwrite) {
    std::optional<std::string> mode = session.Setting("partition_overwrite_mode");
    std::string mode_lower = mode.value_or("static");
    std::transform(mode_lower.begin(), mode_lower.end(), mode_lower.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    if (mode_lower != "static" && mode_lower != "dynamic") {
      return Status::InvalidArgument("basin.partition_overwrite_mode must be 'static' or 'dynamic', got '" +
                                     *mode + "'");
    }
    if (dynamic ||
        (mode_lower == "dynamic" && static_names.size() < table.metadata.partition_columns.size())) {
      request.mode = commands::WriteMode::kDynamicPartitionOverwrite;
    } else if (!static_names.empty()) {
      request.mode = commands::WriteMode::kReplaceWhere;
      request.replace_where = static_predicate;
    } else {
      request.mode = commands::WriteMode::kOverwrite;
    }
  }
  return request;
}

}  // namespace

Result<std::optional<StatementResult>> TryWriteStatement(SessionContext& session,
                                                         const std::string& statement, TokenCursor& tokens) {
  using Outcome = std::optional<StatementResult>;
  if (!tokens.AcceptKeywords({"INSERT"})) return Outcome();
  InsertStatement insert;
  if (tokens.AcceptKeywords({"WITH", "SCHEMA", "EVOLUTION"})) insert.schema_evolution = true;
  const bool or_action = tokens.PeekKeywords({"OR"});
  if (or_action) {
    tokens.AcceptKeywords({"OR"});
    tokens.Reset(tokens.position() + 1);  // REPLACE / IGNORE
  }
  if (tokens.AcceptKeywords({"OVERWRITE"})) {
    insert.overwrite = true;
    tokens.AcceptKeywords({"TABLE"});
  } else if (tokens.AcceptKeywords({"INTO"})) {
    tokens.AcceptKeywords({"TABLE"});
  } else {
    return Outcome();
  }
  auto name = tokens.QualifiedName("a table name");
  if (!name.ok()) return Outcome();
  ASSIGN_OR_RETURN(std::optional<catalog::TableEntry> entry, session.LookupTable(*name));
  if (!entry) return Outcome();
  insert.table = *entry;
  if (or_action) {
    return Status::NotImplemented("INSERT OR REPLACE / OR IGNORE is not supported on table " +
                                  entry->name.ToString() + "; use MERGE INTO");
  }
  RETURN_IF_ERROR(ParseRest(tokens, insert));

  ASSIGN_OR_RETURN(std::unique_ptr<ResolvedQuery> resolved, session.ResolveQuery(insert.query));
  ASSIGN_OR_RETURN(auto table, session.LoadTable(entry->location));
  ASSIGN_OR_RETURN(commands::WriteRequest request, BuildRequest(session, insert, *table, resolved->sql));
  auto written = commands::Write(session.MakeCommandContext(), table, request);
  if (!written.ok()) return written.status().WithContext(entry->name.ToString());
  commands::CommandResult result = std::move(*written);
  const int64_t inserted = result.metrics.value("numOutputRows", int64_t{0});
  result.metrics["num_affected_rows"] = inserted;
  result.metrics["num_inserted_rows"] = inserted;
  StatementResult out = CommandResultRow(statement, result, {"num_affected_rows", "num_inserted_rows"});
  out.files_read = resolved->files_read;
  out.files_total = resolved->files_total;
  return Outcome(std::move(out));
}

}  // namespace basin::sql
