// Per-batch overhead of a stream: one-record micro-batches (read_kafka from the dev cluster
// into a warehouse table, exactly once with the checkpoint folder) against one-row INSERT
// commits on the same warehouse, measured in the same run, interleaved in rounds, after one
// untimed batch and INSERT (what a stream pays once, when it starts, is printed apart). A
// stream's fixed cost per batch bounds its freshness. Target: batches/s >= 0.8 of INSERTs/s.

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <numeric>
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

Status Run() {
  const int64_t batches = Scaled(kFullBatches, 20);
  ASSIGN_OR_RETURN(auto scratch, ScratchDir::Create("stream-batch"));
  ASSIGN_OR_RETURN(auto session, OpenStreamSession((scratch.path() / "warehouse").string()));
  RETURN_IF_ERROR(stream::kafka::RegisterReadKafka(session->connection().raw()));
  RETURN_IF_ERROR(
      session->Execute("CREATE TABLE streamed (v VARCHAR); CREATE TABLE inserted (v VARCHAR)").status());
  ASSIGN_OR_RETURN(auto cluster, KafkaDevCluster::Start({{"events", 1}}));
  ASSIGN_OR_RETURN(auto producer, stream::kafka::KafkaProducer::Open(cluster->bootstrap_servers()));
  ASSIGN_OR_RETURN(auto checkpoint, OpenStoreAt((scratch.path() / "checkpoint").string()));
  ASSIGN_OR_RETURN(auto runner, stream::StreamRunner::Open(
                                    *session, checkpoint,
                                    "INSERT INTO streamed SELECT decode(value) FROM STREAM read_kafka("
                                    "bootstrapServers => '" +
                                        cluster->bootstrap_servers() +
                                        "', subscribe => 'events', startingOffsets => 'earliest')",
                                    SystemClock()));

  // What a stream pays once, not per batch: its first batch opens the Kafka clients and
  // describes the query, as the first INSERT binds the table. Both are timed apart and left
  // out of the rates, which measure the fixed cost of every further batch.
  const auto insert_started = std::chrono::steady_clock::now();
  RETURN_IF_ERROR(session->Execute("INSERT INTO inserted VALUES ('first')").status());
  const double first_insert = SecondsSince(insert_started);
  stream::kafka::ProducerRecord first_record;
  first_record.value = "first";
  RETURN_IF_ERROR(producer->Produce("events", first_record));
  RETURN_IF_ERROR(producer->Flush(10'000));
  const auto batch_started = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(std::optional<stream::BatchCommit> first_commit, runner->RunBatch());
  const double first_batch = SecondsSince(batch_started);
  if (!first_commit || first_commit->rows_out != 1)
    return Status::Internal("the first one-record batch did not write one row");

  // Interleaved in short rounds, as many batches as INSERTs in each, so that the disk's
  // drift hits both sides alike.
  constexpr int64_t kRounds = 10;
  const int64_t per_round = std::max<int64_t>(1, batches / kRounds);
  // Each one timed too: on a shared machine the medians say more than the totals.
  std::vector<double> batch_times, insert_times;
  for (int64_t round = 0; round < kRounds; round++) {
    for (int64_t i = 0; i < per_round; i++) {
      const auto start = std::chrono::steady_clock::now();
      RETURN_IF_ERROR(session->Execute("INSERT INTO inserted VALUES ('click')").status());
      insert_times.push_back(SecondsSince(start));
    }
    for (int64_t i = 0; i < per_round; i++) {
      stream::kafka::ProducerRecord record;
      record.value = "click";
      RETURN_IF_ERROR(producer->Produce("events", record));
      RETURN_IF_ERROR(producer->Flush(10'000));
      const auto start = std::chrono::steady_clock::now();
      ASSIGN_OR_RETURN(std::optional<stream::BatchCommit> commit, runner->RunBatch());
      batch_times.push_back(SecondsSince(start));
      if (!commit || commit->rows_out != 1)
        return Status::Internal("a one-record batch did not write one row");
    }
  }
  const int64_t total = kRounds * per_round;
  ASSIGN_OR_RETURN(auto count, QueryBasin(*session, "SELECT count(*) FROM streamed"));
  if (count.at(0, 0) != std::to_string(total + 1)) {
    return Status::Internal(
        fmt::format("streamed holds {} rows, expected {}", count.at(0, 0).value_or("NULL"), total + 1));
  }
  const double batch_rate =
      static_cast<double>(total) / std::accumulate(batch_times.begin(), batch_times.end(), 0.0);
  const double insert_rate =
      static_cast<double>(total) / std::accumulate(insert_times.begin(), insert_times.end(), 0.0);
  const double batch_median = Median(batch_times), insert_median = Median(insert_times);
  PrintSummary(
      "stream_batch_bench",
      fmt::format("{} one-record stream batches (scale {}): {:.1f} batches/s; one-row INSERTs {:.1f}/s; "
                  "batch/insert = {:.3f} (target >= 0.8); medians: batch {:.2f} ms, INSERT {:.2f} ms, "
                  "insert/batch = {:.3f}; first batch {:.1f} ms, first INSERT {:.1f} ms (not in the rates)",
                  total, Scale(), batch_rate, insert_rate, batch_rate / insert_rate, batch_median * 1e3,
                  insert_median * 1e3, insert_median / batch_median, first_batch * 1e3, first_insert * 1e3));
  return Status::OK();
}

}  // namespace
}  // namespace basin::bench

int main() { return basin::bench::RunBenchmark("stream_batch_bench", basin::bench::Run); }
