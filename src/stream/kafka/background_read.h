// BackgroundRead: a Read of Kafka ranges on a thread of its own (or on a TaskThread a
// stream keeps for its reads), its records handed over in chunks through a bounded queue.
// read_kafka scans with one, and a stream's batch starts one before its statement is parsed
// and bound, so that the first fetch's round trip overlaps that work (when the batch is
// still being planned, the read waits for its ranges on its thread, and starts as soon as
// they are known).
//
// Thread safety: Next() from one thread at a time; the reader is the read's thread's alone
// until the BackgroundRead is destroyed.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "basin/status.h"
#include "common/cancellation.h"
#include "common/task_thread.h"
#include "stream/kafka/reader.h"
#include "stream/kafka/types.h"

namespace basin::stream::kafka {

// Reads `ranges` in one Read, so that the client stays assigned and fetching from the first
// record to the last, and queues the records in chunks of `chunk_records`, at most
// kQueuedChunks of them: fetching overlaps parsing and writing, in bounded memory. The
// destructor stops the Read (between polls) and waits for it.
class BackgroundRead {
 public:
  // REQUIRES: `reader`, `abandon` (null for none) and `runner` outlive the BackgroundRead.
  // `runner`: the kept thread to read on (a stream's reads, one after the other: it must
  // have no other task queued, or the read waits behind it); null to start a thread.
  BackgroundRead(KafkaReader& reader, std::vector<PartitionRange> ranges, const CancellationToken* abandon,
                 size_t chunk_records, TaskThread* runner = nullptr);
  // Reads the ranges `ranges()` gives, called on the read's thread (it may wait for them);
  // its error is the read's.
  using RangesToRead = std::function<Result<std::vector<PartitionRange>>()>;
  BackgroundRead(KafkaReader& reader, RangesToRead ranges, const CancellationToken* abandon,
                 size_t chunk_records, TaskThread* runner = nullptr);
  BackgroundRead(const BackgroundRead&) = delete;
  BackgroundRead& operator=(const BackgroundRead&) = delete;
  ~BackgroundRead();

  // The next records, in offset order within each partition; none once every range is read.
  // The Read's error when it failed (Cancelled when `abandon` was raised).
  Result<std::vector<OwnedKafkaRecord>> Next();

 private:
  static constexpr size_t kQueuedChunks = 8;

  void Run(KafkaReader& reader, const RangesToRead& ranges);
  // Queues `chunk` (left empty) once there is room.
  Status Hand(std::vector<OwnedKafkaRecord>& chunk);

  const CancellationToken* abandon_;
  const size_t chunk_records_;
  CancellationToken stop_;  // raised by the destructor, or by Next() once `abandon` is
  std::mutex mu_;
  std::condition_variable changed_;
  std::deque<std::vector<OwnedKafkaRecord>> queue_;  // guarded by mu_
  Status status_;                                    // guarded by mu_; the Read's, once finished_
  bool finished_ = false;                            // guarded by mu_
  std::thread thread_;                               // reading, without a runner
  std::shared_future<Status> read_;                  // reading, on the runner
};

}  // namespace basin::stream::kafka
