// A Kafka cluster for development, demos and tests, and a feed of seed-story payment events
// into it (docs/kafka.md, `basin kafka-dev`). Real deployments point Basin's Kafka source at
// their own cluster; this one lives inside the process (librdkafka's mock cluster), listens
// on 127.0.0.1 on ports the kernel picks, and keeps every record in memory until it stops.
//
// Topics can be created while the cluster runs; a topic's partition count cannot grow (the
// mock cluster does not implement adding partitions).
//
// Thread safety: KafkaDevCluster's methods may be called from any thread. A PaymentFeed runs
// on one thread (Run) and may be stopped from any other (Stop).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "basin/status.h"

namespace basin {

struct KafkaDevTopic {
  std::string name;
  int partitions = 1;
};

class KafkaDevCluster {
 public:
  // Starts `brokers` brokers and creates `topics`. InvalidArgument for a bad topic name,
  // partition count (1 to 1024) or broker count (1 to 16); Internal when no loopback socket
  // can be opened.
  static Result<std::unique_ptr<KafkaDevCluster>> Start(const std::vector<KafkaDevTopic>& topics,
                                                        int brokers = 1);

  ~KafkaDevCluster();  // stops the cluster
  KafkaDevCluster(const KafkaDevCluster&) = delete;
  KafkaDevCluster& operator=(const KafkaDevCluster&) = delete;

  // "127.0.0.1:<port>[,...]", the bootstrap.servers (bootstrapServers) clients use.
  const std::string& bootstrap_servers() const;

  // AlreadyExists when the topic exists; InvalidArgument for a bad name or count; Cancelled
  // after Stop().
  Status CreateTopic(const KafkaDevTopic& topic);

  // Closes the brokers and frees the records. Idempotent.
  void Stop();

  struct Impl;

 private:
  explicit KafkaDevCluster(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

struct PaymentFeedOptions {
  std::string topic = "payments";
  int64_t count = 1000;          // events to send; > 0
  double events_per_second = 0;  // 0: as fast as the cluster takes them
  // Fractions of malformed records (not JSON, wrong types, no id), duplicates (an earlier
  // record sent again) and late records (ts ten minutes behind): each in [0, 1], at most 1
  // together.
  double malformed_fraction = 0;
  double duplicate_fraction = 0;
  double late_fraction = 0;
  uint64_t seed = 1;  // the same seed sends the same ids, accounts and amounts
};

struct PaymentFeedReport {
  int64_t produced = 0;
  int64_t malformed = 0;
  int64_t duplicates = 0;
  int64_t late = 0;
};

// InvalidArgument naming the value: a count that is not positive, a negative or infinite rate,
// a fraction outside [0, 1], fractions adding up to more than 1.
Status CheckPaymentFeedOptions(const PaymentFeedOptions& options);

class PaymentFeed {
 public:
  // A feed to the cluster at `bootstrap_servers`. CheckPaymentFeedOptions' errors.
  static Result<std::unique_ptr<PaymentFeed>> Open(const std::string& bootstrap_servers,
                                                   const PaymentFeedOptions& options);

  ~PaymentFeed();
  PaymentFeed(const PaymentFeed&) = delete;
  PaymentFeed& operator=(const PaymentFeed&) = delete;

  // Sends the events (timestamps from the machine's clock) and waits until the cluster has
  // them. Cancelled after Stop(); IOError when the cluster refuses or cannot be reached.
  Result<PaymentFeedReport> Run();

  // Makes Run() end within 100 ms. Any thread; idempotent.
  void Stop();

  struct Impl;

 private:
  explicit PaymentFeed(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace basin
