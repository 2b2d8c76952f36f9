// What the Kafka tests share: a dev cluster with a reader and a producer on it, records
// copied out of the reader's callback, and a session with a sink for stream runners.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "stream/kafka/dev_cluster.h"
#include "stream/kafka/options.h"
#include "stream/kafka/producer.h"
#include "stream/kafka/read_kafka.h"
#include "stream/kafka/reader.h"
#include "stream/runner.h"
#include "testing/test_util.h"

namespace basin::stream::kafka::testing {

using ReadRecord = OwnedKafkaRecord;

// Options for a reader of `bootstrap` subscribed to `subscribe`, through the one parser.
inline KafkaOptions ReaderOptions(const std::string& bootstrap, const std::string& subscribe = "payments") {
  Result<KafkaOptions> options =
      ParseKafkaOptions({{"bootstrapServers", bootstrap}, {"subscribe", subscribe}});
  EXPECT_TRUE(options.ok()) << options.status().ToString();
  return options.ok() ? *options : KafkaOptions{};
}

// Short timeouts: a failing test fails in seconds, not minutes.
inline KafkaReaderOptions FastReaderOptions() {
  KafkaReaderOptions options;
  options.request_timeout_ms = 5'000;
  options.stall_timeout_ms = 5'000;
  options.poll_interval_ms = 20;
  return options;
}

class KafkaClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(cluster_, KafkaDevCluster::Start({{"payments", 3}}));
    ASSERT_OK_AND_ASSIGN(
        reader_, KafkaReader::Open(ReaderOptions(cluster_->bootstrap_servers()), FastReaderOptions()));
    ASSERT_OK_AND_ASSIGN(producer_, KafkaProducer::Open(cluster_->bootstrap_servers()));
  }

  // A reader of the cluster with `options` changed from FastReaderOptions() by `change`.
  Result<std::unique_ptr<KafkaReader>> OpenReader(const std::function<void(KafkaReaderOptions&)>& change) {
    KafkaReaderOptions options = FastReaderOptions();
    change(options);
    return KafkaReader::Open(ReaderOptions(cluster_->bootstrap_servers()), options);
  }

  // Sends records "v<first>".."v<first+count-1>", keyed "k<i>", to one partition, and waits
  // until the cluster has them.
  void Produce(const std::string& topic, int32_t partition, int first, int count) {
    for (int i = first; i < first + count; i++) {
      const std::string key = "k" + std::to_string(i);
      const std::string value = "v" + std::to_string(i);
      ProducerRecord record;
      record.partition = partition;
      record.key = key;
      record.value = value;
      ASSERT_OK(producer_->Produce(topic, record));
    }
    ASSERT_OK(producer_->Flush(10'000));
  }

  Result<std::vector<ReadRecord>> ReadAll(const std::vector<PartitionRange>& ranges) {
    std::vector<ReadRecord> records;
    RETURN_IF_ERROR(reader_->Read(ranges, [&](const KafkaRecord& record) {
      records.push_back(Own(record));
      return Status::OK();
    }));
    return records;
  }

  std::unique_ptr<KafkaDevCluster> cluster_;
  std::unique_ptr<KafkaReader> reader_;
  std::unique_ptr<KafkaProducer> producer_;
};

// A dev cluster, a warehouse session that can read it, a sink table made by `create_sink`,
// and an in-memory checkpoint folder for the stream runners the test opens.
class KafkaStreamTest : public KafkaClusterTest {
 protected:
  void SetUpSession(const std::string& create_sink) {
    KafkaClusterTest::SetUp();
    if (HasFatalFailure()) return;
    ASSERT_OK_AND_ASSIGN(session_, sql::Session::Open({.warehouse_dir = warehouse_.str()}));
    ASSERT_OK(RegisterReadKafka(session_->connection().raw()));
    ASSERT_OK(session_->Execute(create_sink).status());
    checkpoint_ = NewMemoryObjectStore();
  }

  Result<std::unique_ptr<StreamRunner>> OpenRunner(const std::string& statement) {
    return StreamRunner::Open(*session_, checkpoint_, statement, SystemClock());
  }

  basin::testing::TempDir warehouse_;
  std::unique_ptr<sql::Session> session_;
  std::shared_ptr<ObjectStore> checkpoint_;
};

}  // namespace basin::stream::kafka::testing
