#include "stream/kafka/planner.h"

#include <algorithm>
#include <cassert>
#include <numeric>

namespace basin::stream::kafka {

namespace {

std::string Describe(const TopicPartition& tp, const Watermarks& marks) {
  return ToString(tp) + " (watermarks " + std::to_string(marks.low) + ".." + std::to_string(marks.high) + ")";
}

// Where the first batch starts in a partition, from startingOffsets.
Result<int64_t> FirstStart(const StartingOffsets& starting, const TopicPartition& tp,
                           const Watermarks& marks) {
  switch (starting.kind) {
    case StartingOffsets::Kind::kEarliest:
      return marks.low;
    case StartingOffsets::Kind::kLatest:
      return marks.high;
    case StartingOffsets::Kind::kSpecific:
      break;
  }
  auto given = starting.offsets.find(tp);
  if (given == starting.offsets.end()) {
    return Status::InvalidArgument(
        "startingOffsets gives no offset for partition " + ToString(tp) +
        ": specific startingOffsets must name every partition (-2 earliest, -1 latest)");
  }
  if (given->second == kEarliestOffset) return marks.low;
  if (given->second == kLatestOffset) return marks.high;
  if (given->second < marks.low || given->second > marks.high) {
    return Status::InvalidArgument("startingOffsets gives offset " + std::to_string(given->second) + " for " +
                                   Describe(tp, marks) + ", outside the offsets the partition holds");
  }
  return given->second;
}

// Where the next batch starts in a partition.
Result<int64_t> NextStart(const KafkaOptions& options, const std::optional<PartitionOffsets>& committed,
                          const TopicPartition& tp, const Watermarks& marks) {
  if (!committed) return FirstStart(options.starting_offsets, tp, marks);
  auto position = committed->find(tp);
  if (position == committed->end()) return marks.low;  // a partition that appeared since the last batch
  if (position->second < marks.low) {
    return Status::NotFound("offsets " + std::to_string(position->second) + ".." +
                            std::to_string(marks.low - 1) + " of " + Describe(tp, marks) +
                            " were deleted before the stream read them (retention or compaction)");
  }
  if (position->second > marks.high) {
    return Status::Conflict(
        "the stream's position " + std::to_string(position->second) + " in " + Describe(tp, marks) +
        " lies beyond the partition's end: was the topic recreated, or is this another cluster?");
  }
  return position->second;
}

// Shares of `limit` proportional to `backlogs`, rounded down; the offsets rounding leaves over
// go first to partitions whose share would be zero (so that a small partition is not starved
// by a large one), then to the largest remainders. REQUIRES: limit is below the backlogs' sum.
std::vector<int64_t> ProportionalShares(const std::vector<int64_t>& backlogs, int64_t limit) {
  using Wide = __int128;  // limit * backlog may exceed int64
  const Wide total = std::accumulate(backlogs.begin(), backlogs.end(), Wide{0});
  assert(total > limit);
  std::vector<int64_t> shares(backlogs.size());
  std::vector<Wide> remainders(backlogs.size());
  int64_t assigned = 0;
  for (size_t i = 0; i < backlogs.size(); i++) {
    const Wide scaled = Wide{limit} * backlogs[i];
    shares[i] = static_cast<int64_t>(scaled / total);
    remainders[i] = scaled % total;
    assigned += shares[i];
  }
  // The remainders add up to (limit - assigned) * total and each is below total, so at least
  // limit - assigned of them are positive; those come first in this order (a starved
  // partition's remainder is positive), and each of their shares is below its backlog, so
  // adding one keeps every share within its backlog.
  std::vector<size_t> order(backlogs.size());
  std::iota(order.begin(), order.end(), 0);
  auto starved = [&](size_t i) { return shares[i] == 0 && backlogs[i] > 0; };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (starved(a) != starved(b)) return starved(a);
    return remainders[a] > remainders[b];
  });
  for (size_t k = 0; k < order.size() && assigned < limit; k++) {
    shares[order[k]]++;
    assigned++;
  }
  return shares;
}

}  // namespace

Result<std::vector<PartitionRange>> PlanRanges(const KafkaOptions& options,
                                               const std::optional<PartitionOffsets>& committed,
                                               const PartitionWatermarks& watermarks) {
  if (!committed && options.starting_offsets.kind == StartingOffsets::Kind::kSpecific) {
    for (const auto& [tp, offset] : options.starting_offsets.offsets) {
      if (!watermarks.contains(tp)) {
        return Status::InvalidArgument("startingOffsets names partition " + ToString(tp) +
                                       ", which does not exist");
      }
    }
  }
  std::vector<PartitionRange> ranges;
  ranges.reserve(watermarks.size());
  int64_t backlog = 0;
  for (const auto& [tp, marks] : watermarks) {
    ASSIGN_OR_RETURN(const int64_t start, NextStart(options, committed, tp, marks));
    ranges.push_back(PartitionRange{tp, start, marks.high});
    backlog += marks.high - start;
  }
  if (!options.max_offsets_per_trigger || backlog <= *options.max_offsets_per_trigger) return ranges;

  std::vector<int64_t> backlogs;
  backlogs.reserve(ranges.size());
  for (const PartitionRange& range : ranges) backlogs.push_back(range.size());
  const std::vector<int64_t> shares = ProportionalShares(backlogs, *options.max_offsets_per_trigger);
  for (size_t i = 0; i < ranges.size(); i++) ranges[i].end_offset = ranges[i].start_offset + shares[i];
  return ranges;
}

int64_t TotalOffsets(const std::vector<PartitionRange>& ranges) {
  int64_t total = 0;
  for (const PartitionRange& range : ranges) total += range.size();
  return total;
}

}  // namespace basin::stream::kafka
