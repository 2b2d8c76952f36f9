// Planning a Kafka source's next micro-batch: from where the previous batch ended (Basin's
// checkpoint) and the partitions' current watermarks to one offset range per partition.
//
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <vector>

#include "basin/status.h"
#include "stream/kafka/options.h"
#include "stream/kafka/types.h"

namespace basin::stream::kafka {

// The next batch: one range per partition of `watermarks` (the subscribed partitions as
// listed now), in TopicPartition order, empty ranges included, so that the batch's end
// offsets are the next batch's `committed` for every partition known so far.
//
// Starts: before a stream's first batch (`committed` is nullopt) as options.starting_offsets
// says; afterwards `committed` for partitions it holds, and the earliest offset for partitions
// that appeared since (new topics matching a pattern). Partitions in `committed` that are no
// longer listed are left out. Ends: the high watermark, unless options.max_offsets_per_trigger
// bounds the batch: then each partition gets a share of the bound proportional to its backlog
// (high - start), rounded down, and the offsets left over by rounding go first to partitions
// whose share would be zero, then to the largest remainders. The ranges add up to exactly the
// bound (Spark rounds small shares up and may exceed it), and a partition with a small backlog
// beside a large one still advances, one offset a batch, while the bound leaves room.
//
// Errors: InvalidArgument when specific startingOffsets leave out a listed partition, name a
// partition that is not listed, or give an offset outside the partition's watermarks;
// NotFound when a start lies below the low watermark (retention deleted records the stream
// never read); Conflict when a committed position lies beyond the high watermark (the topic
// was recreated, or the checkpoint belongs to another cluster).
Result<std::vector<PartitionRange>> PlanRanges(const KafkaOptions& options,
                                               const std::optional<PartitionOffsets>& committed,
                                               const PartitionWatermarks& watermarks);

// The offsets `ranges` cover, all partitions together.
int64_t TotalOffsets(const std::vector<PartitionRange>& ranges);

}  // namespace basin::stream::kafka
