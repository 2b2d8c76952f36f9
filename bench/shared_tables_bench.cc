// Memory per session when many sessions read one table of many files, as a server's
// connections do: 20 basin::Session each run count(*) over a table of 3,000 data files
// (scaled by BASIN_BENCH_SCALE) and stay open, either each with a snapshot cache of its own
// (the peer: a table's file list held by every session) or all sharing one TableCache (what
// `basin serve` gives its connections). Each way runs twice, in turns, in a child process of
// its own (`shared_tables_bench --child own|shared <warehouse> <sessions>`), which prints
// its resident set after its first session and after its last. Printed: what each session
// after the first adds, both ways, and shared/own (lower is better; what remains shared is
// each session's own DuckDB database).

#include <fmt/format.h>

#include <charconv>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "basin/session.h"
#include "bench_util.h"

namespace basin::bench {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kFullFiles = 3'000;
constexpr int kSessions = 20;

// The child: `sessions` sessions, sharing a cache or not, each counting the table's rows.
// Prints "<RSS MiB after the first> <RSS MiB after the last>".
int RunChild(const std::string& mode, const std::string& warehouse, int sessions) {
  std::shared_ptr<TableCache> tables = mode == "shared" ? NewTableCache(32) : nullptr;
  std::vector<std::unique_ptr<Session>> open;
  std::string expected;
  double after_first = 0;
  for (int i = 0; i < sessions; i++) {
    Result<std::unique_ptr<Session>> session = Session::Open({.warehouse = warehouse, .tables = tables});
    if (!session.ok()) {
      std::fprintf(stderr, "%s\n", session.status().ToString().c_str());
      return 1;
    }
    Result<std::vector<StatementResult>> counted = (*session)->Execute("SELECT count(*) FROM t");
    if (!counted.ok() || counted->back().result.rows.empty() || !counted->back().result.rows[0][0]) {
      std::fprintf(stderr, "count(*) failed: %s\n", counted.status().ToString().c_str());
      return 1;
    }
    const std::string count = *counted->back().result.rows[0][0];
    if (i == 0) expected = count;
    if (count != expected) {
      std::fprintf(stderr, "session %d counted %s rows, the first %s\n", i, count.c_str(), expected.c_str());
      return 1;
    }
    open.push_back(std::move(*session));
    if (i == 0) after_first = ProcessMemoryMiB("VmRSS");
  }
  std::printf("%.2f %.2f\n", after_first, ProcessMemoryMiB("VmRSS"));
  return 0;
}

// MiB each session after the first added, in a child run of `mode`.
Result<double> MiBPerSession(const std::string& self, const std::string& mode, const std::string& warehouse,
                             int sessions) {
  std::string output;
  RETURN_IF_ERROR(RunProgram(
                      {self, "--child", mode, warehouse, std::to_string(sessions)},
                      [&](std::string_view piece) { output.append(piece); }, "the " + mode + " child")
                      .status());
  std::istringstream in(output);
  double first = 0, last = 0;
  if (!(in >> first >> last) || first <= 0) {
    return Status::Internal("the " + mode + " child printed '" + output + "', not two resident sets");
  }
  return (last - first) / (sessions - 1);
}

Status Run() {
  const int64_t files = Scaled(kFullFiles, 100);
  ASSIGN_OR_RETURN(auto scratch, ScratchDir::Create("shared-tables"));
  const std::string warehouse = (scratch.path() / "warehouse").string();
  {
    ASSIGN_OR_RETURN(std::unique_ptr<Session> session, Session::Open({.warehouse = warehouse}));
    RETURN_IF_ERROR(session->Execute("CREATE TABLE t (id BIGINT, s VARCHAR)").status());
    for (int64_t i = 0; i < files; i++) {
      if (i % 500 == 0) Progress("shared_tables_bench", fmt::format("table t: {} of {} files", i, files));
      RETURN_IF_ERROR(session->Execute(fmt::format("INSERT INTO t VALUES ({}, 'row {}')", i, i)).status());
    }
  }
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  std::vector<double> own, shared;
  for (int round = 0; round < 2; round++) {
    ASSIGN_OR_RETURN(double own_mib, MiBPerSession(self, "own", warehouse, kSessions));
    ASSIGN_OR_RETURN(double shared_mib, MiBPerSession(self, "shared", warehouse, kSessions));
    Progress("shared_tables_bench",
             fmt::format("round {}: {:.2f} MiB a session with its own cache, {:.2f} sharing one", round + 1,
                         own_mib, shared_mib));
    own.push_back(own_mib);
    shared.push_back(shared_mib);
  }
  const double own_median = Median(own), shared_median = Median(shared);
  PrintSummary("shared_tables_bench",
               fmt::format("{} sessions each counting a table of {} files (scale {}): each session after the "
                           "first adds {:.2f} MiB with a snapshot cache of its own, {:.2f} MiB sharing a "
                           "TableCache as basin serve's connections do; shared/own = {:.2f}",
                           kSessions, files, Scale(), own_median, shared_median, shared_median / own_median));
  return Status::OK();
}

}  // namespace
}  // namespace basin::bench

int main(int argc, char** argv) {
  if (argc == 5 && std::string(argv[1]) == "--child") {
    int sessions = 0;
    const std::string_view text = argv[4];
    if (std::from_chars(text.data(), text.data() + text.size(), sessions).ec != std::errc() || sessions < 2) {
      std::fprintf(stderr, "--child wants a session count of at least 2, got %s\n", argv[4]);
      return 1;
    }
    return basin::bench::RunChild(argv[2], argv[3], sessions);
  }
  return basin::bench::RunBenchmark("shared_tables_bench", basin::bench::Run);
}
