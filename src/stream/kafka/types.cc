#include "stream/kafka/types.h"

#include <algorithm>
#include <cctype>

namespace basin::stream::kafka {

std::string ToString(const TopicPartition& tp) { return tp.topic + "/" + std::to_string(tp.partition); }

bool IsValidTopicName(std::string_view name) {
  constexpr size_t kMaxTopicNameLength = 249;
  if (name.empty() || name.size() > kMaxTopicNameLength) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
  });
}

}  // namespace basin::stream::kafka
