#include "engine/parquet_log_io.h"

#include <duckdb.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <limits>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "common/uuid.h"
#include "delta/parsed_stats.h"
#include "delta/predicate.h"
#include "delta/temporal.h"
#include "engine/status_transport.h"
#include "engine/store_registry.h"
#include "engine/vector_access.h"

namespace basin::engine {

namespace {

using delta::Action;
using delta::Int128;

// The action columns a checkpoint may hold, in the order rows are checked; others
// (commitInfo, cdc, unknown ones) never matter here.
constexpr const char* kActionColumns[] = {"add", "remove",         "metaData",           "protocol",
                                          "txn", "domainMetadata", "checkpointMetadata", "sidecar"};

// ---------------------------------------------------------------------------------------
// Result vectors as a tree: one Column per vector of a chunk, with its struct fields or
// list element. Rebuilt for every chunk (DuckDB hands out new vectors), which costs a few
// calls per field and chunk.

struct Column {
  duckdb_type id = DUCKDB_TYPE_INVALID;
  std::vector<std::string> names;  // STRUCT: field names
  std::vector<Column> children;    // STRUCT: fields; LIST/MAP: the element (MAP: STRUCT(key, value))
  uint8_t decimal_scale = 0;
  duckdb_type decimal_storage = DUCKDB_TYPE_INVALID;
  bool json = false;  // VARCHAR holding JSON text (DuckDB's JSON type)
  // The vector's data and validity mask, looked up once per chunk: a checkpoint has
  // millions of cells, and each C API call costs more than reading the cell.
  const void* data = nullptr;
  const uint64_t* validity = nullptr;  // nullptr: every row is valid

  static Column Of(duckdb_vector vector) {
    Column c;
    c.data = duckdb_vector_get_data(vector);
    c.validity = duckdb_vector_get_validity(vector);
    LogicalTypeGuard type{duckdb_vector_get_column_type(vector)};
    c.id = duckdb_get_type_id(type.type);
    if (char* alias = duckdb_logical_type_get_alias(type.type); alias != nullptr) {
      c.json = std::string_view(alias) == "JSON";
      duckdb_free(alias);
    }
    if (c.id == DUCKDB_TYPE_STRUCT) {
      const idx_t n = duckdb_struct_type_child_count(type.type);
      for (idx_t i = 0; i < n; i++) {
        c.names.push_back(StructChildName(type.type, i));
        c.children.push_back(Of(duckdb_struct_vector_get_child(vector, i)));
      }
    } else if (c.id == DUCKDB_TYPE_LIST || c.id == DUCKDB_TYPE_MAP) {
      c.children.push_back(Of(duckdb_list_vector_get_child(vector)));
    } else if (c.id == DUCKDB_TYPE_DECIMAL) {
      c.decimal_scale = duckdb_decimal_scale(type.type);
      c.decimal_storage = duckdb_decimal_internal_type(type.type);
    }
    return c;
  }

  bool Valid(idx_t row) const { return ValidIn(validity, row); }
  template <typename T>
  T At(idx_t row) const {
    return CellIn<T>(data, row);
  }
  std::string_view Bytes(idx_t row) const { return BytesIn(data, row); }

  // STRUCT: the field named `name`, or nullptr.
  const Column* Field(std::string_view name) const {
    for (size_t i = 0; i < names.size(); i++) {
      if (names[i] == name) return &children[i];
    }
    return nullptr;
  }

  // LIST/MAP: the element rows of `row`.
  duckdb_list_entry Entry(idx_t row) const { return At<duckdb_list_entry>(row); }
};

std::optional<int64_t> IntegerAt(const Column& c, idx_t row) {
  switch (c.id) {
    case DUCKDB_TYPE_TINYINT:
      return c.At<int8_t>(row);
    case DUCKDB_TYPE_SMALLINT:
      return c.At<int16_t>(row);
    case DUCKDB_TYPE_INTEGER:
      return c.At<int32_t>(row);
    case DUCKDB_TYPE_BIGINT:
      return c.At<int64_t>(row);
    case DUCKDB_TYPE_UTINYINT:
      return c.At<uint8_t>(row);
    case DUCKDB_TYPE_USMALLINT:
      return c.At<uint16_t>(row);
    case DUCKDB_TYPE_UINTEGER:
      return c.At<uint32_t>(row);
    case DUCKDB_TYPE_UBIGINT: {
      const auto v = c.At<uint64_t>(row);
      if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
      return static_cast<int64_t>(v);
    }
    default:
      return std::nullopt;
  }
}

// A DECIMAL cell's unscaled value.
Int128 UnscaledAt(const Column& c, idx_t row) {
  switch (c.decimal_storage) {
    case DUCKDB_TYPE_SMALLINT:
      return c.At<int16_t>(row);
    case DUCKDB_TYPE_INTEGER:
      return c.At<int32_t>(row);
    case DUCKDB_TYPE_BIGINT:
      return c.At<int64_t>(row);
    default: {
      const auto h = c.At<duckdb_hugeint>(row);
      return static_cast<Int128>(static_cast<unsigned __int128>(static_cast<uint64_t>(h.upper)) << 64 |
                                 h.lower);
    }
  }
}

std::string DecimalText(Int128 unscaled, int scale) {
  return delta::Literal::Decimal(unscaled, 38, scale).ToString();
}

// Microseconds since the epoch of a TIMESTAMP-family cell; nullopt for other types.
std::optional<int64_t> MicrosAt(const Column& c, idx_t row) {
  switch (c.id) {
    case DUCKDB_TYPE_TIMESTAMP:
    case DUCKDB_TYPE_TIMESTAMP_TZ:
      return c.At<int64_t>(row);
    case DUCKDB_TYPE_TIMESTAMP_S:
      return c.At<int64_t>(row) * 1'000'000;
    case DUCKDB_TYPE_TIMESTAMP_MS:
      return c.At<int64_t>(row) * 1'000;
    case DUCKDB_TYPE_TIMESTAMP_NS: {
      const int64_t ns = c.At<int64_t>(row);
      return ns >= 0 ? ns / 1000 : -((-ns + 999) / 1000);
    }
    default:
      return std::nullopt;
  }
}

// A UUID cell as text (DuckDB keeps it as a hugeint with the top bit flipped).
std::string UuidText(const Column& c, idx_t row) {
  const auto h = c.At<duckdb_hugeint>(row);
  const uint64_t upper = static_cast<uint64_t>(h.upper) ^ (uint64_t{1} << 63);
  char buf[40];
  std::snprintf(
      buf, sizeof(buf), "%08llx-%04llx-%04llx-%04llx-%012llx", static_cast<unsigned long long>(upper >> 32),
      static_cast<unsigned long long>((upper >> 16) & 0xffff),
      static_cast<unsigned long long>(upper & 0xffff), static_cast<unsigned long long>(h.lower >> 48),
      static_cast<unsigned long long>(h.lower & 0xffffffffffffULL));
  return buf;
}

// JSON text as a scalar's text: a string's content, other scalars as written, nullopt for
// null (what text a writer that typed a field as JSON meant).
std::optional<std::string> JsonScalarText(std::string_view text) {
  nlohmann::json value = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) return std::string(text);
  if (value.is_null()) return std::nullopt;
  if (value.is_string()) return value.get<std::string>();
  return value.dump();
}

// A scalar cell as the log writes it in partition values (PROTOCOL.md "Partition Value
// Serialization"): numbers in decimal, dates YYYY-MM-DD, timestamps YYYY-MM-DD HH:MM:SS[.f],
// booleans true/false. nullopt for NULL and for types without a text form here.
std::optional<std::string> ScalarText(const Column& c, idx_t row) {
  if (!c.Valid(row)) return std::nullopt;
  if (auto n = IntegerAt(c, row)) return std::to_string(*n);
  if (auto micros = MicrosAt(c, row)) return delta::FormatTimestampMicros(*micros);
  char buf[64];
  switch (c.id) {
    case DUCKDB_TYPE_VARCHAR:
      if (c.json) return JsonScalarText(c.Bytes(row));
      return std::string(c.Bytes(row));
    case DUCKDB_TYPE_UUID:
      return UuidText(c, row);
    case DUCKDB_TYPE_BOOLEAN:
      return c.At<bool>(row) ? "true" : "false";
    case DUCKDB_TYPE_DATE:
      return delta::FormatDate(c.At<int32_t>(row));
    case DUCKDB_TYPE_DECIMAL:
      return DecimalText(UnscaledAt(c, row), c.decimal_scale);
    case DUCKDB_TYPE_FLOAT:
      std::snprintf(buf, sizeof(buf), "%.9g", static_cast<double>(c.At<float>(row)));
      return std::string(buf);
    case DUCKDB_TYPE_DOUBLE:
      std::snprintf(buf, sizeof(buf), "%.17g", c.At<double>(row));
      return std::string(buf);
    default:
      return std::nullopt;
  }
}

// ---------------------------------------------------------------------------------------
// stats_parsed, typed as the checkpoint has it, into delta::ParsedStats.

// How a stats_parsed leaf of this type is kept; nullopt for types statistics have no use
// for (binary, UUIDs, lists), which are left out.
std::optional<delta::ParsedStats::Kind> StatsKindOf(const Column& c) {
  using Kind = delta::ParsedStats::Kind;
  switch (c.id) {
    case DUCKDB_TYPE_BOOLEAN:
      return Kind::kBoolean;
    case DUCKDB_TYPE_TINYINT:
    case DUCKDB_TYPE_SMALLINT:
    case DUCKDB_TYPE_INTEGER:
    case DUCKDB_TYPE_BIGINT:
    case DUCKDB_TYPE_UTINYINT:
    case DUCKDB_TYPE_USMALLINT:
    case DUCKDB_TYPE_UINTEGER:
    case DUCKDB_TYPE_UBIGINT:
      return Kind::kInteger;
    case DUCKDB_TYPE_FLOAT:
      return Kind::kFloat;
    case DUCKDB_TYPE_DOUBLE:
      return Kind::kDouble;
    case DUCKDB_TYPE_DECIMAL:
      return Kind::kDecimal;
    case DUCKDB_TYPE_VARCHAR:
      return Kind::kString;
    case DUCKDB_TYPE_DATE:
      return Kind::kDate;
    case DUCKDB_TYPE_TIMESTAMP:
      return Kind::kTimestampNtz;
    case DUCKDB_TYPE_TIMESTAMP_TZ:
    case DUCKDB_TYPE_TIMESTAMP_S:
    case DUCKDB_TYPE_TIMESTAMP_MS:
    case DUCKDB_TYPE_TIMESTAMP_NS:
      return Kind::kTimestamp;
    default:
      return std::nullopt;
  }
}

// Reads the stats_parsed cells of one checkpoint file into one ParsedStats, a row per
// cell. Its leaves are the struct's scalar fields, found in the first cell; every chunk's
// vectors have the same shape, so they are matched to the leaves in field order. Values
// are copied a leaf at a time when the chunk ends (EndChunk): a switch per leaf and chunk,
// not per value.
class ParsedStatsReader {
 public:
  // Gives `out` a stats row for the cell of `column` (a STRUCT) at `row`, added and filled
  // by the next EndChunk(). `column` stays the same within a chunk.
  void Read(const Column& column, idx_t row, delta::AddFile& out) {
    if (!stats_) {
      stats_ = std::make_shared<delta::ParsedStats>();
      std::vector<std::string> path;
      AddLeaves(column, path);
    }
    column_ = &column;
    const auto stats_row = static_cast<uint32_t>(stats_->num_rows() + pending_.size());
    pending_.push_back(Cell{row, stats_row});
    out.parsed_stats = stats_;
    out.parsed_stats_row = stats_row;
  }

  // Copies the values of the cells read since the last call, before their chunk goes.
  void EndChunk() {
    if (pending_.empty()) return;
    stats_->AddRows(pending_.size());
    size_t next_leaf = 0;
    Fill(*column_, pending_, next_leaf);
    pending_.clear();
  }

  void Finish() {
    if (stats_) stats_->ShrinkToFit();
  }

 private:
  static constexpr size_t kNoLeaf = static_cast<size_t>(-1);

  struct Cell {
    idx_t row;           // in the chunk
    uint32_t stats_row;  // in stats_
  };

  void AddLeaves(const Column& column, std::vector<std::string>& path) {
    for (size_t i = 0; i < column.children.size(); i++) {
      const Column& child = column.children[i];
      path.push_back(column.names[i]);
      if (child.id == DUCKDB_TYPE_STRUCT) {
        AddLeaves(child, path);
      } else if (auto kind = StatsKindOf(child)) {
        leaves_.push_back(stats_->AddLeaf({path, *kind, child.decimal_scale}));
      } else {
        leaves_.push_back(kNoLeaf);
      }
      path.pop_back();
    }
  }

  // Sets the leaves under `column` for `cells`, leaf by leaf from `next_leaf` on; a NULL
  // struct sets nothing under it.
  void Fill(const Column& column, const std::vector<Cell>& cells, size_t& next_leaf) {
    std::vector<Cell> valid;
    valid.reserve(cells.size());
    for (const Cell& cell : cells) {
      if (column.Valid(cell.row)) valid.push_back(cell);
    }
    for (const Column& child : column.children) {
      if (child.id == DUCKDB_TYPE_STRUCT) {
        Fill(child, valid, next_leaf);
        continue;
      }
      const size_t leaf = leaves_[next_leaf++];
      if (leaf != kNoLeaf) SetLeaf(child, valid, leaf);
    }
  }

  // Calls set(stats row, value(row)) for each of `cells` valid in `c`.
  template <typename Value, typename Set>
  static void Each(const Column& c, const std::vector<Cell>& cells, Value value, Set set) {
    for (const Cell& cell : cells) {
      if (c.Valid(cell.row)) set(cell.stats_row, value(cell.row));
    }
  }

  void SetLeaf(const Column& c, const std::vector<Cell>& cells, size_t leaf) {
    delta::ParsedStats& stats = *stats_;
    auto integer = [&](uint32_t row, int64_t v) { stats.SetInteger(leaf, row, v); };
    auto real = [&](uint32_t row, double v) { stats.SetReal(leaf, row, v); };
    switch (c.id) {
      case DUCKDB_TYPE_BOOLEAN:
        return Each(
            c, cells, [&](idx_t r) { return int64_t{c.At<bool>(r) ? 1 : 0}; }, integer);
      case DUCKDB_TYPE_DATE:
        return Each(
            c, cells, [&](idx_t r) { return int64_t{c.At<int32_t>(r)}; }, integer);
      case DUCKDB_TYPE_FLOAT:
        return Each(
            c, cells, [&](idx_t r) { return double{c.At<float>(r)}; }, real);
      case DUCKDB_TYPE_DOUBLE:
        return Each(
            c, cells, [&](idx_t r) { return c.At<double>(r); }, real);
      case DUCKDB_TYPE_DECIMAL:
        return Each(
            c, cells, [&](idx_t r) { return UnscaledAt(c, r); },
            [&](uint32_t row, Int128 v) { stats.SetDecimal(leaf, row, v); });
      case DUCKDB_TYPE_VARCHAR:
        return Each(
            c, cells, [&](idx_t r) { return c.Bytes(r); },
            [&](uint32_t row, std::string_view v) { stats.SetString(leaf, row, v); });
      case DUCKDB_TYPE_TIMESTAMP:
      case DUCKDB_TYPE_TIMESTAMP_TZ:
      case DUCKDB_TYPE_TIMESTAMP_S:
      case DUCKDB_TYPE_TIMESTAMP_MS:
      case DUCKDB_TYPE_TIMESTAMP_NS:
        return Each(
            c, cells, [&](idx_t r) { return *MicrosAt(c, r); }, integer);
      case DUCKDB_TYPE_BIGINT:
        return Each(
            c, cells, [&](idx_t r) { return c.At<int64_t>(r); }, integer);
      default:
        // Other integer widths; an unsigned value beyond int64 is left NULL.
        for (const Cell& cell : cells) {
          if (!c.Valid(cell.row)) continue;
          if (auto n = IntegerAt(c, cell.row)) stats.SetInteger(leaf, cell.stats_row, *n);
        }
        return;
    }
  }

  std::shared_ptr<delta::ParsedStats> stats_;
  std::vector<size_t> leaves_;      // per scalar field in struct order: the leaf, or kNoLeaf
  const Column* column_ = nullptr;  // the stats_parsed column of the current chunk
  std::vector<Cell> pending_;       // cells read since the last EndChunk
};

// ---------------------------------------------------------------------------------------
// One non-null struct cell of an action column, read field by field. Errors are
// Corruption naming the file, row and field, like the JSON parser's.

class StructCell {
 public:
  // `key` and `row_number` name the row in errors ("<key> row <n>"); `prefix` the struct.
  StructCell(const Column& column, idx_t row, std::string prefix, const std::string& key, size_t row_number)
      : column_(column), row_(row), prefix_(std::move(prefix)), key_(key), row_number_(row_number) {}

  // The field's column when the struct has it and it is not NULL in this row.
  const Column* Get(std::string_view name) const {
    const Column* field = column_.Field(name);
    return field != nullptr && field->Valid(row_) ? field : nullptr;
  }
  bool Has(std::string_view name) const { return column_.Field(name) != nullptr; }

  Status Missing(std::string_view name) const {
    return Status::Corruption(Where() + ": missing required field '" + Name(name) + "'");
  }
  Status WrongType(std::string_view name, std::string_view expected) const {
    return Status::Corruption(Where() + ": field '" + Name(name) + "' must be " + std::string(expected));
  }

  // Strings; a writer's other scalar types (a UUID, a date) read as their text.
  Result<std::optional<std::string>> OptionalString(std::string_view name) const {
    const Column* c = Get(name);
    if (c == nullptr) return std::optional<std::string>();
    if (c->id == DUCKDB_TYPE_VARCHAR && !c->json) return std::optional<std::string>(c->Bytes(row_));
    auto text = ScalarText(*c, row_);
    if (!text) return WrongType(name, "a string");
    return text;
  }
  Result<std::string> RequiredString(std::string_view name) const {
    ASSIGN_OR_RETURN(auto v, OptionalString(name));
    if (!v) return Missing(name);
    return std::move(*v);
  }

  Result<std::optional<int64_t>> OptionalInt64(std::string_view name) const {
    const Column* c = Get(name);
    if (c == nullptr) return std::optional<int64_t>();
    auto v = IntegerAt(*c, row_);
    if (!v) return WrongType(name, "a 64-bit integer");
    return v;
  }
  Result<int64_t> RequiredInt64(std::string_view name) const {
    ASSIGN_OR_RETURN(auto v, OptionalInt64(name));
    if (!v) return Missing(name);
    return *v;
  }
  Result<std::optional<int32_t>> OptionalInt32(std::string_view name) const {
    ASSIGN_OR_RETURN(auto v, OptionalInt64(name));
    if (!v) return std::optional<int32_t>();
    if (*v < std::numeric_limits<int32_t>::min() || *v > std::numeric_limits<int32_t>::max()) {
      return WrongType(name, "a 32-bit integer");
    }
    return std::optional<int32_t>(static_cast<int32_t>(*v));
  }
  Result<int32_t> RequiredInt32(std::string_view name) const {
    ASSIGN_OR_RETURN(auto v, OptionalInt32(name));
    if (!v) return Missing(name);
    return *v;
  }

  Result<std::optional<bool>> OptionalBool(std::string_view name) const {
    const Column* c = Get(name);
    if (c == nullptr) return std::optional<bool>();
    if (c->id != DUCKDB_TYPE_BOOLEAN) return WrongType(name, "a boolean");
    return std::optional<bool>(c->At<bool>(row_));
  }
  Result<bool> RequiredBool(std::string_view name) const {
    ASSIGN_OR_RETURN(auto v, OptionalBool(name));
    if (!v) return Missing(name);
    return *v;
  }

  Result<std::optional<std::vector<std::string>>> OptionalStringList(std::string_view name) const {
    const Column* c = Get(name);
    if (c == nullptr) return std::optional<std::vector<std::string>>();
    if (c->id != DUCKDB_TYPE_LIST) return WrongType(name, "a list of strings");
    const Column& element = c->children[0];
    const duckdb_list_entry entry = c->Entry(row_);
    std::vector<std::string> out;
    out.reserve(entry.length);
    for (idx_t i = entry.offset; i < entry.offset + entry.length; i++) {
      auto text = ScalarText(element, i);
      if (!text) return WrongType(name, "a list of strings");
      out.push_back(std::move(*text));
    }
    return std::optional<std::vector<std::string>>(std::move(out));
  }

  // A MAP with string keys (values as text), keeping NULL values; empty when NULL. A
  // STRUCT (fields as keys) or JSON object text are read alike: writers that inferred the
  // checkpoint schema from JSON produce those.
  Result<delta::PartitionValues> OptionalNullableStringMap(std::string_view name) const {
    delta::PartitionValues out;
    const Column* c = Get(name);
    if (c == nullptr) return out;
    if (c->id == DUCKDB_TYPE_STRUCT) {
      for (size_t i = 0; i < c->children.size(); i++)
        out.emplace(c->names[i], ScalarText(c->children[i], row_));
      return out;
    }
    if (c->id == DUCKDB_TYPE_VARCHAR && c->json) {
      nlohmann::json object = nlohmann::json::parse(c->Bytes(row_), nullptr, false);
      if (!object.is_object()) return WrongType(name, "a map");
      for (const auto& [key, value] : object.items()) {
        out.emplace(key, value.is_null() ? std::nullopt
                                         : std::optional<std::string>(
                                               value.is_string() ? value.get<std::string>() : value.dump()));
      }
      return out;
    }
    if (c->id != DUCKDB_TYPE_MAP || c->children[0].children.size() != 2 ||
        c->children[0].children[0].id != DUCKDB_TYPE_VARCHAR) {
      return WrongType(name, "a map with string keys");
    }
    const Column& keys = c->children[0].children[0];
    const Column& values = c->children[0].children[1];
    const duckdb_list_entry entry = c->Entry(row_);
    for (idx_t i = entry.offset; i < entry.offset + entry.length; i++) {
      out.insert_or_assign(std::string(keys.Bytes(i)), ScalarText(values, i));
    }
    return out;
  }
  Result<std::map<std::string, std::string>> OptionalStringMap(std::string_view name) const {
    ASSIGN_OR_RETURN(auto nullable, OptionalNullableStringMap(name));
    std::map<std::string, std::string> out;
    for (auto& [key, value] : nullable) {
      if (value) out.emplace(key, std::move(*value));
    }
    return out;
  }

  // The nested struct `name`; nullopt when absent or NULL.
  Result<std::optional<StructCell>> OptionalStruct(std::string_view name) const {
    const Column* c = Get(name);
    if (c == nullptr) return std::optional<StructCell>();
    if (c->id != DUCKDB_TYPE_STRUCT) return WrongType(name, "an object");
    return std::optional<StructCell>(StructCell(*c, row_, Name(name), key_, row_number_));
  }

  // The struct `name`, nullptr when absent or NULL; and the row, for readers that walk
  // the struct themselves.
  const Column* Struct(std::string_view name) const {
    const Column* c = Get(name);
    return c != nullptr && c->id == DUCKDB_TYPE_STRUCT ? c : nullptr;
  }
  idx_t row() const { return row_; }

 private:
  std::string Name(std::string_view name) const { return prefix_ + "." + std::string(name); }
  std::string Where() const { return key_ + " row " + std::to_string(row_number_); }

  const Column& column_;
  idx_t row_;
  std::string prefix_;
  const std::string& key_;
  size_t row_number_;
};

// ---------------------------------------------------------------------------------------
// Actions from struct cells.

Result<std::optional<delta::DeletionVectorDescriptor>> ReadDeletionVector(const StructCell& cell) {
  ASSIGN_OR_RETURN(auto dv, cell.OptionalStruct("deletionVector"));
  if (!dv) return std::optional<delta::DeletionVectorDescriptor>();
  delta::DeletionVectorDescriptor out;
  ASSIGN_OR_RETURN(std::string storage_type, dv->RequiredString("storageType"));
  if (storage_type != "u" && storage_type != "i" && storage_type != "p") {
    return dv->WrongType("storageType", "one of 'u', 'i', 'p'");
  }
  out.storage_type = storage_type[0];
  ASSIGN_OR_RETURN(out.path_or_inline_dv, dv->RequiredString("pathOrInlineDv"));
  ASSIGN_OR_RETURN(out.offset, dv->OptionalInt32("offset"));
  ASSIGN_OR_RETURN(out.size_in_bytes, dv->RequiredInt32("sizeInBytes"));
  ASSIGN_OR_RETURN(out.cardinality, dv->RequiredInt64("cardinality"));
  return std::optional<delta::DeletionVectorDescriptor>(std::move(out));
}

// partitionValues, or partitionValues_parsed in files that have only that. REQUIRED: the
// value must be present for an add.
Result<std::optional<delta::PartitionValues>> ReadPartitionValues(const StructCell& cell) {
  const std::string_view name = cell.Has("partitionValues") ? "partitionValues" : "partitionValues_parsed";
  if (cell.Get(name) == nullptr) return std::optional<delta::PartitionValues>();
  ASSIGN_OR_RETURN(auto values, cell.OptionalNullableStringMap(name));
  return std::optional<delta::PartitionValues>(std::move(values));
}

// Fills `out` in place: a checkpoint's adds are many, and large.
Status ReadAdd(const StructCell& cell, ParsedStatsReader& parsed_stats, delta::AddFile& out) {
  ASSIGN_OR_RETURN(out.path, cell.RequiredString("path"));
  ASSIGN_OR_RETURN(auto partition_values, ReadPartitionValues(cell));
  if (!partition_values) return cell.Missing("partitionValues");
  out.partition_values = std::move(*partition_values);
  ASSIGN_OR_RETURN(out.size, cell.RequiredInt64("size"));
  ASSIGN_OR_RETURN(out.modification_time, cell.RequiredInt64("modificationTime"));
  ASSIGN_OR_RETURN(out.data_change, cell.RequiredBool("dataChange"));
  ASSIGN_OR_RETURN(out.stats, cell.OptionalString("stats"));
  if (const Column* parsed = cell.Struct("stats_parsed"); !out.stats && parsed != nullptr) {
    parsed_stats.Read(*parsed, cell.row(), out);
  }
  ASSIGN_OR_RETURN(out.tags, cell.OptionalStringMap("tags"));
  ASSIGN_OR_RETURN(out.deletion_vector, ReadDeletionVector(cell));
  ASSIGN_OR_RETURN(out.base_row_id, cell.OptionalInt64("baseRowId"));
  ASSIGN_OR_RETURN(out.default_row_commit_version, cell.OptionalInt64("defaultRowCommitVersion"));
  ASSIGN_OR_RETURN(out.clustering_provider, cell.OptionalString("clusteringProvider"));
  return Status::OK();
}

Result<delta::RemoveFile> ReadRemove(const StructCell& cell) {
  delta::RemoveFile out;
  ASSIGN_OR_RETURN(out.path, cell.RequiredString("path"));
  ASSIGN_OR_RETURN(out.deletion_timestamp, cell.OptionalInt64("deletionTimestamp"));
  ASSIGN_OR_RETURN(out.data_change, cell.RequiredBool("dataChange"));
  ASSIGN_OR_RETURN(auto extended, cell.OptionalBool("extendedFileMetadata"));
  out.extended_file_metadata = extended.value_or(false);
  ASSIGN_OR_RETURN(auto partition_values, ReadPartitionValues(cell));
  if (partition_values) out.partition_values = std::move(*partition_values);
  ASSIGN_OR_RETURN(out.size, cell.OptionalInt64("size"));
  ASSIGN_OR_RETURN(out.deletion_vector, ReadDeletionVector(cell));
  return out;
}

Result<delta::Metadata> ReadMetadata(const StructCell& cell) {
  delta::Metadata out;
  ASSIGN_OR_RETURN(out.id, cell.RequiredString("id"));
  ASSIGN_OR_RETURN(out.name, cell.OptionalString("name"));
  ASSIGN_OR_RETURN(out.description, cell.OptionalString("description"));
  ASSIGN_OR_RETURN(auto format, cell.OptionalStruct("format"));
  if (!format) return cell.Missing("format");
  ASSIGN_OR_RETURN(out.format_provider, format->RequiredString("provider"));
  ASSIGN_OR_RETURN(out.format_options, format->OptionalStringMap("options"));
  ASSIGN_OR_RETURN(out.schema_string, cell.RequiredString("schemaString"));
  ASSIGN_OR_RETURN(auto partition_columns, cell.OptionalStringList("partitionColumns"));
  if (!partition_columns) return cell.Missing("partitionColumns");
  out.partition_columns = std::move(*partition_columns);
  ASSIGN_OR_RETURN(out.configuration, cell.OptionalStringMap("configuration"));
  ASSIGN_OR_RETURN(out.created_time, cell.OptionalInt64("createdTime"));
  return out;
}

Result<delta::Protocol> ReadProtocol(const StructCell& cell) {
  delta::Protocol out;
  ASSIGN_OR_RETURN(out.min_reader_version, cell.RequiredInt32("minReaderVersion"));
  ASSIGN_OR_RETURN(out.min_writer_version, cell.RequiredInt32("minWriterVersion"));
  ASSIGN_OR_RETURN(out.reader_features, cell.OptionalStringList("readerFeatures"));
  ASSIGN_OR_RETURN(out.writer_features, cell.OptionalStringList("writerFeatures"));
  return out;
}

Result<delta::SetTransaction> ReadTxn(const StructCell& cell) {
  delta::SetTransaction out;
  ASSIGN_OR_RETURN(out.app_id, cell.RequiredString("appId"));
  ASSIGN_OR_RETURN(out.version, cell.RequiredInt64("version"));
  ASSIGN_OR_RETURN(out.last_updated, cell.OptionalInt64("lastUpdated"));
  return out;
}

Result<delta::DomainMetadata> ReadDomainMetadata(const StructCell& cell) {
  delta::DomainMetadata out;
  ASSIGN_OR_RETURN(out.domain, cell.RequiredString("domain"));
  ASSIGN_OR_RETURN(out.configuration, cell.RequiredString("configuration"));
  ASSIGN_OR_RETURN(out.removed, cell.RequiredBool("removed"));
  return out;
}

Result<delta::CheckpointMetadata> ReadCheckpointMetadata(const StructCell& cell) {
  delta::CheckpointMetadata out;
  ASSIGN_OR_RETURN(out.version, cell.RequiredInt64("version"));
  ASSIGN_OR_RETURN(out.tags, cell.OptionalStringMap("tags"));
  return out;
}

Result<delta::Sidecar> ReadSidecar(const StructCell& cell) {
  delta::Sidecar out;
  ASSIGN_OR_RETURN(out.path, cell.RequiredString("path"));
  ASSIGN_OR_RETURN(out.size_in_bytes, cell.RequiredInt64("sizeInBytes"));
  ASSIGN_OR_RETURN(out.modification_time, cell.RequiredInt64("modificationTime"));
  return out;
}

template <typename T>
Status Store(Result<T> read, Action& out) {
  if (!read.ok()) return read.status();
  out = std::move(read).value();
  return Status::OK();
}

// Reads the action in `cell` (of action column `name`) into `out`.
Status ReadAction(std::string_view name, const StructCell& cell, ParsedStatsReader& parsed_stats,
                  Action& out) {
  if (name == "add") return ReadAdd(cell, parsed_stats, out.emplace<delta::AddFile>());
  if (name == "remove") return Store(ReadRemove(cell), out);
  if (name == "metaData") return Store(ReadMetadata(cell), out);
  if (name == "protocol") return Store(ReadProtocol(cell), out);
  if (name == "txn") return Store(ReadTxn(cell), out);
  if (name == "domainMetadata") return Store(ReadDomainMetadata(cell), out);
  if (name == "checkpointMetadata") return Store(ReadCheckpointMetadata(cell), out);
  return Store(ReadSidecar(cell), out);
}

// ---------------------------------------------------------------------------------------
// The query.

// A query whose result DuckDB hands over chunk by chunk as it produces them, instead of
// materializing all of it first.
class StreamingQuery {
 public:
  StreamingQuery() = default;
  StreamingQuery(const StreamingQuery&) = delete;
  StreamingQuery& operator=(const StreamingQuery&) = delete;
  ~StreamingQuery() {
    if (has_result_) duckdb_destroy_result(&result_);
    if (pending_ != nullptr) duckdb_destroy_pending(&pending_);
    if (prepared_ != nullptr) duckdb_destroy_prepare(&prepared_);
  }

  // DuckDB's error message when the query cannot run; nullopt when it runs.
  std::optional<std::string> Run(duckdb_connection conn, const std::string& sql) {
    if (duckdb_prepare(conn, sql.c_str(), &prepared_) != DuckDBSuccess)
      return Error(duckdb_prepare_error(prepared_));
    if (duckdb_pending_prepared_streaming(prepared_, &pending_) != DuckDBSuccess) {
      return Error(duckdb_pending_error(pending_));
    }
    has_result_ = true;
    if (duckdb_execute_pending(pending_, &result_) != DuckDBSuccess)
      return Error(duckdb_result_error(&result_));
    return std::nullopt;
  }

  // The next chunk; nullptr at the end or on an error (then error() says which).
  duckdb_data_chunk Next() { return duckdb_fetch_chunk(result_); }
  std::optional<std::string> error() {
    const char* message = duckdb_result_error(&result_);
    if (message == nullptr) return std::nullopt;
    return std::string(message);
  }

 private:
  static std::string Error(const char* message) {
    return message != nullptr ? message : "unknown DuckDB error";
  }

  duckdb_prepared_statement prepared_ = nullptr;
  duckdb_pending_result pending_ = nullptr;
  duckdb_result result_{};
  bool has_result_ = false;
};

// The chunks of a streaming query, run and fetched on a thread of its own: DuckDB decodes
// the next chunks while the caller converts the current one (a checkpoint is read on two
// cores in about the time the slower of the two takes). At most kAhead chunks wait.
class ChunkPipeline {
 public:
  // Runs `sql` on `conn`, which no one else uses until this is destroyed.
  ChunkPipeline(duckdb_connection conn, std::string sql)
      : fetcher_([this, conn, sql = std::move(sql)] { Fetch(conn, sql); }) {}
  ChunkPipeline(const ChunkPipeline&) = delete;
  ChunkPipeline& operator=(const ChunkPipeline&) = delete;
  ~ChunkPipeline() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopped_ = true;
    }
    changed_.notify_all();
    fetcher_.join();
    for (duckdb_data_chunk chunk : ready_) duckdb_destroy_data_chunk(&chunk);
  }

  // The next chunk, owned by the caller; nullptr at the end or on an error.
  duckdb_data_chunk Next() {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return !ready_.empty() || done_; });
    if (ready_.empty()) return nullptr;
    duckdb_data_chunk chunk = ready_.front();
    ready_.pop_front();
    changed_.notify_all();
    return chunk;
  }

  // DuckDB's error once Next() returned nullptr; nullopt when the query ran to its end.
  std::optional<std::string> error() {
    std::lock_guard<std::mutex> lock(mutex_);
    return error_;
  }

 private:
  static constexpr size_t kAhead = 8;

  void Fetch(duckdb_connection conn, const std::string& sql) {
    std::optional<std::string> error = query_.Run(conn, sql);
    while (!error) {
      duckdb_data_chunk chunk = query_.Next();
      if (chunk == nullptr || duckdb_data_chunk_get_size(chunk) == 0) {
        if (chunk != nullptr) duckdb_destroy_data_chunk(&chunk);
        error = query_.error();
        break;
      }
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return ready_.size() < kAhead || stopped_; });
      if (stopped_) {
        duckdb_destroy_data_chunk(&chunk);
        break;
      }
      ready_.push_back(chunk);
      changed_.notify_all();
    }
    std::lock_guard<std::mutex> lock(mutex_);
    error_ = std::move(error);
    done_ = true;
    changed_.notify_all();
  }

  StreamingQuery query_;  // used by the fetcher only
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<duckdb_data_chunk> ready_;  // GUARDED_BY(mutex_)
  std::optional<std::string> error_;     // GUARDED_BY(mutex_)
  bool done_ = false;                    // GUARDED_BY(mutex_): the fetcher is finished
  bool stopped_ = false;                 // GUARDED_BY(mutex_): the caller is gone
  std::thread fetcher_;                  // last: starts once the members above exist
};

struct ChunkGuard {
  duckdb_data_chunk chunk;
  ~ChunkGuard() { duckdb_destroy_data_chunk(&chunk); }
};

bool HasField(const ColumnType& type, std::string_view name) {
  return std::any_of(type.children.begin(), type.children.end(),
                     [&](const ColumnType& child) { return child.name == name; });
}

// The select-list entry for action column `type`: the column itself, or its struct packed
// again without the fields replay never reads (the parsed form of what is also present as
// text, and a remove's stats and tags), so that DuckDB does not decode them.
std::string Projection(const ColumnType& type) {
  const std::string column = QuoteIdentifier(type.name);
  if (type.kind != ColumnType::Kind::kStruct || (type.name != "add" && type.name != "remove")) return column;
  const bool remove = type.name == "remove";
  auto unused = [&](const std::string& field) {
    if (field == "partitionValues_parsed") return HasField(type, "partitionValues");
    if (field == "stats_parsed") return remove || HasField(type, "stats");
    return remove && (field == "stats" || field == "tags");
  };
  if (std::none_of(type.children.begin(), type.children.end(),
                   [&](const ColumnType& field) { return unused(field.name); })) {
    return column;
  }
  std::string packed;
  for (const ColumnType& field : type.children) {
    if (unused(field.name)) continue;
    packed += (packed.empty() ? "" : ", ") + QuoteIdentifier(field.name) + " := " + column + "." +
              QuoteIdentifier(field.name);
  }
  return "CASE WHEN " + column + " IS NULL THEN NULL ELSE struct_pack(" + packed + ") END AS " + column;
}

Status ReadParquetActions(Connection& conn, const std::string& path, const std::string& key,
                          std::vector<Action>* out) {
  // A store that failed while DuckDB read it is that failure, retryable as it was; anything
  // else DuckDB cannot read is a damaged checkpoint.
  auto fail = [&](const Status& cause) {
    const std::string context = key + ": cannot read checkpoint Parquet";
    if (cause.code() == ErrorCode::kIOError || cause.code() == ErrorCode::kCancelled) {
      return cause.WithContext(context);
    }
    return Status::Corruption(context + ": " + cause.message());
  };
  const std::string source = "read_parquet(" + QuoteLiteral(path) + ")";
  auto described = conn.DescribeQuery("SELECT * FROM " + source);
  if (!described.ok()) return fail(described.status());
  std::vector<std::string> names;
  std::string select, any_action;
  for (const char* wanted : kActionColumns) {
    for (const ColumnType& column : *described) {
      if (column.name != wanted) continue;
      names.emplace_back(wanted);
      select += (select.empty() ? "" : ", ") + Projection(column);
      any_action += (any_action.empty() ? "" : " OR ") + QuoteIdentifier(wanted) + " IS NOT NULL";
    }
  }
  if (names.empty()) return Status::Corruption(key + ": not a Delta checkpoint (no action columns)");

  // The footer's row count (no scan) bounds the actions: room for them up front.
  if (auto rows = conn.Query("SELECT count(*) FROM " + source); rows.ok() && rows->row_count() == 1) {
    out->reserve(out->size() + std::stoull(rows->at(0, 0).value_or("0")));
  }
  ChunkPipeline chunks(conn.raw(), "SELECT " + select + " FROM " + source + " WHERE " + any_action);
  size_t row_number = 0;
  std::vector<Column> columns;
  ParsedStatsReader parsed_stats;
  for (;;) {
    ChunkGuard chunk{chunks.Next()};
    if (chunk.chunk == nullptr) break;
    const idx_t rows = duckdb_data_chunk_get_size(chunk.chunk);
    if (rows == 0) break;
    columns.clear();
    for (idx_t c = 0; c < names.size(); c++) {
      columns.push_back(Column::Of(duckdb_data_chunk_get_vector(chunk.chunk, c)));
    }
    for (idx_t row = 0; row < rows; row++) {
      row_number++;
      int found = -1;
      for (size_t c = 0; c < columns.size(); c++) {
        if (!columns[c].Valid(row)) continue;
        if (found >= 0) {
          return Status::Corruption(key + " row " + std::to_string(row_number) + ": more than one action ('" +
                                    names[found] + "' and '" + names[c] + "')");
        }
        found = static_cast<int>(c);
      }
      if (found < 0) continue;
      if (columns[found].id != DUCKDB_TYPE_STRUCT) {
        return Status::Corruption(key + ": action '" + names[found] + "' must be a struct");
      }
      // Read in place at the end of `out`.
      Status read = ReadAction(names[found], StructCell(columns[found], row, names[found], key, row_number),
                               parsed_stats, out->emplace_back());
      if (!read.ok()) {
        out->pop_back();
        return read;
      }
    }
    parsed_stats.EndChunk();
  }
  if (auto error = chunks.error()) return fail(DecodeStatus(*error).value_or(Status::Corruption(*error)));
  parsed_stats.Finish();
  return Status::OK();
}

// ---------------------------------------------------------------------------------------
// Writing.

// The protocol's checkpoint schema as a from_json() structure, per action column.
const nlohmann::json& CheckpointStructure() {
  static const nlohmann::json structure = [] {
    using json = nlohmann::json;
    const json map = "MAP(VARCHAR, VARCHAR)";
    const json dv = {{"storageType", "VARCHAR"},
                     {"pathOrInlineDv", "VARCHAR"},
                     {"offset", "INTEGER"},
                     {"sizeInBytes", "INTEGER"},
                     {"cardinality", "BIGINT"}};
    json s;
    s["txn"] = {{"appId", "VARCHAR"}, {"version", "BIGINT"}, {"lastUpdated", "BIGINT"}};
    s["add"] = {{"path", "VARCHAR"},
                {"partitionValues", map},
                {"size", "BIGINT"},
                {"modificationTime", "BIGINT"},
                {"dataChange", "BOOLEAN"},
                {"stats", "VARCHAR"},
                {"tags", map},
                {"deletionVector", dv},
                {"baseRowId", "BIGINT"},
                {"defaultRowCommitVersion", "BIGINT"},
                {"clusteringProvider", "VARCHAR"}};
    s["remove"] = {{"path", "VARCHAR"},       {"deletionTimestamp", "BIGINT"},
                   {"dataChange", "BOOLEAN"}, {"extendedFileMetadata", "BOOLEAN"},
                   {"partitionValues", map},  {"size", "BIGINT"},
                   {"deletionVector", dv}};
    s["metaData"] = {{"id", "VARCHAR"},           {"name", "VARCHAR"},
                     {"description", "VARCHAR"},  {"format", {{"provider", "VARCHAR"}, {"options", map}}},
                     {"schemaString", "VARCHAR"}, {"partitionColumns", json::array({"VARCHAR"})},
                     {"configuration", map},      {"createdTime", "BIGINT"}};
    s["protocol"] = {{"minReaderVersion", "INTEGER"},
                     {"minWriterVersion", "INTEGER"},
                     {"readerFeatures", json::array({"VARCHAR"})},
                     {"writerFeatures", json::array({"VARCHAR"})}};
    s["domainMetadata"] = {{"domain", "VARCHAR"}, {"configuration", "VARCHAR"}, {"removed", "BOOLEAN"}};
    s["checkpointMetadata"] = {{"version", "BIGINT"}, {"tags", map}};
    s["sidecar"] = {
        {"path", "VARCHAR"}, {"sizeInBytes", "BIGINT"}, {"modificationTime", "BIGINT"}, {"tags", map}};
    return s;
  }();
  return structure;
}

constexpr char kRowsTable[] = "basin_checkpoint_rows";

// Has DuckDB write `actions` as Parquet with `columns` at the local path `out_path`.
Status WriteParquetActions(Connection& conn, std::span<const Action> actions,
                           delta::CheckpointColumns columns, const std::string& out_path) {
  RETURN_IF_ERROR(
      conn.Execute(std::string("CREATE OR REPLACE TEMP TABLE ") + kRowsTable + " (action VARCHAR)"));
  {
    ASSIGN_OR_RETURN(auto appender, Appender::Open(conn, "temp", kRowsTable));
    for (const auto& action : actions) {
      RETURN_IF_ERROR(appender->Append(delta::SerializeAction(action)));
      RETURN_IF_ERROR(appender->EndRow());
    }
    RETURN_IF_ERROR(appender->Close());
  }
  nlohmann::json structure = nlohmann::json::object();
  std::string selected;
  for (const char* column : delta::CheckpointColumnNames(columns)) {
    structure[column] = CheckpointStructure()[column];
    const std::string quoted = QuoteIdentifier(column);
    selected += (selected.empty() ? "a." : ", a.") + quoted + " AS " + quoted;
  }
  return conn.Execute("COPY (SELECT " + selected + " FROM (SELECT from_json(action, " +
                      QuoteLiteral(structure.dump()) + ") AS a FROM temp." + kRowsTable + ")) TO " +
                      QuoteLiteral(out_path) + " (FORMAT parquet)");
}

// `store`, registered while the handle lives, so DuckDB reads and writes its objects as
// basin:// URLs. The store outlives every call here, so the registry need not own it.
StoreHandle RegisterBorrowedStore(ObjectStore& store) {
  return RegisterStore(std::shared_ptr<ObjectStore>(std::shared_ptr<ObjectStore>(), &store));
}

}  // namespace

// --- DuckDBParquetLogIO ---

Result<std::shared_ptr<Database>> DuckDBParquetLogIO::OwnDatabase(std::shared_ptr<Database>* db,
                                                                  int threads) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!*db) {
    DatabaseOptions options;
    options.threads = threads;
    ASSIGN_OR_RETURN(*db, Database::Open(options));
  }
  return *db;
}

Status DuckDBParquetLogIO::ReadActions(ObjectStore& store, const std::string& key, std::vector<Action>* out) {
  auto head = store.Head(key);
  if (!head.ok()) {
    if (head.status().IsNotFound()) return Status::Corruption(key + ": checkpoint file is missing");
    return head.status();
  }
  StoreHandle handle = RegisterBorrowedStore(store);
  ASSIGN_OR_RETURN(std::shared_ptr<Database> db, OwnDatabase(&reading_db_, 2));
  ASSIGN_OR_RETURN(auto conn, Connection::Open(db));
  return ReadParquetActions(*conn, StoreUrl(handle, key), key, out);
}

Status DuckDBParquetLogIO::WriteActions(ObjectStore& store, const std::string& key,
                                        std::span<const Action> actions, delta::CheckpointColumns columns) {
  // DuckDB writes the file into memory first; one Put then makes it appear whole, since
  // readers of the log may look for it at any moment (a file DuckDB writes in place is
  // visible, short, while it is being written).
  StoreHandle staging = RegisterStore(staging_ ? staging_ : NewMemoryObjectStore());
  const std::string staged_key = "basin-checkpoint-" + NewUuid() + ".parquet";
  ASSIGN_OR_RETURN(std::shared_ptr<Database> db, OwnDatabase(&writing_db_, 1));
  ASSIGN_OR_RETURN(auto conn, Connection::Open(db));
  Status written = WriteParquetActions(*conn, actions, columns, StoreUrl(staging, staged_key));
  Result<std::string> bytes = written.ok() ? staging.store()->Get(staged_key) : Result<std::string>(written);
  Status removed = staging.store()->Delete(staged_key);
  RETURN_IF_ERROR(bytes.status());
  RETURN_IF_ERROR_CTX(removed, "removing the staged checkpoint " + staged_key);
  return store.Put(key, *bytes);
}

}  // namespace basin::engine
