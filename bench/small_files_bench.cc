// Many small files: a table of 100,000 files of 100 rows (one JSON commit of 100,000 adds
// with stats), the shape streaming ingestion leaves before OPTIMIZE. Basin's delta_scan
// against DuckDB's read_parquet over a glob of the same files, in the same run:
//
// 1. A full aggregate: target basin/duckdb <= 1.1 (Basin's extra cost is the log).
// 2. A point query that skipping narrows to one file: target duckdb/basin >= 20x.
// 3. count(*) without a filter, which Basin answers from the log's numRecords.
// 4. The first query of a fresh session (log replay included), and the process's peak RSS
//    after Basin's queries, before the peer runs: target under 1 GiB.
//
// BASIN_BENCH_SCALE scales the file count (0.2: 20,000 files).

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include "bench_util.h"
#include "delta/commit_writer.h"
#include "engine/parquet_writer.h"

namespace basin::bench {
namespace {

constexpr int64_t kFullFiles = 100000;
constexpr int64_t kRowsPerFile = 100;

std::string AggregateOver(const std::string& source) {
  return "SELECT count(*) AS n, sum(value) AS total, min(id) AS lo, max(grp) AS hi FROM " + source;
}
std::string PointQueryOver(const std::string& source, int64_t id) {
  return fmt::format("SELECT id, grp, value FROM {} WHERE id = {}", source, id);
}

// Starts a new peak (Linux: writing 5 to clear_refs resets VmHWM), so that the table's
// generation does not count.
void ResetPeakRss() { std::ofstream("/proc/self/clear_refs") << "5"; }

Status Run() {
  const int64_t files = Scaled(kFullFiles, 1000);
  ASSIGN_OR_RETURN(auto scratch, ScratchDir::Create("small-files"));
  ASSIGN_OR_RETURN(auto setup_db, engine::Database::Open());
  ASSIGN_OR_RETURN(auto setup, engine::Connection::Open(setup_db));

  std::vector<std::string> selects;
  selects.reserve(static_cast<size_t>(files));
  for (int64_t f = 0; f < files; f++) {
    selects.push_back(fmt::format(
        "SELECT k AS id, (k % 97)::INTEGER AS grp, (k * 0.5)::DOUBLE AS value FROM range({}, {}) t(k)",
        f * kRowsPerFile, (f + 1) * kRowsPerFile));
  }
  Progress("small_files_bench", fmt::format("writing {} files of {} rows under {} (a few minutes at scale 1)",
                                            files, kRowsPerFile, scratch.path().string()));
  ASSIGN_OR_RETURN(GeneratedTable table, CreateTable(*setup, scratch.path() / "small", selects));
  setup.reset();
  setup_db.reset();
  ResetPeakRss();

  const std::string root = engine::QuoteLiteral(table.root.string());
  const std::string glob = engine::QuoteLiteral((table.root / "*.parquet").string());
  const std::string basin_table = "delta_scan(" + root + ")";
  const std::string duckdb_glob = "read_parquet(" + glob + ")";
  const int64_t point_id = (files / 2) * kRowsPerFile + kRowsPerFile / 3;
  const int runs = TimedRuns(5);

  // Basin first, alone in the process, for its peak memory.
  Progress("small_files_bench", "Basin: first query of a fresh session (log replay included)");
  ASSIGN_OR_RETURN(auto session, OpenSession());
  auto first_start = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(auto counted, session->Execute("SELECT count(*) FROM " + basin_table));
  const double first_query_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - first_start).count();
  if (counted.back().result.at(0, 0) != std::to_string(table.rows)) {
    return Status::Internal("count(*) gave " + counted.back().result.at(0, 0).value_or("NULL") +
                            ", expected " + std::to_string(table.rows));
  }
  const uint64_t count_files_read = counted.back().files_read;
  ASSIGN_OR_RETURN(auto point, session->Execute(PointQueryOver(basin_table, point_id)));
  const uint64_t point_files_read = point.back().files_read;
  ASSIGN_OR_RETURN(engine::QueryResult basin_aggregate, QueryBasin(*session, AggregateOver(basin_table)));
  ASSIGN_OR_RETURN(double basin_aggregate_seconds, MedianSeconds(runs, [&] {
                     return QueryBasin(*session, AggregateOver(basin_table)).status();
                   }));
  ASSIGN_OR_RETURN(double basin_point_seconds, MedianSeconds(runs, [&] {
                     return QueryBasin(*session, PointQueryOver(basin_table, point_id)).status();
                   }));
  ASSIGN_OR_RETURN(double basin_count_seconds, MedianSeconds(runs, [&] {
                     return QueryBasin(*session, "SELECT count(*) FROM " + basin_table).status();
                   }));
  const double basin_peak_mib = ProcessMemoryMiB("VmHWM");

  Progress("small_files_bench", "DuckDB over the glob");
  ASSIGN_OR_RETURN(auto peer_db, engine::Database::Open());
  ASSIGN_OR_RETURN(auto peer, engine::Connection::Open(peer_db));
  ASSIGN_OR_RETURN(engine::QueryResult peer_aggregate, peer->Query(AggregateOver(duckdb_glob)));
  RETURN_IF_ERROR(ExpectSameRows(basin_aggregate, peer_aggregate, "full aggregate"));
  ASSIGN_OR_RETURN(engine::QueryResult peer_point, peer->Query(PointQueryOver(duckdb_glob, point_id)));
  RETURN_IF_ERROR(ExpectSameRows(point.back().result, peer_point, "point query"));
  ASSIGN_OR_RETURN(double peer_aggregate_seconds,
                   MedianSeconds(runs, [&] { return peer->Query(AggregateOver(duckdb_glob)).status(); }));
  ASSIGN_OR_RETURN(double peer_point_seconds, MedianSeconds(runs, [&] {
                     return peer->Query(PointQueryOver(duckdb_glob, point_id)).status();
                   }));
  ASSIGN_OR_RETURN(double peer_count_seconds, MedianSeconds(runs, [&] {
                     return peer->Query("SELECT count(*) FROM " + duckdb_glob).status();
                   }));

  // The point query right after each of `runs` one-file commits (after the peer's runs: its
  // glob would read the files these commits add). The statistics parsed for the table's
  // files carry over to the new snapshot, so only the new file's are parsed.
  Progress("small_files_bench", "Basin: point query right after a commit");
  ASSIGN_OR_RETURN(auto table_store, OpenLocalObjectStore(table.root.string()));
  std::vector<double> after_commit;
  for (int run = 0; run < runs; run++) {
    const int64_t id = -1 - run;  // outside the table's range: the point query never reads it
    ASSIGN_OR_RETURN(auto adds,
                     engine::WriteDataFiles(session->connection(),
                                            fmt::format("SELECT {} AS id, 0 AS grp, 0.0 AS value", id),
                                            *table_store, engine::WriteOptions{}));
    std::vector<delta::Action> actions(adds.begin(), adds.end());
    actions.push_back(delta::MakeCommitInfo(1700000000000 + run, "WRITE"));
    RETURN_IF_ERROR(delta::WriteCommit(*table_store, 1 + run, actions));
    auto start = std::chrono::steady_clock::now();
    RETURN_IF_ERROR(QueryBasin(*session, PointQueryOver(basin_table, point_id)).status());
    after_commit.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(after_commit.begin(), after_commit.end());
  const double point_after_commit_seconds = after_commit[after_commit.size() / 2];

  const double aggregate_ratio = basin_aggregate_seconds / peer_aggregate_seconds;
  const double point_speedup = peer_point_seconds / basin_point_seconds;
  PrintSummary(
      "small_files_bench",
      fmt::format("{} files x {} rows (scale {}), median of {} runs: full aggregate basin {:.3f} s, duckdb "
                  "glob {:.3f} s, basin/duckdb = {:.2f} (target <= 1.1){}",
                  table.files.size(), kRowsPerFile, Scale(), runs, basin_aggregate_seconds,
                  peer_aggregate_seconds, aggregate_ratio, aggregate_ratio <= 1.1 ? "" : " MISSED"));
  PrintSummary("small_files_bench",
               fmt::format("point query: basin {:.4f} s reading {} of {} files, duckdb glob {:.3f} s, "
                           "duckdb/basin = {:.1f}x (target >= 20x){}",
                           basin_point_seconds, point_files_read, table.files.size(), peer_point_seconds,
                           point_speedup, point_speedup >= 20 ? "" : " MISSED"));
  PrintSummary("small_files_bench",
               fmt::format("point query right after a one-file commit (snapshot update included): basin "
                           "{:.4f} s, {:.1f}x the point query on the unchanged table",
                           point_after_commit_seconds, point_after_commit_seconds / basin_point_seconds));
  PrintSummary(
      "small_files_bench",
      fmt::format("count(*): basin {:.4f} s reading {} files (from the log's statistics), duckdb glob "
                  "{:.3f} s, duckdb/basin = {:.1f}x",
                  basin_count_seconds, count_files_read, peer_count_seconds,
                  peer_count_seconds / basin_count_seconds));
  PrintSummary("small_files_bench",
               fmt::format("first query of a fresh session (log replay of {} adds) {:.3f} s; peak RSS after "
                           "Basin's queries {:.0f} MiB (target < 1024){}",
                           table.files.size(), first_query_seconds, basin_peak_mib,
                           basin_peak_mib < 1024 ? "" : " MISSED"));
  return Status::OK();
}

}  // namespace
}  // namespace basin::bench

int main() { return basin::bench::RunBenchmark("small_files_bench", basin::bench::Run); }
