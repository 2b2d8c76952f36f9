// Child processes for multi-process tests: fork() for children that never touch DuckDB
// before forking, and re-running this test binary (posix_spawn, a fresh process) for
// children started by a parent that already has DuckDB open.
//
// Thread safety: functions; ForkChild only from a process with no other threads that hold
// locks the child needs (no DuckDB database open).
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

extern char** environ;  // NOLINT(readability-redundant-declaration): POSIX declares it nowhere

namespace basin::testing {

// Runs `body` in a forked child process, which exits with its return value; -1 when fork()
// fails. The caller must hold no DuckDB database open: only the forking thread lives on
// in the child, so locks held by DuckDB's threads would never be released there.
inline pid_t ForkChild(const std::function<int()>& body) {
  std::fflush(nullptr);  // or the child's exit would write the parent's buffered output again
  pid_t pid = fork();
  if (pid == 0) _exit(body());
  return pid;
}

// Waits for a child: its exit code, or minus the signal that ended it; -1000 when waitpid fails.
inline int WaitChild(pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1000;
  if (WIFSIGNALED(status)) return -WTERMSIG(status);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1000;
}

// As WaitChild, but a child still running after `timeout_ms` is killed (SIGKILL) and
// reaped, and the result is -SIGKILL: a hung child fails its test instead of hanging it.
inline int WaitChildFor(pid_t pid, int64_t timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) {
      if (WIFSIGNALED(status)) return -WTERMSIG(status);
      return WIFEXITED(status) ? WEXITSTATUS(status) : -1000;
    }
    if (done < 0) return -1000;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(pid, SIGKILL);
  return WaitChild(pid);
}

// Starts this test binary again, running only the test `test_name` (Suite.Name; a
// DISABLED_ test is run too, so a child-only test can hide from normal runs), with
// `extra_env` ("NAME=value") added to the environment and stdout and stderr written to
// `output_path`. The child is a new program image, so it may open DuckDB whatever the
// parent holds open. Returns the child's pid, or -1 when it cannot be started.
inline pid_t SpawnTestChild(const std::string& test_name, const std::vector<std::string>& extra_env,
                            const std::string& output_path) {
  std::vector<std::string> args = {"/proc/self/exe", "--gtest_filter=" + test_name,
                                   "--gtest_also_run_disabled_tests"};
  std::vector<std::string> env = extra_env;
  for (char** e = environ; *e != nullptr; e++) env.emplace_back(*e);
  auto pointers = [](std::vector<std::string>& strings) {
    std::vector<char*> out;
    for (std::string& s : strings) out.push_back(s.data());
    out.push_back(nullptr);
    return out;
  };
  std::vector<char*> argv = pointers(args);
  std::vector<char*> envp = pointers(env);

  posix_spawn_file_actions_t actions;
  if (posix_spawn_file_actions_init(&actions) != 0) return -1;
  int rc = posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, output_path.c_str(),
                                            O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (rc == 0) rc = posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = -1;
  std::fflush(nullptr);
  if (rc == 0) rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  return rc == 0 ? pid : -1;
}

}  // namespace basin::testing
