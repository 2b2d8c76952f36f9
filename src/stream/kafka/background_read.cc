#include "stream/kafka/background_read.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <tuple>
#include <utility>

namespace basin::stream::kafka {

Status ParseRecordValue(RecordParser& parser, std::optional<std::string_view> value, std::string_view topic,
                        int32_t partition, int64_t offset, CellSink& cells) {
  Status parsed =
      value ? parser.Parse(*value, cells) : Status::InvalidArgument("the record has no value (a tombstone)");
  if (parsed.ok()) return parsed;
  const std::string where =
      ToString(TopicPartition{std::string(topic), partition}) + " offset " + std::to_string(offset);
  // Not the record's fault (a schema registry out of reach): the batch fails, as it came.
  if (parsed.code() != ErrorCode::kInvalidArgument) return parsed.WithContext(where);
  return Status::InvalidArgument(where + ": " + parsed.message());
}

void BadRecords::Add(DeadLetter letter) {
  std::lock_guard<std::mutex> lock(mu_);
  letters_.push_back(std::move(letter));
}

void BadRecords::Complete(int64_t records) {
  std::lock_guard<std::mutex> lock(mu_);
  records_ = records;
}

std::optional<BadRecords::Found> BadRecords::TakeIfComplete() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!records_) return std::nullopt;
  Found found{*records_, std::move(letters_)};
  letters_.clear();
  // Found on two threads: in the order they were read (within a partition, they are).
  std::stable_sort(found.letters.begin(), found.letters.end(), [](const DeadLetter& a, const DeadLetter& b) {
    return std::tie(a.topic, a.partition, a.offset) < std::tie(b.topic, b.partition, b.offset);
  });
  return found;
}

Result<bool> RowParser::Parse(const KafkaRecord& record, CellSink& cells) {
  Status parsed =
      ParseRecordValue(*parser_, record.value, record.topic, record.partition, record.offset, cells);
  if (parsed.ok()) return true;
  if (parsed.code() != ErrorCode::kInvalidArgument) return parsed;  // not the record's fault
  if (!skip_bad_) {
    return Status::InvalidArgument(parsed.message() +
                                   " (give deadLetterTable => 'name' to set such records aside)");
  }
  if (bad_ != nullptr) {
    DeadLetter letter;
    letter.error = parsed.message();
    if (record.key) letter.key = std::string(*record.key);
    if (record.value) letter.value = std::string(*record.value);
    letter.topic = std::string(record.topic);
    letter.partition = record.partition;
    letter.offset = record.offset;
    bad_->Add(std::move(letter));
  }
  return false;
}

BackgroundRead::BackgroundRead(KafkaReader& reader, std::vector<PartitionRange> ranges,
                               const CancellationToken* abandon, size_t chunk_records,
                               const RecordOptions& records, TaskThread* runner, std::function<void()> then,
                               std::shared_ptr<BadRecords> bad)
    : BackgroundRead(
          reader, [ranges = std::move(ranges)]() -> Result<std::vector<PartitionRange>> { return ranges; },
          abandon, chunk_records, records, runner, std::move(then), std::move(bad)) {}

BackgroundRead::BackgroundRead(KafkaReader& reader, RangesToRead ranges, const CancellationToken* abandon,
                               size_t chunk_records, const RecordOptions& records, TaskThread* runner,
                               std::function<void()> then, std::shared_ptr<BadRecords> bad)
    : abandon_(abandon),
      chunk_records_(std::min<size_t>(chunk_records, duckdb_vector_size())),
      then_(std::move(then)),
      bad_(std::move(bad)) {
  if (records.format != ValueFormat::kRaw) parser_ = std::make_unique<RowParser>(records, bad_.get());
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

Result<std::optional<ReadChunk>> BackgroundRead::Next() {
  std::unique_lock<std::mutex> lock(mu_);
  while (queue_.empty() && !finished_) {
    if (abandon_ != nullptr && abandon_->cancelled()) stop_.Cancel();
    changed_.wait_for(lock, std::chrono::milliseconds(50));
  }
  if (queue_.empty()) {
    RETURN_IF_ERROR(status_);
    // Every chunk before was handed out whole: each record was parsed, here or by the scan.
    if (bad_) bad_->Complete(records_read_);
    return std::optional<ReadChunk>();
  }
  std::optional<ReadChunk> chunk(std::move(queue_.front()));
  queue_.pop_front();
  changed_.notify_all();
  return chunk;
}

void BackgroundRead::Run(KafkaReader& reader, const RangesToRead& ranges) {
  Result<std::vector<PartitionRange>> to_read = ranges();
  ReadChunk chunk;
  size_t taken = 0;  // records of `chunk`, parsed or passed over
  int64_t records = 0;
  Status read = !to_read.ok() ? to_read.status()
                              : reader.Read(
                                    *to_read,
                                    [&](const KafkaRecord& record) {
                                      records++;
                                      RETURN_IF_ERROR(Add(record, chunk));
                                      if (++taken < chunk_records_) return Status::OK();
                                      taken = 0;
                                      return Hand(chunk);
                                    },
                                    &stop_,
                                    // Parsed records have the value's columns only.
                                    parser_ ? KafkaReader::Headers::kSkipped : KafkaReader::Headers::kRead);
  if (read.ok() && taken > 0) read = Hand(chunk);
  const bool read_all = read.ok();
  {
    std::lock_guard<std::mutex> lock(mu_);
    status_ = std::move(read);
    finished_ = true;
    records_read_ = records;
    changed_.notify_all();
  }
  if (read_all && then_) then_();
}

Status BackgroundRead::Add(const KafkaRecord& record, ReadChunk& chunk) {
  if (record.timestamp_type != TimestampType::kNone)
    chunk.newest_ms = std::max(chunk.newest_ms.value_or(record.timestamp_ms), record.timestamp_ms);
  if (!chunk.parsed) {
    if (chunk.records.size() == chunk.rows) chunk.records.emplace_back();
    CopyInto(record, chunk.records[chunk.rows++]);
    return Status::OK();
  }
  if (!chunk.table) {
    chunk.table.emplace(parser_->schema());
    rows_.emplace(chunk.table->chunk, parser_->schema());
  }
  rows_->set_row(chunk.rows);
  ASSIGN_OR_RETURN(const bool made, parser_->Parse(record, *rows_));
  if (made) chunk.rows++;
  return Status::OK();
}

Status BackgroundRead::Hand(ReadChunk& chunk) {
  std::unique_lock<std::mutex> lock(mu_);
  changed_.wait(lock, [&] { return queue_.size() < kQueuedChunks || stop_.cancelled(); });
  if (stop_.cancelled()) return Status::Cancelled("the read of Kafka ended");
  queue_.push_back(std::move(chunk));
  rows_.reset();
  if (spare_.empty()) {
    chunk = ReadChunk();
  } else {
    chunk = std::move(spare_.back());
    spare_.pop_back();
  }
  chunk.parsed = parser_ && queue_.size() >= kParseBehindQueued;
  changed_.notify_all();
  return Status::OK();
}

void BackgroundRead::Recycle(ReadChunk chunk) {
  chunk.parsed = false;
  chunk.table.reset();  // what a scan handed on keeps its data
  chunk.rows = 0;
  chunk.newest_ms.reset();
  std::lock_guard<std::mutex> lock(mu_);
  if (spare_.size() < kQueuedChunks) spare_.push_back(std::move(chunk));
}

}  // namespace basin::stream::kafka
