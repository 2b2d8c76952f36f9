#include "stream/kafka/options.h"

#include <array>
#include <charconv>
#include <limits>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string_view>

#include "common/strings.h"

namespace basin::stream::kafka {

namespace {

constexpr std::string_view kBootstrapServers = "bootstrapServers";
constexpr std::string_view kSparkBootstrapServers = "kafka.bootstrap.servers";
constexpr std::string_view kSubscribe = "subscribe";
constexpr std::string_view kSubscribePattern = "subscribePattern";
constexpr std::string_view kStartingOffsets = "startingOffsets";
constexpr std::string_view kMaxOffsetsPerTrigger = "maxOffsetsPerTrigger";
constexpr std::string_view kClientPrefix = "kafka.";
// The librdkafka property whose value is also the stream's partition discovery interval.
constexpr std::string_view kMetadataRefreshProperty = "topic.metadata.refresh.interval.ms";

// librdkafka properties whose values the reader sets itself: positions come from Basin's
// checkpoint, and the reader recognises a partition's end by its end-of-partition events.
constexpr std::array<std::string_view, 3> kOwnedProperties = {"enable.auto.commit", "auto.offset.reset",
                                                              "enable.partition.eof"};

Status BadValue(std::string_view option, const std::string& value, const std::string& why) {
  return Status::InvalidArgument("Kafka option '" + std::string(option) + "' = '" + value + "': " + why);
}

std::string_view Trim(std::string_view text) {
  constexpr std::string_view kSpace = " \t\r\n";
  const size_t first = text.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(kSpace) - first + 1);
}

// The whole of `text` as a decimal integer.
template <typename Int>
std::optional<Int> ParseInteger(std::string_view text) {
  Int value{};
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// "a, b,c" -> {"a", "b", "c"}, each entry trimmed.
std::vector<std::string> SplitTopicList(std::string_view value) {
  std::vector<std::string> topics;
  // Each pass removes one comma-separated entry, so the loop ends after at most size() + 1.
  while (true) {
    const size_t comma = value.find(',');
    topics.emplace_back(Trim(value.substr(0, comma)));
    if (comma == std::string_view::npos) return topics;
    value.remove_prefix(comma + 1);
  }
}

Result<StartingOffsets> ParseStartingOffsets(const std::string& value,
                                             const TopicSubscription& subscription) {
  const std::string_view text = Trim(value);
  if (EqualsIgnoreCase(text, "earliest")) return StartingOffsets{StartingOffsets::Kind::kEarliest, {}};
  if (EqualsIgnoreCase(text, "latest")) return StartingOffsets{StartingOffsets::Kind::kLatest, {}};
  const nlohmann::json json = nlohmann::json::parse(text, /*cb=*/nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object() || json.empty()) {
    return BadValue(kStartingOffsets, value,
                    "expected earliest, latest or JSON such as {\"topic\":{\"0\":23,\"1\":-2}}");
  }
  StartingOffsets result{StartingOffsets::Kind::kSpecific, {}};
  for (const auto& [topic, partitions] : json.items()) {
    if (!IsValidTopicName(topic))
      return BadValue(kStartingOffsets, value, "'" + topic + "' is not a topic name");
    ASSIGN_OR_RETURN(const bool subscribed, subscription.Takes(topic));
    if (!subscribed) {
      return BadValue(kStartingOffsets, value, "topic '" + topic + "' is not among the subscribed topics");
    }
    if (!partitions.is_object() || partitions.empty()) {
      return BadValue(kStartingOffsets, value,
                      "topic '" + topic + "' must map partition numbers to offsets, as {\"0\":23}");
    }
    for (const auto& [partition_text, offset] : partitions.items()) {
      const std::optional<int32_t> partition = ParseInteger<int32_t>(partition_text);
      if (!partition || *partition < 0) {
        return BadValue(kStartingOffsets, value,
                        "'" + partition_text + "' of topic '" + topic + "' is not a partition number");
      }
      if (!offset.is_number_integer() || offset.get<int64_t>() < kEarliestOffset) {
        return BadValue(kStartingOffsets, value,
                        "the offset of " + topic + "/" + partition_text + " is " + offset.dump() +
                            ", not an offset, -2 (earliest) or -1 (latest)");
      }
      result.offsets[TopicPartition{topic, *partition}] = offset.get<int64_t>();
    }
  }
  return result;
}

Result<int64_t> ParseMaxOffsets(const std::string& value) {
  const std::optional<int64_t> limit = ParseInteger<int64_t>(Trim(value));
  if (!limit || *limit <= 0) return BadValue(kMaxOffsetsPerTrigger, value, "expected a positive integer");
  return *limit;
}

Status CheckClientProperty(const std::string& option, const std::string& name, const std::string& value) {
  for (std::string_view owned : kOwnedProperties) {
    if (name == owned) {
      return BadValue(option, value,
                      "Basin sets this itself: a stream's positions are kept in its checkpoint, "
                      "not by the Kafka client");
    }
  }
  // The same check the reader's client makes when it is configured.
  return NewConf({{name, value}}).status().WithContext("Kafka option '" + option + "'");
}

}  // namespace

Result<TopicSubscription> TopicSubscription::Topics(std::vector<std::string> topics) {
  TopicSubscription subscription;
  for (std::string& topic : topics) {
    if (!IsValidTopicName(topic)) {
      return Status::InvalidArgument("'" + topic +
                                     "' is not a topic name (1 to 249 of the characters a-z A-Z 0-9 . _ -)");
    }
    if (std::find(subscription.topics_.begin(), subscription.topics_.end(), topic) ==
        subscription.topics_.end()) {
      subscription.topics_.push_back(std::move(topic));
    }
  }
  if (subscription.topics_.empty()) return Status::InvalidArgument("no topic given");
  return subscription;
}

Result<TopicSubscription> TopicSubscription::Pattern(std::string pattern) {
  if (Trim(pattern).empty()) return Status::InvalidArgument("the topic pattern is empty");
  TopicSubscription subscription;
  try {
    subscription.matcher_ = std::make_shared<const std::regex>(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& error) {
    return Status::InvalidArgument("not a regular expression: " + std::string(error.what()));
  }
  subscription.pattern_ = std::move(pattern);
  return subscription;
}

Result<bool> TopicSubscription::Takes(const std::string& topic) const {
  if (!matcher_) return std::find(topics_.begin(), topics_.end(), topic) != topics_.end();
  try {
    return std::regex_match(topic, *matcher_);
  } catch (const std::regex_error& error) {
    return Status::InvalidArgument("topic pattern '" + pattern_ + "' cannot be evaluated on '" + topic +
                                   "': " + error.what());
  }
}

Result<KafkaOptions> ParseKafkaOptions(const OptionList& options) {
  KafkaOptions result;
  std::set<std::string> seen;  // lower-cased names
  std::optional<std::string> subscribe;
  std::optional<std::string> pattern;
  std::optional<std::string> starting_offsets;
  OptionList record_options;
  for (const auto& [name, value] : options) {
    if (!seen.insert(AsciiLower(name)).second) {
      return Status::InvalidArgument("Kafka option '" + name + "' is given twice");
    }
    if (IsRecordOption(name)) {
      record_options.emplace_back(name, value);
    } else if (EqualsIgnoreCase(name, kBootstrapServers) || EqualsIgnoreCase(name, kSparkBootstrapServers)) {
      if (!result.bootstrap_servers.empty()) {
        return Status::InvalidArgument(
            "Kafka options 'bootstrapServers' and 'kafka.bootstrap.servers' "
            "name the same setting; give one");
      }
      result.bootstrap_servers = std::string(Trim(value));
      if (result.bootstrap_servers.empty()) return BadValue(name, value, "expected host:port[,host:port...]");
    } else if (EqualsIgnoreCase(name, kSubscribe)) {
      subscribe = value;
    } else if (EqualsIgnoreCase(name, kSubscribePattern)) {
      pattern = value;
    } else if (EqualsIgnoreCase(name, kStartingOffsets)) {
      starting_offsets = value;
    } else if (EqualsIgnoreCase(name, kMaxOffsetsPerTrigger)) {
      ASSIGN_OR_RETURN(result.max_offsets_per_trigger, ParseMaxOffsets(value));
    } else if (name.size() > kClientPrefix.size() &&
               EqualsIgnoreCase(name.substr(0, kClientPrefix.size()), kClientPrefix)) {
      const std::string property = name.substr(kClientPrefix.size());
      RETURN_IF_ERROR(CheckClientProperty(name, property, value));
      if (property == kMetadataRefreshProperty) {
        // librdkafka checked its range (-1 to an hour) above.
        const std::optional<int64_t> interval = ParseInteger<int64_t>(Trim(value));
        if (!interval) return BadValue(name, value, "expected a whole number of milliseconds");
        result.partition_discovery_interval_ms = *interval;
      }
      result.client_properties.emplace_back(property, value);
    } else {
      return Status::InvalidArgument(
          "unknown Kafka option '" + name +
          "' (the options are bootstrapServers, subscribe, subscribePattern, "
          "startingOffsets, maxOffsetsPerTrigger, valueFormat, schema, deadLetterTable, "
          "maxDeadLetterFraction and kafka.<librdkafka property>)");
    }
  }

  if (result.bootstrap_servers.empty()) {
    return Status::InvalidArgument("Kafka option 'bootstrapServers' is required");
  }
  if (subscribe && pattern) {
    return Status::InvalidArgument(
        "Kafka options 'subscribe' and 'subscribePattern' exclude each other; give one");
  }
  if (subscribe || pattern) {
    Result<TopicSubscription> subscription = subscribe ? TopicSubscription::Topics(SplitTopicList(*subscribe))
                                                       : TopicSubscription::Pattern(*pattern);
    if (!subscription.ok()) {
      return BadValue(subscribe ? kSubscribe : kSubscribePattern, subscribe ? *subscribe : *pattern,
                      subscription.status().message());
    }
    result.subscription = std::move(subscription).value();
  } else {
    return Status::InvalidArgument("one of the Kafka options 'subscribe' and 'subscribePattern' is required");
  }
  if (starting_offsets) {
    ASSIGN_OR_RETURN(result.starting_offsets, ParseStartingOffsets(*starting_offsets, result.subscription));
  }
  ASSIGN_OR_RETURN(result.records, ParseRecordOptions(record_options));
  return result;
}

}  // namespace basin::stream::kafka
