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
  EXPECT_EQ(ToPgBinary(PgTypeOf("TIME WITH TIME ZONE"), "12:00:00+00").status().code(),
            ErrorCode::kNotImplemented);
}

// Arrays in PostgreSQL's binary layout (array_send): dimensions, has-null flag, element
// OID, each dimension's length and lower bound, then each element's length and bytes.
TEST(PgTypesTest, BinaryArraysFollowArraySend) {
  const PgType ints = PgTypeOf("INTEGER[]");
  ASSERT_OK_AND_ASSIGN(std::string encoded, ToPgBinary(ints, ToPgText(ints, "[1, NULL, -2]")));
  EXPECT_EQ(encoded, std::string("\0\0\0\1"                   // one dimension
                                 "\0\0\0\1"                   // a NULL among the elements
                                 "\0\0\0\x17"                 // int4
                                 "\0\0\0\3\0\0\0\1"           // 3 elements from index 1
                                 "\0\0\0\4\0\0\0\1"           // 1
                                 "\xff\xff\xff\xff"           // NULL
                                 "\0\0\0\4\xff\xff\xff\xfe",  // -2
                                 40));
  ASSERT_OK_AND_ASSIGN(std::string empty, ToPgBinary(ints, ToPgText(ints, "[]")));
  EXPECT_EQ(empty, std::string("\0\0\0\0\0\0\0\0\0\0\0\x17", 12));
  const PgType flags = PgTypeOf("BOOLEAN[]");
  ASSERT_OK_AND_ASSIGN(std::string booleans, ToPgBinary(flags, ToPgText(flags, "[true, false]")));
  EXPECT_EQ(booleans.substr(20), std::string("\0\0\0\1\1\0\0\0\1\0", 10));
  // Elements with their own layout: a timestamp array's are microseconds since 2000.
  const PgType times = PgTypeOf("TIMESTAMP[]");
  ASSERT_OK_AND_ASSIGN(std::string stamps, ToPgBinary(times, ToPgText(times, "[2000-01-01 00:00:01]")));
  EXPECT_EQ(stamps.substr(8, 4), std::string("\0\0\x04\x5a", 4));  // timestamp, OID 1114
  EXPECT_EQ(stamps.substr(20), std::string("\0\0\0\x08\0\0\0\0\0\x0f\x42\x40", 12));
  EXPECT_EQ(ToPgBinary(ints, "1,2").status().code(), ErrorCode::kInvalidArgument);
}

// `text` in `duckdb_type`'s binary layout is `bytes`, and those bytes sent as a binary
// parameter become `literal`.
void ExpectBinary(const std::string& duckdb_type, const std::string& text, const std::string& bytes,
                  const std::string& literal) {
  SCOPED_TRACE(duckdb_type + " " + text);
  const PgType type = PgTypeOf(duckdb_type);
  ASSERT_OK_AND_ASSIGN(std::string encoded, ToPgBinary(type, ToPgText(type, text)));
  EXPECT_EQ(encoded, bytes);
  ASSERT_OK_AND_ASSIGN(std::string decoded, ParameterLiteral(static_cast<int32_t>(type.oid), bytes, true));
  EXPECT_EQ(decoded, literal);
}

TEST(PgTypesTest, BinaryDatesAndTimesCountFrom2000) {
  // 2024-01-01 is 8766 days after 2000-01-01 (24 years, 6 of them leap).
  ExpectBinary("DATE", "2024-01-01", std::string("\x00\x00\x22\x3e", 4), "CAST('2024-01-01' AS DATE)");
  ExpectBinary("DATE", "1999-12-31", std::string("\xff\xff\xff\xff", 4), "CAST('1999-12-31' AS DATE)");
  // 1 BC is year 0, a leap year: 730119 + 366 days before 2000.
  ExpectBinary("DATE", "0001-01-01 (BC)", std::string("\xff\xf4\xda\x8b", 4),
               "CAST('0001-01-01 (BC)' AS DATE)");
  ExpectBinary("DATE", "infinity", std::string("\x7f\xff\xff\xff", 4), "CAST('infinity' AS DATE)");
  // 12:34:56.5 is 45296.5 s after midnight.
  ExpectBinary("TIME", "12:34:56.5", std::string("\x00\x00\x00\x0a\x8b\xe1\xbd\x20", 8),
               "CAST('12:34:56.500000' AS TIME)");
  // One day and one second: 86401 s.
  ExpectBinary("TIMESTAMP", "2000-01-02 00:00:01", std::string("\x00\x00\x00\x14\x1d\xe6\xa2\x40", 8),
               "CAST('2000-01-02 00:00:01.000000' AS TIMESTAMP)");
  ExpectBinary("TIMESTAMP", "1999-12-31 23:59:59.987655", std::string("\xff\xff\xff\xff\xff\xff\xcf\xc7", 8),
               "CAST('1999-12-31 23:59:59.987655' AS TIMESTAMP)");
  // An offset is taken away: 01:00 at +01 is PostgreSQL's epoch itself.
  ExpectBinary("TIMESTAMP WITH TIME ZONE", "2000-01-01 01:00:00+01", std::string(8, '\0'),
               "CAST('2000-01-01 00:00:00.000000+00' AS TIMESTAMP WITH TIME ZONE)");
  ExpectBinary("TIMESTAMP", "infinity", std::string("\x7f\xff\xff\xff\xff\xff\xff\xff", 8),
               "CAST('infinity' AS TIMESTAMP)");
  EXPECT_EQ(ToPgBinary(PgTypeOf("DATE"), "June 1st").status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(ParameterLiteral(1082, std::string("\0\0\1", 3), true).status().code(),
            ErrorCode::kInvalidArgument);
}

TEST(PgTypesTest, BinaryIntervalsAreMicrosDaysMonths) {
  // 04:05:06.789 is 14706.789 s; 1 year 2 months is 14 months.
  ExpectBinary("INTERVAL", "1 year 2 months 3 days 04:05:06.789",
               std::string("\x00\x00\x00\x03\x6c\x97\xca\x88"
                           "\x00\x00\x00\x03"
                           "\x00\x00\x00\x0e",
                           16),
               "CAST('14 months 3 days 14706789000 microseconds' AS INTERVAL)");
  ExpectBinary("INTERVAL", "-1 month -3 days -00:00:00.012345",
               std::string("\xff\xff\xff\xff\xff\xff\xcf\xc7"
                           "\xff\xff\xff\xfd"
                           "\xff\xff\xff\xff",
                           16),
               "CAST('-1 months -3 days -12345 microseconds' AS INTERVAL)");
  ExpectBinary("INTERVAL", "00:00:00", std::string(16, '\0'),
               "CAST('0 months 0 days 0 microseconds' AS INTERVAL)");
}

TEST(PgTypesTest, BinaryNumericsAreBase10000Digits) {
  // ndigits, weight, sign, dscale, then the digits: 123.4500 is 0123 . 4500.
  ExpectBinary("DECIMAL(10,4)", "123.4500",
               std::string("\x00\x02\x00\x00\x00\x00\x00\x04\x00\x7b\x11\x94", 12),
               "CAST('123.4500' AS DECIMAL(38,10))");
  // -0.001: one digit, 0010, one group after the point (weight -1), negative.
  ExpectBinary("DECIMAL(5,3)", "-0.001", std::string("\x00\x01\xff\xff\x40\x00\x00\x03\x00\x0a", 10),
               "CAST('-0.001' AS DECIMAL(38,10))");
  // 12340000: 1234 5678 -> 1234 0000, the trailing zero group dropped, weight 1.
  ExpectBinary("HUGEINT", "12340000", std::string("\x00\x01\x00\x01\x00\x00\x00\x00\x04\xd2", 10),
               "CAST('12340000' AS DECIMAL(38,10))");
  ExpectBinary("DECIMAL(4,2)", "0.00", std::string("\x00\x00\x00\x00\x00\x00\x00\x02", 8),
               "CAST('0.00' AS DECIMAL(38,10))");
  EXPECT_EQ(ParameterLiteral(1700, std::string("\x00\x01\x00\x00\x00\x00\x00\x00\x27\x10", 10), true)
                .status()
                .code(),
            ErrorCode::kInvalidArgument);  // a digit of 10000
}

TEST(PgTypesTest, BinaryUuidsAreSixteenBytes) {
  ExpectBinary("UUID", "0102a3b4-c5d6-e7f8-0910-111213141516",
               std::string("\x01\x02\xa3\xb4\xc5\xd6\xe7\xf8\x09\x10\x11\x12\x13\x14\x15\x16", 16),
               "CAST('0102a3b4-c5d6-e7f8-0910-111213141516' AS UUID)");
  EXPECT_EQ(ParameterLiteral(2950, std::string(15, 'x'), true).status().code(), ErrorCode::kInvalidArgument);
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
