// Log replay: LoadSnapshot on a 10,000-commit log with a classic checkpoint every 100
// commits (written by delta::CheckpointVersion), against the same log with the checkpoints
// removed (every JSON commit replayed). The peer is Basin itself without checkpoints; the
// ratio shows what checkpoints buy.

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "bench_util.h"
#include "delta/checkpoint_writer.h"
#include "delta/snapshot.h"

namespace basin::bench {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kFullCommits = 10'000;
constexpr int64_t kCheckpointInterval = 100;
// The log has no removes, so the tombstone retention this clock drives never matters.
constexpr int64_t kNowMs = 1'800'000'000'000;

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

Status Run() {
  const int64_t commits = Scaled(kFullCommits, 2 * kCheckpointInterval);
  ASSIGN_OR_RETURN(auto scratch, ScratchDir::Create("snapshot"));
  const fs::path checkpointed = scratch.path() / "with_checkpoints";
  const fs::path json_only = scratch.path() / "json_only";
  ASSIGN_OR_RETURN(auto db, engine::Database::Open());
  ASSIGN_OR_RETURN(auto conn, engine::Connection::Open(db));

  Progress("snapshot_bench", fmt::format("writing {} commits under {}", commits, scratch.path().string()));
  RETURN_IF_ERROR(WriteAppendOnlyLog(checkpointed, commits));
  RETURN_IF_ERROR(CopyCommitsOnly(checkpointed, json_only));
  Progress("snapshot_bench", fmt::format("writing a checkpoint every {} commits", kCheckpointInterval));
  {
    ASSIGN_OR_RETURN(auto store, OpenLocalObjectStore(checkpointed.string()));
    for (int64_t version = kCheckpointInterval; version < commits; version += kCheckpointInterval) {
      RETURN_IF_ERROR(
          delta::CheckpointVersion(store, checkpointed.string(), *conn, version, kNowMs).status());
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
    ASSIGN_OR_RETURN(auto snapshot, delta::LoadSnapshot(store, root.string(), *conn));
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

}  // namespace
}  // namespace basin::bench

int main() { return basin::bench::RunBenchmark("snapshot_bench", basin::bench::Run); }
