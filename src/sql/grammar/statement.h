// What Basin's grammar makes of one statement: a struct per statement form, handed to the
// statement handlers (sql/statements.h), which run it or pass it to DuckDB. Parsing is done
// when a ParsedStatement exists: handlers never look at SQL text to find names or clauses.
//
// Slots that hold expressions or queries hold SQL text that DuckDB's parser reads as such
// (checked while parsing), with Delta's time travel (`t VERSION AS OF 3`) already in
// DuckDB's spelling (`t AT (VERSION => 3)`) and streaming markers (`STREAM`, `WATERMARK`)
// removed and recorded beside the text.
//
// Thread safety: values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "basin/status.h"
#include "commands/maintenance.h"
#include "commands/table_ddl.h"
#include "engine/sql_text.h"
#include "security/grants.h"

namespace basin::sql::grammar {

// A name as written, each part unquoted: ["t"], ["s", "t"].
using QualifiedName = std::vector<std::string>;

// "s.t" for messages.
std::string JoinName(const QualifiedName& name);

// VERSION AS OF n / TIMESTAMP AS OF '...' after a table name (DESCRIBE, SHOW TBLPROPERTIES).
struct TimeTravel {
  std::optional<int64_t> version;
  std::optional<std::string> timestamp;
};

// WATERMARK column DELAY OF interval, after a streaming source.
struct Watermark {
  QualifiedName column;
  std::string delay;  // SQL: INTERVAL 10 SECONDS
};

// An option of a table source: STREAM(t, startingVersion => 5) gives {"startingVersion", "5"}.
struct StreamOption {
  std::string name;   // as written
  std::string value;  // its SQL text
};

// A streaming source in a query (the streaming issue runs these; today they are parsed
// only): FROM STREAM read_kafka(...), FROM STREAM(t), STREAM read_files(...),
// STREAM table_changes(...), each with an optional watermark.
struct StreamSource {
  // Where the table reference starts in the SQL text it belongs to: the function's name,
  // or for a table the basin_stream_table call it is read through.
  size_t offset = 0;
  // Its place among the statement's STREAM sources, from 0, in the order they are written.
  int64_t index = 0;
  std::string source;  // "read_kafka('topic')" or "t"
  // The relation DuckDB reads for it: the call as written, or for a table or a change feed
  // the basin_stream_table / basin_stream_changes call it is read through, with `index` as
  // its basin_stream_source argument (engine/stream_calls.h).
  std::string relation;
  bool is_table = false;  // STREAM(t) names a table; otherwise a table function
  // STREAM table_changes('t', start): a table's change feed, read through
  // basin_stream_changes (`source` is the call as written).
  bool is_changes = false;
  // STREAM read_files('folder', ...): a folder's new files (`source` is the call as written).
  bool is_files = false;
  bool is_kafka = false;              // STREAM read_kafka(...)
  std::vector<StreamOption> options;  // STREAM(t, name => value, ...)
  std::optional<Watermark> watermark;
};

// A query that DuckDB's parser reads as one (SELECT, VALUES, WITH, FROM, TABLE...).
struct Query {
  std::string sql;
  std::vector<StreamSource> streams;  // offsets into `sql`
  // As written, STREAM markers kept: what a pipeline's flow hands its stream statement,
  // whose own parse reads the markers again.
  std::string written;
};

// --- tables (DDL) ---

// CREATE [OR REPLACE] TABLE [IF NOT EXISTS] name [(columns, constraints)] [USING DELTA]
// [PARTITIONED BY (...)] [TBLPROPERTIES (...)] [LOCATION '...'] [COMMENT '...'] [AS query]
struct CreateTable {
  bool or_replace = false;
  bool if_not_exists = false;
  QualifiedName name;
  bool has_columns = false;
  // schema (NOT NULL, generation expressions, comments), partition columns, properties
  // (CHECK constraints as delta.constraints.<name>), description (COMMENT).
  commands::CreateTableRequest request;
  std::optional<std::string> location;
  std::optional<Query> query;
};

// DROP TABLE [IF EXISTS] name
struct DropTable {
  bool if_exists = false;
  QualifiedName name;
};

// ALTER TABLE name <change>, in one of the forms Basin runs on Delta tables.
struct AlterTable {
  QualifiedName name;
  commands::AlterTableRequest request;
  // What the statement asks that Delta tables do not support (a column DEFAULT, a
  // PRIMARY KEY); the handler reports it when `name` is a warehouse table, and otherwise
  // the statement is DuckDB's.
  Status unsupported;
};

// SHOW TABLES [IN schema]
struct ShowTables {
  std::optional<std::string> schema;
};

// DESCRIBE [TABLE] name [time travel]
struct DescribeTable {
  QualifiedName name;
  TimeTravel at;
};

// SHOW TBLPROPERTIES name [time travel]
struct ShowTblProperties {
  QualifiedName name;
  TimeTravel at;
};

// delta_scan('path' [, version => n | timestamp => '...'])
struct DeltaScanArguments {
  std::string path;
  TimeTravel at;
};

// DESCRIBE HISTORY {name | delta_scan(...)} [LIMIT n]
struct DescribeHistory {
  std::variant<QualifiedName, DeltaScanArguments> table;
  std::optional<int64_t> limit;
};

// DESCRIBE DETAIL {name | delta_scan(...)}
struct DescribeDetail {
  std::variant<QualifiedName, DeltaScanArguments> table;
};

// --- writes and DML ---

// PARTITION (p = value, q): a static value (SQL) or none (dynamic).
struct PartitionValue {
  std::string column;
  std::optional<std::string> value;
};

// INSERT [WITH SCHEMA EVOLUTION] {INTO | OVERWRITE} [TABLE] name [PARTITION (...)]
// [(cols) | BY NAME] [REPLACE WHERE pred] {VALUES ... | query}, and every INSERT DuckDB
// parses (then `insert` is DuckDB's tree, RETURNING and ON CONFLICT included).
struct Insert {
  engine::SqlInsert insert;  // target, columns, BY NAME, the query
  bool schema_evolution = false;
  bool overwrite = false;
  std::vector<PartitionValue> partitions;
  std::optional<std::string> replace_where;
  // Basin's INSERT forms, whose query Basin's grammar read: offsets into insert.query.
  // (When DuckDB parsed the whole INSERT they are ParsedStatement::streams.)
  std::vector<StreamSource> query_streams;
};

// UPDATE, as DuckDB parses it.
struct Update {
  engine::SqlUpdate update;
};

// DELETE, as DuckDB parses it.
struct Delete {
  engine::SqlDelete del;
};

// MERGE [WITH SCHEMA EVOLUTION] INTO ...: DuckDB's MERGE (see engine::SqlMerge for the
// order of its actions) with Basin's WITH SCHEMA EVOLUTION.
struct Merge {
  engine::SqlMerge merge;
  bool schema_evolution = false;
};

// --- maintenance ---

// OPTIMIZE name [WHERE predicate] [ZORDER BY (cols)]
struct Optimize {
  QualifiedName name;
  commands::OptimizeRequest request;
};

// VACUUM name [RETAIN n HOURS] [DRY RUN] (the retention check is the session's setting)
struct Vacuum {
  QualifiedName name;
  commands::VacuumRequest request;
};

// RESTORE [TABLE] name [TO] {VERSION AS OF n | TIMESTAMP AS OF '...'}
struct Restore {
  QualifiedName name;
  commands::RestoreRequest request;
};

// SET basin.<name> {= | TO} value, RESET basin.<name> (value nullopt)
struct Setting {
  std::string name;  // lower-case, without "basin."
  std::optional<std::string> value;
};

// SET [SESSION] name {= | TO} value and RESET name, for a name other than basin.*, as
// DuckDB's parser reads them. The session keeps PostgreSQL's settings it implements
// (statement_timeout, sql/pg_settings.h); DuckDB runs the rest (duckdb_sql).
struct SetVariable {
  engine::SqlSet set;
};

// SHOW name, SHOW ALL (name "all"), SHOW TRANSACTION ISOLATION LEVEL (transaction_isolation):
// the session answers PostgreSQL's settings and DuckDB's; for any other name DuckDB's SHOW
// runs (duckdb_sql), which describes the table so named.
struct ShowVariable {
  std::string name;  // as written
};

// --- pipelines (parsed only; the pipelines issue runs them) ---

// CONSTRAINT name EXPECT (condition) [ON VIOLATION {DROP ROW | FAIL UPDATE | QUARANTINE}]
struct Expectation {
  enum class OnViolation { kKeep, kDropRow, kFailUpdate, kQuarantine };
  std::string name;
  std::string condition;  // SQL expression
  OnViolation on_violation = OnViolation::kKeep;
};

// The table part of CREATE OR REFRESH STREAMING TABLE / MATERIALIZED VIEW.
struct PipelineTable {
  QualifiedName name;
  bool or_refresh = false;
  std::vector<delta::StructField> columns;
  std::map<std::string, std::string> checks;  // CONSTRAINT name CHECK (expr)
  std::vector<Expectation> expectations;
  std::vector<std::string> partition_columns;
  std::map<std::string, std::string> properties;
  std::optional<std::string> comment;
  std::optional<Query> query;
};

// CREATE [OR REFRESH] STREAMING TABLE name [(...)] [PARTITIONED BY] [TBLPROPERTIES]
// [COMMENT] [AS query]
struct CreateStreamingTable {
  PipelineTable table;
};

// CREATE [OR REFRESH] MATERIALIZED VIEW name [(...)] [...] AS query
struct CreateMaterializedView {
  PipelineTable table;
};

// In a pipeline's files only (grammar::ParsePipelineStatement; elsewhere CREATE TEMPORARY VIEW
// is DuckDB's): CREATE [OR REFRESH] TEMPORARY [LIVE] VIEW name AS query, a view the
// pipeline's flows read and nothing publishes.
struct CreateTemporaryView {
  QualifiedName name;
  Query query;
};

// cols, or * EXCEPT (cols)
struct ColumnSelection {
  bool all_except = false;  // * EXCEPT (columns)
  std::vector<std::string> columns;
};

// AS INSERT INTO [ONCE] target BY NAME query
struct InsertFlow {
  QualifiedName target;
  bool once = false;
  Query query;
};

// AS AUTO CDC INTO target FROM STREAM(source) KEYS (cols) [IGNORE NULL UPDATES]
// [APPLY AS DELETE WHEN expr] [APPLY AS TRUNCATE WHEN expr] SEQUENCE BY expr
// [COLUMNS selection] [STORED AS SCD TYPE {1 | 2}] [TRACK HISTORY ON selection]
struct AutoCdcFlow {
  QualifiedName target;
  QualifiedName source;
  bool source_is_stream = false;
  std::vector<std::string> keys;
  bool ignore_null_updates = false;
  std::optional<std::string> apply_as_delete;    // SQL expression
  std::optional<std::string> apply_as_truncate;  // SQL expression
  std::string sequence_by;                       // SQL expression
  std::optional<ColumnSelection> columns;
  int scd_type = 1;
  std::optional<ColumnSelection> track_history;
};

// CREATE FLOW name AS {INSERT INTO ... | AUTO CDC INTO ...}
struct CreateFlow {
  std::string name;
  std::variant<InsertFlow, AutoCdcFlow> flow;
};

// --- governance (sql/governance_statements.cc runs them) ---

// CREATE USER name PASSWORD '...'
struct CreateUser {
  std::string name;
  std::string password;
};

// CREATE ROLE name
struct CreateRole {
  std::string name;
};

// DROP {USER | ROLE} [IF EXISTS] name
struct DropPrincipal {
  bool is_role = false;
  bool if_exists = false;
  std::string name;
};

using Privilege = security::Privilege;

// CATALOG [c] | SCHEMA s | TABLE t
struct Securable {
  enum class Kind { kCatalog, kSchema, kTable };
  Kind kind = Kind::kCatalog;
  QualifiedName name;  // empty for CATALOG without a name
};

// GRANT role TO principal, or GRANT privileges ON securable TO principal; REVOKE the same
// with FROM.
struct GrantOrRevoke {
  bool revoke = false;
  std::optional<std::string> role;  // a role granted; else `privileges` on `on`
  std::vector<Privilege> privileges;
  Securable on;
  std::string principal;
};

// SHOW GRANTS [ON securable] [TO principal]
struct ShowGrants {
  std::optional<Securable> on;
  std::optional<std::string> principal;
};

// CREATE TOKEN [FOR user] [EXPIRES IN interval]
struct CreateToken {
  std::optional<std::string> user;
  std::optional<std::string> expires_in;  // SQL expression
};

// REVOKE TOKEN 'id'
struct RevokeToken {
  std::string id;
};

// COPY ... TO STDOUT or COPY ... FROM STDIN (DuckDB's "/dev/stdout" and "/dev/stdin"): the
// session's caller sends or takes the rows when it says so (SessionOptions::copy_to_caller);
// otherwise DuckDB copies to the process's own stream.
struct CopyStdio {
  engine::SqlCopy copy;
};

// BEGIN, COMMIT or ROLLBACK: DuckDB runs it; the session follows its transaction block.
struct TransactionControl {
  engine::SqlTransaction::Kind kind = engine::SqlTransaction::Kind::kBegin;
};

// A statement that is DuckDB's: `ParsedStatement::duckdb_sql` runs as it is.
struct DuckDbStatement {
  std::string type;  // DuckDB's statement type: SELECT, CREATE, ...
};

using StatementBody = std::variant<DuckDbStatement, CreateTable, DropTable, AlterTable, ShowTables,
                                   DescribeTable, ShowTblProperties, DescribeHistory, DescribeDetail, Insert,
                                   Update, Delete, Merge, Optimize, Vacuum, Restore, Setting, SetVariable,
                                   ShowVariable, CreateStreamingTable, CreateMaterializedView, CreateFlow,
                                   CreateTemporaryView, CreateUser, CreateRole, DropPrincipal, GrantOrRevoke,
                                   ShowGrants, CreateToken, RevokeToken, CopyStdio, TransactionControl>;

struct ParsedStatement {
  std::string text;  // as written
  // The statement as DuckDB runs it when a handler leaves it to DuckDB: `text`, with time
  // travel in DuckDB's spelling and streaming markers removed where DuckDB needed that.
  std::string duckdb_sql;
  // Streaming sources of a statement DuckDB parsed whole (DML, pass-through queries):
  // offsets into duckdb_sql. Query slots of Basin's own statements carry theirs.
  std::vector<StreamSource> streams;
  StatementBody body;
};

}  // namespace basin::sql::grammar
