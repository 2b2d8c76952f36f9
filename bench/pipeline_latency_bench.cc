// Continuous pipeline latency: payment events (stream/kafka/generator.h, each stamped with the
// time it was made in "ts") fed to the dev cluster at a steady 2,000 events/s for 15 s, a
// pipeline running continuously (a pass at most every 250 ms) carrying them bronze (STREAM
// read_kafka) -> silver (STREAM(bronze), positive amounts) -> gold (a materialized view of
// counts, sums and the last id per region, refreshed incrementally), and a second session
// polling bronze's and gold's largest id every 20 ms. An event's latency at a level is the
// first poll that sees its id there, minus its ts. Prints p50 and p99 to gold, and, as the
// peer measured in the same run, to bronze: gold's p99 over bronze's is what the two further
// hops add.

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "basin/clock.h"
#include "basin/kafka_dev.h"
#include "basin/pipeline.h"
#include "bench_util.h"
#include "common/cancellation.h"
#include "stream/kafka/feed.h"
#include "stream/kafka/generator.h"
#include "stream/kafka/producer.h"

namespace basin::bench {
namespace {

constexpr double kEventsPerSecond = 2'000;
constexpr int64_t kFullSeconds = 15;

struct Poll {
  int64_t at_ms = 0;
  int64_t bronze = 0;  // the largest id visible
  int64_t gold = 0;
};

// Each event's latency to a level, from the first poll whose `seen` reached its id.
Result<std::vector<int64_t>> Latencies(const engine::QueryResult& stamps, const std::vector<Poll>& polls,
                                       int64_t Poll::*seen) {
  std::vector<int64_t> latencies;
  size_t poll = 0;
  for (size_t r = 0; r < stamps.row_count(); r++) {
    const int64_t id = std::stoll(*stamps.at(r, 0));
    while (poll < polls.size() && polls[poll].*seen < id) poll++;
    if (poll == polls.size()) return Status::Internal(fmt::format("id {} was never seen", id));
    latencies.push_back(polls[poll].at_ms - std::stoll(*stamps.at(r, 1)));
  }
  std::sort(latencies.begin(), latencies.end());
  return latencies;
}

Status Run() {
  const int64_t events = Scaled(static_cast<int64_t>(kEventsPerSecond) * kFullSeconds, 2'000);
  ASSIGN_OR_RETURN(auto scratch, ScratchDir::Create("pipeline-latency"));
  const std::string warehouse = (scratch.path() / "warehouse").string();
  ASSIGN_OR_RETURN(auto cluster, KafkaDevCluster::Start({{"payments", 4}}));
  ASSIGN_OR_RETURN(auto producer, stream::kafka::KafkaProducer::Open(
                                      cluster->bootstrap_servers(), stream::kafka::FeedProducerProperties()));
  ASSIGN_OR_RETURN(auto generator, stream::kafka::PaymentEventGenerator::Make({}, SystemClock()));

  const std::filesystem::path folder = scratch.path() / "pipeline";
  std::filesystem::create_directories(folder);
  std::ofstream(folder / "pipeline.json")
      << "{\"name\": \"latency\", \"trigger_interval\": \"250 milliseconds\", "
      << "\"configuration\": {\"kafka\": \"" << cluster->bootstrap_servers() << "\"}}";
  std::ofstream(folder / "medallion.sql")
      << "CREATE OR REFRESH STREAMING TABLE bronze AS SELECT id, region, amount, ts FROM STREAM read_kafka(\n"
         "  bootstrapServers => '${kafka}', subscribe => 'payments', startingOffsets => 'earliest',\n"
         "  valueFormat => 'json', schema => 'id BIGINT, region STRING, amount DECIMAL(12,2), ts "
         "TIMESTAMP');\n"
         "CREATE OR REFRESH STREAMING TABLE silver AS SELECT * FROM STREAM(bronze) WHERE amount > 0;\n"
         "CREATE OR REFRESH MATERIALIZED VIEW gold AS\n"
         "SELECT region, count(*) AS n, sum(amount) AS total, max(id) AS last_id FROM silver GROUP BY ALL;\n";
  PipelineOptions options;
  options.folder = folder.string();
  options.warehouse = warehouse;
  options.continuous = true;
  ASSIGN_OR_RETURN(auto pipeline, Pipeline::Open(options));
  Result<std::vector<PipelineFlowRun>> ran = std::vector<PipelineFlowRun>();
  std::thread runner([&] { ran = pipeline->Run(); });

  CancellationToken stop_feed;
  Status fed;
  double feed_seconds = 0;
  std::thread feed([&] {
    const auto start = std::chrono::steady_clock::now();
    stream::kafka::FeedOptions feed_options;
    feed_options.topic = "payments";
    feed_options.count = events;
    feed_options.events_per_second = kEventsPerSecond;
    fed = stream::kafka::RunPaymentFeed(*producer, generator, feed_options, stop_feed).status();
    feed_seconds = SecondsSince(start);
  });

  ASSIGN_OR_RETURN(auto reader, OpenSession(warehouse));
  std::vector<Poll> polls;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kFullSeconds * 3 + 30);
  while (std::chrono::steady_clock::now() < deadline) {
    // gold appears after the pipeline's first pass.
    Result<engine::QueryResult> seen =
        QueryBasin(*reader,
                   "SELECT (SELECT coalesce(max(id), 0) FROM bronze), (SELECT coalesce(max(last_id), 0) "
                   "FROM gold)");
    if (seen.ok()) {
      polls.push_back({SystemClock()->NowMs(), std::stoll(seen->at(0, 0).value_or("0")),
                       std::stoll(seen->at(0, 1).value_or("0"))});
      if (polls.back().gold >= events) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  stop_feed.Cancel();
  feed.join();
  pipeline->Stop();
  runner.join();
  RETURN_IF_ERROR(fed);
  RETURN_IF_ERROR(ran.status());
  if (polls.empty() || polls.back().gold < events) {
    return Status::Internal(fmt::format("gold shows ids up to {} of {} by the deadline",
                                        polls.empty() ? 0 : polls.back().gold, events));
  }
  // Every event reaches gold (all amounts are positive); each one's ts, by id.
  ASSIGN_OR_RETURN(auto stamps, QueryBasin(*reader, "SELECT id, epoch_ms(ts) FROM silver ORDER BY id"));
  if (static_cast<int64_t>(stamps.row_count()) != events) {
    return Status::Internal(fmt::format("silver holds {} events of {}", stamps.row_count(), events));
  }
  ASSIGN_OR_RETURN(std::vector<int64_t> to_gold, Latencies(stamps, polls, &Poll::gold));
  ASSIGN_OR_RETURN(std::vector<int64_t> to_bronze, Latencies(stamps, polls, &Poll::bronze));
  const double rate = static_cast<double>(events) / feed_seconds;
  PrintSummary(
      "pipeline_latency_bench",
      fmt::format("{} events at {:.0f}/s, pass every 250 ms: produced -> gold p50 {} ms, p99 {} ms, worst "
                  "{} ms; -> bronze p50 {} ms, p99 {} ms; gold/bronze p99 {:.2f}",
                  events, rate, Quantile(to_gold, 0.5), Quantile(to_gold, 0.99), to_gold.back(),
                  Quantile(to_bronze, 0.5), Quantile(to_bronze, 0.99),
                  static_cast<double>(Quantile(to_gold, 0.99)) /
                      static_cast<double>(std::max<int64_t>(1, Quantile(to_bronze, 0.99)))));
  return Status::OK();
}

}  // namespace
}  // namespace basin::bench

int main() { return basin::bench::RunBenchmark("pipeline_latency_bench", basin::bench::Run); }
