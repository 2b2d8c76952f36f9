// The built `basin` binary run as a user runs it, for the CLI tests: found as $BASIN_BINARY,
// else <build dir>/basin from the test's own path (<build dir>/tests/cli/<test>).
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "testing/child_process.h"
#include "testing/test_util.h"

namespace basin {

inline std::string BasinBinary() {
  if (const char* env = std::getenv("BASIN_BINARY"); env != nullptr && *env != '\0') return env;
  return (std::filesystem::read_symlink("/proc/self/exe").parent_path().parent_path().parent_path() / "basin")
      .string();
}

inline std::string ReadWholeFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

inline void WriteWholeFile(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

struct RunOutput {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs basin with `args`, feeding `input` on stdin (a file, so stdin is not a terminal).
inline RunOutput RunBasin(const std::vector<std::string>& args, const std::string& input = "") {
  testing::TempDir io;
  WriteWholeFile(io.path() / "stdin", input);
  std::vector<std::string> argv_storage = {BasinBinary()};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& arg : argv_storage) argv.push_back(arg.data());
  argv.push_back(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    auto redirect = [](const std::filesystem::path& path, int flags, int target) {
      int fd = open(path.c_str(), flags, 0644);
      if (fd < 0 || dup2(fd, target) < 0) _exit(126);
      close(fd);
    };
    redirect(io.path() / "stdin", O_RDONLY, STDIN_FILENO);
    redirect(io.path() / "stdout", O_WRONLY | O_CREAT | O_TRUNC, STDOUT_FILENO);
    redirect(io.path() / "stderr", O_WRONLY | O_CREAT | O_TRUNC, STDERR_FILENO);
    execv(argv[0], argv.data());
    _exit(127);
  }
  RunOutput result;
  int status = 0;
  if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  result.out = ReadWholeFile(io.path() / "stdout");
  result.err = ReadWholeFile(io.path() / "stderr");
  return result;
}

// `basin ARGS` running as a child, for commands that run until a signal (kafka-dev, serve):
// stdout on a pipe, stderr in a file. Killed, when still running, on destruction.
class BasinChild {
 public:
  explicit BasinChild(const std::vector<std::string>& args) {
    std::vector<std::string> argv_storage = {BasinBinary()};
    argv_storage.insert(argv_storage.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& arg : argv_storage) argv.push_back(arg.data());
    argv.push_back(nullptr);
    int fds[2];
    if (pipe(fds) != 0) return;
    const std::string err_path = stderr_path();
    pid_ = fork();
    if (pid_ == 0) {
      dup2(fds[1], STDOUT_FILENO);
      int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (err < 0 || dup2(err, STDERR_FILENO) < 0) _exit(126);
      close(fds[0]);
      close(fds[1]);
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(fds[1]);
    stdout_fd_ = fds[0];
  }
  ~BasinChild() {
    if (pid_ > 0 && !reaped_) {
      kill(pid_, SIGKILL);
      testing::WaitChild(pid_);
    }
    if (stdout_fd_ >= 0) close(stdout_fd_);
  }

  // The first line of stdout, or "" when none arrives within `timeout_ms`.
  std::string FirstLine(int timeout_ms) {
    std::string line;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd fd{stdout_fd_, POLLIN, 0};
      if (poll(&fd, 1, 100) <= 0) continue;
      char c = 0;
      if (read(stdout_fd_, &c, 1) != 1) break;  // closed: the process ended
      if (c == '\n') return line;
      line.push_back(c);
    }
    return "";
  }

  // Waits (at most 10 s, then kills it) for the exit code.
  int Wait() {
    reaped_ = true;
    return testing::WaitChildFor(pid_, 10'000);
  }
  int StopWith(int signal) {
    kill(pid_, signal);
    return Wait();
  }

  std::string stderr_text() const { return ReadWholeFile(stderr_path()); }

 private:
  std::string stderr_path() const { return dir_.str() + "/stderr"; }

  testing::TempDir dir_;
  pid_t pid_ = -1;
  int stdout_fd_ = -1;
  bool reaped_ = false;
};

// The seed of a crash test's random choices: $BASIN_CRASH_SEED when set (to replay a run),
// else a fresh one. Printed, so that a failing run can be replayed.
inline uint64_t CrashTestSeed() {
  uint64_t seed = std::random_device{}();
  if (const char* env = std::getenv("BASIN_CRASH_SEED"); env != nullptr && *env != '\0') {
    seed = std::strtoull(env, nullptr, 10);
  }
  std::printf("BASIN_CRASH_SEED=%llu\n", static_cast<unsigned long long>(seed));
  return seed;
}

// Starts basin with `args` (after the program) as a child for a test to kill, its stderr
// appended to $BASIN_CRASH_STDERR when set (to see why a killed run failed), else dropped.
// The child's pid; negative when it could not be started.
inline pid_t StartKillableBasin(const std::vector<std::string>& args) {
  std::vector<std::string> argv_storage = {BasinBinary()};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  return testing::ForkChild([&] {
    std::vector<char*> argv;
    for (std::string& arg : argv_storage) argv.push_back(arg.data());
    argv.push_back(nullptr);
    const char* err = std::getenv("BASIN_CRASH_STDERR");
    const int fd = open(err != nullptr ? err : "/dev/null", O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd < 0 || dup2(fd, STDERR_FILENO) < 0) return 126;
    execv(argv[0], argv.data());
    return 127;
  });
}

}  // namespace basin
