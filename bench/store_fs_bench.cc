// Reading Parquet through basin:// URLs (DuckDB's file system over Basin's ObjectStore,
// engine/store_registry.h) against DuckDB's own local file system, over the same files in
// the same run: 6M lineitem-shaped rows in 50 files (a scan-bound query), and 5,000 small
// files (bound by opening files). The store is a local one rooted at the scratch folder, so
// the two sides read the same bytes from the same disk. The target is basin/duckdb <= 1.05.

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "bench_util.h"
#include "engine/store_registry.h"

namespace basin::bench {
namespace {

constexpr int64_t kFullRows = 6'000'000;
constexpr int64_t kBigFiles = 50;
constexpr int64_t kFullSmallFiles = 5'000;
constexpr int64_t kRowsPerSmallFile = 100;

std::string ScanOver(const std::string& source) {
  return "SELECT l_returnflag, l_linestatus, count(*), sum(l_quantity), sum(l_extendedprice * (1 - "
         "l_discount)), "
         "max(l_comment), min(l_shipdate) FROM read_parquet(" +
         source + ") GROUP BY ALL ORDER BY ALL";
}

std::string SmallScanOver(const std::string& source) {
  return "SELECT count(*), sum(id), max(name) FROM read_parquet(" + source + ")";
}

struct Side {
  double basin_median = 0;
  double duckdb_median = 0;
  double ratio() const { return basin_median / duckdb_median; }
};

// Checks that both queries agree, then times them interleaved.
Result<Side> Compare(engine::Connection& conn, const std::string& what, const std::string& basin_sql,
                     const std::string& duckdb_sql, int runs) {
  ASSIGN_OR_RETURN(auto basin_rows, conn.Query(basin_sql));
  ASSIGN_OR_RETURN(auto duckdb_rows, conn.Query(duckdb_sql));
  RETURN_IF_ERROR(ExpectSameRows(basin_rows, duckdb_rows, what));
  if (basin_rows.row_count() == 0)
    return Status::Internal(what + " returned no rows; the generator is broken");
  ASSIGN_OR_RETURN(Comparison timing, TimeInterleaved(
                                          runs, [&] { return conn.Query(basin_sql).status(); },
                                          [&] { return conn.Query(duckdb_sql).status(); }));
  return Side{timing.basin_median(), timing.peer_median()};
}

Status Run() {
  const int64_t rows = Scaled(kFullRows, kBigFiles);
  const int64_t small_files = Scaled(kFullSmallFiles, 10);
  ASSIGN_OR_RETURN(auto scratch, ScratchDir::Create("store-fs"));
  const std::string root = scratch.path().string();
  ASSIGN_OR_RETURN(auto db, engine::Database::Open());
  ASSIGN_OR_RETURN(auto conn, engine::Connection::Open(db));

  Progress("store_fs_bench",
           fmt::format("writing {} lineitem rows in {} files and {} files of {} rows under {}", rows,
                       kBigFiles, small_files, kRowsPerSmallFile, root));
  std::filesystem::create_directories(scratch.path() / "big");
  for (int64_t f = 0; f < kBigFiles; f++) {
    RETURN_IF_ERROR(conn->Execute(
        "COPY (" + LineitemSelect(rows * f / kBigFiles, rows * (f + 1) / kBigFiles) + ") TO " +
        engine::QuoteLiteral(fmt::format("{}/big/part-{:03}.parquet", root, f)) + " (FORMAT parquet)"));
  }
  std::filesystem::create_directories(scratch.path() / "small");
  for (int64_t f = 0; f < small_files;) {
    std::string batch;  // a hundred COPY statements per round trip
    for (const int64_t end = std::min(small_files, f + 100); f < end; f++) {
      batch += fmt::format(
          "COPY (SELECT i AS id, 'name-' || i AS name FROM range({}, {}) t(i)) TO {} (FORMAT parquet);",
          f * kRowsPerSmallFile, (f + 1) * kRowsPerSmallFile,
          engine::QuoteLiteral(fmt::format("{}/small/f-{:05}.parquet", root, f)));
    }
    RETURN_IF_ERROR(conn->Execute(batch));
  }
  ASSIGN_OR_RETURN(
      int64_t written,
      QueryInt(*conn, "SELECT count(*) FROM glob(" + engine::QuoteLiteral(root + "/small/*.parquet") + ")"));
  Progress("store_fs_bench", fmt::format("{} small files written; timing", written));

  ASSIGN_OR_RETURN(std::shared_ptr<ObjectStore> store, OpenLocalObjectStore(root));
  engine::StoreHandle handle = engine::RegisterStore(store);
  const int runs = TimedRuns();
  ASSIGN_OR_RETURN(Side big, Compare(*conn, "scan of 50 files",
                                     ScanOver(engine::QuoteLiteral(StoreUrl(handle, "big/*.parquet"))),
                                     ScanOver(engine::QuoteLiteral(root + "/big/*.parquet")), runs));
  ASSIGN_OR_RETURN(Side small,
                   Compare(*conn, "scan of small files",
                           SmallScanOver(engine::QuoteLiteral(StoreUrl(handle, "small/*.parquet"))),
                           SmallScanOver(engine::QuoteLiteral(root + "/small/*.parquet")), runs));
  const double worst = std::max(big.ratio(), small.ratio());
  PrintSummary(
      "store_fs_bench",
      fmt::format("read_parquet via basin:// on a local store vs DuckDB's local file system (scale {}), "
                  "median of {} runs: {} rows in {} files: basin {:.3f} s, duckdb {:.3f} s, ratio {:.3f}; "
                  "{} files of {} rows: basin {:.3f} s, duckdb {:.3f} s, ratio {:.3f} (target <= 1.05){}",
                  Scale(), runs, rows, kBigFiles, big.basin_median, big.duckdb_median, big.ratio(), written,
                  kRowsPerSmallFile, small.basin_median, small.duckdb_median, small.ratio(),
                  worst <= 1.05 ? "" : " ABOVE TARGET"));
  return Status::OK();
}

}  // namespace
}  // namespace basin::bench

int main() { return basin::bench::RunBenchmark("store_fs_bench", basin::bench::Run); }
