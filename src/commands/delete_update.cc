// DELETE and UPDATE: both select the target rows a WHERE clause picks and apply one
// action to each, so they are one routine with the action (and, for UPDATE, the new
// values) as its parameter.
#include <map>

#include "commands/dml.h"
#include "commands/dml_internal.h"

namespace basin::commands {

namespace {

using engine::QuoteIdentifier;
using nlohmann::json;

struct RowRewrite {
  const char* operation;  // "DELETE" or "UPDATE"
  const char* action;     // its change-table action: "delete" or "update"
  std::string where;
  std::string target_alias;
  DmlMode mode = DmlMode::kTableDefault;
  const std::vector<Assignment>* assignments = nullptr;  // UPDATE only
};

// The new value of every column for UPDATE: the assigned expression, or the old value.
// (Generated columns are recomputed from these when the rows are stored.)
Result<std::string> UpdatedRowsSql(const dml::DmlTable& table, const std::vector<Assignment>& assignments,
                                   const std::string& alias, const std::string& from_where) {
  const delta::StructType& schema = table.target.schema;
  std::map<std::string, std::string> assigned;  // by schema name
  for (const auto& [column, expression] : assignments) {
    const delta::StructField* field = schema.Find(column);
    if (field == nullptr) {
      return Status::InvalidArgument("UPDATE " + table.where + ": no column named '" + column + "'");
    }
    if (!assigned.emplace(field->name, expression).second) {
      return Status::InvalidArgument("UPDATE " + table.where + ": column '" + field->name +
                                     "' is assigned more than once");
    }
  }
  std::string sql = "SELECT " + alias + "." + QuoteIdentifier(engine::kScanFileColumn) + ", " + alias + "." +
                    QuoteIdentifier(engine::kScanRowIndexColumn) + ", 'update' AS " +
                    QuoteIdentifier(dml::kActionColumn);
  for (const delta::StructField& field : schema.fields) {
    auto it = assigned.find(field.name);
    std::string value =
        it != assigned.end() ? "(" + it->second + ")" : alias + "." + QuoteIdentifier(field.name);
    sql += ", " + value + " AS " + QuoteIdentifier(field.name);
  }
  return sql + " " + from_where;
}

Result<CommandResult> RewriteRows(const CommandContext& ctx, std::shared_ptr<const delta::Snapshot> snapshot,
                                  const RowRewrite& request) {
  if (auto skipped = dml::AlreadyCommitted(ctx, *snapshot)) return *skipped;
  ASSIGN_OR_RETURN(dml::DmlTable table,
                   dml::OpenDmlTable(ctx, std::move(snapshot), request.mode, request.operation, true));
  engine::Connection& conn = *ctx.conn;
  const std::string alias =
      QuoteIdentifier(request.target_alias.empty() ? "__basin_target" : request.target_alias);

  engine::SkippingScope scope;
  if (!request.target_alias.empty()) scope.qualifiers.push_back(request.target_alias);
  json predicate = request.where.empty() ? json(nullptr) : dml::ExpressionTree(conn, request.where);
  // A WHERE DuckDB cannot parse on its own (null tree) reads every file; the query below
  // then reports what is wrong with it.
  dml::Candidates candidates = dml::SelectCandidates(*table.snapshot, std::move(predicate), std::move(scope));
  ctx.Report("scanning", 0, static_cast<int64_t>(candidates.files.size()));

  dml::TempTables temps(conn);
  ASSIGN_OR_RETURN(engine::ScanPlan scan, dml::ScanWithPositions(table, candidates.files, temps));
  const std::string from_where =
      "FROM (" + scan.sql + ") AS " + alias + (request.where.empty() ? "" : " WHERE (" + request.where + ")");
  std::string rows_sql;
  if (request.assignments != nullptr) {
    ASSIGN_OR_RETURN(rows_sql, UpdatedRowsSql(table, *request.assignments, alias, from_where));
  } else {
    rows_sql = "SELECT " + alias + "." + QuoteIdentifier(engine::kScanFileColumn) + ", " + alias + "." +
               QuoteIdentifier(engine::kScanRowIndexColumn) + ", " + engine::QuoteLiteral(request.action) +
               " AS " + QuoteIdentifier(dml::kActionColumn) + " " + from_where;
  }
  const std::string changes = temps.NewTable("changes");
  RETURN_IF_ERROR_CTX(conn.Execute("CREATE TEMP TABLE " + changes + " AS " + rows_sql),
                      std::string(request.operation) + " " + table.where);

  delta::Transaction txn(table.snapshot, ctx.txn_options);
  ASSIGN_OR_RETURN(dml::AppliedChanges applied,
                   dml::ApplyChanges(table, scan, changes, request.assignments != nullptr, temps, txn));
  json metrics = dml::FileMetrics(applied);
  if (request.assignments != nullptr) {
    metrics["numUpdatedRows"] = applied.updated_rows;
  } else {
    metrics["numDeletedRows"] = applied.deleted_rows;
  }
  json parameters = json::object();
  if (!request.where.empty()) parameters["predicate"] = request.where;
  return dml::CommitDml(table, candidates, txn, request.operation, std::move(parameters), std::move(metrics));
}

}  // namespace

Result<CommandResult> Delete(const CommandContext& ctx, std::shared_ptr<const delta::Snapshot> table,
                             const DeleteRequest& request) {
  return RewriteRows(
      ctx, std::move(table),
      RowRewrite{"DELETE", "delete", request.where, request.target_alias, request.mode, nullptr});
}

Result<CommandResult> Update(const CommandContext& ctx, std::shared_ptr<const delta::Snapshot> table,
                             const UpdateRequest& request) {
  if (request.assignments.empty()) return Status::InvalidArgument("UPDATE needs at least one SET assignment");
  return RewriteRows(ctx, std::move(table),
                     RowRewrite{"UPDATE", "update", request.where, request.target_alias, request.mode,
                                &request.assignments});
}

}  // namespace basin::commands
