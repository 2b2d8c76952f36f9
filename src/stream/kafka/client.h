// What every librdkafka user in Basin shares: handles owned by unique_ptr, configuration
// built from (name, value) properties, and librdkafka's error codes as Basin Statuses.
//
// Thread safety: functions; the handles are librdkafka's (an rd_kafka_t may be used from
// several threads, a configuration object only by the thread building it).
#pragma once

#include <librdkafka/rdkafka.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "basin/status.h"

namespace basin::stream::kafka {

// librdkafka configuration properties ("bootstrap.servers", "127.0.0.1:9092"), in order.
using ClientProperties = std::vector<std::pair<std::string, std::string>>;

struct ConfDeleter {
  void operator()(rd_kafka_conf_t* conf) const { rd_kafka_conf_destroy(conf); }
};
struct HandleDeleter {
  void operator()(rd_kafka_t* rk) const { rd_kafka_destroy(rk); }
};
struct PartitionListDeleter {
  void operator()(rd_kafka_topic_partition_list_t* list) const {
    rd_kafka_topic_partition_list_destroy(list);
  }
};
struct MetadataDeleter {
  void operator()(const rd_kafka_metadata_t* metadata) const { rd_kafka_metadata_destroy(metadata); }
};
struct MessageDeleter {
  void operator()(rd_kafka_message_t* message) const { rd_kafka_message_destroy(message); }
};
using ConfPtr = std::unique_ptr<rd_kafka_conf_t, ConfDeleter>;
using HandlePtr = std::unique_ptr<rd_kafka_t, HandleDeleter>;
using PartitionListPtr = std::unique_ptr<rd_kafka_topic_partition_list_t, PartitionListDeleter>;
using MetadataPtr = std::unique_ptr<const rd_kafka_metadata_t, MetadataDeleter>;
using MessagePtr = std::unique_ptr<rd_kafka_message_t, MessageDeleter>;

// A configuration with `properties` set in order. InvalidArgument naming the property and
// librdkafka's reason when one is unknown or its value is refused.
Result<ConfPtr> NewConf(const ClientProperties& properties);

// A producer or consumer client made from `conf`, which it takes over. InvalidArgument with
// librdkafka's reason when the configuration is inconsistent.
Result<HandlePtr> NewClient(rd_kafka_type_t type, ConfPtr conf);

// Whether an operation that failed with `err` may succeed when retried (a broker down, a
// leader moving, a timeout).
bool IsRetryable(rd_kafka_resp_err_t err);

// `err` as a Status: NotFound for unknown topics and partitions, InvalidArgument for bad
// arguments, IOError otherwise (retryable as IsRetryable says). The message is
// "<context>: <librdkafka's description> (<error name>)".
Status KafkaStatus(rd_kafka_resp_err_t err, const std::string& context);

}  // namespace basin::stream::kafka
