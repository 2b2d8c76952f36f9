// engine/pg_types.h: DuckDB's types as PostgreSQL's, and format_type's spelling of them.
#include <gtest/gtest.h>

#include "engine/pg_types.h"

namespace basin::engine {
namespace {

TEST(PgTypesTest, DuckDbTypesBecomePostgresTypes) {
  EXPECT_EQ(PgColumnTypeOf("BIGINT").oid, PgOid::kInt8);
  EXPECT_EQ(PgColumnTypeOf("VARCHAR").oid, PgOid::kText);
  EXPECT_EQ(PgColumnTypeOf("TIMESTAMP WITH TIME ZONE").oid, PgOid::kTimestamptz);
  const PgColumnType decimal = PgColumnTypeOf("DECIMAL(12,2)");
  EXPECT_EQ(decimal.oid, PgOid::kNumeric);
  EXPECT_EQ(decimal.typmod, ((12 << 16) | 2) + 4);  // PostgreSQL's own typmod for numeric(12,2)
  EXPECT_EQ(PgColumnTypeOf("HUGEINT").typmod, -1);
  // Lists with an array form are arrays, at any depth; the others, and structs, are text.
  EXPECT_EQ(PgColumnTypeOf("INTEGER[]").oid, PgOid::kInt4Array);
  EXPECT_EQ(PgColumnTypeOf("DOUBLE[][]").oid, PgOid::kFloat8Array);
  EXPECT_EQ(PgColumnTypeOf("VARCHAR[]").oid, PgOid::kText);
  EXPECT_EQ(PgColumnTypeOf("STRUCT(a INTEGER)").oid, PgOid::kText);
}

TEST(PgTypesTest, FormatTypeWritesPostgresNames) {
  EXPECT_EQ(FormatPgType(20, -1), "bigint");
  EXPECT_EQ(FormatPgType(23, -1), "integer");
  EXPECT_EQ(FormatPgType(1114, -1), "timestamp without time zone");
  EXPECT_EQ(FormatPgType(1700, PgColumnTypeOf("DECIMAL(12,2)").typmod), "numeric(12,2)");
  EXPECT_EQ(FormatPgType(1700, -1), "numeric");
  EXPECT_EQ(FormatPgType(1007, -1), "integer[]");
  EXPECT_EQ(FormatPgType(424242, -1), "???");
}

TEST(PgTypesTest, ArraysAndElementsPointAtEachOther) {
  for (const PgTypeInfo& type : PgTypes()) {
    if (type.array != 0) {
      const PgTypeInfo* array = FindPgType(type.array);
      ASSERT_NE(array, nullptr) << type.name;
      EXPECT_EQ(array->element, static_cast<int32_t>(type.oid)) << type.name;
      EXPECT_EQ(array->category, 'A') << type.name;
    }
  }
}

}  // namespace
}  // namespace basin::engine
