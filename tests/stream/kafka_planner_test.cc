// PlanRanges: the next micro-batch's offset ranges from checkpointed positions and watermarks.
#include <gtest/gtest.h>

#include <numeric>

#include "stream/kafka/planner.h"
#include "testing/test_util.h"

namespace basin::stream::kafka {
namespace {

KafkaOptions Options(const std::string& starting_offsets, std::optional<int64_t> max_offsets = std::nullopt) {
  OptionList list = {
      {"bootstrapServers", "h:1"}, {"subscribePattern", ".*"}, {"startingOffsets", starting_offsets}};
  if (max_offsets) list.emplace_back("maxOffsetsPerTrigger", std::to_string(*max_offsets));
  Result<KafkaOptions> options = ParseKafkaOptions(list);
  EXPECT_TRUE(options.ok()) << options.status().ToString();
  return options.ok() ? *options : KafkaOptions{};
}

int64_t Total(const std::vector<PartitionRange>& ranges) {
  return std::accumulate(ranges.begin(), ranges.end(), int64_t{0},
                         [](int64_t sum, const PartitionRange& r) { return sum + r.size(); });
}

const TopicPartition kP0{"payments", 0};
const TopicPartition kP1{"payments", 1};
const TopicPartition kP2{"payments", 2};

TEST(KafkaPlannerTest, FirstBatchStartsWhereStartingOffsetsSay) {
  const PartitionWatermarks marks = {{kP0, {5, 100}}, {kP1, {0, 40}}};
  ASSERT_OK_AND_ASSIGN(auto earliest, PlanRanges(Options("earliest"), std::nullopt, marks));
  EXPECT_EQ(earliest, (std::vector<PartitionRange>{{kP0, 5, 100}, {kP1, 0, 40}}));
  ASSERT_OK_AND_ASSIGN(auto latest, PlanRanges(Options("latest"), std::nullopt, marks));
  EXPECT_EQ(latest, (std::vector<PartitionRange>{{kP0, 100, 100}, {kP1, 40, 40}}));
  ASSERT_OK_AND_ASSIGN(auto specific,
                       PlanRanges(Options(R"({"payments":{"0":23,"1":-2}})"), std::nullopt, marks));
  EXPECT_EQ(specific, (std::vector<PartitionRange>{{kP0, 23, 100}, {kP1, 0, 40}}));
  ASSERT_OK_AND_ASSIGN(auto latest_one,
                       PlanRanges(Options(R"({"payments":{"0":-1,"1":7}})"), std::nullopt, marks));
  EXPECT_EQ(latest_one, (std::vector<PartitionRange>{{kP0, 100, 100}, {kP1, 7, 40}}));
}

TEST(KafkaPlannerTest, SpecificStartingOffsetsMustFitThePartitions) {
  const PartitionWatermarks marks = {{kP0, {5, 100}}, {kP1, {0, 40}}};
  EXPECT_ERROR_WITH(PlanRanges(Options(R"({"payments":{"0":23}})"), std::nullopt, marks), kInvalidArgument,
                    "gives no offset for partition payments/1");
  EXPECT_ERROR_WITH(PlanRanges(Options(R"({"payments":{"0":23,"1":0,"2":0}})"), std::nullopt, marks),
                    kInvalidArgument, "names partition payments/2, which does not exist");
  EXPECT_ERROR_WITH(PlanRanges(Options(R"({"payments":{"0":2,"1":0}})"), std::nullopt, marks),
                    kInvalidArgument, "offset 2 for payments/0 (watermarks 5..100)");
  EXPECT_ERROR_WITH(PlanRanges(Options(R"({"payments":{"0":5,"1":41}})"), std::nullopt, marks),
                    kInvalidArgument, "offset 41 for payments/1");
}

TEST(KafkaPlannerTest, LaterBatchesResumeAndNewPartitionsStartAtEarliest) {
  const PartitionWatermarks marks = {{kP0, {0, 100}}, {kP1, {0, 40}}, {{"payouts", 0}, {3, 9}}};
  // startingOffsets only matter before the first batch: a stream that has run resumes.
  ASSERT_OK_AND_ASSIGN(
      auto ranges, PlanRanges(Options("latest"), PartitionOffsets{{kP0, 60}, {kP1, 40}, {kP2, 7}}, marks));
  EXPECT_EQ(ranges, (std::vector<PartitionRange>{{kP0, 60, 100}, {kP1, 40, 40}, {{"payouts", 0}, 3, 9}}));
}

TEST(KafkaPlannerTest, CommittedPositionsOutsideTheWatermarksAreErrors) {
  const PartitionWatermarks marks = {{kP0, {10, 100}}};
  EXPECT_ERROR_WITH(PlanRanges(Options("earliest"), PartitionOffsets{{kP0, 4}}, marks), kNotFound,
                    "offsets 4..9 of payments/0 (watermarks 10..100) were deleted");
  EXPECT_ERROR_WITH(PlanRanges(Options("earliest"), PartitionOffsets{{kP0, 101}}, marks), kConflict,
                    "position 101 in payments/0");
  ASSERT_OK_AND_ASSIGN(auto at_end, PlanRanges(Options("earliest"), PartitionOffsets{{kP0, 100}}, marks));
  EXPECT_EQ(at_end, (std::vector<PartitionRange>{{kP0, 100, 100}}));
}

TEST(KafkaPlannerTest, MaxOffsetsPerTriggerIsSharedInProportionToBacklog) {
  const PartitionWatermarks marks = {{kP0, {0, 600}}, {kP1, {0, 300}}, {kP2, {0, 100}}};
  ASSERT_OK_AND_ASSIGN(auto ranges, PlanRanges(Options("earliest", 100), std::nullopt, marks));
  EXPECT_EQ(ranges, (std::vector<PartitionRange>{{kP0, 0, 60}, {kP1, 0, 30}, {kP2, 0, 10}}));
  // Under the bound, everything is read.
  ASSERT_OK_AND_ASSIGN(auto all, PlanRanges(Options("earliest", 1000), std::nullopt, marks));
  EXPECT_EQ(Total(all), 1000);
}

TEST(KafkaPlannerTest, RoundingNeverExceedsTheBoundAndSmallBacklogsAdvance) {
  // 7 offsets over backlogs 1000, 1 and 1: shares 6.98, 0.007, 0.007. Spark would round the
  // small ones up and read 8; here the one offset rounding leaves goes to a starved partition.
  const PartitionWatermarks marks = {{kP0, {0, 1000}}, {kP1, {0, 1}}, {kP2, {0, 1}}};
  ASSERT_OK_AND_ASSIGN(auto ranges, PlanRanges(Options("earliest", 7), std::nullopt, marks));
  EXPECT_EQ(ranges, (std::vector<PartitionRange>{{kP0, 0, 6}, {kP1, 0, 1}, {kP2, 0, 0}}));

  // Batch after batch, every partition advances, no batch exceeds the bound, and the stream
  // catches up on all of it.
  PartitionOffsets committed = {{kP0, 0}, {kP1, 0}, {kP2, 0}};
  std::map<TopicPartition, int> first_batch_reading;
  int batches = 0;
  for (; batches < 1000; batches++) {
    ASSERT_OK_AND_ASSIGN(auto batch, PlanRanges(Options("earliest", 7), committed, marks));
    const int64_t total = Total(batch);
    ASSERT_LE(total, 7);
    if (total == 0) break;
    for (const PartitionRange& range : batch) {
      ASSERT_EQ(range.start_offset, committed[range.tp]);
      if (range.size() > 0) first_batch_reading.emplace(range.tp, batches);
      committed[range.tp] = range.end_offset;
    }
  }
  EXPECT_EQ(committed, (PartitionOffsets{{kP0, 1000}, {kP1, 1}, {kP2, 1}}));
  EXPECT_EQ(batches, 144);  // ceil(1002 / 7): every batch but the last is full
  EXPECT_EQ(first_batch_reading, (std::map<TopicPartition, int>{{kP0, 0}, {kP1, 0}, {kP2, 1}}));
}

TEST(KafkaPlannerTest, HugeBacklogsDoNotOverflow) {
  const int64_t big = int64_t{1} << 62;
  const PartitionWatermarks marks = {{kP0, {0, big}}, {kP1, {0, big / 2}}};
  ASSERT_OK_AND_ASSIGN(auto ranges, PlanRanges(Options("earliest", int64_t{1} << 40), std::nullopt, marks));
  EXPECT_EQ(Total(ranges), int64_t{1} << 40);
  EXPECT_GT(ranges[0].size(), ranges[1].size());
}

TEST(KafkaPlannerTest, NoPartitionsNoRanges) {
  ASSERT_OK_AND_ASSIGN(auto ranges, PlanRanges(Options("earliest", 10), PartitionOffsets{{kP0, 5}}, {}));
  EXPECT_TRUE(ranges.empty());
}

}  // namespace
}  // namespace basin::stream::kafka
