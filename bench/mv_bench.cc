// Incremental refresh of a grouped-aggregate materialized view against a full recompute of
// the same view: a 10M-row events table (8 regions over a year of timestamps, in 10
// commits) feeds a pipeline's `gold_daily` view (region, day: count, sum, min, max, avg:
// about 2,900 groups). Each round appends 1% new rows (100k) and times the pipeline's run,
// which refreshes the view incrementally (checked; the view's flow timed, and the whole run
// with its event log and checks), against `CREATE OR REPLACE TABLE ... AS`
// the view's query on a session of its own; the two tables must hold the same rows (the
// averages to six decimals: pipeline/view_refresh.h). The sides alternate which goes first.
// Goal: incremental at least 20x faster.

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "basin/pipeline.h"
#include "bench_util.h"

namespace basin::bench {
namespace {

constexpr int64_t kFullRows = 10'000'000;
constexpr int kCommits = 10;
constexpr int kRounds = 7;

constexpr char kQuery[] =
    "SELECT region, date_trunc('day', ts) AS day, count(*) AS n, sum(amount) AS total, min(amount) AS low, "
    "max(amount) AS high, avg(amount) AS mean FROM events GROUP BY ALL";

// Rows [begin, end) of the events table.
std::string EventsSelect(int64_t begin, int64_t end) {
  return fmt::format(
      "SELECT i AS id, ['eu', 'us', 'apac', 'latam', 'mea', 'anz', 'uk', 'ca'][1 + (hash(i) % 8)::BIGINT] AS "
      "region, "
      "(hash(i * 31) % 100000)::DECIMAL(12,2) / 100 AS amount, "
      "TIMESTAMP '2026-01-01' + to_seconds((hash(i * 17) % (365 * 86400))::BIGINT) AS ts FROM range({}, {}) "
      "t(i)",
      begin, end);
}

// A fingerprint of a table of the view's columns: its rows, and a hash of them all.
std::string FingerprintSql(const std::string& table) {
  return "SELECT count(*) || '/' || sum(hash(region, day, n, total, low, high, round(mean, 6))) FROM " +
         table;
}

Status Run() {
  const int64_t rows = Scaled(kFullRows, 100'000);
  const int64_t step = rows / 100;
  Progress("mv_bench",
           fmt::format("{} rows in {} commits, {} rounds of {} new rows", rows, kCommits, kRounds, step));
  ASSIGN_OR_RETURN(auto scratch, ScratchDir::Create("mv"));
  const std::string warehouse = (scratch.path() / "warehouse").string();
  const std::filesystem::path folder = scratch.path() / "pipeline";
  std::filesystem::create_directories(folder);
  std::ofstream(folder / "gold.sql") << "CREATE OR REFRESH MATERIALIZED VIEW gold_daily AS " << kQuery
                                     << ";\n";

  ASSIGN_OR_RETURN(auto session, OpenSession(warehouse));
  RETURN_IF_ERROR(
      session->Execute("CREATE TABLE events (id BIGINT, region VARCHAR, amount DECIMAL(12,2), ts TIMESTAMP)")
          .status());
  for (int commit = 0; commit < kCommits; commit++) {
    RETURN_IF_ERROR(session
                        ->Execute("INSERT INTO events " +
                                  EventsSelect(rows * commit / kCommits, rows * (commit + 1) / kCommits))
                        .status());
  }
  Progress("mv_bench", "table written");
  PipelineOptions options;
  options.folder = folder.string();
  options.warehouse = warehouse;
  ASSIGN_OR_RETURN(auto pipeline, Pipeline::Open(options));
  RETURN_IF_ERROR(pipeline->Run().status());  // the first refresh: whole
  Progress("mv_bench", "view made");

  std::vector<double> incremental_seconds;  // the whole pipeline run
  std::vector<double> refresh_seconds;      // the view's flow in it
  std::vector<double> full_seconds;
  int64_t next = rows;
  for (int round = 0; round < kRounds; round++) {
    RETURN_IF_ERROR(session->Execute("INSERT INTO events " + EventsSelect(next, next + step)).status());
    next += step;
    auto incremental = [&]() -> Status {
      const auto start = std::chrono::steady_clock::now();
      ASSIGN_OR_RETURN(std::vector<PipelineFlowRun> flows, pipeline->Run());
      incremental_seconds.push_back(SecondsSince(start));
      if (!flows.empty()) refresh_seconds.push_back(static_cast<double>(flows[0].duration_ms) / 1000);
      if (flows.size() != 1 || flows[0].refresh != "incremental") {
        return Status::Internal("the view was not refreshed incrementally: " +
                                (flows.empty() ? std::string("no flow") : flows[0].refresh_reason));
      }
      return Status::OK();
    };
    auto full = [&]() -> Status {
      const auto start = std::chrono::steady_clock::now();
      RETURN_IF_ERROR(
          session->Execute(std::string("CREATE OR REPLACE TABLE gold_full AS ") + kQuery).status());
      full_seconds.push_back(SecondsSince(start));
      return Status::OK();
    };
    RETURN_IF_ERROR(round % 2 == 0 ? incremental() : full());
    RETURN_IF_ERROR(round % 2 == 0 ? full() : incremental());
    ASSIGN_OR_RETURN(engine::QueryResult view, QueryBasin(*session, FingerprintSql("gold_daily")));
    ASSIGN_OR_RETURN(engine::QueryResult recomputed, QueryBasin(*session, FingerprintSql("gold_full")));
    RETURN_IF_ERROR(ExpectSameRows(view, recomputed, "the incremental view against the recomputed one"));
    Progress("mv_bench",
             fmt::format("round {}: incremental {:.3f} s, full {:.3f} s, rows {}", round,
                         incremental_seconds.back(), full_seconds.back(), view.at(0, 0).value_or("")));
  }
  const double incremental = Median(incremental_seconds);
  const double refresh = Median(refresh_seconds);
  const double full = Median(full_seconds);
  PrintSummary(
      "mv_bench",
      fmt::format("incremental refresh {:.3f} s (the whole pipeline run, event log included, {:.3f} s), "
                  "full recompute {:.3f} s: full/refresh {:.1f}x (goal >= 20x), full/run {:.1f}x; {} "
                  "rows, {} new per refresh",
                  refresh, incremental, full, full / refresh, full / incremental, next, step));
  return Status::OK();
}

}  // namespace
}  // namespace basin::bench

int main() { return basin::bench::RunBenchmark("mv_bench", basin::bench::Run); }
