// DELETE and UPDATE: both select the target rows a WHERE clause picks and apply one
// action to each, so they are one routine with the action (and, for UPDATE, the new
// values) as its parameter.
#include <map>

#include "commands/dml.h"
#include "commands/dml_internal.h"
#include "commands/partition_predicate.h"

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
// (Generated columns not assigned are recomputed from these when the rows are stored.)
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

// For a DELETE that holds for all rows of a file or none, splits `candidates` into the
// files it removes whole (returned) and those it must still read (left in `candidates`):
// files whose stats lack numRecords, whose deleted rows only a read can count. Files whose
// partition values fail the WHERE hold no matching row and are dropped.
Result<std::vector<size_t>> SplitWholeFiles(engine::Connection& conn, const dml::DmlTable& table,
                                            const RowRewrite& request, std::vector<size_t>& candidates) {
  if (!request.where.empty()) {
    auto satisfied =
        FilesWherePartitionsSatisfy(conn, *table.snapshot, candidates, request.where,
                                    request.target_alias.empty() ? "__basin_target" : request.target_alias);
    if (!satisfied.ok()) {
      return satisfied.status().WithContext(std::string(request.operation) + " " + table.where);
    }
    candidates = std::move(*satisfied);
  }
  std::vector<size_t> whole, read;
  for (size_t index : candidates) {
    (delta::StatsNumRecords(table.snapshot->files[index]) ? whole : read).push_back(index);
  }
  candidates = std::move(read);
  return whole;
}

Result<CommandResult> RewriteRows(const CommandContext& ctx, std::shared_ptr<const delta::Snapshot> snapshot,
                                  const RowRewrite& request) {
  if (auto skipped = dml::AlreadyCommitted(ctx, *snapshot)) return *skipped;
  ASSIGN_OR_RETURN(dml::DmlTable table,
                   dml::OpenDmlTable(ctx, std::move(snapshot), request.mode, request.operation, true));
  engine::Connection& conn = *ctx.conn;
  const std::string alias =
      QuoteIdentifier(request.target_alias.empty() ? "__basin_target" : request.target_alias);

  engine::PredicateScope scope;
  if (!request.target_alias.empty()) scope.qualifiers.push_back(request.target_alias);
  // A DELETE whose WHERE is absent, or decided by partition values alone, holds for all
  // rows of a file or for none: it removes whole files without reading them.
  bool whole_files = request.assignments == nullptr && request.where.empty();
  if (request.assignments == nullptr && !request.where.empty() &&
      !table.snapshot->metadata.partition_columns.empty()) {
    const json tree = ExpressionTree(conn, request.where);
    whole_files = !tree.is_null() && DecidedByPartitionValues(tree, *table.snapshot, scope);
  }
  // A WHERE DuckDB cannot parse on its own (unknown predicate) reads every file; the query
  // below then reports what is wrong with it.
  dml::Candidates candidates = dml::SelectCandidates(
      *table.snapshot,
      request.where.empty() ? delta::Predicate() : dml::PredicateOf(request.where, *table.snapshot, scope));
  std::vector<size_t> scanned = candidates.files;
  std::vector<size_t> removed_whole;
  if (whole_files) {
    ASSIGN_OR_RETURN(removed_whole, SplitWholeFiles(conn, table, request, scanned));
  }
  ctx.Report("scanning", 0, static_cast<int64_t>(scanned.size()));

  dml::TempTables temps(conn);
  ASSIGN_OR_RETURN(engine::ScanPlan scan, dml::ScanWithPositions(table, scanned, temps));
  const std::string from_where =
      "FROM (" + scan.sql + ") AS " + alias + (request.where.empty() ? "" : " WHERE (" + request.where + ")");
  std::string rows_sql;
  dml::GeneratedAssignments generated;
  if (request.assignments != nullptr) {
    ASSIGN_OR_RETURN(rows_sql, UpdatedRowsSql(table, *request.assignments, alias, from_where));
    for (const auto& [column, expression] : *request.assignments) {
      const delta::StructField* field = table.target.schema.Find(column);
      if (field->GenerationExpression()) generated[field->name] = "TRUE";
    }
  } else {
    rows_sql = "SELECT " + alias + "." + QuoteIdentifier(engine::kScanFileColumn) + ", " + alias + "." +
               QuoteIdentifier(engine::kScanRowIndexColumn) + ", " + engine::QuoteLiteral(request.action) +
               " AS " + QuoteIdentifier(dml::kActionColumn) + " " + from_where;
  }
  const std::string changes = temps.NewTable("changes");
  RETURN_IF_ERROR_CTX(conn.Execute("CREATE TEMP TABLE " + changes + " AS " + rows_sql),
                      std::string(request.operation) + " " + table.where);
  RETURN_IF_ERROR(dml::CheckGeneratedAssignments(table, changes, request.operation, generated));

  delta::Transaction txn(table.snapshot, ctx.txn_options);
  ASSIGN_OR_RETURN(dml::AppliedChanges applied,
                   dml::ApplyChanges(table, scan, changes, request.assignments != nullptr, temps, txn));
  // Change data for the whole files only when the rest wrote some (see RemoveWholeFiles).
  RETURN_IF_ERROR(dml::RemoveWholeFiles(
      table, removed_whole, table.change_data_feed && applied.added_change_files > 0, temps, txn, applied));
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
