// Basin's grammar: one statement in, a ParsedStatement (statement.h) out.
//
// The first words choose: Basin's own statements (CREATE/DROP/ALTER TABLE, SHOW TABLES,
// DESCRIBE, OPTIMIZE, VACUUM, RESTORE, SET basin.*, Basin's INSERT forms, pipeline DDL,
// users, roles, grants, tokens) are read by the rules in rules.h, over DuckDB's tokens,
// with every expression and query slot checked by DuckDB's parser (slots.h). INSERT,
// UPDATE, DELETE and MERGE are read from DuckDB's own syntax tree (engine/sql_text.h);
// every other statement is DuckDB's and passes through. Where DuckDB refuses a statement
// as written, Basin's spellings in it (time travel, STREAM, WATERMARK) are rewritten
// into DuckDB's (desugar.h) and DuckDB reads the result.
//
// Errors: a syntax error (Basin's grammar's or DuckDB's) is InvalidArgument
// "line L, column C: syntax error at or near "X": expected ...", the line and column
// counted in the script the statement came from. Statements Basin refuses for what they
// ask (USING parquet, a PRIMARY KEY on a Delta table) fail with their own codes.
//
// Thread safety: functions of their arguments.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "basin/status.h"
#include "delta/schema.h"
#include "engine/sql_text.h"
#include "sql/grammar/statement.h"

namespace basin::sql::grammar {

// One statement of `script`, as engine::SplitSqlScript(script) gave it.
Result<ParsedStatement> ParseStatement(std::string_view script, const engine::ScriptStatement& statement);

// As ParseStatement, for a statement of a pipeline's file, where CREATE [OR REFRESH]
// TEMPORARY [LIVE] VIEW is the pipeline's (CreateTemporaryView), not DuckDB's.
Result<ParsedStatement> ParsePipelineStatement(std::string_view script,
                                               const engine::ScriptStatement& statement);

// A statement on its own: lines and columns are the statement's.
Result<ParsedStatement> ParseStatement(std::string_view statement);

// Column definitions as CREATE TABLE's parentheses hold them, without the parentheses
// ("id BIGINT NOT NULL, amount DECIMAL(12,2)"): a stream source's declared schema. A
// syntax error names the line and column of `text`; a generated column or a constraint is
// InvalidArgument (a record's columns are only names, types and NOT NULL).
Result<std::vector<delta::StructField>> ParseColumnList(std::string_view text);

// A name as a statement would write it, parts split and unquoted ("ops.\"Payments DLQ\""
// -> {"ops", "Payments DLQ"}): a table named in an option. InvalidArgument for anything else.
Result<std::vector<std::string>> ParseQualifiedName(std::string_view text);

// `statement` with each STREAM source (its marker, call and WATERMARK) read from the
// relation `relation` instead, under the alias its rows had (desugar.h): what a stateful
// stream runs (stream/stateful.h). The statement as it is when it has no STREAM source; a
// syntax error as ParseStatement reports it.
Result<std::string> ReplaceStreamSources(std::string_view statement, std::string_view relation);

}  // namespace basin::sql::grammar
