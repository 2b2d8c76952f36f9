// KafkaProducer: sends records to a Kafka cluster, for the dev cluster's event feed and for
// tests. Records are queued by Produce and delivered in the background; Flush waits for them
// and reports the first record the cluster refused.
//
// Keys are partitioned with murmur2, as Java clients do, so a key lands in the partition a
// Java producer would choose.
//
// Thread safety: Produce and Flush may be called from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "basin/status.h"
#include "stream/kafka/client.h"

namespace basin::stream::kafka {

struct ProducerHeader {
  std::string_view name;
  std::optional<std::string_view> value;
};

// What to send; the bytes are copied by Produce.
struct ProducerRecord {
  std::optional<int32_t> partition;  // nullopt: chosen from the key (at random without one)
  std::optional<std::string_view> key;
  std::optional<std::string_view> value;  // nullopt: a tombstone
  std::vector<ProducerHeader> headers;
  std::optional<int64_t> timestamp_ms;  // nullopt: the time of sending
};

class KafkaProducer {
 public:
  // A producer on `bootstrap_servers`, with further librdkafka `properties`. InvalidArgument
  // when librdkafka refuses the configuration.
  static Result<std::unique_ptr<KafkaProducer>> Open(const std::string& bootstrap_servers,
                                                     const ClientProperties& properties = {});

  KafkaProducer(const KafkaProducer&) = delete;
  KafkaProducer& operator=(const KafkaProducer&) = delete;
  // Records not yet delivered are dropped: call Flush first to keep them.
  ~KafkaProducer();

  // Queues one record for `topic`. While the client's queue is full it waits for deliveries,
  // up to `queue_timeout_ms`, then fails with IOError (retryable). A delivery failure of an
  // earlier record is returned here or by Flush, once.
  Status Produce(const std::string& topic, const ProducerRecord& record, int64_t queue_timeout_ms = 10'000);

  // Waits up to `timeout_ms` for every queued record to be delivered. IOError naming the
  // topic, partition and reason of the first failed delivery, or (retryable) when records are
  // still undelivered at the timeout.
  Status Flush(int64_t timeout_ms);

  // Learns `topic`'s partitions and their leaders now, waiting up to `timeout_ms`. Records
  // for a topic the producer has not learnt wait in its queue until its metadata arrives:
  // against the dev cluster, a feed's first second of events reached the broker only after
  // that second. IOError (retryable) when the cluster does not answer.
  Status LearnTopic(const std::string& topic, int64_t timeout_ms);

 private:
  KafkaProducer() = default;
  static void OnDelivery(rd_kafka_t* rk, const rd_kafka_message_t* message, void* opaque);
  Status TakeDeliveryError();

  HandlePtr producer_;
  std::mutex mu_;
  std::optional<Status> delivery_error_;  // guarded by mu_: the first failed delivery not yet reported
};

}  // namespace basin::stream::kafka
