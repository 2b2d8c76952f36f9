// KafkaDevCluster, KafkaProducer and KafkaReader against librdkafka's mock cluster on loopback.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <thread>

#include "kafka_test_util.h"
#include "stream/kafka/feed.h"
#include "stream/kafka/planner.h"
#include "stream/kafka/reader.h"

namespace basin::stream::kafka {
namespace {

using testing::KafkaClusterTest;
using testing::ReadRecord;

const TopicPartition kP0{"payments", 0};
const TopicPartition kP1{"payments", 1};
const TopicPartition kP2{"payments", 2};

std::vector<int64_t> Offsets(const std::vector<ReadRecord>& records) {
  std::vector<int64_t> offsets;
  for (const ReadRecord& r : records) offsets.push_back(r.offset);
  return offsets;
}

std::vector<int64_t> Iota(int64_t first, int64_t end) {
  std::vector<int64_t> values;
  for (int64_t v = first; v < end; v++) values.push_back(v);
  return values;
}

TEST(KafkaDevClusterTest, StartsOnLoopbackAndStops) {
  ASSERT_OK_AND_ASSIGN(auto cluster, KafkaDevCluster::Start({{"payments", 4}, {"clicks", 1}}, /*brokers=*/2));
  EXPECT_TRUE(cluster->bootstrap_servers().starts_with("127.0.0.1:")) << cluster->bootstrap_servers();
  EXPECT_NE(cluster->bootstrap_servers().find(','), std::string::npos) << "two brokers, two addresses";
  {
    ASSERT_OK_AND_ASSIGN(auto reader, KafkaReader::Open(testing::ReaderOptions(cluster->bootstrap_servers()),
                                                        testing::FastReaderOptions()));
    ASSERT_OK_AND_ASSIGN(auto subscription, TopicSubscription::Topics({"payments", "clicks", "absent"}));
    ASSERT_OK_AND_ASSIGN(auto partitions, reader->ListPartitions(subscription));
    EXPECT_EQ(partitions,
              (std::vector<TopicPartition>{
                  {"clicks", 0}, {"payments", 0}, {"payments", 1}, {"payments", 2}, {"payments", 3}}));
  }
  EXPECT_ERROR_WITH(cluster->CreateTopic({"payments", 8}), kAlreadyExists, "cannot add partitions");
  EXPECT_ERROR_WITH(cluster->CreateTopic({"bad topic", 1}), kInvalidArgument,
                    "'bad topic' is not a topic name");
  EXPECT_ERROR_WITH(cluster->CreateTopic({"t", 0}), kInvalidArgument, "cannot have 0 partitions");

  const std::string bootstrap = cluster->bootstrap_servers();
  cluster->Stop();
  cluster->Stop();  // idempotent
  EXPECT_ERROR_WITH(cluster->CreateTopic({"later", 1}), kCancelled, "stopped");
  // Nothing listens any more: a reader's requests fail, retryably, within their timeout.
  KafkaReaderOptions quick = testing::FastReaderOptions();
  quick.request_timeout_ms = 500;
  ASSERT_OK_AND_ASSIGN(auto reader, KafkaReader::Open(testing::ReaderOptions(bootstrap), quick));
  Status status = reader->QueryWatermarks(kP0).status();
  EXPECT_EQ(status.code(), ErrorCode::kIOError) << status.ToString();
  EXPECT_TRUE(status.retryable()) << status.ToString();
}

TEST(KafkaDevClusterTest, RefusesBadBrokerCounts) {
  EXPECT_ERROR_WITH(KafkaDevCluster::Start({}, 0), kInvalidArgument, "1 to 16 brokers, not 0");
}

TEST_F(KafkaClusterTest, ReadsExactlyTheRangeAsked) {
  Produce("payments", 0, 0, 100);
  ASSERT_OK_AND_ASSIGN(Watermarks marks, reader_->QueryWatermarks(kP0));
  EXPECT_EQ(marks, (Watermarks{0, 100}));

  ASSERT_OK_AND_ASSIGN(auto all, ReadAll({{kP0, 0, 100}}));
  EXPECT_EQ(Offsets(all), Iota(0, 100));
  ASSERT_OK_AND_ASSIGN(auto middle, ReadAll({{kP0, 40, 60}}));
  ASSERT_EQ(Offsets(middle), Iota(40, 60));
  EXPECT_EQ(middle.front().key, "k40");
  EXPECT_EQ(middle.front().value, "v40");
  EXPECT_EQ(middle.back().value, "v59");
  EXPECT_EQ(middle.front().topic, "payments");
  EXPECT_EQ(middle.front().partition, 0);
  EXPECT_EQ(middle.front().timestamp_type, TimestampType::kCreateTime);
  EXPECT_GT(middle.front().timestamp_ms, 0);
  ASSERT_OK_AND_ASSIGN(auto last, ReadAll({{kP0, 99, 100}}));
  EXPECT_EQ(Offsets(last), (std::vector<int64_t>{99}));
}

TEST_F(KafkaClusterTest, EmptyRangesReadNothing) {
  Produce("payments", 0, 0, 10);
  ASSERT_OK_AND_ASSIGN(auto none, ReadAll({{kP0, 5, 5}, {kP1, 0, 0}}));
  EXPECT_TRUE(none.empty());
  ASSERT_OK_AND_ASSIGN(auto nothing_at_all, ReadAll({}));
  EXPECT_TRUE(nothing_at_all.empty());
  // An empty range at the end of a partition, where nothing is to be fetched, is fine too.
  ASSERT_OK_AND_ASSIGN(auto at_end, ReadAll({{kP0, 10, 10}, {kP1, 0, 0}}));
  EXPECT_TRUE(at_end.empty());
}

TEST_F(KafkaClusterTest, ReadsSeveralPartitionsEachInOffsetOrder) {
  Produce("payments", 0, 0, 50);
  Produce("payments", 1, 1000, 30);
  Produce("payments", 2, 2000, 5);
  ASSERT_OK_AND_ASSIGN(auto records, ReadAll({{kP0, 10, 50}, {kP1, 0, 30}, {kP2, 2, 4}}));
  std::map<int32_t, std::vector<int64_t>> offsets;
  for (const ReadRecord& r : records) {
    offsets[r.partition].push_back(r.offset);
    // Each record is the one produced at that offset.
    const int first = r.partition == 0 ? 0 : r.partition == 1 ? 1000 : 2000;
    EXPECT_EQ(r.value, "v" + std::to_string(first + r.offset));
  }
  EXPECT_EQ(offsets[0], Iota(10, 50));
  EXPECT_EQ(offsets[1], Iota(0, 30));
  EXPECT_EQ(offsets[2], Iota(2, 4));
}

TEST_F(KafkaClusterTest, ReadingTwiceGivesTheSameRecords) {
  Produce("payments", 0, 0, 20);
  ASSERT_OK_AND_ASSIGN(auto first, ReadAll({{kP0, 3, 17}}));
  ASSERT_OK_AND_ASSIGN(auto again, ReadAll({{kP0, 3, 17}}));
  ASSERT_EQ(first.size(), again.size());
  for (size_t i = 0; i < first.size(); i++) {
    EXPECT_EQ(first[i].offset, again[i].offset);
    EXPECT_EQ(first[i].value, again[i].value);
  }
}

TEST_F(KafkaClusterTest, KeysValuesHeadersAndTombstones) {
  ProducerRecord with_headers;
  with_headers.partition = 0;
  with_headers.key = "acct-1";
  with_headers.value = std::string_view("a\0b", 3);  // bytes, not text
  with_headers.headers = {{"trace", "t-1"}, {"empty", std::string_view("")}, {"none", std::nullopt}};
  with_headers.timestamp_ms = 1'700'000'000'000;
  ASSERT_OK(producer_->Produce("payments", with_headers));
  ProducerRecord tombstone;
  tombstone.partition = 0;
  tombstone.key = "acct-1";
  ASSERT_OK(producer_->Produce("payments", tombstone));
  ProducerRecord no_key;
  no_key.partition = 0;
  no_key.value = "v";
  ASSERT_OK(producer_->Produce("payments", no_key));
  ASSERT_OK(producer_->Flush(10'000));

  ASSERT_OK_AND_ASSIGN(auto records, ReadAll({{kP0, 0, 3}}));
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0].key, "acct-1");
  EXPECT_EQ(records[0].value, std::string("a\0b", 3));
  EXPECT_EQ(records[0].timestamp_ms, 1'700'000'000'000);
  using Headers = std::vector<std::pair<std::string, std::optional<std::string>>>;
  EXPECT_EQ(records[0].headers, (Headers{{"trace", "t-1"}, {"empty", ""}, {"none", std::nullopt}}));
  EXPECT_EQ(records[1].key, "acct-1");
  EXPECT_FALSE(records[1].value.has_value()) << "a tombstone has no value";
  EXPECT_TRUE(records[1].headers.empty());
  EXPECT_FALSE(records[2].key.has_value());
  EXPECT_EQ(records[2].value, "v");
  // A reader that wants no headers gets none, and the rest as before.
  std::vector<OwnedKafkaRecord> bare;
  ASSERT_OK(reader_->Read(
      {{kP0, 0, 3}},
      [&](const KafkaRecord& record) {
        bare.push_back(Own(record));
        return Status::OK();
      },
      nullptr, KafkaReader::Headers::kSkipped));
  ASSERT_EQ(bare.size(), 3u);
  EXPECT_TRUE(bare[0].headers.empty());
  EXPECT_EQ(bare[0].key, "acct-1");
  EXPECT_EQ(bare[0].value, std::string("a\0b", 3));
  EXPECT_EQ(bare[0].timestamp_ms, 1'700'000'000'000);
}

// A range past the high watermark is not clamped: the checkpoint recorded it as planned, so
// reading less would commit a different batch than the one planned.
TEST_F(KafkaClusterTest, ARangeBeyondTheHighWatermarkIsAnError) {
  Produce("payments", 0, 0, 100);
  ASSERT_OK_AND_ASSIGN(auto reader, OpenReader([](KafkaReaderOptions& o) { o.stall_timeout_ms = 1000; }));
  std::vector<int64_t> seen;
  Status status = reader->Read({{kP0, 90, 120}}, [&](const KafkaRecord& r) {
    seen.push_back(r.offset);
    return Status::OK();
  });
  EXPECT_EQ(status.code(), ErrorCode::kInvalidArgument) << status.ToString();
  EXPECT_NE(status.message().find("[90, 120) of payments/0 ends beyond the partition's end, offset 100"),
            std::string::npos)
      << status.ToString();
  EXPECT_EQ(seen, Iota(90, 100));

  // Starting past the end fails at once: the client cannot fetch from there.
  EXPECT_ERROR_WITH(reader->Read({{kP0, 150, 160}}, [](const KafkaRecord&) { return Status::OK(); }),
                    kInvalidArgument, "[150, 160) of payments/0 lies outside the partition's offsets 0..100");
}

TEST_F(KafkaClusterTest, MalformedRangeListsAreRefused) {
  auto ignore = [](const KafkaRecord&) { return Status::OK(); };
  EXPECT_ERROR_WITH(reader_->Read({{kP0, -1, 5}}, ignore), kInvalidArgument, "bad offset range [-1, 5)");
  EXPECT_ERROR_WITH(reader_->Read({{kP0, 6, 5}}, ignore), kInvalidArgument, "bad offset range [6, 5)");
  EXPECT_ERROR_WITH(reader_->Read({{kP0, 0, 1}, {kP0, 1, 2}}, ignore), kInvalidArgument,
                    "payments/0 is given two ranges");
}

TEST_F(KafkaClusterTest, CancellationStopsAWaitingRead) {
  Produce("payments", 0, 0, 5);
  CancellationToken cancel;
  std::atomic<int> seen{0};
  std::atomic<int64_t> cancelled_at_ns{0};
  // Cancels once the five records arrived (however long a loaded machine takes to fetch
  // them, up to 20 s), while the read waits for records that never come.
  std::thread canceller([&] {
    for (int i = 0; i < 2'000 && seen.load() < 5; i++)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    cancelled_at_ns = std::chrono::steady_clock::now().time_since_epoch().count();
    cancel.Cancel();
  });
  // The stall timeout (5 s) is far off.
  Status status = reader_->Read(
      {{kP0, 0, 50}},
      [&](const KafkaRecord&) {
        seen++;
        return Status::OK();
      },
      &cancel);
  const auto returned = std::chrono::steady_clock::now().time_since_epoch();
  canceller.join();
  EXPECT_EQ(seen.load(), 5);
  EXPECT_EQ(status.code(), ErrorCode::kCancelled) << status.ToString();
  EXPECT_NE(status.message().find("payments/0 at offset 5"), std::string::npos) << status.ToString();
  EXPECT_LT(std::chrono::nanoseconds(returned.count() - cancelled_at_ns.load()), std::chrono::seconds(2));
}

TEST_F(KafkaClusterTest, ACallbackErrorEndsTheRead) {
  Produce("payments", 0, 0, 10);
  int calls = 0;
  Status status = reader_->Read({{kP0, 0, 10}}, [&](const KafkaRecord& r) {
    calls++;
    return r.offset == 3 ? Status::Corruption("bad record at 3") : Status::OK();
  });
  EXPECT_EQ(status.code(), ErrorCode::kCorruption);
  EXPECT_EQ(calls, 4);
  // The reader is usable afterwards.
  ASSERT_OK_AND_ASSIGN(auto records, ReadAll({{kP0, 0, 10}}));
  EXPECT_EQ(records.size(), 10u);
}

TEST_F(KafkaClusterTest, UnknownPartitionsAreNotFound) {
  EXPECT_ERROR_WITH(reader_->QueryWatermarks(TopicPartition{"payments", 9}), kNotFound, "payments/9");
  EXPECT_ERROR_WITH(reader_->QueryWatermarks(std::vector<TopicPartition>{kP0, TopicPartition{"payments", 9}}),
                    kNotFound, "payments/9");
  EXPECT_EQ(reader_->QueryHighWatermarks({TopicPartition{"payments", 9}}).status().code(),
            ErrorCode::kNotFound);
}

// The watermarks of many partitions, asked in two requests, are those each partition's own
// query gives; the ends alone, in one request, are their high ones.
TEST_F(KafkaClusterTest, HighWatermarksInOneRequestAreThePartitionsEnds) {
  Produce("payments", 0, 0, 7);
  Produce("payments", 2, 7, 3);
  const std::vector<TopicPartition> partitions = {kP0, kP1, kP2};
  ASSERT_OK_AND_ASSIGN(PartitionOffsets ends, reader_->QueryHighWatermarks(partitions));
  EXPECT_EQ(ends, (PartitionOffsets{{kP0, 7}, {kP1, 0}, {kP2, 3}}));
  Produce("payments", 1, 10, 2);
  ASSERT_OK_AND_ASSIGN(ends, reader_->QueryHighWatermarks(partitions));
  ASSERT_OK_AND_ASSIGN(PartitionWatermarks marks, reader_->QueryWatermarks(partitions));
  ASSERT_EQ(marks.size(), partitions.size());
  for (const TopicPartition& tp : partitions) {
    ASSERT_OK_AND_ASSIGN(Watermarks own, reader_->QueryWatermarks(tp));
    EXPECT_EQ(marks.at(tp).low, own.low) << ToString(tp);
    EXPECT_EQ(marks.at(tp).high, own.high) << ToString(tp);
    EXPECT_EQ(ends.at(tp), own.high) << ToString(tp);
  }
  EXPECT_EQ(ends.at(kP1), 2);
}

TEST_F(KafkaClusterTest, APatternPicksUpTopicsCreatedLater) {
  ASSERT_OK(cluster_->CreateTopic({"clicks", 2}));
  ASSERT_OK_AND_ASSIGN(auto pattern, TopicSubscription::Pattern("pay.*"));
  ASSERT_OK_AND_ASSIGN(auto before, reader_->ListPartitions(pattern));
  EXPECT_EQ(before, (std::vector<TopicPartition>{kP0, kP1, kP2}));

  ASSERT_OK(cluster_->CreateTopic({"payouts", 2}));
  ASSERT_OK_AND_ASSIGN(auto after, reader_->ListPartitions(pattern));
  EXPECT_EQ(after, (std::vector<TopicPartition>{kP0, kP1, kP2, {"payouts", 0}, {"payouts", 1}}));

  // The next plan starts the new topic's partitions at their earliest offset.
  Produce("payouts", 1, 0, 4);
  ASSERT_OK_AND_ASSIGN(auto marks, reader_->QueryWatermarks(after));
  ASSERT_OK_AND_ASSIGN(auto options, ParseKafkaOptions({{"bootstrapServers", cluster_->bootstrap_servers()},
                                                        {"subscribePattern", "pay.*"}}));
  ASSERT_OK_AND_ASSIGN(auto ranges,
                       PlanRanges(options, PartitionOffsets{{kP0, 0}, {kP1, 0}, {kP2, 0}}, marks));
  ASSERT_OK_AND_ASSIGN(auto records, ReadAll(ranges));
  ASSERT_EQ(records.size(), 4u);
  EXPECT_EQ(records[0].topic, "payouts");
  EXPECT_EQ(records[0].value, "v0");
}

// Plan, read, commit the ends, repeat: every record is read exactly once, in batches no
// larger than maxOffsetsPerTrigger, including records produced between batches.
TEST_F(KafkaClusterTest, MicroBatchesReadEveryRecordOnce) {
  Produce("payments", 0, 0, 60);
  Produce("payments", 1, 1000, 25);
  Produce("payments", 2, 2000, 3);
  ASSERT_OK_AND_ASSIGN(auto options, ParseKafkaOptions({{"bootstrapServers", cluster_->bootstrap_servers()},
                                                        {"subscribe", "payments"},
                                                        {"startingOffsets", "earliest"},
                                                        {"maxOffsetsPerTrigger", "16"}}));
  std::optional<PartitionOffsets> committed;
  std::map<std::string, int> seen;  // value -> times read
  int batches = 0;
  for (; batches < 100; batches++) {
    if (batches == 3) Produce("payments", 2, 2003, 10);  // arrives while the stream runs
    ASSERT_OK_AND_ASSIGN(auto partitions, reader_->ListPartitions(options.subscription));
    ASSERT_OK_AND_ASSIGN(auto marks, reader_->QueryWatermarks(partitions));
    ASSERT_OK_AND_ASSIGN(auto ranges, PlanRanges(options, committed, marks));
    int64_t planned = 0;
    for (const PartitionRange& range : ranges) planned += range.size();
    ASSERT_LE(planned, 16);
    if (planned == 0) break;
    ASSERT_OK_AND_ASSIGN(auto records, ReadAll(ranges));
    EXPECT_EQ(static_cast<int64_t>(records.size()), planned);
    for (const ReadRecord& r : records) seen[*r.value]++;
    committed = PartitionOffsets{};
    for (const PartitionRange& range : ranges) (*committed)[range.tp] = range.end_offset;
  }
  EXPECT_EQ(seen.size(), 98u);
  for (const auto& [value, times] : seen) EXPECT_EQ(times, 1) << value;
  EXPECT_EQ(batches, 7);  // ceil(98 / 16)
}

// Reads `reader` in batches of at most 50 planned from the watermarks after `committed`,
// producing more records during the third, until nothing is left; checks each batch's
// records are exactly its ranges'. Returns every value read with the times it was read.
std::map<std::string, int> ReadInBatches(KafkaReader& reader, const std::function<void()>& during_third,
                                         std::optional<PartitionOffsets>& committed,
                                         const std::string& bootstrap) {
  std::map<std::string, int> seen;
  auto options = ParseKafkaOptions({{"bootstrapServers", bootstrap},
                                    {"subscribe", "payments"},
                                    {"startingOffsets", "earliest"},
                                    {"maxOffsetsPerTrigger", "50"}});
  EXPECT_OK(options.status());
  for (int batch = 0; batch < 100; batch++) {
    if (batch == 3) during_third();
    auto partitions = reader.ListPartitions(options->subscription);
    EXPECT_OK(partitions.status());
    auto marks = reader.QueryWatermarks(*partitions);
    EXPECT_OK(marks.status());
    auto ranges = PlanRanges(*options, committed, *marks);
    EXPECT_OK(ranges.status());
    if (!ranges.ok()) break;
    std::map<TopicPartition, std::vector<int64_t>> read, wanted;
    for (const PartitionRange& range : *ranges) {
      for (int64_t o = range.start_offset; o < range.end_offset; o++) wanted[range.tp].push_back(o);
    }
    if (wanted.empty()) break;
    EXPECT_OK(reader.Read(*ranges, [&](const KafkaRecord& record) {
      read[TopicPartition{std::string(record.topic), record.partition}].push_back(record.offset);
      seen[std::string(*record.value)]++;
      return Status::OK();
    }));
    EXPECT_EQ(read, wanted) << "batch " << batch;
    committed = PartitionOffsets{};
    for (const PartitionRange& range : *ranges) (*committed)[range.tp] = range.end_offset;
  }
  return seen;
}

// A stream's batches, one after another on one reader, go on from what the client fetched
// (one assignment in all), and read every record once, including records produced between
// batches; a Read after Release(), of other ranges, or after a failed Read, assigns again.
TEST_F(KafkaClusterTest, ConsecutiveReadsGoOnWithoutAssigningAgain) {
  Produce("payments", 0, 0, 120);
  Produce("payments", 1, 1000, 70);
  Produce("payments", 2, 2000, 5);
  std::optional<PartitionOffsets> committed;
  std::map<std::string, int> seen = ReadInBatches(
      *reader_, [&] { Produce("payments", 2, 2005, 40); }, committed, cluster_->bootstrap_servers());
  EXPECT_EQ(seen.size(), 235u);
  for (const auto& [value, times] : seen) EXPECT_EQ(times, 1) << value;
  EXPECT_EQ(reader_->assignments(), 1);

  // Records produced since the last batch: the next one still goes on.
  Produce("payments", 1, 1070, 10);
  seen = ReadInBatches(
      *reader_, [] {}, committed, cluster_->bootstrap_servers());
  EXPECT_EQ(seen.size(), 10u);
  EXPECT_EQ(reader_->assignments(), 1);

  // Released (a stream waiting for its next batch): the next Read assigns again.
  EXPECT_TRUE(reader_->Release());
  Produce("payments", 1, 1080, 5);
  seen = ReadInBatches(
      *reader_, [] {}, committed, cluster_->bootstrap_servers());
  EXPECT_EQ(seen.size(), 5u);
  EXPECT_EQ(reader_->assignments(), 2);

  // Another range of a partition: assigned again.
  ASSERT_OK_AND_ASSIGN(auto again, ReadAll({{kP0, 10, 20}}));
  EXPECT_EQ(Offsets(again), Iota(10, 20));
  EXPECT_EQ(reader_->assignments(), 3);
  // A Read that fails (here going on from the last) leaves nothing to go on from: the
  // next one assigns again.
  EXPECT_ERROR_WITH(
      reader_->Read({{kP0, 20, 30}}, [](const KafkaRecord&) { return Status::Cancelled("stop"); }),
      kCancelled, "stop");
  ASSERT_OK_AND_ASSIGN(again, ReadAll({{kP0, 20, 30}}));
  EXPECT_EQ(Offsets(again), Iota(20, 30));
  EXPECT_EQ(reader_->assignments(), 4);
}

// A Read going on from the last that finds nothing queued assigns its partitions afresh,
// once (librdkafka 2.0 may have stopped fetching for a second), and still reads its range;
// Release() from another thread during it does nothing.
TEST_F(KafkaClusterTest, AReadGoingOnThatFindsNothingQueuedAssignsAfreshOnce) {
  Produce("payments", 0, 0, 10);
  ASSERT_OK_AND_ASSIGN(auto first, ReadAll({{kP0, 0, 10}}));
  EXPECT_EQ(Offsets(first), Iota(0, 10));
  EXPECT_EQ(reader_->assignments(), 1);
  // The next range's records arrive only after its Read has polled in vain; releasing the
  // reader from another thread meanwhile releases nothing.
  std::atomic<bool> released{true};
  std::thread late([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    released = reader_->Release();
    Produce("payments", 0, 10, 20);
  });
  auto next = ReadAll({{kP0, 10, 30}});
  late.join();
  ASSERT_OK(next.status());
  EXPECT_FALSE(released);
  EXPECT_EQ(Offsets(*next), Iota(10, 30));
  EXPECT_EQ(reader_->assignments(), 2);
}

// With no room to hold what arrives past a range, a partition is assigned again rather
// than missing a record.
TEST_F(KafkaClusterTest, ConsecutiveReadsWithoutRoomToHoldRecordsReadEveryRecordOnce) {
  Produce("payments", 0, 0, 120);
  Produce("payments", 1, 1000, 70);
  ASSERT_OK_AND_ASSIGN(auto reader, OpenReader([](KafkaReaderOptions& o) { o.held_bytes_limit = 0; }));
  std::optional<PartitionOffsets> committed;
  std::map<std::string, int> seen = ReadInBatches(
      *reader, [&] { Produce("payments", 2, 2000, 40); }, committed, cluster_->bootstrap_servers());
  EXPECT_EQ(seen.size(), 230u);
  for (const auto& [value, times] : seen) EXPECT_EQ(times, 1) << value;
  EXPECT_GT(reader->assignments(), 1);
}

TEST_F(KafkaClusterTest, APaymentFeedLandsEveryEvent) {
  auto clock = std::make_shared<ManualClock>(1'796'119'200'123);
  ASSERT_OK_AND_ASSIGN(
      auto generator,
      PaymentEventGenerator::Make(
          {.malformed_fraction = 0.1, .duplicate_fraction = 0.1, .late_fraction = 0.1, .seed = 5}, clock));
  CancellationToken stop;
  ASSERT_OK_AND_ASSIGN(FeedReport report,
                       RunPaymentFeed(*producer_, generator, {.topic = "payments", .count = 300}, stop));
  EXPECT_EQ(report.produced, 300);
  EXPECT_GT(report.malformed, 0);
  EXPECT_GT(report.duplicates, 0);
  EXPECT_GT(report.late, 0);

  ASSERT_OK_AND_ASSIGN(auto marks, reader_->QueryWatermarks(std::vector<TopicPartition>{kP0, kP1, kP2}));
  std::vector<PartitionRange> ranges;
  int64_t total = 0;
  for (const auto& [tp, m] : marks) {
    ranges.push_back({tp, m.low, m.high});
    total += m.high - m.low;
    EXPECT_GT(m.high, 0) << "keys spread over every partition";
  }
  EXPECT_EQ(total, 300);
  ASSERT_OK_AND_ASSIGN(auto records, ReadAll(ranges));
  ASSERT_EQ(records.size(), 300u);
  // Keyed by id: every record of one key is in one partition.
  std::map<std::string, int32_t> partition_of_key;
  for (const ReadRecord& r : records) {
    auto [it, inserted] = partition_of_key.emplace(*r.key, r.partition);
    EXPECT_EQ(it->second, r.partition) << *r.key;
  }
}

// A producer learns a topic's partitions before its first record (a feed does, so that its
// first events are not held back, stream_freshness_bench); against a cluster that is gone,
// learning fails with the client's error rather than waiting on.
TEST_F(KafkaClusterTest, AProducerLearnsItsTopicBeforeSending) {
  ASSERT_OK(producer_->LearnTopic("payments", 10'000));
  ProducerRecord record;
  record.partition = 1;
  record.value = "first";
  ASSERT_OK(producer_->Produce("payments", record));
  ASSERT_OK(producer_->Flush(10'000));
  ASSERT_OK_AND_ASSIGN(auto marks, reader_->QueryWatermarks(std::vector<TopicPartition>{kP1}));
  EXPECT_EQ(marks.at(kP1).high, 1);

  ASSERT_OK_AND_ASSIGN(auto late, KafkaProducer::Open(cluster_->bootstrap_servers()));
  cluster_->Stop();
  Status learnt = late->LearnTopic("payments", 500);
  EXPECT_FALSE(learnt.ok());
  EXPECT_NE(learnt.message().find("learning the partitions of Kafka topic payments"), std::string::npos)
      << learnt.ToString();
}

TEST_F(KafkaClusterTest, AStoppedFeedEndsCancelled) {
  ASSERT_OK_AND_ASSIGN(auto generator, PaymentEventGenerator::Make({}, std::make_shared<ManualClock>(0)));
  CancellationToken stop;
  stop.Cancel();
  EXPECT_ERROR_WITH(
      RunPaymentFeed(*producer_, generator, {.topic = "payments", .count = 10, .events_per_second = 1}, stop),
      kCancelled, "stopped after 0 of 10 events");
  EXPECT_ERROR_WITH(RunPaymentFeed(*producer_, generator, {.topic = "payments", .count = 0}, stop),
                    kInvalidArgument, "positive count");
}

}  // namespace
}  // namespace basin::stream::kafka
