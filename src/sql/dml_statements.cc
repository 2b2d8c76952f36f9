// DELETE, UPDATE and MERGE INTO statements on warehouse tables (sql/statements.h), read
// from DuckDB's syntax tree (engine/sql_text.h) and handed to commands/dml.h. Statements
// naming a table the warehouse does not have are DuckDB's.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "commands/dml.h"
#include "common/strings.h"
#include "engine/duckdb.h"
#include "sql/statements.h"

namespace basin::sql {

namespace {

using commands::MergeClause;
using engine::SqlMergeAction;
using Kind = MergeClause::Kind;

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

std::vector<commands::Assignment> Assignments(const std::vector<engine::SqlAssignment>& list) {
  std::vector<commands::Assignment> out;
  for (const engine::SqlAssignment& a : list) out.emplace_back(a.column, a.expression);
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

// The names a statement's expressions use for its target: the alias, else the table's name.
std::string TargetAlias(const engine::SqlTarget& target) {
  return target.alias.empty() ? target.name.table : target.alias;
}

// The MERGE clause kind of a DuckDB action.
Result<Kind> ClauseKind(const SqlMergeAction& action) {
  using When = SqlMergeAction::When;
  switch (action.kind) {
    case SqlMergeAction::Kind::kUpdate:
      if (action.when == When::kMatched) return Kind::kMatchedUpdate;
      if (action.when == When::kNotMatchedBySource) return Kind::kNotMatchedBySourceUpdate;
      break;
    case SqlMergeAction::Kind::kDelete:
      if (action.when == When::kMatched) return Kind::kMatchedDelete;
      if (action.when == When::kNotMatchedBySource) return Kind::kNotMatchedBySourceDelete;
      break;
    case SqlMergeAction::Kind::kInsert:
      if (action.when == When::kNotMatchedByTarget) return Kind::kNotMatchedInsert;
      break;
    case SqlMergeAction::Kind::kError:
      return Status::NotImplemented("MERGE ... THEN ERROR is not supported on Delta tables");
    case SqlMergeAction::Kind::kDoNothing:
      break;
  }
  return Status::InvalidArgument(
      "MERGE: this WHEN clause cannot " +
      std::string(action.kind == SqlMergeAction::Kind::kInsert ? "INSERT" : "change rows") + " here");
}

// MERGE's USING (cols): target.col = source.col for each.
Result<std::string> UsingCondition(const engine::SqlMerge& merge, const std::string& target_alias,
                                   const std::string& source_alias) {
  if (source_alias.empty()) {
    return Status::InvalidArgument("MERGE ... USING (columns) needs a name for the source: give it an alias");
  }
  std::string on;
  for (const std::string& column : merge.using_columns) {
    const std::string quoted = engine::QuoteIdentifier(column);
    on += (on.empty() ? "" : " AND ") + engine::QuoteIdentifier(target_alias) + "." + quoted + " = " +
          engine::QuoteIdentifier(source_alias) + "." + quoted;
  }
  return on;
}

}  // namespace

Result<std::optional<catalog::TableEntry>> LookupTarget(SessionContext& session,
                                                        const engine::SqlTableName& name) {
  if (name.table.empty()) return std::optional<catalog::TableEntry>();
  return session.ResolveTable(name.Parts());
}

namespace {

// The warehouse table a DML statement changes (nullopt: DuckDB's statement), refusing what
// DuckDB's DML may hold that Basin does not run on Delta tables, and users who may not
// both read and change it (which rows change depends on what the table holds).
Result<std::optional<catalog::TableEntry>> DmlTarget(SessionContext& session, const std::string& what,
                                                     const engine::SqlTarget& target, const std::string& ctes,
                                                     const std::vector<std::string>& returning) {
  ASSIGN_OR_RETURN(std::optional<catalog::TableEntry> entry, LookupTarget(session, target.name));
  if (!entry) return entry;
  RETURN_IF_ERROR(session.governor().RequireOnTable(security::Privilege::kModify, entry->name));
  RETURN_IF_ERROR(session.governor().RequireOnTable(security::Privilege::kSelect, entry->name));
  const std::string table = entry->name.ToString();
  if (!ctes.empty()) {
    return Status::NotImplemented("WITH ... " + what + " is not supported on table " + table +
                                  "; put the query in a subquery");
  }
  if (!returning.empty())
    return Status::NotImplemented(what + " ... RETURNING is not supported on table " + table);
  return entry;
}

}  // namespace

StatementOutcome RunDelete(SessionContext& session, const std::string& statement,
                           const grammar::Delete& parsed) {
  const engine::SqlDelete& del = parsed.del;
  ASSIGN_OR_RETURN(std::optional<catalog::TableEntry> entry,
                   DmlTarget(session, "DELETE", del.target, del.ctes, del.returning));
  if (!entry) return std::optional<StatementResult>();
  const std::string table = entry->name.ToString();
  if (!del.using_tables.empty()) {
    return Status::NotImplemented("DELETE ... USING is not supported on table " + table + "; use MERGE INTO");
  }
  commands::DeleteRequest request;
  request.target_alias = TargetAlias(del.target);
  request.where = del.where;
  ASSIGN_OR_RETURN(request.mode, ModeSetting(session));
  ASSIGN_OR_RETURN(auto snapshot, session.LoadTable(entry->location));
  ASSIGN_OR_RETURN(commands::CommandResult result,
                   commands::Delete(session.MakeCommandContext(), snapshot, request));
  int64_t deleted = Metric(result, "numDeletedRows");
  return std::optional<StatementResult>(DmlResult(statement, std::move(result), 0, deleted, 0));
}

StatementOutcome RunUpdate(SessionContext& session, const std::string& statement,
                           const grammar::Update& parsed) {
  const engine::SqlUpdate& update = parsed.update;
  ASSIGN_OR_RETURN(std::optional<catalog::TableEntry> entry,
                   DmlTarget(session, "UPDATE", update.target, update.ctes, update.returning));
  if (!entry) return std::optional<StatementResult>();
  const std::string table = entry->name.ToString();
  if (!update.from.empty()) {
    return Status::NotImplemented("UPDATE ... FROM is not supported on table " + table + "; use MERGE INTO");
  }
  commands::UpdateRequest request;
  request.target_alias = TargetAlias(update.target);
  request.assignments = Assignments(update.assignments);
  request.where = update.where;
  ASSIGN_OR_RETURN(request.mode, ModeSetting(session));
  ASSIGN_OR_RETURN(auto snapshot, session.LoadTable(entry->location));
  ASSIGN_OR_RETURN(commands::CommandResult result,
                   commands::Update(session.MakeCommandContext(), snapshot, request));
  int64_t updated = Metric(result, "numUpdatedRows");
  return std::optional<StatementResult>(DmlResult(statement, std::move(result), updated, 0, 0));
}

StatementOutcome RunMerge(SessionContext& session, const std::string& statement,
                          const grammar::Merge& parsed) {
  const engine::SqlMerge& merge = parsed.merge;
  ASSIGN_OR_RETURN(std::optional<catalog::TableEntry> entry,
                   DmlTarget(session, "MERGE", merge.target, merge.ctes, merge.returning));
  if (!entry) {
    if (parsed.schema_evolution) {
      return Status::InvalidArgument("MERGE WITH SCHEMA EVOLUTION needs a Delta table");
    }
    return std::optional<StatementResult>();
  }
  commands::MergeRequest request;
  request.schema_evolution = parsed.schema_evolution;
  request.target_alias = TargetAlias(merge.target);
  request.source_alias = merge.source_alias;
  if (request.source_alias.empty() && merge.source_table) request.source_alias = merge.source_table->table;
  request.on = merge.on;
  if (!merge.using_columns.empty()) {
    ASSIGN_OR_RETURN(request.on, UsingCondition(merge, request.target_alias, request.source_alias));
  }
  ASSIGN_OR_RETURN(auto snapshot, session.LoadTable(entry->location));
  std::vector<std::string> columns;
  for (const delta::StructField& field : snapshot->schema.fields) columns.push_back(field.name);

  // In DuckDB's order (engine::SqlMerge); a DO NOTHING clause takes its rows away from the
  // later clauses about the same rows.
  std::map<SqlMergeAction::When, std::vector<std::string>> skipped;
  for (const SqlMergeAction& action : merge.actions) {
    std::vector<std::string>& skips = skipped[action.when];
    if (action.kind == SqlMergeAction::Kind::kDoNothing) {
      skips.push_back(action.condition.empty() ? "true" : action.condition);
      continue;
    }
    MergeClause clause;
    ASSIGN_OR_RETURN(clause.kind, ClauseKind(action));
    if (action.default_values) {
      return Status::NotImplemented("MERGE ... INSERT DEFAULT VALUES is not supported on Delta tables");
    }
    clause.condition = action.condition;
    clause.star = action.update_star || action.insert_star;
    clause.assignments = Assignments(action.assignments);
    clause.insert_values = action.insert_values;
    if (!clause.insert_values.empty()) {
      // INSERT VALUES (...) without columns: every column, in order.
      clause.insert_columns = action.insert_columns.empty() ? columns : action.insert_columns;
    }
    for (const std::string& condition : skips) {
      std::string guard = "NOT COALESCE((" + condition + "), false)";
      clause.condition = clause.condition.empty() ? guard : "(" + clause.condition + ") AND " + guard;
    }
    request.clauses.push_back(std::move(clause));
  }
  ASSIGN_OR_RETURN(request.mode, ModeSetting(session));
  request.source_sql = "SELECT * FROM " + merge.source;
  if (request.clauses.empty()) {
    // Only DO NOTHING clauses: nothing to change, and nothing to commit.
    commands::CommandResult nothing;
    nothing.commit.version = snapshot->version;
    return std::optional<StatementResult>(DmlResult(statement, std::move(nothing), 0, 0, 0));
  }
  ASSIGN_OR_RETURN(commands::CommandResult result,
                   commands::Merge(session.MakeCommandContext(), snapshot, request));
  int64_t updated = Metric(result, "numTargetRowsUpdated");
  int64_t deleted = Metric(result, "numTargetRowsDeleted");
  int64_t inserted = Metric(result, "numTargetRowsInserted");
  return std::optional<StatementResult>(DmlResult(statement, std::move(result), updated, deleted, inserted));
}

}  // namespace basin::sql
