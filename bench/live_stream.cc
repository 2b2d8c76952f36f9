#include "live_stream.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "bench_util.h"
#include "cluster_process.h"
#include "common/cancellation.h"
#include "stream/kafka/feed.h"
#include "stream/kafka/generator.h"
#include "stream/kafka/producer.h"
#include "stream/kafka/read_kafka.h"
#include "stream/runner.h"

namespace basin::bench {

struct LiveStream::Impl {
  std::unique_ptr<sql::Session> session;
  std::unique_ptr<ClusterProcess> cluster;
  std::unique_ptr<stream::kafka::KafkaProducer> producer;
  std::optional<stream::kafka::PaymentEventGenerator> generator;
  std::unique_ptr<stream::StreamRunner> runner;
  CancellationToken stop_stream;
  CancellationToken stop_feed;
  std::atomic<int64_t> batches{0};
  std::vector<int64_t> batch_ms;  // each committed batch's duration; the stream thread's
  Status streamed;
  Status fed;
  double feed_seconds = 0;
  std::thread stream;
  std::thread feed;

  void Join() {
    if (feed.joinable()) feed.join();
    stop_stream.Cancel();
    if (stream.joinable()) stream.join();
  }
};

LiveStream::LiveStream(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

LiveStream::~LiveStream() {
  impl_->stop_feed.Cancel();
  impl_->Join();
}

Result<std::unique_ptr<LiveStream>> LiveStream::Start(const std::string& warehouse,
                                                      const std::string& checkpoint, int64_t events,
                                                      double events_per_second) {
  auto impl = std::make_unique<Impl>();
  ASSIGN_OR_RETURN(impl->session, OpenStreamSession(warehouse));
  RETURN_IF_ERROR(stream::kafka::RegisterReadKafka(impl->session->connection().raw()));
  RETURN_IF_ERROR(impl->session->Execute("CREATE TABLE bronze (id BIGINT NOT NULL, ts TIMESTAMP)").status());
  ASSIGN_OR_RETURN(impl->cluster, ClusterProcess::Start({{"payments", kPartitions}}));
  ASSIGN_OR_RETURN(impl->producer,
                   stream::kafka::KafkaProducer::Open(impl->cluster->bootstrap_servers(),
                                                      stream::kafka::FeedProducerProperties()));
  ASSIGN_OR_RETURN(auto generator, stream::kafka::PaymentEventGenerator::Make({}, SystemClock()));
  impl->generator.emplace(std::move(generator));
  ASSIGN_OR_RETURN(auto store, OpenStoreAt(checkpoint));
  ASSIGN_OR_RETURN(
      impl->runner,
      stream::StreamRunner::Open(
          *impl->session, store,
          "INSERT INTO bronze SELECT id, ts FROM STREAM read_kafka(bootstrapServers => '" +
              impl->cluster->bootstrap_servers() +
              "', subscribe => 'payments', startingOffsets => 'earliest', valueFormat => 'json', "
              "schema => 'id BIGINT NOT NULL, ts TIMESTAMP')",
          SystemClock()));
  Impl* s = impl.get();
  s->stream = std::thread([s] {
    stream::RunOptions options;  // the default trigger: continuous, a batch a second at most
    options.cancellation = &s->stop_stream;
    options.on_batch = [s](const std::optional<stream::BatchCommit>& commit) {
      if (!commit) return;
      s->batches++;
      s->batch_ms.push_back(commit->duration_ms);
    };
    s->streamed = s->runner->Run(options);
  });
  s->feed = std::thread([s, events, events_per_second] {
    const auto start = std::chrono::steady_clock::now();
    stream::kafka::FeedOptions options;
    options.topic = "payments";
    options.count = events;
    options.events_per_second = events_per_second;
    s->fed = stream::kafka::RunPaymentFeed(*s->producer, *s->generator, options, s->stop_feed).status();
    s->feed_seconds = SecondsSince(start);
  });
  return std::unique_ptr<LiveStream>(new LiveStream(std::move(impl)));
}

Status LiveStream::Finish() {
  impl_->Join();
  RETURN_IF_ERROR(impl_->fed);
  return impl_->streamed;
}

int64_t LiveStream::batches() const { return impl_->batches; }
double LiveStream::feed_seconds() const { return impl_->feed_seconds; }
double LiveStream::ClusterResidentMiB() const { return impl_->cluster->ResidentMiB(); }

std::string LiveStream::BatchDurations() const {
  std::vector<int64_t> sorted = impl_->batch_ms;
  if (sorted.empty()) return "no batch committed";
  std::sort(sorted.begin(), sorted.end());
  return fmt::format("batches took p50 {} ms, p99 {} ms, worst {} ms", Quantile(sorted, 0.5),
                     Quantile(sorted, 0.99), sorted.back());
}

}  // namespace basin::bench
