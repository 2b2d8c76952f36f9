// `basin kafka-dev`: a Kafka cluster on loopback for the demo and for trying streams, with an
// optional feed of payment events (basin/kafka_dev.h, docs/kafka.md).
//
// SIGINT and SIGTERM are blocked before any thread starts, so every thread (librdkafka's
// included) inherits the mask and the signals wait for the main thread's sigtimedwait(): no
// handler runs, and shutdown happens in ordinary code.
#include <fmt/format.h>
#include <signal.h>

#include <algorithm>
#include <charconv>
#include <iostream>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>

#include "basin/kafka_dev.h"
#include "cli/command_support.h"
#include "cli/commands.h"
#include "cli/output_format.h"

namespace basin::cli {

namespace {

constexpr int kDefaultPartitions = 4;

// "payments:4,clicks" -> {payments, 4}, {clicks, 4}.
Result<std::vector<KafkaDevTopic>> ParseTopics(const std::string& spec) {
  std::vector<KafkaDevTopic> topics;
  std::string_view rest = spec;
  // Each pass removes one comma-separated entry.
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    const std::string_view entry = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    const size_t colon = entry.find(':');
    KafkaDevTopic topic{std::string(entry.substr(0, colon)), kDefaultPartitions};
    if (colon != std::string_view::npos) {
      const std::string_view count = entry.substr(colon + 1);
      auto [end, error] = std::from_chars(count.data(), count.data() + count.size(), topic.partitions);
      if (error != std::errc() || end != count.data() + count.size()) {
        return Status::InvalidArgument(fmt::format("--topics: '{}' is not name[:partitions]", entry));
      }
    }
    topics.push_back(std::move(topic));
  }
  return topics;
}

std::string Describe(const std::vector<KafkaDevTopic>& topics) {
  std::vector<std::string> parts;
  for (const KafkaDevTopic& topic : topics)
    parts.push_back(fmt::format("{} ({})", topic.name, topic.partitions));
  return parts.empty() ? "no topics" : fmt::format("topics {}", fmt::join(parts, ", "));
}

// The feed running beside the main thread, and what it ended with.
class FeedThread {
 public:
  explicit FeedThread(std::unique_ptr<PaymentFeed> feed)
      : feed_(std::move(feed)), thread_([this] {
          Result<PaymentFeedReport> result = feed_->Run();
          std::lock_guard<std::mutex> lock(mu_);
          result_ = std::move(result);
        }) {}
  ~FeedThread() { Finish(); }
  FeedThread(const FeedThread&) = delete;
  FeedThread& operator=(const FeedThread&) = delete;

  // Stops the feed if it is still sending and waits for it to end.
  void Finish() {
    feed_->Stop();
    if (thread_.joinable()) thread_.join();
  }

  // The feed's result once it has ended, taken once.
  std::optional<Result<PaymentFeedReport>> TakeResult() {
    std::lock_guard<std::mutex> lock(mu_);
    std::optional<Result<PaymentFeedReport>> result = std::move(result_);
    result_.reset();
    return result;
  }

 private:
  std::unique_ptr<PaymentFeed> feed_;
  std::mutex mu_;
  std::optional<Result<PaymentFeedReport>> result_;  // guarded by mu_
  std::thread thread_;                               // last: it uses the members above
};

}  // namespace

int RunKafkaDevCommand(const KafkaDevCommandOptions& options) {
  Result<std::vector<KafkaDevTopic>> topics = ParseTopics(options.topics);
  if (!topics.ok()) return ExitStatus(topics.status());
  const bool produce = !options.produce_topic.empty();
  if (produce && std::none_of(topics->begin(), topics->end(),
                              [&](const KafkaDevTopic& t) { return t.name == options.produce_topic; })) {
    topics->push_back({options.produce_topic, kDefaultPartitions});
  }

  PaymentFeedOptions feed_options;
  if (produce) {
    feed_options.topic = options.produce_topic;
    feed_options.count = options.count;
    feed_options.events_per_second = options.events_per_second;
    feed_options.malformed_fraction = options.malformed_fraction;
    feed_options.duplicate_fraction = options.duplicate_fraction;
    feed_options.late_fraction = options.late_fraction;
    feed_options.seed = options.seed;
    // Checked before the cluster starts, so that a typo prints no address.
    if (Status status = CheckPaymentFeedOptions(feed_options); !status.ok()) return ExitStatus(status);
  }

  const StopSignals stop_signals;

  Result<std::unique_ptr<KafkaDevCluster>> cluster = KafkaDevCluster::Start(*topics, options.brokers);
  if (!cluster.ok()) return ExitStatus(cluster.status());
  std::cout << (*cluster)->bootstrap_servers() << std::endl;  // the first line, flushed: scripts wait for it
  std::cerr << fmt::format("kafka-dev: {} broker(s) on {}, {}; Ctrl-C stops it\n", options.brokers,
                           (*cluster)->bootstrap_servers(), Describe(*topics));

  std::unique_ptr<FeedThread> feed;
  if (produce) {
    Result<std::unique_ptr<PaymentFeed>> opened =
        PaymentFeed::Open((*cluster)->bootstrap_servers(), feed_options);
    if (!opened.ok()) return ExitStatus(opened.status());
    feed = std::make_unique<FeedThread>(std::move(opened).value());
  }

  // Each wait lasts at most 100 ms; the loop ends at a stop signal or a failed feed. A feed that
  // ends as the signal arrives is still reported, so what it produced is always said.
  std::optional<int> signal;
  while (!signal) {
    signal = stop_signals.Wait(std::chrono::milliseconds(100));
    if (signal) {
      std::cerr << fmt::format("kafka-dev: {}, stopping\n", *signal == SIGINT ? "interrupted" : "terminated");
    }
    if (!feed) continue;
    if (signal) feed->Finish();
    if (std::optional<Result<PaymentFeedReport>> result = feed->TakeResult()) {
      feed.reset();
      if (result->status().code() == ErrorCode::kCancelled) {
        std::cerr << "kafka-dev: " << result->status().message() << "\n";
      } else if (!result->ok()) {
        return ExitStatus(result->status());
      } else {
        const PaymentFeedReport& report = result->value();
        std::cerr << fmt::format(
            "kafka-dev: produced {} events to {} ({} malformed, {} duplicates, {} late)\n", report.produced,
            options.produce_topic, report.malformed, report.duplicates, report.late);
      }
    }
  }
  (*cluster)->Stop();
  return 0;
}

}  // namespace basin::cli
