// The dev cluster (basin/kafka_dev.h) in a child process of its own, as a real Kafka cluster
// lives outside the stream's process: librdkafka's mock cluster keeps about 5 MB of each
// partition, about 90 MiB for the live-stream benchmarks' 12 partitions, which inside the
// benchmark's process hid most of what the stream itself holds.
//
// Thread safety: not thread-safe. Start() forks: call it before the process starts threads
// of its own (a DuckDB session, a Kafka client), as the child then runs only the cluster.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "basin/kafka_dev.h"
#include "basin/status.h"

namespace basin::bench {

class ClusterProcess {
 public:
  // Forks a child that starts a cluster with `topics` and runs it until this object is
  // destroyed (or this process ends).
  static Result<std::unique_ptr<ClusterProcess>> Start(const std::vector<KafkaDevTopic>& topics);

  ~ClusterProcess();  // stops the child and waits for it
  ClusterProcess(const ClusterProcess&) = delete;
  ClusterProcess& operator=(const ClusterProcess&) = delete;

  const std::string& bootstrap_servers() const { return bootstrap_servers_; }

  // The child's resident set, in MiB (-1 when it cannot be read).
  double ResidentMiB() const;

 private:
  ClusterProcess(pid_t pid, int keep_alive, std::string bootstrap_servers)
      : pid_(pid), keep_alive_(keep_alive), bootstrap_servers_(std::move(bootstrap_servers)) {}

  pid_t pid_;
  int keep_alive_;  // the write end of a pipe the child reads until it closes
  std::string bootstrap_servers_;
};

}  // namespace basin::bench
