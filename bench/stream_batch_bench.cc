// Per-batch overhead of a stream: one-record micro-batches (read_kafka from the dev cluster
// into a warehouse table, exactly once with the checkpoint folder) against one-row INSERT
// commits on the same warehouse, measured in the same run, interleaved in rounds, after one
// untimed batch and INSERT (what a stream pays once, when it starts, is printed apart). A
// stream's fixed cost per batch bounds its freshness. Target: batches/s >= 0.8 of INSERTs/s.
//
// Two streams of one-record batches, each batch run by StreamRunner::RunBatch:
// - "backlog": maxOffsetsPerTrigger => 1 over records produced before, so that each batch
//   finds its record at the broker: the stream's own fixed cost per batch (its plan, its
//   read, its offsets, its commit), which the target is about;
// - "produced": each record produced (and acknowledged) just before its batch runs, so
//   that the batch also waits for the broker to deliver it. The dev cluster (librdkafka's
//   mock) holds a fetch that finds nothing for fetch.wait.max.ms (1 ms, reader.cc) and does
//   not answer it when a record arrives, as a broker does: the record comes with the next
//   fetch. That wait is freshness (stream_freshness_bench), not a cost of the stream's.

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "basin/kafka_dev.h"
#include "bench_util.h"
#include "stream/kafka/producer.h"
#include "stream/kafka/read_kafka.h"
#include "stream/runner.h"

namespace basin::bench {
namespace {

constexpr int64_t kFullBatches = 200;

// A stream of `source`'s records into `table`, with `options` given to read_kafka.
Result<std::unique_ptr<stream::StreamRunner>> OpenStream(sql::Session& session, const ScratchDir& scratch,
                                                         const std::string& bootstrap,
                                                         const std::string& source, const std::string& table,
                                                         const std::string& options) {
  ASSIGN_OR_RETURN(auto checkpoint, OpenStoreAt((scratch.path() / ("checkpoint-" + table)).string()));
  return stream::StreamRunner::Open(session, checkpoint,
                                    "INSERT INTO " + table +
                                        " SELECT decode(value) FROM STREAM read_kafka("
                                        "bootstrapServers => '" +
                                        bootstrap + "', subscribe => '" + source +
                                        "', startingOffsets => 'earliest'" + options + ")",
                                    SystemClock());
}

// Runs one batch of `runner`, which must write one row; its seconds go to `times`.
Status TimeBatch(stream::StreamRunner& runner, std::vector<double>& times) {
  const auto start = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(std::optional<stream::BatchCommit> commit, runner.RunBatch());
  times.push_back(SecondsSince(start));
  if (!commit || commit->rows_out != 1) return Status::Internal("a one-record batch did not write one row");
  return Status::OK();
}

Status ProduceOne(stream::kafka::KafkaProducer& producer, const std::string& topic) {
  stream::kafka::ProducerRecord record;
  record.value = "click";
  RETURN_IF_ERROR(producer.Produce(topic, record));
  return producer.Flush(10'000);
}

double Sum(const std::vector<double>& values) { return std::accumulate(values.begin(), values.end(), 0.0); }

Status Run() {
  const int64_t batches = Scaled(kFullBatches, 20);
  ASSIGN_OR_RETURN(auto scratch, ScratchDir::Create("stream-batch"));
  ASSIGN_OR_RETURN(auto session, OpenStreamSession((scratch.path() / "warehouse").string()));
  RETURN_IF_ERROR(stream::kafka::RegisterReadKafka(session->connection().raw()));
  RETURN_IF_ERROR(session
                      ->Execute("CREATE TABLE backlogged (v VARCHAR); CREATE TABLE produced (v VARCHAR); "
                                "CREATE TABLE inserted (v VARCHAR)")
                      .status());
  ASSIGN_OR_RETURN(auto cluster, KafkaDevCluster::Start({{"backlog", 1}, {"events", 1}}));
  ASSIGN_OR_RETURN(auto producer, stream::kafka::KafkaProducer::Open(cluster->bootstrap_servers()));
  const std::string bootstrap = cluster->bootstrap_servers();
  ASSIGN_OR_RETURN(auto backlog, OpenStream(*session, scratch, bootstrap, "backlog", "backlogged",
                                            ", maxOffsetsPerTrigger => 1"));
  ASSIGN_OR_RETURN(auto produced, OpenStream(*session, scratch, bootstrap, "events", "produced", ""));

  // Interleaved in short rounds, as many of each in every round, so that the disk's drift
  // hits all alike.
  constexpr int64_t kRounds = 10;
  const int64_t per_round = std::max<int64_t>(1, batches / kRounds);
  const int64_t total = kRounds * per_round;
  for (int64_t i = 0; i <= total; i++) {
    stream::kafka::ProducerRecord record;
    record.value = "click";
    RETURN_IF_ERROR(producer->Produce("backlog", record));
  }
  RETURN_IF_ERROR(producer->Flush(10'000));

  // What a stream pays once, not per batch: its first batch opens the Kafka clients and
  // describes the query, as the first INSERT binds the table. Both are timed apart and left
  // out of the rates, which measure the fixed cost of every further batch.
  std::vector<double> first_insert, first_backlog, first_produced;
  {
    const auto start = std::chrono::steady_clock::now();
    RETURN_IF_ERROR(session->Execute("INSERT INTO inserted VALUES ('first')").status());
    first_insert.push_back(SecondsSince(start));
  }
  RETURN_IF_ERROR(TimeBatch(*backlog, first_backlog));
  RETURN_IF_ERROR(ProduceOne(*producer, "events"));
  RETURN_IF_ERROR(TimeBatch(*produced, first_produced));

  // Each one timed too: on a shared machine the medians say more than the totals.
  std::vector<double> insert_times, backlog_times, produced_times;
  for (int64_t round = 0; round < kRounds; round++) {
    for (int64_t i = 0; i < per_round; i++) {
      const auto start = std::chrono::steady_clock::now();
      RETURN_IF_ERROR(session->Execute("INSERT INTO inserted VALUES ('click')").status());
      insert_times.push_back(SecondsSince(start));
    }
    for (int64_t i = 0; i < per_round; i++) RETURN_IF_ERROR(TimeBatch(*backlog, backlog_times));
    for (int64_t i = 0; i < per_round; i++) {
      RETURN_IF_ERROR(ProduceOne(*producer, "events"));
      RETURN_IF_ERROR(TimeBatch(*produced, produced_times));
    }
  }
  for (const char* table : {"backlogged", "produced"}) {
    ASSIGN_OR_RETURN(auto count, QueryBasin(*session, std::string("SELECT count(*) FROM ") + table));
    if (count.at(0, 0) != std::to_string(total + 1)) {
      return Status::Internal(
          fmt::format("{} holds {} rows, expected {}", table, count.at(0, 0).value_or("NULL"), total + 1));
    }
  }
  const double inserts = Sum(insert_times);
  PrintSummary(
      "stream_batch_bench",
      fmt::format("{} one-record batches of each stream (scale {}): one-row INSERTs {:.1f}/s; backlog stream "
                  "{:.1f} batches/s, batch/insert = {:.3f} (target >= 0.8); produced stream {:.1f} "
                  "batches/s, batch/insert = {:.3f}; medians: INSERT {:.2f} ms, backlog batch {:.2f} ms, "
                  "produced batch {:.2f} ms; first INSERT {:.1f} ms, first batches {:.1f} and {:.1f} ms "
                  "(not in the rates)",
                  total, Scale(), static_cast<double>(total) / inserts,
                  static_cast<double>(total) / Sum(backlog_times), inserts / Sum(backlog_times),
                  static_cast<double>(total) / Sum(produced_times), inserts / Sum(produced_times),
                  Median(insert_times) * 1e3, Median(backlog_times) * 1e3, Median(produced_times) * 1e3,
                  first_insert[0] * 1e3, first_backlog[0] * 1e3, first_produced[0] * 1e3));
  return Status::OK();
}

}  // namespace
}  // namespace basin::bench

int main() { return basin::bench::RunBenchmark("stream_batch_bench", basin::bench::Run); }
