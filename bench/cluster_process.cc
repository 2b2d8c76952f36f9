#include "cluster_process.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "bench_util.h"

namespace basin::bench {
namespace {

// Writes all of `text` to `fd`; false on an error.
bool WriteAll(int fd, const std::string& text) {
  size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    written += static_cast<size_t>(n);
  }
  return true;
}

// The child: starts the cluster, sends its bootstrap servers (or "error: ...") on `report`,
// then runs it until `keep_alive` reaches its end (the parent closed it, or ended).
[[noreturn]] void RunChild(const std::vector<KafkaDevTopic>& topics, int report, int keep_alive) {
  Result<std::unique_ptr<KafkaDevCluster>> cluster = KafkaDevCluster::Start(topics);
  const std::string line =
      cluster.ok() ? (*cluster)->bootstrap_servers() + "\n" : "error: " + cluster.status().ToString() + "\n";
  const bool sent = WriteAll(report, line);
  close(report);
  if (cluster.ok() && sent) {
    char byte;
    for (;;) {
      const ssize_t n = read(keep_alive, &byte, 1);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
    }
  }
  if (cluster.ok()) (*cluster).reset();  // stops the cluster before the child exits
  _exit(0);
}

}  // namespace

Result<std::unique_ptr<ClusterProcess>> ClusterProcess::Start(const std::vector<KafkaDevTopic>& topics) {
  int report[2] = {-1, -1}, keep_alive[2] = {-1, -1};
  auto fail = [&](const std::string& what) {
    const Status status = Status::IOError(what + " for the dev cluster's process: " + std::strerror(errno));
    for (int fd : {report[0], report[1], keep_alive[0], keep_alive[1]}) {
      if (fd >= 0) close(fd);
    }
    return status;
  };
  if (pipe2(report, O_CLOEXEC) != 0 || pipe2(keep_alive, O_CLOEXEC) != 0) return fail("a pipe");
  const pid_t pid = fork();
  if (pid < 0) return fail("forking");
  if (pid == 0) {
    close(report[0]);
    close(keep_alive[1]);
    RunChild(topics, report[1], keep_alive[0]);
  }
  close(report[1]);
  close(keep_alive[0]);
  std::string line;
  char c;
  while (true) {
    const ssize_t n = read(report[0], &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || c == '\n') break;
    line += c;
  }
  close(report[0]);
  auto process = std::unique_ptr<ClusterProcess>(new ClusterProcess(pid, keep_alive[1], line));
  if (line.empty() || line.rfind("error: ", 0) == 0) {
    return Status::Internal("the dev cluster's process did not start: " +
                            (line.empty() ? std::string("it ended without a word") : line));
  }
  return process;
}

ClusterProcess::~ClusterProcess() {
  close(keep_alive_);
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
}

double ClusterProcess::ResidentMiB() const { return ProcessMemoryMiB("VmRSS", pid_); }

}  // namespace basin::bench
