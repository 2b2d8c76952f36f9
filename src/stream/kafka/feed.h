// Sending generated payment events (generator.h) to a Kafka topic at a steady rate: the
// producing half of `basin kafka-dev --produce`, and of tests and benchmarks that need a feed.
//
// Thread safety: RunPaymentFeed runs on the caller's thread; `stop` may be cancelled from any
// thread.
#pragma once

#include <cstdint>
#include <string>

#include "basin/status.h"
#include "common/cancellation.h"
#include "stream/kafka/generator.h"
#include "stream/kafka/producer.h"

namespace basin::stream::kafka {

struct FeedOptions {
  std::string topic;
  int64_t count = 0;             // events to send; > 0
  double events_per_second = 0;  // 0: as fast as the client takes them
  int64_t flush_timeout_ms = 30'000;
};

struct FeedReport {
  int64_t produced = 0;  // delivered (every one when the feed ends OK)
  int64_t malformed = 0;
  int64_t duplicates = 0;
  int64_t late = 0;
};

// The properties a feed's producer is opened with (KafkaProducer::Open): a record waits up
// to 50 ms for others to its partition, as a busy producer's do, instead of librdkafka's 5 ms.
// The dev cluster serves one message set a partition per fetch, found by walking the
// partition's log from its start (librdkafka 2.0.2's mock keeps no index), so a paced feed
// sending a record or two per message set slowed every read as the logs filled their window:
// at 5,000 events/s into 12 partitions, one-second batches took 300 ms once the logs were
// full (15 ms with this linger), and a ten-minute stream fell behind for a minute at a time.
ClientProperties FeedProducerProperties();

// InvalidArgument naming the value when the count is not positive or the rate is negative or
// not finite.
Status CheckFeedOptions(const FeedOptions& options);

// Sends options.count events from `generator` and waits until the cluster has them, having
// learnt the topic's partitions first (KafkaProducer::LearnTopic), so that the first events
// are not held back.
// Cancelled when `stop` is cancelled first (the events queued by then are flushed, for at
// most a second); CheckFeedOptions' errors; the producer's errors otherwise.
// Pacing waits on `stop`, so a stop is seen within 100 ms.
Result<FeedReport> RunPaymentFeed(KafkaProducer& producer, PaymentEventGenerator& generator,
                                  const FeedOptions& options, const CancellationToken& stop);

}  // namespace basin::stream::kafka
