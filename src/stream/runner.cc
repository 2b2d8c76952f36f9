#include "stream/runner.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <map>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include "common/strings.h"
#include "common/uuid.h"
#include "sql/grammar/parse.h"
#include "sql/statements.h"
#include "stream/kafka/planner.h"
#include "stream/kafka/read_kafka.h"
#include "stream/kafka/reader.h"

namespace basin::stream {
namespace {

using json = nlohmann::json;
using kafka::KafkaOptions;
using kafka::PartitionOffsets;
using kafka::PartitionRange;
using kafka::PartitionWatermarks;
using kafka::TopicPartition;

// The Kafka ranges of a batch in offsets/<N>.json: {"payments": {"0": [start, end], ...}}.
json RangesJson(const std::vector<PartitionRange>& ranges) {
  json out = json::object();
  for (const PartitionRange& r : ranges) {
    out[r.tp.topic][std::to_string(r.tp.partition)] = json::array({r.start_offset, r.end_offset});
  }
  return out;
}

Result<std::vector<PartitionRange>> RangesFrom(const json& offsets, const std::string& where) {
  auto bad = [&](const std::string& what) { return Status::Corruption(where + ": " + what); };
  if (!offsets.is_object() || !offsets.contains("sources") || !offsets["sources"].is_array() ||
      offsets["sources"].size() != 1) {
    return bad("expected one source in \"sources\"");
  }
  const json& source = offsets["sources"][0];
  if (source.value("kind", "") != "kafka" || !source.contains("ranges") || !source["ranges"].is_object()) {
    return bad("the source is not a Kafka source with \"ranges\"");
  }
  std::vector<PartitionRange> ranges;
  for (const auto& [topic, partitions] : source["ranges"].items()) {
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

// The batch read_kafka sees while the runner binds or runs the statement.
class Batch final : public kafka::KafkaBatch {
 public:
  // Binding only, to learn the source's options: nothing is read.
  static Batch Probe() { return Batch(std::nullopt); }
  // Running over `ranges`.
  static Batch Over(std::vector<PartitionRange> ranges) { return Batch(std::move(ranges)); }

  Result<std::vector<PartitionRange>> Ranges(const KafkaOptions& options) override {
    if (options_ && !SameSource(*options_, options)) {
      return Status::NotImplemented(
          "a stream reads one Kafka source; this statement names another read_kafka");
    }
    options_ = options;
    if (!ranges_) return std::vector<PartitionRange>();
    return *ranges_;
  }

  const std::optional<KafkaOptions>& options() const { return options_; }

 private:
  explicit Batch(std::optional<std::vector<PartitionRange>> ranges) : ranges_(std::move(ranges)) {}

  static bool SameSource(const KafkaOptions& a, const KafkaOptions& b) {
    return a.bootstrap_servers == b.bootstrap_servers && a.subscription.topics() == b.subscription.topics() &&
           a.subscription.pattern() == b.subscription.pattern();
  }

  std::optional<std::vector<PartitionRange>> ranges_;
  std::optional<KafkaOptions> options_;
};

// The stream's statement, as the runner needs it.
struct StreamStatement {
  std::string text;
  std::string query;  // the INSERT's rows, as DuckDB runs them
  catalog::TableEntry sink;
};

Result<StreamStatement> ReadStatement(sql::Session& session, const std::string& text) {
  ASSIGN_OR_RETURN(sql::grammar::ParsedStatement parsed, sql::grammar::ParseStatement(text));
  const auto* insert = std::get_if<sql::grammar::Insert>(&parsed.body);
  if (insert == nullptr) {
    return Status::InvalidArgument(
        "a stream is an INSERT INTO a table ... FROM STREAM read_kafka(...); got: " + text);
  }
  const auto& streams = parsed.streams.empty() ? insert->query_streams : parsed.streams;
  if (streams.empty()) {
    return Status::InvalidArgument(
        "the stream's INSERT reads no STREAM source (write FROM STREAM read_kafka(...))");
  }
  if (streams.size() > 1) return Status::NotImplemented("a stream reading several STREAM sources");
  if (insert->overwrite || insert->replace_where || !insert->partitions.empty()) {
    return Status::NotImplemented(
        "a stream appends: INSERT OVERWRITE, REPLACE WHERE and PARTITION (...) sinks");
  }
  ASSIGN_OR_RETURN(std::optional<catalog::TableEntry> sink,
                   sql::LookupTarget(session.context(), insert->insert.target));
  if (!sink) {
    return Status::NotFound("the stream's sink " + insert->insert.target.table + " is not a warehouse table");
  }
  std::string query = insert->insert.query;
  if (!insert->insert.ctes.empty()) query = insert->insert.ctes + " SELECT * FROM (" + query + "\n)";
  return StreamStatement{text, std::move(query), std::move(*sink)};
}

}  // namespace

Result<Trigger> ParseTrigger(const std::string& name) {
  if (name == "available-now") return Trigger::kAvailableNow;
  if (name == "once") return Trigger::kOnce;
  if (name == "continuous") return Trigger::kContinuous;
  return Status::InvalidArgument("--trigger must be available-now, once or continuous, got '" + name + "'");
}

struct StreamRunner::Impl {
  sql::Session* session = nullptr;
  std::shared_ptr<const Clock> clock;
  StreamStatement statement;
  std::unique_ptr<StreamCheckpoint> checkpoint;
  // available-now: the partitions' high watermarks when the run started; batches end there.
  std::optional<PartitionWatermarks> cap;
  // The source's options (the statement is fixed, so one probe serves every batch) and the
  // client that lists partitions and watermarks for planning; made by the first plan.
  std::optional<KafkaOptions> source;
  std::unique_ptr<kafka::KafkaReader> planner;

  std::string Where() const { return "stream " + checkpoint->metadata().stream_id; }

  // The sink's txn version for this stream.
  Result<std::optional<int64_t>> SinkTxnVersion() {
    ASSIGN_OR_RETURN(auto snapshot, session->context().LoadTable(statement.sink.location));
    auto it = snapshot->set_transactions.find(checkpoint->metadata().stream_id);
    if (it == snapshot->set_transactions.end()) return std::optional<int64_t>();
    return std::optional<int64_t>(it->second.version);
  }

  // `run()`'s result, run with `batch` installed for read_kafka and STREAM sources allowed.
  template <typename Run>
  auto InBatch(Batch& batch, const Run& run) {
    kafka::ScopedKafkaBatch installed(session->connection().raw(), &batch);
    session->AllowStreams(true);
    auto out = run();
    session->AllowStreams(false);
    return out;
  }

  // The Kafka source's options, from binding the statement's query with nothing to read.
  Result<KafkaOptions> SourceOptions() {
    Batch probe = Batch::Probe();
    auto described = InBatch(probe, [&] { return session->connection().DescribeQuery(statement.query); });
    RETURN_IF_ERROR(described.status().WithContext(Where()));
    if (!probe.options()) {
      return Status::NotImplemented(Where() +
                                    ": its STREAM source is not read_kafka(...) (other sources come later)");
    }
    return *probe.options();
  }

  // The ranges of the batch after `previous` (nullopt: the first batch).
  Result<std::vector<PartitionRange>> Plan(const std::optional<json>& previous) {
    if (!source) {
      ASSIGN_OR_RETURN(KafkaOptions options, SourceOptions());
      ASSIGN_OR_RETURN(planner, kafka::KafkaReader::Open(options));
      source = std::move(options);
    }
    const KafkaOptions& options = *source;
    std::optional<PartitionOffsets> committed;
    if (previous) {
      ASSIGN_OR_RETURN(std::vector<PartitionRange> before,
                       RangesFrom(*previous, Where() + " previous offsets"));
      committed = Ends(before);
    }
    ASSIGN_OR_RETURN(std::vector<TopicPartition> partitions, planner->ListPartitions(options.subscription));
    ASSIGN_OR_RETURN(PartitionWatermarks watermarks, planner->QueryWatermarks(partitions));
    if (cap) {
      if (cap->empty()) cap = watermarks;
      for (auto& [tp, marks] : watermarks) {
        auto it = cap->find(tp);
        marks.high = it == cap->end() ? marks.low : std::min(marks.high, it->second.high);
      }
    }
    return kafka::PlanRanges(options, committed, watermarks);
  }

  // Runs batch `batch_id` over `ranges` (recorded already) and records its commit.
  Result<BatchCommit> Execute(int64_t batch_id, const std::vector<PartitionRange>& ranges) {
    const int64_t started = clock->NowMs();
    const std::string& id = checkpoint->metadata().stream_id;
    RETURN_IF_ERROR(session
                        ->Execute("SET basin.txn_app_id = " + QuoteLiteral(id) +
                                  "; SET basin.txn_version = " + std::to_string(batch_id))
                        .status());
    Batch batch = Batch::Over(ranges);
    auto results = InBatch(batch, [&] { return session->Execute(statement.text); });
    if (!results.ok()) return results.status().WithContext(Where() + " batch " + std::to_string(batch_id));
    BatchCommit commit;
    commit.batch_id = batch_id;
    commit.rows_in = kafka::TotalOffsets(ranges);
    const engine::QueryResult& row = results->back().result;
    for (size_t c = 0; c < row.column_count() && row.row_count() == 1; c++) {
      if (row.column_names[c] == "num_inserted_rows" && row.at(0, c))
        commit.rows_out = std::stoll(*row.at(0, c));
    }
    commit.committed_time_ms = clock->NowMs();
    commit.duration_ms = commit.committed_time_ms - started;
    RETURN_IF_ERROR(checkpoint->WriteCommit(commit));
    return commit;
  }
};

StreamRunner::StreamRunner(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
StreamRunner::~StreamRunner() = default;

const StreamMetadata& StreamRunner::metadata() const { return impl_->checkpoint->metadata(); }

Result<std::unique_ptr<StreamRunner>> StreamRunner::Open(sql::Session& session,
                                                         std::shared_ptr<ObjectStore> checkpoint,
                                                         const std::string& statement,
                                                         std::shared_ptr<const Clock> clock) {
  auto impl = std::make_unique<Impl>();
  impl->session = &session;
  impl->clock = std::move(clock);
  ASSIGN_OR_RETURN(impl->statement, ReadStatement(session, statement));
  StreamMetadata proposed;
  proposed.stream_id = NewUuid();
  proposed.created_time_ms = impl->clock->NowMs();
  proposed.statement = statement;
  proposed.sink_table = impl->statement.sink.name.ToString();
  proposed.sink_location = impl->statement.sink.location;
  ASSIGN_OR_RETURN(impl->checkpoint, StreamCheckpoint::Open(std::move(checkpoint), proposed));
  return std::unique_ptr<StreamRunner>(new StreamRunner(std::move(impl)));
}

Result<std::optional<BatchCommit>> StreamRunner::RunBatch() {
  Impl& s = *impl_;
  for (;;) {
    ASSIGN_OR_RETURN(std::optional<int64_t> txn, s.SinkTxnVersion());
    ASSIGN_OR_RETURN(Recovery recovery, s.checkpoint->Recover(txn));
    const std::string where = s.Where() + " " + StreamCheckpoint::OffsetsKey(recovery.batch_id);
    switch (recovery.action) {
      case Recovery::Action::kRecordCommit: {
        // Committed before a crash: only the marker is missing.
        BatchCommit commit;
        commit.batch_id = recovery.batch_id;
        commit.committed_time_ms = s.clock->NowMs();
        RETURN_IF_ERROR(s.checkpoint->WriteCommit(commit));
        continue;
      }
      case Recovery::Action::kRerun: {
        ASSIGN_OR_RETURN(std::vector<PartitionRange> ranges, RangesFrom(*recovery.planned, where));
        ASSIGN_OR_RETURN(BatchCommit commit, s.Execute(recovery.batch_id, ranges));
        return std::optional<BatchCommit>(commit);
      }
      case Recovery::Action::kPlan: {
        ASSIGN_OR_RETURN(std::vector<PartitionRange> ranges, s.Plan(recovery.previous));
        if (kafka::TotalOffsets(ranges) == 0) return std::optional<BatchCommit>();
        json planned = {
            {"batchId", recovery.batch_id},
            {"plannedTime", s.clock->NowMs()},
            {"sources", json::array({{{"index", 0}, {"kind", "kafka"}, {"ranges", RangesJson(ranges)}}})}};
        RETURN_IF_ERROR(s.checkpoint->WriteOffsets(recovery.batch_id, planned));
        ASSIGN_OR_RETURN(BatchCommit commit, s.Execute(recovery.batch_id, ranges));
        return std::optional<BatchCommit>(commit);
      }
    }
  }
}

Status StreamRunner::Run(const RunOptions& options) {
  impl_->cap.reset();
  if (options.trigger == Trigger::kAvailableNow) impl_->cap.emplace();
  auto cancelled = [&] { return options.cancellation != nullptr && options.cancellation->cancelled(); };
  while (!cancelled()) {
    const auto started = std::chrono::steady_clock::now();
    ASSIGN_OR_RETURN(std::optional<BatchCommit> batch, RunBatch());
    if (options.on_batch) options.on_batch(batch);
    if (options.trigger == Trigger::kOnce || (options.trigger == Trigger::kAvailableNow && !batch)) break;
    if (options.trigger != Trigger::kContinuous) continue;
    const auto spent =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
    const auto wait = std::chrono::milliseconds(options.interval_ms) - spent;
    if (wait.count() > 0 && options.cancellation != nullptr) {
      options.cancellation->WaitFor(wait);
    } else if (wait.count() > 0) {
      std::this_thread::sleep_for(wait);
    }
  }
  return Status::OK();
}

}  // namespace basin::stream
