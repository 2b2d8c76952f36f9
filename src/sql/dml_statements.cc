// DELETE, UPDATE and MERGE INTO statements on warehouse tables (sql/statements.h), handed
// to commands/dml.h. Statements naming a table the warehouse does not have are DuckDB's.

#include <algorithm>
#include <cctype>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "commands/dml.h"
#include "common/strings.h"
#include "sql/statements.h"

namespace basin::sql {

namespace {

using commands::MergeClause;
using Kind = MergeClause::Kind;

// The warehouse table a statement changes, with the names its expressions use for it.
struct Target {
  catalog::TableEntry entry;
  std::string alias;  // as given, else the table's own name (as `t` in t.col)
};

// name [[AS] alias]: nullopt when the name is not a warehouse table. `stops` are the
// keywords that may follow the name instead of an alias.
Result<std::optional<Target>> ParseTarget(SessionContext& session, TokenCursor& tokens,
                                          std::initializer_list<std::string_view> stops) {
  auto name = tokens.QualifiedName("a table name");
  if (!name.ok()) return std::optional<Target>();
  ASSIGN_OR_RETURN(std::optional<catalog::TableEntry> entry, session.LookupTable(*name));
  if (!entry) return std::optional<Target>();
  Target target{*entry, name->back()};
  if (tokens.AcceptKeywords({"AS"})) {
    ASSIGN_OR_RETURN(target.alias, tokens.Identifier("a table alias"));
  } else if (!tokens.AtEnd()) {
    bool stop = false;
    for (std::string_view word : stops) stop = stop || tokens.PeekKeywords({word});
    const Token& next = tokens.Peek();
    if (!stop && (next.kind == Token::Kind::kIdentifier || next.kind == Token::Kind::kQuotedIdentifier)) {
      ASSIGN_OR_RETURN(target.alias, tokens.Identifier("a table alias"));
    }
  }
  return std::optional<Target>(std::move(target));
}

// Keeps the resolved pieces of a statement (and the temporary tables behind them) alive
// until the command has run.
class Resolver {
 public:
  explicit Resolver(SessionContext& session) : session_(session) {}
  Result<std::string> Resolve(const std::string& sql) {
    ASSIGN_OR_RETURN(std::unique_ptr<ResolvedQuery> resolved, session_.ResolveQuery(sql));
    std::string out = resolved->sql;
    kept_.push_back(std::move(resolved));
    return out;
  }
  Status ResolveAll(std::vector<std::string>& texts) {
    for (std::string& text : texts) {
      ASSIGN_OR_RETURN(text, Resolve(text));
    }
    return Status::OK();
  }

 private:
  SessionContext& session_;
  std::vector<std::unique_ptr<ResolvedQuery>> kept_;
};

// SET basin.dml_mode = deletion_vectors | copy_on_write overrides the table's choice.
Result<commands::DmlMode> ModeSetting(const SessionContext& session) {
  std::optional<std::string> value = session.Setting("dml_mode");
  if (!value) return commands::DmlMode::kTableDefault;
  std::string mode = AsciiLower(*value);
  if (mode == "deletion_vectors" || mode == "dv") return commands::DmlMode::kDeletionVectors;
  if (mode == "copy_on_write" || mode == "cow") return commands::DmlMode::kCopyOnWrite;
  if (mode == "default" || mode.empty()) return commands::DmlMode::kTableDefault;
  return Status::InvalidArgument("basin.dml_mode must be deletion_vectors, copy_on_write or default, not '" +
                                 *value + "'");
}

// A column being set, as `c` or `alias.c`: the column's name.
Result<std::string> AssignedColumn(TokenCursor& tokens) {
  ASSIGN_OR_RETURN(std::vector<std::string> parts, tokens.QualifiedName("a column name"));
  if (parts.size() > 2) return tokens.Error("a column name");
  return parts.back();
}

// c = expr [, c = expr]*, each expression ending at a top-level ',' or a `stop` keyword.
Result<std::vector<commands::Assignment>> Assignments(TokenCursor& tokens, std::string_view stop) {
  std::vector<commands::Assignment> out;
  do {
    ASSIGN_OR_RETURN(std::string column, AssignedColumn(tokens));
    RETURN_IF_ERROR(tokens.ExpectSymbol("="));
    ASSIGN_OR_RETURN(std::string value, tokens.TextUntil("a value", {stop}, true));
    out.emplace_back(std::move(column), std::move(value));
  } while (tokens.AcceptSymbol(","));
  return out;
}

// The SQL result: the rows the statement affected, by kind, as Delta's SQL commands name them.
StatementResult DmlResult(const std::string& statement, commands::CommandResult result, int64_t updated,
                          int64_t deleted, int64_t inserted) {
  result.metrics["num_affected_rows"] = updated + deleted + inserted;
  result.metrics["num_updated_rows"] = updated;
  result.metrics["num_deleted_rows"] = deleted;
  result.metrics["num_inserted_rows"] = inserted;
  return CommandResultRow(statement, result,
                          {"num_affected_rows", "num_updated_rows", "num_deleted_rows", "num_inserted_rows"});
}

int64_t Metric(const commands::CommandResult& result, const char* name) {
  auto it = result.metrics.find(name);
  return it != result.metrics.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

// The optional `WHERE condition` that ends DELETE and UPDATE, with the table names in it
// resolved; empty when there is none.
Result<std::string> TrailingWhere(TokenCursor& tokens, Resolver& resolver) {
  std::string where;
  if (tokens.AcceptKeywords({"WHERE"})) {
    ASSIGN_OR_RETURN(where, tokens.TextUntil("a condition", {"RETURNING"}));
  }
  RETURN_IF_ERROR(tokens.ExpectEnd());
  if (where.empty()) return where;
  return resolver.Resolve(where);
}

Result<std::optional<StatementResult>> RunDelete(SessionContext& session, const std::string& statement,
                                                 TokenCursor& tokens) {
  ASSIGN_OR_RETURN(std::optional<Target> target,
                   ParseTarget(session, tokens, {"WHERE", "USING", "RETURNING"}));
  if (!target) return std::optional<StatementResult>();
  commands::DeleteRequest request;
  request.target_alias = target->alias;
  Resolver resolver(session);
  ASSIGN_OR_RETURN(request.where, TrailingWhere(tokens, resolver));
  ASSIGN_OR_RETURN(request.mode, ModeSetting(session));
  ASSIGN_OR_RETURN(auto table, session.LoadTable(target->entry.location));
  ASSIGN_OR_RETURN(commands::CommandResult result,
                   commands::Delete(session.MakeCommandContext(), table, request));
  int64_t deleted = Metric(result, "numDeletedRows");
  return std::optional<StatementResult>(DmlResult(statement, std::move(result), 0, deleted, 0));
}

Result<std::optional<StatementResult>> RunUpdate(SessionContext& session, const std::string& statement,
                                                 TokenCursor& tokens) {
  ASSIGN_OR_RETURN(std::optional<Target> target, ParseTarget(session, tokens, {"SET"}));
  if (!target) return std::optional<StatementResult>();
  commands::UpdateRequest request;
  request.target_alias = target->alias;
  RETURN_IF_ERROR(tokens.ExpectKeywords({"SET"}));
  ASSIGN_OR_RETURN(request.assignments, Assignments(tokens, "WHERE"));
  Resolver resolver(session);
  ASSIGN_OR_RETURN(request.where, TrailingWhere(tokens, resolver));
  ASSIGN_OR_RETURN(request.mode, ModeSetting(session));
  for (auto& [column, value] : request.assignments) {
    ASSIGN_OR_RETURN(value, resolver.Resolve(value));
  }
  ASSIGN_OR_RETURN(auto table, session.LoadTable(target->entry.location));
  ASSIGN_OR_RETURN(commands::CommandResult result,
                   commands::Update(session.MakeCommandContext(), table, request));
  int64_t updated = Metric(result, "numUpdatedRows");
  return std::optional<StatementResult>(DmlResult(statement, std::move(result), updated, 0, 0));
}

// USING {name [VERSION AS OF n | TIMESTAMP AS OF '...'] | function(...) | (query)} [[AS] alias]:
// the source as a FROM item, and its default alias (a plain name's own name).
Result<std::pair<std::string, std::string>> ParseSource(TokenCursor& tokens) {
  const size_t start = tokens.position();
  std::string alias;
  if (tokens.AcceptSymbol("(")) {
    RETURN_IF_ERROR(tokens.TextUntil("a source query", {}));
    RETURN_IF_ERROR(tokens.ExpectSymbol(")"));
  } else {
    ASSIGN_OR_RETURN(std::vector<std::string> name, tokens.QualifiedName("a source table"));
    if (tokens.AcceptSymbol("(")) {
      if (!tokens.PeekSymbol(")")) RETURN_IF_ERROR(tokens.TextUntil("arguments", {}));
      RETURN_IF_ERROR(tokens.ExpectSymbol(")"));
    } else {
      alias = name.back();
      if (tokens.AcceptKeywords({"VERSION", "AS", "OF"})) {
        RETURN_IF_ERROR(tokens.Integer("a version number"));
      } else if (tokens.AcceptKeywords({"TIMESTAMP", "AS", "OF"})) {
        RETURN_IF_ERROR(tokens.StringLiteral("a timestamp"));
      }
    }
  }
  std::string source = tokens.TextBetween(start, tokens.position());
  if (tokens.AcceptKeywords({"AS"})) {
    ASSIGN_OR_RETURN(alias, tokens.Identifier("a source alias"));
  } else if (!tokens.PeekKeywords({"ON"})) {
    ASSIGN_OR_RETURN(alias, tokens.Identifier("a source alias or ON"));
  }
  return std::make_pair(std::move(source), std::move(alias));
}

// Which rows a WHEN clause is about.
enum class When { kMatched, kNotMatched, kBySource };

struct ParsedClause {
  When when = When::kMatched;
  std::optional<MergeClause> clause;  // nullopt for DuckDB's DO NOTHING
  std::string condition;              // the DO NOTHING's condition
};

// One WHEN clause (after WHEN).
Result<ParsedClause> ParseClause(TokenCursor& tokens, const std::vector<std::string>& columns) {
  ParsedClause parsed;
  MergeClause clause;
  When& when = parsed.when;
  if (tokens.AcceptKeywords({"MATCHED"})) {
    when = When::kMatched;
  } else {
    RETURN_IF_ERROR(tokens.ExpectKeywords({"NOT", "MATCHED"}));
    when = tokens.AcceptKeywords({"BY", "SOURCE"}) ? When::kBySource : When::kNotMatched;
    if (when == When::kNotMatched) tokens.AcceptKeywords({"BY", "TARGET"});
  }
  if (tokens.AcceptKeywords({"AND"})) {
    ASSIGN_OR_RETURN(clause.condition, tokens.TextUntil("a condition", {"THEN"}));
  }
  RETURN_IF_ERROR(tokens.ExpectKeywords({"THEN"}));
  if (tokens.AcceptKeywords({"DO", "NOTHING"})) {
    parsed.condition = clause.condition.empty() ? "true" : clause.condition;
    return parsed;
  }
  if (when == When::kNotMatched) {
    RETURN_IF_ERROR(tokens.ExpectKeywords({"INSERT"}));
    clause.kind = Kind::kNotMatchedInsert;
    if (tokens.AcceptSymbol("*") || tokens.AtEnd() || tokens.PeekKeywords({"WHEN"})) {
      clause.star = true;
      parsed.clause = std::move(clause);
      return parsed;
    }
    if (tokens.AcceptSymbol("(")) {
      do {
        ASSIGN_OR_RETURN(std::string column, AssignedColumn(tokens));
        clause.insert_columns.push_back(std::move(column));
      } while (tokens.AcceptSymbol(","));
      RETURN_IF_ERROR(tokens.ExpectSymbol(")"));
    } else {
      clause.insert_columns = columns;  // INSERT VALUES (...): every column, in order
    }
    RETURN_IF_ERROR(tokens.ExpectKeywords({"VALUES"}));
    RETURN_IF_ERROR(tokens.ExpectSymbol("("));
    do {
      ASSIGN_OR_RETURN(std::string value, tokens.TextUntil("a value", {}, true));
      clause.insert_values.push_back(std::move(value));
    } while (tokens.AcceptSymbol(","));
    RETURN_IF_ERROR(tokens.ExpectSymbol(")"));
    parsed.clause = std::move(clause);
    return parsed;
  }
  const bool by_source = when == When::kBySource;
  if (tokens.AcceptKeywords({"DELETE"})) {
    clause.kind = by_source ? Kind::kNotMatchedBySourceDelete : Kind::kMatchedDelete;
    parsed.clause = std::move(clause);
    return parsed;
  }
  RETURN_IF_ERROR(tokens.ExpectKeywords({"UPDATE"}));
  clause.kind = by_source ? Kind::kNotMatchedBySourceUpdate : Kind::kMatchedUpdate;
  if (!tokens.AcceptKeywords({"SET"})) {
    clause.star = true;  // DuckDB's bare UPDATE: every column from the source
  } else if (tokens.AcceptSymbol("*")) {
    clause.star = true;
  } else {
    ASSIGN_OR_RETURN(clause.assignments, Assignments(tokens, "WHEN"));
  }
  parsed.clause = std::move(clause);
  return parsed;
}

Result<std::optional<StatementResult>> RunMerge(SessionContext& session, const std::string& statement,
                                                TokenCursor& tokens) {
  commands::MergeRequest request;
  if (tokens.AcceptKeywords({"WITH", "SCHEMA", "EVOLUTION"})) request.schema_evolution = true;
  if (!tokens.AcceptKeywords({"INTO"})) return std::optional<StatementResult>();
  ASSIGN_OR_RETURN(std::optional<Target> target, ParseTarget(session, tokens, {"USING"}));
  if (!target) {
    if (request.schema_evolution)
      return Status::InvalidArgument("MERGE WITH SCHEMA EVOLUTION needs a Delta table");
    return std::optional<StatementResult>();
  }
  request.target_alias = target->alias;
  ASSIGN_OR_RETURN(auto table, session.LoadTable(target->entry.location));
  std::vector<std::string> columns;
  for (const delta::StructField& field : table->schema.fields) columns.push_back(field.name);

  RETURN_IF_ERROR(tokens.ExpectKeywords({"USING"}));
  ASSIGN_OR_RETURN(auto source, ParseSource(tokens));
  request.source_alias = source.second;
  RETURN_IF_ERROR(tokens.ExpectKeywords({"ON"}));
  ASSIGN_OR_RETURN(request.on, tokens.TextUntil("a merge condition", {"WHEN"}));
  // DO NOTHING clauses take their rows away from the later clauses about the same rows.
  std::map<When, std::vector<std::string>> skipped;
  while (tokens.AcceptKeywords({"WHEN"})) {
    ASSIGN_OR_RETURN(ParsedClause parsed, ParseClause(tokens, columns));
    std::vector<std::string>& skips = skipped[parsed.when];
    if (!parsed.clause) {
      skips.push_back(parsed.condition);
      continue;
    }
    MergeClause& clause = *parsed.clause;
    for (const std::string& condition : skips) {
      std::string guard = "NOT COALESCE((" + condition + "), false)";
      clause.condition = clause.condition.empty() ? guard : "(" + clause.condition + ") AND " + guard;
    }
    request.clauses.push_back(std::move(clause));
  }
  if (request.clauses.empty() && skipped.empty()) return tokens.Error("WHEN");
  RETURN_IF_ERROR(tokens.ExpectEnd());
  ASSIGN_OR_RETURN(request.mode, ModeSetting(session));

  Resolver resolver(session);
  ASSIGN_OR_RETURN(request.source_sql, resolver.Resolve("SELECT * FROM " + source.first));
  ASSIGN_OR_RETURN(request.on, resolver.Resolve(request.on));
  for (MergeClause& clause : request.clauses) {
    if (!clause.condition.empty()) {
      ASSIGN_OR_RETURN(clause.condition, resolver.Resolve(clause.condition));
    }
    for (auto& [column, value] : clause.assignments) {
      ASSIGN_OR_RETURN(value, resolver.Resolve(value));
    }
    RETURN_IF_ERROR(resolver.ResolveAll(clause.insert_values));
  }
  if (request.clauses.empty()) {
    // Only DO NOTHING clauses: nothing to change, and nothing to commit.
    commands::CommandResult nothing;
    nothing.commit.version = table->version;
    return std::optional<StatementResult>(DmlResult(statement, std::move(nothing), 0, 0, 0));
  }
  ASSIGN_OR_RETURN(commands::CommandResult result,
                   commands::Merge(session.MakeCommandContext(), table, request));
  int64_t updated = Metric(result, "numTargetRowsUpdated");
  int64_t deleted = Metric(result, "numTargetRowsDeleted");
  int64_t inserted = Metric(result, "numTargetRowsInserted");
  return std::optional<StatementResult>(DmlResult(statement, std::move(result), updated, deleted, inserted));
}

}  // namespace

Result<std::optional<StatementResult>> TryDmlStatement(SessionContext& session, const std::string& statement,
                                                       TokenCursor& tokens) {
  const size_t start = tokens.position();
  Result<std::optional<StatementResult>> result = std::optional<StatementResult>();
  if (tokens.AcceptKeywords({"DELETE", "FROM"})) {
    result = RunDelete(session, statement, tokens);
  } else if (tokens.AcceptKeywords({"UPDATE"})) {
    result = RunUpdate(session, statement, tokens);
  } else if (tokens.AcceptKeywords({"MERGE"})) {
    result = RunMerge(session, statement, tokens);
  }
  if (result.ok() && !result->has_value()) tokens.Reset(start);
  return result;
}

}  // namespace basin::sql
