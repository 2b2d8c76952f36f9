#include "stream/avro/avro_record.h"

#include <avro.h>

#include <cstdlib>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "common/strings.h"
#include "delta/decimal_text.h"
#include "delta/temporal.h"
#include "stream/avro/datum_check.h"
#include "stream/avro/schema_registry.h"

namespace basin::stream {
namespace {

using Kind = RecordColumn::Kind;
using json = nlohmann::json;

// An Avro type as the writer schema's JSON spells it: what the conversions need of it.
struct AvroType {
  std::string name;     // "int", "long", "bytes", "record", "union", a named type's name, ...
  std::string logical;  // "decimal", "date", "timestamp-millis", ... or empty
  int precision = 0, scale = 0;
  std::vector<AvroType> branches;  // a union's, in order
};

AvroType TypeOf(const json& type) {
  AvroType out;
  if (type.is_string()) {
    out.name = type.get<std::string>();
  } else if (type.is_array()) {
    out.name = "union";
    for (const json& branch : type) out.branches.push_back(TypeOf(branch));
  } else if (type.is_object() && type.contains("type")) {
    out = TypeOf(type["type"]);
    if (type.contains("logicalType") && type["logicalType"].is_string()) out.logical = type["logicalType"];
    if (type.contains("precision") && type["precision"].is_number_integer())
      out.precision = type["precision"];
    if (type.contains("scale") && type["scale"].is_number_integer()) out.scale = type["scale"];
  }
  return out;
}

std::string Describe(const AvroType& type) {
  return type.logical.empty() ? type.name : type.name + " (" + type.logical + ")";
}

// A record schema's fields: names and types, in order.
struct RecordFields {
  std::vector<std::string> names;
  std::vector<AvroType> types;
};

Result<RecordFields> FieldsOf(const std::string& schema_text, int32_t id) {
  const json schema = json::parse(schema_text, nullptr, /*allow_exceptions=*/false);
  if (!schema.is_object() || schema.value("type", json()) != "record" || !schema.contains("fields") ||
      !schema["fields"].is_array()) {
    return Status::InvalidArgument("the writer schema with id " + std::to_string(id) +
                                   " is not an Avro record (only records have columns)");
  }
  RecordFields out;
  for (const json& field : schema["fields"]) {
    if (!field.is_object() || !field.contains("name") || !field["name"].is_string() ||
        !field.contains("type")) {
      return Status::InvalidArgument("the writer schema with id " + std::to_string(id) +
                                     " has a field without a name or type");
    }
    out.names.push_back(field["name"].get<std::string>());
    out.types.push_back(TypeOf(field["type"]));
  }
  return out;
}

struct WireHeader {
  int32_t id = 0;
  std::string_view body;
};

// Confluent's wire format: a zero byte, the schema id as 4 big-endian bytes, the datum.
Result<WireHeader> ReadHeader(std::string_view bytes) {
  if (bytes.size() < 5 || bytes[0] != '\0') {
    return Status::InvalidArgument(
        "not in Confluent's Avro wire format (a zero byte, a 4-byte schema id, then the record)");
  }
  uint32_t id = 0;
  for (int i = 1; i <= 4; i++) id = (id << 8) | static_cast<unsigned char>(bytes[i]);
  return WireHeader{static_cast<int32_t>(id), bytes.substr(5)};
}

// An Avro decimal's bytes (big-endian two's complement) as an unscaled integer.
std::optional<__int128> DecimalBytes(const void* data, size_t size) {
  if (size == 0 || size > 16) return std::nullopt;
  const auto* bytes = static_cast<const unsigned char*>(data);
  unsigned __int128 value = (bytes[0] & 0x80) ? ~static_cast<unsigned __int128>(0) : 0;
  for (size_t i = 0; i < size; i++) value = (value << 8) | bytes[i];
  return static_cast<__int128>(value);
}

// The cell of `column` from Avro value `value`, whose writer type is `type`.
Result<RecordCell> CellOf(const RecordColumn& column, avro_value_t value, const AvroType& type) {
  const AvroType* declared = &type;
  avro_type_t kind = avro_value_get_type(&value);
  if (kind == AVRO_UNION) {
    int branch = -1;
    avro_value_t current;
    if (avro_value_get_discriminant(&value, &branch) != 0 ||
        avro_value_get_current_branch(&value, &current) != 0) {
      return Status::InvalidArgument("column " + column.name + ": a union without a branch");
    }
    if (branch >= 0 && static_cast<size_t>(branch) < type.branches.size()) declared = &type.branches[branch];
    value = current;
    kind = avro_value_get_type(&value);
  }
  if (kind == AVRO_NULL) return RecordCell();
  auto mismatch = [&] {
    return Status::InvalidArgument("column " + column.name + ": an Avro " + Describe(*declared) +
                                   " is not a " + column.type_name);
  };
  int64_t integer = 0;
  const bool is_integer = kind == AVRO_INT32 || kind == AVRO_INT64;
  if (kind == AVRO_INT32) {
    int32_t n = 0;
    avro_value_get_int(&value, &n);
    integer = n;
  } else if (kind == AVRO_INT64) {
    avro_value_get_long(&value, &integer);
  }
  std::string_view text;
  if (kind == AVRO_STRING) {
    const char* chars = nullptr;
    size_t size = 0;
    avro_value_get_string(&value, &chars, &size);
    text = std::string_view(chars, size > 0 ? size - 1 : 0);  // the size counts the closing NUL
  }
  switch (column.kind) {
    case Kind::kBoolean: {
      if (kind != AVRO_BOOLEAN) return mismatch();
      int b = 0;
      avro_value_get_boolean(&value, &b);
      return RecordCell(b != 0);
    }
    case Kind::kInt8:
    case Kind::kInt16:
    case Kind::kInt32:
    case Kind::kInt64:
      if (!is_integer || !declared->logical.empty()) return mismatch();
      if (!IntegerFits(column.kind, integer)) {
        return Status::InvalidArgument("column " + column.name + ": " + std::to_string(integer) +
                                       " is out of the range of " + column.type_name);
      }
      return RecordCell(integer);
    case Kind::kFloat:
    case Kind::kDouble: {
      double d = 0;
      if (is_integer && declared->logical.empty()) {
        d = static_cast<double>(integer);
      } else if (kind == AVRO_FLOAT) {
        float f = 0;
        avro_value_get_float(&value, &f);
        d = f;
      } else if (kind == AVRO_DOUBLE) {
        avro_value_get_double(&value, &d);
      } else {
        return mismatch();
      }
      if (column.kind == Kind::kFloat && std::abs(d) > std::numeric_limits<float>::max()) return mismatch();
      return RecordCell(d);
    }
    case Kind::kDecimal: {
      std::optional<__int128> unscaled;
      int scale = 0;
      if (is_integer && declared->logical.empty()) {
        unscaled = integer;
      } else if ((kind == AVRO_BYTES || kind == AVRO_FIXED) && declared->logical == "decimal") {
        const void* data = nullptr;
        size_t size = 0;
        if (kind == AVRO_BYTES) {
          avro_value_get_bytes(&value, &data, &size);
        } else {
          avro_value_get_fixed(&value, &data, &size);
        }
        unscaled = DecimalBytes(data, size);
        scale = declared->scale;
      }
      if (!unscaled) return mismatch();
      std::optional<__int128> rescaled = delta::Rescale(*unscaled, scale, column.scale);
      const __int128 limit = delta::PowerOfTen(column.precision);
      if (!rescaled || *rescaled >= limit || *rescaled <= -limit) return mismatch();
      return RecordCell(*rescaled);
    }
    case Kind::kString:
      if (kind == AVRO_STRING) return RecordCell(std::string(text));
      if (kind == AVRO_ENUM) {
        int symbol = 0;
        avro_value_get_enum(&value, &symbol);
        const char* name = avro_schema_enum_get(avro_value_get_schema(&value), symbol);
        return RecordCell(std::string(name != nullptr ? name : ""));
      } else {
        char* rendered = nullptr;
        if (avro_value_to_json(&value, /*one_line=*/1, &rendered) != 0) return mismatch();
        std::string out(rendered);
        std::free(rendered);
        return RecordCell(std::move(out));
      }
    case Kind::kBinary: {
      const void* data = nullptr;
      size_t size = 0;
      if (kind == AVRO_BYTES) {
        avro_value_get_bytes(&value, &data, &size);
      } else if (kind == AVRO_FIXED) {
        avro_value_get_fixed(&value, &data, &size);
      } else {
        return mismatch();
      }
      return RecordCell(std::string(static_cast<const char*>(data), size));
    }
    case Kind::kDate:
      if (kind == AVRO_INT32 && declared->logical == "date") return RecordCell(integer);
      if (kind == AVRO_STRING) {
        if (std::optional<int64_t> days = delta::ParseDate(text)) return RecordCell(*days);
      }
      return mismatch();
    case Kind::kTimestamp:
    case Kind::kTimestampNtz: {
      const std::string prefix = column.kind == Kind::kTimestamp ? "timestamp-" : "local-timestamp-";
      if (kind == AVRO_INT64 && declared->logical == prefix + "micros") return RecordCell(integer);
      if (kind == AVRO_INT64 && declared->logical == prefix + "millis") {
        if (integer > std::numeric_limits<int64_t>::max() / 1000 ||
            integer < std::numeric_limits<int64_t>::min() / 1000)
          return mismatch();
        return RecordCell(integer * 1000);
      }
      if (kind == AVRO_STRING) {
        if (std::optional<int64_t> micros = delta::ParseTimestampMicros(text)) return RecordCell(*micros);
      }
      return mismatch();
    }
  }
  return mismatch();
}

// The column type (as the schema option spells it) of an Avro field's type.
std::string ColumnTypeOf(const AvroType& type, bool& nullable) {
  if (type.name == "union") {
    const AvroType* only = nullptr;
    int others = 0;
    for (const AvroType& branch : type.branches) {
      if (branch.name == "null") {
        nullable = true;
      } else {
        only = &branch;
        others++;
      }
    }
    bool unused = false;
    return others == 1 ? ColumnTypeOf(*only, unused) : "STRING";
  }
  if (type.name == "null") nullable = true;
  if (type.name == "boolean") return "BOOLEAN";
  if (type.name == "int") return type.logical == "date" ? "DATE" : "INT";
  if (type.name == "long") {
    if (type.logical == "timestamp-millis" || type.logical == "timestamp-micros") return "TIMESTAMP";
    if (type.logical == "local-timestamp-millis" || type.logical == "local-timestamp-micros")
      return "TIMESTAMP_NTZ";
    return "BIGINT";
  }
  if (type.name == "float") return "FLOAT";
  if (type.name == "double") return "DOUBLE";
  if (type.name == "bytes" || type.name == "fixed") {
    if (type.logical == "decimal" && type.precision > 0 && type.precision <= 38) {
      return "DECIMAL(" + std::to_string(type.precision) + "," + std::to_string(type.scale) + ")";
    }
    return "BINARY";
  }
  return "STRING";  // string, enum, and records, arrays and maps as JSON text
}

}  // namespace

// A writer schema's decoder, and which of its fields fills each column.
struct AvroRecordParser::Writer {
  avro_schema_t schema = nullptr;
  avro_value_iface_t* iface = nullptr;
  avro_reader_t reader = nullptr;
  std::optional<AvroDatumCheck> check;  // run before avro-c decodes a record
  std::vector<int> field;               // per column: the record field's index, -1 for none
  std::vector<AvroType> types;          // per column: that field's type

  ~Writer() {
    if (reader != nullptr) avro_reader_free(reader);
    if (iface != nullptr) avro_value_iface_decref(iface);
    if (schema != nullptr) avro_schema_decref(schema);
  }
};

AvroRecordParser::AvroRecordParser(RecordSchema schema, std::shared_ptr<SchemaRegistry> registry)
    : RecordParser(std::move(schema)), registry_(std::move(registry)) {}

AvroRecordParser::~AvroRecordParser() = default;

Result<AvroRecordParser::Writer*> AvroRecordParser::WriterOf(int32_t id) {
  if (auto it = writers_.find(id); it != writers_.end()) return it->second.get();
  ASSIGN_OR_RETURN(std::string text, registry_->WriterSchema(id));
  ASSIGN_OR_RETURN(RecordFields fields, FieldsOf(text, id));
  auto writer = std::make_unique<Writer>();
  Result<AvroDatumCheck> check = AvroDatumCheck::Of(json::parse(text, nullptr, /*allow_exceptions=*/false));
  if (!check.ok()) return check.status().WithContext("the writer schema with id " + std::to_string(id));
  writer->check = std::move(check).value();
  if (avro_schema_from_json_length(text.c_str(), text.size(), &writer->schema) != 0) {
    return Status::InvalidArgument("the writer schema with id " + std::to_string(id) +
                                   " is not valid Avro: " + avro_strerror());
  }
  writer->iface = avro_generic_class_from_schema(writer->schema);
  if (writer->iface == nullptr) {
    return Status::InvalidArgument("the writer schema with id " + std::to_string(id) +
                                   " cannot be decoded: " + avro_strerror());
  }
  writer->reader = avro_reader_memory("", 0);
  for (const RecordColumn& column : schema()) {
    int found = -1;
    for (size_t f = 0; f < fields.names.size() && found < 0; f++) {
      if (fields.names[f] == column.name) found = static_cast<int>(f);
    }
    for (size_t f = 0; f < fields.names.size() && found < 0; f++) {
      if (EqualsIgnoreCase(fields.names[f], column.name)) found = static_cast<int>(f);
    }
    writer->field.push_back(found);
    writer->types.push_back(found >= 0 ? fields.types[found] : AvroType{});
  }
  return writers_.emplace(id, std::move(writer)).first->second.get();
}

Status AvroRecordParser::Parse(std::string_view bytes, CellSink& cells) {
  ASSIGN_OR_RETURN(WireHeader header, ReadHeader(bytes));
  ASSIGN_OR_RETURN(Writer * writer, WriterOf(header.id));
  if (Status checked = writer->check->Check(header.body); !checked.ok()) {
    return checked.WithContext("not a record of its writer schema (id " + std::to_string(header.id) + ")");
  }
  // A value of its own per record: avro-c's generic values keep (and lose) memory when
  // read into again with other shapes.
  struct Value {
    avro_value_t value{};
    bool made = false;
    ~Value() {
      if (made) avro_value_decref(&value);
    }
  } record;
  if (avro_generic_value_new(writer->iface, &record.value) != 0) {
    return Status::Internal("avro-c could not make a value: " + std::string(avro_strerror()));
  }
  record.made = true;
  avro_reader_memory_set_source(writer->reader, header.body.data(), static_cast<int64_t>(header.body.size()));
  if (avro_value_read(writer->reader, &record.value) != 0) {
    return Status::InvalidArgument("does not decode as Avro with the writer schema with id " +
                                   std::to_string(header.id) + ": " + avro_strerror());
  }
  const RecordSchema& columns = schema();
  given_.assign(columns.size(), kAbsent);
  for (size_t c = 0; c < columns.size(); c++) {
    if (writer->field[c] < 0) {
      cells.SetNull(c);
      continue;
    }
    avro_value_t field;
    if (avro_value_get_by_index(&record.value, static_cast<size_t>(writer->field[c]), &field, nullptr) != 0) {
      return Status::InvalidArgument("column " + columns[c].name + ": " + avro_strerror());
    }
    ASSIGN_OR_RETURN(const RecordCell cell, CellOf(columns[c], field, writer->types[c]));
    cells.SetCell(c, cell);
    given_[c] = std::holds_alternative<std::monostate>(cell) ? kNull : kValue;
  }
  return CheckNotNull(given_);
}

Result<std::string> InferAvroSchema(const std::vector<std::string_view>& values, SchemaRegistry& registry) {
  for (std::string_view value : values) {
    Result<WireHeader> header = ReadHeader(value);
    if (!header.ok()) continue;
    ASSIGN_OR_RETURN(std::string text, registry.WriterSchema(header->id));
    ASSIGN_OR_RETURN(RecordFields fields, FieldsOf(text, header->id));
    std::string out;
    for (size_t f = 0; f < fields.names.size(); f++) {
      bool nullable = false;
      const std::string type = ColumnTypeOf(fields.types[f], nullable);
      out += (out.empty() ? "" : ", ") + QuoteIdentifier(fields.names[f]) + " " + type +
             (nullable ? "" : " NOT NULL");
    }
    if (out.empty()) {
      return Status::InvalidArgument(
          "the writer schema with id " + std::to_string(header->id) +
          " has no fields to infer a schema from: give schema => 'name TYPE, ...'");
    }
    return out;
  }
  return Status::InvalidArgument(
      "none of the " + std::to_string(values.size()) +
      " records sampled is Avro in Confluent's wire format to infer a schema from: "
      "give schema => 'name TYPE, ...'");
}

}  // namespace basin::stream
