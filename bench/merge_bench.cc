// MERGE of a 100,000-row source (half updates of keys spread over the whole table, half
// inserts) into a 10M-row Delta table, in deletion-vector mode and in copy-on-write mode,
// against DuckDB's own MERGE INTO on a native DuckDB table of the same rows.
//
// Each MERGE runs in a child process of its own (this program re-executed), on a fresh copy
// of the warehouse, so its peak resident memory can be read from the kernel (wait4's
// ru_maxrss) without the setup's. Targets: DV mode within 2x of DuckDB native, peak RSS of
// Basin's MERGE under 2 GiB.

#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "bench_util.h"

namespace basin::bench {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kFullTargetRows = 10'000'000;
constexpr int64_t kFullSourceRows = 100'000;
constexpr int kRunsPerMode = 3;

struct Sizes {
  int64_t target_rows = Scaled(kFullTargetRows, 10'000);
  int64_t source_rows = Scaled(kFullSourceRows, 100);
};

std::string TargetSelect(const Sizes& sizes) {
  return fmt::format(
      "SELECT i AS id, (i % 1000)::BIGINT AS v, 'name-' || (i % 9973)::VARCHAR AS s, (i * 0.5)::DOUBLE AS d "
      "FROM range({}) t(i)",
      sizes.target_rows);
}

// Half the source updates keys spread evenly over the table (v = -1 marks them), half
// inserts keys past its end.
std::string SourceSelect(const Sizes& sizes) {
  int64_t half = sizes.source_rows / 2;
  int64_t step = sizes.target_rows / half;
  return fmt::format(
      "SELECT i * {0} AS id, -1::BIGINT AS v, 'updated' AS s, 0.0::DOUBLE AS d FROM range({1}) t(i) "
      "UNION ALL SELECT {2} + i AS id, -2::BIGINT AS v, 'inserted' AS s, 1.0::DOUBLE AS d FROM range({1}) "
      "t(i)",
      step, half, sizes.target_rows);
}

constexpr const char* kMergeClauses =
    " ON target.id = source.id WHEN MATCHED THEN UPDATE SET v = source.v, s = source.s, d = source.d "
    "WHEN NOT MATCHED THEN INSERT (id, v, s, d) VALUES (source.id, source.v, source.s, source.d)";

// The child: runs one MERGE on `table` ("dv", "cow" or "duckdb") in `warehouse`, prints
// "seconds <t>" on stdout, and checks the result.
Status RunChild(const std::string& table, const std::string& warehouse) {
  Sizes sizes;
  ASSIGN_OR_RETURN(auto session, OpenSession(warehouse));
  engine::Connection& conn = session->connection();
  std::string merge;
  std::string count_sql;
  if (table == "duckdb") {
    // A native DuckDB table with the same rows; building it is not timed.
    RETURN_IF_ERROR(conn.Query("CREATE TEMP TABLE target AS " + TargetSelect(sizes)).status());
    merge = "MERGE INTO target USING (" + SourceSelect(sizes) + ") AS source" + kMergeClauses;
    count_sql = "SELECT count(*), count(*) FILTER (WHERE v = -1) FROM target";
  } else {
    merge =
        "MERGE INTO " + table + " AS target USING (" + SourceSelect(sizes) + ") AS source" + kMergeClauses;
    count_sql = "SELECT count(*), count(*) FILTER (WHERE v = -1) FROM " + table;
  }
  auto start = std::chrono::steady_clock::now();
  if (table == "duckdb") {
    RETURN_IF_ERROR(conn.Query(merge).status());
  } else {
    RETURN_IF_ERROR(session->Execute(merge).status());
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSIGN_OR_RETURN(auto counts, QueryBasin(*session, count_sql));
  int64_t half = sizes.source_rows / 2;
  std::string expected_rows = std::to_string(sizes.target_rows + half);
  if (counts.row_count() != 1 || counts.at(0, 0) != expected_rows ||
      counts.at(0, 1) != std::to_string(half)) {
    return Status::Internal(fmt::format("{} after MERGE: {} rows, {} updated; expected {} and {}", table,
                                        counts.at(0, 0).value_or("NULL"), counts.at(0, 1).value_or("NULL"),
                                        expected_rows, half));
  }
  std::printf("seconds %.6f\n", seconds);
  std::fflush(stdout);
  return Status::OK();
}

struct ChildRun {
  double seconds = 0;
  int64_t max_rss_bytes = 0;
};

// Runs this program as a child for one MERGE and collects its time and peak memory.
Result<ChildRun> SpawnChild(const std::string& table, const std::string& warehouse) {
  std::string output;
  ASSIGN_OR_RETURN(int64_t max_rss,
                   RunProgram(
                       {fs::read_symlink("/proc/self/exe").string(), "--child", table, warehouse},
                       [&](std::string_view piece) { output += piece; }, "the " + table + " MERGE child"));
  ChildRun run;
  if (std::sscanf(output.c_str(), "seconds %lf", &run.seconds) != 1) {
    return Status::Internal("the " + table + " MERGE child printed no time: " + output);
  }
  run.max_rss_bytes = max_rss;
  return run;
}

Status Run() {
  Sizes sizes;
  ASSIGN_OR_RETURN(auto scratch, ScratchDir::Create("merge"));
  const fs::path base = scratch.path() / "base";
  {
    Progress("merge_bench",
             fmt::format("writing a {}-row target table twice (DV and copy-on-write)", sizes.target_rows));
    ASSIGN_OR_RETURN(auto session, OpenSession(base.string()));
    // 16 MiB files, so the table has a realistic number of files for the keys to spread over.
    const std::string properties = "'delta.targetFileSize' = '16777216'";
    RETURN_IF_ERROR(session
                        ->Execute("CREATE TABLE dv TBLPROPERTIES (" + properties +
                                  ", 'delta.enableDeletionVectors' = 'true') AS " + TargetSelect(sizes))
                        .status());
    RETURN_IF_ERROR(
        session->Execute("CREATE TABLE cow TBLPROPERTIES (" + properties + ") AS " + TargetSelect(sizes))
            .status());
    ASSIGN_OR_RETURN(auto files, QueryBasin(*session, "DESCRIBE DETAIL cow"));
    Progress("merge_bench", "target written: " + files.at(0, 7).value_or("?") + " files per table");
  }

  std::map<std::string, std::vector<ChildRun>> runs;
  for (int run = 0; run < kRunsPerMode; run++) {
    for (const char* table : {"dv", "cow", "duckdb"}) {
      fs::path warehouse = scratch.path() / fmt::format("run-{}-{}", run, table);
      if (std::string(table) != "duckdb") fs::copy(base, warehouse, fs::copy_options::recursive);
      ASSIGN_OR_RETURN(ChildRun child, SpawnChild(table, warehouse.string()));
      Progress("merge_bench", fmt::format("{} run {}: {:.3f} s, peak RSS {:.0f} MiB", table, run + 1,
                                          child.seconds, child.max_rss_bytes / 1048576.0));
      runs[table].push_back(child);
      fs::remove_all(warehouse);
    }
  }
  auto median = [&](const std::string& table) {
    std::vector<double> seconds;
    for (const ChildRun& r : runs[table]) seconds.push_back(r.seconds);
    return Median(seconds);
  };
  auto peak_mib = [&](const std::string& table) {
    int64_t peak = 0;
    for (const ChildRun& r : runs[table]) peak = std::max(peak, r.max_rss_bytes);
    return peak / 1048576.0;
  };
  const double dv_ratio = median("dv") / median("duckdb");
  const double cow_ratio = median("cow") / median("duckdb");
  const bool rss_ok = peak_mib("dv") < 2048 && peak_mib("cow") < 2048;
  PrintSummary(
      "merge_bench",
      fmt::format(
          "MERGE of {} source rows into {} target rows (scale {}), median of {} runs: DV {:.3f} s "
          "(peak RSS {:.0f} MiB), copy-on-write {:.3f} s (peak RSS {:.0f} MiB), DuckDB native MERGE {:.3f} s "
          "(peak RSS {:.0f} MiB incl. its in-memory table); DV/duckdb = {:.2f} (target <= 2.0), "
          "cow/duckdb = {:.2f}{}{}",
          sizes.source_rows, sizes.target_rows, Scale(), kRunsPerMode, median("dv"), peak_mib("dv"),
          median("cow"), peak_mib("cow"), median("duckdb"), peak_mib("duckdb"), dv_ratio, cow_ratio,
          dv_ratio <= 2.0 ? "" : " DV ABOVE TARGET", rss_ok ? "" : " RSS ABOVE 2 GiB"));
  return Status::OK();
}

}  // namespace
}  // namespace basin::bench

int main(int argc, char** argv) {
  if (argc == 4 && std::strcmp(argv[1], "--child") == 0) {
    basin::Status status = basin::bench::RunChild(argv[2], argv[3]);
    if (status.ok()) return 0;
    std::fprintf(stderr, "merge_bench child (%s): %s\n", argv[2], status.ToString().c_str());
    return 1;
  }
  return basin::bench::RunBenchmark("merge_bench", basin::bench::Run);
}
