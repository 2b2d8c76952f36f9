// Data skipping: a 1,000-file table clustered on `key` (file i holds keys [i*K, (i+1)*K)) and
// a selective range query. Basin prunes files with the Delta stats in the log; the peer is
// DuckDB's read_parquet over a glob of all files, which must at least open every footer.
// Target: Basin >= 10x faster, reading one file.

#include <fmt/format.h>

#include <string>
#include <vector>

#include "bench_util.h"

namespace basin::bench {
namespace {

constexpr int64_t kFiles = 1000;
constexpr int64_t kFullRowsPerFile = 5000;

std::string RangeQueryOver(const std::string& source, int64_t lo, int64_t hi) {
  return fmt::format(
      "SELECT count(*) AS n, sum(value) AS total, min(payload) AS first FROM {} "
      "WHERE key BETWEEN {} AND {}",
      source, lo, hi);
}

Status Run() {
  const int64_t per_file = Scaled(kFullRowsPerFile, 10);
  ASSIGN_OR_RETURN(auto scratch, ScratchDir::Create("skipping"));
  ASSIGN_OR_RETURN(auto session, OpenSession());
  engine::Connection& conn = session->connection();

  std::vector<std::string> selects;
  for (int64_t f = 0; f < kFiles; f++) {
    selects.push_back(
        fmt::format("SELECT k AS key, (k * 0.5)::DOUBLE AS value, 'row-' || k::VARCHAR AS payload "
                    "FROM range({}, {}) t(k)",
                    f * per_file, (f + 1) * per_file));
  }
  Progress("skipping_bench",
           fmt::format("generating {} files of {} rows under {}", kFiles, per_file, scratch.path().string()));
  ASSIGN_OR_RETURN(GeneratedTable table, CreateTable(conn, scratch.path() / "clustered", selects));
  Progress("skipping_bench", "checking Basin's result against DuckDB's, then timing");

  // The peer is DuckDB as a user runs it: its own database with default settings, so each
  // query opens the footers it needs, as Basin's sessions do (the summary also reports the
  // peer with DuckDB's Parquet metadata cache on).
  ASSIGN_OR_RETURN(auto peer_db, engine::Database::Open());
  ASSIGN_OR_RETURN(auto peer, engine::Connection::Open(peer_db));
  RETURN_IF_ERROR(peer->Execute("SET parquet_metadata_cache = false"));
  const std::string glob = (table.root / "*.parquet").string();
  ASSIGN_OR_RETURN(int64_t globbed,
                   QueryInt(conn, "SELECT count(*) FROM glob(" + engine::QuoteLiteral(glob) + ")"));
  if (globbed != static_cast<int64_t>(table.files.size())) {
    return Status::Internal(
        fmt::format("the glob {} matches {} files, the table has {}", glob, globbed, table.files.size()));
  }

  // Half of one file's key range, in the middle of the table.
  const int64_t lo = (kFiles / 2) * per_file + per_file / 4;
  const int64_t hi = lo + per_file / 2;
  const std::string basin_sql =
      RangeQueryOver("delta_scan(" + engine::QuoteLiteral(table.root.string()) + ")", lo, hi);
  const std::string duckdb_sql = RangeQueryOver("read_parquet(" + engine::QuoteLiteral(glob) + ")", lo, hi);

  ASSIGN_OR_RETURN(auto statements, session->Execute(basin_sql));
  const sql::StatementResult& basin_result = statements.back();
  ASSIGN_OR_RETURN(auto duckdb_rows, conn.Query(duckdb_sql));
  RETURN_IF_ERROR(ExpectSameRows(basin_result.result, duckdb_rows, "range query"));
  if (basin_result.result.at(0, 0) != std::to_string(hi - lo + 1)) {
    return Status::Internal("range query counted " + basin_result.result.at(0, 0).value_or("NULL") +
                            " rows, expected " + std::to_string(hi - lo + 1));
  }

  // Basin with skipping off shows what pruning itself is worth.
  sql::SessionOptions no_skipping_options;
  no_skipping_options.data_skipping = false;
  ASSIGN_OR_RETURN(auto no_skipping, sql::Session::Open(no_skipping_options));
  ASSIGN_OR_RETURN(auto unpruned_rows, QueryBasin(*no_skipping, basin_sql));
  RETURN_IF_ERROR(ExpectSameRows(unpruned_rows, duckdb_rows, "range query without skipping"));

  const int runs = TimedRuns();
  ASSIGN_OR_RETURN(Comparison timing, TimeInterleaved(
                                          runs, [&] { return QueryBasin(*session, basin_sql).status(); },
                                          [&] { return peer->Query(duckdb_sql).status(); }));
  RETURN_IF_ERROR(conn.Execute("SET parquet_metadata_cache = true"));
  ASSIGN_OR_RETURN(double cached_peer_seconds,
                   MedianSeconds(runs, [&] { return conn.Query(duckdb_sql).status(); }));
  ASSIGN_OR_RETURN(double unpruned_seconds,
                   MedianSeconds(runs, [&] { return QueryBasin(*no_skipping, basin_sql).status(); }));
  const double speedup = timing.peer_median() / timing.basin_median();
  PrintSummary(
      "skipping_bench",
      fmt::format("range query over {} files x {} rows (scale {}), median of {} runs: basin {:.4f} s "
                  "reading {} of {} files, duckdb read_parquet glob {:.4f} s, speedup duckdb/basin = "
                  "{:.1f}x (target >= 10x){}; basin without skipping {:.4f} s; duckdb glob with its "
                  "Parquet metadata cache on {:.4f} s (speedup {:.1f}x)",
                  table.files.size(), per_file, Scale(), runs, timing.basin_median(), basin_result.files_read,
                  basin_result.files_total, timing.peer_median(), speedup,
                  speedup >= 10 ? "" : " BELOW TARGET", unpruned_seconds, cached_peer_seconds,
                  cached_peer_seconds / timing.basin_median()));
  return Status::OK();
}

}  // namespace
}  // namespace basin::bench

int main() { return basin::bench::RunBenchmark("skipping_bench", basin::bench::Run); }
