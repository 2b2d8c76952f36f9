// SQL text (and json_serialize_sql trees) to delta::Predicate: shapes, constant typing,
// scopes and errors.
#include "engine/predicate_parser.h"

#include <gtest/gtest.h>

#include "engine/duckdb.h"
#include "testing/test_util.h"

namespace basin::engine {
namespace {

class PredicateParserTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto schema = delta::ParseSchema(R"x({"type":"struct","fields":[
      {"name":"id","type":"long","nullable":true,"metadata":{}},
      {"name":"small","type":"short","nullable":true,"metadata":{}},
      {"name":"Name","type":"string","nullable":true,"metadata":{}},
      {"name":"price","type":"decimal(10,2)","nullable":true,"metadata":{}},
      {"name":"score","type":"double","nullable":true,"metadata":{}},
      {"name":"day","type":"date","nullable":true,"metadata":{}},
      {"name":"ts","type":"timestamp","nullable":true,"metadata":{}},
      {"name":"local","type":"timestamp_ntz","nullable":true,"metadata":{}},
      {"name":"flag","type":"boolean","nullable":true,"metadata":{}},
      {"name":"s","type":{"type":"struct","fields":[{"name":"x","type":"integer","nullable":true,"metadata":{}}]},
       "nullable":true,"metadata":{}}]})x");
    ASSERT_OK(schema.status());
    schema_ = *schema;
  }

  std::string Parse(const std::string& sql, const PredicateScope& scope = {}) {
    auto predicate = ParsePredicate(sql, schema_, scope);
    EXPECT_OK(predicate.status());
    return predicate.ok() ? predicate->ToString() : "";
  }

  delta::StructType schema_;
};

TEST_F(PredicateParserTest, Shapes) {
  EXPECT_EQ(Parse("id = 5"), "id = 5");
  EXPECT_EQ(Parse("5 < id"), "id > 5");
  EXPECT_EQ(Parse("id <> 5 AND id <= 10"), "(id <> 5 AND id <= 10)");
  EXPECT_EQ(Parse("id = 1 OR (id = 2 OR id = 3)"), "(id = 1 OR id = 2 OR id = 3)");
  EXPECT_EQ(Parse("id BETWEEN 1 AND 9"), "(id >= 1 AND id <= 9)");
  EXPECT_EQ(Parse("id IN (1, 2, 3)"), "id IN (1, 2, 3)");
  EXPECT_EQ(Parse("id NOT IN (1, 2)"), "NOT (id IN (1, 2))");
  EXPECT_EQ(Parse("id IS NULL"), "id IS NULL");
  EXPECT_EQ(Parse("s.x IS NOT NULL"), "s.x IS NOT NULL");
  EXPECT_EQ(Parse("flag"), "flag");
  EXPECT_EQ(Parse("NOT flag"), "NOT (flag)");
  EXPECT_EQ(Parse("false"), "FALSE");
}

TEST_F(PredicateParserTest, ColumnsResolveCaseInsensitively) {
  EXPECT_EQ(Parse("name = 'x'"), "Name = 'x'");
  EXPECT_EQ(Parse("S.X = 1"), "s.x = 1");
}

TEST_F(PredicateParserTest, ConstantsTakeTheColumnType) {
  EXPECT_EQ(Parse("small = 7"), "small = 7");
  EXPECT_EQ(Parse("price = 1.5"), "price = 1.50");
  EXPECT_EQ(Parse("price < 3"), "price < 3.00");
  EXPECT_EQ(Parse("score > 2.5"), "score > 2.5");
  EXPECT_EQ(Parse("day = '2024-01-31'"), "day = DATE '2024-01-31'");
  EXPECT_EQ(Parse("day = DATE '2024-01-31'"), "day = DATE '2024-01-31'");
  EXPECT_EQ(Parse("ts >= '2024-01-31 10:00:00+02'"), "ts >= TIMESTAMPTZ '2024-01-31 08:00:00+00'");
  EXPECT_EQ(Parse("ts >= TIMESTAMP '2024-01-31 10:00:00'"), "ts >= TIMESTAMPTZ '2024-01-31 10:00:00+00'");
  EXPECT_EQ(Parse("local < TIMESTAMP '2024-01-31 10:00:00.5'"), "local < TIMESTAMP '2024-01-31 10:00:00.5'");
  EXPECT_EQ(Parse("ts < DATE '2024-01-31'"), "ts < TIMESTAMPTZ '2024-01-31 00:00:00+00'");
  EXPECT_EQ(Parse("id = CAST('12' AS INTEGER)"), "id = 12");
  EXPECT_EQ(Parse("id = '12'"), "id = 12");
  EXPECT_EQ(Parse("Name = 'it''s'"), "Name = 'it''s'");
}

TEST_F(PredicateParserTest, InexactConstantsAreUnknown) {
  EXPECT_EQ(Parse("id = 5.5"), "unknown((id = 5.5))");
  EXPECT_EQ(Parse("small = 100000"), "unknown((small = 100000))");
  EXPECT_EQ(Parse("price = 1.234"), "unknown((price = 1.234))");
  EXPECT_EQ(Parse("day = TIMESTAMP '2024-01-31 10:00:00'"),
            "unknown((\"day\" = CAST('2024-01-31 10:00:00' AS TIMESTAMP)))");
  EXPECT_EQ(Parse("Name = 5"), "unknown((\"Name\" = 5))");
  EXPECT_EQ(Parse("id = NULL"), "unknown((id = NULL))");
  EXPECT_EQ(Parse("id = 'abc'"), "unknown((id = 'abc'))");
}

TEST_F(PredicateParserTest, WhatIsNotModelledIsUnknownButKeepsItsSiblings) {
  EXPECT_EQ(Parse("id = 1 AND lower(Name) = 'x'"), "(id = 1 AND unknown((lower(\"Name\") = 'x')))");
  EXPECT_EQ(Parse("id + 1 = 2"), "unknown(((id + 1) = 2))");
  EXPECT_EQ(Parse("id = score"), "unknown((id = score))");
  EXPECT_EQ(Parse("missing = 1"), "unknown((missing = 1))");
  EXPECT_EQ(Parse("id IN (SELECT 1)").rfind("unknown(", 0), 0u);
}

TEST_F(PredicateParserTest, ScopeDecidesWhoseColumnsQualifiedNamesAre) {
  PredicateScope scope{{"t"}, {"src"}};
  EXPECT_EQ(Parse("t.id = 1 AND src.id = 2", scope), "(id = 1 AND unknown((src.id = 2)))");
  // Unknown qualifiers are tried as struct columns.
  EXPECT_EQ(Parse("s.x = 3", scope), "s.x = 3");
  EXPECT_EQ(Parse("other.id = 3", scope), "unknown((other.id = 3))");
}

TEST_F(PredicateParserTest, ErrorsAreInvalidArgument) {
  ASSERT_ERROR_CODE(ParsePredicate("id = = 3", schema_), kInvalidArgument);
  ASSERT_ERROR_CODE(ParsePredicate("id = 1, id = 2", schema_), kInvalidArgument);
  auto error = ParsePredicate("id = = 3", schema_).status();
  EXPECT_NE(error.message().find("syntax error"), std::string::npos) << error.ToString();
}

TEST_F(PredicateParserTest, SyntaxTreesReadBack) {
  ASSERT_OK_AND_ASSIGN(auto db, Database::Open());
  ASSERT_OK_AND_ASSIGN(auto conn, Connection::Open(db));
  for (const std::string sql :
       {"t.id BETWEEN 1 AND 9 AND Name IN ('a', 'b')", "price >= 2.5 OR day < '2024-01-01'",
        "NOT (s.x IS NULL) AND lower(Name) = 'x'", "ts > TIMESTAMPTZ '2024-01-01 00:00:00+01'"}) {
    ASSERT_OK_AND_ASSIGN(QueryResult r, conn->Query("SELECT json_serialize_sql(" +
                                                    QuoteLiteral("SELECT 1 FROM t WHERE " + sql) + ")"));
    auto tree = nlohmann::json::parse(*r.at(0, 0));
    const auto& where = tree["statements"][0]["node"]["where_clause"];
    PredicateScope scope{{"t"}, {}};
    EXPECT_EQ(PredicateFromSyntaxTree(where, schema_, scope).ToString(), Parse(sql, scope)) << sql;
  }
  EXPECT_TRUE(PredicateFromSyntaxTree(nlohmann::json{{"class", "NOPE"}}, schema_).is_unknown());
}

}  // namespace
}  // namespace basin::engine
