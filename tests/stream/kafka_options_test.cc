// ParseKafkaOptions: the Kafka source's one parser of its options.
#include <gtest/gtest.h>

#include "stream/kafka/options.h"
#include "testing/test_util.h"

namespace basin::stream::kafka {
namespace {

OptionList With(OptionList extra) {
  OptionList options = {{"bootstrapServers", "127.0.0.1:9092"}, {"subscribe", "payments"}};
  options.insert(options.end(), extra.begin(), extra.end());
  return options;
}

TEST(KafkaOptionsTest, ParsesTheDocumentedOptions) {
  ASSERT_OK_AND_ASSIGN(KafkaOptions options,
                       ParseKafkaOptions({{"bootstrapServers", " 127.0.0.1:9092,127.0.0.1:9093 "},
                                          {"subscribe", "payments, refunds,payments"},
                                          {"startingOffsets", "earliest"},
                                          {"maxOffsetsPerTrigger", "10000"},
                                          {"kafka.fetch.max.bytes", "1048576"},
                                          {"kafka.client.id", "basin-test"}}));
  EXPECT_EQ(options.bootstrap_servers, "127.0.0.1:9092,127.0.0.1:9093");
  EXPECT_EQ(options.subscription.topics(), (std::vector<std::string>{"payments", "refunds"}));
  EXPECT_TRUE(options.subscription.pattern().empty());
  EXPECT_EQ(options.starting_offsets.kind, StartingOffsets::Kind::kEarliest);
  EXPECT_EQ(options.max_offsets_per_trigger, 10000);
  EXPECT_EQ(options.client_properties,
            (ClientProperties{{"fetch.max.bytes", "1048576"}, {"client.id", "basin-test"}}));
}

TEST(KafkaOptionsTest, DefaultsAreLatestAndUnbounded) {
  ASSERT_OK_AND_ASSIGN(KafkaOptions options, ParseKafkaOptions(With({})));
  EXPECT_EQ(options.starting_offsets.kind, StartingOffsets::Kind::kLatest);
  EXPECT_FALSE(options.max_offsets_per_trigger.has_value());
  EXPECT_TRUE(options.client_properties.empty());
}

TEST(KafkaOptionsTest, NamesAreCaseInsensitiveAndSparksBootstrapNameIsTaken) {
  ASSERT_OK_AND_ASSIGN(KafkaOptions options, ParseKafkaOptions({{"kafka.bootstrap.servers", "h:1"},
                                                                {"SUBSCRIBEPATTERN", "pay.*"},
                                                                {"startingoffsets", "LATEST"},
                                                                {"MaxOffsetsPerTrigger", "5"}}));
  EXPECT_EQ(options.bootstrap_servers, "h:1");
  EXPECT_EQ(options.subscription.pattern(), "pay.*");
  EXPECT_EQ(options.starting_offsets.kind, StartingOffsets::Kind::kLatest);
  EXPECT_EQ(options.max_offsets_per_trigger, 5);
}

TEST(KafkaOptionsTest, StartingOffsetsJsonPerPartition) {
  ASSERT_OK_AND_ASSIGN(
      KafkaOptions options,
      ParseKafkaOptions({{"bootstrapServers", "h:1"},
                         {"subscribe", "payments,refunds"},
                         {"startingOffsets", R"({"payments":{"0":23,"1":-2},"refunds":{"4":-1}})"}}));
  EXPECT_EQ(options.starting_offsets.kind, StartingOffsets::Kind::kSpecific);
  EXPECT_EQ(options.starting_offsets.offsets,
            (PartitionOffsets{
                {{"payments", 0}, 23}, {{"payments", 1}, kEarliestOffset}, {{"refunds", 4}, kLatestOffset}}));
}

TEST(KafkaOptionsTest, StartingOffsetsJsonMayNameTopicsThePatternMatches) {
  ASSERT_OK_AND_ASSIGN(KafkaOptions options,
                       ParseKafkaOptions({{"bootstrapServers", "h:1"},
                                          {"subscribePattern", "pay.*"},
                                          {"startingOffsets", R"({"payouts":{"0":7}})"}}));
  EXPECT_EQ(options.starting_offsets.offsets.at({"payouts", 0}), 7);
  EXPECT_ERROR_WITH(ParseKafkaOptions({{"bootstrapServers", "h:1"},
                                       {"subscribePattern", "pay.*"},
                                       {"startingOffsets", R"({"clicks":{"0":7}})"}}),
                    kInvalidArgument, "topic 'clicks' is not among the subscribed topics");
}

// Each bad value is refused with InvalidArgument, naming the option and the value.
TEST(KafkaOptionsTest, ErrorsNameTheOptionAndTheValue) {
  struct Case {
    OptionList options;
    std::string expected;  // part of the message
  };
  const std::vector<Case> cases = {
      {With({{"startingOffsets", "newest"}}), "'startingOffsets' = 'newest'"},
      {With({{"startingOffsets", R"({"payments":{"x":1}})"}}),
       "'x' of topic 'payments' is not a partition number"},
      {With({{"startingOffsets", R"({"payments":{"-1":1}})"}}),
       "'-1' of topic 'payments' is not a partition number"},
      {With({{"startingOffsets", R"({"payments":{"0":-3}})"}}), "the offset of payments/0 is -3"},
      {With({{"startingOffsets", R"({"payments":{"0":"5"}})"}}), "the offset of payments/0 is \"5\""},
      {With({{"startingOffsets", R"({"payments":[1,2]})"}}), "topic 'payments' must map partition numbers"},
      {With({{"startingOffsets", R"({"refunds":{"0":1}})"}}), "topic 'refunds' is not among the subscribed"},
      {With({{"startingOffsets", "{not json"}}), "'startingOffsets' = '{not json'"},
      {With({{"maxOffsetsPerTrigger", "0"}}), "'maxOffsetsPerTrigger' = '0': expected a positive integer"},
      {With({{"maxOffsetsPerTrigger", "10k"}}), "'maxOffsetsPerTrigger' = '10k'"},
      {With({{"maxOffsetsPerTrigger", "-5"}}), "'maxOffsetsPerTrigger' = '-5'"},
      {With({{"kafka.no.such.property", "1"}}), "'kafka.no.such.property'"},
      {With({{"kafka.fetch.max.bytes", "lots"}}), "'fetch.max.bytes' = 'lots'"},
      {With({{"kafka.enable.auto.commit", "true"}}),
       "'kafka.enable.auto.commit' = 'true': Basin sets this itself"},
      {With({{"kafka.auto.offset.reset", "earliest"}}), "'kafka.auto.offset.reset' = 'earliest'"},
      {With({{"failOnDataLoss", "false"}}), "unknown Kafka option 'failOnDataLoss'"},
      {With({{"Subscribe", "again"}}), "Kafka option 'Subscribe' is given twice"},
      {{{"bootstrapServers", "h:1"}, {"subscribe", "pay ments"}},
       "'subscribe' = 'pay ments': 'pay ments' is not a topic"},
      {{{"bootstrapServers", "h:1"}, {"subscribe", "a,,b"}}, "'subscribe' = 'a,,b': '' is not a topic"},
      {{{"bootstrapServers", "h:1"}, {"subscribePattern", "pay(ments"}}, "'subscribePattern' = 'pay(ments'"},
      {{{"bootstrapServers", "h:1"}, {"subscribePattern", "  "}},
       "'subscribePattern' = '  ': the topic pattern is empty"},
      {{{"bootstrapServers", "  "}, {"subscribe", "a"}}, "'bootstrapServers' = '  '"},
      {{{"subscribe", "a"}}, "'bootstrapServers' is required"},
      {{{"bootstrapServers", "h:1"}},
       "one of the Kafka options 'subscribe' and 'subscribePattern' is required"},
      {{{"bootstrapServers", "h:1"}, {"subscribe", "a"}, {"subscribePattern", "a.*"}}, "exclude each other"},
      {{{"bootstrapServers", "h:1"}, {"kafka.bootstrap.servers", "h:2"}, {"subscribe", "a"}},
       "name the same setting"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.expected);
    EXPECT_ERROR_WITH(ParseKafkaOptions(c.options), kInvalidArgument, c.expected);
  }
}

TEST(TopicSubscriptionTest, PatternsMatchWholeNames) {
  ASSERT_OK_AND_ASSIGN(TopicSubscription pattern, TopicSubscription::Pattern("pay.*"));
  ASSERT_OK_AND_ASSIGN(bool payments, pattern.Takes("payments"));
  ASSERT_OK_AND_ASSIGN(bool repay, pattern.Takes("repay"));
  EXPECT_TRUE(payments);
  EXPECT_FALSE(repay);  // a match must cover the whole name, as Spark's does
  ASSERT_OK_AND_ASSIGN(TopicSubscription list, TopicSubscription::Topics({"a", "b"}));
  ASSERT_OK_AND_ASSIGN(bool b, list.Takes("b"));
  ASSERT_OK_AND_ASSIGN(bool c, list.Takes("c"));
  EXPECT_TRUE(b);
  EXPECT_FALSE(c);
}

}  // namespace
}  // namespace basin::stream::kafka
