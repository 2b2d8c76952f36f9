#include "engine/variant.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <numeric>

namespace basin::engine {

namespace {

uint64_t ReadLittleEndian(std::string_view bytes, size_t at, int width) {
  uint64_t v = 0;
  for (int i = width - 1; i >= 0; i--) v = v << 8 | static_cast<uint8_t>(bytes[at + i]);
  return v;
}

Status Malformed(const std::string& what) { return Status::Corruption("malformed variant " + what); }

// Reads `count` little-endian integers of `width` bytes starting at `at`.
// REQUIRES: the bytes are there.
std::vector<uint64_t> ReadOffsets(std::string_view bytes, size_t at, uint64_t count, int width) {
  std::vector<uint64_t> out(count);
  for (uint64_t i = 0; i < count; i++) out[i] = ReadLittleEndian(bytes, at + i * width, width);
  return out;
}

enum BasicType { kPrimitive = 0, kShortString = 1, kObject = 2, kArray = 3 };

// The element count, the table of offsets (count + 1 of them, relative to the first value)
// and where the values start, for an object or array value.
struct ContainerLayout {
  uint64_t count = 0;
  size_t ids_at = 0;  // objects only
  int id_size = 0;
  std::vector<uint64_t> offsets;
  std::string_view values;
};

Result<ContainerLayout> ReadContainer(std::string_view v, bool is_object) {
  const char* what = is_object ? "object" : "array";
  auto header = static_cast<uint8_t>(v[0]) >> 2;
  int offset_size = (header & 0x3) + 1;
  ContainerLayout layout;
  layout.id_size = is_object ? ((header >> 2) & 0x3) + 1 : 0;
  bool is_large = is_object ? (header >> 4) & 1 : (header >> 2) & 1;
  int count_size = is_large ? 4 : 1;
  if (v.size() < 1u + count_size) return Malformed(std::string(what) + ": truncated element count");
  layout.count = ReadLittleEndian(v, 1, count_size);
  layout.ids_at = 1 + count_size;
  // Bounds are checked in 64 bits before anything is allocated: count is at most 2^32 - 1.
  uint64_t offsets_at = layout.ids_at + layout.count * layout.id_size;
  uint64_t values_at = offsets_at + (layout.count + 1) * offset_size;
  if (values_at > v.size()) {
    return Malformed(std::string(what) + ": " + std::to_string(layout.count) + " elements do not fit in " +
                     std::to_string(v.size()) + " bytes");
  }
  layout.offsets = ReadOffsets(v, offsets_at, layout.count + 1, offset_size);
  if (values_at + layout.offsets.back() != v.size()) {
    return Malformed(std::string(what) + ": its values end at byte " +
                     std::to_string(values_at + layout.offsets.back()) + " of " + std::to_string(v.size()));
  }
  layout.values = v.substr(values_at);
  return layout;
}

// The values of an array, each as exactly its own bytes. Elements are stored in order.
Result<std::vector<std::string_view>> ArrayElements(std::string_view v) {
  ASSIGN_OR_RETURN(ContainerLayout layout, ReadContainer(v, false));
  std::vector<std::string_view> out;
  out.reserve(layout.count);
  if (layout.offsets[0] != 0) return Malformed("array: first element offset is not 0");
  for (uint64_t i = 0; i < layout.count; i++) {
    if (layout.offsets[i + 1] <= layout.offsets[i] || layout.offsets[i + 1] > layout.values.size()) {
      return Malformed("array: element " + std::to_string(i) + " has offsets out of order or out of bounds");
    }
    out.push_back(layout.values.substr(layout.offsets[i], layout.offsets[i + 1] - layout.offsets[i]));
  }
  return out;
}

// The fields of an object as (key, bytes of the value). Values may be stored in any order
// but must tile the value area without overlapping, so each byte is decoded once.
Result<std::vector<std::pair<std::string_view, std::string_view>>> ObjectFields(
    const VariantMetadata& metadata, std::string_view v) {
  ASSIGN_OR_RETURN(ContainerLayout layout, ReadContainer(v, true));
  const uint64_t total = layout.offsets.back();
  std::vector<uint64_t> order(layout.count);
  std::iota(order.begin(), order.end(), uint64_t{0});
  std::sort(order.begin(), order.end(),
            [&](uint64_t a, uint64_t b) { return layout.offsets[a] < layout.offsets[b]; });
  std::vector<uint64_t> ends(layout.count);
  for (uint64_t k = 0; k < layout.count; k++) {
    uint64_t start = layout.offsets[order[k]];
    uint64_t end = k + 1 < layout.count ? layout.offsets[order[k + 1]] : total;
    if (k == 0 && start != 0) return Malformed("object: no field value starts at offset 0");
    if (end <= start) return Malformed("object: field values overlap or lie outside the object");
    ends[order[k]] = end;
  }
  std::vector<std::pair<std::string_view, std::string_view>> out;
  out.reserve(layout.count);
  for (uint64_t i = 0; i < layout.count; i++) {
    auto id = static_cast<uint32_t>(ReadLittleEndian(v, layout.ids_at + i * layout.id_size, layout.id_size));
    ASSIGN_OR_RETURN(std::string_view key, metadata.Key(id));
    uint64_t start = layout.offsets[i];
    out.emplace_back(key, layout.values.substr(start, ends[i] - start));
  }
  std::vector<std::string_view> keys;
  keys.reserve(out.size());
  for (const auto& field : out) keys.push_back(field.first);
  std::sort(keys.begin(), keys.end());
  auto duplicate = std::adjacent_find(keys.begin(), keys.end());
  if (duplicate != keys.end()) return Malformed("object: duplicate key '" + std::string(*duplicate) + "'");
  return out;
}

template <typename T>
T ReadAs(std::string_view data) {
  return static_cast<T>(ReadLittleEndian(data, 0, sizeof(T)));
}

// Renders one encoded value into `out`.
class JsonWriter {
 public:
  JsonWriter(const VariantMetadata& metadata, std::string* out) : metadata_(metadata), out_(out) {}

  // `v` must be exactly one value.
  Status Write(std::string_view v, int depth) {
    if (v.empty()) return Malformed("value: empty");
    auto basic_type = static_cast<BasicType>(static_cast<uint8_t>(v[0]) & 0x3);
    int header = static_cast<uint8_t>(v[0]) >> 2;
    switch (basic_type) {
      case kPrimitive:
        return WritePrimitive(header, v.substr(1));
      case kShortString:
        if (v.size() != 1u + header) return SizeMismatch("short string", 1 + header, v.size());
        return variant_json::AppendString(v.substr(1), out_);
      case kObject: {
        if (depth >= kMaxVariantDepth) return NestedTooDeep();
        ASSIGN_OR_RETURN(auto fields, ObjectFields(metadata_, v));
        out_->push_back('{');
        for (size_t i = 0; i < fields.size(); i++) {
          if (i > 0) out_->push_back(',');
          RETURN_IF_ERROR(variant_json::AppendString(fields[i].first, out_));
          out_->push_back(':');
          RETURN_IF_ERROR(Write(fields[i].second, depth + 1));
        }
        out_->push_back('}');
        return Status::OK();
      }
      case kArray: {
        if (depth >= kMaxVariantDepth) return NestedTooDeep();
        ASSIGN_OR_RETURN(auto elements, ArrayElements(v));
        out_->push_back('[');
        for (size_t i = 0; i < elements.size(); i++) {
          if (i > 0) out_->push_back(',');
          RETURN_IF_ERROR(Write(elements[i], depth + 1));
        }
        out_->push_back(']');
        return Status::OK();
      }
    }
    return Status::Internal("unreachable variant basic type");
  }

 private:
  static Status SizeMismatch(const char* type, size_t expected, size_t actual) {
    return Malformed(std::string("value: ") + type + " takes " + std::to_string(expected) + " bytes, not " +
                     std::to_string(actual));
  }
  static Status NestedTooDeep() {
    return Malformed("value: nested deeper than " + std::to_string(kMaxVariantDepth) + " levels");
  }

  // Checks that a fixed-width primitive's data has exactly `size` bytes.
  static Status Expect(std::string_view data, size_t size, const char* type) {
    return data.size() == size ? Status::OK() : SizeMismatch(type, size + 1, data.size() + 1);
  }

  Status WriteDecimal(std::string_view data, int width, const char* type) {
    RETURN_IF_ERROR(Expect(data, 1 + width, type));
    int scale = static_cast<uint8_t>(data[0]);
    unsigned __int128 raw = 0;
    for (int i = width - 1; i >= 0; i--) raw = raw << 8 | static_cast<uint8_t>(data[1 + i]);
    // Sign-extend the little-endian two's complement value to 128 bits.
    if (width < 16 && (raw >> (width * 8 - 1)) & 1)
      raw |= ~((static_cast<unsigned __int128>(1) << (width * 8)) - 1);
    return variant_json::AppendDecimal(static_cast<__int128>(raw), scale, out_);
  }

  Status WriteTimestamp(std::string_view data, variant_json::TimeUnit unit, bool utc) {
    RETURN_IF_ERROR(Expect(data, 8, "timestamp"));
    variant_json::AppendTimestamp(ReadAs<int64_t>(data), unit, utc, out_);
    return Status::OK();
  }

  template <typename T>
  Status WriteInt(std::string_view data, const char* type) {
    RETURN_IF_ERROR(Expect(data, sizeof(T), type));
    variant_json::AppendInt(ReadAs<T>(data), out_);
    return Status::OK();
  }

  template <typename Float, typename Bits>
  Status WriteFloating(std::string_view data, const char* type) {
    RETURN_IF_ERROR(Expect(data, sizeof(Bits), type));
    Bits bits = ReadAs<Bits>(data);
    Float value;
    std::memcpy(&value, &bits, sizeof value);
    if constexpr (sizeof(Float) == 4) {
      variant_json::AppendFloat(value, out_);
    } else {
      variant_json::AppendDouble(value, out_);
    }
    return Status::OK();
  }

  Status WriteLiteral(std::string_view data, const char* literal) {
    RETURN_IF_ERROR(Expect(data, 0, literal));
    out_->append(literal);
    return Status::OK();
  }

  // Binary and long strings: a 4-byte length, then the bytes.
  Status WriteSized(std::string_view data, bool is_string) {
    const char* type = is_string ? "string" : "binary";
    if (data.size() < 4) return SizeMismatch(type, 5, data.size() + 1);
    uint64_t length = ReadLittleEndian(data, 0, 4);
    RETURN_IF_ERROR(Expect(data, 4 + length, type));
    if (is_string) return variant_json::AppendString(data.substr(4), out_);
    variant_json::AppendBinary(data.substr(4), out_);
    return Status::OK();
  }

  // Type ids from the primitive types table of VariantEncoding.md.
  Status WritePrimitive(int type_id, std::string_view data) {
    using variant_json::TimeUnit;
    switch (type_id) {
      case 0:
        return WriteLiteral(data, "null");
      case 1:
        return WriteLiteral(data, "true");
      case 2:
        return WriteLiteral(data, "false");
      case 3:
        return WriteInt<int8_t>(data, "int8");
      case 4:
        return WriteInt<int16_t>(data, "int16");
      case 5:
        return WriteInt<int32_t>(data, "int32");
      case 6:
        return WriteInt<int64_t>(data, "int64");
      case 7:
        return WriteFloating<double, uint64_t>(data, "double");
      case 8:
        return WriteDecimal(data, 4, "decimal4");
      case 9:
        return WriteDecimal(data, 8, "decimal8");
      case 10:
        return WriteDecimal(data, 16, "decimal16");
      case 11:
        RETURN_IF_ERROR(Expect(data, 4, "date"));
        variant_json::AppendDate(ReadAs<int32_t>(data), out_);
        return Status::OK();
      case 12:
        return WriteTimestamp(data, TimeUnit::kMicros, true);
      case 13:
        return WriteTimestamp(data, TimeUnit::kMicros, false);
      case 14:
        return WriteFloating<float, uint32_t>(data, "float");
      case 15:
        return WriteSized(data, false);
      case 16:
        return WriteSized(data, true);
      case 17:
        RETURN_IF_ERROR(Expect(data, 8, "time"));
        return variant_json::AppendTime(ReadAs<int64_t>(data), out_);
      case 18:
        return WriteTimestamp(data, TimeUnit::kNanos, true);
      case 19:
        return WriteTimestamp(data, TimeUnit::kNanos, false);
      case 20:
        RETURN_IF_ERROR(Expect(data, 16, "uuid"));
        variant_json::AppendUuid(reinterpret_cast<const uint8_t*>(data.data()), out_);
        return Status::OK();
      default:
        return Malformed("value: unknown primitive type id " + std::to_string(type_id));
    }
  }

  const VariantMetadata& metadata_;
  std::string* out_;
};

void AppendDigits(uint64_t value, int min_width, std::string* out) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  for (int pad = min_width - static_cast<int>(end - buf); pad > 0; pad--) out->push_back('0');
  out->append(buf, end);
}

// "YYYY-MM-DD" for days since 1970-01-01 in the proleptic Gregorian calendar.
void AppendCivilDate(int64_t days, std::string* out) {
  // Count from 0000-03-01 so that leap days fall at the end of each 400-year era.
  int64_t z = days + 719468;
  int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  int64_t day_of_era = z - era * 146097;
  int64_t year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;
  int64_t day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
  int64_t month_from_march = (5 * day_of_year + 2) / 153;
  int64_t day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
  int64_t month = month_from_march < 10 ? month_from_march + 3 : month_from_march - 9;
  int64_t year = year_of_era + era * 400 + (month <= 2 ? 1 : 0);
  if (year < 0) out->push_back('-');
  AppendDigits(static_cast<uint64_t>(year < 0 ? -year : year), 4, out);
  out->push_back('-');
  AppendDigits(static_cast<uint64_t>(month), 2, out);
  out->push_back('-');
  AppendDigits(static_cast<uint64_t>(day), 2, out);
}

// "HH:MM:SS" plus a fraction without trailing zeros, for `ticks` since midnight.
// REQUIRES: 0 <= ticks < one day.
void AppendTimeOfDay(int64_t ticks, int64_t ticks_per_second, int fraction_digits, std::string* out) {
  int64_t seconds = ticks / ticks_per_second;
  int64_t fraction = ticks % ticks_per_second;
  AppendDigits(static_cast<uint64_t>(seconds / 3600), 2, out);
  out->push_back(':');
  AppendDigits(static_cast<uint64_t>(seconds / 60 % 60), 2, out);
  out->push_back(':');
  AppendDigits(static_cast<uint64_t>(seconds % 60), 2, out);
  if (fraction == 0) return;
  while (fraction % 10 == 0) {
    fraction /= 10;
    fraction_digits--;
  }
  out->push_back('.');
  AppendDigits(static_cast<uint64_t>(fraction), fraction_digits, out);
}

}  // namespace

Result<size_t> VariantMetadata::EncodedSize(std::string_view bytes) {
  if (bytes.empty()) return Malformed("metadata: empty");
  auto header = static_cast<uint8_t>(bytes[0]);
  if ((header & 0x0F) != 1)
    return Malformed("metadata: version " + std::to_string(header & 0x0F) + ", expected 1");
  int offset_size = ((header >> 6) & 0x3) + 1;
  if (bytes.size() < 1u + offset_size) return Malformed("metadata: truncated dictionary size");
  uint64_t count = ReadLittleEndian(bytes, 1, offset_size);
  uint64_t strings_start = 1 + offset_size + (count + 1) * offset_size;
  if (strings_start > bytes.size()) {
    return Malformed("metadata: " + std::to_string(count) + " dictionary offsets do not fit in " +
                     std::to_string(bytes.size()) + " bytes");
  }
  uint64_t previous = 0;
  for (uint64_t i = 0; i <= count; i++) {
    uint64_t offset = ReadLittleEndian(bytes, 1 + offset_size + i * offset_size, offset_size);
    if (offset < previous || (i == 0 && offset != 0))
      return Malformed("metadata: dictionary offsets out of order");
    previous = offset;
  }
  if (strings_start + previous > bytes.size()) return Malformed("metadata: dictionary strings truncated");
  return static_cast<size_t>(strings_start + previous);
}

Result<VariantMetadata> VariantMetadata::Parse(std::string_view bytes) {
  ASSIGN_OR_RETURN(size_t size, EncodedSize(bytes));
  if (size != bytes.size()) {
    return Malformed("metadata: " + std::to_string(bytes.size() - size) + " bytes after the dictionary");
  }
  VariantMetadata out;
  out.bytes_ = bytes;
  out.offset_size_ = ((static_cast<uint8_t>(bytes[0]) >> 6) & 0x3) + 1;
  out.dictionary_size_ = static_cast<uint32_t>(ReadLittleEndian(bytes, 1, out.offset_size_));
  out.strings_start_ =
      1 + out.offset_size_ + (static_cast<size_t>(out.dictionary_size_) + 1) * out.offset_size_;
  return out;
}

Result<std::string_view> VariantMetadata::Key(uint32_t id) const {
  if (id >= dictionary_size_) {
    return Malformed("value: field id " + std::to_string(id) + " is not in the dictionary of " +
                     std::to_string(dictionary_size_) + " keys");
  }
  size_t at = 1 + offset_size_ + static_cast<size_t>(id) * offset_size_;
  uint64_t start = ReadLittleEndian(bytes_, at, offset_size_);
  uint64_t end = ReadLittleEndian(bytes_, at + offset_size_, offset_size_);
  return bytes_.substr(strings_start_ + start, end - start);
}

Status AppendVariantJson(const VariantMetadata& metadata, std::string_view value, std::string* out) {
  return JsonWriter(metadata, out).Write(value, 0);
}

Result<std::string> VariantToJson(std::string_view metadata, std::string_view value) {
  ASSIGN_OR_RETURN(VariantMetadata parsed, VariantMetadata::Parse(metadata));
  std::string out;
  RETURN_IF_ERROR(AppendVariantJson(parsed, value, &out));
  return out;
}

Result<std::vector<std::pair<std::string_view, std::string>>> VariantObjectFieldsJson(
    const VariantMetadata& metadata, std::string_view value) {
  if (value.empty() || (static_cast<uint8_t>(value[0]) & 0x3) != kObject) {
    return Malformed("value: expected an object");
  }
  ASSIGN_OR_RETURN(auto fields, ObjectFields(metadata, value));
  std::vector<std::pair<std::string_view, std::string>> out;
  out.reserve(fields.size());
  for (const auto& [key, bytes] : fields) {
    std::string json;
    RETURN_IF_ERROR(JsonWriter(metadata, &json).Write(bytes, 1));
    out.emplace_back(key, std::move(json));
  }
  return out;
}

namespace variant_json {

Status AppendString(std::string_view utf8, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->push_back('"');
  for (size_t i = 0; i < utf8.size();) {
    auto c = static_cast<uint8_t>(utf8[i]);
    if (c < 0x80) {
      switch (c) {
        case '"':
          out->append("\\\"");
          break;
        case '\\':
          out->append("\\\\");
          break;
        case '\b':
          out->append("\\b");
          break;
        case '\f':
          out->append("\\f");
          break;
        case '\n':
          out->append("\\n");
          break;
        case '\r':
          out->append("\\r");
          break;
        case '\t':
          out->append("\\t");
          break;
        default:
          if (c < 0x20) {
            out->append("\\u00");
            out->push_back(kHex[c >> 4]);
            out->push_back(kHex[c & 0xF]);
          } else {
            out->push_back(static_cast<char>(c));
          }
      }
      i++;
      continue;
    }
    // Lead byte: sequence length and the range of the second byte that excludes overlong
    // forms, surrogates and code points above U+10FFFF.
    size_t length = 0;
    uint8_t low = 0x80, high = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
      length = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      length = 3;
      if (c == 0xE0) low = 0xA0;
      if (c == 0xED) high = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      length = 4;
      if (c == 0xF0) low = 0x90;
      if (c == 0xF4) high = 0x8F;
    }
    bool valid = length > 0 && i + length <= utf8.size();
    for (size_t k = 1; valid && k < length; k++) {
      auto b = static_cast<uint8_t>(utf8[i + k]);
      valid = k == 1 ? (b >= low && b <= high) : (b >= 0x80 && b <= 0xBF);
    }
    if (!valid) return Malformed("string: invalid UTF-8 at byte " + std::to_string(i));
    out->append(utf8.substr(i, length));
    i += length;
  }
  out->push_back('"');
  return Status::OK();
}

void AppendBinary(std::string_view bytes, std::string* out) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  out->push_back('"');
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    uint32_t n = static_cast<uint8_t>(bytes[i]) << 16 | static_cast<uint8_t>(bytes[i + 1]) << 8 |
                 static_cast<uint8_t>(bytes[i + 2]);
    for (int shift = 18; shift >= 0; shift -= 6) out->push_back(kAlphabet[(n >> shift) & 0x3F]);
  }
  size_t rest = bytes.size() - i;
  if (rest > 0) {
    uint32_t n = static_cast<uint8_t>(bytes[i]) << 16;
    if (rest == 2) n |= static_cast<uint8_t>(bytes[i + 1]) << 8;
    out->push_back(kAlphabet[(n >> 18) & 0x3F]);
    out->push_back(kAlphabet[(n >> 12) & 0x3F]);
    out->push_back(rest == 2 ? kAlphabet[(n >> 6) & 0x3F] : '=');
    out->push_back('=');
  }
  out->push_back('"');
}

void AppendInt(int64_t value, std::string* out) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  out->append(buf, end);
}

namespace {
// JSON has no NaN or infinities; they become strings.
template <typename T>
void AppendFloating(T value, std::string* out) {
  if (std::isnan(value)) {
    out->append("\"NaN\"");
  } else if (std::isinf(value)) {
    out->append(value > 0 ? "\"Infinity\"" : "\"-Infinity\"");
  } else {
    char buf[64];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
    out->append(buf, end);
  }
}
}  // namespace

void AppendFloat(float value, std::string* out) { AppendFloating(value, out); }
void AppendDouble(double value, std::string* out) { AppendFloating(value, out); }

Status AppendDecimal(__int128 unscaled, int scale, std::string* out) {
  if (scale < 0 || scale > 38)
    return Malformed("decimal: scale " + std::to_string(scale) + " outside [0, 38]");
  bool negative = unscaled < 0;
  // Negating in unsigned arithmetic is defined for the most negative value too.
  auto magnitude = static_cast<unsigned __int128>(unscaled);
  if (negative) magnitude = ~magnitude + 1;
  std::string digits;
  do {
    digits.push_back(static_cast<char>('0' + static_cast<int>(magnitude % 10)));
    magnitude /= 10;
  } while (magnitude != 0);
  while (digits.size() <= static_cast<size_t>(scale)) digits.push_back('0');
  std::reverse(digits.begin(), digits.end());
  if (negative) out->push_back('-');
  out->append(digits, 0, digits.size() - scale);
  if (scale > 0) {
    out->push_back('.');
    out->append(digits, digits.size() - scale, scale);
  }
  return Status::OK();
}

void AppendDate(int32_t days, std::string* out) {
  out->push_back('"');
  AppendCivilDate(days, out);
  out->push_back('"');
}

Status AppendTime(int64_t micros, std::string* out) {
  constexpr int64_t kMicrosPerDay = int64_t{86400} * 1000000;
  if (micros < 0 || micros >= kMicrosPerDay)
    return Malformed("time: " + std::to_string(micros) + " is not in one day");
  out->push_back('"');
  AppendTimeOfDay(micros, 1000000, 6, out);
  out->push_back('"');
  return Status::OK();
}

void AppendTimestamp(int64_t ticks, TimeUnit unit, bool utc, std::string* out) {
  const int64_t per_second = unit == TimeUnit::kMicros ? 1000000 : 1000000000;
  const int64_t per_day = per_second * 86400;
  int64_t days = ticks / per_day;
  int64_t rest = ticks % per_day;
  if (rest < 0) {
    rest += per_day;
    days--;
  }
  out->push_back('"');
  AppendCivilDate(days, out);
  out->push_back(' ');
  AppendTimeOfDay(rest, per_second, unit == TimeUnit::kMicros ? 6 : 9, out);
  if (utc) out->append("+00:00");
  out->push_back('"');
}

void AppendUuid(const uint8_t* bytes, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->push_back('"');
  for (int i = 0; i < 16; i++) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out->push_back('-');
    out->push_back(kHex[bytes[i] >> 4]);
    out->push_back(kHex[bytes[i] & 0xF]);
  }
  out->push_back('"');
}

}  // namespace variant_json

}  // namespace basin::engine
