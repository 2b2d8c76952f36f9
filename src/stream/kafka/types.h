// The coordinates a Kafka source works in: a topic's partition, its watermarks, and a range of
// offsets in it. Positions are Basin's (a stream's checkpoint records them), never a consumer
// group's.
//
// Thread safety: values.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace basin::stream::kafka {

struct TopicPartition {
  std::string topic;
  int32_t partition = 0;

  auto operator<=>(const TopicPartition&) const = default;
};

// "payments/3", the form every error message uses.
std::string ToString(const TopicPartition& tp);

// Kafka's rule for topic names: 1 to 249 characters of [a-zA-Z0-9._-].
bool IsValidTopicName(std::string_view name);

// The offsets a partition holds: [low, high). `high` is the offset the next record will get
// (the log end offset, or the last stable offset for read_committed readers).
struct Watermarks {
  int64_t low = 0;
  int64_t high = 0;

  bool operator==(const Watermarks&) const = default;
};

// Offsets [start_offset, end_offset) of one partition; empty when they are equal.
struct PartitionRange {
  TopicPartition tp;
  int64_t start_offset = 0;
  int64_t end_offset = 0;

  int64_t size() const { return end_offset - start_offset; }
  bool operator==(const PartitionRange&) const = default;
};

// Next offset to read per partition (a batch's end positions), or watermarks per partition.
using PartitionOffsets = std::map<TopicPartition, int64_t>;
using PartitionWatermarks = std::map<TopicPartition, Watermarks>;

}  // namespace basin::stream::kafka
