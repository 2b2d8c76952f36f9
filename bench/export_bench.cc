// Printing a large result: `basin sql --format csv -c "SELECT * FROM big"` over a 50M-row
// warehouse table, its output read through a pipe and counted, against DuckDB copying the
// same Parquet files to CSV on its standard output (`COPY ... TO '/dev/stdout'`). Each runs
// in a child process of its own, so that its peak memory (ru_maxrss) is its own.
// Target: Basin's peak RSS under 500 MB (rows are printed as they come, not materialized).

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "bench_util.h"
#include "engine/duckdb.h"

namespace basin::bench {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kFullRows = 50'000'000;
constexpr double kTargetRssMiB = 500;

struct ChildRun {
  double seconds = 0;
  int64_t lines = 0;
  double max_rss_mib = 0;
};

// Runs `argv` with its standard output read here (lines counted, bytes dropped).
Result<ChildRun> RunCounting(const std::vector<std::string>& argv) {
  const auto start = std::chrono::steady_clock::now();
  ChildRun run;
  ASSIGN_OR_RETURN(
      int64_t max_rss,
      RunProgram(
          argv, [&](std::string_view piece) { run.lines += std::count(piece.begin(), piece.end(), '\n'); },
          argv[0]));
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  run.max_rss_mib = static_cast<double>(max_rss) / (1024.0 * 1024.0);
  return run;
}

// The peer, run as `export_bench --peer <parquet glob>`: DuckDB alone.
int RunPeer(const std::string& glob) {
  auto db = engine::Database::Open();
  if (!db.ok()) return 1;
  auto conn = engine::Connection::Open(*db);
  if (!conn.ok()) return 1;
  Status copied = (*conn)->Execute("COPY (SELECT * FROM read_parquet(" + engine::QuoteLiteral(glob) +
                                   ")) TO '/dev/stdout' (FORMAT csv, HEADER true)");
  if (!copied.ok()) std::fprintf(stderr, "%s\n", copied.ToString().c_str());
  return copied.ok() ? 0 : 1;
}

Status Run() {
  const int64_t rows = Scaled(kFullRows, 100'000);
  ASSIGN_OR_RETURN(auto scratch, ScratchDir::Create("export"));
  const fs::path warehouse = scratch.path() / "warehouse";
  {
    Progress("export_bench", fmt::format("writing {} rows into table big", rows));
    ASSIGN_OR_RETURN(auto session, OpenSession(warehouse.string()));
    RETURN_IF_ERROR(session
                        ->Execute(fmt::format("CREATE TABLE big AS SELECT range AS id, range % 1000 AS k, "
                                              "'row ' || range AS s, range * 0.5 AS d FROM range({})",
                                              rows))
                        .status());
  }
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  Progress("export_bench", "basin sql --format csv");
  ASSIGN_OR_RETURN(ChildRun basin, RunCounting({BASIN_CLI, "sql", "--warehouse", warehouse.string(),
                                                "--format", "csv", "-c", "SELECT * FROM big"}));
  Progress("export_bench", "DuckDB COPY ... TO '/dev/stdout'");
  ASSIGN_OR_RETURN(ChildRun duckdb,
                   RunCounting({self, "--peer", (warehouse / "default" / "big" / "*.parquet").string()}));
  for (const auto& [who, run] : {std::pair{"basin", basin}, std::pair{"duckdb", duckdb}}) {
    if (run.lines != rows + 1) {
      return Status::Internal(
          fmt::format("{} printed {} lines, expected {} rows and a header", who, run.lines, rows));
    }
  }
  PrintSummary(
      "export_bench",
      fmt::format("CSV of {} rows (scale {}): basin sql {:.1f} s, peak RSS {:.0f} MiB ({} the {:.0f} "
                  "MiB target); DuckDB COPY to stdout {:.1f} s, peak RSS {:.0f} MiB; basin/duckdb "
                  "time = {:.2f}, memory = {:.2f}",
                  rows, Scale(), basin.seconds, basin.max_rss_mib,
                  basin.max_rss_mib < kTargetRssMiB ? "meets" : "MISSES", kTargetRssMiB, duckdb.seconds,
                  duckdb.max_rss_mib, basin.seconds / duckdb.seconds,
                  basin.max_rss_mib / duckdb.max_rss_mib));
  return Status::OK();
}

}  // namespace
}  // namespace basin::bench

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "--peer") return basin::bench::RunPeer(argv[2]);
  return basin::bench::RunBenchmark("export_bench", basin::bench::Run);
}
