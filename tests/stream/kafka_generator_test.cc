// The seed story's payment events: shape, determinism and the fractions of bad records.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "delta/temporal.h"
#include "stream/kafka/generator.h"
#include "testing/test_util.h"

namespace basin::stream::kafka {
namespace {

// 2026-12-01T10:00:00.123Z
constexpr int64_t kNowMs = 1'796'119'200'123;

PaymentEventGenerator Make(const PaymentEventOptions& options, std::shared_ptr<const Clock> clock) {
  Result<PaymentEventGenerator> generator = PaymentEventGenerator::Make(options, std::move(clock));
  EXPECT_TRUE(generator.ok()) << generator.status().ToString();
  return std::move(generator).value();
}

// The record's ts in milliseconds, when it is a valid payment.
std::optional<int64_t> ValidPaymentTs(const std::string& value) {
  const nlohmann::json json = nlohmann::json::parse(value, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.contains("id") || !json["id"].is_number_integer()) return std::nullopt;
  if (!json["amount"].is_string() || !json["ts"].is_string()) return std::nullopt;
  std::optional<int64_t> micros = delta::ParseTimestampMicros(json["ts"].get<std::string>());
  if (!micros) return std::nullopt;
  return *micros / 1000;
}

TEST(PaymentEventGeneratorTest, GoodEventsAreTheDocumentedJson) {
  auto clock = std::make_shared<ManualClock>(kNowMs);
  PaymentEventGenerator generator = Make({.first_id = 41}, clock);
  const PaymentEvent event = generator.Next();
  EXPECT_EQ(event.kind, PaymentEventKind::kGood);
  EXPECT_EQ(event.id, 41);
  EXPECT_EQ(event.key, "41");
  const nlohmann::json json = nlohmann::json::parse(event.value);
  EXPECT_EQ(json["id"], 41);
  EXPECT_EQ(json["ts"], "2026-12-01T10:00:00.123Z");
  EXPECT_TRUE(json["account"].get<std::string>().starts_with("acct-"));
  const std::string amount = json["amount"];
  EXPECT_EQ(amount.size() - amount.find('.'), 3u) << amount;  // two decimals
  const std::map<std::string, std::string> currency_of = {{"eu", "EUR"}, {"us", "USD"}, {"uk", "GBP"}};
  EXPECT_EQ(json["currency"], currency_of.at(json["region"]));
  EXPECT_GE(event.value.size(), 180u);
  EXPECT_LE(event.value.size(), 220u);
  EXPECT_EQ(generator.Next().id, 42);
}

TEST(PaymentEventGeneratorTest, TheSameSeedAndClockGiveTheSameEvents) {
  const PaymentEventOptions options{
      .malformed_fraction = 0.1, .duplicate_fraction = 0.1, .late_fraction = 0.1, .seed = 7};
  auto clock_a = std::make_shared<ManualClock>(kNowMs);
  auto clock_b = std::make_shared<ManualClock>(kNowMs);
  PaymentEventGenerator a = Make(options, clock_a);
  PaymentEventGenerator b = Make(options, clock_b);
  PaymentEventOptions other_seed = options;
  other_seed.seed = 8;
  PaymentEventGenerator c = Make(other_seed, std::make_shared<ManualClock>(kNowMs));
  int differences = 0;
  for (int i = 0; i < 500; i++) {
    const PaymentEvent x = a.Next();
    const PaymentEvent y = b.Next();
    ASSERT_EQ(x.value, y.value) << i;
    ASSERT_EQ(x.kind, y.kind) << i;
    differences += c.Next().value != x.value;
    clock_a->AdvanceMs(3);
    clock_b->AdvanceMs(3);
  }
  EXPECT_GT(differences, 450);
}

TEST(PaymentEventGeneratorTest, FractionsOfBadRecordsAreAsAskedAndEachKindIsWhatItSays) {
  const PaymentEventOptions options{.malformed_fraction = 0.05,
                                    .duplicate_fraction = 0.03,
                                    .late_fraction = 0.02,
                                    .late_by_ms = 600'000,
                                    .seed = 11};
  auto clock = std::make_shared<ManualClock>(kNowMs);
  PaymentEventGenerator generator = Make(options, clock);
  constexpr int kEvents = 20'000;
  std::map<PaymentEventKind, int> counts;
  std::set<int64_t> good_ids;
  std::set<std::string> sent_good_values;
  int64_t last_id = 0;
  for (int i = 0; i < kEvents; i++) {
    clock->AdvanceMs(1);
    const PaymentEvent event = generator.Next();
    counts[event.kind]++;
    EXPECT_EQ(event.key, std::to_string(event.id));
    const std::optional<int64_t> ts = ValidPaymentTs(event.value);
    switch (event.kind) {
      case PaymentEventKind::kMalformed:
        EXPECT_FALSE(ts.has_value()) << event.value;
        EXPECT_GT(event.id, last_id);
        last_id = event.id;
        break;
      case PaymentEventKind::kDuplicate:
        EXPECT_TRUE(sent_good_values.contains(event.value)) << event.value;
        EXPECT_TRUE(good_ids.contains(event.id));
        break;
      case PaymentEventKind::kGood:
      case PaymentEventKind::kLate: {
        ASSERT_TRUE(ts.has_value()) << event.value;
        const int64_t expected_ts =
            event.kind == PaymentEventKind::kLate ? clock->NowMs() - 600'000 : clock->NowMs();
        EXPECT_EQ(*ts, expected_ts);
        EXPECT_GT(event.id, last_id);  // unique and ascending
        last_id = event.id;
        good_ids.insert(event.id);
        sent_good_values.insert(event.value);
        break;
      }
    }
  }
  // Binomial standard deviations are at most 0.0016 of kEvents here; 4 of them is the margin.
  EXPECT_NEAR(counts[PaymentEventKind::kMalformed] / double{kEvents}, 0.05, 0.0064);
  EXPECT_NEAR(counts[PaymentEventKind::kDuplicate] / double{kEvents}, 0.03, 0.0064);
  EXPECT_NEAR(counts[PaymentEventKind::kLate] / double{kEvents}, 0.02, 0.0064);
}

TEST(PaymentEventGeneratorTest, MalformedRecordsComeInEveryFlavour) {
  PaymentEventGenerator generator =
      Make({.malformed_fraction = 1, .seed = 3}, std::make_shared<ManualClock>(kNowMs));
  int not_json = 0, wrong_types = 0, no_id = 0;
  for (int i = 0; i < 300; i++) {
    const PaymentEvent event = generator.Next();
    const nlohmann::json json = nlohmann::json::parse(event.value, nullptr, false);
    if (json.is_discarded()) {
      not_json++;
    } else if (!json.contains("id")) {
      no_id++;
    } else {
      EXPECT_TRUE(json["id"].is_string()) << event.value;
      EXPECT_TRUE(json["amount"].is_boolean()) << event.value;
      wrong_types++;
    }
  }
  EXPECT_GT(not_json, 50);
  EXPECT_GT(wrong_types, 50);
  EXPECT_GT(no_id, 50);
}

TEST(PaymentEventGeneratorTest, BadOptionsAreRefused) {
  auto clock = std::make_shared<ManualClock>(kNowMs);
  EXPECT_ERROR_WITH(PaymentEventGenerator::Make({.malformed_fraction = 1.5}, clock), kInvalidArgument,
                    "malformed fraction 1.5");
  EXPECT_ERROR_WITH(PaymentEventGenerator::Make({.late_fraction = -0.1}, clock), kInvalidArgument,
                    "late fraction -0.1");
  EXPECT_ERROR_WITH(
      PaymentEventGenerator::Make({.malformed_fraction = 0.6, .duplicate_fraction = 0.6}, clock),
      kInvalidArgument, "add up to 1.2");
  EXPECT_ERROR_WITH(PaymentEventGenerator::Make({.late_by_ms = -1}, clock), kInvalidArgument,
                    "late_by_ms -1");
}

}  // namespace
}  // namespace basin::stream::kafka
