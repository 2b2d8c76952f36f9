// What a stateful stream's state costs each batch: a stream de-duplicating ids within a
// watermark (SELECT DISTINCT ON (id) ... WATERMARK ts DELAY OF ...) over a Delta table,
// whose state holds a million ids, takes small batches (2,000 new rows and 1,000 repeats of
// the batch before's); its peer is a plain stream copying the same table, batch for batch,
// in the same run. The state's cost per batch should follow the batch, not the state: the
// ratio of the plain batch's median to the de-duplicating one's is printed, with what the
// last batch wrote to the checkpoint's state/ folder.

#include <fmt/format.h>

#include <chrono>
#include <string>
#include <vector>

#include "bench_util.h"
#include "stream/runner.h"

namespace basin::bench {
namespace {

constexpr int64_t kFullStateRows = 1'000'000;
constexpr int64_t kBatches = 20;
constexpr int64_t kNewRows = 2'000;
constexpr int64_t kRepeatedRows = 1'000;

// Rows of ids [from, to) with their event times (an id's second of 2026) and amounts.
std::string EventRows(int64_t from, int64_t to) {
  return fmt::format(
      "SELECT i AS id, TIMESTAMP '2026-01-01 00:00:00' + to_seconds(i) AS ts, (i % 97)::INTEGER AS amount "
      "FROM range({}, {}) t(i)",
      from, to);
}

Status Run() {
  const int64_t state_rows = Scaled(kFullStateRows, 100'000);
  ASSIGN_OR_RETURN(auto scratch, ScratchDir::Create("stream-state"));
  ASSIGN_OR_RETURN(auto session, OpenStreamSession((scratch.path() / "warehouse").string()));
  RETURN_IF_ERROR(session
                      ->Execute("CREATE TABLE events (id BIGINT, ts TIMESTAMP, amount INTEGER); "
                                "CREATE TABLE deduplicated (id BIGINT, ts TIMESTAMP, amount INTEGER); "
                                "CREATE TABLE copied (id BIGINT, ts TIMESTAMP, amount INTEGER)")
                      .status());
  RETURN_IF_ERROR(session->Execute("INSERT INTO events " + EventRows(0, state_rows)).status());
  auto open = [&](const std::string& name,
                  const std::string& statement) -> Result<std::unique_ptr<stream::StreamRunner>> {
    ASSIGN_OR_RETURN(auto store, OpenStoreAt((scratch.path() / name).string()));
    return stream::StreamRunner::Open(*session, std::move(store), statement, SystemClock());
  };
  ASSIGN_OR_RETURN(auto deduplicating,
                   open("dedup-checkpoint",
                        "INSERT INTO deduplicated SELECT DISTINCT ON (id) id, ts, amount FROM STREAM(events) "
                        "WATERMARK ts DELAY OF INTERVAL 365 DAYS"));
  ASSIGN_OR_RETURN(auto copying, open("copy-checkpoint", "INSERT INTO copied SELECT * FROM STREAM(events)"));
  // The first batches read the million rows (the state's first keys): not timed.
  auto run = [](stream::StreamRunner& runner, int64_t rows) -> Result<double> {
    const auto started = std::chrono::steady_clock::now();
    ASSIGN_OR_RETURN(std::optional<stream::BatchCommit> commit, runner.RunBatch());
    const double seconds = SecondsSince(started);
    if (!commit || commit->rows_out != rows) {
      return Status::Internal(
          fmt::format("a batch wrote {} rows, expected {}", commit ? commit->rows_out : 0, rows));
    }
    return seconds;
  };
  RETURN_IF_ERROR(run(*deduplicating, state_rows).status());
  RETURN_IF_ERROR(run(*copying, state_rows).status());

  std::vector<double> deduplicating_times, copying_times;
  int64_t next = state_rows;
  for (int64_t batch = 0; batch < kBatches; batch++) {
    RETURN_IF_ERROR(session
                        ->Execute("INSERT INTO events " + EventRows(next, next + kNewRows) + " UNION ALL " +
                                  EventRows(next - kRepeatedRows, next))
                        .status());
    next += kNewRows;
    ASSIGN_OR_RETURN(double deduplicated, run(*deduplicating, kNewRows));
    ASSIGN_OR_RETURN(double copied, run(*copying, kNewRows + kRepeatedRows));
    deduplicating_times.push_back(deduplicated);
    copying_times.push_back(copied);
  }
  ASSIGN_OR_RETURN(auto state, OpenStoreAt((scratch.path() / "dedup-checkpoint" / "state").string()));
  ASSIGN_OR_RETURN(std::vector<ObjectInfo> objects, state->List(""));
  int64_t newest = -1;
  int64_t newest_bytes = 0, folder_bytes = 0;
  for (const ObjectInfo& object : objects) {
    folder_bytes += object.size_bytes;
    if (object.key.ends_with(".parquet")) {
      const int64_t id = std::stoll(object.key);
      if (id > newest) {
        newest = id;
        newest_bytes = object.size_bytes;
      }
    }
  }
  const double deduplicating_median = Median(deduplicating_times), copying_median = Median(copying_times);
  PrintSummary(
      "stream_state_bench",
      fmt::format("{} batches of {} new and {} repeated rows over a state of {} ids (scale {}): "
                  "de-duplicating batch median {:.1f} ms, plain stream {:.1f} ms, plain/de-duplicating "
                  "= {:.3f}; the last batch's state file {} bytes, the state folder {} bytes in {} "
                  "objects",
                  kBatches, kNewRows, kRepeatedRows, state_rows, Scale(), deduplicating_median * 1e3,
                  copying_median * 1e3, copying_median / deduplicating_median, newest_bytes, folder_bytes,
                  objects.size()));
  return Status::OK();
}

}  // namespace
}  // namespace basin::bench

int main() { return basin::bench::RunBenchmark("stream_state_bench", basin::bench::Run); }
