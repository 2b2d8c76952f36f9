#include "commands/maintenance_internal.h"

#include <cctype>
#include <chrono>
#include <string>

namespace basin::commands::internal {

WriteTarget TargetOf(const delta::Snapshot& table) {
  WriteTarget target;
  target.store = table.store;
  target.table_root = table.table_root;
  target.protocol = table.protocol;
  target.metadata = table.metadata;
  target.schema = table.schema;
  return target;
}

Result<int64_t> TargetFileSizeBytes(const delta::Metadata& metadata) {
  constexpr int64_t kDefault = int64_t{128} << 20;
  auto it = metadata.configuration.find("delta.targetFileSize");
  if (it == metadata.configuration.end()) return kDefault;
  std::string text;
  for (char c : it->second) {
    if (!std::isspace(static_cast<unsigned char>(c)))
      text += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  auto bad = [&] {
    return Status::InvalidArgument("table property delta.targetFileSize: '" + it->second +
                                   "' is not a size in bytes (e.g. 134217728 or 128mb)");
  };
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) digits++;
  if (digits == 0 || digits > 15) return bad();
  int64_t value = std::stoll(text.substr(0, digits));
  std::string unit = text.substr(digits);
  if (!unit.empty() && unit.back() == 'b') unit.pop_back();
  int shift = 0;
  if (unit == "k") {
    shift = 10;
  } else if (unit == "m") {
    shift = 20;
  } else if (unit == "g") {
    shift = 30;
  } else if (!unit.empty()) {
    return bad();
  }
  if (value <= 0 || value > (int64_t{1} << (62 - shift))) return bad();
  return value << shift;
}

int64_t NowMs(const delta::TransactionOptions& options) {
  if (options.clock_ms) return options.clock_ms();
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace basin::commands::internal
