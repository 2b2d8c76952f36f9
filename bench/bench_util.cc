#include "bench_util.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>

#include "basin/malloc_tuning.h"
#include "basin/object_store.h"
#include "delta/commit_writer.h"
#include "delta/paths.h"
#include "delta/schema.h"
#include "engine/parquet_writer.h"
#include "stream/runner.h"

namespace basin::bench {

namespace fs = std::filesystem;

double Scale() {
  static const double scale = [] {
    const char* text = std::getenv("BASIN_BENCH_SCALE");
    if (text == nullptr || *text == '\0') return 1.0;
    char* end = nullptr;
    double value = std::strtod(text, &end);
    if (end == text || *end != '\0' || !(value > 0)) {
      std::fprintf(stderr, "BASIN_BENCH_SCALE='%s' is not a positive number; using 1\n", text);
      return 1.0;
    }
    return value;
  }();
  return scale;
}

int64_t Scaled(int64_t full_size, int64_t minimum) {
  return std::max<int64_t>(minimum, static_cast<int64_t>(static_cast<double>(full_size) * Scale()));
}

int TimedRuns(int default_runs) {
  int runs = default_runs;
  if (const char* text = std::getenv("BASIN_BENCH_RUNS"); text != nullptr && *text != '\0')
    runs = std::atoi(text);
  return std::max(runs, 5);
}

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

int64_t Quantile(const std::vector<int64_t>& sorted, double q) {
  return sorted[static_cast<size_t>(q * static_cast<double>(sorted.size() - 1))];
}

namespace {

Result<double> TimeOnce(const std::function<Status()>& body) {
  auto start = std::chrono::steady_clock::now();
  RETURN_IF_ERROR(body());
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

Result<double> MedianSeconds(int runs, const std::function<Status()>& body) {
  RETURN_IF_ERROR_CTX(body(), "warm-up run");
  std::vector<double> seconds;
  for (int run = 0; run < runs; run++) {
    ASSIGN_OR_RETURN(double elapsed, TimeOnce(body));
    seconds.push_back(elapsed);
  }
  return Median(std::move(seconds));
}

Result<Comparison> TimeInterleaved(int runs, const std::function<Status()>& basin,
                                   const std::function<Status()>& peer) {
  RETURN_IF_ERROR_CTX(basin(), "warm-up run of Basin");
  RETURN_IF_ERROR_CTX(peer(), "warm-up run of the peer");
  Comparison out;
  for (int run = 0; run < runs; run++) {
    const bool basin_first = run % 2 == 0;
    for (int side = 0; side < 2; side++) {
      const bool is_basin = (side == 0) == basin_first;
      ASSIGN_OR_RETURN(double seconds, TimeOnce(is_basin ? basin : peer));
      (is_basin ? out.basin_seconds : out.peer_seconds).push_back(seconds);
    }
  }
  return out;
}

Result<ScratchDir> ScratchDir::Create(const std::string& label) {
  fs::path base = fs::temp_directory_path();
  if (const char* dir = std::getenv("BASIN_BENCH_DIR"); dir != nullptr && *dir != '\0') base = dir;
  std::error_code ec;
  fs::create_directories(base, ec);
  std::random_device rd;
  for (int attempt = 0; attempt < 100; attempt++) {
    fs::path candidate = base / ("basin-bench-" + label + "-" + std::to_string(rd()));
    if (fs::create_directory(candidate, ec)) return ScratchDir(candidate);
  }
  return Status::IOError("cannot create a scratch folder under " + base.string());
}

ScratchDir::ScratchDir(ScratchDir&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }

ScratchDir::~ScratchDir() {
  if (path_.empty()) return;
  if (const char* keep = std::getenv("BASIN_BENCH_KEEP"); keep != nullptr && std::string(keep) == "1") {
    std::fprintf(stderr, "keeping %s (BASIN_BENCH_KEEP=1)\n", path_.c_str());
    return;
  }
  std::error_code ec;
  fs::remove_all(path_, ec);
}

std::vector<std::string> GeneratedTable::DataFilePaths() const {
  std::vector<std::string> paths;
  paths.reserve(files.size());
  for (const auto& file : files) paths.push_back((root / delta::DecodeDataPath(file.path)).string());
  return paths;
}

std::string GeneratedTable::DataFileListSql() const {
  std::string list = "[";
  for (const auto& path : DataFilePaths()) list += (list.size() > 1 ? ", " : "") + engine::QuoteLiteral(path);
  return list + "]";
}

Result<GeneratedTable> CreateTable(engine::Connection& conn, const fs::path& root,
                                   const std::vector<std::string>& file_selects) {
  if (file_selects.empty()) return Status::InvalidArgument("CreateTable needs at least one SELECT");
  ASSIGN_OR_RETURN(auto store, OpenLocalObjectStore(root.string()));
  ASSIGN_OR_RETURN(delta::StructType schema, engine::InferDeltaSchema(conn, file_selects.front()));

  GeneratedTable table;
  table.root = root;
  for (const auto& select : file_selects) {
    ASSIGN_OR_RETURN(auto added, engine::WriteDataFiles(conn, select, *store));
    for (auto& add : added) table.files.push_back(std::move(add));
  }
  ASSIGN_OR_RETURN(table.rows,
                   QueryInt(conn, "SELECT count(*) FROM read_parquet(" + table.DataFileListSql() + ")"));

  const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  delta::Metadata metadata;
  std::random_device rd;
  metadata.id = "basin-bench-" + std::to_string(rd()) + "-" + std::to_string(rd());
  metadata.schema_string = delta::SchemaToJson(schema).dump();
  metadata.created_time = now_ms;
  std::vector<delta::Action> actions;
  actions.emplace_back(delta::MakeCommitInfo(now_ms, "WRITE"));
  actions.emplace_back(delta::Protocol{});
  actions.emplace_back(std::move(metadata));
  for (const auto& add : table.files) actions.emplace_back(add);
  RETURN_IF_ERROR_CTX(delta::WriteCommit(*store, 0, actions),
                      "committing the generated table at " + root.string());
  return table;
}

std::string LineitemSelect(int64_t begin, int64_t end) {
  // Multiplicative scrambles of the row number stand in for TPC-H's random streams.
  return "SELECT "
         "(i // 4 + 1)::BIGINT AS l_orderkey, "
         "partkey AS l_partkey, "
         "((i * 40503) % 10000 + 1)::BIGINT AS l_suppkey, "
         "(i % 4 + 1)::INTEGER AS l_linenumber, "
         "quantity::DECIMAL(15,2) AS l_quantity, "
         "(quantity * (900 + (partkey % 20000) / 100.0))::DECIMAL(15,2) AS l_extendedprice, "
         "(((i * 13) % 11) / 100.0)::DECIMAL(15,2) AS l_discount, "
         "(((i * 17) % 9) / 100.0)::DECIMAL(15,2) AS l_tax, "
         "CASE WHEN receiptdate <= DATE '1995-06-17' THEN (CASE WHEN i % 2 = 0 THEN 'R' ELSE 'A' END) "
         "ELSE 'N' END AS l_returnflag, "
         "CASE WHEN shipdate > DATE '1995-06-17' THEN 'O' ELSE 'F' END AS l_linestatus, "
         "shipdate AS l_shipdate, "
         "(DATE '1992-01-31' + ((i * 4273) % 2466)::INTEGER) AS l_commitdate, "
         "receiptdate AS l_receiptdate, "
         "['DELIVER IN PERSON', 'COLLECT COD', 'NONE', 'TAKE BACK RETURN'][i % 4 + 1] AS l_shipinstruct, "
         "['REG AIR', 'AIR', 'RAIL', 'SHIP', 'TRUCK', 'MAIL', 'FOB'][(i * 3) % 7 + 1] AS l_shipmode, "
         "substr(md5(i::VARCHAR), 1, 10 + (i % 23)::INTEGER) AS l_comment "
         "FROM (SELECT i, "
         "  ((i * 2654435761) % 200000 + 1)::BIGINT AS partkey, "
         "  ((i * 7) % 50 + 1) AS quantity, "
         "  DATE '1992-01-02' + ((i * 7919) % 2526)::INTEGER AS shipdate, "
         "  DATE '1992-01-02' + ((i * 7919) % 2526)::INTEGER + (i % 30 + 1)::INTEGER AS receiptdate "
         "  FROM range(" +
         std::to_string(begin) + ", " + std::to_string(end) + ") t(i))";
}

Status WriteAppendOnlyLog(const fs::path& table_root, int64_t commits) {
  constexpr int64_t kFirstCommitMs = 1'700'000'000'000;
  const fs::path log = table_root / "_delta_log";
  std::error_code ec;
  fs::create_directories(log, ec);
  if (ec) return Status::IOError("cannot create " + log.string() + ": " + ec.message());
  for (int64_t version = 0; version < commits; version++) {
    std::vector<delta::Action> actions;
    actions.emplace_back(delta::MakeCommitInfo(kFirstCommitMs + version, "WRITE"));
    if (version == 0) {
      actions.emplace_back(delta::Protocol{});
      delta::Metadata metadata;
      metadata.id = "basin-bench-append-only-log";
      metadata.schema_string =
          R"({"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]})";
      metadata.created_time = kFirstCommitMs;
      actions.emplace_back(std::move(metadata));
    }
    delta::AddFile add;
    add.path = fmt::format("part-{:08d}.parquet", version);
    add.size = 500 + version % 100;
    add.modification_time = kFirstCommitMs + version;
    add.stats = fmt::format(
        R"({{"numRecords":10,"minValues":{{"id":{}}},"maxValues":{{"id":{}}},"nullCount":{{"id":0}}}})",
        version * 10, version * 10 + 9);
    actions.emplace_back(std::move(add));
    std::string commit;
    for (const auto& action : actions) commit += delta::SerializeAction(action) + "\n";
    const fs::path file = log / fmt::format("{:020d}.json", version);
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out << commit;
    if (!out.good()) return Status::IOError("cannot write " + file.string());
  }
  return Status::OK();
}

Result<int64_t> QueryInt(engine::Connection& conn, const std::string& sql) {
  ASSIGN_OR_RETURN(auto result, conn.Query(sql));
  int64_t value = 0;
  const std::string text =
      result.row_count() == 1 && result.column_count() >= 1 ? result.at(0, 0).value_or("") : "";
  auto [end, err] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || err != std::errc() || end != text.data() + text.size()) {
    return Status::InvalidArgument("expected one integer from: " + sql);
  }
  return value;
}

double ProcessMemoryMiB(const std::string& field, int pid) {
  std::ifstream status(pid == 0 ? std::string("/proc/self/status") : fmt::format("/proc/{}/status", pid));
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::stod(line.substr(field.size() + 1)) / 1024.0;  // in kB
  }
  return -1;
}

Result<std::unique_ptr<sql::Session>> OpenSession(const std::string& warehouse_dir) {
  sql::SessionOptions options;
  options.warehouse_dir = warehouse_dir;
  return sql::Session::Open(options);
}

Result<std::unique_ptr<sql::Session>> OpenStreamSession(const std::string& warehouse_dir) {
  return sql::Session::Open({.warehouse_dir = warehouse_dir, .threads = stream::StreamSessionThreads()});
}

Result<engine::QueryResult> QueryBasin(sql::Session& session, const std::string& sql) {
  ASSIGN_OR_RETURN(auto results, session.Execute(sql));
  if (results.empty()) return Status::InvalidArgument("no statement in: " + sql);
  return std::move(results.back().result);
}

Status ExpectSameRows(const engine::QueryResult& basin, const engine::QueryResult& peer,
                      const std::string& what) {
  if (basin.row_count() != peer.row_count()) {
    return Status::InvalidArgument(what + ": Basin returned " + std::to_string(basin.row_count()) +
                                   " rows, the peer " + std::to_string(peer.row_count()));
  }
  for (size_t r = 0; r < basin.row_count(); r++) {
    if (basin.rows[r] != peer.rows[r]) {
      return Status::InvalidArgument(what + ": results differ at row " + std::to_string(r));
    }
  }
  return Status::OK();
}

void Progress(const std::string& name, const std::string& text) {
  static const auto start = std::chrono::steady_clock::now();
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("[%s +%.1fs] %s\n", name.c_str(), elapsed, text.c_str());
  std::fflush(stdout);
}

void PrintSummary(const std::string& name, const std::string& text) {
  std::printf("summary %s: %s\n", name.c_str(), text.c_str());
  std::fflush(stdout);
}

Result<StartedProgram> StartProgram(const std::vector<std::string>& argv, const std::string& what) {
  std::vector<char*> args;  // built before the fork: the child makes only async-signal-safe calls
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    return Status::IOError("a pipe for " + what + ": " + std::strerror(errno));
  }
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(pipe_fds[1], STDOUT_FILENO);
    ::execv(args[0], args.data());
    std::_Exit(127);
  }
  ::close(pipe_fds[1]);
  if (pid < 0) {
    ::close(pipe_fds[0]);
    return Status::IOError("forking " + what + ": " + std::strerror(errno));
  }
  return StartedProgram{pid, pipe_fds[0]};
}

Result<int64_t> RunProgram(const std::vector<std::string>& argv,
                           const std::function<void(std::string_view)>& on_output, const std::string& what) {
  ASSIGN_OR_RETURN(const StartedProgram started, StartProgram(argv, what));
  std::vector<char> buffer(1 << 16);
  ssize_t n;
  while ((n = ::read(started.stdout_fd, buffer.data(), buffer.size())) > 0) {
    on_output(std::string_view(buffer.data(), static_cast<size_t>(n)));
  }
  ::close(started.stdout_fd);
  int status = 0;
  struct rusage usage {};
  ::wait4(started.pid, &status, 0, &usage);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return Status::Internal(what + " failed (see its error above)");
  }
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;
}

int RunBenchmark(const std::string& name, const std::function<Status()>& body) {
  TuneMalloc();  // as the basin program does
  Status status = body();
  if (!status.ok()) {
    std::fprintf(stderr, "%s failed: %s\n", name.c_str(), status.ToString().c_str());
    PrintSummary(name, "FAILED: " + status.ToString());
    return 1;
  }
  return 0;
}

}  // namespace basin::bench
