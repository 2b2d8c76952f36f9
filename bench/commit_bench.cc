// Small single-row commits per second (INSERT INTO t VALUES (...) through Basin's SQL, each
// one Delta commit with a data file, checkpoints every 10 commits as by default), against
// the machine's fsync rate measured in the same run (write a small file, fsync it). A
// commit needs a few fsyncs (data file, commit file, folder), so the ratio tells how close
// Basin gets to what the disk allows.

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "bench_util.h"

namespace basin::bench {
namespace {

constexpr int64_t kFullCommits = 300;

double Seconds(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// fsyncs per second of a small file rewritten in `folder`.
Result<double> FsyncRate(const std::filesystem::path& folder, int64_t count) {
  std::string path = (folder / "fsync-probe").string();
  int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
  if (fd < 0) return Status::IOError("cannot create " + path);
  std::string block(512, 'x');
  auto start = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < count; i++) {
    if (::pwrite(fd, block.data(), block.size(), 0) != static_cast<ssize_t>(block.size()) ||
        ::fsync(fd) != 0) {
      ::close(fd);
      return Status::IOError("cannot write and fsync " + path);
    }
  }
  double seconds = Seconds(start);
  ::close(fd);
  return static_cast<double>(count) / seconds;
}

Status Run() {
  const int64_t commits = Scaled(kFullCommits, 20);
  ASSIGN_OR_RETURN(auto scratch, ScratchDir::Create("commit"));
  ASSIGN_OR_RETURN(auto session, OpenSession((scratch.path() / "warehouse").string()));
  RETURN_IF_ERROR(session->Execute("CREATE TABLE events (id BIGINT, kind STRING)").status());

  // Interleaved halves, so load drift hits both sides alike.
  double fsync_seconds = 0, commit_seconds = 0;
  int64_t fsyncs = 0;
  for (int half = 0; half < 2; half++) {
    ASSIGN_OR_RETURN(double rate, FsyncRate(scratch.path(), commits));
    fsync_seconds += static_cast<double>(commits) / rate;
    fsyncs += commits;
    auto start = std::chrono::steady_clock::now();
    for (int64_t i = 0; i < commits / 2; i++) {
      int64_t id = half * commits + i;
      RETURN_IF_ERROR(session->Execute(fmt::format("INSERT INTO events VALUES ({}, 'click')", id)).status());
    }
    commit_seconds += Seconds(start);
  }
  const int64_t committed = 2 * (commits / 2);
  ASSIGN_OR_RETURN(auto count, QueryBasin(*session, "SELECT count(*) FROM events"));
  if (count.row_count() != 1 || count.at(0, 0) != std::to_string(committed)) {
    return Status::Internal(
        fmt::format("events holds {} rows, expected {}", count.at(0, 0).value_or("NULL"), committed));
  }
  const double commit_rate = static_cast<double>(committed) / commit_seconds;
  const double fsync_rate = static_cast<double>(fsyncs) / fsync_seconds;
  PrintSummary("commit_bench",
               fmt::format("{} single-row INSERT commits (scale {}): {:.1f} commits/s; fsync rate {:.1f}/s; "
                           "commits per fsync = {:.4f} (one commit takes as long as {:.0f} fsyncs)",
                           committed, Scale(), commit_rate, fsync_rate, commit_rate / fsync_rate,
                           fsync_rate / commit_rate));
  return Status::OK();
}

}  // namespace
}  // namespace basin::bench

int main() { return basin::bench::RunBenchmark("commit_bench", basin::bench::Run); }
