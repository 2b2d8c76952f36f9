// Stream: an INSERT or a MERGE whose source is `STREAM read_kafka(...)` or `STREAM(table)`,
// run as micro-batches into a warehouse table, exactly once (docs/streams.md,
// docs/stream-checkpoints.md):
//
//   INSERT INTO bronze BY NAME
//   SELECT decode(value) AS payment, "offset", timestamp
//   FROM STREAM read_kafka(bootstrapServers => '127.0.0.1:9092', subscribe => 'payments',
//                          startingOffsets => 'earliest', maxOffsetsPerTrigger => 10000);
//
// The checkpoint folder records each batch's Kafka ranges (or table versions) before the
// batch runs, and each batch's commit carries txn(appId = the stream's id, version = the
// batch id), so a stream stopped or killed at any point resumes where it left off, with no
// row twice and none missing. Positions are never stored in a Kafka consumer group.
//
// Thread safety: Run() on one thread; Stop() from any thread (a signal handler's thread
// included) while it runs.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "basin/session.h"
#include "basin/status.h"

namespace basin {

struct StreamOptions {
  std::string warehouse;   // as SessionOptions::warehouse
  std::string checkpoint;  // the checkpoint folder; created on first run
  std::string statement;   // the stream's INSERT or MERGE
  // "available-now" (everything the source holds at start, in bounded batches, then
  // return), "once" (one batch) or "continuous" (until Stop()).
  std::string trigger = "continuous";
  int64_t interval_ms = 1'000;  // continuous: the least time between two batch starts
  // The warehouse user the stream's statements run as, under its grants (SessionOptions::
  // user): a batch whose user lacks SELECT on the source or MODIFY on the sink fails with
  // PermissionDenied and commits nothing. Empty: the process's rights, unchecked.
  std::string user = {};
  // The table snapshots the stream reads its tables through (SessionOptions::tables), its
  // sink's compaction too; null: a cache of its own.
  std::shared_ptr<TableCache> tables = nullptr;
};

// A batch that committed, as Run() reports it.
struct StreamBatch {
  int64_t batch_id = 0;
  int64_t rows_in = 0;   // Kafka offsets the batch covered (0 for a table source)
  int64_t rows_out = 0;  // rows the sink got
  int64_t duration_ms = 0;
  int64_t table_version = -1;  // the sink's Delta version the batch committed; -1 when unknown
  int64_t dead_letters = 0;    // records that did not parse, sent to the dead-letter table
  int64_t late_rows = 0;       // rows behind the source's WATERMARK, not read (docs/streams.md)
  // Run(): end-to-end latency, from the newest source data the batch read (a Kafka record's
  // timestamp, a table source's commit time, a file's modification time) to the batch's
  // commit; unset when the sources cannot tell, and in StreamStatus. Never negative (a
  // producer's clock ahead of this machine's counts as 0).
  std::optional<int64_t> end_to_end_ms;
  // What the run did after the batch that a user should know ("compacted default.bronze
  // (OPTIMIZE)", or why an automatic compaction failed); empty mostly.
  std::string notice;
  // Run(): records the source held beyond this batch when it was planned (a Kafka source's
  // lag); unset when the source cannot tell, and in StreamStatus.
  std::optional<int64_t> lag;
};

// What a stream's checkpoint folder says of it (basin stream status).
struct StreamStatus {
  std::string id;
  std::string statement;
  std::string sink_table;
  std::optional<int64_t> last_planned;    // the newest batch whose ranges are recorded
  std::optional<int64_t> last_committed;  // the newest batch the folder records as committed
  // The newest committed batch's figures, and when it committed (ms since the epoch).
  std::optional<StreamBatch> last_batch;
  int64_t last_committed_time_ms = 0;
};

// NotFound when `checkpoint` holds no stream; Corruption naming the object for a damaged
// folder.
Result<StreamStatus> ReadStreamStatus(const std::string& checkpoint);

class Stream {
 public:
  // InvalidArgument for a statement that is not an INSERT into a warehouse table reading
  // one STREAM read_kafka source, a bad trigger, or a checkpoint folder that holds another
  // statement's stream; NotFound for a missing sink table.
  static Result<std::unique_ptr<Stream>> Open(const StreamOptions& options);
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  // The stream's id (the txn appId of its commits), kept in the checkpoint folder.
  const std::string& id() const;

  // Runs batches as the trigger says. `on_batch` hears of every batch (nullopt: the poll
  // found nothing to read). A failed batch returns its error; running again resumes it.
  Status Run(const std::function<void(const std::optional<StreamBatch>&)>& on_batch = {});

  // Makes Run() return after the batch in flight. Idempotent; any thread.
  void Stop();

  // Makes Run() return at once, abandoning the batch in flight: its reads of the source end
  // and Run() returns Cancelled (a commit under way completes or fails whole); the next run
  // runs the batch again, so nothing is lost. For a batch that waits on a source that does
  // not answer. Idempotent; any thread.
  void Abandon();

 private:
  struct Impl;
  explicit Stream(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace basin
