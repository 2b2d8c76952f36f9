#include "engine/duckdb/type_mapping.h"

#include "duckdb/parser/expression/constant_expression.hpp"

namespace basin::engine::duckdb_ext {

namespace {

duckdb::LogicalType PrimitiveType(const delta::DataType& type) {
  const std::string& p = type.primitive;
  if (p == "decimal") {
    return duckdb::LogicalType::DECIMAL(static_cast<uint8_t>(type.precision), static_cast<uint8_t>(type.scale));
  }
  if (p == "string") return duckdb::LogicalType::VARCHAR;
  if (p == "long") return duckdb::LogicalType::BIGINT;
  if (p == "integer") return duckdb::LogicalType::INTEGER;
  if (p == "short") return duckdb::LogicalType::SMALLINT;
  if (p == "byte") return duckdb::LogicalType::TINYINT;
  if (p == "float") return duckdb::LogicalType::FLOAT;
  if (p == "double") return duckdb::LogicalType::DOUBLE;
  if (p == "boolean") return duckdb::LogicalType::BOOLEAN;
  if (p == "binary") return duckdb::LogicalType::BLOB;
  if (p == "date") return duckdb::LogicalType::DATE;
  if (p == "timestamp") return duckdb::LogicalType::TIMESTAMP_TZ;
  if (p == "timestamp_ntz") return duckdb::LogicalType::TIMESTAMP;
  // void columns hold only NULLs; INTEGER is what Spark shows for them.
  if (p == "void") return duckdb::LogicalType::INTEGER;
  // variant, surfaced as its JSON text
  return duckdb::LogicalType::VARCHAR;
}

// The name a file uses for `field`.
std::string FileName(const delta::StructField& field, bool column_mapping) {
  return column_mapping ? field.PhysicalName() : field.name;
}

duckdb::MultiFileColumnDefinition Definition(const std::string& name, const std::string& file_name,
                                             const delta::DataType& type, bool column_mapping) {
  duckdb::MultiFileColumnDefinition out(name, ToLogicalType(type));
  if (file_name != name) out.identifier = duckdb::Value(file_name);
  // A column or field a file lacks (added later) reads as NULL.
  out.default_expression = duckdb::make_uniq<duckdb::ConstantExpression>(duckdb::Value(out.type));
  if (type.kind == delta::DataType::Kind::kStruct) {
    for (const delta::StructField& child : type.struct_type.fields) {
      out.children.push_back(Definition(child.name, FileName(child, column_mapping), *child.type, column_mapping));
    }
  }
  // Lists and maps get their children per file (DeltaMultiFileReader), since their element
  // names depend on how each file was written.
  return out;
}

}  // namespace

duckdb::LogicalType ToLogicalType(const delta::DataType& type) {
  switch (type.kind) {
    case delta::DataType::Kind::kStruct: {
      duckdb::child_list_t<duckdb::LogicalType> children;
      for (const delta::StructField& f : type.struct_type.fields) {
        children.emplace_back(f.name, ToLogicalType(*f.type));
      }
      return duckdb::LogicalType::STRUCT(std::move(children));
    }
    case delta::DataType::Kind::kArray:
      return duckdb::LogicalType::LIST(ToLogicalType(*type.element_type));
    case delta::DataType::Kind::kMap:
      return duckdb::LogicalType::MAP(ToLogicalType(*type.key_type), ToLogicalType(*type.value_type));
    case delta::DataType::Kind::kPrimitive:
      break;
  }
  return PrimitiveType(type);
}

duckdb::MultiFileColumnDefinition ColumnDefinition(const delta::StructField& field, bool column_mapping) {
  return Definition(field.name, FileName(field, column_mapping), *field.type, column_mapping);
}

duckdb::MultiFileColumnDefinition TypeDefinition(const std::string& name, const std::string& file_name,
                                                 const delta::DataType& type, bool column_mapping) {
  return Definition(name, file_name, type, column_mapping);
}

duckdb::Value PartitionValue(duckdb::ClientContext& context, const delta::DataType& type,
                             const std::optional<std::string>& serialized, const std::string& where) {
  duckdb::LogicalType target = ToLogicalType(type);
  if (!serialized) return duckdb::Value(target);
  if (type.primitive == "string") return duckdb::Value(*serialized);
  // An empty string stands for null for every non-string type.
  if (serialized->empty()) return duckdb::Value(target);
  // Binary values are the raw bytes.
  if (type.primitive == "binary") return duckdb::Value::BLOB_RAW(*serialized);
  duckdb::Value value(*serialized);
  if (!value.TryCastAs(context, target)) {
    throw duckdb::InvalidInputException("%s: partition value '%s' is not a valid %s", where, *serialized,
                                        target.ToString());
  }
  return value;
}

}  // namespace basin::engine::duckdb_ext
