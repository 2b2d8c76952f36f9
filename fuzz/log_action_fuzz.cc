// libFuzzer target: arbitrary bytes as a Delta commit file, a schema string, a log file
// name, a data path and a time-travel timestamp. The parsers must return Status on any
// input, and every action they accept must survive a serialize/parse round trip.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "delta/actions.h"
#include "delta/history.h"
#include "delta/log_segment.h"
#include "delta/paths.h"
#include "delta/schema.h"

using namespace basin;
using namespace basin::delta;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);

  auto actions = ParseCommitFile(input, "_delta_log/00000000000000000000.json");
  if (actions.ok()) {
    for (const auto& action : *actions) {
      std::string line = SerializeAction(action);
      auto again = ParseAction(line, "roundtrip");
      if (!again.ok() || !again->has_value() || SerializeAction(**again) != line) std::abort();
    }
  }

  auto schema = ParseSchema(std::string(input));
  if (schema.ok()) {
    for (const auto& field : schema->fields) {
      (void)field.type->ToDuckDBType();
      (void)field.PhysicalName();
      (void)field.ColumnMappingId();
    }
    auto again =
        ParseSchema(SchemaToJson(*schema).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    if (!again.ok()) std::abort();
  }

  (void)ParseLogFile(ObjectInfo{std::string(kLogFolder) + std::string(input), size, 0});
  std::string decoded = DecodeDataPath(std::string(input));
  (void)IsAbsoluteDataPath(decoded);
  auto ts = ParseTimestampMs(input);
  if (ts.ok()) (void)FormatTimestampMs(*ts);
  return 0;
}
