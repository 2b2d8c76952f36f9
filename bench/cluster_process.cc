#include "cluster_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "bench_util.h"

namespace basin::bench {

Result<std::unique_ptr<ClusterProcess>> ClusterProcess::Start(const std::vector<KafkaDevTopic>& topics) {
  std::string spec;
  for (const KafkaDevTopic& topic : topics) {
    spec += (spec.empty() ? "" : ",") + topic.name + ":" + std::to_string(topic.partitions);
  }
  std::vector<std::string> argv = {BASIN_CLI, "kafka-dev", "--topics", spec};
  std::vector<char*> args;
  for (std::string& arg : argv) args.push_back(arg.data());
  args.push_back(nullptr);
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) {
    return Status::IOError(std::string("a pipe for basin kafka-dev: ") + std::strerror(errno));
  }
  const pid_t pid = fork();
  if (pid == 0) {  // only async-signal-safe calls from here
    dup2(out[1], STDOUT_FILENO);
    execv(args[0], args.data());
    _exit(127);
  }
  close(out[1]);
  if (pid < 0) {
    close(out[0]);
    return Status::IOError(std::string("forking basin kafka-dev: ") + std::strerror(errno));
  }
  // Its first line, flushed as soon as the cluster listens (scripts wait for it too).
  std::string line;
  char c;
  for (;;) {
    const ssize_t n = read(out[0], &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || c == '\n') break;
    line += c;
  }
  close(out[0]);  // its later output, if any, goes nowhere
  auto process = std::unique_ptr<ClusterProcess>(new ClusterProcess(pid, line));
  if (line.empty())
    return Status::Internal(std::string(BASIN_CLI) + " kafka-dev printed no bootstrap servers");
  return process;
}

ClusterProcess::~ClusterProcess() {
  kill(pid_, SIGTERM);
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
}

double ClusterProcess::ResidentMiB() const { return ProcessMemoryMiB("VmRSS", pid_); }

}  // namespace basin::bench
