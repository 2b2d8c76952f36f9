// engine/sql_text.h: DuckDB's tokens with exact ranges, the script splitter (checked
// against DuckDB's own duckdb_extract_statements on generated scripts), slot checks,
// positions, and DuckDB's syntax trees of INSERT, UPDATE, DELETE and MERGE.
#include "engine/sql_text.h"

#include <duckdb.h>
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "testing/test_util.h"

namespace basin::engine {
namespace {

std::vector<std::string> TokenTexts(const std::string& text) {
  auto tokens = TokenizeSql(text);
  EXPECT_TRUE(tokens.ok()) << (tokens.ok() ? "" : tokens.error().message);
  std::vector<std::string> out;
  if (!tokens.ok()) return out;
  for (const SqlToken& t : tokens.value()) out.push_back(text.substr(t.begin, t.end - t.begin));
  return out;
}

TEST(SqlTokensTest, RangesAreExactlyEachTokensText) {
  const std::string sql =
      "SELECT a::INT, \"Q\"\"x\" /* c */, 'it''s'--x\n, E'a\\'b', $$x;y$$, $t$ ; $t$, x->y, 1.5e-3,"
      " b->>'k', 'a'\n'b' /* a /* nested */ b */ FROM t";
  EXPECT_EQ(TokenTexts(sql), (std::vector<std::string>{
                                 "SELECT",  "a",   "::",       "INT", ",",        "\"Q\"\"x\"", ",",
                                 "'it''s'", ",",   "E'a\\'b'", ",",   "$$x;y$$",  ",",          "$t$ ; $t$",
                                 ",",       "x",   "->",       "y",   ",",        "1.5e-3",     ",",
                                 "b",       "->>", "'k'",      ",",   "'a'\n'b'", "FROM",       "t"}));
}

TEST(SqlTokensTest, KindsFollowDuckDb) {
  const std::string sql = "SELECT x, \"y\", 1, 'z', ::, ( FROM name";
  auto tokens = TokenizeSql(sql);
  ASSERT_TRUE(tokens.ok());
  std::vector<SqlTokenKind> kinds;
  for (const SqlToken& t : tokens.value()) kinds.push_back(t.kind);
  using K = SqlTokenKind;
  EXPECT_EQ(kinds, (std::vector<K>{K::kKeyword, K::kIdentifier, K::kOperator, K::kIdentifier, K::kOperator,
                                   K::kNumber, K::kOperator, K::kString, K::kOperator, K::kOperator,
                                   K::kOperator, K::kOperator, K::kKeyword, K::kKeyword}));
}

TEST(SqlTokensTest, UnreadableTextIsAnErrorAtItsStart) {
  for (const auto& [sql, offset] : std::vector<std::pair<std::string, size_t>>{
           {"SELECT 'abc", 7}, {"SELECT 1 /* open", 9}, {"SELECT \"abc", 7}, {"SELECT $$ x", 7}}) {
    auto tokens = TokenizeSql(sql);
    ASSERT_FALSE(tokens.ok()) << sql;
    EXPECT_EQ(tokens.error().offset, offset) << sql << ": " << tokens.error().message;
    EXPECT_NE(tokens.error().message.find("unterminated"), std::string::npos) << tokens.error().message;
  }
}

TEST(SqlTokensTest, UnicodeSpacesSeparateTokensWithoutMovingOffsets) {
  const std::string sql =
      "SELECT\xC2\xA0"
      "1,\xE2\x80\x83x";  // NBSP, EM SPACE
  EXPECT_EQ(TokenTexts(sql), (std::vector<std::string>{"SELECT", "1", ",", "x"}));
  auto split = SplitSqlScript(sql);
  ASSERT_EQ(split.size(), 1u);
  EXPECT_EQ(split[0].text, sql);
}

// Random token soups with whitespace and comments between every token: the ranges must
// give back exactly the tokens the soup was made of.
TEST(SqlTokensTest, GeneratedTextsGiveBackTheirTokens) {
  const std::vector<std::string> pool = {
      "SELECT",     "x",         "\"a b\"", "\"q\"\"q\"", "'s'", "'it''s'", "E'\\n'", "$$a;b$$",
      "$q$ -- $q$", "42",        "1.5",     "1e10",       "(",   ")",       "[",      "]",
      ",",          ".",         "::",      "->",         "->>", "=>",      "<=",     "<>",
      "!=",         "+",         "-",       "*",          "/",   "%",       "||",     "=",
      ">",          "timestamp", "version", "stream",     ";",   "$1",      "?",      "x'41'"};
  const std::vector<std::string> gaps = {
      " ",          "\n",   "\t",   " /* c */ ",      "/* a /* nested */ b */",
      " -- line\n", "--\n", "/**/", " /* ' \" $$ */ "};
  std::mt19937 random(20240615);
  for (int round = 0; round < 300; round++) {
    std::vector<std::string> expected;
    std::string text = random() % 2 ? gaps[random() % gaps.size()] : "";
    const size_t n = 1 + random() % 25;
    for (size_t i = 0; i < n; i++) {
      std::string token = pool[random() % pool.size()];
      // Two strings with a line break between are one constant: keep them apart.
      const bool string_token = token[0] == '\'' || token[0] == 'E' || token[0] == 'x';
      const bool previous_string =
          !expected.empty() &&
          (expected.back()[0] == '\'' || expected.back()[0] == 'E' || expected.back()[0] == 'x');
      if (string_token && previous_string) token = "0";
      expected.push_back(token);
      text += token;
      // A comment right after '-', '/' or '*' would be read with it ("---", "//*"): space them.
      if (std::string("-/*").find(token.back()) != std::string::npos) text += ' ';
      text += gaps[random() % gaps.size()];
    }
    EXPECT_EQ(TokenTexts(text), expected) << text;
  }
}

TEST(SqlScriptTest, SplitsWhereDuckDbSplits) {
  const std::string script =
      "SELECT ';' AS a; -- c; d\nSELECT $x$;$x$ /* ; */ ;; SELECT \"a;b\" FROM t;\n"
      "SELECT /* a /* b */ c */ 1; SELECT x >=/* it's */ 5 FROM t ; -- trailing ;\n";
  std::vector<ScriptStatement> statements = SplitSqlScript(script);
  std::vector<std::string> texts;
  for (const ScriptStatement& s : statements) {
    texts.push_back(s.text);
    EXPECT_EQ(script.substr(s.offset, s.text.size()), s.text);
  }
  EXPECT_EQ(texts,
            (std::vector<std::string>{"SELECT ';' AS a", "SELECT $x$;$x$", "SELECT \"a;b\" FROM t",
                                      "SELECT /* a /* b */ c */ 1", "SELECT x >=/* it's */ 5 FROM t"}));
  EXPECT_EQ(PositionInText(script, statements[1].offset).line, 2u);
}

TEST(SqlScriptTest, StatementsDuckDbCannotParseSplitAtSemicolons) {
  const std::string script = "OPTIMIZE t ZORDER BY (a);\nSELECT ';' AS x ; VACUUM t RETAIN 1 HOURS";
  std::vector<ScriptStatement> statements = SplitSqlScript(script);
  ASSERT_EQ(statements.size(), 3u);
  EXPECT_EQ(statements[0].text, "OPTIMIZE t ZORDER BY (a)");
  EXPECT_EQ(statements[1].text, "SELECT ';' AS x");
  EXPECT_EQ(statements[2].text, "VACUUM t RETAIN 1 HOURS");
  EXPECT_EQ(statements[2].offset, script.find("VACUUM"));
}

TEST(SqlScriptTest, UnreadableTextStaysInTheLastStatement) {
  std::vector<ScriptStatement> statements = SplitSqlScript("SELECT 1; SELECT 'open; SELECT 2");
  ASSERT_EQ(statements.size(), 2u);
  EXPECT_EQ(statements[0].text, "SELECT 1");
  EXPECT_EQ(statements[1].text, "SELECT 'open; SELECT 2");
  EXPECT_TRUE(SplitSqlScript("  -- nothing\n /* at all */ ;; ").empty());
}

TEST(SqlScriptTest, CompleteInputEndsWithASemicolon) {
  EXPECT_TRUE(IsCompleteSqlInput("SELECT 1;"));
  EXPECT_TRUE(IsCompleteSqlInput("SELECT 1; -- done\n"));
  EXPECT_TRUE(IsCompleteSqlInput("SELECT /* a /* ; */ b */ 1;"));
  EXPECT_FALSE(IsCompleteSqlInput("SELECT ';"));
  EXPECT_FALSE(IsCompleteSqlInput("SELECT 1; SELECT 2"));
  EXPECT_FALSE(IsCompleteSqlInput("SELECT 1 /* ; */"));
  EXPECT_FALSE(IsCompleteSqlInput("SELECT 1 /* a /* b */ ; */"));
  EXPECT_FALSE(IsCompleteSqlInput("-- only a comment;"));
  EXPECT_FALSE(IsCompleteSqlInput(";"));
}

// --- the splitter against DuckDB's own statement extraction ---

// DuckDB's statements of `script` through its C API: for each, the names of its result
// columns once prepared (or the error). Empty when DuckDB cannot extract them.
class DuckDbExtraction {
 public:
  DuckDbExtraction() {
    EXPECT_EQ(duckdb_open(nullptr, &db_), DuckDBSuccess);
    EXPECT_EQ(duckdb_connect(db_, &conn_), DuckDBSuccess);
  }
  ~DuckDbExtraction() {
    duckdb_disconnect(&conn_);
    duckdb_close(&db_);
  }

  std::optional<std::vector<std::string>> Extract(const std::string& script) {
    duckdb_extracted_statements extracted = nullptr;
    const idx_t count = duckdb_extract_statements(conn_, script.c_str(), &extracted);
    std::optional<std::vector<std::string>> out;
    if (count > 0 || duckdb_extract_statements_error(extracted) == nullptr) {
      out.emplace();
      for (idx_t i = 0; i < count; i++) {
        duckdb_prepared_statement prepared = nullptr;
        duckdb_prepare_extracted_statement(conn_, extracted, i, &prepared);
        out->push_back(Describe(prepared));
        duckdb_destroy_prepare(&prepared);
      }
    }
    duckdb_destroy_extracted(&extracted);
    return out;
  }

  // One statement prepared on its own.
  std::string Prepare(const std::string& statement) {
    duckdb_prepared_statement prepared = nullptr;
    duckdb_prepare(conn_, statement.c_str(), &prepared);
    std::string out = Describe(prepared);
    duckdb_destroy_prepare(&prepared);
    return out;
  }

 private:
  static std::string Describe(duckdb_prepared_statement prepared) {
    if (const char* error = duckdb_prepare_error(prepared)) return std::string("error: ") + error;
    std::string out = "type " + std::to_string(duckdb_prepared_statement_type(prepared)) + ":";
    for (idx_t c = 0; c < duckdb_prepared_statement_column_count(prepared); c++) {
      out += std::string(" ") + duckdb_prepared_statement_column_name(prepared, c);
    }
    return out;
  }

  duckdb_database db_ = nullptr;
  duckdb_connection conn_ = nullptr;
};

// Statements whose texts hide ';', comments and quotes, each with its own column names.
const std::vector<std::string>& StatementPool() {
  static const std::vector<std::string> pool = {
      "SELECT ';' AS s1",
      "SELECT $$;$$ AS s2",
      "SELECT /* ; /* ; */ ; */ 1 AS s3",
      "SELECT 1 AS \"s;4\"",
      "SELECT 'it''s;' AS s5 -- a comment; with a semicolon\n",
      "SELECT E'\\';' AS s6",
      "SELECT CASE WHEN 1 > 0 THEN ';' ELSE 'x' END AS s7",
      "WITH c AS (SELECT 1 AS x) SELECT x AS s8 FROM c",
      "VALUES (1, ';')",
      "SELECT [x * 2 for x in [1, 2]] AS s9",
      "SELECT list_transform([1], x -> x + 1) AS s10",
      "SELECT sum(i) OVER (ORDER BY i ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS s11 FROM range(3) t(i)",
      "FROM (SELECT 1 AS s12)",
      "SELECT $tag$ ; $ $tag$ AS s13",
      "SELECT 'a'\n'b' AS s14",
      "SELECT \"a\"\"b\" AS s15 FROM (SELECT 1 AS \"a\"\"b\")",
      "SELECT 1 AS s16 WHERE 1 IN (SELECT 1 /* ; */)",
      "CREATE TEMP TABLE IF NOT EXISTS s17 AS SELECT ';' AS x",
      "SET threads = 2",
  };
  return pool;
}

const std::vector<std::string>& Separators() {
  static const std::vector<std::string> separators = {
      ";", ";\n", " ; ", ";;", "; /* ; */ ;", "; -- ;\n", "\n;\n", ";/* a /* b */ c */", "; -- end\n"};
  return separators;
}

TEST(SqlScriptTest, GeneratedScriptsSplitAsDuckDbExtractsThem) {
  DuckDbExtraction duckdb;
  std::mt19937 random(7);
  for (int round = 0; round < 150; round++) {
    std::vector<std::string> chosen;
    std::string script = random() % 3 == 0 ? "/* lead ; */ " : "";
    const size_t n = 1 + random() % 6;
    for (size_t i = 0; i < n; i++) {
      chosen.push_back(StatementPool()[random() % StatementPool().size()]);
      script += chosen.back();
      if (i + 1 < n || random() % 2) script += Separators()[random() % Separators().size()];
    }
    std::vector<ScriptStatement> split = SplitSqlScript(script);
    ASSERT_EQ(split.size(), chosen.size()) << script;
    std::optional<std::vector<std::string>> expected = duckdb.Extract(script);
    ASSERT_TRUE(expected.has_value()) << script;
    ASSERT_EQ(expected->size(), split.size()) << script;
    for (size_t i = 0; i < split.size(); i++) {
      EXPECT_EQ(script.substr(split[i].offset, split[i].text.size()), split[i].text);
      // The same statement: its text alone prepares as DuckDB's statement i did.
      EXPECT_EQ(duckdb.Prepare(split[i].text), (*expected)[i]) << script << "\nstatement " << i;
      // And it is the statement the script was made of (less a trailing comment).
      EXPECT_EQ(chosen[i].rfind(split[i].text, 0), 0u) << split[i].text << " vs " << chosen[i];
    }
  }
}

TEST(SqlScriptTest, GeneratedScriptsWithBasinStatementsSplitAtSemicolons) {
  const std::vector<std::string> basin = {
      "OPTIMIZE t WHERE d = ';' ZORDER BY (a)", "VACUUM t RETAIN 0 HOURS DRY RUN",
      "RESTORE TABLE t TO VERSION AS OF 1",
      "CREATE OR REFRESH STREAMING TABLE s AS SELECT * FROM STREAM read_kafka(';')"};
  DuckDbExtraction duckdb;
  std::mt19937 random(11);
  for (int round = 0; round < 100; round++) {
    std::vector<std::string> chosen;
    std::string script;
    const size_t n = 2 + random() % 5;
    for (size_t i = 0; i < n; i++) {
      const bool own = i == 0 || random() % 3 == 0;
      chosen.push_back(own ? basin[random() % basin.size()]
                           : StatementPool()[random() % StatementPool().size()]);
      script += chosen.back() + Separators()[random() % Separators().size()];
    }
    ASSERT_FALSE(duckdb.Extract(script).has_value()) << script;
    std::vector<ScriptStatement> split = SplitSqlScript(script);
    ASSERT_EQ(split.size(), chosen.size()) << script;
    for (size_t i = 0; i < split.size(); i++) {
      EXPECT_EQ(chosen[i].rfind(split[i].text, 0), 0u) << split[i].text << " vs " << chosen[i];
      // DuckDB's statements among them are still DuckDB's, one each.
      if (std::find(basin.begin(), basin.end(), chosen[i]) == basin.end()) {
        auto alone = duckdb.Extract(split[i].text);
        ASSERT_TRUE(alone.has_value()) << split[i].text;
        EXPECT_EQ(alone->size(), 1u);
      }
    }
  }
}

// --- positions and slots ---

TEST(SqlPositionTest, LinesAndColumnsCountCharacters) {
  const std::string text = "SELECT\n  'é', x";
  EXPECT_EQ(DescribePosition(text, 0), "line 1, column 1");
  EXPECT_EQ(DescribePosition(text, text.find('\'')), "line 2, column 3");
  EXPECT_EQ(DescribePosition(text, text.find('x')), "line 2, column 8");  // é is one character
  EXPECT_EQ(DescribePosition(text, 1000), DescribePosition(text, text.size()));
}

TEST(SqlSlotTest, ExpressionsAreWhatDuckDbReadsAsOne) {
  for (const char* ok :
       {"x + 1", "CASE WHEN a > 0 THEN 'x;' ELSE b END", "(SELECT max(y) FROM t)",
        "sum(x) OVER (PARTITION BY g ORDER BY t)", "list_transform(l, x -> x + 1)", "lambda x: x * 2",
        "\"select\" /* a /* b */ c */ + 1", "$$a$$ || 'b'", "x -- tail\n"}) {
    EXPECT_FALSE(CheckSqlSlot(ok, SqlSlot::kExpression).has_value()) << ok;
  }
  for (const char* bad : {"x AS y", "x y", "1, 2", "*", "x FROM t", "x WHERE y", "DISTINCT x", "", "x +",
                          "SELECT 1", "1; DROP TABLE t"}) {
    EXPECT_TRUE(CheckSqlSlot(bad, SqlSlot::kExpression).has_value()) << bad;
  }
  auto error = CheckSqlSlot("a > > 1", SqlSlot::kExpression);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->offset, 4u) << error->message;  // at the second '>'
  EXPECT_FALSE(CheckSqlSlot("1, x + 2, 'a'", SqlSlot::kExpressionList).has_value());
}

TEST(SqlSlotTest, QueriesAndTypes) {
  for (const char* ok : {"SELECT 1", "VALUES (1), (2)", "WITH c AS (SELECT 1) SELECT * FROM c", "FROM t",
                         "TABLE t", "(SELECT 1) UNION ALL (SELECT 2)", "SELECT 1 -- c\n"}) {
    EXPECT_FALSE(CheckSqlSlot(ok, SqlSlot::kQuery).has_value()) << ok;
  }
  for (const char* bad : {"INSERT INTO t VALUES (1)", "SELECT 1; SELECT 2", "1 + 1", ""}) {
    EXPECT_TRUE(CheckSqlSlot(bad, SqlSlot::kQuery).has_value()) << bad;
  }
  for (const char* ok : {"INTEGER", "DECIMAL(10, 2)", "STRUCT(a INT, b VARCHAR[])", "MAP(VARCHAR, INT)"}) {
    EXPECT_FALSE(CheckSqlSlot(ok, SqlSlot::kType).has_value()) << ok;
  }
  for (const char* bad : {"INT NOT NULL", "1 + 1", "INT, y INT"}) {
    EXPECT_TRUE(CheckSqlSlot(bad, SqlSlot::kType).has_value()) << bad;
  }
}

TEST(SqlStringTest, ValuesAsDuckDbReadsThem) {
  EXPECT_EQ(SqlStringValue("'it''s'"), "it's");
  EXPECT_EQ(SqlStringValue("E'a\\nb'"), "a\nb");
  EXPECT_EQ(SqlStringValue("$q$x'y$q$"), "x'y");
  EXPECT_EQ(SqlStringValue("'a'\n'b'"), "ab");
  EXPECT_EQ(SqlStringValue("42"), std::nullopt);
}

// --- DuckDB's syntax trees ---

template <typename T>
T ParseOne(const std::string& sql) {
  auto parsed = ParseWithDuckDb(sql);
  EXPECT_TRUE(parsed.ok()) << (parsed.ok() ? "" : parsed.error().message);
  if (!parsed.ok() || parsed.value().size() != 1) return T{};
  const T* tree = std::get_if<T>(&parsed.value()[0].dml);
  EXPECT_NE(tree, nullptr) << sql;
  return tree ? *tree : T{};
}

TEST(DuckDbTreeTest, InsertForms) {
  auto insert = ParseOne<SqlInsert>("INSERT INTO s.t (a, \"b c\") VALUES (1, 'x'), (2, 'y')");
  EXPECT_EQ(insert.target.Parts(), (std::vector<std::string>{"s", "t"}));
  EXPECT_EQ(insert.columns, (std::vector<std::string>{"a", "b c"}));
  EXPECT_FALSE(insert.by_name);
  EXPECT_FALSE(CheckSqlSlot(insert.query, SqlSlot::kQuery).has_value()) << insert.query;
  EXPECT_NE(insert.query.find("VALUES (1, 'x'), (2, 'y')"), std::string::npos) << insert.query;

  insert = ParseOne<SqlInsert>(
      "WITH c AS (SELECT 1 AS a) INSERT OR REPLACE INTO t BY NAME SELECT * FROM c RETURNING a");
  EXPECT_TRUE(insert.by_name);
  EXPECT_EQ(insert.ctes, "WITH c AS (SELECT 1 AS a)");
  EXPECT_EQ(insert.query, "SELECT * FROM c");
  EXPECT_NE(insert.on_conflict, SqlInsert::OnConflict::kNone);
  EXPECT_EQ(insert.returning, (std::vector<std::string>{"a"}));
  EXPECT_EQ(ParseOne<SqlInsert>("INSERT OR IGNORE INTO t SELECT 1").on_conflict,
            SqlInsert::OnConflict::kNothing);
  EXPECT_TRUE(ParseOne<SqlInsert>("INSERT INTO t DEFAULT VALUES").default_values);
}

TEST(DuckDbTreeTest, UpdateAndDelete) {
  auto update = ParseOne<SqlUpdate>(
      "UPDATE cat.s.t AS x SET a = (SELECT max(y) FROM u), b = CASE WHEN b > 0 THEN b ELSE -b END, c = 1 "
      "FROM u WHERE x.k = u.k RETURNING x.a");
  EXPECT_EQ(update.target.name.Parts(), (std::vector<std::string>{"cat", "s", "t"}));
  EXPECT_EQ(update.target.alias, "x");
  ASSERT_EQ(update.assignments.size(), 3u);
  EXPECT_EQ(update.assignments[0].column, "a");
  EXPECT_EQ(update.assignments[0].expression, "(SELECT max(y) FROM u)");
  EXPECT_EQ(update.assignments[2].column, "c");
  EXPECT_EQ(update.from, "u");
  EXPECT_EQ(update.where, "x.k = u.k");
  EXPECT_EQ(update.returning.size(), 1u);

  auto del = ParseOne<SqlDelete>("DELETE FROM t USING u, v WHERE t.a = u.a");
  EXPECT_EQ(del.target.name.table, "t");
  EXPECT_EQ(del.target.alias, "");
  EXPECT_EQ(del.using_tables, (std::vector<std::string>{"u", "v"}));
  EXPECT_EQ(ParseOne<SqlDelete>("DELETE FROM t").where, "");
}

TEST(DuckDbTreeTest, MergeActionsInDuckDbsOrder) {
  auto merge = ParseOne<SqlMerge>(
      "MERGE INTO t AS tgt USING (SELECT 1 AS id) AS src ON tgt.id = src.id "
      "WHEN MATCHED THEN DELETE "
      "WHEN MATCHED AND src.id > 1 THEN UPDATE SET qty = CASE WHEN src.id > 0 THEN 1 ELSE tgt.qty END "
      "WHEN NOT MATCHED THEN INSERT * "
      "WHEN NOT MATCHED BY TARGET AND src.id < 0 THEN INSERT (id) VALUES (src.id) "
      "WHEN NOT MATCHED BY SOURCE AND tgt.id > 5 THEN UPDATE SET * "
      "WHEN MATCHED AND src.id = 9 THEN DO NOTHING "
      "WHEN NOT MATCHED BY SOURCE THEN ERROR 'gone'");
  EXPECT_EQ(merge.target.alias, "tgt");
  EXPECT_EQ(merge.source, "(SELECT 1 AS id)");
  EXPECT_EQ(merge.source_alias, "src");
  EXPECT_FALSE(merge.source_table.has_value());
  EXPECT_EQ(merge.on, "tgt.id = src.id");
  using When = SqlMergeAction::When;
  using Kind = SqlMergeAction::Kind;
  std::vector<std::pair<When, Kind>> order;
  for (const auto& action : merge.actions) order.emplace_back(action.when, action.kind);
  // By kind; conditional ones in statement order; the unconditional one last.
  EXPECT_EQ(order, (std::vector<std::pair<When, Kind>>{{When::kMatched, Kind::kUpdate},
                                                       {When::kMatched, Kind::kDoNothing},
                                                       {When::kMatched, Kind::kDelete},
                                                       {When::kNotMatchedBySource, Kind::kUpdate},
                                                       {When::kNotMatchedBySource, Kind::kError},
                                                       {When::kNotMatchedByTarget, Kind::kInsert},
                                                       {When::kNotMatchedByTarget, Kind::kInsert}}));
  EXPECT_EQ(merge.actions[0].condition, "src.id > 1");
  ASSERT_EQ(merge.actions[0].assignments.size(), 1u);
  EXPECT_EQ(merge.actions[0].assignments[0].expression,
            "CASE  WHEN ((src.id > 0)) THEN (1) ELSE tgt.qty END");
  EXPECT_TRUE(merge.actions[3].update_star);
  EXPECT_EQ(merge.actions[4].error_message, "'gone'");
  EXPECT_EQ(merge.actions[5].insert_columns, (std::vector<std::string>{"id"}));
  EXPECT_EQ(merge.actions[5].insert_values, (std::vector<std::string>{"src.id"}));
  EXPECT_TRUE(merge.actions[6].insert_star);

  merge = ParseOne<SqlMerge>("MERGE INTO t USING s AT (VERSION => 2) USING (id) WHEN MATCHED THEN UPDATE");
  ASSERT_TRUE(merge.source_table.has_value());
  EXPECT_EQ(merge.source_table->table, "s");
  EXPECT_EQ(merge.source, "s AT (VERSION => 2)");
  EXPECT_EQ(merge.using_columns, (std::vector<std::string>{"id"}));
  EXPECT_TRUE(merge.actions[0].update_star);
}

TEST(DuckDbTreeTest, OtherStatementsAndErrors) {
  auto parsed = ParseWithDuckDb("SELECT 1");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed.value()[0].type, "SELECT");
  EXPECT_TRUE(std::holds_alternative<std::monostate>(parsed.value()[0].dml));
  auto bad = ParseWithDuckDb("SELECT * FRM t");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().offset, 13u);
  EXPECT_EQ(bad.error().message, "syntax error at or near \"t\"");
}

TEST(DuckDbTreeTest, CopyQueryToParquetIsBuiltOnTheTree) {
  std::optional<std::string> copy =
      CopyQueryToParquetSql("WITH c AS (SELECT 1 AS x) FROM c -- note", "basin://7/r.parquet");
  ASSERT_TRUE(copy.has_value());
  auto parsed = ParseWithDuckDb(*copy);
  ASSERT_TRUE(parsed.ok()) << *copy;
  ASSERT_EQ(parsed.value().size(), 1u) << *copy;
  const auto* sql_copy = std::get_if<SqlCopy>(&parsed.value()[0].dml);
  ASSERT_NE(sql_copy, nullptr) << *copy;
  EXPECT_FALSE(sql_copy->from);
  EXPECT_EQ(sql_copy->file, "basin://7/r.parquet");
  EXPECT_NE(sql_copy->query.find("WITH"), std::string::npos) << *copy;
  EXPECT_EQ(sql_copy->options.size(), 1u) << *copy;
  // Only one query: not a write, not text that would close the parentheses itself.
  EXPECT_FALSE(CopyQueryToParquetSql("INSERT INTO t VALUES (1)", "basin://7/r.parquet"));
  EXPECT_FALSE(CopyQueryToParquetSql("SELECT 1) TO '/tmp/x.csv' (FORMAT csv); --", "basin://7/r.parquet"));
  EXPECT_FALSE(CopyQueryToParquetSql("SELECT 1; SELECT 2", "basin://7/r.parquet"));
}

}  // namespace
}  // namespace basin::engine
