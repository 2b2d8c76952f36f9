// A stream running in the background over the dev cluster while a feed sends it payment
// events (stream/kafka/generator.h: each stamped with the time it was made, "ts") at a
// steady rate: what the freshness and memory benchmarks share. The stream is continuous
// with the default trigger and lands `id` and `ts` in the warehouse table bronze.
//
// Thread safety: one thread drives it; the stream and the feed run on threads of their own.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "basin/status.h"

namespace basin::bench {

class LiveStream {
 public:
  // Starts the cluster as `basin kafka-dev` (kPartitions partitions: librdkafka's mock
  // cluster keeps about 5 MB of each), bronze in `warehouse`, the stream with its
  // checkpoint in `checkpoint`, and a feed of `events` events at `events_per_second`.
  static Result<std::unique_ptr<LiveStream>> Start(const std::string& warehouse,
                                                   const std::string& checkpoint, int64_t events,
                                                   double events_per_second);
  ~LiveStream();  // stops the feed and the stream if still running

  // Waits for the feed to end, then stops the stream: the first error of the two.
  Status Finish();

  int64_t batches() const;
  double feed_seconds() const;  // valid after Finish()
  // The dev cluster's resident set in MiB: it runs in a process of its own (ClusterProcess).
  double ClusterResidentMiB() const;
  // The committed batches' durations, p50, p99 and worst, as text; valid after Finish().
  std::string BatchDurations() const;

  static constexpr int kPartitions = 12;

 private:
  struct Impl;
  explicit LiveStream(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace basin::bench
