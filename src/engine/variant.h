// Decoding of the Variant binary encoding (parquet-format VariantEncoding.md) into JSON
// text, which is how Basin presents Delta `variant` columns.
//
// VariantMetadata is a validated view of a metadata dictionary; VariantToJson and
// AppendVariantJson render one encoded value. The variant_json functions render single
// primitives; the reconstruction of shredded variants (engine/functions.cc) uses them so a
// value reads the same whether it was stored encoded or in a typed Parquet column.
//
// Rendering: objects and arrays as JSON; numbers (integers, float, double, decimals with
// their scale) as JSON numbers, NaN and infinities as the strings "NaN", "Infinity",
// "-Infinity"; dates, times and timestamps as ISO-like strings in UTC ("2024-01-02",
// "12:30:00.5", "2024-01-02 12:30:00.123456+00:00", no offset for timestamps without time
// zone); binary as base64; UUIDs in their 8-4-4-4-12 form.
//
// Every malformed input (bad header or version, offsets out of bounds or overlapping,
// sizes that disagree, unknown type ids, invalid UTF-8, duplicate keys, nesting deeper
// than kMaxVariantDepth) gives Corruption; decoding never reads outside the given bytes.
// Values may not share bytes, so each byte of `value` is decoded once and the output stays
// within a constant times (value size x longest dictionary key), never exponential.
//
// Thread safety: free functions over caller-owned bytes; a VariantMetadata is immutable.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "basin/status.h"

namespace basin::engine {

// Objects and arrays nested deeper than this are refused rather than recursed into.
inline constexpr int kMaxVariantDepth = 128;

// A metadata dictionary. Holds views into the bytes given to Parse, which must outlive it.
class VariantMetadata {
 public:
  // Corruption unless `bytes` is exactly one well-formed metadata: version 1, offsets
  // non-decreasing and inside the string bytes.
  static Result<VariantMetadata> Parse(std::string_view bytes);
  // The length of the metadata at the start of `bytes`, which may continue with other data
  // (e.g. the value). Corruption when the header or offsets are malformed or truncated.
  static Result<size_t> EncodedSize(std::string_view bytes);

  uint32_t dictionary_size() const { return dictionary_size_; }
  // Corruption when `id` is not in the dictionary.
  Result<std::string_view> Key(uint32_t id) const;

 private:
  VariantMetadata() = default;
  std::string_view bytes_;
  uint32_t dictionary_size_ = 0;
  int offset_size_ = 1;
  size_t strings_start_ = 0;
};

// The JSON text of the variant (`metadata`, `value`); `value` must be exactly one value.
Result<std::string> VariantToJson(std::string_view metadata, std::string_view value);

// Appends the JSON of `value`, which must be exactly one encoded value.
Status AppendVariantJson(const VariantMetadata& metadata, std::string_view value, std::string* out);

// The fields of an encoded object as (key, JSON of the value), in their encoded order:
// what a partially shredded object contributes besides its shredded fields. Corruption
// when `value` is not an object.
Result<std::vector<std::pair<std::string_view, std::string>>> VariantObjectFieldsJson(
    const VariantMetadata& metadata, std::string_view value);

namespace variant_json {

enum class TimeUnit { kMicros, kNanos };

// A JSON string; Corruption when `utf8` is not valid UTF-8.
Status AppendString(std::string_view utf8, std::string* out);
// A JSON string holding the base64 (with padding) of `bytes`.
void AppendBinary(std::string_view bytes, std::string* out);
void AppendInt(int64_t value, std::string* out);
void AppendFloat(float value, std::string* out);
void AppendDouble(double value, std::string* out);
// `unscaled` / 10^scale as a JSON number; Corruption when scale is outside [0, 38].
Status AppendDecimal(__int128 unscaled, int scale, std::string* out);
// Days since 1970-01-01.
void AppendDate(int32_t days, std::string* out);
// Microseconds since midnight; Corruption outside one day.
Status AppendTime(int64_t micros, std::string* out);
// Ticks since 1970-01-01 00:00:00 UTC; `utc` adds the "+00:00" offset.
void AppendTimestamp(int64_t ticks, TimeUnit unit, bool utc, std::string* out);
// 16 bytes, most significant first.
void AppendUuid(const uint8_t* bytes, std::string* out);

}  // namespace variant_json

}  // namespace basin::engine
