#include "stream/kafka/background_read.h"

#include <chrono>
#include <utility>

namespace basin::stream::kafka {

BackgroundRead::BackgroundRead(KafkaReader& reader, std::vector<PartitionRange> ranges,
                               const CancellationToken* abandon, size_t chunk_records, TaskThread* runner)
    : BackgroundRead(
          reader, [ranges = std::move(ranges)]() -> Result<std::vector<PartitionRange>> { return ranges; },
          abandon, chunk_records, runner) {}

BackgroundRead::BackgroundRead(KafkaReader& reader, RangesToRead ranges, const CancellationToken* abandon,
                               size_t chunk_records, TaskThread* runner)
    : abandon_(abandon), chunk_records_(chunk_records) {
  auto read = [this, &reader, ranges = std::move(ranges)] { Run(reader, ranges); };
  if (runner == nullptr) {
    thread_ = std::thread(std::move(read));
  } else {
    read_ = runner->Submit([read = std::move(read)] {
      read();
      return Status::OK();  // the read's own status is status_
    });
  }
}

BackgroundRead::~BackgroundRead() {
  stop_.Cancel();
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (read_.valid()) read_.wait();
}

Result<std::vector<OwnedKafkaRecord>> BackgroundRead::Next() {
  std::unique_lock<std::mutex> lock(mu_);
  while (queue_.empty() && !finished_) {
    if (abandon_ != nullptr && abandon_->cancelled()) stop_.Cancel();
    changed_.wait_for(lock, std::chrono::milliseconds(50));
  }
  if (queue_.empty()) {
    RETURN_IF_ERROR(status_);
    return std::vector<OwnedKafkaRecord>();
  }
  std::vector<OwnedKafkaRecord> chunk = std::move(queue_.front());
  queue_.pop_front();
  changed_.notify_all();
  return chunk;
}

void BackgroundRead::Run(KafkaReader& reader, const RangesToRead& ranges) {
  Result<std::vector<PartitionRange>> to_read = ranges();
  std::vector<OwnedKafkaRecord> chunk;
  Status read = !to_read.ok() ? to_read.status()
                              : reader.Read(
                                    *to_read,
                                    [&](const KafkaRecord& record) {
                                      chunk.push_back(Own(record));
                                      return chunk.size() < chunk_records_ ? Status::OK() : Hand(chunk);
                                    },
                                    &stop_);
  if (read.ok() && !chunk.empty()) read = Hand(chunk);
  std::lock_guard<std::mutex> lock(mu_);
  status_ = std::move(read);
  finished_ = true;
  changed_.notify_all();
}

Status BackgroundRead::Hand(std::vector<OwnedKafkaRecord>& chunk) {
  std::unique_lock<std::mutex> lock(mu_);
  changed_.wait(lock, [&] { return queue_.size() < kQueuedChunks || stop_.cancelled(); });
  if (stop_.cancelled()) return Status::Cancelled("the read of Kafka ended");
  queue_.push_back(std::move(chunk));
  chunk.clear();
  changed_.notify_all();
  return Status::OK();
}

}  // namespace basin::stream::kafka
