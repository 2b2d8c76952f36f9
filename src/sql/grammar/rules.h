// The rules of Basin's grammar, one family per file (ddl_rules.cc, write_rules.cc,
// maintenance_rules.cc, pipeline_rules.cc, governance_rules.cc), shared by
// parse_statement.cc. Each Parse* function reads from the stream's position (just after
// the words that chose the statement) to the end of the statement; nullopt means the
// statement is not in a form Basin runs, so it is DuckDB's.
//
// Thread safety: functions of their arguments.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "basin/status.h"
#include "delta/schema.h"
#include "sql/grammar/statement.h"
#include "sql/grammar/token_stream.h"

namespace basin::sql::grammar {

using BodyOrDuckDb = Result<std::optional<StatementBody>>;

// --- shared pieces (table_elements.cc) ---

// ('k' = 'v', k.x = true, ...): keys strings or dotted names; values literals. Without
// values: ('k', ...).
Result<std::map<std::string, std::string>> PropertyList(TokenStream& tokens, bool with_values);
// (name, ...)
Result<std::vector<std::string>> NameList(TokenStream& tokens, std::string_view what);
// name, ... or (name, ...)
Result<std::vector<std::string>> OptionallyParenthesizedNames(TokenStream& tokens, std::string_view what);

// A column definition: name TYPE [NOT NULL] [GENERATED ALWAYS AS (expr) | AS (expr)]
// [COMMENT '...'], options in any order. A DEFAULT, PRIMARY KEY, UNIQUE or REFERENCES
// option is read and reported in `unsupported` (NotImplemented), never a syntax error.
// With `type_optional` (pipeline tables) the type may be left out: field.type is null.
struct ColumnDefinition {
  delta::StructField field;
  Status unsupported;
};
Result<ColumnDefinition> ParseColumnDefinition(TokenStream& tokens, bool type_optional = false);

// What may sit between the parentheses of CREATE TABLE and the pipeline tables: columns,
// CONSTRAINT name CHECK (expr) and, for pipeline tables, CONSTRAINT name EXPECT (expr)
// [ON VIOLATION ...] and columns without a type. Reads "(" ... ")".
struct TableElements {
  std::vector<delta::StructField> columns;
  std::map<std::string, std::string> checks;  // lower-case name -> expression
  std::vector<Expectation> expectations;
  Status unsupported;
};
Result<TableElements> ParseTableElements(TokenStream& tokens, bool pipeline_table);

// The clauses after a table's elements, in any order: PARTITIONED BY (...), TBLPROPERTIES
// (...), COMMENT '...', and for Delta tables of the warehouse also USING DELTA and
// LOCATION '...'. Stops at the first token that starts none of them.
struct TableClauses {
  std::vector<std::string> partition_columns;
  std::map<std::string, std::string> properties;
  std::optional<std::string> comment;
  std::optional<std::string> location;
};
Result<TableClauses> ParseTableClauses(TokenStream& tokens, bool warehouse_table);

// VERSION AS OF n | TIMESTAMP AS OF '...', if there.
Result<TimeTravel> ParseTimeTravel(TokenStream& tokens);

// --- statement families ---

Result<StatementBody> ParseCreateTable(TokenStream& tokens,
                                       bool or_replace);            // after CREATE [OR REPLACE] TABLE
BodyOrDuckDb ParseDropTable(TokenStream& tokens);                   // after DROP TABLE
BodyOrDuckDb ParseAlterTable(TokenStream& tokens);                  // after ALTER TABLE
BodyOrDuckDb ParseShowTables(TokenStream& tokens);                  // after SHOW TABLES
Result<StatementBody> ParseShowTblProperties(TokenStream& tokens);  // after SHOW TBLPROPERTIES
BodyOrDuckDb ParseDescribe(TokenStream& tokens);                    // after DESCRIBE / DESC

// After INSERT, for the forms DuckDB does not parse.
Result<StatementBody> ParseBasinInsert(TokenStream& tokens);

Result<StatementBody> ParseOptimize(TokenStream& tokens);  // after OPTIMIZE
BodyOrDuckDb ParseVacuum(TokenStream& tokens);             // after VACUUM
Result<StatementBody> ParseRestore(TokenStream& tokens);   // after RESTORE
BodyOrDuckDb ParseSetting(TokenStream& tokens);            // at SET / RESET

// After CREATE [OR REFRESH]: STREAMING TABLE, MATERIALIZED VIEW; after CREATE: FLOW.
Result<StatementBody> ParsePipelineTable(TokenStream& tokens, bool or_refresh, bool materialized_view);
Result<StatementBody> ParseCreateFlow(TokenStream& tokens);

// At CREATE USER/ROLE/TOKEN, DROP USER/ROLE, GRANT, REVOKE, SHOW GRANTS (the stream at
// the statement's first word).
BodyOrDuckDb ParseGovernance(TokenStream& tokens);

}  // namespace basin::sql::grammar
