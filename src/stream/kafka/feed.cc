#include "stream/kafka/feed.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace basin::stream::kafka {

namespace {

using SteadyClock = std::chrono::steady_clock;

constexpr std::chrono::milliseconds kLongestPacingWait{100};
constexpr int64_t kFlushAfterStopMs = 1000;

}  // namespace

ClientProperties FeedProducerProperties() { return {{"linger.ms", "50"}}; }

Status CheckFeedOptions(const FeedOptions& options) {
  if (options.count <= 0) {
    return Status::InvalidArgument("a feed sends a positive count of events, not " +
                                   std::to_string(options.count));
  }
  if (!(options.events_per_second >= 0) || std::isinf(options.events_per_second)) {
    return Status::InvalidArgument(
        "a feed's rate must be a finite, non-negative number of events per second, not " +
        std::to_string(options.events_per_second));
  }
  return Status::OK();
}

Result<FeedReport> RunPaymentFeed(KafkaProducer& producer, PaymentEventGenerator& generator,
                                  const FeedOptions& options, const CancellationToken& stop) {
  RETURN_IF_ERROR(CheckFeedOptions(options));
  // The events go out as they are made, from the first one on (KafkaProducer::LearnTopic).
  RETURN_IF_ERROR(producer.LearnTopic(options.topic, options.flush_timeout_ms));
  FeedReport report;
  const auto start = SteadyClock::now();
  for (int64_t i = 0; i < options.count; i++) {
    if (options.events_per_second > 0) {
      // Event i is due i / rate seconds after the start; waiting for it is bounded by that.
      const auto due =
          start + std::chrono::duration_cast<SteadyClock::duration>(
                      std::chrono::duration<double>(static_cast<double>(i) / options.events_per_second));
      for (auto now = SteadyClock::now(); now < due && !stop.cancelled(); now = SteadyClock::now()) {
        (void)stop.WaitFor(
            std::min(kLongestPacingWait, std::chrono::ceil<std::chrono::milliseconds>(due - now)));
      }
    }
    if (stop.cancelled()) {
      (void)producer.Flush(kFlushAfterStopMs);  // best effort: the feed is being abandoned
      return Status::Cancelled("the event feed to " + options.topic + " was stopped after " +
                               std::to_string(report.produced) + " of " + std::to_string(options.count) +
                               " events");
    }
    const PaymentEvent event = generator.Next();
    ProducerRecord record;
    record.key = event.key;
    record.value = event.value;
    RETURN_IF_ERROR(producer.Produce(options.topic, record));
    report.produced++;
    report.malformed += event.kind == PaymentEventKind::kMalformed;
    report.duplicates += event.kind == PaymentEventKind::kDuplicate;
    report.late += event.kind == PaymentEventKind::kLate;
  }
  RETURN_IF_ERROR(producer.Flush(options.flush_timeout_ms));
  return report;
}

}  // namespace basin::stream::kafka
