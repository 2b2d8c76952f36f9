// INSERT INTO ... SELECT of lineitem-shaped rows into a Delta table through Basin's SQL,
// against DuckDB writing the same SELECT with COPY ... TO parquet. Basin adds the Delta
// work on top (schema check, stats, the commit); the target is a throughput of at least
// 0.85 of DuckDB's (duckdb time / basin time >= 0.85).

#include <fmt/format.h>

#include <string>

#include "bench_util.h"

namespace basin::bench {
namespace {

constexpr int64_t kFullRows = 6'000'000;

Status Run() {
  const int64_t rows = Scaled(kFullRows, 1000);
  ASSIGN_OR_RETURN(auto scratch, ScratchDir::Create("insert"));
  ASSIGN_OR_RETURN(auto session, OpenSession((scratch.path() / "warehouse").string()));
  engine::Connection& conn = session->connection();
  const std::string select = LineitemSelect(0, rows);

  // The generated rows, materialized once so both sides time only the write.
  Progress("insert_bench", fmt::format("materializing {} lineitem rows", rows));
  RETURN_IF_ERROR(conn.Query("CREATE TEMP TABLE source AS " + select).status());
  RETURN_IF_ERROR(session->Execute("CREATE TABLE lineitem AS SELECT * FROM source LIMIT 0").status());

  int copies = 0;
  auto basin = [&] { return session->Execute("INSERT INTO lineitem SELECT * FROM source").status(); };
  auto peer = [&] {
    std::string file = (scratch.path() / fmt::format("copy-{}.parquet", copies++)).string();
    return conn.Query("COPY (SELECT * FROM source) TO " + engine::QuoteLiteral(file) + " (FORMAT parquet)")
        .status();
  };
  const int runs = TimedRuns(5);
  Progress("insert_bench", fmt::format("timing {} runs per side", runs));
  ASSIGN_OR_RETURN(Comparison timing, TimeInterleaved(runs, basin, peer));

  // Every insert landed, exactly once.
  ASSIGN_OR_RETURN(auto count, QueryBasin(*session, "SELECT count(*) FROM lineitem"));
  int64_t expected = rows * (runs + 1);
  if (count.row_count() != 1 || count.at(0, 0) != std::to_string(expected)) {
    return Status::Internal(
        fmt::format("lineitem holds {} rows, expected {}", count.at(0, 0).value_or("NULL"), expected));
  }
  const double throughput_ratio = timing.peer_median() / timing.basin_median();
  PrintSummary(
      "insert_bench",
      fmt::format("INSERT INTO ... SELECT of {} lineitem rows (scale {}), median of {} runs: basin {:.3f} s "
                  "({:.0f} rows/s), duckdb COPY TO parquet {:.3f} s, throughput basin/duckdb = {:.2f} "
                  "(target >= 0.85){}",
                  rows, Scale(), runs, timing.basin_median(), rows / timing.basin_median(),
                  timing.peer_median(), throughput_ratio, throughput_ratio >= 0.85 ? "" : " BELOW TARGET"));
  return Status::OK();
}

}  // namespace
}  // namespace basin::bench

int main() { return basin::bench::RunBenchmark("insert_bench", basin::bench::Run); }
