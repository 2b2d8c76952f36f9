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

}  // namespace

StatementOutcome RunOptimize(SessionContext& session, const std::string& statement,
                             const grammar::Optimize& optimize) {
  ASSIGN_OR_RETURN(catalog::TableEntry entry, session.GetTable(optimize.name));
  RETURN_IF_ERROR(session.governor().RequireOnTable(security::Privilege::kManage, entry.name));
  ASSIGN_OR_RETURN(auto table, session.LoadTable(entry.location));
  ASSIGN_OR_RETURN(commands::CommandResult result,
                   commands::Optimize(session.MakeCommandContext(), table, optimize.request));
  return std::optional<StatementResult>(
      CommandResultRow(statement, result,
                       {"numFilesAdded", "numFilesRemoved", "partitionsOptimized", "numBatches",
                        "totalConsideredFiles", "totalFilesSkipped"}));
}

// VACUUM is DuckDB's too (VACUUM t of a DuckDB table): nullopt unless it names a warehouse
// table.
StatementOutcome RunVacuum(SessionContext& session, const std::string& statement,
                           const grammar::Vacuum& vacuum) {
  ASSIGN_OR_RETURN(std::optional<catalog::TableEntry> entry, session.ResolveTable(vacuum.name));
  if (!entry) return std::optional<StatementResult>();
  RETURN_IF_ERROR(session.governor().RequireOnTable(security::Privilege::kManage, entry->name));
  commands::VacuumRequest request = vacuum.request;
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

StatementOutcome RunRestore(SessionContext& session, const std::string& statement,
                            const grammar::Restore& restore) {
  ASSIGN_OR_RETURN(catalog::TableEntry entry, session.GetTable(restore.name));
  RETURN_IF_ERROR(session.governor().RequireOnTable(security::Privilege::kManage, entry.name));
  ASSIGN_OR_RETURN(auto table, session.LoadTable(entry.location));
  ASSIGN_OR_RETURN(commands::CommandResult result,
                   commands::Restore(session.MakeCommandContext(), table, restore.request));
  return std::optional<StatementResult>(
      CommandResultRow(statement, result,
                       {"tableSizeAfterRestore", "numOfFilesAfterRestore", "numRemovedFiles",
                        "numRestoredFiles", "removedFilesSize", "restoredFilesSize"}));
}

}  // namespace basin::sql
