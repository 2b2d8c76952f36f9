// Basin's statement handlers: each runs one kind of parsed statement (sql/grammar/) on the
// warehouse's Delta tables. A handler returns nullopt when the statement is not Basin's
// after all (it names no warehouse table: a DuckDB table of that name is meant), and the
// session passes the statement to DuckDB.
//
// Statement results are one row for commands (see each handler), or the rows asked for.
// `statement` is the statement's text as written, for the result.
//
// Thread safety: handlers run on the session's thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "basin/status.h"
#include "sql/grammar/statement.h"
#include "sql/session.h"
#include "sql/session_context.h"

namespace basin::sql {

using StatementOutcome = Result<std::optional<StatementResult>>;

// What kind of statement `parsed` is, in the words of PostgreSQL's command tags ("SELECT",
// "INSERT", "CREATE TABLE", "OPTIMIZE"); DuckDB's statement type for statements DuckDB runs
// ("COPY", "CREATE"); BEGIN, COMMIT and ROLLBACK as themselves.
std::string CommandOf(const grammar::ParsedStatement& parsed);

// --- ddl_statements.cc ---

// CREATE [OR REPLACE] TABLE ... [AS query]; CREATE TABLE name LOCATION 'path' registers an
// existing table. Always Basin's.
StatementOutcome RunCreateTable(SessionContext& session, const std::string& statement,
                                const grammar::CreateTable& create);
StatementOutcome RunDropTable(SessionContext& session, const std::string& statement,
                              const grammar::DropTable& drop);
StatementOutcome RunAlterTable(SessionContext& session, const std::string& statement,
                               const grammar::AlterTable& alter);
StatementOutcome RunShowTables(SessionContext& session, const std::string& statement,
                               const grammar::ShowTables& show);
StatementOutcome RunDescribeTable(SessionContext& session, const std::string& statement,
                                  const grammar::DescribeTable& describe);
StatementOutcome RunShowTblProperties(SessionContext& session, const std::string& statement,
                                      const grammar::ShowTblProperties& show);

// --- write_statements.cc ---

// INSERT INTO / OVERWRITE / REPLACE WHERE on a warehouse table (commands/write.h).
StatementOutcome RunInsert(SessionContext& session, const std::string& statement,
                           const grammar::Insert& insert);

// --- dml_statements.cc ---

// The warehouse table a DML statement names; nullopt when it names none (a name the
// warehouse does not hold, or one qualified by a catalog).
Result<std::optional<catalog::TableEntry>> LookupTarget(SessionContext& session,
                                                        const engine::SqlTableName& name);

// DELETE, UPDATE and MERGE on a warehouse table (commands/dml.h).
StatementOutcome RunDelete(SessionContext& session, const std::string& statement, const grammar::Delete& del);
StatementOutcome RunUpdate(SessionContext& session, const std::string& statement,
                           const grammar::Update& update);
StatementOutcome RunMerge(SessionContext& session, const std::string& statement, const grammar::Merge& merge);

// --- maintenance_statements.cc ---

// OPTIMIZE, VACUUM (DuckDB's when it names no warehouse table) and RESTORE.
StatementOutcome RunOptimize(SessionContext& session, const std::string& statement,
                             const grammar::Optimize& optimize);
StatementOutcome RunVacuum(SessionContext& session, const std::string& statement,
                           const grammar::Vacuum& vacuum);
StatementOutcome RunRestore(SessionContext& session, const std::string& statement,
                            const grammar::Restore& restore);

// --- governance_statements.cc (docs/governance.md) ---

// CREATE USER, CREATE ROLE, DROP USER / ROLE: an administrator's.
StatementOutcome RunCreateUser(SessionContext& session, const std::string& statement,
                               const grammar::CreateUser& create);
StatementOutcome RunCreateRole(SessionContext& session, const std::string& statement,
                               const grammar::CreateRole& create);
StatementOutcome RunDropPrincipal(SessionContext& session, const std::string& statement,
                                  const grammar::DropPrincipal& drop);
// GRANT / REVOKE of a role (an administrator's) or of privileges (an administrator's, or a
// holder of MANAGE on the securable).
StatementOutcome RunGrantOrRevoke(SessionContext& session, const std::string& statement,
                                  const grammar::GrantOrRevoke& grant);
// Rows (principal, securable, privilege): the grants the user may see.
StatementOutcome RunShowGrants(SessionContext& session, const std::string& statement,
                               const grammar::ShowGrants& show);
// One row: the new token's text (shown this once), its id, its user and when it expires.
StatementOutcome RunCreateToken(SessionContext& session, const std::string& statement,
                                const grammar::CreateToken& create);
StatementOutcome RunRevokeToken(SessionContext& session, const std::string& statement,
                                const grammar::RevokeToken& revoke);

// --- statements.cc ---

// A statement's one-row result for a command: "version" and each metric as a BIGINT
// column, in the order given (missing metrics are 0), plus the command's notices.
StatementResult CommandResultRow(const std::string& statement, const commands::CommandResult& result,
                                 const std::vector<std::string>& metric_columns);

// A statement's result without rows, with its notices.
StatementResult NoRows(const std::string& statement, std::vector<std::string> notices = {});
// A statement's result of the columns `names` (of DuckDB's `types`), its rows still to add.
StatementResult Rows(const std::string& statement, std::vector<std::string> names,
                     std::vector<std::string> types);

// NotImplemented for statements of features still to come: "<what> is parsed but not run
// yet: <feature> arrives with the <issue> issue".
Status NotYetRun(std::string_view what, std::string_view issue);
// For `what` when it reads streaming sources (STREAM ...), which only a stream runs:
// InvalidArgument saying how to run it (NotYetRun with a WATERMARK).
Status RefuseStreams(const std::vector<grammar::StreamSource>& streams, std::string_view what);

}  // namespace basin::sql
