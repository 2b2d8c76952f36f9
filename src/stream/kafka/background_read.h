// BackgroundRead: a Read of Kafka ranges on a thread of its own (or on a TaskThread a
// stream keeps for its reads), its records handed over in chunks through a bounded queue,
// as read or, when the statement taking them is busy, parsed on that thread into rows of a
// record schema (valueFormat json, csv or avro): the parse goes to whichever thread has time.
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
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "basin/status.h"
#include "common/cancellation.h"
#include "common/task_thread.h"
#include "stream/dead_letters.h"
#include "stream/kafka/reader.h"
#include "stream/kafka/types.h"
#include "stream/record_columns.h"
#include "stream/record_format.h"

namespace basin::stream::kafka {

// Parses the value of the record at topic/partition/offset (valueFormat json, csv or avro)
// into `cells`. InvalidArgument "payments/3 offset 17: <why>" when it does not parse or fit,
// or has no value (a tombstone): a bad record; another error (a schema registry out of
// reach) is no fault of the record's, and fails the batch.
Status ParseRecordValue(RecordParser& parser, std::optional<std::string_view> value, std::string_view topic,
                        int32_t partition, int64_t offset, CellSink& cells);

// The records of a read that do not parse, with a dead-letter table: found on the read's
// thread and on the thread of the scan that takes its chunks, for a stream's batch to set
// aside before it commits (KafkaSource), once the scan has taken every record of the read.
//
// Thread safety: any thread.
class BadRecords {
 public:
  // What a whole read found.
  struct Found {
    int64_t records = 0;              // records read, parsed or not
    std::vector<DeadLetter> letters;  // in topic, partition and offset order
  };

  void Add(DeadLetter letter);
  // `records` records were read, and a scan took and parsed every one of them.
  void Complete(int64_t records);
  // What was found, once Complete(); nullopt when the records were not all parsed (the
  // statement stopped reading early, or never read).
  std::optional<Found> TakeIfComplete();

 private:
  std::mutex mu_;
  std::optional<int64_t> records_;   // guarded by mu_; set by Complete()
  std::vector<DeadLetter> letters_;  // guarded by mu_
};

// A source's records parsed into rows (valueFormat json, csv or avro).
class RowParser {
 public:
  // `bad`, when given (with a dead-letter table), gets the records that do not parse.
  // REQUIRES: `bad` outlives the parser.
  explicit RowParser(const RecordOptions& records, BadRecords* bad = nullptr)
      : parser_(MakeRecordParser(records)), skip_bad_(!records.dead_letter_table.empty()), bad_(bad) {}

  // Parses the record's value into `cells`: true. A record that does not parse is passed
  // over (false) with a dead-letter table (and given to `bad` as a dead letter: a stream's
  // batch sets such records aside before it commits), else InvalidArgument names it
  // (ParseRecordValue) and the option.
  Result<bool> Parse(const KafkaRecord& record, CellSink& cells);

  const RecordSchema& schema() const { return parser_->schema(); }

 private:
  std::unique_ptr<RecordParser> parser_;
  bool skip_bad_;
  BadRecords* bad_;
};

// Records as a BackgroundRead hands them over: as read, or parsed into rows.
struct ReadChunk {
  bool parsed = false;
  // The chunk's records are the first `rows` of `records` as read (a recycled chunk keeps
  // more, which the next records are copied into in place), or the first `rows` rows of
  // `table` parsed, for a scan to hand on whole (ReferenceRows).
  std::vector<OwnedKafkaRecord> records;
  std::optional<RecordChunk> table;
  size_t rows = 0;
  std::optional<int64_t> newest_ms;  // the newest record time among those read (parsed or not)

  size_t size() const { return rows; }
};

// Reads `ranges` in one Read, so that the client stays assigned and fetching from the first
// record to the last, and queues the records in chunks of `chunk_records` (at most
// duckdb_vector_size(), a parsed chunk's rows), at most
// kQueuedChunks of them: fetching overlaps parsing and writing, in bounded memory. The
// destructor stops the Read (between polls) and waits for it.
class BackgroundRead {
 public:
  // REQUIRES: `reader`, `abandon` (null for none) and `runner` outlive the BackgroundRead.
  // `runner`: the kept thread to read on (a stream's reads, one after the other: it must
  // have no other task queued, or the read waits behind it); null to start a thread.
  // `records`: the source's record options; with valueFormat json, csv or avro, a chunk's
  // records are parsed into rows on the read's thread (RowParser: a bad one may end the
  // read) when the chunks queued before it keep the statement busy, else handed over as
  // read for the statement's thread to parse: the parse goes to whichever thread has time.
  // `then`, when set, runs on the read's thread once every range is read (not when the read
  // failed or was stopped): a stream starts reading its next batch there. `bad`, when set
  // (a stream's batch, with a dead-letter table), gets the records that do not parse.
  BackgroundRead(KafkaReader& reader, std::vector<PartitionRange> ranges, const CancellationToken* abandon,
                 size_t chunk_records, const RecordOptions& records, TaskThread* runner = nullptr,
                 std::function<void()> then = nullptr, std::shared_ptr<BadRecords> bad = nullptr);
  // Reads the ranges `ranges()` gives, called on the read's thread (it may wait for them);
  // its error is the read's.
  using RangesToRead = std::function<Result<std::vector<PartitionRange>>()>;
  BackgroundRead(KafkaReader& reader, RangesToRead ranges, const CancellationToken* abandon,
                 size_t chunk_records, const RecordOptions& records, TaskThread* runner = nullptr,
                 std::function<void()> then = nullptr, std::shared_ptr<BadRecords> bad = nullptr);
  BackgroundRead(const BackgroundRead&) = delete;
  BackgroundRead& operator=(const BackgroundRead&) = delete;
  ~BackgroundRead();

  // Gives back a chunk Next() returned, once handed out: its buffers are filled again.
  void Recycle(ReadChunk chunk);

  // The `bad` it was given: the records that do not parse, as the read and the scan that
  // takes its chunks find them (complete once Next() said every range is read).
  const std::shared_ptr<BadRecords>& bad_records() const { return bad_; }

  // The next chunk, in offset order within each partition (a parsed one may hold no rows,
  // when its records were all passed over); nullopt once every range is read. The Read's
  // error when it failed (Cancelled when `abandon` was raised).
  Result<std::optional<ReadChunk>> Next();

 private:
  static constexpr size_t kQueuedChunks = 8;

  void Run(KafkaReader& reader, const RangesToRead& ranges);
  // Adds `record` to `chunk`, parsed when the chunk is.
  Status Add(const KafkaRecord& record, ReadChunk& chunk);
  // Queues `chunk` (left empty) once there is room.
  Status Hand(ReadChunk& chunk);

  const CancellationToken* abandon_;
  const size_t chunk_records_;
  const std::function<void()> then_;
  // A chunk is parsed on the read's thread when at least this many wait before it.
  static constexpr size_t kParseBehindQueued = 2;

  std::shared_ptr<BadRecords> bad_;
  std::unique_ptr<RowParser> parser_;    // parsed records; used on the read's thread only
  std::optional<RecordChunkRows> rows_;  // into the table of the chunk being parsed
  CancellationToken stop_;               // raised by the destructor, or by Next() once `abandon` is
  std::mutex mu_;
  std::condition_variable changed_;
  std::deque<ReadChunk> queue_;      // guarded by mu_
  std::vector<ReadChunk> spare_;     // guarded by mu_; recycled, to be filled again
  Status status_;                    // guarded by mu_; the Read's, once finished_
  bool finished_ = false;            // guarded by mu_
  int64_t records_read_ = 0;         // guarded by mu_; once finished_
  std::thread thread_;               // reading, without a runner
  std::shared_future<Status> read_;  // reading, on the runner
};

}  // namespace basin::stream::kafka
