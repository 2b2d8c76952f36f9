// Small single-row commits per second (INSERT INTO t VALUES (...) through Basin's SQL, each
// one Delta commit with a data file, checkpoints every 10 commits as by default), against
// the disk's raw commit limit measured in the same run: what any Delta commit of a data
// file must do at least (write a small file and fsync it, create the next log entry only if
// absent and fsync it, fsync the folders). Target: ratio >= 0.25.

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "bench_util.h"

namespace basin::bench {
namespace {

constexpr int64_t kFullCommits = 300;

Status WriteAndSync(const std::string& path, int flags, const std::string& data) {
  int fd = ::open(path.c_str(), flags | O_WRONLY, 0644);
  if (fd < 0) return Status::IOError("cannot create " + path);
  const bool ok =
      ::write(fd, data.data(), data.size()) == static_cast<ssize_t>(data.size()) && ::fsync(fd) == 0;
  ::close(fd);
  return ok ? Status::OK() : Status::IOError("cannot write and fsync " + path);
}

Status SyncFolder(const std::filesystem::path& folder) {
  int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return Status::IOError("cannot open " + folder.string());
  const bool ok = ::fsync(fd) == 0;
  ::close(fd);
  return ok ? Status::OK() : Status::IOError("cannot fsync " + folder.string());
}

// Raw commits per second in `folder`: a small data file written and fsynced, the next log
// entry created exclusively (O_EXCL) and fsynced, both folders fsynced; `folder` is new.
Result<double> RawCommitRate(const std::filesystem::path& folder, int64_t count) {
  const std::filesystem::path log = folder / "_delta_log";
  std::filesystem::create_directories(log);
  const std::string data(600, 'x'), entry(900, 'y');
  auto start = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < count; i++) {
    RETURN_IF_ERROR(
        WriteAndSync((folder / fmt::format("part-{}.parquet", i)).string(), O_CREAT | O_TRUNC, data));
    RETURN_IF_ERROR(WriteAndSync((log / fmt::format("{:020}.json", i)).string(), O_CREAT | O_EXCL, entry));
    RETURN_IF_ERROR(SyncFolder(log));
    RETURN_IF_ERROR(SyncFolder(folder));
  }
  return static_cast<double>(count) / SecondsSince(start);
}

Status Run() {
  const int64_t commits = Scaled(kFullCommits, 20);
  ASSIGN_OR_RETURN(auto scratch, ScratchDir::Create("commit"));
  ASSIGN_OR_RETURN(auto session, OpenSession((scratch.path() / "warehouse").string()));
  RETURN_IF_ERROR(session->Execute("CREATE TABLE events (id BIGINT, kind STRING)").status());

  // Interleaved in short rounds, as many raw commits as INSERTs in each, so that the disk's
  // drift (its rate moves by half within a minute on these machines) hits both sides alike.
  // A round holds one checkpoint interval's INSERTs (ten), so each pays one checkpoint. The
  // raw commits of each round go to a folder of their own, deleted only at the end: deleted
  // files make the file system's next creations slower for a while, Basin's too.
  constexpr int64_t kPerRound = 10;
  const int64_t rounds = std::max<int64_t>(2, commits / kPerRound);
  double raw_seconds = 0, commit_seconds = 0;
  std::vector<double> round_ratios;
  for (int64_t round = 0; round < rounds; round++) {
    ASSIGN_OR_RETURN(double rate, RawCommitRate(scratch.path() / fmt::format("raw-{}", round), kPerRound));
    const double raw_round = static_cast<double>(kPerRound) / rate;
    auto start = std::chrono::steady_clock::now();
    for (int64_t i = 0; i < kPerRound; i++) {
      const int64_t id = round * kPerRound + i;
      RETURN_IF_ERROR(session->Execute(fmt::format("INSERT INTO events VALUES ({}, 'click')", id)).status());
    }
    const double commit_round = SecondsSince(start);
    raw_seconds += raw_round;
    commit_seconds += commit_round;
    round_ratios.push_back(raw_round / commit_round);
  }
  const int64_t committed = rounds * kPerRound;
  ASSIGN_OR_RETURN(auto count, QueryBasin(*session, "SELECT count(*) FROM events"));
  if (count.row_count() != 1 || count.at(0, 0) != std::to_string(committed)) {
    return Status::Internal(
        fmt::format("events holds {} rows, expected {}", count.at(0, 0).value_or("NULL"), committed));
  }
  const double commit_rate = static_cast<double>(committed) / commit_seconds;
  const double raw_rate = static_cast<double>(committed) / raw_seconds;
  PrintSummary("commit_bench",
               fmt::format("{} single-row INSERT commits (scale {}): {:.1f} commits/s; raw commit limit "
                           "{:.1f}/s; basin/raw = {:.3f} overall, {:.3f} the median of {} rounds "
                           "(target >= 0.25)",
                           committed, Scale(), commit_rate, raw_rate, commit_rate / raw_rate,
                           Median(round_ratios), rounds));
  return Status::OK();
}

}  // namespace
}  // namespace basin::bench

int main() { return basin::bench::RunBenchmark("commit_bench", basin::bench::Run); }
