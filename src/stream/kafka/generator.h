// The seed story's events: card payments as ~200-byte JSON records keyed by their id,
//
//   {"id":1042,"account":"acct-17","amount":"12.34","currency":"EUR","region":"eu",
//    "ts":"2026-12-01T10:00:00.123Z","merchant":"merchant-0042","channel":"card-present",
//    "card_last4":"1234","status":"authorized"}
//
// with chosen fractions of the records a stream must cope with:
// - malformed: not JSON (cut short), wrong types ("id":"id-1042", "amount":true), or no id;
// - duplicates: an earlier good record sent again, byte for byte (a producer's retry);
// - late: a good record whose ts lies late_by_ms behind the clock.
// Every record but a duplicate takes the next id, so the good and late records' ids are
// unique and ascending.
//
// Deterministic: the records are a function of the options (seed included) and the clock's
// readings. Randomness is drawn from std::mt19937_64, whose sequence the standard fixes, and
// turned into numbers without std's distributions (whose results vary between libraries).
//
// Thread safety: a generator is used by one thread at a time.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <random>
#include <string>

#include "basin/clock.h"
#include "basin/status.h"

namespace basin::stream::kafka {

struct PaymentEventOptions {
  double malformed_fraction = 0;  // each in [0, 1], together at most 1
  double duplicate_fraction = 0;
  double late_fraction = 0;
  int64_t late_by_ms = 10 * 60 * 1000;
  int64_t first_id = 1;
  uint64_t seed = 1;
};

enum class PaymentEventKind { kGood, kMalformed, kDuplicate, kLate };

struct PaymentEvent {
  PaymentEventKind kind = PaymentEventKind::kGood;
  int64_t id = 0;
  std::string key;    // the id in decimal
  std::string value;  // the JSON text (or what a malformed record has instead)
};

// InvalidArgument naming the option when a fraction is outside [0, 1], the fractions add up to
// more than 1, or late_by_ms is negative.
Status CheckPaymentEventOptions(const PaymentEventOptions& options);

class PaymentEventGenerator {
 public:
  // CheckPaymentEventOptions' errors.
  static Result<PaymentEventGenerator> Make(const PaymentEventOptions& options,
                                            std::shared_ptr<const Clock> clock);

  PaymentEvent Next();

 private:
  PaymentEventGenerator(const PaymentEventOptions& options, std::shared_ptr<const Clock> clock);

  double NextFraction();               // uniform in [0, 1)
  uint64_t NextBelow(uint64_t bound);  // uniform enough in [0, bound)
  std::string GoodJson(int64_t id, int64_t ts_ms);
  std::string MalformedText(int64_t id, int64_t ts_ms);

  PaymentEventOptions options_;
  std::shared_ptr<const Clock> clock_;
  std::mt19937_64 random_;
  int64_t next_id_;
  // Recent good records, the ones a duplicate repeats; bounded by kRecentCapacity.
  std::deque<PaymentEvent> recent_;
};

}  // namespace basin::stream::kafka
