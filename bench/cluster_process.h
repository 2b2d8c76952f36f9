// The dev cluster run as `basin kafka-dev` (docs/kafka.md), a process of its own, as a real
// Kafka cluster lives outside the stream's process: librdkafka's mock cluster keeps about
// 5 MB of each partition, about 90 MiB for the live-stream benchmarks' 12 partitions, which
// inside the benchmark's process hid most of what the stream itself holds.
//
// Thread safety: not thread-safe.
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
  // Starts `basin kafka-dev` with `topics` and waits for the bootstrap servers it prints
  // first; its other output goes to this process's stderr.
  static Result<std::unique_ptr<ClusterProcess>> Start(const std::vector<KafkaDevTopic>& topics);

  ~ClusterProcess();  // stops the cluster (SIGTERM) and waits for it
  ClusterProcess(const ClusterProcess&) = delete;
  ClusterProcess& operator=(const ClusterProcess&) = delete;

  const std::string& bootstrap_servers() const { return bootstrap_servers_; }

  // The cluster's resident set, in MiB (-1 when it cannot be read).
  double ResidentMiB() const;

 private:
  ClusterProcess(pid_t pid, std::string bootstrap_servers)
      : pid_(pid), bootstrap_servers_(std::move(bootstrap_servers)) {}

  pid_t pid_;
  std::string bootstrap_servers_;
};

}  // namespace basin::bench
