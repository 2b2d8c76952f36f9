#include "server/pg/types.h"

#include <arpa/inet.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <vector>

#include "common/strings.h"
#include "server/pg/binary_types.h"

namespace basin::server::pg {
namespace {

// How a value of PostgreSQL type `oid` is converted from DuckDB's rendering.
PgType::Text TextFormOf(Oid oid, char category) {
  if (category == 'A') return PgType::Text::kArray;
  switch (oid) {
    case Oid::kBool:
      return PgType::Text::kBool;
    case Oid::kBytea:
      return PgType::Text::kBytea;
    case Oid::kFloat4:
    case Oid::kFloat8:
      return PgType::Text::kFloat;
    case Oid::kInterval:
      return PgType::Text::kInterval;
    default:
      return PgType::Text::kAsIs;
  }
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// DuckDB renders a BLOB's printable bytes as themselves and the others (backslash
// included) as \xHH.
std::string BlobBytes(std::string_view rendered) {
  std::string bytes;
  for (size_t i = 0; i < rendered.size(); i++) {
    if (rendered[i] == '\\' && i + 3 < rendered.size() && rendered[i + 1] == 'x' &&
        HexDigit(rendered[i + 2]) >= 0 && HexDigit(rendered[i + 3]) >= 0) {
      bytes.push_back(static_cast<char>(HexDigit(rendered[i + 2]) * 16 + HexDigit(rendered[i + 3])));
      i += 3;
    } else {
      bytes.push_back(rendered[i]);
    }
  }
  return bytes;
}

std::string HexBytea(std::string_view bytes) { return "\\x" + HexEncode(bytes); }

// PostgreSQL's bytea input: hex ("\x0102") or the escape form's octal escapes.
Result<std::string> ByteaInput(std::string_view text) {
  std::string bytes;
  if (text.starts_with("\\x")) {
    text.remove_prefix(2);
    if (text.size() % 2 != 0)
      return Status::InvalidArgument("invalid hexadecimal bytea: odd number of digits");
    for (size_t i = 0; i < text.size(); i += 2) {
      const int high = HexDigit(text[i]), low = HexDigit(text[i + 1]);
      if (high < 0 || low < 0) return Status::InvalidArgument("invalid hexadecimal digit in bytea");
      bytes.push_back(static_cast<char>(high * 16 + low));
    }
    return bytes;
  }
  for (size_t i = 0; i < text.size(); i++) {
    if (text[i] != '\\') {
      bytes.push_back(text[i]);
    } else if (i + 1 < text.size() && text[i + 1] == '\\') {
      bytes.push_back('\\');
      i++;
    } else if (i + 3 < text.size() && text[i + 1] >= '0' && text[i + 1] <= '3' && text[i + 2] >= '0' &&
               text[i + 2] <= '7' && text[i + 3] >= '0' && text[i + 3] <= '7') {
      bytes.push_back(
          static_cast<char>((text[i + 1] - '0') * 64 + (text[i + 2] - '0') * 8 + (text[i + 3] - '0')));
      i += 3;
    } else {
      return Status::InvalidArgument("invalid escape in bytea");
    }
  }
  return bytes;
}

std::string FloatText(std::string cell) {
  if (cell == "inf") return "Infinity";
  if (cell == "-inf") return "-Infinity";
  if (cell == "nan" || cell == "-nan") return "NaN";
  // DuckDB writes whole doubles as "2.0", PostgreSQL as "2".
  if (cell.ends_with(".0") && cell.find('e') == std::string::npos) cell.resize(cell.size() - 2);
  return cell;
}

// DuckDB's "2 months" is PostgreSQL's "2 mons".
std::string IntervalText(const std::string& cell) {
  std::string out;
  size_t start = 0;
  while (start <= cell.size()) {
    size_t end = cell.find(' ', start);
    if (end == std::string::npos) end = cell.size();
    std::string_view word(cell.data() + start, end - start);
    if (word == "months") word = "mons";
    if (word == "month") word = "mon";
    if (!out.empty()) out.push_back(' ');
    out.append(word);
    start = end + 1;
  }
  return out;
}

// DuckDB's "[1, 2, NULL]" (nested lists included) as PostgreSQL's "{1,2,NULL}"; elements
// holding a space (timestamps) are quoted, as PostgreSQL quotes them.
std::string ArrayText(std::string_view cell) {
  std::string out;
  std::string element;
  auto flush = [&] {
    if (element.empty()) return;
    const bool quote = element.find(' ') != std::string::npos;
    if (quote) out.push_back('"');
    out += element == "inf"    ? "Infinity"
           : element == "-inf" ? "-Infinity"
           : element == "nan"  ? "NaN"
                               : element;
    if (quote) out.push_back('"');
    element.clear();
  };
  for (size_t i = 0; i < cell.size(); i++) {
    const char c = cell[i];
    if (c == '[') {
      out.push_back('{');
    } else if (c == ']') {
      flush();
      out.push_back('}');
    } else if (c == ',') {
      flush();
      out.push_back(',');
      if (i + 1 < cell.size() && cell[i + 1] == ' ') i++;
    } else {
      element.push_back(c);
    }
  }
  return out;
}

std::string Quote(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    out.push_back(c);
    if (c == '\'') out.push_back('\'');
  }
  return out + "'";
}

template <typename T>
Result<T> ParseNumber(const std::string& text, std::string_view what) {
  T value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return Status::InvalidArgument("'" + text + "' is not a valid " + std::string(what));
  }
  return value;
}

Result<double> ParseFloat(const std::string& text) {
  if (text == "Infinity") return std::numeric_limits<double>::infinity();
  if (text == "-Infinity") return -std::numeric_limits<double>::infinity();
  if (text == "NaN") return std::numeric_limits<double>::quiet_NaN();
  return ParseNumber<double>(text, "float");
}

// The DuckDB type a parameter of type `oid` is cast to; empty for text and unknown ones.
std::string_view CastTypeOf(Oid oid) {
  switch (oid) {
    case Oid::kBool:
      return "BOOLEAN";
    case Oid::kInt2:
      return "SMALLINT";
    case Oid::kInt4:
      return "INTEGER";
    case Oid::kInt8:
      return "BIGINT";
    case Oid::kFloat4:
      return "FLOAT";
    case Oid::kFloat8:
      return "DOUBLE";
    case Oid::kNumeric:
      return "DECIMAL(38,10)";
    case Oid::kDate:
      return "DATE";
    case Oid::kTime:
      return "TIME";
    case Oid::kTimestamp:
      return "TIMESTAMP";
    case Oid::kTimestamptz:
      return "TIMESTAMP WITH TIME ZONE";
    case Oid::kInterval:
      return "INTERVAL";
    case Oid::kUuid:
      return "UUID";
    case Oid::kJson:
      return "JSON";
    default:
      return "";
  }
}

}  // namespace

PgType PgTypeOf(std::string_view duckdb_type) {
  const engine::PgTypeInfo* type =
      engine::FindPgType(static_cast<int32_t>(engine::PgColumnTypeOf(duckdb_type).oid));
  if (type == nullptr) return PgType{};
  return PgType{type->oid, type->length, TextFormOf(type->oid, type->category)};
}

std::string ToPgText(const PgType& type, std::string cell) {
  switch (type.text) {
    case PgType::Text::kAsIs:
      return cell;
    case PgType::Text::kBool:
      return cell == "true" ? "t" : cell == "false" ? "f" : cell;
    case PgType::Text::kBytea:
      return HexBytea(BlobBytes(cell));
    case PgType::Text::kFloat:
      return FloatText(std::move(cell));
    case PgType::Text::kInterval:
      return IntervalText(cell);
    case PgType::Text::kArray:
      return ArrayText(cell);
  }
  return cell;
}

namespace {

// A one-dimensional array in PostgreSQL's binary layout, from its text form (ArrayText's
// "{1,NULL,3}"): the dimension count, whether an element is NULL, the element type, each
// dimension's length and lower bound (1), then each element as its length (-1 for NULL)
// and its binary form.
Result<std::string> ArrayBinary(const engine::PgTypeInfo& array, const std::string& text) {
  const auto element = static_cast<Oid>(array.element);
  if (text.size() < 2 || text.front() != '{' || text.back() != '}') {
    return Status::InvalidArgument("not a " + std::string(array.sql_name) + " value: " + text);
  }
  const std::string_view inner = std::string_view(text).substr(1, text.size() - 2);
  if (inner.find('{') != std::string_view::npos) {
    return Status::NotImplemented("the binary format of a " + std::string(array.sql_name) +
                                  " value with nested arrays (ask for the text format, 0)");
  }
  std::vector<std::optional<std::string>> elements;
  for (size_t start = 0; !inner.empty() && start <= inner.size();) {
    const size_t comma = std::min(inner.find(',', start), inner.size());
    std::string_view part = inner.substr(start, comma - start);
    start = comma + 1;
    if (part.size() >= 2 && part.front() == '"' && part.back() == '"') part = part.substr(1, part.size() - 2);
    if (part == "NULL") {
      elements.emplace_back();
      continue;
    }
    std::string value(part);
    if (element == Oid::kBool) value = value == "true" ? "t" : value == "false" ? "f" : value;
    elements.emplace_back(std::move(value));
  }
  const bool has_null = std::any_of(elements.begin(), elements.end(), [](const auto& e) { return !e; });
  std::string out = BigEndian(static_cast<uint32_t>(elements.empty() ? 0 : 1)) +
                    BigEndian(static_cast<uint32_t>(has_null ? 1 : 0)) +
                    BigEndian(static_cast<uint32_t>(array.element));
  if (elements.empty()) return out;
  out += BigEndian(static_cast<uint32_t>(elements.size())) + BigEndian(uint32_t{1});
  const PgType element_type = PgType{element, -1, PgType::Text::kAsIs};
  for (const std::optional<std::string>& value : elements) {
    if (!value) {
      out += BigEndian(static_cast<uint32_t>(-1));
      continue;
    }
    ASSIGN_OR_RETURN(std::string bytes, ToPgBinary(element_type, *value));
    out += BigEndian(static_cast<uint32_t>(bytes.size())) + bytes;
  }
  return out;
}

}  // namespace

Result<std::string> ToPgBinary(const PgType& type, const std::string& text) {
  if (const engine::PgTypeInfo* info = engine::FindPgType(static_cast<int32_t>(type.oid));
      info != nullptr && info->element != 0) {
    return ArrayBinary(*info, text);
  }
  switch (type.oid) {
    case Oid::kBool:
      return std::string(1, text == "t" ? '\1' : '\0');
    case Oid::kInt2: {
      ASSIGN_OR_RETURN(int16_t value, ParseNumber<int16_t>(text, "smallint"));
      return BigEndian(static_cast<uint16_t>(value));
    }
    case Oid::kInt4: {
      ASSIGN_OR_RETURN(int32_t value, ParseNumber<int32_t>(text, "integer"));
      return BigEndian(static_cast<uint32_t>(value));
    }
    case Oid::kInt8: {
      ASSIGN_OR_RETURN(int64_t value, ParseNumber<int64_t>(text, "bigint"));
      return BigEndian(static_cast<uint64_t>(value));
    }
    case Oid::kFloat4: {
      ASSIGN_OR_RETURN(double value, ParseFloat(text));
      const float narrow = static_cast<float>(value);
      uint32_t bits = 0;
      std::memcpy(&bits, &narrow, 4);
      return BigEndian(bits);
    }
    case Oid::kFloat8: {
      ASSIGN_OR_RETURN(double value, ParseFloat(text));
      uint64_t bits = 0;
      std::memcpy(&bits, &value, 8);
      return BigEndian(bits);
    }
    case Oid::kText:
    case Oid::kVarchar:
    case Oid::kJson:
      return text;
    case Oid::kBytea:
      return ByteaInput(text);
    default:
      if (HasBinaryLayout(type.oid)) return EncodeBinary(type.oid, text);
      return Status::NotImplemented("the binary format of type " + std::string(PgTypeName(type.oid)) +
                                    " (ask for the text format, 0)");
  }
}

std::string_view PgTypeName(Oid oid) {
  const engine::PgTypeInfo* type = engine::FindPgType(static_cast<int32_t>(oid));
  return type != nullptr ? type->sql_name : "unknown";
}

Result<std::string> ParameterLiteral(int32_t oid_number, const std::optional<std::string>& value, bool binary,
                                     const std::string& inferred) {
  if (!value) return std::string("NULL");
  const Oid oid = static_cast<Oid>(oid_number);
  std::string text = *value;
  if (binary) {
    switch (oid) {
      case Oid::kBool:
        if (value->size() != 1) return Status::InvalidArgument("a binary boolean parameter is one byte");
        text = (*value)[0] != 0 ? "true" : "false";
        break;
      case Oid::kInt2:
      case Oid::kInt4:
      case Oid::kInt8: {
        const size_t size = oid == Oid::kInt2 ? 2 : oid == Oid::kInt4 ? 4 : 8;
        if (value->size() != size) {
          return Status::InvalidArgument("a binary " + std::string(PgTypeName(oid)) + " parameter is " +
                                         std::to_string(size) + " bytes, got " +
                                         std::to_string(value->size()));
        }
        const uint64_t bits = FromBigEndian<uint64_t>(*value);
        const int64_t number = size == 2   ? static_cast<int16_t>(bits)
                               : size == 4 ? static_cast<int32_t>(bits)
                                           : static_cast<int64_t>(bits);
        text = std::to_string(number);
        break;
      }
      case Oid::kFloat4:
      case Oid::kFloat8: {
        char buffer[64];
        double number = 0;
        if (oid == Oid::kFloat4 && value->size() == 4) {
          const uint32_t bits = FromBigEndian<uint32_t>(*value);
          float narrow = 0;
          std::memcpy(&narrow, &bits, 4);
          number = narrow;
        } else if (oid == Oid::kFloat8 && value->size() == 8) {
          const uint64_t bits = FromBigEndian<uint64_t>(*value);
          std::memcpy(&number, &bits, 8);
        } else {
          return Status::InvalidArgument("a binary float parameter of the wrong size");
        }
        if (std::isnan(number)) return std::string("CAST('NaN' AS DOUBLE)");
        if (std::isinf(number))
          return std::string(number > 0 ? "CAST('inf' AS DOUBLE)" : "CAST('-inf' AS DOUBLE)");
        const auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), number);
        text.assign(buffer, end);
        break;
      }
      case Oid::kBytea:
        text = HexBytea(*value);
        break;
      case Oid::kText:
      case Oid::kVarchar:
      case Oid::kJson:
      case Oid::kUnknown:
        break;
      default:
        if (oid_number == 0) break;
        if (HasBinaryLayout(oid)) {
          ASSIGN_OR_RETURN(text, DecodeBinary(oid, *value));
          break;
        }
        return Status::NotImplemented("binary parameters of type " + std::string(PgTypeName(oid)) +
                                      " (send it in text format)");
    }
  }
  if (text.find('\0') != std::string::npos)
    return Status::InvalidArgument("a text parameter holds a NUL byte");
  if (oid == Oid::kBytea) {
    ASSIGN_OR_RETURN(std::string bytes, ByteaInput(text));
    std::string escaped;
    for (unsigned char c : bytes) {
      static constexpr char kHex[] = "0123456789ABCDEF";
      escaped += "\\x";
      escaped.push_back(kHex[c >> 4]);
      escaped.push_back(kHex[c & 15]);
    }
    return "CAST(" + Quote(escaped) + " AS BLOB)";
  }
  const std::string_view cast = oid_number == 0 ? std::string_view(inferred) : CastTypeOf(oid);
  if (cast.empty()) return Quote(text);
  return "CAST(" + Quote(text) + " AS " + std::string(cast) + ")";
}

}  // namespace basin::server::pg
