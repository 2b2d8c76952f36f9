#include "basin/duration.h"

#include <gtest/gtest.h>

#include "testing/test_util.h"

namespace basin {
namespace {

TEST(DurationTest, ParsesMillisecondsAndPostgresUnits) {
  const std::pair<const char*, int64_t> cases[] = {
      {"0", 0},          {"5000", 5000},
      {" 250 ", 250},    {"1.4", 1},
      {"1.5", 2},        {"5s", 5000},
      {"5 s", 5000},     {"2min", 120'000},
      {"1h", 3'600'000}, {"1d", 86'400'000},
      {"150ms", 150},    {"2500us", 3},
      {"0.5s", 500},     {"2147483647", 2147483647},
  };
  for (const auto& [text, ms] : cases) {
    ASSERT_OK_AND_ASSIGN(int64_t parsed, ParseDurationMs(text));
    EXPECT_EQ(parsed, ms) << text;
  }
}

TEST(DurationTest, RefusesWhatPostgresRefuses) {
  for (const char* text :
       {"", "s", "5 parsecs", "5S", "5 s s", "-1", "-5s", "2147483648", "25d", "nan", "1e400"}) {
    Result<int64_t> parsed = ParseDurationMs(text);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_EQ(parsed.status().code(), ErrorCode::kInvalidArgument) << text;
    EXPECT_NE(parsed.status().message().find("us, ms, s, min, h or d"), std::string::npos)
        << parsed.status().message();
  }
}

TEST(DurationTest, FormatsInTheLargestExactUnit) {
  EXPECT_EQ(FormatDurationMs(0), "0");
  EXPECT_EQ(FormatDurationMs(5000), "5s");
  EXPECT_EQ(FormatDurationMs(1500), "1500ms");
  EXPECT_EQ(FormatDurationMs(60'000), "1min");
  EXPECT_EQ(FormatDurationMs(90'000), "90s");
  EXPECT_EQ(FormatDurationMs(7'200'000), "2h");
  EXPECT_EQ(FormatDurationMs(172'800'000), "2d");
  for (int64_t ms : {1, 999, 1000, 61'000, 3'600'000, 86'400'001}) {
    ASSERT_OK_AND_ASSIGN(int64_t again, ParseDurationMs(FormatDurationMs(ms)));
    EXPECT_EQ(again, ms);
  }
}

}  // namespace
}  // namespace basin
