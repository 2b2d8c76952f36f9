// Log replay, three ways:
//
// 1. A wide commit: a table whose log is one JSON commit of 100,000 `add` actions with
//    stats on 10 columns. LoadSnapshot (simdjson) against DuckDB reading the same commit
//    file with read_json (hashing each add's path and stats, so that it reads them all).
//    Also: the memory the snapshot holds, the first data-skipping call (which parses every
//    file's stats into the typed index) and later calls, and UpdateSnapshot applying one
//    more commit against LoadSnapshot of the same version.
// 2. The same table with a classic Parquet checkpoint, stats as JSON text (written by
//    delta::CheckpointVersion) and as a `stats_parsed` struct only (as Spark writes with
//    writeStatsAsStruct): LoadSnapshot against DuckDB hashing the same checkpoint's add
//    paths and stats with read_parquet.
// 3. A 10,000-commit log with a classic checkpoint every 100 commits against the same log
//    without checkpoints (every JSON commit replayed): what checkpoints buy.
//
// Targets: 1 and 2 load in at most 0.3 s at scale 1. Missing them is reported, not failed.

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <type_traits>

#include "bench_util.h"
#include "delta/checkpoint_writer.h"
#include "delta/commit_writer.h"
#include "delta/parsed_stats.h"
#include "delta/predicate.h"
#include "delta/skipping.h"
#include "delta/snapshot.h"
#include "engine/parquet_log_io.h"

namespace basin::bench {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kWideFiles = 100'000;
constexpr int kStatsColumns = 10;
constexpr double kTargetSeconds = 0.3;
constexpr int64_t kFullCommits = 10'000;
constexpr int64_t kCheckpointInterval = 100;
// The logs have no removes, so the tombstone retention this clock drives never matters.
constexpr int64_t kNowMs = 1'800'000'000'000;

// Heap bytes a string owns beyond its own object.
size_t HeapBytes(const std::string& s) { return s.capacity() > 15 ? s.capacity() + 1 : 0; }

// The memory a snapshot's files hold: the AddFiles, their strings, maps and typed stats (a
// map node is counted as its two strings plus 48 bytes of links).
size_t FileBytes(const delta::Snapshot& snapshot) {
  size_t bytes = snapshot.files.size() * sizeof(delta::AddFile);
  std::set<const delta::ParsedStats*> parsed_stats;
  auto map_bytes = [](const auto& map) {
    size_t total = 0;
    for (const auto& [key, value] : map) {
      total += 48 + sizeof(key) + sizeof(value) + HeapBytes(key);
      if constexpr (std::is_same_v<std::decay_t<decltype(value)>, std::string>) {
        total += HeapBytes(value);
      } else {
        total += value ? HeapBytes(*value) : 0;
      }
    }
    return total;
  };
  for (const delta::AddFile& file : snapshot.files) {
    bytes += HeapBytes(file.path) + (file.stats ? HeapBytes(*file.stats) : 0);
    bytes += map_bytes(file.partition_values) + map_bytes(file.tags);
    if (file.deletion_vector) bytes += HeapBytes(file.deletion_vector->path_or_inline_dv);
    if (file.parsed_stats && parsed_stats.insert(file.parsed_stats.get()).second) {
      bytes += file.parsed_stats->MemoryBytes();
    }
  }
  return bytes;
}

double SecondsOf(const std::function<Status()>& body, Status* status) {
  const auto start = std::chrono::steady_clock::now();
  *status = body();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string Target(double seconds) { return seconds <= kTargetSeconds ? "meets" : "MISSES"; }

// Copies the JSON commits of `from`'s log (no checkpoints, no _last_checkpoint) to `to`.
Status CopyCommitsOnly(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::create_directories(to / "_delta_log", ec);
  if (ec) return Status::IOError("cannot create " + (to / "_delta_log").string() + ": " + ec.message());
  for (const auto& entry : fs::directory_iterator(from / "_delta_log")) {
    if (!entry.is_regular_file() || entry.path().extension() != ".json") continue;
    fs::copy_file(entry.path(), to / "_delta_log" / entry.path().filename(), ec);
    if (ec) return Status::IOError("cannot copy " + entry.path().string() + ": " + ec.message());
  }
  return Status::OK();
}

// Columns c0..c9: longs, doubles, strings, dates and timestamps in turn.
const char* ColumnType(int c) {
  static constexpr const char* kTypes[] = {"long", "double", "string", "date", "timestamp"};
  return kTypes[c % 5];
}

// The stats JSON of wide-table file `i`: values grow with i, so skipping has work to do.
std::string WideStats(int64_t i) {
  std::string min, max, nulls;
  for (int c = 0; c < kStatsColumns; c++) {
    const std::string name = fmt::format("{}\"c{}\":", c ? "," : "", c);
    const int64_t base = i * 100 + c;
    switch (c % 5) {
      case 0:
        min += name + std::to_string(base);
        max += name + std::to_string(base + 99);
        break;
      case 1:
        min += name + fmt::format("{:.2f}", base * 0.5);
        max += name + fmt::format("{:.2f}", base * 0.5 + 49.5);
        break;
      case 2:
        min += name + fmt::format("\"k{:08d}\"", i);
        max += name + fmt::format("\"k{:08d}z\"", i);
        break;
      case 3:
        min += name + fmt::format("\"{}\"", i % 2 ? "2024-01-01" : "2023-06-15");
        max += name + "\"2024-12-31\"";
        break;
      default:
        min += name + "\"2024-01-01T00:00:00.000Z\"";
        max += name + fmt::format("\"2024-06-{:02d}T12:30:00.000Z\"", 1 + i % 28);
        break;
    }
    nulls += name + std::to_string(i % 3);
  }
  return fmt::format(R"({{"numRecords":100,"minValues":{{{}}},"maxValues":{{{}}},"nullCount":{{{}}}}})", min,
                     max, nulls);
}

std::string WideSchema() {
  std::string fields;
  for (int c = 0; c < kStatsColumns; c++) {
    fields += fmt::format(R"({}{{"name":"c{}","type":"{}","nullable":true,"metadata":{{}}}})", c ? "," : "",
                          c, ColumnType(c));
  }
  return R"({"type":"struct","fields":[)" + fields + "]}";
}

// Version 0 creates the table; version 1 adds `files` files with stats.
Status WriteWideLog(const fs::path& root, int64_t files) {
  const fs::path log = root / "_delta_log";
  std::error_code ec;
  fs::create_directories(log, ec);
  if (ec) return Status::IOError("cannot create " + log.string() + ": " + ec.message());
  delta::Metadata metadata;
  metadata.id = "basin-bench-wide";
  metadata.schema_string = WideSchema();
  metadata.created_time = 1'700'000'000'000;
  std::string create = delta::SerializeAction(delta::MakeCommitInfo(1'700'000'000'000, "CREATE TABLE")) +
                       "\n" + delta::SerializeAction(delta::Protocol{}) + "\n" +
                       delta::SerializeAction(metadata) + "\n";
  std::string commit = delta::SerializeAction(delta::MakeCommitInfo(1'700'000'000'001, "WRITE")) + "\n";
  commit.reserve(static_cast<size_t>(files) * 700);
  for (int64_t i = 0; i < files; i++) {
    delta::AddFile add;
    add.path = fmt::format("part-{:05d}-6f1c5b0e-3b1d-4f6e-9d2a-{:012d}.c000.snappy.parquet", i % 100000, i);
    add.size = 1'000'000 + i;
    add.modification_time = 1'700'000'000'000 + i;
    add.stats = WideStats(i);
    commit += delta::SerializeAction(add) + "\n";
  }
  for (const auto& [name, content] : {std::pair{0, &create}, std::pair{1, &commit}}) {
    const fs::path file = log / fmt::format("{:020d}.json", name);
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out << *content;
    if (!out.good()) return Status::IOError("cannot write " + file.string());
  }
  return Status::OK();
}

// The from_json() structure of the wide table's stats, for the struct-stats checkpoint.
std::string StatsStructure() {
  static constexpr const char* kDuckTypes[] = {"BIGINT", "DOUBLE", "VARCHAR", "DATE", "TIMESTAMPTZ"};
  std::string values, counts;
  for (int c = 0; c < kStatsColumns; c++) {
    values += fmt::format(R"({}"c{}":"{}")", c ? "," : "", c, kDuckTypes[c % 5]);
    counts += fmt::format(R"({}"c{}":"BIGINT")", c ? "," : "", c);
  }
  return fmt::format(
      R"({{"numRecords":"BIGINT","minValues":{{{0}}},"maxValues":{{{0}}},"nullCount":{{{1}}}}})", values,
      counts);
}

// `to` gets `from`'s log with its checkpoint rewritten to carry stats only as
// add.stats_parsed (DuckDB types the JSON stats with from_json).
Status WriteStructStatsCopy(engine::Connection& conn, const fs::path& from, const fs::path& to) {
  RETURN_IF_ERROR(CopyCommitsOnly(from, to));
  std::error_code ec;
  fs::copy_file(from / "_delta_log/_last_checkpoint", to / "_delta_log/_last_checkpoint", ec);
  if (ec) return Status::IOError("cannot copy _last_checkpoint: " + ec.message());
  const std::string checkpoint = "_delta_log/00000000000000000001.checkpoint.parquet";
  const std::string add =
      "CASE WHEN \"add\" IS NULL THEN NULL ELSE struct_pack(path := \"add\".path, partitionValues := "
      "\"add\".partitionValues, size := \"add\".size, modificationTime := \"add\".modificationTime, "
      "dataChange "
      ":= \"add\".dataChange, stats_parsed := from_json(\"add\".stats, " +
      engine::QuoteLiteral(StatsStructure()) + ")) END AS \"add\"";
  return conn.Execute("COPY (SELECT txn, " + add + ", \"remove\", \"metaData\", protocol FROM read_parquet(" +
                      engine::QuoteLiteral((from / checkpoint).string()) + ")) TO " +
                      engine::QuoteLiteral((to / checkpoint).string()) + " (FORMAT parquet)");
}

Status RunWide(engine::Connection& conn, engine::DuckDBParquetLogIO& log_io, const fs::path& scratch) {
  const int64_t files = Scaled(kWideFiles, 1000);
  const fs::path json_root = scratch / "wide_json";
  const fs::path checkpoint_root = scratch / "wide_checkpoint";
  const fs::path struct_root = scratch / "wide_struct_stats";
  Progress("snapshot_bench",
           fmt::format("writing one commit of {} adds with stats on {} columns", files, kStatsColumns));
  RETURN_IF_ERROR(WriteWideLog(json_root, files));
  const fs::path commit_file = json_root / "_delta_log/00000000000000000001.json";
  const double commit_mb = static_cast<double>(fs::file_size(commit_file)) / 1e6;
  RETURN_IF_ERROR(CopyCommitsOnly(json_root, checkpoint_root));
  ASSIGN_OR_RETURN(auto checkpoint_store, OpenLocalObjectStore(checkpoint_root.string()));
  Progress("snapshot_bench", "writing its classic checkpoint, and one with struct stats only");
  RETURN_IF_ERROR(
      delta::CheckpointVersion(checkpoint_store, checkpoint_root.string(), log_io, 1, kNowMs).status());
  RETURN_IF_ERROR(WriteStructStatsCopy(conn, checkpoint_root, struct_root));
  const fs::path checkpoint_file = checkpoint_root / "_delta_log/00000000000000000001.checkpoint.parquet";
  const fs::path struct_file = struct_root / "_delta_log/00000000000000000001.checkpoint.parquet";

  auto load = [&](const fs::path& root) -> Result<std::shared_ptr<delta::Snapshot>> {
    ASSIGN_OR_RETURN(auto store, OpenLocalObjectStore(root.string()));
    ASSIGN_OR_RETURN(auto snapshot, delta::LoadSnapshot(store, root.string(), log_io));
    if (snapshot->version != 1 || static_cast<int64_t>(snapshot->files.size()) != files) {
      return Status::Internal(
          fmt::format("{}: snapshot at version {} with {} files, expected version 1 with {}", root.string(),
                      snapshot->version, snapshot->files.size(), files));
    }
    return snapshot;
  };
  auto count_equals = [&](const std::string& sql) -> Status {
    ASSIGN_OR_RETURN(int64_t n, QueryInt(conn, sql));
    if (n != files) return Status::Internal(fmt::format("{} counted {} rows, expected {}", sql, n, files));
    return Status::OK();
  };

  ASSIGN_OR_RETURN(auto kept, load(json_root));
  const delta::Predicate predicate = delta::Predicate::Compare(
      delta::CompareOp::kEqual, delta::ColumnPath{"c0"}, delta::Literal::Long(5'000'000));
  Status status;
  std::vector<size_t> matched;
  const double first_skip = SecondsOf(
      [&] {
        matched = delta::FilesMatching(*kept, predicate);
        return Status::OK();
      },
      &status);
  const double next_skip = SecondsOf(
      [&] {
        matched = delta::FilesMatching(*kept, predicate);
        return Status::OK();
      },
      &status);
  const size_t expected_matches = files > 50'000 ? 1 : 0;
  if (matched.size() != expected_matches) {
    return Status::Internal(
        fmt::format("c0 = 5000000 matched {} files, expected {}", matched.size(), expected_matches));
  }
  // One more commit, applied incrementally.
  {
    delta::AddFile add;
    add.path = "one-more.parquet";
    add.stats = WideStats(files);
    ASSIGN_OR_RETURN(auto store, OpenLocalObjectStore(json_root.string()));
    RETURN_IF_ERROR(delta::WriteCommit(*store, 2, {delta::MakeCommitInfo(1'700'000'000'002, "WRITE"), add}));
  }
  std::shared_ptr<const delta::Snapshot> updated;
  const double update_seconds = SecondsOf(
      [&]() -> Status {
        ASSIGN_OR_RETURN(updated, delta::UpdateSnapshot(kept, log_io));
        return Status::OK();
      },
      &status);
  RETURN_IF_ERROR(status);
  if (updated->version != 2 || static_cast<int64_t>(updated->files.size()) != files + 1) {
    return Status::Internal("UpdateSnapshot did not apply the new commit");
  }
  updated.reset();
  const double reload_seconds = SecondsOf(
      [&]() -> Status {
        ASSIGN_OR_RETURN(auto store, OpenLocalObjectStore(json_root.string()));
        return delta::LoadSnapshot(store, json_root.string(), log_io).status();
      },
      &status);
  RETURN_IF_ERROR(status);
  {
    ASSIGN_OR_RETURN(auto store, OpenLocalObjectStore(json_root.string()));
    RETURN_IF_ERROR(store->Delete("_delta_log/00000000000000000002.json"));
  }
  const double mib = 1024.0 * 1024.0;
  const double file_mib = static_cast<double>(FileBytes(*kept)) / mib;
  const double index_mib = static_cast<double>(kept->stats_index().MemoryBytes()) / mib;
  PrintSummary(
      "snapshot_bench",
      fmt::format("snapshot of {} files with stats on {} columns: {:.0f} MiB of files (paths, stats "
                  "JSON, maps) + {:.0f} MiB typed stats index = {:.0f} MiB; first FilesMatching "
                  "(parses the stats) {:.3f} s, later ones {:.4f} s; one more commit: UpdateSnapshot "
                  "{:.3f} s, LoadSnapshot {:.3f} s",
                  files, kStatsColumns, file_mib, index_mib, file_mib + index_mib, first_skip, next_skip,
                  update_seconds, reload_seconds));
  kept.reset();

  const int runs = TimedRuns();
  struct Case {
    std::string name;
    fs::path root;
    std::string peer_name;
    std::string peer_sql;
  };
  const std::vector<Case> cases = {
      {fmt::format("one JSON commit of {} adds ({:.1f} MB)", files, commit_mb), json_root,
       "DuckDB read_json hashing add.path, add.stats",
       "SELECT count(*) + 0 * sum(hash(\"add\".path, \"add\".stats)) FROM read_json(" +
           engine::QuoteLiteral(commit_file.string()) +
           ", format = 'newline_delimited') WHERE \"add\" IS NOT NULL"},
      {"classic checkpoint, stats as JSON", checkpoint_root,
       "DuckDB read_parquet hashing add.path, add.stats",
       "SELECT count(\"add\".path) + 0 * sum(hash(\"add\".path, \"add\".stats)) FROM read_parquet(" +
           engine::QuoteLiteral(checkpoint_file.string()) + ")"},
      {"classic checkpoint, stats_parsed only", struct_root,
       "DuckDB read_parquet hashing add.path, add.stats_parsed",
       "SELECT count(\"add\".path) + 0 * sum(hash(\"add\".path, \"add\".stats_parsed)) FROM read_parquet(" +
           engine::QuoteLiteral(struct_file.string()) + ")"},
  };
  for (const Case& c : cases) {
    Progress("snapshot_bench", "timing LoadSnapshot: " + c.name);
    ASSIGN_OR_RETURN(Comparison timing, TimeInterleaved(
                                            runs, [&] { return load(c.root).status(); },
                                            [&] { return count_equals(c.peer_sql); }));
    PrintSummary(
        "snapshot_bench",
        fmt::format("LoadSnapshot, {} (scale {}), median of {}: {:.4f} s ({} the {:.1f} s target); {} "
                    "{:.4f} s; basin/peer = {:.2f}x",
                    c.name, Scale(), runs, timing.basin_median(), Target(timing.basin_median()),
                    kTargetSeconds, c.peer_name, timing.peer_median(),
                    timing.basin_median() / timing.peer_median()));
  }
  return Status::OK();
}

Status RunManyCommits(engine::DuckDBParquetLogIO& log_io, const fs::path& scratch) {
  const int64_t commits = Scaled(kFullCommits, 2 * kCheckpointInterval);
  const fs::path checkpointed = scratch / "with_checkpoints";
  const fs::path json_only = scratch / "json_only";
  Progress("snapshot_bench", fmt::format("writing {} commits under {}", commits, scratch.string()));
  RETURN_IF_ERROR(WriteAppendOnlyLog(checkpointed, commits));
  RETURN_IF_ERROR(CopyCommitsOnly(checkpointed, json_only));
  Progress("snapshot_bench", fmt::format("writing a checkpoint every {} commits", kCheckpointInterval));
  {
    ASSIGN_OR_RETURN(auto store, OpenLocalObjectStore(checkpointed.string()));
    for (int64_t version = kCheckpointInterval; version < commits; version += kCheckpointInterval) {
      RETURN_IF_ERROR(
          delta::CheckpointVersion(store, checkpointed.string(), log_io, version, kNowMs).status());
    }
    ASSIGN_OR_RETURN(auto listed, store->List("_delta_log/"));
    const int64_t checkpoints = std::count_if(listed.begin(), listed.end(), [](const ObjectInfo& info) {
      return info.key.ends_with(".checkpoint.parquet");
    });
    if (checkpoints != (commits - 1) / kCheckpointInterval ||
        !store->Head("_delta_log/_last_checkpoint").ok()) {
      return Status::Internal(fmt::format("expected {} checkpoints and _last_checkpoint, found {}",
                                          (commits - 1) / kCheckpointInterval, checkpoints));
    }
  }
  Progress("snapshot_bench", "timing LoadSnapshot");

  auto load = [&](const fs::path& root) -> Status {
    ASSIGN_OR_RETURN(auto store, OpenLocalObjectStore(root.string()));
    ASSIGN_OR_RETURN(auto snapshot, delta::LoadSnapshot(store, root.string(), log_io));
    if (snapshot->version != commits - 1 || static_cast<int64_t>(snapshot->files.size()) != commits) {
      return Status::Internal(
          fmt::format("{}: snapshot at version {} with {} files, expected version {} with {}", root.string(),
                      snapshot->version, snapshot->files.size(), commits - 1, commits));
    }
    return Status::OK();
  };
  const int runs = TimedRuns();
  ASSIGN_OR_RETURN(Comparison timing,
                   TimeInterleaved(
                       runs, [&] { return load(checkpointed); }, [&] { return load(json_only); }));
  const double speedup = timing.peer_median() / timing.basin_median();
  PrintSummary(
      "snapshot_bench",
      fmt::format("LoadSnapshot of {} commits (scale {}), median of {} runs: with a checkpoint every {} "
                  "{:.4f} s, JSON commits only {:.4f} s, json_only/checkpointed = {:.1f}x",
                  commits, Scale(), runs, kCheckpointInterval, timing.basin_median(), timing.peer_median(),
                  speedup));
  return Status::OK();
}

Status Run() {
  ASSIGN_OR_RETURN(auto scratch, ScratchDir::Create("snapshot"));
  ASSIGN_OR_RETURN(auto db, engine::Database::Open());
  ASSIGN_OR_RETURN(auto conn, engine::Connection::Open(db));
  engine::DuckDBParquetLogIO log_io;
  RETURN_IF_ERROR(RunWide(*conn, log_io, scratch.path()));
  return RunManyCommits(log_io, scratch.path());
}

}  // namespace
}  // namespace basin::bench

int main() { return basin::bench::RunBenchmark("snapshot_bench", basin::bench::Run); }
