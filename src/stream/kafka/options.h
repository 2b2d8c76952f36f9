// The options of a Kafka source, in the names Databricks' read_kafka and Spark's Kafka source
// use (docs/kafka.md):
//
//   bootstrapServers      "host:port[,host:port...]" (Spark's kafka.bootstrap.servers is taken too)
//   subscribe             "topic[,topic...]"                         } exactly one of the two
//   subscribePattern      a regular expression matching whole names  }
//   startingOffsets       earliest | latest (default) | {"topic":{"0":23,"1":-2}}
//                         (per partition: -2 earliest, -1 latest, else the offset)
//   maxOffsetsPerTrigger  at most this many offsets per micro-batch, over all partitions
//   kafka.<property>      a librdkafka property, passed to the client as it is;
//                         kafka.topic.metadata.refresh.interval.ms also sets how often a
//                         stream lists the subscribed partitions again (default 10 s)
//   valueFormat, schema, deadLetterTable, maxDeadLetterFraction
//                         how values are parsed and where those that do not parse go
//                         (stream/record_format.h)
//
// ParseKafkaOptions is the one parser of these values: validating a statement and opening a
// reader both call it, so nothing accepted by one is refused by the other.
//
// Thread safety: values and pure functions.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "basin/status.h"
#include "stream/kafka/client.h"
#include "stream/kafka/types.h"
#include "stream/record_format.h"

namespace basin::stream::kafka {

// startingOffsets' per-partition values that are not offsets.
inline constexpr int64_t kEarliestOffset = -2;
inline constexpr int64_t kLatestOffset = -1;
inline constexpr int64_t kDefaultPartitionDiscoveryIntervalMs = 10'000;

// Which topics a source reads: a list, or every topic whose whole name matches a pattern
// (ECMAScript syntax; Spark's Java patterns agree with it on ordinary names).
class TopicSubscription {
 public:
  TopicSubscription() = default;
  // InvalidArgument naming the bad topic (IsValidTopicName) or the pattern that does not compile.
  static Result<TopicSubscription> Topics(std::vector<std::string> topics);
  static Result<TopicSubscription> Pattern(std::string pattern);

  const std::vector<std::string>& topics() const { return topics_; }  // empty for a pattern
  const std::string& pattern() const { return pattern_; }             // empty for a list

  // Whether `topic` is subscribed. InvalidArgument when the pattern is too complex for
  // std::regex to evaluate on it.
  Result<bool> Takes(const std::string& topic) const;

 private:
  std::vector<std::string> topics_;
  std::string pattern_;
  std::shared_ptr<const std::regex> matcher_;  // set for a pattern; shared because copies are read-only
};

struct StartingOffsets {
  enum class Kind { kEarliest, kLatest, kSpecific };
  Kind kind = Kind::kLatest;
  // kSpecific: the start of every partition the stream begins with; an offset, or
  // kEarliestOffset / kLatestOffset.
  PartitionOffsets offsets;
};

struct KafkaOptions {
  std::string bootstrap_servers;
  TopicSubscription subscription;
  StartingOffsets starting_offsets;
  std::optional<int64_t> max_offsets_per_trigger;  // > 0 when set
  // The kafka.* options without their prefix, in the order given.
  ClientProperties client_properties;
  // How old a stream's list of the subscribed partitions may be when it plans a batch
  // (kafka.topic.metadata.refresh.interval.ms when given): 0 lists them for every batch, a
  // negative value only once. A batch's watermark query is its only other request.
  int64_t partition_discovery_interval_ms = kDefaultPartitionDiscoveryIntervalMs;
  RecordOptions records;
};

// (name, value) pairs as a statement gives them. Names compare case-insensitively.
using OptionList = std::vector<std::pair<std::string, std::string>>;

// Parses and checks every option. InvalidArgument naming the option and the bad value for an
// unknown or repeated option, a missing bootstrapServers, both or neither of subscribe and
// subscribePattern, a bad topic name or pattern, startingOffsets that are neither keyword nor
// JSON of the documented shape (or name a topic not subscribed), a maxOffsetsPerTrigger that
// is not a positive integer, and kafka.* properties librdkafka refuses or Basin owns
// (enable.auto.commit, auto.offset.reset, enable.partition.eof: a stream's positions are its
// checkpoint's).
Result<KafkaOptions> ParseKafkaOptions(const OptionList& options);

}  // namespace basin::stream::kafka
