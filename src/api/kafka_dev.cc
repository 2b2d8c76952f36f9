#include "basin/kafka_dev.h"

#include "common/cancellation.h"
#include "stream/kafka/dev_cluster.h"
#include "stream/kafka/feed.h"

namespace basin {

namespace kafka = stream::kafka;

struct KafkaDevCluster::Impl {
  std::unique_ptr<kafka::KafkaDevCluster> cluster;
};

KafkaDevCluster::KafkaDevCluster(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
KafkaDevCluster::~KafkaDevCluster() = default;

Result<std::unique_ptr<KafkaDevCluster>> KafkaDevCluster::Start(const std::vector<KafkaDevTopic>& topics,
                                                                int brokers) {
  std::vector<kafka::DevTopic> dev_topics;
  dev_topics.reserve(topics.size());
  for (const KafkaDevTopic& topic : topics) dev_topics.push_back({topic.name, topic.partitions});
  ASSIGN_OR_RETURN(auto cluster, kafka::KafkaDevCluster::Start(dev_topics, brokers));
  return std::unique_ptr<KafkaDevCluster>(
      new KafkaDevCluster(std::make_unique<Impl>(Impl{std::move(cluster)})));
}

const std::string& KafkaDevCluster::bootstrap_servers() const { return impl_->cluster->bootstrap_servers(); }

Status KafkaDevCluster::CreateTopic(const KafkaDevTopic& topic) {
  return impl_->cluster->CreateTopic({topic.name, topic.partitions});
}

void KafkaDevCluster::Stop() { impl_->cluster->Stop(); }

struct PaymentFeed::Impl {
  std::unique_ptr<kafka::KafkaProducer> producer;
  kafka::PaymentEventGenerator generator;
  kafka::FeedOptions options;
  CancellationToken stop;
};

PaymentFeed::PaymentFeed(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PaymentFeed::~PaymentFeed() = default;

Result<std::unique_ptr<PaymentFeed>> PaymentFeed::Open(const std::string& bootstrap_servers,
                                                       const PaymentFeedOptions& options) {
  kafka::PaymentEventOptions event_options;
  event_options.malformed_fraction = options.malformed_fraction;
  event_options.duplicate_fraction = options.duplicate_fraction;
  event_options.late_fraction = options.late_fraction;
  event_options.seed = options.seed;
  kafka::FeedOptions feed_options;
  feed_options.topic = options.topic;
  feed_options.count = options.count;
  feed_options.events_per_second = options.events_per_second;
  RETURN_IF_ERROR(kafka::CheckFeedOptions(feed_options));
  ASSIGN_OR_RETURN(kafka::PaymentEventGenerator generator,
                   kafka::PaymentEventGenerator::Make(event_options, SystemClock()));
  ASSIGN_OR_RETURN(auto producer, kafka::KafkaProducer::Open(bootstrap_servers));
  return std::unique_ptr<PaymentFeed>(new PaymentFeed(std::unique_ptr<Impl>(
      new Impl{std::move(producer), std::move(generator), std::move(feed_options), {}})));
}

Result<PaymentFeedReport> PaymentFeed::Run() {
  ASSIGN_OR_RETURN(const kafka::FeedReport report,
                   kafka::RunPaymentFeed(*impl_->producer, impl_->generator, impl_->options, impl_->stop));
  return PaymentFeedReport{report.produced, report.malformed, report.duplicates, report.late};
}

void PaymentFeed::Stop() { impl_->stop.Cancel(); }

}  // namespace basin
