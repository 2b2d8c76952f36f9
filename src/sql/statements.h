// Basin's own statements: the ones DuckDB does not know or must not run itself, because
// they read or change Delta tables of the warehouse. Each handler returns nullopt when the
// statement is not one of its kinds (or names no warehouse table where a DuckDB table of
// that name is meant), and the session passes it to DuckDB.
//
// Statement results are one row for commands (see each handler), or the rows asked for.
//
// Thread safety: handlers run on the session's thread.
#pragma once

#include <optional>
#include <string>

#include "common/status.h"
#include "sql/session.h"
#include "sql/session_context.h"
#include "sql/token_cursor.h"

namespace basin::sql {

// CREATE TABLE [IF NOT EXISTS] ... [AS SELECT], CREATE TABLE name LOCATION 'path' (register
// an existing table), DROP TABLE [IF EXISTS], ALTER TABLE ..., SHOW TABLES [IN schema],
// DESCRIBE [TABLE] name. CREATE TEMP TABLE, views and the like are DuckDB's.
Result<std::optional<StatementResult>> TryDdlStatement(SessionContext& session, const std::string& statement,
                                                       TokenCursor& tokens);

// INSERT [WITH SCHEMA EVOLUTION] INTO name [(cols)] [BY NAME] {VALUES ... | query},
// INSERT OVERWRITE [TABLE] name [PARTITION ...] query, INSERT INTO name REPLACE WHERE pred query.
Result<std::optional<StatementResult>> TryWriteStatement(SessionContext& session,
                                                         const std::string& statement, TokenCursor& tokens);

// DELETE FROM name [AS a] [WHERE ...], UPDATE name [AS a] SET ... [WHERE ...],
// MERGE [WITH SCHEMA EVOLUTION] INTO name [AS a] USING source [AS s] ON ... WHEN ...
Result<std::optional<StatementResult>> TryDmlStatement(SessionContext& session, const std::string& statement,
                                                       TokenCursor& tokens);

// OPTIMIZE name [WHERE ...] [ZORDER BY (cols)], VACUUM name [RETAIN n HOURS] [DRY RUN],
// RESTORE [TABLE] name TO {VERSION | TIMESTAMP} AS OF ...
Result<std::optional<StatementResult>> TryMaintenanceStatement(SessionContext& session,
                                                               const std::string& statement,
                                                               TokenCursor& tokens);

// A statement's one-row result for a command: "version" and each metric as a BIGINT
// column, in the order given (missing metrics are 0), plus the command's notices.
StatementResult CommandResultRow(const std::string& statement, const commands::CommandResult& result,
                                 const std::vector<std::string>& metric_columns);

}  // namespace basin::sql
