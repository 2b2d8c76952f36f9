// Resident memory of a long stream: payment events fed at a steady 5,000 events/s for ten
// minutes (scaled by BASIN_BENCH_SCALE) through a continuous stream into bronze (the dev
// cluster runs as `basin kafka-dev`, as a real cluster runs outside the stream's process:
// its bounded window of each partition, about 90 MiB, is reported apart). Reads the
// resident set each second after the first tenth of the run, and prints the median of each
// tenth after it, to tell a plateau from a climb, the ratio of the last tenth's to the
// second's (target: flat, about 1), the first and last readings and the peak, and how long
// the batches took (a stream falling behind shows there first).

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
  const int64_t tenth = std::max<int64_t>(seconds / 10, 1);
  std::this_thread::sleep_for(std::chrono::seconds(tenth));
  // The resident set each second from the end of the first tenth; the median of each tenth
  // after it (a compaction every kCompactEveryBatches batches holds about 10 MiB for a few
  // seconds, which a single reading may catch or miss).
  std::vector<double> samples = {ProcessMemoryMiB("VmRSS")};
  for (int64_t s = tenth; s < seconds; s++) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    samples.push_back(ProcessMemoryMiB("VmRSS"));
  }
  const double cluster_mib = live->ClusterResidentMiB();
  RETURN_IF_ERROR(live->Finish());
  std::vector<double> medians;
  for (size_t begin = 0; begin + 1 < samples.size(); begin += static_cast<size_t>(tenth)) {
    const size_t end = std::min(samples.size(), begin + static_cast<size_t>(tenth));
    medians.push_back(Median(std::vector<double>(samples.begin() + static_cast<long>(begin),
                                                 samples.begin() + static_cast<long>(end))));
  }
  std::vector<std::string> tenths;
  for (double m : medians) tenths.push_back(fmt::format("{:.0f}", m));
  const double start = samples.front(), end = samples.back();
  const double peak = *std::max_element(samples.begin(), samples.end());
  PrintSummary(
      "stream_memory_bench",
      fmt::format(
          "{} s at {:.0f} events/s (scale {}), {} batches: RSS {:.0f} MiB after {} s, {:.0f} MiB at "
          "the end (peak {:.0f}); median of the last tenth / median of the second = {:.2f} (target "
          "about 1; the end / the start reading {:.2f}); median MiB of each tenth from the second: {}; {}; "
          "the dev cluster's process {:.0f} MiB at the end",
          seconds, kEventsPerSecond, Scale(), live->batches(), start, tenth, end, peak,
          medians.back() / medians.front(), end / start, fmt::join(tenths, ", "), live->BatchDurations(),
          cluster_mib));
  return Status::OK();
}

}  // namespace
}  // namespace basin::bench

int main() { return basin::bench::RunBenchmark("stream_memory_bench", basin::bench::Run); }
