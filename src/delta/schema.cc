#include "delta/schema.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "common/strings.h"

namespace basin::delta {

using json = nlohmann::json;

namespace {

constexpr int kMaxNestingDepth = 64;

constexpr std::array<std::string_view, 14> kPrimitiveTypes = {
    "string",  "long",   "integer", "short",     "byte",          "float", "double",
    "boolean", "binary", "date",    "timestamp", "timestamp_ntz", "void",  "variant"};

// "decimal(10, 2)" -> precision 10, scale 2; false when `text` is not of that form.
bool ParseDecimal(std::string_view text, int* precision, int* scale) {
  std::string compact;
  for (char c : text) {
    if (c != ' ') compact += c;
  }
  if (compact.rfind("decimal(", 0) != 0 || compact.back() != ')') return false;
  std::string_view args = std::string_view(compact).substr(8, compact.size() - 9);
  size_t comma = args.find(',');
  if (comma == std::string_view::npos) return false;
  auto parse_int = [](std::string_view digits, int* out) {
    if (digits.empty() || digits.size() > 3) return false;
    int v = 0;
    for (char c : digits) {
      if (!std::isdigit(static_cast<unsigned char>(c))) return false;
      v = v * 10 + (c - '0');
    }
    *out = v;
    return true;
  };
  if (!parse_int(args.substr(0, comma), precision) || !parse_int(args.substr(comma + 1), scale)) return false;
  return *precision >= 1 && *precision <= 38 && *scale <= *precision;
}

class SchemaParser {
 public:
  explicit SchemaParser(std::string where) : where_(std::move(where)) {}

  Result<DataTypePtr> ParseType(const json& type, const std::string& column, int depth) {
    if (depth > kMaxNestingDepth) return Error(column, "is nested too deeply");
    auto out = std::make_shared<DataType>();
    if (type.is_string()) {
      const auto& name = type.get_ref<const std::string&>();
      if (std::find(kPrimitiveTypes.begin(), kPrimitiveTypes.end(), name) != kPrimitiveTypes.end()) {
        out->primitive = name;
        return DataTypePtr(out);
      }
      if (ParseDecimal(name, &out->precision, &out->scale)) {
        out->primitive = "decimal";
        return DataTypePtr(out);
      }
      if (name.rfind("decimal", 0) == 0) return Error(column, "has a malformed decimal type '" + name + "'");
      return Status::Unsupported(where_ + ": column '" + column + "' has type '" + name +
                                 "', which Basin cannot read");
    }
    if (!type.is_object()) return Error(column, "has a type that is neither a name nor an object");
    auto kind = type.find("type");
    if (kind == type.end() || !kind->is_string()) return Error(column, "has a complex type without 'type'");
    const auto& kind_name = kind->get_ref<const std::string&>();
    if (kind_name == "struct") {
      out->kind = DataType::Kind::kStruct;
      ASSIGN_OR_RETURN(out->struct_type, ParseStruct(type, column, depth + 1));
    } else if (kind_name == "array") {
      out->kind = DataType::Kind::kArray;
      ASSIGN_OR_RETURN(out->element_type, ParseChild(type, "elementType", column + ".element", depth));
      ASSIGN_OR_RETURN(out->contains_null, FlagOr(type, "containsNull", column));
    } else if (kind_name == "map") {
      out->kind = DataType::Kind::kMap;
      ASSIGN_OR_RETURN(out->key_type, ParseChild(type, "keyType", column + ".key", depth));
      ASSIGN_OR_RETURN(out->value_type, ParseChild(type, "valueType", column + ".value", depth));
      ASSIGN_OR_RETURN(out->value_contains_null, FlagOr(type, "valueContainsNull", column));
    } else {
      return Status::Unsupported(where_ + ": column '" + column + "' has type '" + kind_name +
                                 "', which Basin cannot read");
    }
    return DataTypePtr(out);
  }

  Result<StructType> ParseStruct(const json& obj, const std::string& parent, int depth) {
    auto fields = obj.find("fields");
    if (fields == obj.end() || !fields->is_array())
      return Error(parent, "is a struct without a 'fields' list");
    StructType out;
    out.fields.reserve(fields->size());
    for (const json& f : *fields) {
      if (!f.is_object()) return Error(parent, "has a field that is not an object");
      auto name = f.find("name");
      if (name == f.end() || !name->is_string()) return Error(parent, "has a field without a string 'name'");
      StructField field;
      field.name = name->get<std::string>();
      std::string column = parent.empty() ? field.name : parent + "." + field.name;
      auto type = f.find("type");
      if (type == f.end()) return Error(column, "has no 'type'");
      ASSIGN_OR_RETURN(field.type, ParseType(*type, column, depth + 1));
      ASSIGN_OR_RETURN(field.nullable, FlagOr(f, "nullable", column));
      if (auto md = f.find("metadata"); md != f.end() && !md->is_null()) {
        if (!md->is_object()) return Error(column, "has 'metadata' that is not an object");
        field.metadata = *md;
      }
      out.fields.push_back(std::move(field));
    }
    return out;
  }

 private:
  Status Error(const std::string& column, const std::string& what) const {
    if (column.empty()) return Status::Corruption(where_ + ": the schema " + what);
    return Status::Corruption(where_ + ": column '" + column + "' " + what);
  }

  Result<DataTypePtr> ParseChild(const json& obj, const char* key, const std::string& column, int depth) {
    auto it = obj.find(key);
    if (it == obj.end()) return Error(column, std::string("has no '") + key + "'");
    return ParseType(*it, column, depth + 1);
  }

  // Spark always writes these flags; when a writer leaves one out, true is the safe reading.
  Result<bool> FlagOr(const json& obj, const char* key, const std::string& column) {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return true;
    if (!it->is_boolean()) return Error(column, std::string("has '") + key + "' that is not a boolean");
    return it->get<bool>();
  }

  std::string where_;
};

}  // namespace

std::string StructField::PhysicalName() const {
  auto it = metadata.find("delta.columnMapping.physicalName");
  if (it != metadata.end() && it->is_string()) return it->get<std::string>();
  return name;
}

std::optional<std::string> StructField::GenerationExpression() const {
  if (!metadata.is_object()) return std::nullopt;
  auto it = metadata.find("delta.generationExpression");
  if (it != metadata.end() && it->is_string()) return it->get<std::string>();
  return std::nullopt;
}

std::optional<int64_t> StructField::ColumnMappingId() const {
  auto it = metadata.find("delta.columnMapping.id");
  if (it != metadata.end() && it->is_number_integer()) return it->get<int64_t>();
  return std::nullopt;
}

const StructField* StructType::Find(const std::string& name) const {
  for (const auto& f : fields) {
    if (EqualsIgnoreCase(f.name, name)) return &f;
  }
  return nullptr;
}

std::string DataType::ToDuckDBType() const {
  switch (kind) {
    case Kind::kStruct: {
      std::string out = "STRUCT(";
      for (size_t i = 0; i < struct_type.fields.size(); i++) {
        const auto& f = struct_type.fields[i];
        if (i > 0) out += ", ";
        out += QuoteIdentifier(f.name) + " " + f.type->ToDuckDBType();
      }
      return out + ")";
    }
    case Kind::kArray:
      return element_type->ToDuckDBType() + "[]";
    case Kind::kMap:
      return "MAP(" + key_type->ToDuckDBType() + ", " + value_type->ToDuckDBType() + ")";
    case Kind::kPrimitive:
      break;
  }
  if (primitive == "decimal")
    return "DECIMAL(" + std::to_string(precision) + "," + std::to_string(scale) + ")";
  if (primitive == "string") return "VARCHAR";
  if (primitive == "long") return "BIGINT";
  if (primitive == "integer") return "INTEGER";
  if (primitive == "short") return "SMALLINT";
  if (primitive == "byte") return "TINYINT";
  if (primitive == "float") return "FLOAT";
  if (primitive == "double") return "DOUBLE";
  if (primitive == "boolean") return "BOOLEAN";
  if (primitive == "binary") return "BLOB";
  if (primitive == "date") return "DATE";
  if (primitive == "timestamp") return "TIMESTAMP WITH TIME ZONE";
  if (primitive == "timestamp_ntz") return "TIMESTAMP";
  // void columns hold only NULLs; any type would do and INTEGER is what Spark shows.
  if (primitive == "void") return "INTEGER";
  // The remaining primitive is variant, surfaced as its JSON text.
  return "VARCHAR";
}

json DataType::ToJson() const {
  switch (kind) {
    case Kind::kStruct:
      return SchemaToJson(struct_type);
    case Kind::kArray:
      return {{"type", "array"}, {"elementType", element_type->ToJson()}, {"containsNull", contains_null}};
    case Kind::kMap:
      return {{"type", "map"},
              {"keyType", key_type->ToJson()},
              {"valueType", value_type->ToJson()},
              {"valueContainsNull", value_contains_null}};
    case Kind::kPrimitive:
      break;
  }
  if (primitive == "decimal")
    return "decimal(" + std::to_string(precision) + "," + std::to_string(scale) + ")";
  return primitive;
}

Result<StructType> ParseSchema(const std::string& schema_json) {
  json doc = json::parse(schema_json, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return Status::Corruption("table schema: not valid JSON");
  if (!doc.is_object()) return Status::Corruption("table schema: not a JSON object");
  auto type = doc.find("type");
  if (type == doc.end() || !type->is_string() || type->get<std::string>() != "struct") {
    return Status::Corruption("table schema: the top-level type must be \"struct\"");
  }
  return SchemaParser("table schema").ParseStruct(doc, "", 0);
}

json SchemaToJson(const StructType& schema) {
  json fields = json::array();
  for (const auto& f : schema.fields) {
    fields.push_back(
        {{"name", f.name}, {"type", f.type->ToJson()}, {"nullable", f.nullable}, {"metadata", f.metadata}});
  }
  return {{"type", "struct"}, {"fields", fields}};
}

}  // namespace basin::delta
