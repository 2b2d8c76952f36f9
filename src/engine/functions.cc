#include "engine/functions.h"

#include <duckdb.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/refused_rows.h"
#include "engine/variant.h"
#include "engine/vector_access.h"

namespace basin::engine {

namespace {

// One level of a variant as DuckDB hands it over: a group with an encoded `value` and/or a
// shredded `typed_value`, plus what typed_value holds.
struct ShreddedGroup {
  enum class Kind { kUnshredded, kPrimitive, kObject, kArray };
  duckdb_vector group = nullptr;
  duckdb_vector value = nullptr;  // BLOB; null when the group has no value column
  duckdb_vector typed = nullptr;  // null when kUnshredded
  Kind kind = Kind::kUnshredded;
  // kPrimitive: the DuckDB type, and for decimals their storage type and scale.
  duckdb_type primitive = DUCKDB_TYPE_INVALID;
  duckdb_type decimal_storage = DUCKDB_TYPE_INVALID;
  int decimal_scale = 0;
  // kObject: shredded fields, sorted by name; kArray: the one element group.
  std::vector<std::string> field_names;
  std::vector<ShreddedGroup> children;
};

bool IsShreddablePrimitive(duckdb_type type) {
  switch (type) {
    case DUCKDB_TYPE_BOOLEAN:
    case DUCKDB_TYPE_TINYINT:
    case DUCKDB_TYPE_SMALLINT:
    case DUCKDB_TYPE_INTEGER:
    case DUCKDB_TYPE_BIGINT:
    case DUCKDB_TYPE_FLOAT:
    case DUCKDB_TYPE_DOUBLE:
    case DUCKDB_TYPE_DECIMAL:
    case DUCKDB_TYPE_DATE:
    case DUCKDB_TYPE_TIME:
    case DUCKDB_TYPE_TIMESTAMP:
    case DUCKDB_TYPE_TIMESTAMP_TZ:
    case DUCKDB_TYPE_TIMESTAMP_NS:
    case DUCKDB_TYPE_VARCHAR:
    case DUCKDB_TYPE_BLOB:
    case DUCKDB_TYPE_UUID:
      return true;
    default:
      return false;
  }
}

Status NotAVariant(const std::string& path, const std::string& why) {
  return Status::InvalidArgument(std::string(kVariantToJsonFunction) + ": " + path + " " + why);
}

// Reads the shape of a variant group of type `type` (a STRUCT). The top-level group also
// holds `metadata`, which the caller reads.
Result<ShreddedGroup> DescribeGroup(duckdb_vector group, duckdb_logical_type type, const std::string& path,
                                    bool top_level, int depth) {
  if (depth > kMaxVariantDepth) return NotAVariant(path, "is nested too deeply");
  if (duckdb_get_type_id(type) != DUCKDB_TYPE_STRUCT)
    return NotAVariant(path, "is not a STRUCT variant group");
  ShreddedGroup out;
  out.group = group;
  duckdb_logical_type typed_type = nullptr;
  LogicalTypeGuard typed_guard{nullptr};
  idx_t count = duckdb_struct_type_child_count(type);
  for (idx_t i = 0; i < count; i++) {
    std::string name = StructChildName(type, i);
    LogicalTypeGuard child{duckdb_struct_type_child_type(type, i)};
    duckdb_vector vector = duckdb_struct_vector_get_child(group, i);
    if (name == "value" || (top_level && name == "metadata")) {
      if (duckdb_get_type_id(child.type) != DUCKDB_TYPE_BLOB)
        return NotAVariant(path + "." + name, "is not a BLOB");
      if (name == "value") out.value = vector;
    } else if (name == "typed_value") {
      out.typed = vector;
      typed_guard.type = duckdb_struct_type_child_type(type, i);
      typed_type = typed_guard.type;
    } else {
      return NotAVariant(path, "has an unexpected field '" + name + "'");
    }
  }
  if (typed_type == nullptr) return out;

  const std::string typed_path = path + ".typed_value";
  switch (duckdb_get_type_id(typed_type)) {
    case DUCKDB_TYPE_STRUCT: {
      out.kind = ShreddedGroup::Kind::kObject;
      idx_t fields = duckdb_struct_type_child_count(typed_type);
      std::vector<std::pair<std::string, ShreddedGroup>> named;
      for (idx_t i = 0; i < fields; i++) {
        std::string name = StructChildName(typed_type, i);
        LogicalTypeGuard field_type{duckdb_struct_type_child_type(typed_type, i)};
        ASSIGN_OR_RETURN(ShreddedGroup field,
                         DescribeGroup(duckdb_struct_vector_get_child(out.typed, i), field_type.type,
                                       typed_path + "." + name, false, depth + 1));
        named.emplace_back(std::move(name), std::move(field));
      }
      // Variant objects list their keys in byte order; merged objects keep to it.
      std::sort(named.begin(), named.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      for (auto& [name, field] : named) {
        out.field_names.push_back(std::move(name));
        out.children.push_back(std::move(field));
      }
      return out;
    }
    case DUCKDB_TYPE_LIST: {
      out.kind = ShreddedGroup::Kind::kArray;
      LogicalTypeGuard element_type{duckdb_list_type_child_type(typed_type)};
      ASSIGN_OR_RETURN(ShreddedGroup element,
                       DescribeGroup(duckdb_list_vector_get_child(out.typed), element_type.type,
                                     typed_path + ".element", false, depth + 1));
      out.children.push_back(std::move(element));
      return out;
    }
    default:
      out.kind = ShreddedGroup::Kind::kPrimitive;
      out.primitive = duckdb_get_type_id(typed_type);
      if (!IsShreddablePrimitive(out.primitive)) {
        return NotAVariant(typed_path, "has a type that Variant shredding does not use");
      }
      if (out.primitive == DUCKDB_TYPE_DECIMAL) {
        out.decimal_storage = duckdb_decimal_internal_type(typed_type);
        out.decimal_scale = duckdb_decimal_scale(typed_type);
      }
      return out;
  }
}

Status AppendPrimitive(const ShreddedGroup& node, idx_t row, std::string* out) {
  using variant_json::TimeUnit;
  duckdb_vector v = node.typed;
  switch (node.primitive) {
    case DUCKDB_TYPE_BOOLEAN:
      out->append(At<bool>(v, row) ? "true" : "false");
      break;
    case DUCKDB_TYPE_TINYINT:
      variant_json::AppendInt(At<int8_t>(v, row), out);
      break;
    case DUCKDB_TYPE_SMALLINT:
      variant_json::AppendInt(At<int16_t>(v, row), out);
      break;
    case DUCKDB_TYPE_INTEGER:
      variant_json::AppendInt(At<int32_t>(v, row), out);
      break;
    case DUCKDB_TYPE_BIGINT:
      variant_json::AppendInt(At<int64_t>(v, row), out);
      break;
    case DUCKDB_TYPE_FLOAT:
      variant_json::AppendFloat(At<float>(v, row), out);
      break;
    case DUCKDB_TYPE_DOUBLE:
      variant_json::AppendDouble(At<double>(v, row), out);
      break;
    case DUCKDB_TYPE_DECIMAL: {
      __int128 unscaled = 0;
      switch (node.decimal_storage) {
        case DUCKDB_TYPE_SMALLINT:
          unscaled = At<int16_t>(v, row);
          break;
        case DUCKDB_TYPE_INTEGER:
          unscaled = At<int32_t>(v, row);
          break;
        case DUCKDB_TYPE_BIGINT:
          unscaled = At<int64_t>(v, row);
          break;
        default: {
          auto wide = At<duckdb_hugeint>(v, row);
          unscaled = static_cast<__int128>(
              static_cast<unsigned __int128>(static_cast<uint64_t>(wide.upper)) << 64 | wide.lower);
        }
      }
      return variant_json::AppendDecimal(unscaled, node.decimal_scale, out);
    }
    case DUCKDB_TYPE_DATE:
      variant_json::AppendDate(At<int32_t>(v, row), out);
      break;
    case DUCKDB_TYPE_TIME:
      return variant_json::AppendTime(At<int64_t>(v, row), out);
    case DUCKDB_TYPE_TIMESTAMP:
      variant_json::AppendTimestamp(At<int64_t>(v, row), TimeUnit::kMicros, false, out);
      break;
    case DUCKDB_TYPE_TIMESTAMP_TZ:
      variant_json::AppendTimestamp(At<int64_t>(v, row), TimeUnit::kMicros, true, out);
      break;
    case DUCKDB_TYPE_TIMESTAMP_NS:
      // TIMESTAMP_NS has no time zone variant in DuckDB, so no offset is shown.
      variant_json::AppendTimestamp(At<int64_t>(v, row), TimeUnit::kNanos, false, out);
      break;
    case DUCKDB_TYPE_VARCHAR:
      return variant_json::AppendString(BytesAt(v, row), out);
    case DUCKDB_TYPE_BLOB:
      variant_json::AppendBinary(BytesAt(v, row), out);
      break;
    case DUCKDB_TYPE_UUID: {
      // DuckDB stores a UUID as a hugeint with the top bit flipped, so that they sort as text.
      auto stored = At<duckdb_hugeint>(v, row);
      uint64_t high = static_cast<uint64_t>(stored.upper) ^ (uint64_t{1} << 63);
      uint8_t bytes[16];
      for (int i = 0; i < 8; i++) {
        bytes[i] = static_cast<uint8_t>(high >> (56 - 8 * i));
        bytes[8 + i] = static_cast<uint8_t>(stored.lower >> (56 - 8 * i));
      }
      variant_json::AppendUuid(bytes, out);
      break;
    }
    default:
      return Status::Internal("unexpected shredded primitive type");
  }
  return Status::OK();
}

Status InvalidShredding(const std::string& what) {
  return Status::Corruption("invalid shredded variant: " + what);
}

// Appends the JSON of the variant that `node` holds at `row` (VariantShredding.md,
// "Reconstructing a Shredded Variant"). Returns false, appending nothing, when the value is
// missing (both columns null), which only a shredded object field may be.
Result<bool> AppendShredded(const ShreddedGroup& node, idx_t row, const VariantMetadata& metadata,
                            std::string* out) {
  if (!RowIsValid(node.group, row)) return false;
  bool has_value = node.value != nullptr && RowIsValid(node.value, row);
  bool has_typed = node.typed != nullptr && RowIsValid(node.typed, row);
  if (!has_typed) {
    if (!has_value) return false;
    RETURN_IF_ERROR(AppendVariantJson(metadata, BytesAt(node.value, row), out));
    return true;
  }
  switch (node.kind) {
    case ShreddedGroup::Kind::kUnshredded:
      break;
    case ShreddedGroup::Kind::kPrimitive:
      if (has_value) return InvalidShredding("conflicting value and typed_value for a primitive");
      RETURN_IF_ERROR(AppendPrimitive(node, row, out));
      return true;
    case ShreddedGroup::Kind::kArray: {
      if (has_value) return InvalidShredding("conflicting value and typed_value for an array");
      auto entry = At<duckdb_list_entry>(node.typed, row);
      out->push_back('[');
      for (idx_t i = 0; i < entry.length; i++) {
        if (i > 0) out->push_back(',');
        ASSIGN_OR_RETURN(bool present, AppendShredded(node.children[0], entry.offset + i, metadata, out));
        if (!present) return InvalidShredding("array element has neither value nor typed_value");
      }
      out->push_back(']');
      return true;
    }
    case ShreddedGroup::Kind::kObject: {
      std::vector<std::pair<std::string_view, std::string>> fields;
      for (size_t i = 0; i < node.children.size(); i++) {
        std::string json;
        ASSIGN_OR_RETURN(bool present, AppendShredded(node.children[i], row, metadata, &json));
        if (present) fields.emplace_back(node.field_names[i], std::move(json));
      }
      if (has_value) {
        // A partially shredded object: the fields that were not shredded.
        auto rest = VariantObjectFieldsJson(metadata, BytesAt(node.value, row));
        if (!rest.ok()) return rest.status().WithContext("value of a partially shredded object");
        for (auto& field : *rest) fields.push_back(std::move(field));
        std::sort(fields.begin(), fields.end(),
                  [](const auto& a, const auto& b) { return a.first < b.first; });
        auto duplicate = std::adjacent_find(fields.begin(), fields.end(),
                                            [](const auto& a, const auto& b) { return a.first == b.first; });
        if (duplicate != fields.end()) {
          return InvalidShredding("field '" + std::string(duplicate->first) +
                                  "' is both shredded and in value");
        }
      }
      out->push_back('{');
      for (size_t i = 0; i < fields.size(); i++) {
        if (i > 0) out->push_back(',');
        RETURN_IF_ERROR(variant_json::AppendString(fields[i].first, out));
        out->push_back(':');
        out->append(fields[i].second);
      }
      out->push_back('}');
      return true;
    }
  }
  return Status::Internal("unreachable shredded variant kind");
}

Status VariantChunkToJson(duckdb_data_chunk input, duckdb_vector output) {
  return VariantVectorToJson(duckdb_data_chunk_get_vector(input, 0), duckdb_data_chunk_get_size(input),
                             output);
}

void VariantToJsonFunction(duckdb_function_info info, duckdb_data_chunk input, duckdb_vector output) {
  Status st = VariantChunkToJson(input, output);
  if (!st.ok()) duckdb_scalar_function_set_error(info, st.ToString().c_str());
}

// window(...) in engine/functions.h: buckets aligned to the Unix epoch, as Spark's are; the
// hopping form is read by streams only (basin_hop, engine/stream_calls.h).
constexpr char kWindowMacro[] =
    "CREATE TEMP MACRO \"window\"(event_time, size) AS {"
    "'start': time_bucket(CAST(size AS INTERVAL), event_time, TIMESTAMP '1970-01-01'), "
    "'end': time_bucket(CAST(size AS INTERVAL), event_time, TIMESTAMP '1970-01-01') + CAST(size AS INTERVAL)}, "
    "(event_time, size, slide) AS error('window(ts, size, slide) is a hopping window, which a stream "
    "reading ts with a WATERMARK computes (docs/streams.md)'); "
    "CREATE TEMP MACRO basin_hop(hopping_window, event_time, size, slide) AS hopping_window";

}  // namespace

Status VariantVectorToJson(duckdb_vector group, idx_t rows, duckdb_vector output) {
  LogicalTypeGuard type{duckdb_vector_get_column_type(group)};
  ASSIGN_OR_RETURN(ShreddedGroup root, DescribeGroup(group, type.type, "argument", true, 0));
  duckdb_vector metadata_vector = nullptr;
  for (idx_t i = 0; i < duckdb_struct_type_child_count(type.type); i++) {
    if (StructChildName(type.type, i) == "metadata")
      metadata_vector = duckdb_struct_vector_get_child(group, i);
  }
  if (metadata_vector == nullptr) return NotAVariant("argument", "has no metadata field");

  std::string json;
  for (idx_t row = 0; row < rows; row++) {
    if (!RowIsValid(group, row)) {
      SetRowNull(output, row);
      continue;
    }
    if (!RowIsValid(metadata_vector, row)) return Status::Corruption("malformed variant: metadata is NULL");
    ASSIGN_OR_RETURN(VariantMetadata metadata, VariantMetadata::Parse(BytesAt(metadata_vector, row)));
    json.clear();
    ASSIGN_OR_RETURN(bool present, AppendShredded(root, row, metadata, &json));
    // A variant that is there but holds nothing is Variant null (VariantShredding.md).
    if (!present) json = "null";
    duckdb_vector_assign_string_element_len(output, row, json.data(), json.size());
  }
  return Status::OK();
}

Status RegisterBasinFunctions(duckdb_connection conn) {
  duckdb_scalar_function function = duckdb_create_scalar_function();
  duckdb_scalar_function_set_name(function, kVariantToJsonFunction);
  LogicalTypeGuard any{duckdb_create_logical_type(DUCKDB_TYPE_ANY)};
  LogicalTypeGuard varchar{duckdb_create_logical_type(DUCKDB_TYPE_VARCHAR)};
  // ANY: the STRUCT's shape differs with each column's shredding.
  duckdb_scalar_function_add_parameter(function, any.type);
  duckdb_scalar_function_set_return_type(function, varchar.type);
  duckdb_scalar_function_set_function(function, VariantToJsonFunction);
  duckdb_state state = duckdb_register_scalar_function(conn, function);
  duckdb_destroy_scalar_function(&function);
  if (state != DuckDBSuccess) {
    return Status::Internal(std::string("DuckDB refused to register function ") + kVariantToJsonFunction);
  }
  return RegisterRefuseFunction(conn);
}

Status CreateBasinMacros(duckdb_connection conn) {
  duckdb_result result;
  const duckdb_state state = duckdb_query(conn, kWindowMacro, &result);
  std::string error = state == DuckDBSuccess ? "" : duckdb_result_error(&result);
  duckdb_destroy_result(&result);
  if (state == DuckDBSuccess) return Status::OK();
  return Status::Internal("DuckDB refused to create the macro window(...): " + error);
}

}  // namespace basin::engine
