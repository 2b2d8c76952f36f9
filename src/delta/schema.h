// The Delta table schema (PROTOCOL.md "Schema Serialization Format"): a tree of types with
// field metadata (column mapping ids and physical names, type-change history).
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "basin/status.h"

namespace basin::delta {

struct DataType;
using DataTypePtr = std::shared_ptr<const DataType>;

struct StructField {
  std::string name;
  DataTypePtr type;
  bool nullable = true;
  nlohmann::json metadata = nlohmann::json::object();

  // "delta.columnMapping.physicalName" when present, else `name`.
  std::string PhysicalName() const;
  std::optional<int64_t> ColumnMappingId() const;
  // The SQL expression of a generated column (delta.generationExpression), else nullopt.
  std::optional<std::string> GenerationExpression() const;
};

struct StructType {
  std::vector<StructField> fields;
  const StructField* Find(const std::string& name) const;  // case-insensitive, as Spark
};

struct DataType {
  enum class Kind {
    kPrimitive,  // name: string long integer short byte float double boolean binary date
                 //       timestamp timestamp_ntz void variant, or decimal(p,s)
    kStruct,
    kArray,
    kMap,
  };
  Kind kind = Kind::kPrimitive;
  std::string primitive;             // kPrimitive: the Delta name; decimals as "decimal"
  int precision = 0, scale = 0;      // decimals
  StructType struct_type;            // kStruct
  DataTypePtr element_type;          // kArray
  bool contains_null = true;         // kArray
  DataTypePtr key_type, value_type;  // kMap
  bool value_contains_null = true;   // kMap

  // The DuckDB type Basin reads this as: BIGINT, DECIMAL(10,2), TIMESTAMP WITH TIME ZONE
  // (timestamp), TIMESTAMP (timestamp_ntz), STRUCT("a" INTEGER), INTEGER[], MAP(K, V).
  std::string ToDuckDBType() const;
  // Back to Delta's JSON form.
  nlohmann::json ToJson() const;
};

// Corruption (naming the offending field) for malformed schema JSON.
Result<StructType> ParseSchema(const std::string& schema_json);
nlohmann::json SchemaToJson(const StructType& schema);

}  // namespace basin::delta
