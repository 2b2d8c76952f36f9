// Feeds arbitrary bytes to the Variant decoder, split into metadata and value twice: where
// the metadata's own header says it ends (so fuzzing reaches the value decoder with valid
// metadata) and at a split chosen by the first byte. Any outcome but a crash, a sanitizer
// report, or JSON output that does not parse is fine.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>

#include "engine/variant.h"

namespace {

void Decode(std::string_view metadata, std::string_view value) {
  auto json = basin::engine::VariantToJson(metadata, value);
  if (json.ok() && !nlohmann::json::accept(*json)) __builtin_trap();
  auto parsed = basin::engine::VariantMetadata::Parse(metadata);
  if (!parsed.ok()) return;
  auto fields = basin::engine::VariantObjectFieldsJson(*parsed, value);
  if (!fields.ok()) return;
  for (const auto& [key, field_json] : *fields) {
    if (!nlohmann::json::accept(field_json)) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto metadata_size = basin::engine::VariantMetadata::EncodedSize(bytes);
  if (metadata_size.ok()) Decode(bytes.substr(0, *metadata_size), bytes.substr(*metadata_size));
  if (size < 1) return 0;
  size_t split = 1 + static_cast<size_t>(data[0]) % size;
  Decode(bytes.substr(1, split - 1), bytes.substr(split));
  return 0;
}
