#include "stream/kafka/kafka_source.h"

#include <duckdb.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "common/task_thread.h"
#include "stream/dead_letters.h"
#include "stream/kafka/planner.h"
#include "stream/kafka/read_kafka.h"
#include "stream/kafka/reader.h"
#include "stream/record_format.h"

namespace basin::stream::kafka {
namespace {

using json = nlohmann::json;

json RangesJson(const std::vector<PartitionRange>& ranges) {
  json out = json::object();
  for (const PartitionRange& r : ranges) {
    out[r.tp.topic][std::to_string(r.tp.partition)] = json::array({r.start_offset, r.end_offset});
  }
  return out;
}

Result<std::vector<PartitionRange>> RangesFrom(const json& entry, const std::string& where) {
  auto bad = [&](const std::string& what) { return Status::Corruption(where + ": " + what); };
  if (!entry.is_object() || entry.value("kind", "") != "kafka" || !entry.contains("ranges") ||
      !entry["ranges"].is_object()) {
    return bad("the source is not a Kafka source with \"ranges\"");
  }
  std::vector<PartitionRange> ranges;
  for (const auto& [topic, partitions] : entry["ranges"].items()) {
    if (!partitions.is_object()) return bad("ranges of topic '" + topic + "' must be an object");
    for (const auto& [partition, range] : partitions.items()) {
      int32_t number = 0;
      const auto [end, ec] = std::from_chars(partition.data(), partition.data() + partition.size(), number);
      if (ec != std::errc() || end != partition.data() + partition.size() || !range.is_array() ||
          range.size() != 2 || !range[0].is_number_integer() || !range[1].is_number_integer()) {
        return bad("range of " + topic + "/" + partition + " must be [start, end]");
      }
      ranges.push_back(PartitionRange{{topic, number}, range[0].get<int64_t>(), range[1].get<int64_t>()});
    }
  }
  return ranges;
}

// Where each partition's next batch starts: the ends of `ranges`.
PartitionOffsets Ends(const std::vector<PartitionRange>& ranges) {
  PartitionOffsets out;
  for (const PartitionRange& r : ranges) out[r.tp] = r.end_offset;
  return out;
}

// Where a batch's read puts the records that do not parse: with a dead-letter table, for
// the batch to set aside (KafkaSource::SetAsideDeadLetters); else none.
std::shared_ptr<BadRecords> BadRecordsFor(const RecordOptions& records) {
  return records.dead_letter_table.empty() ? nullptr : std::make_shared<BadRecords>();
}

// A batch's ranges while they are being planned: waits for them (nullopt: nothing new).
using PlannedRanges = std::function<Result<std::optional<std::vector<PartitionRange>>>()>;

// The batch read_kafka sees while the statement is bound or run.
class Batch final : public KafkaBatch {
 public:
  // nullopt: binding only, to learn the source's options; nothing is read. `reader`, when
  // given, is lent to read_kafka, and starts reading the ranges at once on `read_thread`,
  // parsing them as `records` say (the source's options, as binding taught them).
  explicit Batch(std::optional<std::vector<PartitionRange>> ranges, KafkaReader* reader = nullptr,
                 TaskThread* read_thread = nullptr, const CancellationToken* abandon = nullptr,
                 std::optional<std::string> schema = std::nullopt, const RecordOptions& records = {},
                 std::function<void()> then = nullptr)
      : ranges_(std::move(ranges)), reader_(reader), abandon_(abandon), schema_(std::move(schema)) {
    if (reader_ != nullptr && ranges_ && TotalOffsets(*ranges_) > 0) {
      read_ = std::make_unique<BackgroundRead>(*reader_, *ranges_, abandon_, duckdb_vector_size(), records,
                                               read_thread, std::move(then), BadRecordsFor(records));
      bad_ = read_->bad_records();
    }
  }
  // Ranges still being planned (KafkaSource::ReadAhead): the read waits for them on
  // `read_thread` and starts as soon as they are known; binding read_kafka waits for them too.
  // With `early`, the read of `early_ranges` begun before (KafkaSource::ReadNextEarly), which
  // the plan must give. `then` as BackgroundRead's.
  Batch(const PlannedRanges& planned, KafkaReader& reader, TaskThread* read_thread,
        const CancellationToken* abandon, std::optional<std::string> schema, const RecordOptions& records,
        std::function<void()> then, std::unique_ptr<BackgroundRead> early = nullptr,
        std::optional<std::vector<PartitionRange>> early_ranges = std::nullopt)
      : planned_(planned),
        reader_(&reader),
        abandon_(abandon),
        schema_(std::move(schema)),
        early_ranges_(std::move(early_ranges)) {
    if (early) {
      read_ = std::move(early);
      bad_ = read_->bad_records();
      return;
    }
    auto ranges = [planned]() -> Result<std::vector<PartitionRange>> {
      ASSIGN_OR_RETURN(std::optional<std::vector<PartitionRange>> ranges, planned());
      return ranges ? *std::move(ranges) : std::vector<PartitionRange>();
    };
    read_ = std::make_unique<BackgroundRead>(reader, ranges, abandon_, duckdb_vector_size(), records,
                                             read_thread, std::move(then), BadRecordsFor(records));
    bad_ = read_->bad_records();
  }

  KafkaReader* Reader() override { return reader_; }
  std::unique_ptr<BackgroundRead> TakeRead() override { return std::move(read_); }
  const CancellationToken* Abandon() override { return abandon_; }
  std::optional<std::string> Schema() override { return schema_; }

  Result<std::vector<PartitionRange>> Ranges(const KafkaOptions& options) override {
    options_ = options;
    if (planned_) {
      Result<std::optional<std::vector<PartitionRange>>> planned = planned_();
      planned_ = nullptr;  // binding again (a describe, then the write) takes the same ranges
      if (!planned.ok()) return planned.status();
      if (!*planned) return Status::Cancelled("the batch's plan found nothing new to read");
      ranges_ = std::move(**planned);
      // Plan() gives an early read's entry for the position it was planned from, which is
      // where a batch planned ahead starts: a batch whose plan differs fails (and runs again).
      if (early_ranges_ && *early_ranges_ != *ranges_) {
        return Status::Internal("the batch's plan is not the one its early read began with");
      }
      early_ranges_.reset();
    }
    if (!ranges_) return std::vector<PartitionRange>();
    return *ranges_;
  }

  const std::optional<KafkaOptions>& options() const { return options_; }

  // The ranges binding took (nullopt before, or when there was nothing to read).
  const std::optional<std::vector<PartitionRange>>& ranges() const { return ranges_; }

  // With a dead-letter table: the records of the batch's read that do not parse, found by
  // it and the scan that took it (null when nothing was to be read).
  BadRecords* bad_records() const { return bad_.get(); }

  // Stops the batch's read if no scan took it (the statement read nothing): the batch's
  // client is then the caller's again, as it is once the scan that took it ended.
  void EndRead() { read_.reset(); }

  void SawRecordsUpTo(int64_t timestamp_ms) override {
    newest_ms_ = std::max(newest_ms_.value_or(timestamp_ms), timestamp_ms);
  }
  std::optional<int64_t> newest_ms() const { return newest_ms_; }

 private:
  PlannedRanges planned_;  // until the ranges are known
  std::optional<std::vector<PartitionRange>> ranges_;
  KafkaReader* reader_;
  const CancellationToken* abandon_;
  std::optional<std::string> schema_;
  std::optional<std::vector<PartitionRange>> early_ranges_;  // of an early read, until the plan is known
  std::optional<KafkaOptions> options_;
  std::optional<int64_t> newest_ms_;      // the newest record time a scan saw
  std::shared_ptr<BadRecords> bad_;       // read_'s
  std::unique_ptr<BackgroundRead> read_;  // until a scan takes it; last: it reads with reader_
};

class KafkaSource final : public BatchSource {
 public:
  KafkaSource(sql::Session& session, sql::grammar::StreamSource stream, DeadLetterWriter& dead_letters,
              std::string where)
      : session_(session),
        stream_(std::move(stream)),
        dead_letters_(dead_letters),
        where_(std::move(where)) {}

  ~KafkaSource() override {
    std::optional<EarlyRead> stale;
    std::lock_guard<std::mutex> lock(plan_mu_);
    read_next_early_ = false;
    stale = TakeEarlyRead();
  }

  Result<std::optional<json>> Plan(const std::optional<json>& previous) override {
    RETURN_IF_ERROR(LearnOptions());
    std::optional<PartitionOffsets> committed;
    if (previous) {
      ASSIGN_OR_RETURN(std::vector<PartitionRange> before,
                       RangesFrom(*previous, where_ + " previous offsets"));
      committed = Ends(before);
      RETURN_IF_ERROR(KeepSchema(*previous));
    }
    std::optional<EarlyRead> stale;  // destroyed after the lock is released: see EarlyRead
    std::lock_guard<std::mutex> lock(plan_mu_);
    if (early_ && early_->entry && committed && early_->after == *committed) {
      std::optional<json> entry = std::move(early_->entry);
      early_->entry.reset();
      backlog_ = early_->backlog;  // the lag from this batch's plan on, as a plan made now
      if (!early_->read) early_.reset();
      return entry;
    }
    stale = TakeEarlyRead();
    return PlanAfter(committed);
  }

  Status Read(const json& planned, BatchRead& read, const std::function<Status()>& run) override {
    ASSIGN_OR_RETURN(std::vector<PartitionRange> ranges, RangesFrom(planned, where_ + " offsets"));
    RETURN_IF_ERROR(LearnOptions());
    RETURN_IF_ERROR(KeepSchema(planned));
    RETURN_IF_ERROR(OpenReader());
    std::function<void()> then;
    {
      std::optional<EarlyRead> stale;  // planned for another batch, or this one run again
      std::lock_guard<std::mutex> lock(plan_mu_);
      stale = BeginBatch();
      then = ThenReadNext(Known(ranges), read.abandon, nullptr, batches_begun_);
    }
    Batch batch(std::move(ranges), reader_.get(), &read_thread_, read.abandon, inferred_schema_,
                options_->records, std::move(then));
    return ReadBatch(batch, read, run);
  }

  // Once a first batch taught the source its options and schema: Plan() then touches only
  // the planning client and what the source keeps for it, never the session.
  bool PlansAhead() const override { return options_ && planner_ && !options_->records.InfersSchema(); }

  Status ReadAhead(const std::function<Result<std::optional<json>>()>& planned, BatchRead& read,
                   const std::function<Status()>& run) override {
    RETURN_IF_ERROR(OpenReader());
    PlannedRanges ranges = [this, planned]() -> Result<std::optional<std::vector<PartitionRange>>> {
      ASSIGN_OR_RETURN(std::optional<json> entry, planned());
      if (!entry) return std::optional<std::vector<PartitionRange>>();
      ASSIGN_OR_RETURN(std::vector<PartitionRange> ranges, RangesFrom(*entry, where_ + " offsets"));
      return std::optional<std::vector<PartitionRange>>(std::move(ranges));
    };
    std::unique_ptr<BackgroundRead> early;
    std::optional<std::vector<PartitionRange>> early_ranges;
    std::function<void()> then;
    {
      std::optional<EarlyRead> stale;
      std::lock_guard<std::mutex> lock(plan_mu_);
      stale = BeginBatch();
      if (stale && stale->read) {
        // Begun when the last batch's read ended: the batch's, if its plan (Plan(), which
        // returns the early read's entry for the position it was planned from) agrees.
        early = std::move(stale->read);
        early_ranges = stale->ranges;
        stale->wanted->store(true);                   // its read may begin the next one early in turn
        if (stale->entry) early_ = std::move(stale);  // for Plan() to take
      }
      then = ThenReadNext(ranges, read.abandon, nullptr, batches_begun_);
    }
    Batch batch(ranges, *reader_, &read_thread_, read.abandon, inferred_schema_, options_->records, then,
                std::move(early), std::move(early_ranges));
    return ReadBatch(batch, read, run);
  }

  Status ReadNothing(const std::optional<json>& previous, BatchRead& read,
                     const std::function<Status()>& run) override {
    RETURN_IF_ERROR(LearnOptions());
    if (previous) RETURN_IF_ERROR(KeepSchema(*previous));
    if (options_->records.InfersSchema() && !inferred_schema_) {
      return Status::InvalidArgument(
          where_ + ": its source " + stream_.source +
          " has no record yet to infer its schema from, while another source of the stream has rows; give it "
          "schema => '...'");
    }
    RETURN_IF_ERROR(OpenReader());
    {
      std::optional<EarlyRead> stale;
      std::lock_guard<std::mutex> lock(plan_mu_);
      stale = BeginBatch();
    }
    Batch batch(std::vector<PartitionRange>{}, reader_.get(), &read_thread_, read.abandon, inferred_schema_,
                options_->records);
    return ReadBatch(batch, read, run);
  }

  int64_t RecordsIn(const json& planned) const override {
    auto ranges = RangesFrom(planned, where_);
    return ranges.ok() ? TotalOffsets(*ranges) : 0;
  }

  std::optional<int64_t> Backlog() const override {
    std::lock_guard<std::mutex> lock(plan_mu_);  // an early read plans on the read thread
    return backlog_;
  }

  // The options are the statement's; a schema, when inferred, is kept from the stream's
  // first batch on.
  std::optional<std::string> ColumnsKey() const override {
    if (!options_) return std::nullopt;
    if (inferred_schema_) return *inferred_schema_;
    if (options_->records.InfersSchema()) return std::nullopt;
    return "";
  }

  void ReadNextEarly(bool allowed) override {
    std::lock_guard<std::mutex> lock(plan_mu_);
    read_next_early_ = allowed;
  }

  void Idle() override {
    std::lock_guard<std::mutex> lock(plan_mu_);
    // A read begun early goes on into the next batch: its client stays assigned.
    if (early_ || !reader_) return;
    // Not queued on the read thread: a read's `then` may be about to queue an early read
    // there (it waits for plan_mu_), which would then wait behind this for room.
    reader_->Release();  // nothing while a read runs: it goes on into the next batch
  }

  void CapAtCurrentEnd(bool capped) override {
    cap_.reset();
    if (capped) cap_.emplace();
  }

 private:
  // The next batch's entry when the last one ended at `committed` (nullopt: the first);
  // nullopt when there is nothing new. REQUIRES: plan_mu_ held, LearnOptions done.
  Result<std::optional<json>> PlanAfter(const std::optional<PartitionOffsets>& committed) {
    if (!planner_) {
      ASSIGN_OR_RETURN(planner_, KafkaReader::Open(*options_));
    }
    ASSIGN_OR_RETURN(PartitionWatermarks watermarks, QueryWatermarks());
    const PartitionWatermarks uncapped = watermarks;
    if (cap_) {
      if (cap_->empty()) cap_ = watermarks;
      for (auto& [tp, marks] : watermarks) {
        auto it = cap_->find(tp);
        marks.high = it == cap_->end() ? marks.low : std::min(marks.high, it->second.high);
      }
    }
    ASSIGN_OR_RETURN(std::vector<PartitionRange> ranges, PlanRanges(*options_, committed, watermarks));
    backlog_ = 0;
    for (const PartitionRange& range : ranges) {
      auto marks = uncapped.find(range.tp);
      if (marks != uncapped.end())
        backlog_ = *backlog_ + std::max<int64_t>(0, marks->second.high - range.end_offset);
    }
    if (TotalOffsets(ranges) == 0) return std::optional<json>();
    json entry = {{"kind", "kafka"}, {"ranges", RangesJson(ranges)}};
    if (options_->records.InfersSchema()) {
      // The stream's first batch with no schema option: its records decide the columns.
      RETURN_IF_ERROR(OpenReader());
      ASSIGN_OR_RETURN(std::string inferred, SampleSchema(*reader_, options_->records, ranges, nullptr));
      RETURN_IF_ERROR(UseSchema(inferred));
    }
    if (inferred_schema_) entry["schema"] = *inferred_schema_;
    return std::optional<json>(std::move(entry));
  }

  // A read of the next batch begun when the last one's read ended (ReadNextEarly), while its
  // statement ended and committed: the position it was planned from (`after`), its entry
  // until Plan() takes it, its read until ReadAhead() takes it. Destroying the read waits for
  // its task on the read thread, whose `then` may wait for plan_mu_: it is destroyed with
  // plan_mu_ released, and `wanted` (false once discarded) tells `then` not to go on.
  struct EarlyRead {
    PartitionOffsets after;
    std::optional<json> entry;
    std::optional<int64_t> backlog;  // its plan's, for Backlog() once Plan() takes the entry
    std::vector<PartitionRange> ranges;
    std::unique_ptr<BackgroundRead> read;
    std::shared_ptr<std::atomic<bool>> wanted;
  };

  // The early read, taken out to be destroyed (its `wanted` cleared). REQUIRES: plan_mu_ held.
  std::optional<EarlyRead> TakeEarlyRead() {
    std::optional<EarlyRead> early = std::move(early_);
    early_.reset();
    if (early) early->wanted->store(false);
    return early;
  }

  // What a batch's read runs once it has read `ranges` (`then`), when the run allows reading
  // the next batch early: ReadNext. `wanted`: an early read's flag (null for a batch's own).
  // `batch`: the number of the batch the read is (or will be, for an early read) the read of.
  // REQUIRES: plan_mu_ held.
  std::function<void()> ThenReadNext(PlannedRanges ranges, const CancellationToken* abandon,
                                     std::shared_ptr<std::atomic<bool>> wanted, uint64_t batch) {
    if (!read_next_early_) return nullptr;
    return [this, ranges = std::move(ranges), abandon, wanted = std::move(wanted), batch] {
      Result<std::optional<std::vector<PartitionRange>>> read = ranges();  // known: they were read
      if (read.ok() && *read) ReadNext(**read, abandon, wanted.get(), batch);
    };
  }

  // PlannedRanges of ranges already known.
  static PlannedRanges Known(std::vector<PartitionRange> ranges) {
    return [ranges = std::move(ranges)]() -> Result<std::optional<std::vector<PartitionRange>>> {
      return std::optional<std::vector<PartitionRange>>(ranges);
    };
  }

  // On the read's thread, once batch number `batch` (batches_begun_ once it began) read its
  // `ranges`: when the source held more than the batch took, plans the next batch from where
  // it ends and starts reading it, unless a later batch began or the read was discarded.
  void ReadNext(const std::vector<PartitionRange>& ranges, const CancellationToken* abandon,
                const std::atomic<bool>* wanted, uint64_t batch) {
    std::lock_guard<std::mutex> lock(plan_mu_);
    if (!read_next_early_ || !PlansAhead() || (wanted != nullptr && !wanted->load()) ||
        batch != batches_begun_ || early_ || !backlog_ || *backlog_ == 0) {
      return;
    }
    const PartitionOffsets after = Ends(ranges);
    // Backlog() tells the lag as of the batch running: the early plan's is kept for its batch.
    const std::optional<int64_t> running_backlog = backlog_;
    Result<std::optional<json>> entry = PlanAfter(after);
    const std::optional<int64_t> early_backlog = backlog_;
    backlog_ = running_backlog;
    if (!entry.ok() || !*entry) return;  // the batch's own Plan() plans again, and says why
    Result<std::vector<PartitionRange>> next = RangesFrom(**entry, where_);
    if (!next.ok()) return;
    EarlyRead early{after, *entry, early_backlog, *next, nullptr, std::make_shared<std::atomic<bool>>(true)};
    // Queued on the read thread after this task: it starts as soon as this read's task ends.
    early.read = std::make_unique<BackgroundRead>(
        *reader_, *next, abandon, duckdb_vector_size(), options_->records, &read_thread_,
        ThenReadNext(Known(*next), abandon, early.wanted, batch + 1), BadRecordsFor(options_->records));
    early_ = std::move(early);
  }

  // Counts a batch's beginning (Read, ReadAhead, ReadNothing): a read of the batches before
  // no longer starts the next one early. Returns an early read that is not the batch's, to be
  // destroyed with plan_mu_ released (all of it but for ReadAhead). REQUIRES: plan_mu_ held.
  std::optional<EarlyRead> BeginBatch() {
    batches_begun_++;
    return TakeEarlyRead();
  }

  // `run()` with read_kafka reading `batch`, the records that do not parse and the rows the
  // sink refuses set aside as dead letters before the batch's first commit (or after `run`,
  // when it committed nothing).
  Status ReadBatch(Batch& batch, BatchRead& read, const std::function<Status()>& run) {
    ScopedKafkaBatch installed(session_.connection().raw(), stream_.index, &batch);
    if (!options_->records.dead_letter_table.empty()) {
      // After what the sources read around this one set (a stream of several).
      read.before_commit = [this, &batch, &read, first = std::move(read.before_commit)] {
        if (first) RETURN_IF_ERROR(first());
        return SetAsideDeadLetters(batch, read);
      };
    }
    Status ran = dead_letters_.WithRefusedRowsSetAside(options_->records.dead_letter_table, read, run);
    if (ran.ok()) ran = read.BeforeCommit();
    read.before_commit = nullptr;
    read.NoteSourceTime(batch.newest_ms());
    return ran;
  }

  // The watermarks of the subscribed partitions, as listed at most
  // partition_discovery_interval_ms ago (a metadata request's round trip off most batches):
  // their high ones asked now, in one request, and their low ones as of the listing (the
  // full watermark query sends a second request). The list is made again when it lacks a
  // subscribed topic, which may have been created since, and when a partition it names fails
  // its query.
  Result<PartitionWatermarks> QueryWatermarks() {
    const auto now = std::chrono::steady_clock::now();
    const int64_t interval_ms = options_->partition_discovery_interval_ms;
    const bool stale = !partitions_ ||
                       (interval_ms >= 0 && now - listed_at_ >= std::chrono::milliseconds(interval_ms)) ||
                       LacksATopic(*partitions_);
    if (!stale) {
      Result<PartitionOffsets> ends = planner_->QueryHighWatermarks(*partitions_);
      if (ends.ok()) {
        PartitionWatermarks watermarks;
        for (const auto& [tp, end] : *ends) {
          auto listed = lows_.find(tp);
          if (listed == lows_.end()) break;
          watermarks[tp] = Watermarks{listed->second.low, end};
        }
        if (watermarks.size() == ends->size()) return watermarks;
      }
    }
    ASSIGN_OR_RETURN(std::vector<TopicPartition> listed, planner_->ListPartitions(options_->subscription));
    ASSIGN_OR_RETURN(PartitionWatermarks watermarks, planner_->QueryWatermarks(listed));
    partitions_ = std::move(listed);
    lows_ = watermarks;
    listed_at_ = now;
    return watermarks;
  }

  // Whether `partitions` holds no partition of a topic the source subscribes by name.
  bool LacksATopic(const std::vector<TopicPartition>& partitions) const {
    for (const std::string& topic : options_->subscription.topics()) {
      if (std::none_of(partitions.begin(), partitions.end(),
                       [&](const TopicPartition& tp) { return tp.topic == topic; })) {
        return true;
      }
    }
    return false;
  }

  // One client reads every batch. It is not the planning client: requests to a broker are
  // answered in order, so watermark queries would wait behind its last fetch.
  Status OpenReader() {
    if (!reader_) {
      ASSIGN_OR_RETURN(reader_, KafkaReader::OpenToRead(*options_));
    }
    return Status::OK();
  }

  // The schema inferred when the stream began, as `entry` records it (once known, every
  // batch reads with it; a schema option, when given, is used instead).
  Status KeepSchema(const json& entry) {
    if (inferred_schema_ || !entry.contains("schema")) return Status::OK();
    if (!entry["schema"].is_string()) return Status::Corruption(where_ + ": \"schema\" must be a string");
    return UseSchema(entry["schema"].get<std::string>());
  }
  Status UseSchema(const std::string& text) {
    Result<RecordSchema> schema = ParseRecordSchema(text);
    if (!schema.ok()) return schema.status().WithContext(where_ + ": the inferred schema");
    options_->records.schema = std::move(*schema);
    inferred_schema_ = text;
    return Status::OK();
  }

  // The source's options, from binding its call with nothing to read (which
  // fails after read_kafka took its options when the schema is to be inferred: there are
  // no columns yet).
  Status LearnOptions() {
    if (options_) return Status::OK();
    Batch probe(std::nullopt);
    ScopedKafkaBatch installed(session_.connection().raw(), stream_.index, &probe);
    Status bound = BindStreamSource(session_, stream_);
    if (probe.options() && probe.options()->records.InfersSchema()) bound = Status::OK();
    RETURN_IF_ERROR(bound.WithContext(where_));
    if (!probe.options()) return Status::Internal(where_ + ": binding its source reached no read_kafka");
    options_ = *probe.options();
    return Status::OK();
  }

  // With a dead-letter table, once the statement has read `batch`: commits the records of
  // the batch that do not parse into it (once per batch, whatever the re-runs), unless they
  // are more than maxDeadLetterFraction of the batch. The statement's read found them when
  // it parsed every record; when it stopped early (or read nothing) they are read again.
  Status SetAsideDeadLetters(Batch& batch, BatchRead& read) {
    batch.EndRead();
    std::optional<BadRecords::Found> found;
    if (batch.bad_records() != nullptr) found = batch.bad_records()->TakeIfComplete();
    if (!found && batch.ranges() && TotalOffsets(*batch.ranges()) > 0) {
      // A client of its own: the statement's scan may still hold the batch's.
      ASSIGN_OR_RETURN(std::unique_ptr<KafkaReader> reader, KafkaReader::OpenToRead(*options_));
      BadRecords bad;
      RowParser parser(options_->records, &bad);
      std::vector<RecordCell> cells(parser.schema().size());
      CellRow row(&cells);  // the values are not kept: the statement has them
      int64_t records = 0;
      RETURN_IF_ERROR(reader->Read(
          *batch.ranges(),
          [&](const KafkaRecord& record) {
            records++;
            return parser.Parse(record, row).status();
          },
          read.abandon, KafkaReader::Headers::kSkipped));  // a dead letter keeps its key and value
      bad.Complete(records);
      found = bad.TakeIfComplete();
    }
    if (!found) return Status::OK();  // nothing to read
    const RecordOptions& records = options_->records;
    return dead_letters_.SetAside(records.dead_letter_table, records.max_dead_letter_fraction, found->records,
                                  found->letters, read);
  }

  sql::Session& session_;
  const sql::grammar::StreamSource stream_;
  DeadLetterWriter& dead_letters_;
  const std::string where_;
  std::optional<KafkaOptions> options_;
  std::optional<std::string> inferred_schema_;  // valueFormat json without a schema option
  std::unique_ptr<KafkaReader> planner_;
  std::optional<std::vector<TopicPartition>> partitions_;  // the subscription's, as last listed
  // partitions_' watermarks when they were listed: their low ones are planned with until
  // the next listing (retention deleting past a position meanwhile fails the batch's read
  // with NotFound, as planning would).
  PartitionWatermarks lows_;
  std::chrono::steady_clock::time_point listed_at_;
  std::unique_ptr<KafkaReader> reader_;  // lent to read_kafka for each batch
  // Where each batch's BackgroundRead reads with reader_: kept, as the reader is (a thread
  // started and joined per batch was a one-record batch's cost). One read at a time: a
  // batch's read ends (its BackgroundRead is destroyed) before the next batch starts one.
  TaskThread read_thread_{1};
  // available-now: the partitions' high watermarks at the first plan; batches end there.
  std::optional<PartitionWatermarks> cap_;
  std::optional<int64_t> backlog_;
  // Guards the planning state above (planner_ to backlog_) and what follows: an early read
  // plans on the read thread while the run may plan on its own.
  mutable std::mutex plan_mu_;
  bool read_next_early_ = false;  // ReadNextEarly
  uint64_t batches_begun_ = 0;    // BeginBatch
  std::optional<EarlyRead> early_;
};

}  // namespace

std::unique_ptr<BatchSource> NewKafkaSource(sql::Session& session, const sql::grammar::StreamSource& stream,
                                            DeadLetterWriter& dead_letters, std::string where) {
  return std::make_unique<KafkaSource>(session, stream, dead_letters, std::move(where));
}

}  // namespace basin::stream::kafka
