// delta::Predicate and delta::Literal: construction, flattening, text forms.
#include "delta/predicate.h"

#include <gtest/gtest.h>

#include <cmath>

#include "delta/temporal.h"

namespace basin::delta {
namespace {

TEST(LiteralTest, TextForms) {
  EXPECT_EQ(Literal::Boolean(true).ToString(), "TRUE");
  EXPECT_EQ(Literal::Byte(-3).ToString(), "-3");
  EXPECT_EQ(Literal::Long(INT64_MIN).ToString(), "-9223372036854775808");
  EXPECT_EQ(Literal::Double(2.5).ToString(), "2.5");
  EXPECT_EQ(Literal::Float(1.1f).ToString(), "1.1");
  EXPECT_EQ(Literal::Double(std::nan("")).ToString(), "'NaN'");
  EXPECT_EQ(Literal::Decimal(-5, 10, 2).ToString(), "-0.05");
  EXPECT_EQ(Literal::Decimal(12345, 10, 2).ToString(), "123.45");
  EXPECT_EQ(Literal::Decimal(7, 3, 0).ToString(), "7");
  const Int128 big = static_cast<Int128>(INT64_MAX) * 1000;
  EXPECT_EQ(Literal::Decimal(big, 38, 3).ToString(), "9223372036854775807.000");
  EXPECT_EQ(Literal::String("it's").ToString(), "'it''s'");
  EXPECT_EQ(Literal::Binary(std::string("\x0a\xff", 2)).ToString(), "X'0AFF'");
  EXPECT_EQ(Literal::Date(static_cast<int32_t>(DaysFromCivil(2024, 1, 31))).ToString(), "DATE '2024-01-31'");
  EXPECT_EQ(Literal::Date(-1).ToString(), "DATE '1969-12-31'");
  EXPECT_EQ(Literal::Timestamp(1'500'000).ToString(), "TIMESTAMPTZ '1970-01-01 00:00:01.5+00'");
  EXPECT_EQ(Literal::TimestampNtz(-1).ToString(), "TIMESTAMP '1969-12-31 23:59:59.999999'");
}

TEST(LiteralTest, TypesAndEquality) {
  EXPECT_EQ(Literal::Decimal(1, 10, 2).TypeName(), "decimal(10,2)");
  EXPECT_EQ(Literal::TimestampNtz(0).TypeName(), "timestamp_ntz");
  EXPECT_EQ(Literal::Long(5), Literal::Long(5));
  EXPECT_FALSE(Literal::Long(5) == Literal::Int(5));
  EXPECT_FALSE(Literal::Decimal(5, 10, 2) == Literal::Decimal(5, 10, 3));
  EXPECT_EQ(Literal::Double(std::nan("")), Literal::Double(std::nan("")));
  EXPECT_FALSE(Literal::String("a") == Literal::Binary("a"));
}

TEST(PredicateTest, ConstructionAndText) {
  const Predicate a = Predicate::Compare(CompareOp::kLess, ColumnPath{"a"}, Literal::Long(5));
  const Predicate x = Predicate::IsNull(Predicate::Column({"s", "my x"}));
  EXPECT_EQ(a.kind(), Predicate::Kind::kCompare);
  EXPECT_EQ(a.op(), CompareOp::kLess);
  EXPECT_EQ(a.children()[0].column_path(), (ColumnPath{"a"}));
  EXPECT_EQ(a.children()[1].literal(), Literal::Long(5));
  EXPECT_EQ(x.ToString(), "s.\"my x\" IS NULL");
  EXPECT_EQ(Predicate::And({a, Predicate::And({x, a})}).children().size(), 3u);  // flattened
  EXPECT_EQ(Predicate::Or({a}).ToString(), a.ToString());                        // a single term
  EXPECT_EQ(Predicate::And({}).ToString(), "TRUE");
  EXPECT_EQ(Predicate::Or({}).ToString(), "FALSE");
  EXPECT_EQ(
      Predicate::Not(Predicate::In(Predicate::Column({"b"}), {Literal::String("x"), Literal::String("y")}))
          .ToString(),
      "NOT (b IN ('x', 'y'))");
  EXPECT_EQ(Predicate::Not(a).ToString(), "NOT (a < 5)");
  EXPECT_TRUE(Predicate().is_unknown());
  EXPECT_EQ(Predicate::Unknown("f(x)").ToString(), "unknown(f(x))");
  // Copies share the tree.
  Predicate copy = a;
  EXPECT_EQ(&copy.children()[0], &a.children()[0]);
}

TEST(PredicateTest, Operators) {
  EXPECT_EQ(FlipCompareOp(CompareOp::kLess), CompareOp::kGreater);
  EXPECT_EQ(FlipCompareOp(CompareOp::kGreaterOrEqual), CompareOp::kLessOrEqual);
  EXPECT_EQ(FlipCompareOp(CompareOp::kNotEqual), CompareOp::kNotEqual);
  EXPECT_EQ(NegateCompareOp(CompareOp::kLess), CompareOp::kGreaterOrEqual);
  EXPECT_EQ(NegateCompareOp(CompareOp::kEqual), CompareOp::kNotEqual);
  EXPECT_STREQ(CompareOpSymbol(CompareOp::kNotEqual), "<>");
}

TEST(TemporalTest, ParsesAndFormats) {
  EXPECT_EQ(ParseDate("2024-02-29"), DaysFromCivil(2024, 2, 29));
  EXPECT_EQ(ParseDate("2024-2-29"), std::nullopt);
  EXPECT_EQ(ParseTimestampMicros("1970-01-01T00:00:01.25Z"), 1'250'000);
  EXPECT_EQ(ParseTimestampMicros("1970-01-01 02:00:00+02:00"), 0);
  EXPECT_EQ(ParseTimestampMicros("1970-01-01 00:00:00.1234567"), 123'456);
  EXPECT_EQ(ParseTimestampMicros("1970-01-01 25:00:00"), std::nullopt);
  EXPECT_EQ(ParseTimestampMicros("1970-01-01 00:00:00."), std::nullopt);
  EXPECT_EQ(FormatTimestampMicros(-1, 'T'), "1969-12-31T23:59:59.999999");
  EXPECT_EQ(FormatDate(0), "1970-01-01");
}

}  // namespace
}  // namespace basin::delta
