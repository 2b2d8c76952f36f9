// PostgreSQL's view of Basin's values (server/pg/types.h) and the placeholders of statements
// sent with parameters (basin::FindParameters / BindParameters).
#include <gtest/gtest.h>

#include "basin/session.h"
#include "server/pg/types.h"
#include "testing/test_util.h"

namespace basin::server::pg {
namespace {

TEST(PgTypesTest, DuckDbTypesMapToPostgresOids) {
  EXPECT_EQ(PgTypeOf("BIGINT").oid, Oid::kInt8);
  EXPECT_EQ(PgTypeOf("INTEGER").size, 4);
  EXPECT_EQ(PgTypeOf("DECIMAL(12,2)").oid, Oid::kNumeric);
  EXPECT_EQ(PgTypeOf("VARCHAR").oid, Oid::kText);
  EXPECT_EQ(PgTypeOf("TIMESTAMP WITH TIME ZONE").oid, Oid::kTimestamptz);
  EXPECT_EQ(PgTypeOf("BIGINT[]").oid, Oid::kInt8Array);
  EXPECT_EQ(PgTypeOf("INTEGER[][]").oid, Oid::kInt4Array);
  // No PostgreSQL form is made: sent as text in DuckDB's rendering.
  EXPECT_EQ(PgTypeOf("VARCHAR[]").oid, Oid::kText);
  EXPECT_EQ(PgTypeOf("STRUCT(a INTEGER)").oid, Oid::kText);
  EXPECT_EQ(PgTypeOf("MAP(VARCHAR, INTEGER)").oid, Oid::kText);
}

TEST(PgTypesTest, TextFormatFollowsPostgres) {
  EXPECT_EQ(ToPgText(PgTypeOf("BOOLEAN"), "true"), "t");
  EXPECT_EQ(ToPgText(PgTypeOf("BOOLEAN"), "false"), "f");
  EXPECT_EQ(ToPgText(PgTypeOf("BLOB"), "a\\x00\\x5C"), "\\x61005c");
  EXPECT_EQ(ToPgText(PgTypeOf("DOUBLE"), "inf"), "Infinity");
  EXPECT_EQ(ToPgText(PgTypeOf("FLOAT"), "-inf"), "-Infinity");
  EXPECT_EQ(ToPgText(PgTypeOf("DOUBLE"), "nan"), "NaN");
  EXPECT_EQ(ToPgText(PgTypeOf("DOUBLE"), "2.0"), "2");
  EXPECT_EQ(ToPgText(PgTypeOf("DOUBLE"), "1.5"), "1.5");
  EXPECT_EQ(ToPgText(PgTypeOf("INTERVAL"), "1 year 2 months 3 days 04:00:00"),
            "1 year 2 mons 3 days 04:00:00");
  EXPECT_EQ(ToPgText(PgTypeOf("INTERVAL"), "1 month"), "1 mon");
  EXPECT_EQ(ToPgText(PgTypeOf("INTEGER[]"), "[1, 2, NULL]"), "{1,2,NULL}");
  EXPECT_EQ(ToPgText(PgTypeOf("INTEGER[][]"), "[[1, 2], []]"), "{{1,2},{}}");
  EXPECT_EQ(ToPgText(PgTypeOf("TIMESTAMP[]"), "[2024-01-01 10:00:00]"), "{\"2024-01-01 10:00:00\"}");
}

TEST(PgTypesTest, BinaryFormatIsBigEndian) {
  ASSERT_OK_AND_ASSIGN(std::string int4, ToPgBinary(PgTypeOf("INTEGER"), "-2"));
  EXPECT_EQ(int4, std::string("\xff\xff\xff\xfe", 4));
  ASSERT_OK_AND_ASSIGN(std::string int8, ToPgBinary(PgTypeOf("BIGINT"), "258"));
  EXPECT_EQ(int8, std::string("\0\0\0\0\0\0\x01\x02", 8));
  ASSERT_OK_AND_ASSIGN(std::string boolean, ToPgBinary(PgTypeOf("BOOLEAN"), "t"));
  EXPECT_EQ(boolean, std::string("\1", 1));
  ASSERT_OK_AND_ASSIGN(std::string bytea, ToPgBinary(PgTypeOf("BLOB"), "\\x0aff"));
  EXPECT_EQ(bytea, std::string("\x0a\xff", 2));
  EXPECT_EQ(ToPgBinary(PgTypeOf("DATE"), "2024-01-01").status().code(), ErrorCode::kNotImplemented);
}

TEST(PgTypesTest, ParametersBecomeLiterals) {
  ASSERT_OK_AND_ASSIGN(std::string text, ParameterLiteral(0, std::string("it's"), false));
  EXPECT_EQ(text, "'it''s'");
  ASSERT_OK_AND_ASSIGN(std::string null, ParameterLiteral(23, std::nullopt, false));
  EXPECT_EQ(null, "NULL");
  ASSERT_OK_AND_ASSIGN(std::string typed, ParameterLiteral(20, std::string("42"), false));
  EXPECT_EQ(typed, "CAST('42' AS BIGINT)");
  // A text parameter is data, never SQL.
  ASSERT_OK_AND_ASSIGN(std::string hostile, ParameterLiteral(20, std::string("1); DROP TABLE t; --"), false));
  EXPECT_EQ(hostile, "CAST('1); DROP TABLE t; --' AS BIGINT)");
  ASSERT_OK_AND_ASSIGN(std::string binary_int, ParameterLiteral(23, std::string("\0\0\1\0", 4), true));
  EXPECT_EQ(binary_int, "CAST('256' AS INTEGER)");
  ASSERT_OK_AND_ASSIGN(std::string bytea, ParameterLiteral(17, std::string("\\x41ff"), false));
  EXPECT_EQ(bytea, "CAST('\\x41\\xFF' AS BLOB)");
  EXPECT_EQ(ParameterLiteral(23, std::string("\0\1", 2), true).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(ParameterLiteral(0, std::string("a\0b", 3), false).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(ParameterLiteral(17, std::string("\\x4"), false).status().code(), ErrorCode::kInvalidArgument);
}

TEST(PgTypesTest, PlaceholdersAreFoundByTokens) {
  ASSERT_OK_AND_ASSIGN(StatementParameters found,
                       FindParameters("SELECT $1, '$7', \"$8\", $2 /* $9 */ FROM t WHERE x = $1 -- $5"));
  EXPECT_EQ(found.count, 2);
  ASSERT_OK_AND_ASSIGN(std::string bound, BindParameters("SELECT $1, '$1' AS s, $2::INT WHERE a = $1",
                                                         {"'x'", "CAST('2' AS BIGINT)"}));
  EXPECT_EQ(bound, "SELECT 'x', '$1' AS s, CAST('2' AS BIGINT)::INT WHERE a = 'x'");
  ASSERT_OK_AND_ASSIGN(std::string dollar_quoted, BindParameters("SELECT $$ $1 $$, $1", {"NULL"}));
  EXPECT_EQ(dollar_quoted, "SELECT $$ $1 $$, NULL");
  ASSERT_ERROR_WITH(BindParameters("SELECT $3", {"1"}), kInvalidArgument, "$3");
  ASSERT_OK_AND_ASSIGN(StatementParameters none, FindParameters("SELECT 1"));
  EXPECT_EQ(none.count, 0);
}

}  // namespace
}  // namespace basin::server::pg
