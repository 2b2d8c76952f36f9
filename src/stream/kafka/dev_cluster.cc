#include "stream/kafka/dev_cluster.h"

#include "stream/kafka/types.h"

namespace basin::stream::kafka {

namespace {

// Kafka's own limit is far higher; this bounds the memory a typo can take.
constexpr int kMaxPartitions = 1024;
constexpr int kMaxBrokers = 16;

Status CheckTopic(const DevTopic& topic) {
  if (!IsValidTopicName(topic.name)) {
    return Status::InvalidArgument("'" + topic.name +
                                   "' is not a topic name (1 to 249 of the characters a-z A-Z 0-9 . _ -)");
  }
  if (topic.partitions < 1 || topic.partitions > kMaxPartitions) {
    return Status::InvalidArgument("topic '" + topic.name + "' cannot have " +
                                   std::to_string(topic.partitions) + " partitions (1 to " +
                                   std::to_string(kMaxPartitions) + ")");
  }
  return Status::OK();
}

}  // namespace

Result<std::unique_ptr<KafkaDevCluster>> KafkaDevCluster::Start(const std::vector<DevTopic>& topics,
                                                                int brokers) {
  if (brokers < 1 || brokers > kMaxBrokers) {
    return Status::InvalidArgument("a dev cluster has 1 to " + std::to_string(kMaxBrokers) +
                                   " brokers, not " + std::to_string(brokers));
  }
  for (const DevTopic& topic : topics) RETURN_IF_ERROR(CheckTopic(topic));

  // The mock needs a client handle for its bookkeeping; the handle itself never connects, so
  // its notice that it has no bootstrap.servers (log level 5) is noise. Its brokers' sockets
  // take their options from it: with Nagle's algorithm on (librdkafka's default), a request
  // answered right after another waited now and then ~40 ms for a delayed ACK (a third of
  // stream_ingest_bench's runs lost that much planning their first batch, and as much in the
  // consumer's watermark query). Kafka's brokers set TCP_NODELAY too.
  ASSIGN_OR_RETURN(ConfPtr conf, NewConf({{"log_level", "4"}, {"socket.nagle.disable", "true"}}));
  std::unique_ptr<KafkaDevCluster> cluster(new KafkaDevCluster());
  ASSIGN_OR_RETURN(cluster->handle_, NewClient(RD_KAFKA_PRODUCER, std::move(conf)));
  cluster->cluster_ = rd_kafka_mock_cluster_new(cluster->handle_.get(), brokers);
  if (cluster->cluster_ == nullptr) {
    return Status::Internal("librdkafka could not start a mock Kafka cluster on 127.0.0.1");
  }
  cluster->bootstrap_servers_ = rd_kafka_mock_cluster_bootstraps(cluster->cluster_);
  for (const DevTopic& topic : topics) RETURN_IF_ERROR(cluster->CreateTopic(topic));
  return cluster;
}

KafkaDevCluster::~KafkaDevCluster() { Stop(); }

Status KafkaDevCluster::CreateTopic(const DevTopic& topic) {
  RETURN_IF_ERROR(CheckTopic(topic));
  std::lock_guard<std::mutex> lock(mu_);
  if (cluster_ == nullptr) return Status::Cancelled("the Kafka dev cluster is stopped");
  // The replication factor cannot exceed the broker count; one copy is all a dev cluster needs.
  const rd_kafka_resp_err_t err =
      rd_kafka_mock_topic_create(cluster_, topic.name.c_str(), topic.partitions, /*replication_factor=*/1);
  if (err == RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
    return Status::AlreadyExists("topic '" + topic.name + "' exists (the dev cluster cannot add partitions)");
  }
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) return KafkaStatus(err, "creating topic '" + topic.name + "'");
  return Status::OK();
}

void KafkaDevCluster::Stop() {
  std::lock_guard<std::mutex> lock(mu_);
  // The cluster first: it keeps its books in the handle.
  if (cluster_ != nullptr) rd_kafka_mock_cluster_destroy(cluster_);
  cluster_ = nullptr;
  handle_.reset();
}

}  // namespace basin::stream::kafka
