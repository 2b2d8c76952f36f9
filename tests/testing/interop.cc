#include "testing/interop.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

extern char** environ;

namespace basin::testing {

namespace {

namespace fs = std::filesystem;

// A checker run longer than this is hung, not slow (a million-row table takes seconds).
constexpr auto kCheckerTimeout = std::chrono::minutes(5);

const char* const kRequiredModules[] = {"hyparquet", "hyparquet-compressors", "@duckdb/node-api"};

std::string Getenv(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

}  // namespace

// Mirrors scripts/setup.sh: $BASIN_CACHE_DIR, else $XDG_CACHE_HOME/basin, else ~/.cache/basin.
fs::path NodeModulesDir() {
  if (std::string env = Getenv("BASIN_NODE_MODULES"); !env.empty()) return env;
#ifdef BASIN_NODE_MODULES_DEFAULT
  return BASIN_NODE_MODULES_DEFAULT;
#else
  fs::path cache;
  if (std::string dir = Getenv("BASIN_CACHE_DIR"); !dir.empty()) {
    cache = dir;
  } else if (std::string xdg = Getenv("XDG_CACHE_HOME"); !xdg.empty()) {
    cache = fs::path(xdg) / "basin";
  } else {
    cache = fs::path(Getenv("HOME")) / ".cache" / "basin";
  }
  return cache / "node" / "node_modules";
#endif
}

std::optional<fs::path> FindOnPath(const std::string& program) {
  std::string path = Getenv("PATH");
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    fs::path candidate = fs::path(path.substr(start, end - start)) / program;
    if (end > start && ::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return std::nullopt;
}

namespace {

fs::path CheckerScript() {
  return fs::path(BASIN_SOURCE_DIR_FOR_TESTS) / "tests" / "interop" / "check_table.mjs";
}

}  // namespace

Result<ProcessOutput> RunProcess(const std::vector<std::string>& argv,
                                 const std::vector<std::string>& extra_env) {
  std::array<int, 2> out_pipe{}, err_pipe{};
  if (::pipe2(out_pipe.data(), O_CLOEXEC) != 0) return Status::Internal("pipe failed");
  if (::pipe2(err_pipe.data(), O_CLOEXEC) != 0) {
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    return Status::Internal("pipe failed");
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], STDERR_FILENO);

  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<char*> env;
  for (char** e = environ; *e != nullptr; e++) env.push_back(*e);
  for (const std::string& e : extra_env) env.push_back(const_cast<char*>(e.c_str()));
  env.push_back(nullptr);

  pid_t pid = 0;
  int rc = ::posix_spawn(&pid, argv[0].c_str(), &actions, nullptr, args.data(), env.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  if (rc != 0) {
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    return Status::Internal("cannot start " + argv[0] + ": " + std::strerror(rc));
  }

  ProcessOutput result;
  std::array<pollfd, 2> fds{pollfd{out_pipe[0], POLLIN, 0}, pollfd{err_pipe[0], POLLIN, 0}};
  std::array<std::string*, 2> sinks{&result.out, &result.err};
  const auto deadline = std::chrono::steady_clock::now() + kCheckerTimeout;
  int open_pipes = 2;
  bool timed_out = false;
  while (open_pipes > 0) {
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      ::kill(pid, SIGKILL);
      break;
    }
    int ready = ::poll(fds.data(), fds.size(), static_cast<int>(left.count()));
    if (ready < 0 && errno != EINTR) break;
    for (size_t i = 0; i < fds.size(); i++) {
      if (fds[i].fd < 0 || (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      char buffer[8192];
      ssize_t n = ::read(fds[i].fd, buffer, sizeof(buffer));
      if (n > 0) {
        sinks[i]->append(buffer, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        open_pipes--;
      }
    }
  }
  for (pollfd& p : fds) {
    if (p.fd >= 0) ::close(p.fd);
  }
  int wait_status = 0;
  while (::waitpid(pid, &wait_status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out)
    return Status::Internal(argv[0] + ": killed after " + std::to_string(kCheckerTimeout.count()) +
                            " minutes");
  result.exit_code = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 128 + WTERMSIG(wait_status);
  return result;
}

namespace {

std::string Trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

}  // namespace

bool InCi() { return Getenv("CI") == "true"; }

std::optional<std::string> InteropUnavailableReason() {
  if (!FindOnPath("node")) return "node is not on PATH; run scripts/setup.sh";
  fs::path modules = NodeModulesDir();
  for (const char* name : kRequiredModules) {
    if (!fs::exists(modules / name / "package.json")) {
      return "npm package " + std::string(name) + " is missing from " + modules.string() +
             "; run scripts/setup.sh or set BASIN_NODE_MODULES";
    }
  }
  return std::nullopt;
}

Result<nlohmann::json> RunInteropChecker(const std::string& table_dir, const InteropOptions& options) {
  if (auto why = InteropUnavailableReason()) return Status::NotFound("interop checker: " + *why);
  std::vector<std::string> argv = {FindOnPath("node")->string(), CheckerScript().string(), table_dir};
  if (options.expected_live_rows) {
    argv.push_back("--expected-live-rows");
    argv.push_back(std::to_string(*options.expected_live_rows));
  }
  if (options.require_stats) argv.push_back("--require-stats");
  ASSIGN_OR_RETURN(ProcessOutput run, RunProcess(argv, {"BASIN_NODE_MODULES=" + NodeModulesDir().string()}));
  std::string report = Trimmed(run.err);
  if (run.exit_code == 1) {
    return Status::Corruption("interop check of " + table_dir + " failed:\n" + report);
  }
  if (run.exit_code != 0) {
    return Status::Internal("interop checker exited with status " + std::to_string(run.exit_code) + " on " +
                            table_dir + ": " + report);
  }
  auto summary = nlohmann::json::parse(Trimmed(run.out), nullptr, false);
  if (summary.is_discarded() || !summary.is_object()) {
    return Status::Internal("interop checker printed no JSON summary for " + table_dir + ": " + run.out);
  }
  return summary;
}

Status CheckInterop(const std::string& table_dir, std::optional<int64_t> expected_live_rows) {
  InteropOptions options;
  options.expected_live_rows = expected_live_rows;
  return RunInteropChecker(table_dir, options).status();
}

}  // namespace basin::testing
