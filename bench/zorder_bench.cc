// Z-order clustering: a table of uniformly random points (x, y) spread over many files, so
// every file spans the whole x and y range and no file can be skipped. OPTIMIZE ZORDER BY
// (x, y) rewrites it into files that each cover a compact region of the plane; a range
// query on both columns then reads only the files its rectangle overlaps. The peer is the
// same query on the same table before clustering (time travel to that version), measured
// in the same run. Target: >= 5x fewer files read, and a faster query.

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "bench_util.h"
#include "commands/maintenance.h"
#include "delta/skipping.h"
#include "delta/snapshot.h"
#include "delta/transaction.h"
#include "engine/parquet_log_io.h"
#include "engine/predicate_parser.h"

namespace basin::bench {
namespace {

constexpr int64_t kFullRows = 1'500'000;
constexpr int64_t kFiles = 60;
constexpr int64_t kClusteredFiles = 60;  // the target file size is set to give about this many
constexpr int64_t kDomain = 1'000'000;

Status Run() {
  const int64_t rows = Scaled(kFullRows, 60'000);
  const int64_t per_file = rows / kFiles;
  ASSIGN_OR_RETURN(auto scratch, ScratchDir::Create("zorder"));
  ASSIGN_OR_RETURN(auto session, OpenSession());
  engine::Connection& conn = session->connection();

  std::vector<std::string> selects;
  for (int64_t f = 0; f < kFiles; f++) {
    selects.push_back(
        fmt::format("SELECT (hash(i, 'x') % {0})::BIGINT AS x, (hash(i, 'y') % {0})::BIGINT AS y, "
                    "(i * 0.25)::DOUBLE AS value FROM range({1}, {2}) t(i)",
                    kDomain, f * per_file, (f + 1) * per_file));
  }
  const auto root = scratch.path() / "points";
  Progress("zorder_bench", fmt::format("generating {} files of {} random points under {}", kFiles, per_file,
                                       scratch.path().string()));
  ASSIGN_OR_RETURN(GeneratedTable generated, CreateTable(conn, root, selects));
  ASSIGN_OR_RETURN(auto store, OpenLocalObjectStore(root.string()));
  engine::DuckDBParquetLogIO log_io;
  ASSIGN_OR_RETURN(auto unclustered, delta::LoadSnapshot(store, root.string(), log_io));

  // A target size that yields about kClusteredFiles files (the default 128 MiB would make one).
  delta::Metadata metadata = unclustered->metadata;
  metadata.configuration["delta.targetFileSize"] =
      std::to_string(std::max<int64_t>(unclustered->size_bytes() / kClusteredFiles, 16 * 1024));
  delta::Transaction set_target(unclustered);
  set_target.UpdateMetadata(metadata);
  set_target.SetOperation("SET TBLPROPERTIES");
  ASSIGN_OR_RETURN(delta::CommitResult target_commit, set_target.Commit());
  ASSIGN_OR_RETURN(auto before, delta::LoadSnapshot(store, root.string(), log_io));

  Progress("zorder_bench", "OPTIMIZE ZORDER BY (x, y)");
  commands::CommandContext ctx;
  ctx.conn = &conn;
  commands::OptimizeRequest request;
  request.zorder_by = {"x", "y"};
  const auto optimize_start = std::chrono::steady_clock::now();
  RETURN_IF_ERROR(commands::Optimize(ctx, before, request).status());
  const double optimize_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - optimize_start).count();
  ASSIGN_OR_RETURN(auto after, delta::LoadSnapshot(store, root.string(), log_io));

  // 2% of each axis: 0.04% of the plane.
  const std::string where = fmt::format("x BETWEEN {} AND {} AND y BETWEEN {} AND {}", kDomain / 2,
                                        kDomain / 2 + kDomain / 50, kDomain / 4, kDomain / 4 + kDomain / 50);
  ASSIGN_OR_RETURN(delta::Predicate predicate, engine::ParsePredicate(where, before->schema));
  const std::vector<size_t> files_before = delta::FilesMatching(*before, predicate);
  const std::vector<size_t> files_after = delta::FilesMatching(*after, predicate);

  const std::string table = engine::QuoteLiteral(root.string());
  const std::string after_sql = "SELECT count(*), sum(value) FROM delta_scan(" + table + ") WHERE " + where;
  const std::string before_sql =
      fmt::format("SELECT count(*), sum(value) FROM delta_scan({}, version => {}) WHERE {}", table,
                  target_commit.version, where);
  ASSIGN_OR_RETURN(auto after_rows, QueryBasin(*session, after_sql));
  ASSIGN_OR_RETURN(auto before_rows, QueryBasin(*session, before_sql));
  RETURN_IF_ERROR(ExpectSameRows(after_rows, before_rows, "range query before and after Z-ordering"));

  const int runs = TimedRuns();
  ASSIGN_OR_RETURN(Comparison timing, TimeInterleaved(
                                          runs, [&] { return QueryBasin(*session, after_sql).status(); },
                                          [&] { return QueryBasin(*session, before_sql).status(); }));
  const double file_ratio =
      static_cast<double>(files_before.size()) / static_cast<double>(std::max<size_t>(files_after.size(), 1));
  const double speedup = timing.peer_median() / timing.basin_median();
  PrintSummary(
      "zorder_bench",
      fmt::format("range query on x and y over {} random points (scale {}), median of {} runs: before "
                  "ZORDER reads {} of {} files in {:.4f} s, after reads {} of {} files in {:.4f} s; files "
                  "read ratio before/after = {:.1f}x (target >= 5x){}, time ratio before/after = {:.1f}x; "
                  "OPTIMIZE ZORDER BY took {:.2f} s",
                  generated.rows, Scale(), runs, files_before.size(), before->files.size(),
                  timing.peer_median(), files_after.size(), after->files.size(), timing.basin_median(),
                  file_ratio, file_ratio >= 5 ? "" : " BELOW TARGET", speedup, optimize_seconds));
  return Status::OK();
}

}  // namespace
}  // namespace basin::bench

int main() { return basin::bench::RunBenchmark("zorder_bench", basin::bench::Run); }
