// Scan + aggregate: a TPC-H Q1-shaped query over a lineitem-shaped Delta table, through
// Basin (Session, delta_scan) against DuckDB's read_parquet over the same data files.
// Basin's overhead is log replay and planning; the target is basin/duckdb <= 1.10.

#include <fmt/format.h>

#include <string>
#include <vector>

#include "bench_util.h"

namespace basin::bench {
namespace {

constexpr int64_t kFullRows = 6'000'000;
constexpr int64_t kFiles = 50;

std::string Q1Over(const std::string& source) {
  return "SELECT l_returnflag, l_linestatus, sum(l_quantity) AS sum_qty, "
         "sum(l_extendedprice) AS sum_base_price, "
         "sum(l_extendedprice * (1 - l_discount)) AS sum_disc_price, "
         "sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) AS sum_charge, "
         "avg(l_quantity) AS avg_qty, avg(l_extendedprice) AS avg_price, avg(l_discount) AS avg_disc, "
         "count(*) AS count_order "
         "FROM " +
         source +
         " WHERE l_shipdate <= DATE '1998-12-01' - INTERVAL 90 DAY "
         "GROUP BY l_returnflag, l_linestatus ORDER BY l_returnflag, l_linestatus";
}

Status Run() {
  const int64_t rows = Scaled(kFullRows, kFiles);
  ASSIGN_OR_RETURN(auto scratch, ScratchDir::Create("scan"));
  ASSIGN_OR_RETURN(auto session, OpenSession());
  engine::Connection& conn = session->connection();

  std::vector<std::string> selects;
  for (int64_t f = 0; f < kFiles; f++)
    selects.push_back(LineitemSelect(rows * f / kFiles, rows * (f + 1) / kFiles));
  Progress("scan_bench", fmt::format("generating {} lineitem rows in {} files under {}", rows, kFiles,
                                     scratch.path().string()));
  ASSIGN_OR_RETURN(GeneratedTable table, CreateTable(conn, scratch.path() / "lineitem", selects));
  Progress("scan_bench", "checking Basin's Q1 result against DuckDB's, then timing");

  const std::string basin_sql = Q1Over("delta_scan(" + engine::QuoteLiteral(table.root.string()) + ")");
  const std::string duckdb_sql = Q1Over("read_parquet(" + table.DataFileListSql() + ")");
  ASSIGN_OR_RETURN(auto basin_rows, QueryBasin(*session, basin_sql));
  ASSIGN_OR_RETURN(auto duckdb_rows, conn.Query(duckdb_sql));
  RETURN_IF_ERROR(ExpectSameRows(basin_rows, duckdb_rows, "Q1"));
  if (basin_rows.row_count() == 0) return Status::Internal("Q1 returned no groups; the generator is broken");

  const int runs = TimedRuns();
  ASSIGN_OR_RETURN(Comparison timing, TimeInterleaved(
                                          runs, [&] { return QueryBasin(*session, basin_sql).status(); },
                                          [&] { return conn.Query(duckdb_sql).status(); }));
  const double ratio = timing.basin_median() / timing.peer_median();
  PrintSummary(
      "scan_bench",
      fmt::format("Q1 over {} rows in {} files (scale {}), median of {} runs: basin {:.3f} s, duckdb "
                  "read_parquet {:.3f} s, basin/duckdb = {:.2f} (target <= 1.10){}",
                  table.rows, table.files.size(), Scale(), runs, timing.basin_median(), timing.peer_median(),
                  ratio, ratio <= 1.10 ? "" : " ABOVE TARGET"));
  return Status::OK();
}

}  // namespace
}  // namespace basin::bench

int main() { return basin::bench::RunBenchmark("scan_bench", basin::bench::Run); }
