#include "stream/kafka/generator.h"

#include <fmt/format.h>

#include <array>
#include <string_view>

#include "delta/temporal.h"

namespace basin::stream::kafka {

namespace {

// How many recent good records a duplicate may repeat.
constexpr size_t kRecentCapacity = 1024;
constexpr int64_t kAccounts = 1000;
constexpr int64_t kMerchants = 5000;
constexpr int64_t kMaxAmountCents = 99'999;

struct Region {
  std::string_view name;
  std::string_view currency;
};
constexpr std::array<Region, 3> kRegions = {{{"eu", "EUR"}, {"us", "USD"}, {"uk", "GBP"}}};
constexpr std::array<std::string_view, 3> kChannels = {"card-present", "online", "contactless"};

// "2026-12-01T10:00:00.123Z"
std::string IsoTimestampMs(int64_t ms) {
  constexpr int64_t kMsPerDay = 86'400'000;
  int64_t days = ms / kMsPerDay;
  int64_t in_day = ms % kMsPerDay;
  if (in_day < 0) {
    in_day += kMsPerDay;
    days--;
  }
  int64_t year = 0, month = 0, day = 0;
  delta::CivilFromDays(days, &year, &month, &day);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", year, month, day, in_day / 3'600'000,
                     in_day / 60'000 % 60, in_day / 1000 % 60, in_day % 1000);
}

Status CheckFraction(std::string_view name, double value) {
  if (!(value >= 0 && value <= 1)) {
    return Status::InvalidArgument(fmt::format("{} fraction {} is not between 0 and 1", name, value));
  }
  return Status::OK();
}

}  // namespace

Status CheckPaymentEventOptions(const PaymentEventOptions& options) {
  RETURN_IF_ERROR(CheckFraction("malformed", options.malformed_fraction));
  RETURN_IF_ERROR(CheckFraction("duplicate", options.duplicate_fraction));
  RETURN_IF_ERROR(CheckFraction("late", options.late_fraction));
  const double sum = options.malformed_fraction + options.duplicate_fraction + options.late_fraction;
  if (sum > 1) {
    return Status::InvalidArgument(
        fmt::format("the malformed, duplicate and late fractions add up to {}, more than 1", sum));
  }
  if (options.late_by_ms < 0) {
    return Status::InvalidArgument(fmt::format("late_by_ms {} is negative", options.late_by_ms));
  }
  return Status::OK();
}

Result<PaymentEventGenerator> PaymentEventGenerator::Make(const PaymentEventOptions& options,
                                                          std::shared_ptr<const Clock> clock) {
  RETURN_IF_ERROR(CheckPaymentEventOptions(options));
  return PaymentEventGenerator(options, std::move(clock));
}

PaymentEventGenerator::PaymentEventGenerator(const PaymentEventOptions& options,
                                             std::shared_ptr<const Clock> clock)
    : options_(options), clock_(std::move(clock)), random_(options.seed), next_id_(options.first_id) {}

double PaymentEventGenerator::NextFraction() {
  return static_cast<double>(random_() >> 11) *
         0x1.0p-53;  // the top 53 bits: every double in [0, 1) step 2^-53
}

uint64_t PaymentEventGenerator::NextBelow(uint64_t bound) { return random_() % bound; }

std::string PaymentEventGenerator::GoodJson(int64_t id, int64_t ts_ms) {
  const Region& region = kRegions[NextBelow(kRegions.size())];
  const uint64_t cents = 1 + NextBelow(kMaxAmountCents);
  return fmt::format(
      R"({{"id":{},"account":"acct-{}","amount":"{}.{:02}","currency":"{}","region":"{}","ts":"{}",)"
      R"("merchant":"merchant-{:04}","channel":"{}","card_last4":"{:04}","status":"authorized"}})",
      id, NextBelow(kAccounts), cents / 100, cents % 100, region.currency, region.name, IsoTimestampMs(ts_ms),
      NextBelow(kMerchants), kChannels[NextBelow(kChannels.size())], NextBelow(10'000));
}

std::string PaymentEventGenerator::MalformedText(int64_t id, int64_t ts_ms) {
  std::string json = GoodJson(id, ts_ms);
  switch (NextBelow(3)) {
    case 0:  // not JSON: cut short, as a record truncated by a broken producer
      json.resize(json.size() / 2);
      return json;
    case 1: {  // wrong types
      const std::string id_field = fmt::format(R"("id":{},)", id);
      json.replace(json.find(id_field), id_field.size(), fmt::format(R"("id":"id-{}",)", id));
      const size_t amount = json.find(R"("amount":")");
      const size_t amount_end = json.find(',', amount);
      json.replace(amount, amount_end - amount, R"("amount":true)");
      return json;
    }
    default: {  // no id
      const std::string id_field = fmt::format(R"("id":{},)", id);
      json.erase(json.find(id_field), id_field.size());
      return json;
    }
  }
}

PaymentEvent PaymentEventGenerator::Next() {
  const double draw = NextFraction();
  const double malformed_below = options_.malformed_fraction;
  const double duplicate_below = malformed_below + options_.duplicate_fraction;
  const double late_below = duplicate_below + options_.late_fraction;
  if (draw >= malformed_below && draw < duplicate_below && !recent_.empty()) {
    PaymentEvent duplicate = recent_[NextBelow(recent_.size())];
    duplicate.kind = PaymentEventKind::kDuplicate;
    return duplicate;
  }
  PaymentEvent event;
  event.id = next_id_++;
  event.key = std::to_string(event.id);
  const int64_t now_ms = clock_->NowMs();
  if (draw < malformed_below) {
    event.kind = PaymentEventKind::kMalformed;
    event.value = MalformedText(event.id, now_ms);
    return event;
  }
  // A duplicate drawn before any good record exists becomes a good record.
  const bool late = draw >= duplicate_below && draw < late_below;
  event.kind = late ? PaymentEventKind::kLate : PaymentEventKind::kGood;
  event.value = GoodJson(event.id, late ? now_ms - options_.late_by_ms : now_ms);
  if (recent_.size() == kRecentCapacity) recent_.pop_front();
  recent_.push_back(event);
  return event;
}

}  // namespace basin::stream::kafka
