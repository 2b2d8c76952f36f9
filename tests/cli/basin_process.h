// The built `basin` binary run as a user runs it, for the CLI tests: found as $BASIN_BINARY,
// else <build dir>/basin from the test's own path (<build dir>/tests/cli/<test>).
#pragma once

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

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
