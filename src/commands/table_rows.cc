#include "commands/table_rows.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <functional>
#include <limits>
#include <set>

#include "commands/table_features.h"
#include "common/strings.h"
#include "engine/parquet_writer.h"
#include "storage/prefixed_object_store.h"

namespace basin::commands {

namespace {

using delta::DataType;
using delta::DataTypePtr;
using delta::StructField;
using delta::StructType;
using engine::ColumnType;
using engine::QuoteIdentifier;
using engine::QuoteLiteral;
using nlohmann::json;

constexpr const char* kTypeChanges = "delta.typeChanges";
constexpr std::string_view kConstraintPrefix = "delta.constraints.";
// DuckDB prefixes what error() raises with this; Basin's messages stand on their own.
constexpr std::string_view kDuckDBInputError = "Invalid Input Error: ";

int FindField(const StructType& schema, const std::string& name) {
  for (size_t i = 0; i < schema.fields.size(); i++) {
    if (EqualsIgnoreCase(schema.fields[i].name, name)) return static_cast<int>(i);
  }
  return -1;
}

// SQL raising `message_sql` (a string expression) as an error when a row evaluates it.
std::string RaiseSql(const std::string& message_sql) { return "error(" + message_sql + ")"; }

// A value's text for an error message, cut short so one bad row cannot flood it.
std::string ValueTextSql(const std::string& expr) {
  return "COALESCE(left(CAST(" + expr + " AS VARCHAR), 100), 'NULL')";
}

// --- type conversion -----------------------------------------------------------------

enum class Family { kInteger, kFractional, kString, kBinary, kBoolean, kDate, kTimestamp, kNested, kOther };

Family FamilyOf(const ColumnType& column) {
  if (column.kind != ColumnType::Kind::kScalar) return Family::kNested;
  const std::string& t = column.type_name;
  if (engine::FindIntegerType(t) != nullptr) return Family::kInteger;
  if (t == "FLOAT" || t == "DOUBLE" || t.rfind("DECIMAL", 0) == 0) return Family::kFractional;
  if (t == "VARCHAR") return Family::kString;
  if (t == "BLOB") return Family::kBinary;
  if (t == "BOOLEAN") return Family::kBoolean;
  if (t == "DATE") return Family::kDate;
  if (t.rfind("TIMESTAMP", 0) == 0) return Family::kTimestamp;
  return Family::kOther;
}

bool IsIntegerPrimitive(const std::string& p) {
  return p == "byte" || p == "short" || p == "integer" || p == "long";
}

// Whether every value of the DuckDB integer type `source` fits the Delta integer type
// `target` (an integer primitive).
bool IntegerWidens(const std::string& source, const std::string& target) {
  const int bits = target == "byte" ? 8 : target == "short" ? 16 : target == "integer" ? 32 : 64;
  const engine::IntegerType* type = engine::FindIntegerType(source);
  return type != nullptr && (type->is_signed ? type->bits <= bits : type->bits < bits);
}

// Builds the expression that turns a source value into a table column's type: safe
// widenings as casts, narrowings that can lose nothing but range as casts checked per
// value, everything else refused before any row is read.
class Converter {
 public:
  Result<std::string> Convert(const std::string& expr, const ColumnType& source, const DataType& target,
                              const std::string& where, int depth) const {
    const std::string target_sql = target.ToDuckDBType();
    if (source.type_name == target_sql) return expr;
    switch (target.kind) {
      case DataType::Kind::kStruct:
        if (source.kind != ColumnType::Kind::kStruct) return Refuse(expr, source, target, where);
        return ConvertStruct(expr, source, target, where, depth);
      case DataType::Kind::kArray: {
        if (source.kind != ColumnType::Kind::kList) return Refuse(expr, source, target, where);
        const std::string var = "__basin_e" + std::to_string(depth);
        ASSIGN_OR_RETURN(std::string element, Convert(var, source.children[0], *target.element_type,
                                                      where + ".element", depth + 1));
        return "list_transform(" + expr + ", lambda " + var + ": " + element + ")";
      }
      case DataType::Kind::kMap: {
        if (source.kind != ColumnType::Kind::kMap) return Refuse(expr, source, target, where);
        const std::string var = "__basin_e" + std::to_string(depth);
        ASSIGN_OR_RETURN(std::string key, Convert(var + ".key", source.children[0], *target.key_type,
                                                  where + ".key", depth + 1));
        ASSIGN_OR_RETURN(std::string value, Convert(var + ".value", source.children[1], *target.value_type,
                                                    where + ".value", depth + 1));
        return "map_from_entries(list_transform(map_entries(" + expr + "), lambda " + var +
               ": struct_pack(key := " + key + ", value := " + value + ")))";
      }
      case DataType::Kind::kPrimitive:
        break;
    }
    const std::string& p = target.primitive;
    const Family from = FamilyOf(source);
    if (p == "variant") {
      return Status::Unsupported("column " + where + ": Basin cannot write variant columns");
    }
    if (p == "void") {
      // A void column holds only NULLs.
      return "CASE WHEN " + expr + " IS NULL THEN NULL ELSE " +
             RaiseSql(QuoteLiteral("column " + where + " has type void and can hold only NULL")) + " END";
    }
    if (IsIntegerPrimitive(p)) {
      if (from == Family::kInteger && IntegerWidens(source.type_name, p)) {
        return "CAST(" + expr + " AS " + target_sql + ")";
      }
      if (from == Family::kInteger) return CheckedCast(expr, target_sql, where);
    } else if (p == "decimal" || p == "float" || p == "double") {
      if (from == Family::kInteger || from == Family::kFractional)
        return CheckedCast(expr, target_sql, where);
    } else if (p == "date") {
      // String literals ('2024-01-31') are how SQL spells dates; each must parse.
      if (from == Family::kString) return CheckedCast(expr, target_sql, where);
    } else if (p == "timestamp" || p == "timestamp_ntz") {
      if (from == Family::kDate || from == Family::kTimestamp)
        return "CAST(" + expr + " AS " + target_sql + ")";
      if (from == Family::kString) return CheckedCast(expr, target_sql, where);
    }
    return Refuse(expr, source, target, where);
  }

 private:
  Result<std::string> ConvertStruct(const std::string& expr, const ColumnType& source, const DataType& target,
                                    const std::string& where, int depth) const {
    const auto& fields = target.struct_type.fields;
    // By name when every source field names a table field, else by position.
    std::vector<const ColumnType*> matched(fields.size(), nullptr);
    bool by_name = true;
    for (const ColumnType& child : source.children) {
      int index = FindField(target.struct_type, child.name);
      if (index < 0) {
        by_name = false;
        break;
      }
      matched[index] = &child;
    }
    if (!by_name) {
      if (source.children.size() != fields.size()) {
        for (const ColumnType& child : source.children) {
          if (FindField(target.struct_type, child.name) < 0) {
            return Status::InvalidArgument("column " + where + ": field '" + child.name +
                                           "' is not in the table's " + target.ToDuckDBType());
          }
        }
      }
      for (size_t i = 0; i < fields.size(); i++) matched[i] = &source.children[i];
    }
    std::string out = "struct_pack(";
    for (size_t i = 0; i < fields.size(); i++) {
      std::string value = "CAST(NULL AS " + fields[i].type->ToDuckDBType() + ")";
      if (matched[i] != nullptr) {
        ASSIGN_OR_RETURN(value,
                         Convert("struct_extract(" + expr + ", " + QuoteLiteral(matched[i]->name) + ")",
                                 *matched[i], *fields[i].type, where + "." + fields[i].name, depth + 1));
      }
      out += (i > 0 ? ", " : "") + QuoteIdentifier(fields[i].name) + " := " + value;
    }
    return "CASE WHEN " + expr + " IS NULL THEN NULL ELSE " + out + ") END";
  }

  // Each non-null value must survive the cast (range, parse); else the write fails naming it.
  static std::string CheckedCast(const std::string& expr, const std::string& type, const std::string& where) {
    const std::string cast = "TRY_CAST(" + expr + " AS " + type + ")";
    return "CASE WHEN " + expr + " IS NOT NULL AND " + cast + " IS NULL THEN " +
           RaiseSql(QuoteLiteral("column " + where + ": value ") + " || " + ValueTextSql(expr) + " || " +
                    QuoteLiteral(" cannot be written as " + type)) +
           " ELSE " + cast + " END";
  }

  static Result<std::string> Refuse(const std::string& expr, const ColumnType& source, const DataType& target,
                                    const std::string& where) {
    const std::string message =
        "column " + where + ": cannot write " + source.type_name + " into " + target.ToDuckDBType();
    // DuckDB types a column of NULL literals as INTEGER: refuse its non-null values only,
    // so VALUES (1, NULL) can fill a string column.
    if (source.type_name == "INTEGER") {
      return "CASE WHEN " + expr + " IS NULL THEN CAST(NULL AS " + target.ToDuckDBType() + ") ELSE " +
             RaiseSql(QuoteLiteral(message)) + " END";
    }
    return Status::InvalidArgument(message);
  }
};

// --- physical names and nested NOT NULL --------------------------------------------------

// Which way nested struct fields are renamed when a value is rebuilt.
enum class Naming { kKeep, kToPhysical, kToLogical };

bool NeedsRebuild(const DataType& type, Naming naming, bool check_not_null) {
  switch (type.kind) {
    case DataType::Kind::kStruct:
      return std::any_of(
          type.struct_type.fields.begin(), type.struct_type.fields.end(), [&](const StructField& f) {
            return (naming != Naming::kKeep && f.PhysicalName() != f.name) ||
                   (check_not_null && !f.nullable) || NeedsRebuild(*f.type, naming, check_not_null);
          });
    case DataType::Kind::kArray:
      return NeedsRebuild(*type.element_type, naming, check_not_null);
    case DataType::Kind::kMap:
      return NeedsRebuild(*type.key_type, naming, check_not_null) ||
             NeedsRebuild(*type.value_type, naming, check_not_null);
    case DataType::Kind::kPrimitive:
      return false;
  }
  return false;
}

// The message of a NULL in NOT NULL column (or field path) `column`.
std::string NotNullViolated(const std::string& column) {
  return "NOT NULL constraint violated for column: " + column;
}

// `expr`, a value of `type`, with its nested struct fields renamed as `naming` says and,
// when `check_not_null`, the non-nullable fields of its non-null structs checked.
std::string Rebuild(const std::string& expr, const DataType& type, Naming naming, bool check_not_null,
                    const std::string& where, int depth) {
  if (!NeedsRebuild(type, naming, check_not_null)) return expr;
  const std::string var = "__basin_n" + std::to_string(depth);
  switch (type.kind) {
    case DataType::Kind::kStruct: {
      std::string out = "struct_pack(";
      for (size_t i = 0; i < type.struct_type.fields.size(); i++) {
        const StructField& f = type.struct_type.fields[i];
        const std::string from = naming == Naming::kToLogical ? f.PhysicalName() : f.name;
        const std::string to = naming == Naming::kToPhysical ? f.PhysicalName() : f.name;
        std::string value = Rebuild("struct_extract(" + expr + ", " + QuoteLiteral(from) + ")", *f.type,
                                    naming, check_not_null, where + "." + f.name, depth + 1);
        if (check_not_null && !f.nullable) {
          value = "CASE WHEN " + value + " IS NULL THEN " +
                  RaiseSql(QuoteLiteral(NotNullViolated(where + "." + f.name))) + " ELSE " + value + " END";
        }
        out += (i > 0 ? ", " : "") + QuoteIdentifier(to) + " := " + value;
      }
      return "CASE WHEN " + expr + " IS NULL THEN NULL ELSE " + out + ") END";
    }
    case DataType::Kind::kArray:
      return "list_transform(" + expr + ", lambda " + var + ": " +
             Rebuild(var, *type.element_type, naming, check_not_null, where + ".element", depth + 1) + ")";
    case DataType::Kind::kMap:
      return "map_from_entries(list_transform(map_entries(" + expr + "), lambda " + var +
             ": struct_pack(key := " +
             Rebuild(var + ".key", *type.key_type, naming, check_not_null, where + ".key", depth + 1) +
             ", value := " +
             Rebuild(var + ".value", *type.value_type, naming, check_not_null, where + ".value", depth + 1) +
             ")))";
    case DataType::Kind::kPrimitive:
      break;
  }
  return expr;
}

// Top-level column names an expression mentions (for the values a CHECK violation shows).
// A plain scan of identifier-like words outside string literals: an extra name only adds
// a value to the message.
std::vector<const StructField*> MentionedColumns(const std::string& expression, const StructType& schema) {
  std::vector<const StructField*> out;
  auto note = [&](const std::string& word) {
    int index = FindField(schema, word);
    if (index >= 0 && std::find(out.begin(), out.end(), &schema.fields[index]) == out.end()) {
      out.push_back(&schema.fields[index]);
    }
  };
  for (size_t i = 0; i < expression.size();) {
    char c = expression[i];
    if (c == '\'') {
      i = expression.find('\'', i + 1);
      i = i == std::string::npos ? expression.size() : i + 1;
    } else if (c == '"') {
      size_t end = expression.find('"', i + 1);
      if (end == std::string::npos) break;
      note(expression.substr(i + 1, end - i - 1));
      i = end + 1;
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t end = i;
      while (end < expression.size() &&
             (std::isalnum(static_cast<unsigned char>(expression[end])) || expression[end] == '_')) {
        end++;
      }
      // A word after '.' is a field, not a column.
      if (i == 0 || expression[i - 1] != '.') note(expression.substr(i, end - i));
      i = end;
    } else {
      i++;
    }
  }
  return out;
}

std::string RowValuesSql(const std::vector<const StructField*>& columns) {
  std::string out;
  for (size_t i = 0; i < columns.size(); i++) {
    out += (i > 0 ? " || " + QuoteLiteral(", ") + " || " : "") + QuoteLiteral(columns[i]->name + " => ") +
           " || " + ValueTextSql(QuoteIdentifier(columns[i]->name));
  }
  return out.empty() ? QuoteLiteral("") : out;
}

struct RowCheck {
  std::string description;  // "CHECK constraint positive (x > 0)"
  std::string condition;
};

// The table's CHECK constraints.
std::vector<RowCheck> CheckConstraints(const delta::Metadata& metadata) {
  std::vector<RowCheck> checks;
  for (const auto& [key, value] : metadata.configuration) {
    if (key.rfind(kConstraintPrefix, 0) != 0) continue;
    checks.push_back(
        {"CHECK constraint " + key.substr(kConstraintPrefix.size()) + " (" + value + ")", value});
  }
  return checks;
}

// The constraints a write may set rows aside for (WriteTarget's refused rows): the top-level
// NOT NULL columns, then the CHECK constraints.
std::vector<RowCheck> RefusableChecks(const StructType& schema, const delta::Metadata& metadata) {
  std::vector<RowCheck> checks;
  for (const StructField& f : schema.fields) {
    if (!f.nullable) {
      checks.push_back({NotNullViolated(f.name), QuoteIdentifier(f.name) + " IS NOT NULL"});
    }
  }
  for (RowCheck& check : CheckConstraints(metadata)) {
    check.description += " violated";
    checks.push_back(std::move(check));
  }
  return checks;
}

// SQL: whether a row breaks one of the RefusableChecks constraints; empty when there are none.
std::string RefusedConditionOf(const StructType& schema, const delta::Metadata& metadata) {
  std::string refused;
  for (const RowCheck& check : RefusableChecks(schema, metadata)) {
    refused += std::string(refused.empty() ? "" : " OR ") + "NOT COALESCE((" + check.condition + "), FALSE)";
  }
  return refused;
}

// From typed rows (every non-generated column under its logical name and table type, and
// the generated columns listed in `generated_given`) to the same rows with the generated
// columns computed or checked.
std::string WithGenerated(const StructType& schema, const std::string& typed_sql,
                          const std::set<std::string>& generated_given) {
  bool any_generated = std::any_of(schema.fields.begin(), schema.fields.end(),
                                   [](const StructField& f) { return f.GenerationExpression().has_value(); });
  if (!any_generated) return typed_sql;
  std::string select;
  for (const StructField& f : schema.fields) {
    const std::string name = QuoteIdentifier(f.name);
    std::string value = name;
    if (auto generation = f.GenerationExpression()) {
      const std::string computed = "CAST((" + *generation + ") AS " + f.type->ToDuckDBType() + ")";
      if (generated_given.count(f.name) == 0) {
        value = computed;
      } else {
        value = "CASE WHEN " + name + " IS NOT DISTINCT FROM " + computed + " THEN " + name + " ELSE " +
                RaiseSql(QuoteLiteral("column " + f.name + " is generated as (" + *generation +
                                      "); the value given, ") +
                         " || " + ValueTextSql(name) + " || " + QuoteLiteral(", is not ") + " || " +
                         ValueTextSql(computed)) +
                " END";
      }
    }
    select += (select.empty() ? "" : ", ") + value + " AS " + name;
  }
  return "SELECT " + select + " FROM (" + typed_sql + "\n) AS __basin_typed";
}

// From rows with every column under its logical name (WithGenerated's) to stored rows: NOT
// NULL and row checks applied, physical names. With `leave_refused_out`, rows that break a
// RefusableChecks constraint are left out instead of failing the write.
std::string CheckedRows(const StructType& schema, const delta::Metadata& metadata, const std::string& rows,
                        const std::optional<std::string>& row_condition, bool leave_refused_out) {
  const bool mapped = delta::ColumnMappingEnabled(metadata);
  std::string select;
  // Checks on whole rows: the CHECK constraints (unless refused rows are left out), and the
  // caller's condition.
  std::vector<RowCheck> checks;
  if (!leave_refused_out) checks = CheckConstraints(metadata);
  if (row_condition) checks.push_back({"the condition (" + *row_condition + ")", *row_condition});
  bool as_given = true;  // every column kept as `rows` has it: no projection needed
  for (size_t i = 0; i < schema.fields.size(); i++) {
    const StructField& f = schema.fields[i];
    const std::string name = QuoteIdentifier(f.name);
    std::string value = Rebuild(name, *f.type, mapped ? Naming::kToPhysical : Naming::kKeep, true, f.name, 0);
    std::string when;
    if (!f.nullable && !leave_refused_out) {
      when += " WHEN " + name + " IS NULL THEN " + RaiseSql(QuoteLiteral(NotNullViolated(f.name)));
    }
    if (i == 0) {
      // Row checks ride on the first column, so they run in the same pass.
      for (const RowCheck& check : checks) {
        when += " WHEN NOT COALESCE((" + check.condition + "), FALSE) THEN " +
                RaiseSql(QuoteLiteral(check.description + " violated by row with values: ") + " || " +
                         RowValuesSql(MentionedColumns(check.condition, schema)));
      }
    }
    if (!when.empty()) value = "CASE" + when + " ELSE " + value + " END";
    const std::string stored_name = QuoteIdentifier(mapped ? f.PhysicalName() : f.name);
    as_given = as_given && value == name && stored_name == name;
    select += (i > 0 ? ", " : "") + value + " AS " + stored_name;
  }
  std::string kept;
  if (leave_refused_out) {
    const std::string refused = RefusedConditionOf(schema, metadata);
    if (!refused.empty()) kept = " WHERE NOT (" + refused + ")";
  }
  if (as_given && kept.empty()) return rows;
  return "SELECT " + select + " FROM (" + rows + "\n) AS __basin_checked" + kept;
}

// From typed rows (WithGenerated's input) to stored rows, every check failing the write.
std::string StoredFromTyped(const StructType& schema, const delta::Metadata& metadata,
                            const std::string& typed_sql, const std::set<std::string>& generated_given,
                            const std::optional<std::string>& row_condition) {
  return CheckedRows(schema, metadata, WithGenerated(schema, typed_sql, generated_given), row_condition,
                     false);
}

// --- schema evolution --------------------------------------------------------------------

// Delta's name for a DuckDB scalar type, for comparing widths ("" when it has none).
std::string DeltaPrimitiveOf(const ColumnType& column, int& precision, int& scale) {
  static const std::pair<const char*, const char*> kNames[] = {
      {"TINYINT", "byte"}, {"SMALLINT", "short"}, {"INTEGER", "integer"}, {"BIGINT", "long"},
      {"FLOAT", "float"},  {"DOUBLE", "double"},  {"DATE", "date"},       {"TIMESTAMP", "timestamp_ntz"},
  };
  for (const auto& [duck, delta_name] : kNames) {
    if (column.type_name == duck) return delta_name;
  }
  if (column.type_name.rfind("DECIMAL", 0) == 0) {
    precision = column.width;
    scale = column.scale;
    return "decimal";
  }
  return "";
}

// The wider type schema evolution moves `current` to for `source` values, when the type
// widening rules Delta applies automatically allow it (PROTOCOL.md "Type Widening";
// integers to decimal or double only by ALTER TABLE).
DataTypePtr AutomaticWidening(const DataType& current, const ColumnType& source) {
  if (current.kind != DataType::Kind::kPrimitive || source.kind != ColumnType::Kind::kScalar) return nullptr;
  int precision = 0, scale = 0;
  const std::string to = DeltaPrimitiveOf(source, precision, scale);
  const std::string& from = current.primitive;
  static const std::vector<std::string> kIntegers = {"byte", "short", "integer", "long"};
  auto rank = [&](const std::string& name) {
    return std::find(kIntegers.begin(), kIntegers.end(), name) - kIntegers.begin();
  };
  bool wider = false;
  if (IsIntegerPrimitive(from) && IsIntegerPrimitive(to)) wider = rank(to) > rank(from);
  if (from == "float" && to == "double") wider = true;
  if (from == "date" && to == "timestamp_ntz") wider = true;
  if (from == "decimal" && to == "decimal") {
    const int k1 = precision - current.precision, k2 = scale - current.scale;
    wider = k1 >= k2 && k2 >= 0 && (k1 > 0 || k2 > 0);
  }
  if (!wider) return nullptr;
  auto out = std::make_shared<DataType>();
  out->primitive = to;
  out->precision = precision;
  out->scale = scale;
  return out;
}

struct Evolution {
  bool widen = false;  // delta.enableTypeWidening
  bool changed = false;
};

Result<DataTypePtr> EvolveType(const DataTypePtr& current, const ColumnType& source, const std::string& where,
                               const std::string& field_path, Evolution& evolution, json& type_changes);

// Adds to the struct `current` the fields `source` has and it lacks, and widens the ones
// both have, recursively.
Result<DataTypePtr> EvolveStruct(const DataTypePtr& current, const ColumnType& source,
                                 const std::string& where, Evolution& evolution) {
  auto out = std::make_shared<DataType>(*current);
  for (const ColumnType& child : source.children) {
    int index = FindField(out->struct_type, child.name);
    if (index < 0) {
      StructField field;
      field.name = child.name;
      ASSIGN_OR_RETURN(field.type, engine::DeltaTypeOf(child, where + "." + child.name));
      out->struct_type.fields.push_back(std::move(field));
      evolution.changed = true;
      continue;
    }
    StructField& field = out->struct_type.fields[index];
    json changes = json::array();
    ASSIGN_OR_RETURN(field.type,
                     EvolveType(field.type, child, where + "." + field.name, "", evolution, changes));
    if (!changes.empty()) {
      json& list = field.metadata[kTypeChanges];
      if (!list.is_array()) list = json::array();
      for (json& change : changes) list.push_back(std::move(change));
    }
  }
  return DataTypePtr(out);
}

Result<DataTypePtr> EvolveType(const DataTypePtr& current, const ColumnType& source, const std::string& where,
                               const std::string& field_path, Evolution& evolution, json& type_changes) {
  auto nested_path = [&](const char* part) {
    return field_path.empty() ? std::string(part) : field_path + "." + part;
  };
  switch (current->kind) {
    case DataType::Kind::kStruct:
      if (source.kind != ColumnType::Kind::kStruct) return current;
      return EvolveStruct(current, source, where, evolution);
    case DataType::Kind::kArray: {
      if (source.kind != ColumnType::Kind::kList) return current;
      auto out = std::make_shared<DataType>(*current);
      ASSIGN_OR_RETURN(out->element_type,
                       EvolveType(current->element_type, source.children[0], where + ".element",
                                  nested_path("element"), evolution, type_changes));
      return DataTypePtr(out);
    }
    case DataType::Kind::kMap: {
      if (source.kind != ColumnType::Kind::kMap) return current;
      auto out = std::make_shared<DataType>(*current);
      ASSIGN_OR_RETURN(out->key_type, EvolveType(current->key_type, source.children[0], where + ".key",
                                                 nested_path("key"), evolution, type_changes));
      ASSIGN_OR_RETURN(out->value_type, EvolveType(current->value_type, source.children[1], where + ".value",
                                                   nested_path("value"), evolution, type_changes));
      return DataTypePtr(out);
    }
    case DataType::Kind::kPrimitive:
      break;
  }
  if (!evolution.widen) return current;
  DataTypePtr wider = AutomaticWidening(*current, source);
  if (wider == nullptr) return current;
  json change = {{"fromType", current->ToJson()}, {"toType", wider->ToJson()}};
  if (!field_path.empty()) change["fieldPath"] = field_path;
  type_changes.push_back(std::move(change));
  evolution.changed = true;
  return wider;
}

bool SameProtocol(const delta::Protocol& a, const delta::Protocol& b) {
  return a.min_reader_version == b.min_reader_version && a.min_writer_version == b.min_writer_version &&
         a.reader_features == b.reader_features && a.writer_features == b.writer_features;
}

// The column paths delta.dataSkippingStatsColumns names ("a, b.c, `d.e`"; backquotes for
// names holding dots or commas), as paths of file column names: physical names under
// column mapping, the schema's spelling otherwise. nullopt when the property is absent.
// Names the schema lacks (a column dropped since) are left out.
std::optional<std::vector<std::vector<std::string>>> StatsColumnPaths(const StructType& schema,
                                                                      const delta::Metadata& metadata) {
  auto it = metadata.configuration.find("delta.dataSkippingStatsColumns");
  if (it == metadata.configuration.end()) return std::nullopt;
  // Split into dotted names, each a list of parts.
  std::vector<std::vector<std::string>> names(1, std::vector<std::string>(1));
  bool quoted = false;
  const std::string& text = it->second;
  for (size_t i = 0; i < text.size(); i++) {
    const char c = text[i];
    if (c == '`' && quoted && i + 1 < text.size() && text[i + 1] == '`') {
      names.back().back() += c;
      i++;
    } else if (c == '`') {
      quoted = !quoted;
    } else if (!quoted && c == ',') {
      names.emplace_back(1);
    } else if (!quoted && c == '.') {
      names.back().emplace_back();
    } else if (quoted || !std::isspace(static_cast<unsigned char>(c))) {
      names.back().back() += c;
    }
  }
  const bool mapped = delta::ColumnMappingEnabled(metadata);
  std::vector<std::vector<std::string>> paths;
  for (const auto& parts : names) {
    std::vector<std::string> path;
    const StructType* level = &schema;
    for (const std::string& part : parts) {
      int index = level == nullptr ? -1 : FindField(*level, part);
      if (index < 0) {
        path.clear();
        break;
      }
      const StructField& f = level->fields[index];
      path.push_back(mapped ? f.PhysicalName() : f.name);
      level = f.type->kind == DataType::Kind::kStruct ? &f.type->struct_type : nullptr;
    }
    if (!path.empty()) paths.push_back(std::move(path));
  }
  return paths;
}

}  // namespace

Result<PlannedRows> PlanRows(engine::Connection& conn, const WriteTarget& target,
                             const std::string& source_sql, const RowShape& shape) {
  ASSIGN_OR_RETURN(std::vector<ColumnType> source, conn.DescribeQuery(source_sql));
  return PlanDescribedRows(target, source_sql, source, shape);
}

Result<PlannedRows> PlanDescribedRows(const WriteTarget& target, const std::string& source_sql,
                                      const std::vector<engine::ColumnType>& source, const RowShape& shape) {
  const std::string& table = target.table_root;
  StructType schema = target.schema;
  delta::Metadata metadata = target.metadata;
  Evolution evolution;
  evolution.widen = shape.schema_evolution && TablePropertyIsTrue(metadata, "delta.enableTypeWidening");

  // Which table column each source column fills; -1 for one schema evolution adds.
  std::vector<int> target_of(source.size(), -1);
  std::vector<std::string> new_names(source.size());
  auto claim = [&](size_t i, const std::string& name) -> Status {
    int index = FindField(schema, name);
    if (index >= 0 && std::find(target_of.begin(), target_of.end(), index) != target_of.end()) {
      return Status::InvalidArgument(table + ": column " + schema.fields[index].name + " is given twice");
    }
    if (index < 0 && !shape.schema_evolution) {
      return Status::InvalidArgument(table + ": column " + name +
                                     " is not in the table (INSERT WITH SCHEMA EVOLUTION adds it)");
    }
    target_of[i] = index;
    new_names[i] = name;
    return Status::OK();
  };
  if (shape.columns) {
    if (shape.columns->size() != source.size()) {
      return Status::InvalidArgument(table + ": " + std::to_string(shape.columns->size()) +
                                     " column(s) named but the query gives " + std::to_string(source.size()));
    }
    for (size_t i = 0; i < source.size(); i++) RETURN_IF_ERROR(claim(i, (*shape.columns)[i]));
  } else if (shape.by_name) {
    for (size_t i = 0; i < source.size(); i++) RETURN_IF_ERROR(claim(i, source[i].name));
  } else {
    // By position: every column, or every column but the generated ones (computed).
    std::vector<int> positions;
    for (size_t j = 0; j < schema.fields.size(); j++) {
      if (!schema.fields[j].GenerationExpression()) positions.push_back(static_cast<int>(j));
    }
    if (source.size() != positions.size()) {
      positions.resize(schema.fields.size());
      for (size_t j = 0; j < positions.size(); j++) positions[j] = static_cast<int>(j);
    }
    if (source.size() < positions.size() || (source.size() > positions.size() && !shape.schema_evolution)) {
      return Status::InvalidArgument(table + ": the table has " + std::to_string(schema.fields.size()) +
                                     " column(s) but the query gives " + std::to_string(source.size()));
    }
    for (size_t i = 0; i < source.size(); i++) {
      if (i < positions.size()) {
        target_of[i] = positions[i];
      } else {
        RETURN_IF_ERROR(claim(i, source[i].name));
      }
    }
  }

  // Schema evolution: new columns at the end, wider types where type widening allows.
  if (shape.schema_evolution) {
    for (size_t i = 0; i < source.size(); i++) {
      if (target_of[i] >= 0) {
        StructField& field = schema.fields[target_of[i]];
        json changes = json::array();
        ASSIGN_OR_RETURN(field.type, EvolveType(field.type, source[i], field.name, "", evolution, changes));
        if (!changes.empty()) {
          json& list = field.metadata[kTypeChanges];
          if (!list.is_array()) list = json::array();
          for (json& change : changes) list.push_back(std::move(change));
        }
        continue;
      }
      int existing = FindField(schema, new_names[i]);
      if (existing >= 0) {
        return Status::InvalidArgument(table + ": column " + new_names[i] + " is given twice");
      }
      StructField field;
      field.name = new_names[i];
      ASSIGN_OR_RETURN(field.type, engine::DeltaTypeOf(source[i], field.name));
      schema.fields.push_back(std::move(field));
      target_of[i] = static_cast<int>(schema.fields.size()) - 1;
      evolution.changed = true;
    }
  }

  PlannedRows planned;
  if (evolution.changed) {
    AssignColumnMapping(schema, metadata.configuration);
    metadata.schema_string = delta::SchemaToJson(schema).dump();
    ASSIGN_OR_RETURN(delta::Protocol protocol, RequiredProtocol(metadata, schema, target.protocol));
    if (!SameProtocol(protocol, target.protocol)) planned.new_protocol = protocol;
    planned.new_metadata = metadata;
  }

  // Source columns by position, whatever their names (VALUES gives col0, col1, ...).
  std::string aliases;
  for (size_t i = 0; i < source.size(); i++) {
    aliases += (i > 0 ? ", " : "") + QuoteIdentifier("__basin_c" + std::to_string(i));
  }
  const std::string positional = "(" + source_sql + "\n) AS __basin_source(" + aliases + ")";

  Converter converter;
  std::set<std::string> generated_given;
  std::string select;
  for (size_t j = 0; j < schema.fields.size(); j++) {
    const StructField& f = schema.fields[j];
    auto given = std::find(target_of.begin(), target_of.end(), static_cast<int>(j));
    std::string value;
    if (given != target_of.end()) {
      const size_t i = given - target_of.begin();
      ASSIGN_OR_RETURN(value, converter.Convert(QuoteIdentifier("__basin_c" + std::to_string(i)), source[i],
                                                *f.type, f.name, 0));
      if (f.GenerationExpression()) generated_given.insert(f.name);
    } else if (f.GenerationExpression()) {
      continue;  // computed from the others
    } else {
      value = "CAST(NULL AS " + f.type->ToDuckDBType() + ")";
    }
    select += (select.empty() ? "" : ", ") + value + " AS " + QuoteIdentifier(f.name);
  }
  const std::string typed = "SELECT " + select + " FROM " + positional;
  planned.logical_rows_sql = WithGenerated(schema, typed, generated_given);
  planned.stored_rows_sql =
      CheckedRows(schema, metadata, planned.logical_rows_sql, shape.row_condition, false);
  return planned;
}

namespace {

// The WHEN clauses of a CASE over a row of `target` (`__basin_refused`) that give, for the
// first constraint RefusedRowsSql names that it breaks, `then(the constraint's description
// as an SQL literal)`. Empty when the table has no such constraint.
std::string RefusalCases(const WriteTarget& target,
                         const std::function<std::string(const std::string&)>& then) {
  std::string cases;
  for (const RowCheck& check : RefusableChecks(target.schema, target.metadata)) {
    cases +=
        " WHEN NOT COALESCE((" + check.condition + "), FALSE) THEN " + then(QuoteLiteral(check.description));
  }
  return cases;
}

// A refused row's value: the row as JSON text.
constexpr char kRefusedValueSql[] = "CAST(to_json(__basin_refused) AS VARCHAR)";

}  // namespace

std::string RefusedRowsSql(const WriteTarget& target, const std::string& logical_rows_sql) {
  const std::string error = RefusalCases(target, [](const std::string& description) { return description; });
  if (error.empty()) return {};
  return std::string("SELECT value, error FROM (SELECT ") + kRefusedValueSql + " AS value, CASE" + error +
         " END AS error FROM (" + logical_rows_sql + "\n) AS __basin_refused) WHERE error IS NOT NULL";
}

std::string RefusingRowsSql(const WriteTarget& target, const std::string& logical_rows_sql, int64_t token) {
  const std::string refuse = RefusalCases(target, [token](const std::string& description) {
    return "basin_refuse(" + std::to_string(token) + ", " + kRefusedValueSql + ", " + description + ")";
  });
  if (refuse.empty()) return {};
  return "SELECT * FROM (" + logical_rows_sql + "\n) AS __basin_refused WHERE CASE" + refuse +
         " ELSE TRUE END";
}

std::string RefusedCondition(const WriteTarget& target) {
  return RefusedConditionOf(target.schema, target.metadata);
}

std::string AcceptedRowsSql(const WriteTarget& target, const std::string& logical_rows_sql,
                            const std::optional<std::string>& row_condition, bool leave_refused_out) {
  return CheckedRows(target.schema, target.metadata, logical_rows_sql, row_condition, leave_refused_out);
}

Result<std::string> StoredRowsSql(const WriteTarget& target, const std::string& logical_rows_sql) {
  std::string select;
  for (const StructField& f : target.schema.fields) {
    if (f.GenerationExpression()) continue;  // recomputed from the row
    select += (select.empty() ? "" : ", ") + std::string("CAST(") + QuoteIdentifier(f.name) + " AS " +
              f.type->ToDuckDBType() + ") AS " + QuoteIdentifier(f.name);
  }
  if (select.empty()) select = "NULL AS __basin_nothing";
  const std::string typed = "SELECT " + select + " FROM (" + logical_rows_sql + "\n) AS __basin_rows";
  return StoredFromTyped(target.schema, target.metadata, typed, {}, std::nullopt);
}

Result<std::vector<delta::AddFile>> WriteRows(engine::Connection& conn, const WriteTarget& target,
                                              const std::string& stored_rows_sql) {
  engine::WriteOptions options;
  const bool mapped = delta::ColumnMappingEnabled(target.metadata);
  for (const std::string& name : target.metadata.partition_columns) {
    int index = FindField(target.schema, name);
    if (index < 0) {
      return Status::Corruption(target.table_root + ": partition column " + name + " is not in the schema");
    }
    const StructField& f = target.schema.fields[index];
    options.partition_columns.push_back(mapped ? f.PhysicalName() : f.name);
  }
  ASSIGN_OR_RETURN(options.target_file_size_bytes, TargetFileSizeBytes(target.metadata));
  ASSIGN_OR_RETURN(int64_t indexed, DataSkippingNumIndexedCols(target.metadata));
  options.num_indexed_cols =
      indexed < 0 ? std::numeric_limits<int>::max() : static_cast<int>(std::min<int64_t>(indexed, 1 << 20));
  options.stats_columns = StatsColumnPaths(target.schema, target.metadata);
  options.columns = engine::StoredColumnTypes(target.schema, mapped);
  options.layout = target.file_layout;
  auto written = engine::WriteDataFiles(conn, stored_rows_sql, *target.store, options);
  if (written.ok()) return written;
  std::string message = written.status().message();
  if (message.rfind(kDuckDBInputError, 0) == 0) message = message.substr(kDuckDBInputError.size());
  return Status(written.status().code(), message).WithContext(target.table_root);
}

Result<std::vector<delta::CdcFile>> WriteChangeRows(engine::Connection& conn, const WriteTarget& target,
                                                    const std::string& logical_rows_sql) {
  constexpr const char* kChangeDataFolder = "_change_data";
  WriteTarget changes = target;
  changes.store = NewPrefixedObjectStore(target.store, kChangeDataFolder);
  auto string_type = std::make_shared<DataType>();
  string_type->primitive = "string";
  StructField change_type;
  change_type.name = "_change_type";
  change_type.type = std::move(string_type);
  changes.schema.fields.push_back(std::move(change_type));
  changes.metadata.schema_string = delta::SchemaToJson(changes.schema).dump();
  ASSIGN_OR_RETURN(std::string stored, StoredRowsSql(changes, logical_rows_sql));
  ASSIGN_OR_RETURN(std::vector<delta::AddFile> files, WriteRows(conn, changes, stored));
  std::vector<delta::CdcFile> out;
  for (delta::AddFile& file : files) {
    delta::CdcFile cdc;
    cdc.path = std::string(kChangeDataFolder) + "/" + file.path;
    cdc.partition_values = std::move(file.partition_values);
    cdc.size = file.size;
    cdc.data_change = false;
    out.push_back(std::move(cdc));
  }
  return out;
}

std::string LogicalColumnsSql(const StructType& schema) {
  std::string out;
  for (const StructField& f : schema.fields) {
    out += (out.empty() ? "" : ", ") +
           Rebuild(QuoteIdentifier(f.PhysicalName()), *f.type, Naming::kToLogical, false, f.name, 0) +
           " AS " + QuoteIdentifier(f.name);
  }
  return out;
}

}  // namespace basin::commands
