// OPTIMIZE, VACUUM and RESTORE statements (sql/statements.h), handed to
// commands/maintenance.h.

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "commands/maintenance.h"
#include "sql/statements.h"

namespace basin::sql {

namespace {

bool SettingIsFalse(const SessionContext& session, const std::string& name) {
  std::optional<std::string> value = session.Setting(name);
  if (!value) return false;
  std::string v = *value;
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
  return v == "false" || v == "0" || v == "off";
}

// ZORDER BY (a, b) or ZORDER BY a, b.
Result<std::vector<std::string>> ZOrderColumns(TokenCursor& tokens) {
  const bool parenthesized = tokens.AcceptSymbol("(");
  std::vector<std::string> columns;
  do {
    ASSIGN_OR_RETURN(std::string column, tokens.Identifier("a column to Z-order by"));
    columns.push_back(std::move(column));
  } while (tokens.AcceptSymbol(","));
  if (parenthesized) RETURN_IF_ERROR(tokens.ExpectSymbol(")"));
  return columns;
}

Result<StatementResult> RunOptimize(SessionContext& session, const std::string& statement,
                                    TokenCursor& tokens) {
  ASSIGN_OR_RETURN(std::vector<std::string> name, tokens.QualifiedName("a table name"));
  commands::OptimizeRequest request;
  if (tokens.AcceptKeywords({"WHERE"})) {
    ASSIGN_OR_RETURN(request.where, tokens.TextUntil("a predicate on partition columns", {"ZORDER"}));
  }
  if (tokens.AcceptKeywords({"ZORDER", "BY"})) {
    ASSIGN_OR_RETURN(request.zorder_by, ZOrderColumns(tokens));
  }
  RETURN_IF_ERROR(tokens.ExpectEnd());
  ASSIGN_OR_RETURN(catalog::TableEntry entry, session.GetTable(name));
  ASSIGN_OR_RETURN(auto table, session.LoadTable(entry.location));
  ASSIGN_OR_RETURN(commands::CommandResult result,
                   commands::Optimize(session.MakeCommandContext(), table, request));
  return CommandResultRow(statement, result,
                          {"numFilesAdded", "numFilesRemoved", "partitionsOptimized", "numBatches",
                           "totalConsideredFiles", "totalFilesSkipped"});
}

// VACUUM is DuckDB's too (VACUUM, VACUUM ANALYZE t): nullopt unless it names a warehouse table.
Result<std::optional<StatementResult>> RunVacuum(SessionContext& session, const std::string& statement,
                                                 TokenCursor& tokens) {
  if (tokens.AtEnd() || tokens.PeekKeywords({"ANALYZE"})) return std::optional<StatementResult>();
  auto name = tokens.QualifiedName("a table name");
  if (!name.ok()) return std::optional<StatementResult>();
  ASSIGN_OR_RETURN(std::optional<catalog::TableEntry> entry, session.LookupTable(*name));
  if (!entry) return std::optional<StatementResult>();
  commands::VacuumRequest request;
  if (tokens.AcceptKeywords({"RETAIN"})) {
    ASSIGN_OR_RETURN(double hours, tokens.Number("a number of hours"));
    RETURN_IF_ERROR(tokens.ExpectKeywords({"HOURS"}));
    request.retain_hours = hours;
  }
  if (tokens.AcceptKeywords({"DRY", "RUN"})) request.dry_run = true;
  RETURN_IF_ERROR(tokens.ExpectEnd());
  request.retention_check = !SettingIsFalse(session, "vacuum_retention_check");

  ASSIGN_OR_RETURN(auto table, session.LoadTable(entry->location));
  ASSIGN_OR_RETURN(commands::VacuumResult vacuumed,
                   commands::Vacuum(session.MakeCommandContext(), table, request));
  StatementResult out;
  out.statement = statement;
  out.returns_rows = true;
  if (request.dry_run) {
    // As Delta's dry run: the full path of every file that would be deleted.
    out.result.column_names = {"path"};
    out.result.column_types = {"VARCHAR"};
    std::string root = entry->location;
    if (!root.empty() && root.back() != '/') root += '/';
    for (const std::string& file : vacuumed.files) out.result.rows.push_back({root + file});
  } else {
    out.result.column_names = {"numDeletedFiles"};
    out.result.column_types = {"BIGINT"};
    out.result.rows.push_back({std::to_string(vacuumed.files.size())});
  }
  return std::optional<StatementResult>(std::move(out));
}

Result<StatementResult> RunRestore(SessionContext& session, const std::string& statement,
                                   TokenCursor& tokens) {
  tokens.AcceptKeywords({"TABLE"});
  ASSIGN_OR_RETURN(std::vector<std::string> name, tokens.QualifiedName("a table name"));
  tokens.AcceptKeywords({"TO"});
  commands::RestoreRequest request;
  if (tokens.AcceptKeywords({"VERSION", "AS", "OF"})) {
    ASSIGN_OR_RETURN(request.version, tokens.Integer("a version number"));
  } else if (tokens.AcceptKeywords({"TIMESTAMP", "AS", "OF"})) {
    ASSIGN_OR_RETURN(request.timestamp, tokens.StringLiteral("a timestamp"));
  } else {
    return tokens.Error("VERSION AS OF or TIMESTAMP AS OF");
  }
  RETURN_IF_ERROR(tokens.ExpectEnd());
  ASSIGN_OR_RETURN(catalog::TableEntry entry, session.GetTable(name));
  ASSIGN_OR_RETURN(auto table, session.LoadTable(entry.location));
  ASSIGN_OR_RETURN(commands::CommandResult result,
                   commands::Restore(session.MakeCommandContext(), table, request));
  return CommandResultRow(statement, result,
                          {"tableSizeAfterRestore", "numOfFilesAfterRestore", "numRemovedFiles",
                           "numRestoredFiles", "removedFilesSize", "restoredFilesSize"});
}

}  // namespace

Result<std::optional<StatementResult>> TryMaintenanceStatement(SessionContext& session,
                                                               const std::string& statement,
                                                               TokenCursor& tokens) {
  const size_t start = tokens.position();
  if (tokens.AcceptKeywords({"OPTIMIZE"})) {
    ASSIGN_OR_RETURN(StatementResult result, RunOptimize(session, statement, tokens));
    return std::optional<StatementResult>(std::move(result));
  }
  if (tokens.AcceptKeywords({"VACUUM"})) {
    ASSIGN_OR_RETURN(std::optional<StatementResult> result, RunVacuum(session, statement, tokens));
    if (!result) tokens.Reset(start);
    return result;
  }
  if (tokens.AcceptKeywords({"RESTORE"})) {
    ASSIGN_OR_RETURN(StatementResult result, RunRestore(session, statement, tokens));
    return std::optional<StatementResult>(std::move(result));
  }
  return std::optional<StatementResult>();
}

}  // namespace basin::sql
