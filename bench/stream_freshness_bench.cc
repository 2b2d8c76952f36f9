// Freshness: payment events (stream/kafka/generator.h, each stamped with the time it was
// made in its "ts" field) fed to the dev cluster at a steady 20,000 events/s, a continuous
// stream with the default trigger landing them in bronze, and a second session polling
// `SELECT max(id)` every 20 ms. An event's freshness is the first poll that sees its id,
// minus its ts. Prints p50, p99 and the worst, p99 against the 2 s goal, the feed's
// rate against the one asked, and how long the batches took.

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "basin/clock.h"
#include "bench_util.h"
#include "live_stream.h"

namespace basin::bench {
namespace {

constexpr double kEventsPerSecond = 20'000;
constexpr int64_t kFullSeconds = 10;

Status Run() {
  const int64_t events = Scaled(static_cast<int64_t>(kEventsPerSecond) * kFullSeconds, 20'000);
  ASSIGN_OR_RETURN(auto scratch, ScratchDir::Create("stream-freshness"));
  const std::string warehouse = (scratch.path() / "warehouse").string();
  ASSIGN_OR_RETURN(auto live, LiveStream::Start(warehouse, (scratch.path() / "checkpoint").string(), events,
                                                kEventsPerSecond));
  ASSIGN_OR_RETURN(auto reader_session, OpenSession(warehouse));

  // (poll time, the largest id visible then)
  std::vector<std::pair<int64_t, int64_t>> polls;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kFullSeconds * 3 + 30);
  while (std::chrono::steady_clock::now() < deadline) {
    ASSIGN_OR_RETURN(auto max_id, QueryBasin(*reader_session, "SELECT coalesce(max(id), 0) FROM bronze"));
    polls.emplace_back(SystemClock()->NowMs(), std::stoll(max_id.at(0, 0).value_or("0")));
    if (polls.back().second >= events) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  RETURN_IF_ERROR(live->Finish());
  if (polls.empty() || polls.back().second < events) {
    return Status::Internal(fmt::format("bronze shows ids up to {} of {} by the deadline",
                                        polls.empty() ? 0 : polls.back().second, events));
  }

  // Each event's ts (ms), by id; its freshness from the first poll that saw it.
  ASSIGN_OR_RETURN(auto stamps,
                   QueryBasin(*reader_session, "SELECT id, epoch_ms(ts) FROM bronze ORDER BY id"));
  std::vector<int64_t> freshness;
  freshness.reserve(stamps.row_count());
  size_t poll = 0;
  for (size_t r = 0; r < stamps.row_count(); r++) {
    const int64_t id = std::stoll(*stamps.at(r, 0));
    while (poll < polls.size() && polls[poll].second < id) poll++;
    if (poll == polls.size()) return Status::Internal(fmt::format("id {} was never seen", id));
    freshness.push_back(polls[poll].first - std::stoll(*stamps.at(r, 1)));
  }
  std::sort(freshness.begin(), freshness.end());
  const double rate = static_cast<double>(events) / live->feed_seconds();
  PrintSummary(
      "stream_freshness_bench",
      fmt::format("{} events fed at {:.0f}/s ({:.2f} of the {:.0f}/s asked; scale {}), {} batches: freshness "
                  "p50 {} ms, p99 {} ms, worst {} ms; p99 / 2 s = {:.2f} (target < 1); {}",
                  events, rate, rate / kEventsPerSecond, kEventsPerSecond, Scale(), live->batches(),
                  Quantile(freshness, 0.5), Quantile(freshness, 0.99), freshness.back(),
                  static_cast<double>(Quantile(freshness, 0.99)) / 2000.0, live->BatchDurations()));
  return Status::OK();
}

}  // namespace
}  // namespace basin::bench

int main() { return basin::bench::RunBenchmark("stream_freshness_bench", basin::bench::Run); }
