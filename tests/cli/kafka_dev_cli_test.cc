// `basin kafka-dev` run as a user runs it: the first line of stdout is the bootstrap address,
// the produced events are in the cluster, and SIGTERM or SIGINT stops it with status 0.
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <sstream>

#include "basin/kafka_dev.h"
#include "cli/basin_process.h"
#include "stream/kafka/reader.h"
#include "testing/child_process.h"
#include "testing/test_util.h"

namespace basin {
namespace {

using stream::kafka::KafkaReader;
using stream::kafka::ParseKafkaOptions;
using stream::kafka::TopicPartition;

class KafkaDevCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(BasinBinary())) GTEST_SKIP() << "no basin binary at " << BasinBinary();
  }
};

TEST_F(KafkaDevCliTest, PrintsTheBootstrapAddressProducesAndStopsOnSigterm) {
  BasinChild process({"kafka-dev", "--topics", "payments:2,clicks:1", "--produce", "payments", "--count",
                      "50", "--malformed", "0.2", "--duplicates", "0.1", "--seed", "9"});
  const std::string bootstrap = process.FirstLine(10'000);
  ASSERT_TRUE(bootstrap.starts_with("127.0.0.1:")) << "stdout: '" << bootstrap << "'\n"
                                                   << process.stderr_text();

  ASSERT_OK_AND_ASSIGN(
      auto options, ParseKafkaOptions({{"bootstrapServers", bootstrap}, {"subscribe", "payments,clicks"}}));
  ASSERT_OK_AND_ASSIGN(auto reader, KafkaReader::Open(options));
  ASSERT_OK_AND_ASSIGN(auto partitions, reader->ListPartitions(options.subscription));
  EXPECT_EQ(partitions, (std::vector<TopicPartition>{{"clicks", 0}, {"payments", 0}, {"payments", 1}}));
  // The feed runs beside the cluster: wait (bounded) until all 50 events are there.
  int64_t total = 0;
  for (int attempt = 0; attempt < 100 && total < 50; attempt++) {
    ASSERT_OK_AND_ASSIGN(auto marks, reader->QueryWatermarks(partitions));
    total = 0;
    for (const auto& [tp, m] : marks) total += m.high - m.low;
    if (total < 50) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(total, 50);
  reader.reset();

  EXPECT_EQ(process.StopWith(SIGTERM), 0) << process.stderr_text();
  const std::string err = process.stderr_text();
  EXPECT_NE(err.find("produced 50 events to payments ("), std::string::npos) << err;
  EXPECT_NE(err.find("terminated, stopping"), std::string::npos) << err;
}

TEST_F(KafkaDevCliTest, StopsOnSigintWhileProducing) {
  // 100 events a second for a million events: still producing when interrupted.
  BasinChild process({"kafka-dev", "--produce", "payments", "--count", "1000000", "--rate", "100"});
  ASSERT_TRUE(process.FirstLine(10'000).starts_with("127.0.0.1:")) << process.stderr_text();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(process.StopWith(SIGINT), 0) << process.stderr_text();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  const std::string err = process.stderr_text();
  EXPECT_NE(err.find("interrupted, stopping"), std::string::npos) << err;
  // What the stopped feed had sent is said too.
  EXPECT_NE(err.find("the event feed to payments was stopped after "), std::string::npos) << err;
}

TEST_F(KafkaDevCliTest, BadArgumentsAreErrors) {
  // Refused before the cluster starts: no address is printed.
  BasinChild bad_topics({"kafka-dev", "--topics", "payments:many"});
  EXPECT_EQ(bad_topics.FirstLine(10'000), "");
  EXPECT_EQ(bad_topics.Wait(), 1);
  EXPECT_NE(bad_topics.stderr_text().find("Error: InvalidArgument: --topics: 'payments:many'"),
            std::string::npos)
      << bad_topics.stderr_text();

  BasinChild bad_fraction({"kafka-dev", "--produce", "payments", "--malformed", "2"});
  EXPECT_EQ(bad_fraction.FirstLine(10'000), "");
  EXPECT_EQ(bad_fraction.Wait(), 1);
  EXPECT_NE(bad_fraction.stderr_text().find("Error: InvalidArgument: malformed fraction 2"),
            std::string::npos)
      << bad_fraction.stderr_text();

  BasinChild bad_partitions({"kafka-dev", "--topics", "payments:0"});
  EXPECT_EQ(bad_partitions.FirstLine(10'000), "");
  EXPECT_EQ(bad_partitions.Wait(), 1);
  EXPECT_NE(bad_partitions.stderr_text().find("cannot have 0 partitions"), std::string::npos)
      << bad_partitions.stderr_text();
}

}  // namespace
}  // namespace basin
