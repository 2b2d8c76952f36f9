#include "cluster_process.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "bench_util.h"

namespace basin::bench {

Result<std::unique_ptr<ClusterProcess>> ClusterProcess::Start(const std::vector<KafkaDevTopic>& topics) {
  std::string spec;
  for (const KafkaDevTopic& topic : topics) {
    spec += (spec.empty() ? "" : ",") + topic.name + ":" + std::to_string(topic.partitions);
  }
  ASSIGN_OR_RETURN(const StartedProgram started,
                   StartProgram({BASIN_CLI, "kafka-dev", "--topics", spec}, "basin kafka-dev"));
  // Its first line, flushed as soon as the cluster listens (scripts wait for it too).
  std::string line;
  char c;
  for (;;) {
    const ssize_t n = read(started.stdout_fd, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || c == '\n') break;
    line += c;
  }
  close(started.stdout_fd);  // it writes nothing more there (its messages go to stderr)
  auto process = std::unique_ptr<ClusterProcess>(new ClusterProcess(started.pid, line));
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
