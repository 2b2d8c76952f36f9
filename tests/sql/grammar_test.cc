// Basin's grammar (sql/grammar/parse.h): every statement form, with hostile SQL in every
// expression and query slot, Basin's clause keywords used as names, comments between every
// token, time travel and streaming markers rewritten for DuckDB, and syntax errors that
// name the line and column of the script.
#include <gtest/gtest.h>

#include <functional>
#include <random>
#include <string>
#include <vector>

#include "engine/pg_catalog.h"
#include "engine/sql_text.h"
#include "sql/grammar/parse.h"
#include "sql/type_names.h"
#include "testing/test_util.h"

namespace basin::sql::grammar {
namespace {

ParsedStatement Parse(const std::string& sql) {
  auto parsed = ParseStatement(sql);
  EXPECT_TRUE(parsed.ok()) << sql << "\n" << parsed.status().ToString();
  return parsed.ok() ? *parsed : ParsedStatement{};
}

template <typename T>
T As(const std::string& sql) {
  ParsedStatement parsed = Parse(sql);
  const T* body = std::get_if<T>(&parsed.body);
  EXPECT_NE(body, nullptr) << sql << " parsed as alternative " << parsed.body.index();
  return body != nullptr ? *body : T{};
}

bool IsDuckDbs(const std::string& sql) { return std::holds_alternative<DuckDbStatement>(Parse(sql).body); }

Status ErrorOf(const std::string& sql) { return ParseStatement(sql).status(); }

// Expressions DuckDB reads as one, with what tends to break scanners: CASE ... END,
// subqueries, window functions, lambdas, nested comments, quoted identifiers with
// brackets and keywords in them, dollar quotes, and Basin's clause words as names.
const std::vector<std::string>& HostileExpressions() {
  static const std::vector<std::string> expressions = {
      "CASE WHEN a > 0 THEN 'x;y' ELSE b END",
      "(SELECT max(x) FROM u WHERE y IN (SELECT 1))",
      "sum(x) OVER (PARTITION BY g ORDER BY t ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)",
      "list_transform(l, x -> x + 1)",
      "lambda x: x * 2",
      "x /* a /* b ) */ c */ + 1",
      "\"weird ) name\" || $q$ ) ; ' $q$",
      "$$it's$$ = 'it''s'",
      "[x * 2 for x in [1, 2]]",
      "CASE zorder WHEN 1 THEN sequence ELSE apply END",
      "x >=/* it's */ 5",
      "\"select\" + \"ZORDER BY\"",
  };
  return expressions;
}

const std::vector<std::string>& HostileQueries() {
  static const std::vector<std::string> queries = {
      "SELECT CASE WHEN a THEN ';' END AS c FROM u",
      "WITH c AS (SELECT 1 AS x) SELECT x FROM c",
      "SELECT sum(x) OVER (PARTITION BY g) FROM u /* a /* b */ c */",
      "VALUES (1, $$a;b$$), (2, 'it''s')",
      "FROM u SELECT list_transform(l, x -> x + 1) AS \"a ) b\"",
      "(SELECT 1) UNION ALL (SELECT 2)",
      "SELECT * FROM u WHERE x IN (SELECT y FROM v)",
  };
  return queries;
}

// --- tables ---

TEST(GrammarTest, CreateTableWithEveryClause) {
  auto create = As<CreateTable>(
      "CREATE TABLE IF NOT EXISTS s.t (\n"
      "  id BIGINT NOT NULL COMMENT 'the key',\n"
      "  ts TIMESTAMP,\n"
      "  day DATE GENERATED ALWAYS AS (CAST(ts AS DATE)),\n"
      "  tags ARRAY<STRUCT<k: STRING, v: MAP<STRING, ARRAY<INT>>>>,\n"
      "  amount DECIMAL(10, 2), names VARCHAR[], point STRUCT(x DOUBLE, y DOUBLE),\n"
      "  CONSTRAINT positive CHECK (amount > 0 OR amount IS NULL)\n"
      ") USING DELTA PARTITIONED BY (day) TBLPROPERTIES ('delta.appendOnly' = 'true', custom.key = 42)\n"
      "LOCATION 'some/where' COMMENT 'a table'");
  EXPECT_TRUE(create.if_not_exists);
  EXPECT_FALSE(create.or_replace);
  EXPECT_EQ(create.name, (QualifiedName{"s", "t"}));
  ASSERT_EQ(create.request.schema.fields.size(), 7u);
  const auto& fields = create.request.schema.fields;
  EXPECT_FALSE(fields[0].nullable);
  EXPECT_EQ(fields[0].metadata["comment"], "the key");
  EXPECT_EQ(fields[2].GenerationExpression(), "CAST(ts AS DATE)");
  EXPECT_EQ(DeltaTypeName(*fields[3].type), "array<struct<k:string,v:map<string,array<int>>>>");
  EXPECT_EQ(DeltaTypeName(*fields[4].type), "decimal(10,2)");
  EXPECT_EQ(DeltaTypeName(*fields[5].type), "array<string>");
  EXPECT_EQ(DeltaTypeName(*fields[6].type), "struct<x:double,y:double>");
  EXPECT_EQ(create.request.properties.at("delta.constraints.positive"), "amount > 0 OR amount IS NULL");
  EXPECT_EQ(create.request.properties.at("delta.appendOnly"), "true");
  EXPECT_EQ(create.request.properties.at("custom.key"), "42");
  EXPECT_EQ(create.request.partition_columns, (std::vector<std::string>{"day"}));
  EXPECT_EQ(create.location, "some/where");
  EXPECT_EQ(create.request.description, "a table");
  EXPECT_FALSE(create.query.has_value());
}

TEST(GrammarTest, CreateTableForms) {
  auto replace = As<CreateTable>("CREATE OR REPLACE TABLE t AS SELECT 1 AS a");
  EXPECT_TRUE(replace.or_replace);
  EXPECT_FALSE(replace.has_columns);
  ASSERT_TRUE(replace.query.has_value());
  EXPECT_EQ(replace.query->sql, "SELECT 1 AS a");
  auto registered = As<CreateTable>("CREATE TABLE t LOCATION '/data/t'");
  EXPECT_EQ(registered.location, "/data/t");
  EXPECT_FALSE(registered.has_columns);
  EXPECT_TRUE(IsDuckDbs("CREATE TEMP TABLE t (a INT)"));
  EXPECT_TRUE(IsDuckDbs("CREATE VIEW v AS SELECT 1"));
  EXPECT_TRUE(IsDuckDbs("CREATE OR REPLACE MACRO m(x) AS x + 1"));
  EXPECT_ERROR_WITH(ErrorOf("CREATE TABLE t (a INT) USING parquet"), kInvalidArgument, "parquet");
  EXPECT_ERROR_WITH(ErrorOf("CREATE TABLE t (a INT PRIMARY KEY)"), kNotImplemented, "primary");
  EXPECT_ERROR_WITH(ErrorOf("CREATE TABLE t (a INT, CHECK (a > 0))"), kInvalidArgument,
                    "CONSTRAINT name CHECK");
  EXPECT_ERROR_WITH(ErrorOf("CREATE TABLE t (a INTERVAL)"), kInvalidArgument, "INTERVAL");
}

TEST(GrammarTest, BasinClauseWordsAreNamesToo) {
  auto create = As<CreateTable>(
      "CREATE TABLE t (location STRING, comment STRING, partitioned INT, zorder INT, \"select\" INT, "
      "tblproperties INT, version INT, timestamp TIMESTAMP, stream STRING, watermark INT, keys INT, "
      "CONSTRAINT check CHECK (location <> comment AND zorder > version))");
  ASSERT_EQ(create.request.schema.fields.size(), 11u);
  EXPECT_EQ(create.request.schema.fields[4].name, "select");
  EXPECT_EQ(create.request.properties.at("delta.constraints.check"),
            "location <> comment AND zorder > version");
  auto optimize = As<Optimize>("OPTIMIZE t WHERE zorder = 1 AND \"by\" > 2 ZORDER BY (zorder, \"by\")");
  EXPECT_EQ(optimize.request.where, "zorder = 1 AND \"by\" > 2");
  EXPECT_EQ(optimize.request.zorder_by, (std::vector<std::string>{"zorder", "by"}));
  auto update = As<Update>("UPDATE t SET location = 'x', comment = 'y' WHERE retain = 1 AND dry = run");
  EXPECT_EQ(update.update.assignments.size(), 2u);
  // Names that look like Basin's markers, where DuckDB reads them as names: nothing rewritten.
  ParsedStatement select = Parse("SELECT version, timestamp, stream, watermark FROM stream");
  EXPECT_TRUE(std::holds_alternative<DuckDbStatement>(select.body));
  EXPECT_EQ(select.duckdb_sql, select.text);
  EXPECT_TRUE(select.streams.empty());
}

TEST(GrammarTest, DropAlterShowDescribe) {
  auto drop = As<DropTable>("DROP TABLE IF EXISTS s.t");
  EXPECT_TRUE(drop.if_exists);
  EXPECT_EQ(drop.name, (QualifiedName{"s", "t"}));
  EXPECT_ERROR_WITH(ErrorOf("DROP TABLE a, b"), kInvalidArgument, "one object");  // DuckDB's refusal
  EXPECT_TRUE(IsDuckDbs("DROP TABLE t CASCADE"));
  EXPECT_TRUE(IsDuckDbs("DROP VIEW v"));

  using Kind = commands::AlterTableRequest::Kind;
  struct Case {
    std::string sql;
    Kind kind;
  };
  for (const Case& c : std::vector<Case>{
           {"ALTER TABLE t ADD COLUMNS (a INT COMMENT 'x', b STRING)", Kind::kAddColumns},
           {"ALTER TABLE t ADD COLUMN a INT", Kind::kAddColumns},
           {"ALTER TABLE t ADD a ARRAY<INT>", Kind::kAddColumns},
           {"ALTER TABLE t SET TBLPROPERTIES ('delta.enableChangeDataFeed' = true)", Kind::kSetProperties},
           {"ALTER TABLE t UNSET TBLPROPERTIES IF EXISTS ('a', b.c)", Kind::kUnsetProperties},
           {"ALTER TABLE t ADD CONSTRAINT c CHECK (CASE WHEN a > 0 THEN true ELSE b END)",
            Kind::kAddConstraint},
           {"ALTER TABLE t DROP CONSTRAINT IF EXISTS c", Kind::kDropConstraint},
           {"ALTER TABLE t ALTER COLUMN a SET NOT NULL", Kind::kSetNotNull},
           {"ALTER TABLE t CHANGE a DROP NOT NULL", Kind::kDropNotNull},
           {"ALTER TABLE t RENAME COLUMN a TO \"b c\"", Kind::kRenameColumn},
           {"ALTER TABLE t DROP COLUMNS IF EXISTS (a, b)", Kind::kDropColumn},
           {"ALTER TABLE t DROP COLUMN a", Kind::kDropColumn},
       }) {
    auto alter = As<AlterTable>(c.sql);
    EXPECT_EQ(alter.request.kind, c.kind) << c.sql;
    EXPECT_OK(alter.unsupported);
  }
  auto check = As<AlterTable>("ALTER TABLE t ADD CONSTRAINT c CHECK (CASE WHEN a > 0 THEN true ELSE b END)");
  EXPECT_EQ(check.request.constraint_expr, "CASE WHEN a > 0 THEN true ELSE b END");
  auto drop_columns = As<AlterTable>("ALTER TABLE t DROP COLUMNS IF EXISTS (a, b)");
  EXPECT_TRUE(drop_columns.request.if_exists);
  EXPECT_EQ(drop_columns.request.column, "a");
  EXPECT_EQ(drop_columns.request.more_columns, (std::vector<std::string>{"b"}));
  // DuckDB's ALTER TABLE forms (for DuckDB's tables) carry Basin's objection.
  auto duckdb_default = As<AlterTable>("ALTER TABLE t ADD COLUMN c INT DEFAULT 5");
  EXPECT_EQ(duckdb_default.unsupported.code(), ErrorCode::kNotImplemented);
  auto rename = As<AlterTable>("ALTER TABLE t RENAME TO u");
  EXPECT_EQ(rename.unsupported.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(rename.unsupported.message().find("line 1, column 15"), std::string::npos)
      << rename.unsupported.message();
  ASSERT_ERROR_CODE(ErrorOf("ALTER TABLE t FROBNICATE"), kInvalidArgument);

  EXPECT_EQ(As<ShowTables>("SHOW TABLES IN Sales").schema, "sales");
  EXPECT_FALSE(As<ShowTables>("SHOW TABLES").schema.has_value());
  EXPECT_TRUE(IsDuckDbs("SHOW ALL TABLES"));
  auto describe = As<DescribeTable>("DESCRIBE TABLE s.t VERSION AS OF 3");
  EXPECT_EQ(describe.name, (QualifiedName{"s", "t"}));
  EXPECT_EQ(describe.at.version, 3);
  EXPECT_EQ(As<DescribeTable>("DESC t TIMESTAMP AS OF '2024-01-01'").at.timestamp, "2024-01-01");
  EXPECT_TRUE(IsDuckDbs("DESCRIBE SELECT 1 AS a"));
  EXPECT_EQ(As<ShowTblProperties>("SHOW TBLPROPERTIES t VERSION AS OF 2").at.version, 2);
  auto history = As<DescribeHistory>("DESCRIBE HISTORY s.t LIMIT 5");
  EXPECT_EQ(std::get<QualifiedName>(history.table), (QualifiedName{"s", "t"}));
  EXPECT_EQ(history.limit, 5);
  auto detail = As<DescribeDetail>("DESCRIBE DETAIL delta_scan('/x y', version => 3)");
  EXPECT_EQ(std::get<DeltaScanArguments>(detail.table).path, "/x y");
  EXPECT_EQ(std::get<DeltaScanArguments>(detail.table).at.version, 3);
  ASSERT_ERROR_CODE(ErrorOf("DESCRIBE HISTORY t LIMIT -1"), kInvalidArgument);
}

// --- writes, DML ---

TEST(GrammarTest, InsertThroughDuckDbsTree) {
  auto insert = As<Insert>("INSERT INTO s.t (\"partition\", replace) BY POSITION SELECT * FROM u");
  EXPECT_EQ(insert.insert.target.Parts(), (std::vector<std::string>{"s", "t"}));
  EXPECT_EQ(insert.insert.columns, (std::vector<std::string>{"partition", "replace"}));
  EXPECT_EQ(insert.insert.query, "SELECT * FROM u");
  EXPECT_FALSE(insert.overwrite);
  EXPECT_TRUE(As<Insert>("INSERT INTO t BY NAME SELECT 1 AS a").insert.by_name);
}

TEST(GrammarTest, InsertInBasinsForms) {
  auto insert = As<Insert>(
      "INSERT WITH SCHEMA EVOLUTION INTO TABLE t PARTITION (p = CASE WHEN 1 > 0 THEN 'a;' ELSE 'b' END, q, "
      "r = [1, 2]) (a, b) SELECT a, b FROM u");
  EXPECT_TRUE(insert.schema_evolution);
  EXPECT_FALSE(insert.overwrite);
  ASSERT_EQ(insert.partitions.size(), 3u);
  EXPECT_EQ(insert.partitions[0].value, "CASE WHEN 1 > 0 THEN 'a;' ELSE 'b' END");
  EXPECT_FALSE(insert.partitions[1].value.has_value());
  EXPECT_EQ(insert.partitions[2].value, "[1, 2]");
  EXPECT_EQ(insert.insert.columns, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(insert.insert.query, "SELECT a, b FROM u");

  auto overwrite = As<Insert>("INSERT OVERWRITE t BY NAME VALUES (1, 'x')");
  EXPECT_TRUE(overwrite.overwrite);
  EXPECT_TRUE(overwrite.insert.by_name);
  EXPECT_EQ(overwrite.insert.query, "VALUES (1, 'x')");

  auto replace = As<Insert>("INSERT INTO t REPLACE WHERE d = (SELECT max(d) FROM u) (SELECT * FROM v)");
  EXPECT_EQ(replace.replace_where, "d = (SELECT max(d) FROM u)");
  EXPECT_EQ(replace.insert.query, "(SELECT * FROM v)");
  // The predicate's first possible end, before '(', is not an expression followed by a
  // query; the next one is.
  auto call = As<Insert>("INSERT INTO t REPLACE WHERE f (1) SELECT 2");
  EXPECT_EQ(call.replace_where, "f (1)");
  EXPECT_EQ(call.insert.query, "SELECT 2");
  EXPECT_ERROR_WITH(ErrorOf("INSERT OVERWRITE t (a) BY NAME SELECT 1"), kInvalidArgument, "BY NAME");
}

TEST(GrammarTest, DmlThroughDuckDbsTree) {
  auto merge = As<Merge>(
      "MERGE WITH SCHEMA EVOLUTION INTO t USING src VERSION AS OF 3 AS s ON t.id = s.id "
      "WHEN MATCHED THEN UPDATE SET qty = CASE WHEN s.qty > 0 THEN s.qty ELSE t.qty END "
      "WHEN NOT MATCHED THEN INSERT *");
  EXPECT_TRUE(merge.schema_evolution);
  EXPECT_EQ(merge.merge.source, "src AT (VERSION => 3)");
  EXPECT_EQ(merge.merge.source_alias, "s");
  ASSERT_EQ(merge.merge.actions.size(), 2u);
  EXPECT_EQ(merge.merge.actions[0].assignments[0].expression,
            "CASE  WHEN ((s.qty > 0)) THEN (s.qty) ELSE t.qty END");
  EXPECT_FALSE(As<Merge>("MERGE INTO t USING s ON true WHEN MATCHED THEN DELETE").schema_evolution);
  auto del = As<Delete>("DELETE FROM t AS x WHERE x.a IN (SELECT a FROM u TIMESTAMP AS OF '2024-01-01')");
  EXPECT_EQ(del.del.target.alias, "x");
  EXPECT_NE(del.del.where.find("u AT (TIMESTAMP => '2024-01-01')"), std::string::npos) << del.del.where;
  auto update = As<Update>("UPDATE t SET a = sum(b) OVER (PARTITION BY c), b = lambda x: x WHERE d");
  EXPECT_EQ(update.update.assignments.size(), 2u);
  EXPECT_EQ(update.update.where, "d");
}

// --- time travel and streams ---

TEST(GrammarTest, TimeTravelBecomesDuckDbsAtClause) {
  ParsedStatement select = Parse(
      "SELECT 'x VERSION AS OF 3' FROM t VERSION AS OF 3 JOIN s.u TIMESTAMP AS OF now() - INTERVAL 1 DAY AS "
      "x "
      "ON t.a = x.a JOIN v TIMESTAMP AS OF '2024-01-01' AS w (a, b) USING (a) -- VERSION AS OF 2");
  EXPECT_TRUE(std::holds_alternative<DuckDbStatement>(select.body));
  EXPECT_EQ(
      select.duckdb_sql,
      "SELECT 'x VERSION AS OF 3' FROM t AT (VERSION => 3) JOIN s.u AS x AT (TIMESTAMP => now() - INTERVAL 1 "
      "DAY) ON t.a = x.a JOIN v AS w (a, b) AT (TIMESTAMP => '2024-01-01') USING (a) -- VERSION AS OF 2");
  auto ctas = As<CreateTable>("CREATE TABLE c AS SELECT * FROM t VERSION AS OF 1 x");
  EXPECT_EQ(ctas.query->sql, "SELECT * FROM t x AT (VERSION => 1)");
  auto insert = As<Insert>("INSERT INTO c SELECT * FROM t VERSION AS OF 1");
  EXPECT_EQ(insert.insert.query, "SELECT * FROM t AT (VERSION => 1)");
  // Spark's and Basin's spellings DuckDB's grammar lacks, rewritten the same way.
  auto update = As<Update>("UPDATE t AS x SET x.a = 1, b = 2, x.c = 3 WHERE x.d = 4");
  ASSERT_EQ(update.update.assignments.size(), 3u);
  EXPECT_EQ(update.update.assignments[2].column, "c");
  EXPECT_EQ(Parse("SELECT * FROM delta_scan('p', timestamp => '2024-01-01')").duckdb_sql,
            "SELECT * FROM delta_scan('p', \"timestamp\" => '2024-01-01')");
  EXPECT_EQ(Parse("SELECT count(*) FROM default.t WHERE t.x = 'default.y'").duckdb_sql,
            "SELECT count(*) FROM \"default\".t WHERE t.x = 'default.y'");
  // Not a table reference: DuckDB's error on the statement as written.
  EXPECT_ERROR_WITH(ErrorOf("SELECT 1 VERSION AS OF 3"), kInvalidArgument, "line 1, column 10");
}

// PostgreSQL's spellings in psql's and JDBC's catalog queries, which DuckDB parses but
// reads otherwise, rewritten on tokens; strings and comments holding them are left alone.
TEST(GrammarTest, PostgresSpellingsBecomeDuckDbs) {
  EXPECT_EQ(
      Parse("SELECT 1 WHERE c.relname OPERATOR(pg_catalog.~) '^(t)$' COLLATE pg_catalog.default").duckdb_sql,
      "SELECT 1 WHERE c.relname OPERATOR(           ~) '^(t)$' " + std::string(26, ' '));
  EXPECT_EQ(
      Parse("SELECT x::pg_catalog.regtype::pg_catalog.text, 'OPERATOR(pg_catalog.~)' -- ::pg_catalog.text")
          .duckdb_sql,
      "SELECT x::           regtype::           text, 'OPERATOR(pg_catalog.~)' -- ::pg_catalog.text");
  EXPECT_EQ(Parse("SELECT 1 WHERE d.classoid = 'pg_class'::pg_catalog.regclass").duckdb_sql,
            std::string("SELECT 1 WHERE d.classoid = ") + engine::kRegclassFunction + "('pg_class')");
  EXPECT_EQ(
      Parse("SELECT s FROM pg_catalog.generate_series(0, pg_catalog.array_upper(a::pg_catalog.int2[], 1)) s")
          .duckdb_sql,
      "SELECT s FROM            generate_series(0, pg_catalog.array_upper(a::           int2[], 1)) s(s)");
  // DuckDB's own spellings are DuckDB's business.
  EXPECT_EQ(Parse("SELECT 'a' ~ 'b', x::text FROM generate_series(1, 2) s").duckdb_sql,
            "SELECT 'a' ~ 'b', x::text FROM generate_series(1, 2) s");
}

TEST(GrammarTest, StreamingSourcesAreRecorded) {
  ParsedStatement select = Parse(
      "SELECT * FROM STREAM read_kafka('topic', servers => 'h:9092') WATERMARK ts DELAY OF INTERVAL 10 "
      "SECONDS AS k "
      "JOIN STREAM(s.events) e ON k.id = e.id");
  ASSERT_EQ(select.streams.size(), 2u);
  const StreamSource& kafka = select.streams[0];
  EXPECT_FALSE(kafka.is_table);
  EXPECT_EQ(kafka.source, "read_kafka('topic', servers => 'h:9092')");
  EXPECT_EQ(select.duckdb_sql.substr(kafka.offset, 10), "read_kafka");
  ASSERT_TRUE(kafka.watermark.has_value());
  EXPECT_EQ(kafka.watermark->column, (QualifiedName{"ts"}));
  EXPECT_EQ(kafka.watermark->delay, "INTERVAL 10 SECONDS");
  EXPECT_TRUE(select.streams[1].is_table);
  EXPECT_EQ(select.streams[1].source, "s.events");
  // STREAM(table) is read through basin_stream_table, keeping the alias; each call carries
  // its source's place.
  EXPECT_EQ(select.duckdb_sql.substr(select.streams[1].offset, 59),
            "basin_stream_table('s.events', basin_stream_source => 1) e ");
  EXPECT_NE(select.duckdb_sql.find("read_kafka('topic', servers => 'h:9092', basin_stream_source => 0)"),
            std::string::npos)
      << select.duckdb_sql;
  EXPECT_EQ(kafka.index, 0);
  EXPECT_EQ(select.streams[1].index, 1);
  EXPECT_FALSE(engine::CheckSqlSlot(select.duckdb_sql, engine::SqlSlot::kQuery).has_value())
      << select.duckdb_sql;

  // DuckDB reads STREAM f('x') as the table stream aliased f('x'): a marker all the same.
  for (const char* sql :
       {"SELECT * FROM STREAM read_files('/in')", "INSERT INTO t SELECT * FROM STREAM f('x')"}) {
    ParsedStatement single = Parse(sql);
    ASSERT_EQ(single.streams.size(), 1u) << sql;
    EXPECT_EQ(single.duckdb_sql.find("STREAM"), std::string::npos) << single.duckdb_sql;
  }

  ParsedStatement insert = Parse("INSERT INTO t SELECT * FROM STREAM read_files('/in', format => 'json')");
  EXPECT_TRUE(std::holds_alternative<Insert>(insert.body));
  ASSERT_EQ(insert.streams.size(), 1u);
  EXPECT_EQ(insert.streams[0].source, "read_files('/in', format => 'json')");
  EXPECT_TRUE(insert.streams[0].is_files);
  EXPECT_FALSE(insert.streams[0].is_changes);
  EXPECT_FALSE(Parse("SELECT * FROM STREAM f('x')").streams[0].is_files);

  ParsedStatement merge = Parse(
      "MERGE INTO t USING (SELECT * FROM STREAM table_changes('s', 0) WATERMARK s.ts DELAY OF INTERVAL '1' "
      "MINUTE) AS c ON t.id = c.id WHEN MATCHED THEN DELETE");
  EXPECT_TRUE(std::holds_alternative<Merge>(merge.body));
  ASSERT_EQ(merge.streams.size(), 1u);
  EXPECT_EQ(merge.streams[0].watermark->column, (QualifiedName{"s", "ts"}));
  // STREAM table_changes(...) is read through basin_stream_changes.
  EXPECT_TRUE(merge.streams[0].is_changes);
  EXPECT_EQ(merge.duckdb_sql.substr(merge.streams[0].offset, 54),
            "basin_stream_changes('s', 0, basin_stream_source => 0)");

  // STREAM(t, name => value, ...): options, each value as written.
  ParsedStatement options = Parse(
      "SELECT * FROM STREAM(s.t, startingVersion => 3 + 1, startingTimestamp => '2026-01-01, noon', "
      "skipChangeCommits => (true))");
  ASSERT_EQ(options.streams.size(), 1u);
  EXPECT_EQ(options.streams[0].source, "s.t");
  ASSERT_EQ(options.streams[0].options.size(), 3u);
  EXPECT_EQ(options.streams[0].options[0].name, "startingVersion");
  EXPECT_EQ(options.streams[0].options[0].value, "3 + 1");
  EXPECT_EQ(options.streams[0].options[1].value, "'2026-01-01, noon'");
  EXPECT_EQ(options.streams[0].options[2].value, "(true)");
  EXPECT_EQ(options.duckdb_sql, "SELECT * FROM basin_stream_table('s.t', basin_stream_source => 0) AS \"t\"");

  auto ctas =
      As<CreateTable>("CREATE TABLE c AS SELECT * FROM STREAM(src) WATERMARK t DELAY OF INTERVAL 5 SECONDS");
  ASSERT_EQ(ctas.query->streams.size(), 1u);
  EXPECT_EQ(ctas.query->sql.substr(ctas.query->streams[0].offset, 60),
            "basin_stream_table('src', basin_stream_source => 0) AS \"src\"");

  // A call without arguments takes the source's place as its only one.
  EXPECT_EQ(Parse("SELECT * FROM STREAM f()").streams[0].relation, "f(basin_stream_source => 0)");
}

// DuckDB's grammar accepts FROM STREAM(t) as a call of a table function `stream`; its tree
// finds the marker wherever a table reference stands, and only there.
TEST(GrammarTest, StreamOfTableFoundInDuckDbsTree) {
  ParsedStatement insert =
      Parse("INSERT INTO silver BY NAME SELECT *, 1 AS n FROM STREAM(bronze) WHERE bronze.id > 0");
  ASSERT_TRUE(std::holds_alternative<Insert>(insert.body));
  ASSERT_EQ(insert.streams.size(), 1u);
  EXPECT_TRUE(insert.streams[0].is_table);
  EXPECT_EQ(insert.streams[0].source, "bronze");
  EXPECT_EQ(std::get<Insert>(insert.body).insert.query,
            "SELECT *, 1 AS n FROM basin_stream_table('bronze', basin_stream_source := 0) AS bronze WHERE "
            "(bronze.id > 0)");

  ParsedStatement merge = Parse(
      "MERGE INTO silver t USING (SELECT * FROM STREAM(\"My Schema\".bronze) b WHERE b.ok) s ON t.id = s.id "
      "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *");
  ASSERT_TRUE(std::holds_alternative<Merge>(merge.body));
  ASSERT_EQ(merge.streams.size(), 1u);
  EXPECT_EQ(merge.streams[0].source, "\"My Schema\".bronze");
  EXPECT_NE(
      merge.duckdb_sql.find("basin_stream_table('\"My Schema\".bronze', basin_stream_source => 0) b WHERE"),
      std::string::npos)
      << merge.duckdb_sql;

  // In a CTE, a join and a subquery of WHERE.
  for (const char* sql :
       {"WITH x AS (SELECT * FROM STREAM(a)) SELECT * FROM x", "SELECT * FROM d JOIN STREAM(a) ON d.k = a.k",
        "SELECT * FROM d WHERE d.k IN (SELECT k FROM STREAM(a))"}) {
    ParsedStatement parsed = Parse(sql);
    ASSERT_EQ(parsed.streams.size(), 1u) << sql;
    EXPECT_EQ(parsed.streams[0].source, "a") << sql;
    EXPECT_NE(parsed.duckdb_sql.find("basin_stream_table('a', basin_stream_source => 0) AS \"a\""),
              std::string::npos)
        << parsed.duckdb_sql;
  }

  // A literal argument is no table name, and `stream` as a column or a scalar call is no
  // table reference: the text goes to DuckDB as written.
  for (const char* sql : {"SELECT * FROM stream('x')", "SELECT stream(a) FROM t", "SELECT stream FROM t"}) {
    ParsedStatement parsed = Parse(sql);
    EXPECT_TRUE(parsed.streams.empty()) << sql;
    EXPECT_EQ(parsed.duckdb_sql, sql);
  }
}

// --- maintenance and settings ---

TEST(GrammarTest, MaintenanceAndSettings) {
  auto optimize = As<Optimize>("OPTIMIZE s.t ZORDER BY a, b");
  EXPECT_EQ(optimize.name, (QualifiedName{"s", "t"}));
  EXPECT_EQ(optimize.request.where, "");
  EXPECT_EQ(optimize.request.zorder_by, (std::vector<std::string>{"a", "b"}));
  auto vacuum = As<Vacuum>("VACUUM t RETAIN 168 HOURS DRY RUN");
  EXPECT_EQ(vacuum.request.retain_hours, 168.0);
  EXPECT_TRUE(vacuum.request.dry_run);
  EXPECT_TRUE(IsDuckDbs("VACUUM"));
  EXPECT_TRUE(IsDuckDbs("VACUUM ANALYZE t"));
  auto restore = As<Restore>("RESTORE TABLE t TO VERSION AS OF 3");
  EXPECT_EQ(restore.request.version, 3);
  EXPECT_EQ(As<Restore>("RESTORE t TIMESTAMP AS OF '2024-01-01 00:00:00'").request.timestamp,
            "2024-01-01 00:00:00");
  ASSERT_ERROR_CODE(ErrorOf("RESTORE t"), kInvalidArgument);
  auto set = As<Setting>("SET basin.Partition_Overwrite_Mode = 'dynamic'");
  EXPECT_EQ(set.name, "partition_overwrite_mode");
  EXPECT_EQ(set.value, "dynamic");
  EXPECT_EQ(As<Setting>("SET basin.txn_version TO 5").value, "5");
  EXPECT_FALSE(As<Setting>("RESET basin.dml_mode").value.has_value());
  // Other SETs and SHOWs as DuckDB's parser reads them: the session keeps some, DuckDB the rest.
  auto threads = As<SetVariable>("SET threads = 2");
  EXPECT_EQ(threads.set.name, "threads");
  EXPECT_EQ(threads.set.value, "2");
  auto timeout = As<SetVariable>("SET SESSION statement_timeout TO '5s'");
  EXPECT_EQ(timeout.set.name, "statement_timeout");
  EXPECT_EQ(timeout.set.value, "5s");
  EXPECT_FALSE(timeout.set.global);
  EXPECT_EQ(As<SetVariable>("SET statement_timeout = 5000").set.value, "5000");
  EXPECT_FALSE(As<SetVariable>("RESET statement_timeout").set.value.has_value());
  EXPECT_FALSE(As<SetVariable>("SET statement_timeout TO DEFAULT").set.value.has_value());
  EXPECT_TRUE(As<SetVariable>("SET GLOBAL threads = 2").set.global);
  EXPECT_TRUE(As<SetVariable>("SET VARIABLE statement_timeout = 2").set.variable);
  ASSERT_ERROR_CODE(ErrorOf("SET LOCAL statement_timeout = 1"), kInvalidArgument);
  EXPECT_EQ(As<ShowVariable>("SHOW TRANSACTION ISOLATION LEVEL").name, "transaction_isolation");
  EXPECT_EQ(As<ShowVariable>("SHOW TIME ZONE").name, "timezone");
  EXPECT_EQ(As<ShowVariable>("SHOW \"DateStyle\"").name, "DateStyle");
  EXPECT_EQ(As<ShowVariable>("SHOW ALL").name, "all");
  EXPECT_EQ(As<ShowVariable>("show all").name, "all");
  // DuckDB's own: its SHOW ALL TABLES, SHOW of a qualified table or a query, DESCRIBE.
  EXPECT_TRUE(IsDuckDbs("SHOW ALL TABLES"));
  EXPECT_TRUE(IsDuckDbs("SHOW s.t"));
  EXPECT_TRUE(IsDuckDbs("SHOW SELECT 1"));
  EXPECT_FALSE(std::holds_alternative<ShowVariable>(Parse("DESCRIBE server_version").body));
}

// --- pipelines ---

TEST(GrammarTest, StreamingTablesAndMaterializedViews) {
  auto table = As<CreateStreamingTable>(
      "CREATE OR REFRESH STREAMING TABLE silver.orders (\n"
      "  id BIGINT NOT NULL, amount DECIMAL(10,2) COMMENT 'x', note,\n"
      "  CONSTRAINT valid_id EXPECT (id IS NOT NULL) ON VIOLATION DROP ROW,\n"
      "  CONSTRAINT sane EXPECT (CASE WHEN amount > 0 THEN true ELSE false END) ON VIOLATION FAIL UPDATE,\n"
      "  CONSTRAINT keep EXPECT (note <> '') ON VIOLATION QUARANTINE,\n"
      "  CONSTRAINT warn EXPECT (amount < 100),\n"
      "  CONSTRAINT c CHECK (id > 0)\n"
      ") PARTITIONED BY (id) TBLPROPERTIES ('k' = 'v') COMMENT 'silver'\n"
      "AS SELECT * FROM STREAM read_kafka('orders') WATERMARK ts DELAY OF INTERVAL 1 MINUTE");
  const PipelineTable& t = table.table;
  EXPECT_TRUE(t.or_refresh);
  EXPECT_EQ(t.name, (QualifiedName{"silver", "orders"}));
  ASSERT_EQ(t.columns.size(), 3u);
  EXPECT_EQ(t.columns[2].type, nullptr);  // a column without a type
  ASSERT_EQ(t.expectations.size(), 4u);
  using V = Expectation::OnViolation;
  EXPECT_EQ(t.expectations[0].on_violation, V::kDropRow);
  EXPECT_EQ(t.expectations[1].on_violation, V::kFailUpdate);
  EXPECT_EQ(t.expectations[1].condition, "CASE WHEN amount > 0 THEN true ELSE false END");
  EXPECT_EQ(t.expectations[2].on_violation, V::kQuarantine);
  EXPECT_EQ(t.expectations[3].on_violation, V::kKeep);
  EXPECT_EQ(t.checks.at("c"), "id > 0");
  EXPECT_EQ(t.partition_columns, (std::vector<std::string>{"id"}));
  EXPECT_EQ(t.comment, "silver");
  ASSERT_TRUE(t.query.has_value());
  ASSERT_EQ(t.query->streams.size(), 1u);
  EXPECT_EQ(t.query->streams[0].watermark->delay, "INTERVAL 1 MINUTE");

  EXPECT_FALSE(As<CreateStreamingTable>("CREATE STREAMING TABLE raw").table.or_refresh);
  auto view =
      As<CreateMaterializedView>("CREATE OR REFRESH MATERIALIZED VIEW gold AS SELECT count(*) FROM silver");
  EXPECT_EQ(view.table.query->sql, "SELECT count(*) FROM silver");
  EXPECT_ERROR_WITH(ErrorOf("CREATE OR REFRESH MATERIALIZED VIEW gold"), kInvalidArgument, "AS query");
  EXPECT_ERROR_WITH(ErrorOf("CREATE OR REFRESH TABLE x"), kInvalidArgument,
                    "STREAMING TABLE or MATERIALIZED VIEW");
}

TEST(GrammarTest, Flows) {
  auto insert =
      As<CreateFlow>("CREATE FLOW backfill AS INSERT INTO ONCE silver.t BY NAME SELECT * FROM bronze");
  EXPECT_EQ(insert.name, "backfill");
  const auto& flow = std::get<InsertFlow>(insert.flow);
  EXPECT_TRUE(flow.once);
  EXPECT_EQ(flow.target, (QualifiedName{"silver", "t"}));
  EXPECT_EQ(flow.query.sql, "SELECT * FROM bronze");

  auto cdc = As<CreateFlow>(
      "CREATE FLOW f AS AUTO CDC INTO target FROM STREAM(cdc.src) KEYS (id, keys) IGNORE NULL UPDATES "
      "APPLY AS DELETE WHEN op = 'D' AND CASE WHEN sequence THEN true END "
      "APPLY AS TRUNCATE WHEN op = 'T' SEQUENCE BY struct_pack(a := ts, b := seq) "
      "COLUMNS * EXCEPT (op, _rescued) STORED AS SCD TYPE 2 TRACK HISTORY ON * EXCEPT (ts)");
  const auto& auto_cdc = std::get<AutoCdcFlow>(cdc.flow);
  EXPECT_EQ(auto_cdc.source, (QualifiedName{"cdc", "src"}));
  EXPECT_TRUE(auto_cdc.source_is_stream);
  EXPECT_EQ(auto_cdc.keys, (std::vector<std::string>{"id", "keys"}));
  EXPECT_TRUE(auto_cdc.ignore_null_updates);
  EXPECT_EQ(auto_cdc.apply_as_delete, "op = 'D' AND CASE WHEN sequence THEN true END");
  EXPECT_EQ(auto_cdc.apply_as_truncate, "op = 'T'");
  EXPECT_EQ(auto_cdc.sequence_by, "struct_pack(a := ts, b := seq)");
  ASSERT_TRUE(auto_cdc.columns.has_value());
  EXPECT_TRUE(auto_cdc.columns->all_except);
  EXPECT_EQ(auto_cdc.columns->columns, (std::vector<std::string>{"op", "_rescued"}));
  EXPECT_EQ(auto_cdc.scd_type, 2);
  EXPECT_EQ(auto_cdc.track_history->columns, (std::vector<std::string>{"ts"}));

  auto plain = std::get<AutoCdcFlow>(
      As<CreateFlow>("CREATE FLOW g AS AUTO CDC INTO t FROM s KEYS (id) SEQUENCE BY ts COLUMNS a, b").flow);
  EXPECT_FALSE(plain.source_is_stream);
  EXPECT_EQ(plain.sequence_by, "ts");
  EXPECT_EQ(plain.columns->columns, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(plain.scd_type, 1);
  ASSERT_ERROR_CODE(ErrorOf("CREATE FLOW g AS AUTO CDC INTO t FROM s KEYS (id) STORED AS SCD TYPE 3"),
                    kInvalidArgument);
  EXPECT_ERROR_WITH(ErrorOf("CREATE FLOW g AS AUTO CDC INTO t FROM s KEYS (id)"), kInvalidArgument,
                    "SEQUENCE BY");
}

// --- governance ---

TEST(GrammarTest, UsersRolesGrantsTokens) {
  auto user = As<CreateUser>("CREATE USER alice PASSWORD 'it''s secret'");
  EXPECT_EQ(user.name, "alice");
  EXPECT_EQ(user.password, "it's secret");
  EXPECT_EQ(As<CreateRole>("CREATE ROLE analysts").name, "analysts");
  auto drop = As<DropPrincipal>("DROP ROLE IF EXISTS analysts");
  EXPECT_TRUE(drop.is_role);
  EXPECT_TRUE(drop.if_exists);
  EXPECT_FALSE(As<DropPrincipal>("DROP USER bob").is_role);

  auto role = As<GrantOrRevoke>("GRANT analysts TO alice");
  EXPECT_EQ(role.role, "analysts");
  EXPECT_EQ(role.principal, "alice");
  auto grant = As<GrantOrRevoke>("GRANT SELECT, MODIFY ON TABLE s.t TO analysts");
  EXPECT_FALSE(grant.role.has_value());
  EXPECT_EQ(grant.privileges, (std::vector<Privilege>{Privilege::kSelect, Privilege::kModify}));
  EXPECT_EQ(grant.on.kind, Securable::Kind::kTable);
  EXPECT_EQ(grant.on.name, (QualifiedName{"s", "t"}));
  auto all = As<GrantOrRevoke>("GRANT ALL PRIVILEGES ON CATALOG TO admins");
  EXPECT_EQ(all.privileges, (std::vector<Privilege>{Privilege::kAll}));
  EXPECT_TRUE(all.on.name.empty());
  auto revoke = As<GrantOrRevoke>("REVOKE CREATE, MANAGE ON SCHEMA sales FROM bob");
  EXPECT_TRUE(revoke.revoke);
  EXPECT_EQ(revoke.on.kind, Securable::Kind::kSchema);
  EXPECT_TRUE(As<GrantOrRevoke>("REVOKE analysts FROM alice").role.has_value());
  auto show = As<ShowGrants>("SHOW GRANTS ON TABLE t TO alice");
  EXPECT_EQ(show.on->kind, Securable::Kind::kTable);
  EXPECT_EQ(show.principal, "alice");
  EXPECT_FALSE(As<ShowGrants>("SHOW GRANTS").on.has_value());
  auto token = As<CreateToken>("CREATE TOKEN FOR alice EXPIRES IN INTERVAL 30 DAYS");
  EXPECT_EQ(token.user, "alice");
  EXPECT_EQ(token.expires_in, "INTERVAL 30 DAYS");
  EXPECT_FALSE(As<CreateToken>("CREATE TOKEN").user.has_value());
  EXPECT_EQ(As<RevokeToken>("REVOKE TOKEN 'tok_123'").id, "tok_123");
  ASSERT_ERROR_CODE(ErrorOf("GRANT SELECT ON VIEW v TO x"), kInvalidArgument);
}

// --- every slot takes anything DuckDB takes there ---

TEST(GrammarTest, StreamSourcesAreReplacedByARelationUnderTheirAliases) {
  // What a stateful stream runs: each source (marker, call, options and watermark) is the
  // relation, under the alias its rows had; window(...) is quoted for DuckDB.
  ASSERT_OK_AND_ASSIGN(
      std::string replaced,
      ReplaceStreamSources(
          "INSERT INTO t SELECT window(k.ts, '1 minute')['start'], count(*) FROM STREAM "
          "read_kafka('topic', servers => 'h:9092') WATERMARK ts DELAY OF INTERVAL 10 SECONDS AS k "
          "JOIN STREAM(s.events, startingVersion => 3) ON k.id = events.id "
          "JOIN STREAM table_changes('c', 0) ON true GROUP BY window(k.ts, '1 minute')",
          "input"));
  ASSERT_OK_AND_ASSIGN(ParsedStatement parsed, ParseStatement(replaced));
  EXPECT_TRUE(parsed.streams.empty()) << replaced;
  const std::string& query = std::get<Insert>(parsed.body).insert.query;
  for (const char* part : {"FROM \"input\" AS k ", "JOIN \"input\" AS events ",
                           "JOIN \"input\" AS table_changes ", "GROUP BY \"window\"(k.ts, '1 minute')"}) {
    EXPECT_NE(query.find(part), std::string::npos) << part << " in " << query;
  }
  EXPECT_EQ(query.find("WATERMARK"), std::string::npos) << query;
  // The relations DuckDB reads for each source.
  ParsedStatement select = Parse(
      "SELECT * FROM STREAM read_kafka('topic') JOIN STREAM(s.events) ON true JOIN STREAM table_changes('c', "
      "0) "
      "ON true");
  ASSERT_EQ(select.streams.size(), 3u);
  EXPECT_EQ(select.streams[0].relation, "read_kafka('topic', basin_stream_source => 0)");
  EXPECT_EQ(select.streams[1].relation, "basin_stream_table('s.events', basin_stream_source => 1)");
  EXPECT_EQ(select.streams[2].relation, "basin_stream_changes('c', 0, basin_stream_source => 2)");
  // Nothing to replace: the statement as it is.
  EXPECT_EQ(ReplaceStreamSources("SELECT 1", "input").ValueOr(""), "SELECT 1");
}

TEST(GrammarTest, ExpressionSlotsTakeHostileExpressions) {
  struct SlotCase {
    std::string before, after;
    std::function<std::string(const ParsedStatement&)> slot;
  };
  auto body = [](const ParsedStatement& p) -> const StatementBody& { return p.body; };
  const std::vector<SlotCase> cases = {
      {"CREATE TABLE t (a INT, CONSTRAINT c CHECK (", "))",
       [&](const ParsedStatement& p) {
         return std::get<CreateTable>(body(p)).request.properties.at("delta.constraints.c");
       }},
      {"CREATE TABLE t (a INT, b INT GENERATED ALWAYS AS (", ") COMMENT 'x')",
       [&](const ParsedStatement& p) {
         return *std::get<CreateTable>(body(p)).request.schema.fields[1].GenerationExpression();
       }},
      {"ALTER TABLE t ADD CONSTRAINT c CHECK (", ")",
       [&](const ParsedStatement& p) { return std::get<AlterTable>(body(p)).request.constraint_expr; }},
      {"INSERT INTO t PARTITION (p = ", ", q) SELECT 1",
       [&](const ParsedStatement& p) { return *std::get<Insert>(body(p)).partitions[0].value; }},
      {"INSERT INTO t REPLACE WHERE ", " SELECT 1",
       [&](const ParsedStatement& p) { return *std::get<Insert>(body(p)).replace_where; }},
      {"OPTIMIZE t WHERE ", " ZORDER BY (a)",
       [&](const ParsedStatement& p) { return std::get<Optimize>(body(p)).request.where; }},
      {"OPTIMIZE t WHERE ", "",
       [&](const ParsedStatement& p) { return std::get<Optimize>(body(p)).request.where; }},
      {"CREATE STREAMING TABLE s (a INT, CONSTRAINT e EXPECT (", ") ON VIOLATION DROP ROW)",
       [&](const ParsedStatement& p) {
         return std::get<CreateStreamingTable>(body(p)).table.expectations[0].condition;
       }},
      {"CREATE FLOW f AS AUTO CDC INTO t FROM STREAM(s) KEYS (id) APPLY AS DELETE WHEN ",
       " APPLY AS TRUNCATE WHEN x SEQUENCE BY ts",
       [&](const ParsedStatement& p) {
         return *std::get<AutoCdcFlow>(std::get<CreateFlow>(body(p)).flow).apply_as_delete;
       }},
      {"CREATE FLOW f AS AUTO CDC INTO t FROM s KEYS (id) SEQUENCE BY ",
       " COLUMNS * EXCEPT (x) STORED AS SCD TYPE 1",
       [&](const ParsedStatement& p) {
         return std::get<AutoCdcFlow>(std::get<CreateFlow>(body(p)).flow).sequence_by;
       }},
      {"CREATE TOKEN FOR u EXPIRES IN ", "",
       [&](const ParsedStatement& p) { return *std::get<CreateToken>(body(p)).expires_in; }},
  };
  for (const SlotCase& c : cases) {
    for (const std::string& expression : HostileExpressions()) {
      const std::string sql = c.before + expression + c.after;
      auto parsed = ParseStatement(sql);
      ASSERT_TRUE(parsed.ok()) << sql << "\n" << parsed.status().ToString();
      EXPECT_EQ(c.slot(*parsed), expression) << sql;
    }
  }
}

TEST(GrammarTest, QuerySlotsTakeHostileQueries) {
  struct SlotCase {
    std::string before;
    std::function<std::string(const ParsedStatement&)> slot;
  };
  const std::vector<SlotCase> cases = {
      {"CREATE TABLE t AS ",
       [](const ParsedStatement& p) { return std::get<CreateTable>(p.body).query->sql; }},
      {"CREATE OR REPLACE TABLE t (a INT) COMMENT 'c' AS ",
       [](const ParsedStatement& p) { return std::get<CreateTable>(p.body).query->sql; }},
      {"INSERT OVERWRITE TABLE t ",
       [](const ParsedStatement& p) { return std::get<Insert>(p.body).insert.query; }},
      {"INSERT INTO t REPLACE WHERE a > 1 ",
       [](const ParsedStatement& p) { return std::get<Insert>(p.body).insert.query; }},
      {"CREATE OR REFRESH STREAMING TABLE s AS ",
       [](const ParsedStatement& p) { return std::get<CreateStreamingTable>(p.body).table.query->sql; }},
      {"CREATE MATERIALIZED VIEW m COMMENT 'x' AS ",
       [](const ParsedStatement& p) { return std::get<CreateMaterializedView>(p.body).table.query->sql; }},
      {"CREATE FLOW f AS INSERT INTO t BY NAME ",
       [](const ParsedStatement& p) {
         return std::get<InsertFlow>(std::get<CreateFlow>(p.body).flow).query.sql;
       }},
  };
  for (const SlotCase& c : cases) {
    for (const std::string& query : HostileQueries()) {
      const std::string sql = c.before + query;
      auto parsed = ParseStatement(sql);
      ASSERT_TRUE(parsed.ok()) << sql << "\n" << parsed.status().ToString();
      // A query slot ends at the last token: a trailing comment is not part of it.
      EXPECT_EQ(query.rfind(c.slot(*parsed), 0), 0u) << sql << "\n -> " << c.slot(*parsed);
    }
  }
}

// Whitespace and comments between every token of a statement change nothing in its parse.
TEST(GrammarTest, CommentsBetweenEveryTokenChangeNothing) {
  const std::vector<std::string> statements = {
      "CREATE TABLE s.t (a INT NOT NULL, b ARRAY<STRUCT<x: INT>>, CONSTRAINT c CHECK (a > 0)) PARTITIONED BY "
      "(a) "
      "TBLPROPERTIES ('k' = 'v') LOCATION 'l' COMMENT 'c' AS SELECT 1",
      "ALTER TABLE t ADD COLUMNS (a INT COMMENT 'x', b STRING)",
      "OPTIMIZE t WHERE a = 1 ZORDER BY (b, c)",
      "VACUUM t RETAIN 1 HOURS DRY RUN",
      "RESTORE TABLE t TO VERSION AS OF 2",
      "INSERT WITH SCHEMA EVOLUTION OVERWRITE t PARTITION (p = 1) SELECT 1",
      "DESCRIBE HISTORY delta_scan('x', version => 1) LIMIT 2",
      "SET basin.dml_mode = copy_on_write",
      "CREATE FLOW f AS AUTO CDC INTO t FROM STREAM(s) KEYS (id) SEQUENCE BY ts STORED AS SCD TYPE 2",
      "GRANT SELECT ON TABLE t TO u",
      "CREATE OR REFRESH STREAMING TABLE s (CONSTRAINT e EXPECT (a > 0) ON VIOLATION DROP ROW) AS SELECT 1",
  };
  const std::vector<std::string> gaps = {" /* c */ ", "\n-- line ; comment\n", " /* a /* nested */ b */ "};
  for (const std::string& sql : statements) {
    auto tokens = engine::TokenizeSql(sql);
    ASSERT_TRUE(tokens.ok()) << sql;
    for (const std::string& gap : gaps) {
      std::string spaced;
      size_t copied = 0;
      for (const engine::SqlToken& t : tokens.value()) {
        spaced += sql.substr(copied, t.begin - copied) + gap + sql.substr(t.begin, t.end - t.begin);
        copied = t.end;
      }
      spaced += gap;
      ParsedStatement plain = Parse(sql);
      ParsedStatement commented = Parse(spaced);
      EXPECT_EQ(plain.body.index(), commented.body.index()) << spaced;
      // The slots keep their comments inside them; their number of tokens is the same.
      if (const auto* a = std::get_if<Optimize>(&plain.body)) {
        const auto& b = std::get<Optimize>(commented.body);
        EXPECT_EQ(a->request.zorder_by, b.request.zorder_by);
        EXPECT_EQ(a->name, b.name);
      }
      if (const auto* a = std::get_if<CreateTable>(&plain.body)) {
        const auto& b = std::get<CreateTable>(commented.body);
        EXPECT_EQ(a->request.schema.fields.size(), b.request.schema.fields.size());
        EXPECT_EQ(a->request.partition_columns, b.request.partition_columns);
        EXPECT_EQ(a->location, b.location);
        EXPECT_EQ(a->request.description, b.request.description);
        EXPECT_EQ(a->request.properties.size(), b.request.properties.size());
      }
      if (const auto* a = std::get_if<Vacuum>(&plain.body)) {
        EXPECT_EQ(a->request.retain_hours, std::get<Vacuum>(commented.body).request.retain_hours);
        EXPECT_TRUE(std::get<Vacuum>(commented.body).request.dry_run);
      }
    }
  }
}

// Random damage to real statements: whatever the grammar makes of them, statements are the
// script's own text and a syntax error names a line and a column.
TEST(GrammarTest, DamagedStatementsKeepTheContracts) {
  const std::vector<std::string> seeds = {
      "CREATE TABLE s.t (a INT NOT NULL, b ARRAY<STRUCT<x: INT>>, CONSTRAINT c CHECK (a > 0)) PARTITIONED BY "
      "(a) "
      "AS SELECT * FROM u VERSION AS OF 2 x",
      "MERGE WITH SCHEMA EVOLUTION INTO t USING (SELECT * FROM STREAM read_kafka('k') WATERMARK ts DELAY OF "
      "INTERVAL 1 SECOND) s ON t.id = s.id WHEN MATCHED THEN UPDATE SET t.q = CASE WHEN s.q > 0 THEN 1 END",
      "INSERT INTO t PARTITION (p = 'x;y') REPLACE WHERE d = $$a$$ SELECT /* a /* b */ */ 1",
      "CREATE FLOW f AS AUTO CDC INTO t FROM STREAM(s) KEYS (id) APPLY AS DELETE WHEN op = 'D' SEQUENCE BY "
      "ts",
      "OPTIMIZE t WHERE zorder = 1 ZORDER BY (a); VACUUM t RETAIN 2 HOURS; GRANT SELECT ON TABLE t TO u",
  };
  const std::vector<std::string> insertions = {
      "(",      ")",         ",",  ";",      "'",  "\"", "/*", "*/", "--", "$$", "VERSION AS OF",
      "STREAM", "WATERMARK", "AS", "SELECT", "\n", "=>", "."};
  std::mt19937 random(99);
  for (int round = 0; round < 400; round++) {
    std::string script = seeds[random() % seeds.size()];
    for (int edit = 0, edits = 1 + static_cast<int>(random() % 3); edit < edits; edit++) {
      const size_t at = random() % (script.size() + 1);
      if (random() % 2 && !script.empty()) {
        script.erase(std::min(at, script.size() - 1), 1 + random() % 6);
      } else {
        script.insert(at, insertions[random() % insertions.size()]);
      }
    }
    size_t previous_end = 0;
    for (const engine::ScriptStatement& statement : engine::SplitSqlScript(script)) {
      ASSERT_GE(statement.offset, previous_end) << script;
      ASSERT_EQ(script.substr(statement.offset, statement.text.size()), statement.text) << script;
      previous_end = statement.offset + statement.text.size();
      auto parsed = ParseStatement(script, statement);
      if (parsed.ok()) {
        for (const StreamSource& stream : parsed->streams)
          EXPECT_LT(stream.offset, parsed->duckdb_sql.size());
      } else if (parsed.status().message().find("syntax error") != std::string::npos) {
        EXPECT_EQ(parsed.status().message().rfind("line ", 0), 0u) << script << "\n"
                                                                   << parsed.status().ToString();
      }
    }
  }
}

// --- errors ---

TEST(GrammarTest, SyntaxErrorsNameLineAndColumnOfTheScript) {
  EXPECT_ERROR_WITH(ErrorOf("OPTIMIZE t\nZORDER BY (a"), kInvalidArgument,
                    "line 2, column 13: syntax error at the end of the statement: expected ')'");
  // The furthest error: DuckDB reads `a = ZORDER` as a comparison with a column zorder.
  EXPECT_ERROR_WITH(ErrorOf("OPTIMIZE t WHERE a = ZORDER BY (a)"), kInvalidArgument,
                    "line 1, column 29: syntax error at or near \"BY\"");
  EXPECT_ERROR_WITH(ErrorOf("VACUUM t RETAIN x HOURS"), kInvalidArgument,
                    "line 1, column 17: syntax error at or near \"x\": expected a number of hours");
  // DuckDB's own error in a slot, at its place in the statement.
  EXPECT_ERROR_WITH(ErrorOf("CREATE TABLE t (\n  a INT,\n  CONSTRAINT c CHECK (a > > 1))"), kInvalidArgument,
                    "line 3, column 27: syntax error at or near \">\"");
  // DuckDB's error on a statement of its own.
  EXPECT_ERROR_WITH(ErrorOf("SELECT *\n  FRM t"), kInvalidArgument,
                    "line 2, column 7: syntax error at or near \"t\"");
  EXPECT_ERROR_WITH(ErrorOf("SELECT 'open"), kInvalidArgument,
                    "line 1, column 8: unterminated quoted string");

  // In a script: lines and columns of the script, not of the statement.
  const std::string script = "SELECT 1;\n\nSELECT 2; OPTIMIZE t\n  ZORDER BY a,";
  std::vector<engine::ScriptStatement> statements = engine::SplitSqlScript(script);
  ASSERT_EQ(statements.size(), 3u);
  EXPECT_OK(ParseStatement(script, statements[1]));
  EXPECT_ERROR_WITH(
      ParseStatement(script, statements[2]), kInvalidArgument,
      "line 4, column 15: syntax error at the end of the statement: expected a column to Z-order by");
}

}  // namespace
}  // namespace basin::sql::grammar
