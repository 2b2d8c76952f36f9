#include "stream/record_format.h"

#include <simdjson.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "common/strings.h"
#include "delta/decimal_text.h"
#include "delta/temporal.h"
#include "sql/grammar/parse.h"
#include "sql/type_names.h"
#include "stream/avro/avro_record.h"
#include "stream/avro/schema_registry.h"

namespace basin::stream {
namespace {

namespace ondemand = simdjson::ondemand;
using Kind = RecordColumn::Kind;

Result<Kind> KindOf(const delta::StructField& field) {
  static const std::map<std::string, Kind> kinds = {{"boolean", Kind::kBoolean},
                                                    {"byte", Kind::kInt8},
                                                    {"short", Kind::kInt16},
                                                    {"integer", Kind::kInt32},
                                                    {"long", Kind::kInt64},
                                                    {"float", Kind::kFloat},
                                                    {"double", Kind::kDouble},
                                                    {"decimal", Kind::kDecimal},
                                                    {"string", Kind::kString},
                                                    {"binary", Kind::kBinary},
                                                    {"date", Kind::kDate},
                                                    {"timestamp", Kind::kTimestamp},
                                                    {"timestamp_ntz", Kind::kTimestampNtz}};
  if (field.type->kind == delta::DataType::Kind::kPrimitive) {
    auto it = kinds.find(field.type->primitive);
    if (it != kinds.end()) return it->second;
  }
  return Status::NotImplemented("column " + field.name + ": records cannot have " +
                                sql::DeltaTypeName(*field.type) +
                                " columns yet (booleans, numbers, decimals, strings, binary, dates and "
                                "timestamps)");
}

std::string_view Trimmed(std::string_view token) {
  while (!token.empty() &&
         (token.back() == ' ' || token.back() == '\n' || token.back() == '\r' || token.back() == '\t')) {
    token.remove_suffix(1);
  }
  return token;
}

// The JSON text of a value as messages quote it, cut to a readable length.
std::string Quoted(std::string_view raw) {
  raw = Trimmed(raw);
  constexpr size_t kMax = 60;
  if (raw.size() <= kMax) return std::string(raw);
  size_t cut = kMax;
  while (cut > 0 && (static_cast<unsigned char>(raw[cut]) & 0xC0) == 0x80) cut--;  // not inside a character
  return std::string(raw.substr(0, cut)) + "...";
}

Status Mismatch(const RecordColumn& column, std::string_view raw) {
  return Status::InvalidArgument("column " + column.name + ": " + Quoted(raw) + " is not a " +
                                 column.type_name);
}

// `text` read whole as a T (int64_t or double, std::from_chars' syntax); nullopt when it is not.
template <typename T>
std::optional<T> WholeNumber(std::string_view text) {
  T value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// Sets column `c` of `cells` for `column` from a value's text (a CSV field, a JSON string):
// false when the text is not one of the column's values (Mismatch says so). The parsers set
// a record's values many times over: a bool says whether one fits, and the caller makes the
// Status of one that does not.
bool FromText(const RecordColumn& column, std::string_view text, CellSink& cells, size_t c) {
  switch (column.kind) {
    case Kind::kBoolean: {
      const bool is_true = EqualsIgnoreCase(text, "true");
      if (!is_true && !EqualsIgnoreCase(text, "false")) return false;
      cells.SetBool(c, is_true);
      return true;
    }
    case Kind::kInt8:
    case Kind::kInt16:
    case Kind::kInt32:
    case Kind::kInt64: {
      std::optional<int64_t> n = WholeNumber<int64_t>(text);
      if (!n || !IntegerFits(column.kind, *n)) return false;
      cells.SetInt(c, *n);
      return true;
    }
    case Kind::kFloat:
    case Kind::kDouble: {
      std::optional<double> d = WholeNumber<double>(text);
      if (!d || (column.kind == Kind::kFloat && std::abs(*d) > std::numeric_limits<float>::max())) {
        return false;
      }
      cells.SetDouble(c, *d);
      return true;
    }
    case Kind::kDecimal: {
      std::optional<delta::Int128> unscaled = delta::ParseDecimalText(text, column.scale);
      const delta::Int128 limit = delta::PowerOfTen(column.precision);
      if (!unscaled || *unscaled >= limit || *unscaled <= -limit) return false;
      cells.SetDecimal(c, *unscaled);
      return true;
    }
    case Kind::kDate:
    case Kind::kTimestamp:
    case Kind::kTimestampNtz: {
      std::optional<int64_t> parsed =
          column.kind == Kind::kDate ? delta::ParseDate(text) : delta::ParseTimestampMicros(text);
      if (!parsed) return false;
      cells.SetInt(c, *parsed);
      return true;
    }
    case Kind::kString:
    case Kind::kBinary:
      cells.SetText(c, text);
      return true;
  }
  return false;
}

// `bytes` (one CSV record, a trailing newline dropped) split into its fields, RFC 4180
// quoting undone; `quoted[i]` says field i was quoted. InvalidArgument when it is not CSV.
Status SplitCsv(std::string_view bytes, std::vector<std::string>& fields, std::vector<bool>& quoted) {
  if (bytes.ends_with("\r\n")) {
    bytes.remove_suffix(2);
  } else if (bytes.ends_with("\n")) {
    bytes.remove_suffix(1);
  }
  fields.assign(1, std::string());
  quoted.assign(1, false);
  for (size_t i = 0; i < bytes.size(); i++) {
    const char c = bytes[i];
    if (c == ',') {
      fields.emplace_back();
      quoted.push_back(false);
    } else if (c == '"' && fields.back().empty() && !quoted.back()) {
      quoted.back() = true;
      for (i++;; i++) {
        if (i >= bytes.size()) return Status::InvalidArgument("not valid CSV (a quoted field is not closed)");
        if (bytes[i] != '"') {
          fields.back() += bytes[i];
        } else if (i + 1 < bytes.size() && bytes[i + 1] == '"') {
          fields.back() += '"';
          i++;
        } else {
          break;
        }
      }
      if (i + 1 < bytes.size() && bytes[i + 1] != ',') {
        return Status::InvalidArgument("not valid CSV (text after a quoted field)");
      }
    } else {
      fields.back() += c;
    }
  }
  return Status::OK();
}

}  // namespace

bool IntegerFits(RecordColumn::Kind kind, int64_t n) {
  const int bits = kind == Kind::kInt8 ? 8 : kind == Kind::kInt16 ? 16 : kind == Kind::kInt32 ? 32 : 64;
  return bits == 64 || (n >= -(int64_t{1} << (bits - 1)) && n < (int64_t{1} << (bits - 1)));
}

Result<ValueFormat> ParseValueFormat(std::string_view name) {
  if (EqualsIgnoreCase(name, "raw")) return ValueFormat::kRaw;
  if (EqualsIgnoreCase(name, "json")) return ValueFormat::kJson;
  if (EqualsIgnoreCase(name, "csv")) return ValueFormat::kCsv;
  if (EqualsIgnoreCase(name, "avro")) return ValueFormat::kAvro;
  return Status::InvalidArgument("valueFormat must be 'raw', 'json', 'csv' or 'avro', got '" +
                                 std::string(name) + "'");
}

Result<RecordSchema> ParseRecordSchema(std::string_view text) {
  Result<std::vector<delta::StructField>> fields = sql::grammar::ParseColumnList(text);
  if (!fields.ok()) return fields.status().WithContext("schema");
  RecordSchema out;
  std::set<std::string> seen;
  for (const delta::StructField& field : *fields) {
    if (!seen.insert(AsciiLower(field.name)).second) {
      return Status::InvalidArgument("schema: column " + field.name + " is declared twice");
    }
    RecordColumn column;
    column.name = field.name;
    Result<Kind> kind = KindOf(field);
    if (!kind.ok()) return kind.status().WithContext("schema");
    column.kind = *kind;
    column.precision = field.type->precision;
    column.scale = field.type->scale;
    column.nullable = field.nullable;
    column.type_name = sql::DeltaTypeName(*field.type);
    out.push_back(std::move(column));
  }
  return out;
}

namespace {

// What the values of one field seen so far say of its type.
enum class Seen { kNull, kBoolean, kInteger, kDouble, kString };

Seen SeenOf(simdjson::dom::element_type type) {
  switch (type) {
    case simdjson::dom::element_type::NULL_VALUE:
      return Seen::kNull;
    case simdjson::dom::element_type::BOOL:
      return Seen::kBoolean;
    case simdjson::dom::element_type::INT64:
    case simdjson::dom::element_type::UINT64:
      return Seen::kInteger;
    case simdjson::dom::element_type::DOUBLE:
      return Seen::kDouble;
    default:
      return Seen::kString;  // strings, objects, arrays
  }
}

// The type of a field seen as `known` and now as `seen`: nulls say nothing, integers and
// fractions make DOUBLE, anything else mixed VARCHAR.
Seen Widest(Seen known, Seen seen) {
  if (known == seen || seen == Seen::kNull) return known;
  if (known == Seen::kNull) return seen;
  const auto number = [](Seen s) { return s == Seen::kInteger || s == Seen::kDouble; };
  return number(known) && number(seen) ? Seen::kDouble : Seen::kString;
}

// What a CSV field's text says of its column's type, as FromText reads it: an empty
// unquoted field nothing, true or false a boolean, then integers and numbers.
Seen SeenOfText(std::string_view text, bool quoted) {
  if (text.empty() && !quoted) return Seen::kNull;
  if (EqualsIgnoreCase(text, "true") || EqualsIgnoreCase(text, "false")) return Seen::kBoolean;
  if (WholeNumber<int64_t>(text)) return Seen::kInteger;
  if (WholeNumber<double>(text)) return Seen::kDouble;
  return Seen::kString;
}

// The schema option's text of `fields`, in order.
std::string SchemaText(const std::vector<std::pair<std::string, Seen>>& fields) {
  std::string text;
  for (const auto& [name, seen] : fields) {
    if (!text.empty()) text += ", ";
    const char* type = seen == Seen::kBoolean   ? "BOOLEAN"
                       : seen == Seen::kInteger ? "BIGINT"
                       : seen == Seen::kDouble  ? "DOUBLE"
                                                : "VARCHAR";
    text += QuoteIdentifier(name) + " " + type;
  }
  return text;
}

}  // namespace

Result<std::string> InferJsonSchema(const std::vector<std::string_view>& values) {
  std::vector<std::pair<std::string, Seen>> fields;  // in the order first seen
  std::map<std::string, size_t> index;
  simdjson::dom::parser parser;
  size_t objects = 0;
  for (std::string_view value : values) {
    simdjson::dom::object object;
    if (parser.parse(value.data(), value.size()).get(object) != simdjson::SUCCESS) continue;
    objects++;
    for (auto [key, element] : object) {
      if (key.empty() || key.find('\0') != std::string_view::npos) continue;  // no column has such a name
      const Seen seen = SeenOf(element.type());
      // Names that differ in case only are one column (as the parser matches them), named
      // as first seen.
      auto [it, added] = index.emplace(AsciiLower(std::string(key)), fields.size());
      if (added) {
        fields.emplace_back(std::string(key), seen);
      } else {
        fields[it->second].second = Widest(fields[it->second].second, seen);
      }
    }
  }
  if (objects == 0) {
    return Status::InvalidArgument("none of the " + std::to_string(values.size()) +
                                   " records sampled is a JSON object to infer a schema from: give schema => "
                                   "'name TYPE, ...'");
  }
  if (fields.empty()) {
    return Status::InvalidArgument("the " + std::to_string(objects) +
                                   " JSON records sampled have no fields to infer a schema from: give "
                                   "schema => 'name TYPE, ...'");
  }
  return SchemaText(fields);
}

Result<std::string> InferCsvSchema(const std::vector<std::string_view>& values) {
  std::vector<std::pair<std::string, Seen>> columns;
  std::vector<std::string> fields;
  std::vector<bool> quoted;
  for (std::string_view value : values) {
    if (!SplitCsv(value, fields, quoted).ok()) continue;
    if (columns.empty()) {
      for (size_t c = 0; c < fields.size(); c++) columns.emplace_back("_c" + std::to_string(c), Seen::kNull);
    }
    if (fields.size() != columns.size()) continue;  // a dead letter later
    for (size_t c = 0; c < fields.size(); c++) {
      columns[c].second = Widest(columns[c].second, SeenOfText(fields[c], quoted[c]));
    }
  }
  if (columns.empty()) {
    return Status::InvalidArgument("none of the " + std::to_string(values.size()) +
                                   " records sampled is a CSV line to infer a schema from: give schema => "
                                   "'name TYPE, ...'");
  }
  return SchemaText(columns);
}

Result<std::string> InferRecordSchema(const RecordOptions& options,
                                      const std::vector<std::string_view>& values) {
  switch (options.format) {
    case ValueFormat::kCsv:
      return InferCsvSchema(values);
    case ValueFormat::kAvro: {
      ASSIGN_OR_RETURN(std::shared_ptr<SchemaRegistry> registry,
                       SchemaRegistry::At(options.schema_registry_url));
      return InferAvroSchema(values, *registry);
    }
    default:
      return InferJsonSchema(values);
  }
}

bool IsRecordOption(std::string_view name) {
  for (std::string_view option :
       {"valueFormat", "schema", "deadLetterTable", "maxDeadLetterFraction", "schemaRegistryUrl"}) {
    if (EqualsIgnoreCase(name, option)) return true;
  }
  return false;
}

Result<RecordOptions> ParseRecordOptions(const std::vector<std::pair<std::string, std::string>>& given) {
  RecordOptions out;
  std::optional<std::string> schema;
  std::optional<std::string> fraction;
  for (const auto& [name, value] : given) {
    if (EqualsIgnoreCase(name, "valueFormat")) {
      ASSIGN_OR_RETURN(out.format, ParseValueFormat(value));
    } else if (EqualsIgnoreCase(name, "schema")) {
      schema = value;
    } else if (EqualsIgnoreCase(name, "deadLetterTable")) {
      Result<std::vector<std::string>> parts = sql::grammar::ParseQualifiedName(value);
      if (!parts.ok() || parts->size() > 2) {
        return Status::InvalidArgument("deadLetterTable: '" + value +
                                       "' is not a table name (table or schema.table)");
      }
      out.dead_letter_table = value;
    } else if (EqualsIgnoreCase(name, "maxDeadLetterFraction")) {
      fraction = value;
    } else if (EqualsIgnoreCase(name, "schemaRegistryUrl")) {
      RETURN_IF_ERROR(SchemaRegistry::At(value).status());
      out.schema_registry_url = value;
    }
  }
  if ((out.format == ValueFormat::kAvro) != !out.schema_registry_url.empty()) {
    return Status::InvalidArgument(
        out.format == ValueFormat::kAvro
            ? "valueFormat 'avro' needs schemaRegistryUrl => 'http://host:port' (where "
              "the records' writer schemas are)"
            : "schemaRegistryUrl is for valueFormat => 'avro'");
  }
  if (schema) {
    if (out.format == ValueFormat::kRaw) {
      return Status::InvalidArgument(
          "schema applies to parsed records: give valueFormat => 'json', 'csv' or 'avro' too");
    }
    ASSIGN_OR_RETURN(out.schema, ParseRecordSchema(*schema));
  }
  if (!out.dead_letter_table.empty() && out.format == ValueFormat::kRaw) {
    return Status::InvalidArgument(
        "deadLetterTable keeps records that do not parse; raw records always do (give valueFormat => "
        "'json', 'csv' or 'avro')");
  }
  if (fraction) {
    char* end = nullptr;
    const double f = std::strtod(fraction->c_str(), &end);
    if (end == fraction->c_str() || *end != '\0' || !(f >= 0 && f <= 1)) {
      return Status::InvalidArgument("maxDeadLetterFraction must be a number from 0 to 1, got '" + *fraction +
                                     "'");
    }
    if (out.dead_letter_table.empty()) {
      return Status::InvalidArgument("maxDeadLetterFraction needs deadLetterTable => 'name'");
    }
    out.max_dead_letter_fraction = f;
  }
  return out;
}

struct JsonRecordParser::Impl {
  const RecordSchema& schema;
  std::map<std::string, size_t, std::less<>> exact;   // column name -> index
  std::map<std::string, size_t, std::less<>> folded;  // lower-case name -> first index
  ondemand::parser parser;
  std::string buffer;  // the record, padded as simdjson reads it
  std::vector<RecordParser::Given> given;
  // Whether a column's name is the same escaped in JSON (no quote, backslash or control
  // character): a key is then compared with it as it stands in the record.
  std::vector<uint8_t> plain;

  explicit Impl(const RecordSchema& s) : schema(s) {
    for (size_t c = 0; c < schema.size(); c++) {
      exact.emplace(schema[c].name, c);
      folded.emplace(AsciiLower(schema[c].name), c);
      const std::string& name = schema[c].name;
      plain.push_back(std::none_of(name.begin(), name.end(), [](char ch) {
        return ch == '"' || ch == '\\' || static_cast<unsigned char>(ch) < 0x20;
      }));
    }
  }

  // The column after `previous` (records mostly list their fields in the schema's order)
  // when `key`, as it stands in the record, is its name; else nullopt, and ColumnOf decides.
  std::optional<size_t> NextColumnIs(ondemand::raw_json_string key, std::optional<size_t> previous) const {
    const size_t next = previous ? *previous + 1 : 0;
    if (next >= schema.size() || !plain[next]) return std::nullopt;
    // The key ends at its closing quote, which no byte of the name matches; a name as long
    // as what the buffer holds from the key on is longer than the key.
    const std::string& name = schema[next].name;
    const char* raw = key.raw();
    if (name.size() >= static_cast<size_t>(buffer.data() + buffer.size() - raw)) return std::nullopt;
    if (std::memcmp(raw, name.data(), name.size()) == 0 && raw[name.size()] == '"') return next;
    return std::nullopt;
  }

  // The column `key` (unescaped) fills; nullopt for a field of no column.
  std::optional<size_t> ColumnOf(std::string_view key) const {
    if (auto it = exact.find(key); it != exact.end()) return it->second;
    if (auto it = folded.find(AsciiLower(std::string(key))); it != folded.end()) return it->second;
    return std::nullopt;
  }

  // How a value went into its cell.
  enum class Converted { kDone, kMismatch, kNotJson };

  // Sets column `c` of `cells` (a `column`) from `value`, of JSON type `type` (not null)
  // whose text is `token`.
  Converted Convert(const RecordColumn& column, ondemand::value value, ondemand::json_type type,
                    std::string_view token, CellSink& cells, size_t c) {
    auto done = [](bool fits) { return fits ? Converted::kDone : Converted::kMismatch; };
    if (type == ondemand::json_type::string && column.kind != Kind::kBoolean && column.kind != Kind::kFloat &&
        column.kind != Kind::kDouble && !(column.kind >= Kind::kInt8 && column.kind <= Kind::kInt64)) {
      std::string_view text;
      if (value.get_string().get(text) != simdjson::SUCCESS) return Converted::kNotJson;
      return done(FromText(column, text, cells, c));
    }
    switch (column.kind) {
      case Kind::kBoolean: {
        bool b = false;
        if (value.get_bool().get(b) != simdjson::SUCCESS) return Converted::kMismatch;
        cells.SetBool(c, b);
        return Converted::kDone;
      }
      case Kind::kInt8:
      case Kind::kInt16:
      case Kind::kInt32:
      case Kind::kInt64: {
        int64_t n = 0;
        if (type != ondemand::json_type::number || value.get_int64().get(n) != simdjson::SUCCESS ||
            !IntegerFits(column.kind, n)) {
          return Converted::kMismatch;
        }
        cells.SetInt(c, n);
        return Converted::kDone;
      }
      case Kind::kFloat:
      case Kind::kDouble: {
        double d = 0;
        if (type != ondemand::json_type::number || value.get_double().get(d) != simdjson::SUCCESS ||
            (column.kind == Kind::kFloat && std::abs(d) > std::numeric_limits<float>::max())) {
          return Converted::kMismatch;
        }
        cells.SetDouble(c, d);
        return Converted::kDone;
      }
      case Kind::kDecimal:
        if (type != ondemand::json_type::number) return Converted::kMismatch;
        return done(FromText(column, Trimmed(token), cells, c));
      case Kind::kString: {
        // Any other JSON value as its JSON text.
        std::string_view text = Trimmed(token);
        simdjson::error_code error = simdjson::SUCCESS;
        if (type == ondemand::json_type::object) {
          ondemand::object object;
          error = value.get_object().get(object);
          if (!error) error = object.raw_json().get(text);
        } else if (type == ondemand::json_type::array) {
          ondemand::array array;
          error = value.get_array().get(array);
          if (!error) error = array.raw_json().get(text);
        }
        if (error) return Converted::kNotJson;
        cells.SetText(c, text);
        return Converted::kDone;
      }
      case Kind::kBinary:
      case Kind::kDate:
      case Kind::kTimestamp:
      case Kind::kTimestampNtz:
        return Converted::kMismatch;  // strings only
    }
    return Converted::kMismatch;
  }

  Status Parse(std::string_view bytes, CellSink& cells) {
    given.assign(schema.size(), RecordParser::kAbsent);
    buffer.resize(bytes.size() + simdjson::SIMDJSON_PADDING);
    std::memcpy(buffer.data(), bytes.data(), bytes.size());
    // The padding is cleared of the last record's bytes: simdjson checks the whole record's
    // brackets balance (a scan of every token) when the byte after the record is a '}'.
    std::memset(buffer.data() + bytes.size(), 0, simdjson::SIMDJSON_PADDING);
    ondemand::document doc;
    ondemand::object root;
    if (parser.iterate(buffer.data(), bytes.size(), buffer.size()).get(doc) != simdjson::SUCCESS) {
      return Status::InvalidArgument("not valid JSON");
    }
    ondemand::json_type root_type;
    if (doc.type().get(root_type) != simdjson::SUCCESS) return Status::InvalidArgument("not valid JSON");
    if (root_type != ondemand::json_type::object) return Status::InvalidArgument("not a JSON object");
    if (doc.get_object().get(root) != simdjson::SUCCESS) return Status::InvalidArgument("not valid JSON");
    std::optional<size_t> previous;  // the column the last field filled
    for (auto field : root) {
      ondemand::field member;
      if (std::move(field).get(member) != simdjson::SUCCESS) return Status::InvalidArgument("not valid JSON");
      std::optional<size_t> column = NextColumnIs(member.key(), previous);
      if (!column) {
        std::string_view key;
        if (member.unescaped_key().get(key) != simdjson::SUCCESS)
          return Status::InvalidArgument("not valid JSON");
        column = ColumnOf(key);
      }
      if (!column) continue;
      ondemand::value value = member.value();
      previous = column;
      ondemand::json_type type;
      if (value.type().get(type) != simdjson::SUCCESS) return Status::InvalidArgument("not valid JSON");
      if (type == ondemand::json_type::null) {
        // type() looks at the first character only: is_null() checks the whole token.
        bool is_null = false;
        if (value.is_null().get(is_null) != simdjson::SUCCESS || !is_null) {
          return Status::InvalidArgument("not valid JSON");
        }
        cells.SetNull(*column);
        given[*column] = RecordParser::kNull;
        continue;
      }
      const std::string_view token = value.raw_json_token();
      switch (Convert(schema[*column], value, type, token, cells, *column)) {
        case Converted::kDone:
          given[*column] = RecordParser::kValue;
          break;
        case Converted::kMismatch:
          return Mismatch(schema[*column], token);
        case Converted::kNotJson:
          return Status::InvalidArgument("not valid JSON");
      }
    }
    for (size_t c = 0; c < schema.size(); c++) {
      if (given[c] == RecordParser::kAbsent) cells.SetNull(c);
    }
    // In bounds after the object: more follows it.
    const char* rest = nullptr;
    if (doc.current_location().get(rest) == simdjson::SUCCESS) {
      return Status::InvalidArgument("not valid JSON (text after the object)");
    }
    return Status::OK();
  }
};

void CellSink::SetCell(size_t c, const RecordCell& cell) {
  std::visit(
      [&](const auto& value) {
        using T = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          SetNull(c);
        } else if constexpr (std::is_same_v<T, bool>) {
          SetBool(c, value);
        } else if constexpr (std::is_same_v<T, int64_t>) {
          SetInt(c, value);
        } else if constexpr (std::is_same_v<T, double>) {
          SetDouble(c, value);
        } else if constexpr (std::is_same_v<T, __int128>) {
          SetDecimal(c, value);
        } else {
          SetText(c, value);
        }
      },
      cell);
}

void CellRow::SetText(size_t c, std::string_view text) {
  RecordCell& cell = (*cells_)[c];
  if (auto* held = std::get_if<std::string>(&cell)) {
    held->assign(text);  // its buffer reused, record after record
  } else {
    cell.emplace<std::string>(text);
  }
}

Status RecordParser::Parse(std::string_view bytes, std::vector<RecordCell>* cells) {
  cells->resize(schema_.size());
  CellRow row(cells);
  return Parse(bytes, row);
}

Status RecordParser::CheckNotNull(const std::vector<Given>& given) const {
  for (size_t c = 0; c < schema_.size(); c++) {
    if (!schema_[c].nullable && given[c] != kValue) {
      return Status::InvalidArgument("column " + schema_[c].name + " is NOT NULL but the record has " +
                                     (given[c] == kNull ? "null" : "no " + schema_[c].name));
    }
  }
  return Status::OK();
}

std::unique_ptr<RecordParser> MakeRecordParser(const RecordOptions& options) {
  if (options.format == ValueFormat::kCsv) return std::make_unique<CsvRecordParser>(options.schema);
  if (options.format == ValueFormat::kAvro) {
    // ParseRecordOptions checked the URL.
    return std::make_unique<AvroRecordParser>(options.schema,
                                              SchemaRegistry::At(options.schema_registry_url).value());
  }
  return std::make_unique<JsonRecordParser>(options.schema);
}

JsonRecordParser::JsonRecordParser(RecordSchema schema)
    : RecordParser(std::move(schema)), impl_(std::make_unique<Impl>(this->schema())) {}

JsonRecordParser::~JsonRecordParser() = default;

Status JsonRecordParser::Parse(std::string_view bytes, CellSink& cells) {
  RETURN_IF_ERROR(impl_->Parse(bytes, cells));
  return CheckNotNull(impl_->given);
}

Status CsvRecordParser::Parse(std::string_view bytes, CellSink& cells) {
  if (!simdjson::validate_utf8(bytes.data(), bytes.size())) return Status::InvalidArgument("not valid UTF-8");
  RETURN_IF_ERROR(SplitCsv(bytes, fields_, quoted_));
  const RecordSchema& columns = schema();
  if (fields_.size() != columns.size()) {
    return Status::InvalidArgument("the record has " + std::to_string(fields_.size()) +
                                   " fields, the schema " + std::to_string(columns.size()) + " columns");
  }
  given_.assign(columns.size(), kAbsent);
  for (size_t c = 0; c < columns.size(); c++) {
    if (fields_[c].empty() && !quoted_[c]) {  // NULL
      cells.SetNull(c);
      continue;
    }
    if (!FromText(columns[c], fields_[c], cells, c)) return Mismatch(columns[c], fields_[c]);
    given_[c] = kValue;
  }
  return CheckNotNull(given_);
}

}  // namespace basin::stream
