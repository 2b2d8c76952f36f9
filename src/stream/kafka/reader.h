// KafkaReader: reads exactly the offset ranges a micro-batch planned (planner.h) from a Kafka
// cluster, one record at a time.
//
// Positions are Basin's: the reader assigns each partition at an explicit offset
// (rd_kafka_assign), never subscribes, never commits or stores offsets in a consumer group
// (enable.auto.commit and enable.auto.offset.store are off), and refuses to reset an offset
// it cannot fetch (auto.offset.reset=error). The group id librdkafka requires for assign()
// is set but no group is ever joined.
//
// Consecutive Reads: a Read that reads all its ranges leaves its partitions assigned, so
// that a next Read going on where it ended (a stream's next batch) takes the records
// librdkafka already prefetched instead of fetching them again (Read).
//
// Memory: records reach the callback one at a time; between Reads the reader keeps the
// records that arrived past the ranges read (at most KafkaReaderOptions::held_bytes_limit).
// What librdkafka prefetches is bounded by its queued.max.messages.kbytes and
// fetch.max.bytes (settable as kafka.* options).
//
// Thread safety: a reader is used by one thread at a time, but for Release(). The
// cancellation token passed to Read may be cancelled from any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "basin/status.h"
#include "common/cancellation.h"
#include "stream/kafka/client.h"
#include "stream/kafka/options.h"
#include "stream/kafka/types.h"

namespace basin::stream::kafka {

struct KafkaHeader {
  std::string_view name;
  std::optional<std::string_view> value;  // nullopt: a header without a value
};

enum class TimestampType { kNone, kCreateTime, kLogAppendTime };

// One record as the callback sees it. The views point into the client's message and are
// valid only during the callback: copy what must outlive it.
struct KafkaRecord {
  std::optional<std::string_view> key;
  std::optional<std::string_view> value;  // nullopt: a tombstone
  std::string_view topic;
  int32_t partition = 0;
  int64_t offset = 0;
  int64_t timestamp_ms = -1;  // milliseconds since the epoch; -1 when timestamp_type is kNone
  TimestampType timestamp_type = TimestampType::kNone;
  std::vector<KafkaHeader> headers;
};

// A KafkaRecord that owns its bytes, for what must outlive the callback.
struct OwnedKafkaRecord {
  std::optional<std::string> key;
  std::optional<std::string> value;
  std::string topic;
  int32_t partition = 0;
  int64_t offset = 0;
  int64_t timestamp_ms = -1;
  TimestampType timestamp_type = TimestampType::kNone;
  std::vector<std::pair<std::string, std::optional<std::string>>> headers;
};
OwnedKafkaRecord Own(const KafkaRecord& record);
// A view of `record`, valid while it lives and is not changed.
KafkaRecord ViewOf(const OwnedKafkaRecord& record);
// Copies `record` into `out`, reusing the buffers `out` holds (a read's recycled records).
void CopyInto(const KafkaRecord& record, OwnedKafkaRecord& out);

// Returns OK to go on; any other status ends the Read with it.
using RecordCallback = std::function<Status(const KafkaRecord&)>;

struct KafkaReaderOptions {
  // Metadata and watermark requests fail (IOError, retryable) after this long.
  int64_t request_timeout_ms = 10'000;
  // Read fails when no partition it reads has made progress (a record, or reaching a range's
  // end) for this long; each wait is bounded by it, so a Read always ends.
  int64_t stall_timeout_ms = 30'000;
  // How often a Read looks at its cancellation token while it waits for records.
  int64_t poll_interval_ms = 100;
  // Bytes (keys and values) of the records past the ranges read that the reader keeps for
  // the next Read; a partition whose records would go past it is assigned again by a Read
  // that reads it, and its records are fetched again.
  size_t held_bytes_limit = size_t{32} << 20;
};

class KafkaReader {
 public:
  // A reader on options.bootstrap_servers with options.client_properties. Connecting is
  // lazy: an unreachable cluster shows as IOError from the first request, not here.
  // InvalidArgument when librdkafka refuses the configuration.
  static Result<std::unique_ptr<KafkaReader>> Open(const KafkaOptions& options,
                                                   KafkaReaderOptions reader_options = {});

  // Open, then the subscription's metadata asked once: a client that knows its partitions'
  // leaders starts fetching at its first Read (a fresh one's first fetch waited about a
  // second). For readers opened to read at once. IOError as ListPartitions.
  static Result<std::unique_ptr<KafkaReader>> OpenToRead(const KafkaOptions& options);

  KafkaReader(const KafkaReader&) = delete;
  KafkaReader& operator=(const KafkaReader&) = delete;
  ~KafkaReader();

  // The partitions of the subscribed topics that exist now, in TopicPartition order, from the
  // cluster's metadata, asked afresh on every call (so topics created since, matching a
  // pattern, show up). A listed topic that does not exist contributes nothing; a pattern
  // skips internal topics ("__consumer_offsets"), as Kafka's consumers do. IOError
  // (retryable when the cluster may recover) when the metadata cannot be fetched.
  Result<std::vector<TopicPartition>> ListPartitions(const TopicSubscription& subscription);

  // The partition's low and high watermarks, asked of its leader. NotFound for an unknown
  // topic or partition; IOError otherwise.
  Result<Watermarks> QueryWatermarks(const TopicPartition& tp);
  // The partitions' low and high watermarks, in two requests per leader (ListOffsets at the
  // earliest offsets, then at the latest), however many partitions (a partition's own query
  // above sends two: round trips that grow with the partition count).
  // NotFound for an unknown topic or partition; IOError otherwise.
  Result<PartitionWatermarks> QueryWatermarks(const std::vector<TopicPartition>& partitions);
  // The partitions' high watermarks only (their ends), in one request per leader.
  // NotFound for an unknown topic or partition; IOError otherwise.
  Result<PartitionOffsets> QueryHighWatermarks(const std::vector<TopicPartition>& partitions);

  // Calls `callback` for every record in [start_offset, end_offset) of each range, in offset
  // order within a partition (partitions interleave). Empty ranges are skipped. Offsets the
  // log no longer holds inside a range (compaction, transaction markers) are simply absent.
  // With Headers::kSkipped the records' headers are left empty: librdkafka makes a list for
  // each message that has them (every message of the record format Kafka writes), and a
  // reader that only wants values spent a sixth of its time on that.
  //
  // Errors: InvalidArgument for a malformed range list (negative or reversed offsets, a
  // partition twice) and for a range that ends beyond the partition's end (it waits up to
  // stall_timeout_ms for the records before deciding: a range is not clamped, because the
  // checkpoint recorded it as planned); NotFound when a range starts below the low watermark;
  // Cancelled once `cancellation` is cancelled (within poll_interval_ms, or 1,024 records);
  // IOError naming the partition and offset for a broker error (retryable ones, which
  // librdkafka retries itself, only once the stall timeout passes); the callback's status
  // when it fails. Records already passed to the callback stay passed: a failed Read is
  // retried from the batch's start.
  //
  // A Read that read every range leaves the client assigned. When each range of the next
  // Read starts where the last range of its partition ended (and the client is assigned
  // that partition), that Read goes on from the records the client prefetched and those
  // that arrived past the ranges (kept up to held_bytes_limit), without assigning; any
  // other Read, and every Read after a failed one, assigns its partitions afresh and the
  // records are fetched again. A Read that goes on and finds nothing queued within
  // poll_interval_ms assigns its unfinished partitions afresh where they stand, once
  // (librdkafka 2.0 may have stopped fetching for a second, its queue past a threshold).
  enum class Headers { kRead, kSkipped };
  Status Read(const std::vector<PartitionRange>& ranges, const RecordCallback& callback,
              const CancellationToken* cancellation = nullptr, Headers headers = Headers::kRead);

  // Releases the partitions a Read left assigned, and the records held for the next: an
  // assigned client keeps fetching (a request a millisecond at a partition's end, with
  // fetch.wait.max.ms at 1), which a stream waiting for its next batch has no use for.
  // Safe from any thread: while a Read runs (on another), it releases nothing and returns
  // false, and never waits for that Read.
  bool Release();

  // How many times Reads assigned partitions to the client.
  int64_t assignments() const { return assignments_; }

 private:
  // The client's assignment between Reads, with what it holds for the next one.
  struct Assigned;

  KafkaReader(HandlePtr consumer, KafkaReaderOptions options);

  // Releases the assignment (dropping its records), then assigns the ranges' partitions
  // at their starts.
  Status Assign(const std::vector<PartitionRange>& ranges);
  // Release() with reading_ held.
  void Unassign();

  // The partitions' offsets at `logical` (RD_KAFKA_OFFSET_BEGINNING or _END), in one
  // ListOffsets request per leader; `which` names them in errors ("start", "end").
  Result<PartitionOffsets> QueryOffsets(const std::vector<TopicPartition>& partitions, int64_t logical,
                                        const std::string& which);

  HandlePtr consumer_;
  const KafkaReaderOptions options_;
  std::mutex reading_;                  // held by Read, so that Release() can tell
  std::unique_ptr<Assigned> assigned_;  // null when the client is assigned nothing; guarded by reading_
  int64_t assignments_ = 0;
};

}  // namespace basin::stream::kafka
