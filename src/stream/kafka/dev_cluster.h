// KafkaDevCluster: a Kafka cluster inside this process, for the demo and tests: librdkafka's
// mock cluster (rdkafka_mock.h), whose brokers speak the Kafka protocol on loopback, so any
// client (Basin's reader, kcat, a Java consumer) can use its bootstrap address. Records live
// in memory until the cluster stops; nothing is ever deleted by retention.
//
// What librdkafka 2.0.2's mock allows, and so what this class offers:
// - brokers listen on 127.0.0.1 on ports the kernel picks (the mock has no way to choose one);
// - topics can be created while the cluster runs (CreateTopic), and a client producing to an
//   unknown topic creates it with 4 partitions (the mock's default), as a broker with
//   auto.create.topics.enable would;
// - a topic's partition count cannot grow: the mock implements neither the CreatePartitions
//   request nor an API for it. New partitions show up only as new topics.
//
// Thread safety: every method may be called from any thread; Stop() may race with the others.
#pragma once

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>  // after rdkafka.h, as it requires

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "basin/status.h"
#include "stream/kafka/client.h"

namespace basin::stream::kafka {

struct DevTopic {
  std::string name;
  int partitions = 1;
};

class KafkaDevCluster {
 public:
  // Starts `brokers` brokers (each partition led by one of them) and creates `topics`.
  // InvalidArgument for a bad topic name, partition count or broker count; Internal when
  // librdkafka cannot start the cluster (no loopback socket).
  static Result<std::unique_ptr<KafkaDevCluster>> Start(const std::vector<DevTopic>& topics, int brokers = 1);

  KafkaDevCluster(const KafkaDevCluster&) = delete;
  KafkaDevCluster& operator=(const KafkaDevCluster&) = delete;
  ~KafkaDevCluster();  // Stop()

  // "127.0.0.1:<port>[,127.0.0.1:<port>...]", for bootstrap.servers. Valid after Stop() too.
  const std::string& bootstrap_servers() const { return bootstrap_servers_; }

  // Creates a topic. AlreadyExists when it exists (its partition count cannot change);
  // InvalidArgument for a bad name or count; Cancelled after Stop().
  Status CreateTopic(const DevTopic& topic);

  // Closes the brokers' sockets (connected clients see the cluster go away) and frees the
  // records. Idempotent.
  void Stop();

 private:
  KafkaDevCluster() = default;

  std::string bootstrap_servers_;
  std::mutex mu_;
  rd_kafka_mock_cluster_t* cluster_ = nullptr;  // guarded by mu_; null once stopped
  HandlePtr handle_;                            // guarded by mu_; the client the mock keeps its books in
};

}  // namespace basin::stream::kafka
