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

namespace {

// The public options in the stream layer's terms: one mapping for checking and for running.
std::pair<kafka::PaymentEventOptions, kafka::FeedOptions> InternalOptions(const PaymentFeedOptions& options) {
  kafka::PaymentEventOptions events;
  events.malformed_fraction = options.malformed_fraction;
  events.duplicate_fraction = options.duplicate_fraction;
  events.late_fraction = options.late_fraction;
  events.seed = options.seed;
  kafka::FeedOptions feed;
  feed.topic = options.topic;
  feed.count = options.count;
  feed.events_per_second = options.events_per_second;
  return {events, feed};
}

}  // namespace

Status CheckPaymentFeedOptions(const PaymentFeedOptions& options) {
  const auto [events, feed] = InternalOptions(options);
  RETURN_IF_ERROR(kafka::CheckFeedOptions(feed));
  return kafka::CheckPaymentEventOptions(events);
}

Result<std::unique_ptr<PaymentFeed>> PaymentFeed::Open(const std::string& bootstrap_servers,
                                                       const PaymentFeedOptions& options) {
  RETURN_IF_ERROR(CheckPaymentFeedOptions(options));
  auto [events, feed] = InternalOptions(options);
  ASSIGN_OR_RETURN(kafka::PaymentEventGenerator generator,
                   kafka::PaymentEventGenerator::Make(events, SystemClock()));
  ASSIGN_OR_RETURN(auto producer,
                   kafka::KafkaProducer::Open(bootstrap_servers, kafka::FeedProducerProperties()));
  return std::unique_ptr<PaymentFeed>(new PaymentFeed(
      std::unique_ptr<Impl>(new Impl{std::move(producer), std::move(generator), std::move(feed), {}})));
}

Result<PaymentFeedReport> PaymentFeed::Run() {
  ASSIGN_OR_RETURN(const kafka::FeedReport report,
                   kafka::RunPaymentFeed(*impl_->producer, impl_->generator, impl_->options, impl_->stop));
  return PaymentFeedReport{report.produced, report.malformed, report.duplicates, report.late};
}

void PaymentFeed::Stop() { impl_->stop.Cancel(); }

}  // namespace basin
