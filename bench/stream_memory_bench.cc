// Resident memory of a long stream: payment events fed at a steady 5,000 events/s for ten
// minutes (scaled by BASIN_BENCH_SCALE) through a continuous stream into bronze (the same
// process holds the dev cluster, which keeps a bounded window of each partition). Prints the
// resident set after the first tenth of the run and at the end, end/start (target: flat,
// about 1), and the resident set at each tenth between, to tell a plateau from a climb.

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "bench_util.h"
#include "live_stream.h"

namespace basin::bench {
namespace {

constexpr double kEventsPerSecond = 5'000;
constexpr int64_t kFullSeconds = 600;

Status Run() {
  const int64_t seconds = Scaled(kFullSeconds, 30);
  const auto events = static_cast<int64_t>(kEventsPerSecond * static_cast<double>(seconds));
  ASSIGN_OR_RETURN(auto scratch, ScratchDir::Create("stream-memory"));
  ASSIGN_OR_RETURN(auto live,
                   LiveStream::Start((scratch.path() / "warehouse").string(),
                                     (scratch.path() / "checkpoint").string(), events, kEventsPerSecond));
  std::this_thread::sleep_for(std::chrono::seconds(seconds / 10));
  const double start = ProcessMemoryMiB("VmRSS");
  double peak = start;
  std::vector<std::string> tenths = {fmt::format("{:.0f}", start)};  // the resident set at each tenth
  for (int64_t s = seconds / 10; s < seconds; s++) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    const double now = ProcessMemoryMiB("VmRSS");
    peak = std::max(peak, now);
    if ((s + 1) % std::max<int64_t>(seconds / 10, 1) == 0) tenths.push_back(fmt::format("{:.0f}", now));
  }
  const double end = ProcessMemoryMiB("VmRSS");
  RETURN_IF_ERROR(live->Finish());
  PrintSummary(
      "stream_memory_bench",
      fmt::format("{} s at {:.0f} events/s (scale {}), {} batches: RSS {:.0f} MiB after {} s, {:.0f} MiB at "
                  "the end (peak {:.0f}); end/start = {:.2f} (target about 1); MiB at each tenth of the run "
                  "from the first: {}",
                  seconds, kEventsPerSecond, Scale(), live->batches(), start, seconds / 10, end, peak,
                  end / start, fmt::join(tenths, ", ")));
  return Status::OK();
}

}  // namespace
}  // namespace basin::bench

int main() { return basin::bench::RunBenchmark("stream_memory_bench", basin::bench::Run); }
