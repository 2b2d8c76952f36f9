// What Basin's benchmarks share: the scale knob, interleaved timing against a peer, scratch
// folders, and generating Delta tables of synthetic rows through Basin's own writer
// (engine::WriteDataFiles + delta::WriteCommit).
//
// Every benchmark measures Basin and a peer in the same run and prints one line starting
// with "summary " that carries the ratio; scripts/run_benchmarks.sh collects those lines.
//
// Thread safety: single-threaded helpers for single-threaded benchmark programs.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "basin/object_store.h"
#include "basin/status.h"
#include "delta/actions.h"
#include "engine/duckdb.h"
#include "sql/session.h"

namespace basin::bench {

// BASIN_BENCH_SCALE (default 1.0): the fraction of full size to generate, e.g. 0.1 for a
// quick run. Invalid or non-positive values fall back to 1.0 with a warning.
double Scale();
// `full_size` times Scale(), at least `minimum`.
int64_t Scaled(int64_t full_size, int64_t minimum = 1);

// BASIN_BENCH_RUNS (default `default_runs`, never below 5): timed runs per side.
int TimedRuns(int default_runs = 7);

double Median(std::vector<double> values);

// The value a fraction `q` (0 to 1) of the way through `sorted` (ascending, not empty),
// rounded down to an element.
int64_t Quantile(const std::vector<int64_t>& sorted, double q);

struct Comparison {
  std::vector<double> basin_seconds;
  std::vector<double> peer_seconds;
  double basin_median() const { return Median(basin_seconds); }
  double peer_median() const { return Median(peer_seconds); }
};

// Runs `body` once untimed, then `runs` times; returns the median wall time in seconds.
Result<double> MedianSeconds(int runs, const std::function<Status()>& body);
// Seconds since `start`.
inline double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Runs each side once untimed (warm caches for both), then `runs` times each, alternating
// which goes first, so drift in machine load hits both alike. Stops at the first error.
Result<Comparison> TimeInterleaved(int runs, const std::function<Status()>& basin,
                                   const std::function<Status()>& peer);

// A fresh folder under $BASIN_BENCH_DIR (default: the system temp folder), removed when the
// object goes away unless BASIN_BENCH_KEEP=1.
class ScratchDir {
 public:
  static Result<ScratchDir> Create(const std::string& label);
  ScratchDir(ScratchDir&& other) noexcept;
  ScratchDir& operator=(ScratchDir&&) = delete;
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ~ScratchDir();

  const std::filesystem::path& path() const { return path_; }

 private:
  explicit ScratchDir(std::filesystem::path path) : path_(std::move(path)) {}
  std::filesystem::path path_;
};

// A Delta table the benchmark generated, and where its data files are.
struct GeneratedTable {
  std::filesystem::path root;
  std::vector<delta::AddFile> files;
  int64_t rows = 0;

  // Absolute local paths of the data files, in commit order.
  std::vector<std::string> DataFilePaths() const;
  // A DuckDB list literal of DataFilePaths(), for read_parquet([...]).
  std::string DataFileListSql() const;
};

// Creates a table at `root` whose version 0 holds one data file per SELECT in
// `file_selects` (all with the same columns), written by engine::WriteDataFiles and
// committed with delta::WriteCommit together with protocol r1/w2 and the inferred schema.
Result<GeneratedTable> CreateTable(engine::Connection& conn, const std::filesystem::path& root,
                                   const std::vector<std::string>& file_selects);

// Rows shaped like TPC-H lineitem for row numbers [begin, end), computed from range():
// deterministic, with realistic types (DECIMAL(15,2) prices, DATE columns, short strings).
std::string LineitemSelect(int64_t begin, int64_t end);

// An append-only log of `commits` versions under `table_root`: version 0 creates a table
// with one BIGINT column `id` (protocol r1/w2, metaData), and every version adds one small
// data file with stats. The data files themselves are not written: this is for measuring
// log replay. Commits are serialized with delta::SerializeAction but written as plain files,
// without WriteCommit's fsyncs, which would make setup take minutes.
Status WriteAppendOnlyLog(const std::filesystem::path& table_root, int64_t commits);

// The single integer `sql` returns (a count), run directly on DuckDB.
Result<int64_t> QueryInt(engine::Connection& conn, const std::string& sql);

// A Basin SQL session with default options, or on the warehouse folder `warehouse_dir`.
Result<std::unique_ptr<sql::Session>> OpenSession(const std::string& warehouse_dir = "");
// A session on `warehouse_dir` as `basin stream run` opens one to run a stream on
// (stream::StreamSessionThreads).
Result<std::unique_ptr<sql::Session>> OpenStreamSession(const std::string& warehouse_dir);

// The result of the last statement of `sql` run through Basin.
Result<engine::QueryResult> QueryBasin(sql::Session& session, const std::string& sql);

// InvalidArgument describing the first difference when the two results' rows differ.
Status ExpectSameRows(const engine::QueryResult& basin, const engine::QueryResult& peer,
                      const std::string& what);

// Prints "[<name> +<seconds since start>s] <text>" and flushes: setup can take a while.
void Progress(const std::string& name, const std::string& text);

// Prints "summary <name>: <text>" and flushes.
void PrintSummary(const std::string& name, const std::string& text);

// A memory figure of /proc/<pid>/status ("VmRSS", the resident set now; "VmHWM", its peak) in
// MiB, of this process when `pid` is 0; -1 when /proc cannot tell.
double ProcessMemoryMiB(const std::string& field, int pid = 0);

// A program StartProgram started: its process id, and the read end of its standard output,
// which the caller closes.
struct StartedProgram {
  int pid = -1;
  int stdout_fd = -1;
};

// Starts the program `argv[0]` with arguments `argv` in a child process whose standard output
// is a pipe (its standard error this process's). IOError naming `what` when it cannot.
Result<StartedProgram> StartProgram(const std::vector<std::string>& argv, const std::string& what);

// Runs the program `argv[0]` with arguments `argv` in a child process, passing each piece of
// its standard output to `on_output`; returns the child's peak resident memory in bytes
// (ru_maxrss). Internal, naming `what`, when it does not exit 0.
Result<int64_t> RunProgram(const std::vector<std::string>& argv,
                           const std::function<void(std::string_view)>& on_output, const std::string& what);

// Runs `body` with malloc set up as the basin program sets it (TuneMalloc); on error prints
// it (naming the benchmark) and returns exit code 1.
int RunBenchmark(const std::string& name, const std::function<Status()>& body);

}  // namespace basin::bench
