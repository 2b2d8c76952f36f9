#include "engine/parquet_writer.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "common/uuid.h"
#include "engine/store_registry.h"

namespace basin::engine {

namespace {

using nlohmann::json;

// Delta truncates string statistics to this many characters (Spark's default).
constexpr size_t kStatsStringPrefix = 32;

// A leaf column whose statistics go into the stats JSON.
struct StatsColumn {
  std::vector<std::string> path;
  const ColumnType* type;
  std::string key;  // how RETURN_STATS names it: "a"."b"
};

void CollectStatsColumns(const ColumnType& column, std::vector<std::string> path,
                         std::vector<StatsColumn>& out) {
  path.push_back(column.name);
  switch (column.kind) {
    case ColumnType::Kind::kStruct:
      for (const ColumnType& child : column.children) CollectStatsColumns(child, path, out);
      return;
    case ColumnType::Kind::kList:
    case ColumnType::Kind::kMap:
      return;  // Delta keeps no statistics for arrays and maps
    case ColumnType::Kind::kScalar: {
      std::string key;
      for (const std::string& part : path) key += (key.empty() ? "" : ".") + QuoteIdentifier(part);
      out.push_back(StatsColumn{std::move(path), &column, std::move(key)});
      return;
    }
  }
}

// The byte offset where UTF-8 code point number `count` starts (or the size).
size_t Utf8PrefixBytes(std::string_view s, size_t count) {
  size_t seen = 0;
  for (size_t i = 0; i < s.size(); i++) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) {
      if (seen == count) return i;
      seen++;
    }
  }
  return s.size();
}

// The code point starting at byte `i` of valid UTF-8 `s`, and its length in bytes.
std::pair<uint32_t, size_t> CodePointAt(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char lead = byte(i);
  if (lead < 0x80) return {lead, 1};
  size_t length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
  length = std::min(length, s.size() - i);
  uint32_t cp = lead & (0x3F >> (length - 1));
  for (size_t k = 1; k < length; k++) cp = (cp << 6) | (byte(i + k) & 0x3F);
  return {cp, length};
}

// An upper bound for a string longer than the stats prefix, as Delta writes one: the
// prefix and a tie-breaker code point greater than the code point it replaces, so the bound
// compares (bytewise, as UTF-8) above every value of the column. DEL (U+007F) when it is
// enough, as it keeps the bound short; else U+10FFFF; when even that is not greater, the
// prefix grows a character, up to twice its length, and past that there is no bound.
std::optional<json> TruncatedMax(const std::string& text) {
  static const std::string kDel = "\x7F";
  static const std::string kMaxCodePoint = "\xF4\x8F\xBF\xBF";  // U+10FFFF
  for (size_t prefix = kStatsStringPrefix; prefix <= 2 * kStatsStringPrefix; prefix++) {
    const size_t cut = Utf8PrefixBytes(text, prefix);
    if (cut == text.size()) return json(text);
    const uint32_t next = CodePointAt(text, cut).first;
    if (next < 0x7F) return json(text.substr(0, cut) + kDel);
    if (next < 0x10FFFF) return json(text.substr(0, cut) + kMaxCodePoint);
  }
  return std::nullopt;
}

// "2024-01-02 03:04:05.123456[+00]" -> "2024-01-02T03:04:05.123" (+ "Z" when `utc`);
// nullopt for anything else (BC dates, years past 9999, other offsets).
std::optional<std::string> DeltaTimestampStat(const std::string& text, bool utc) {
  std::string body = text;
  if (utc) {
    if (body.size() < 3 || body.compare(body.size() - 3, 3, "+00") != 0) return std::nullopt;
    body.resize(body.size() - 3);
  }
  if (body.size() < 19 || body[4] != '-' || body[10] != ' ' ||
      body.find_first_of("+-", 10) != std::string::npos) {
    return std::nullopt;
  }
  std::string out = body.substr(0, 10) + "T" + body.substr(11, 8) + ".";
  std::string fraction = body.size() > 20 ? body.substr(20) : "";
  fraction.resize(3, '0');
  out += fraction;
  if (utc) out += "Z";
  return out;
}

// RETURN_STATS renders min/max as text; Delta wants typed JSON. nullopt: no usable bound.
std::optional<json> StatValue(const ColumnType& type, const std::string& text, bool is_max) {
  const std::string& t = type.type_name;
  if (t == "TINYINT" || t == "SMALLINT" || t == "INTEGER" || t == "BIGINT") {
    int64_t v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return json(v);
  }
  if (t == "FLOAT" || t == "DOUBLE" || (t.rfind("DECIMAL", 0) == 0 && type.width <= 15)) {
    // Decimals wider than a double's exact range would make the bound lossy, so they get none.
    char* end = nullptr;
    double v = std::strtod(text.c_str(), &end);
    if (end != text.c_str() + text.size() || !std::isfinite(v)) return std::nullopt;
    return json(v);
  }
  if (t == "VARCHAR") {
    size_t cut = Utf8PrefixBytes(text, kStatsStringPrefix);
    if (cut == text.size()) return json(text);
    if (!is_max) return json(text.substr(0, cut));  // a prefix is still a lower bound
    return TruncatedMax(text);
  }
  if (t == "DATE") {
    if (text.size() != 10 || text[4] != '-') return std::nullopt;
    return json(text);
  }
  if (t == "TIMESTAMP WITH TIME ZONE" || t == "TIMESTAMP") {
    auto v = DeltaTimestampStat(text, t != "TIMESTAMP");
    if (!v) return std::nullopt;
    return json(*v);
  }
  return std::nullopt;  // booleans, binary and the rest: Delta keeps no min/max for them
}

void SetPath(json& root, const std::vector<std::string>& path, json value) {
  json* node = &root;
  for (size_t i = 0; i + 1 < path.size(); i++) {
    json& child = (*node)[path[i]];
    if (!child.is_object()) child = json::object();
    node = &child;
  }
  (*node)[path.back()] = std::move(value);
}

std::string BuildStats(int64_t num_records, const Value& column_statistics,
                       const std::vector<StatsColumn>& columns) {
  json stats = json::object();
  stats["numRecords"] = num_records;
  json min_values = json::object(), max_values = json::object(), null_count = json::object();
  for (const StatsColumn& column : columns) {
    const Value* entry = column_statistics.Find(column.key);
    if (entry == nullptr) continue;
    if (const Value* nulls = entry->Find("null_count"); nulls != nullptr && !nulls->is_null()) {
      int64_t n = 0;
      auto [end, ec] = std::from_chars(nulls->text.data(), nulls->text.data() + nulls->text.size(), n);
      if (ec == std::errc()) SetPath(null_count, column.path, n);
    }
    const Value* has_nan = entry->Find("has_nan");
    if (has_nan != nullptr && has_nan->text == "true") continue;  // min/max would hide NaN
    if (const Value* min = entry->Find("min"); min != nullptr && !min->is_null()) {
      if (auto v = StatValue(*column.type, min->text, false)) SetPath(min_values, column.path, std::move(*v));
    }
    if (const Value* max = entry->Find("max"); max != nullptr && !max->is_null()) {
      if (auto v = StatValue(*column.type, max->text, true)) SetPath(max_values, column.path, std::move(*v));
    }
  }
  stats["minValues"] = std::move(min_values);
  stats["maxValues"] = std::move(max_values);
  stats["nullCount"] = std::move(null_count);
  return stats.dump();
}

// Partition values as the protocol serializes them (PROTOCOL.md "Partition Value
// Serialization"): timestamps as "yyyy-MM-dd HH:mm:ss.SSSSSS", in UTC for timestamp columns.
std::optional<std::string> SerializePartitionValue(const ColumnType& type, const Value& value) {
  if (value.is_null()) return std::nullopt;
  std::string text = value.text;
  const bool utc = type.type_name == "TIMESTAMP WITH TIME ZONE";
  if (utc || type.type_name == "TIMESTAMP") {
    // DuckDB renders "2024-01-02 03:04:05.12+00": drop the offset (the session is UTC), and
    // give the fraction all six digits.
    if (utc && text.size() > 3 && text.compare(text.size() - 3, 3, "+00") == 0) text.resize(text.size() - 3);
    const size_t space = text.find(' ');
    if (space != std::string::npos && text.size() >= space + 9) {
      const size_t dot = text.find('.', space);
      std::string fraction = dot == std::string::npos ? "" : text.substr(dot + 1);
      fraction.resize(6, '0');
      text = text.substr(0, space + 9) + "." + fraction;
    }
  }
  return text;
}

// Log paths are URIs: everything outside the unreserved set (and '/', '=') is escaped,
// including the '%' of the folder names DuckDB escapes itself.
std::string PercentEncodePath(std::string_view path) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char ch : path) {
    if (std::isalnum(ch) || ch == '-' || ch == '_' || ch == '.' || ch == '~' || ch == '/' || ch == '=') {
      out += static_cast<char>(ch);
    } else {
      out += '%';
      out += kHex[ch >> 4];
      out += kHex[ch & 15];
    }
  }
  return out;
}

const ColumnType* FindColumn(const std::vector<ColumnType>& columns, const std::string& name) {
  for (const ColumnType& c : columns) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

// COPY options every data file is written with, and those of a COPY into a folder: files
// named as Spark names them, and APPEND to write into a folder that holds the table's files.
constexpr const char* kFileOptions = "FORMAT parquet, COMPRESSION snappy, RETURN_STATS";
constexpr const char* kFolderOptions = "FILENAME_PATTERN 'part-00000-{uuid}.c000.snappy', APPEND";

// One Parquet file a COPY wrote, as its RETURN_STATS row describes it.
struct WrittenFile {
  std::string filename;  // a basin:// URL
  int64_t rows = 0;
  int64_t size = 0;
  Value column_statistics;
  const Value* partition_keys = nullptr;  // owned by the first COPY's result
};

// DuckDB rolls files over only between row groups, and not at all in a partitioned COPY,
// so a file can come out far above the target. Half again the target is let through;
// beyond that the file is split.
bool NeedsSplit(const WrittenFile& file, std::optional<int64_t> target) {
  return target && file.rows > 1 && file.size > *target + *target / 2;
}

// Rewrites `file` (the object `key` of `store`) as files of about `target` bytes in its own
// folder and deletes it. Row groups are sized from the file's bytes per row to an eighth of
// the target, so that rolling over between them overshoots the target by little; but never
// below DuckDB's vector of 2048 rows, which is what a target too small for that gets.
Result<std::vector<WrittenFile>> SplitLargeFile(Connection& conn, const WrittenFile& file, ObjectStore& store,
                                                const std::string& key, int64_t target) {
  const double bytes_per_row = static_cast<double>(file.size) / static_cast<double>(file.rows);
  const int64_t rows_per_group = std::clamp<int64_t>(
      static_cast<int64_t>(static_cast<double>(target) / 8 / bytes_per_row), 2048, 122880);
  const std::string folder = file.filename.substr(0, file.filename.rfind('/'));
  ASSIGN_OR_RETURN(ValueResult copied,
                   conn.QueryValues("COPY (SELECT * FROM read_parquet(" + QuoteLiteral(file.filename) +
                                    ")) TO " + QuoteLiteral(folder) + " (" + kFileOptions + ", " +
                                    kFolderOptions + ", FILE_SIZE_BYTES " + std::to_string(target) +
                                    ", ROW_GROUP_SIZE " + std::to_string(rows_per_group) + ")"));
  std::vector<WrittenFile> parts;
  for (const auto& row : copied.rows) {
    parts.push_back(WrittenFile{row[0].text, std::stoll(row[1].text), std::stoll(row[2].text), row[4],
                                file.partition_keys});
  }
  RETURN_IF_ERROR_CTX(store.Delete(key), "removing " + file.filename + " after splitting it");
  return parts;
}

// Whether the leaf at `path` is named by delta.dataSkippingStatsColumns: the list names
// leaves ("a.b") or structs, which stand for every leaf under them.
bool IsStatsColumn(const std::vector<std::string>& path, const std::vector<std::vector<std::string>>& named) {
  return std::any_of(named.begin(), named.end(), [&](const std::vector<std::string>& prefix) {
    return prefix.size() <= path.size() && std::equal(prefix.begin(), prefix.end(), path.begin());
  });
}

}  // namespace

Result<delta::DataTypePtr> DeltaTypeOf(const ColumnType& column, const std::string& where) {
  auto out = std::make_shared<delta::DataType>();
  switch (column.kind) {
    case ColumnType::Kind::kList: {
      out->kind = delta::DataType::Kind::kArray;
      ASSIGN_OR_RETURN(out->element_type, DeltaTypeOf(column.children[0], where + ".element"));
      return delta::DataTypePtr(out);
    }
    case ColumnType::Kind::kMap: {
      out->kind = delta::DataType::Kind::kMap;
      ASSIGN_OR_RETURN(out->key_type, DeltaTypeOf(column.children[0], where + ".key"));
      ASSIGN_OR_RETURN(out->value_type, DeltaTypeOf(column.children[1], where + ".value"));
      return delta::DataTypePtr(out);
    }
    case ColumnType::Kind::kStruct: {
      out->kind = delta::DataType::Kind::kStruct;
      for (const ColumnType& child : column.children) {
        delta::StructField field;
        field.name = child.name;
        ASSIGN_OR_RETURN(field.type, DeltaTypeOf(child, where + "." + child.name));
        out->struct_type.fields.push_back(std::move(field));
      }
      return delta::DataTypePtr(out);
    }
    case ColumnType::Kind::kScalar:
      break;
  }
  static const std::pair<const char*, const char*> kPrimitives[] = {
      {"BOOLEAN", "boolean"},
      {"TINYINT", "byte"},
      {"SMALLINT", "short"},
      {"INTEGER", "integer"},
      {"BIGINT", "long"},
      {"FLOAT", "float"},
      {"DOUBLE", "double"},
      {"VARCHAR", "string"},
      {"BLOB", "binary"},
      {"DATE", "date"},
      {"TIMESTAMP WITH TIME ZONE", "timestamp"},
      {"TIMESTAMP", "timestamp_ntz"},
  };
  for (const auto& [duck, delta_name] : kPrimitives) {
    if (column.type_name == duck) {
      out->primitive = delta_name;
      return delta::DataTypePtr(out);
    }
  }
  if (column.type_name.rfind("DECIMAL", 0) == 0) {
    out->primitive = "decimal";
    out->precision = column.width;
    out->scale = column.scale;
    return delta::DataTypePtr(out);
  }
  if (column.type_name == "HUGEINT") {
    // What DuckDB's sum() of integers gives: kept exact as decimal(38,0); a value beyond 38
    // digits fails the write's cast.
    out->primitive = "decimal";
    out->precision = 38;
    out->scale = 0;
    return delta::DataTypePtr(out);
  }
  return Status::Unsupported("column " + where + " has DuckDB type " + column.type_name +
                             ", which Delta tables cannot store; cast it");
}

Result<delta::StructType> InferDeltaSchema(Connection& conn, const std::string& select_sql) {
  ASSIGN_OR_RETURN(std::vector<ColumnType> columns, conn.DescribeQuery(select_sql));
  return DeltaSchemaOf(columns);
}

Result<delta::StructType> DeltaSchemaOf(const std::vector<ColumnType>& columns) {
  delta::StructType schema;
  for (const ColumnType& column : columns) {
    delta::StructField field;
    field.name = column.name;
    ASSIGN_OR_RETURN(field.type, DeltaTypeOf(column, column.name));
    schema.fields.push_back(std::move(field));
  }
  return schema;
}

namespace {

ColumnType StoredColumnType(std::string name, const delta::DataType& type, bool physical) {
  ColumnType out;
  out.name = std::move(name);
  out.type_name = type.ToDuckDBType();
  switch (type.kind) {
    case delta::DataType::Kind::kStruct:
      out.kind = ColumnType::Kind::kStruct;
      for (const delta::StructField& f : type.struct_type.fields) {
        out.children.push_back(StoredColumnType(physical ? f.PhysicalName() : f.name, *f.type, physical));
      }
      break;
    case delta::DataType::Kind::kArray:
      out.kind = ColumnType::Kind::kList;
      out.children.push_back(StoredColumnType("", *type.element_type, physical));
      break;
    case delta::DataType::Kind::kMap:
      out.kind = ColumnType::Kind::kMap;
      out.children.push_back(StoredColumnType("", *type.key_type, physical));
      out.children.push_back(StoredColumnType("", *type.value_type, physical));
      break;
    case delta::DataType::Kind::kPrimitive:
      if (type.primitive == "decimal") {
        out.width = type.precision;
        out.scale = type.scale;
      }
      break;
  }
  return out;
}

}  // namespace

std::vector<ColumnType> StoredColumnTypes(const delta::StructType& schema, bool physical) {
  std::vector<ColumnType> out;
  for (const delta::StructField& f : schema.fields) {
    out.push_back(StoredColumnType(physical ? f.PhysicalName() : f.name, *f.type, physical));
  }
  return out;
}

Result<std::vector<delta::AddFile>> WriteDataFiles(Connection& conn, const std::string& select_sql,
                                                   ObjectStore& table_store, const WriteOptions& options) {
  const std::string where = "writing data files to " + table_store.Describe();
  std::vector<ColumnType> described;
  if (!options.columns) {
    ASSIGN_OR_RETURN(described, conn.DescribeQuery(select_sql));
  }
  const std::vector<ColumnType>& columns = options.columns ? *options.columns : described;
  std::vector<const ColumnType*> partition_types;
  for (const std::string& name : options.partition_columns) {
    const ColumnType* column = FindColumn(columns, name);
    if (column == nullptr) {
      return Status::InvalidArgument(where + ": partition column '" + name +
                                     "' is not in the query's columns");
    }
    partition_types.push_back(column);
  }
  std::vector<StatsColumn> stats_columns;
  for (const ColumnType& column : columns) {
    bool is_partition = std::find(options.partition_columns.begin(), options.partition_columns.end(),
                                  column.name) != options.partition_columns.end();
    if (!is_partition) CollectStatsColumns(column, {}, stats_columns);
  }
  if (options.stats_columns) {
    std::erase_if(stats_columns,
                  [&](const StatsColumn& c) { return !IsStatsColumn(c.path, *options.stats_columns); });
  } else if (stats_columns.size() > static_cast<size_t>(std::max(options.num_indexed_cols, 0))) {
    stats_columns.resize(std::max(options.num_indexed_cols, 0));
  }

  // DuckDB writes through the store itself (basin:// URLs): each file is durable once
  // DuckDB closes it. The store outlives this call, so the registration need not own it.
  const StoreHandle handle =
      RegisterStore(std::shared_ptr<ObjectStore>(std::shared_ptr<ObjectStore>(), &table_store));
  const std::string root = StoreUrl(handle, "");

  // DuckDB writes one file unless told to partition or roll over; it then takes the
  // target as a folder.
  const bool one_file = options.partition_columns.empty() && !options.target_file_size_bytes;
  std::string copy = "COPY (" + select_sql + "\n) TO ";
  copy += one_file ? QuoteLiteral(StoreUrl(handle, "part-00000-" + NewUuid() + ".c000.snappy.parquet")) +
                         " (" + kFileOptions
                   : QuoteLiteral(root) + " (" + kFileOptions + ", " + kFolderOptions;
  if (!options.partition_columns.empty()) {
    copy += ", PARTITION_BY (";
    for (size_t i = 0; i < options.partition_columns.size(); i++) {
      copy += (i > 0 ? ", " : "") + QuoteIdentifier(options.partition_columns[i]);
    }
    copy += ")";
  } else if (options.target_file_size_bytes) {
    // DuckDB cannot combine this with PARTITION_BY; SplitLargeFile covers that case.
    copy += ", FILE_SIZE_BYTES " + std::to_string(*options.target_file_size_bytes);
  }
  if (options.layout.row_group_rows) {
    copy += ", ROW_GROUP_SIZE " + std::to_string(*options.layout.row_group_rows);
  }
  if (!options.layout.bloom_filters) copy += ", WRITE_BLOOM_FILTER false";
  copy += ")";
  ASSIGN_OR_RETURN(ValueResult copied, conn.QueryValues(copy));

  std::vector<WrittenFile> written;
  std::vector<std::string> keys;
  for (const auto& row : copied.rows) {
    // filename, count, file_size_bytes, footer_size_bytes, column_statistics, partition_keys
    WrittenFile file{row[0].text, std::stoll(row[1].text), std::stoll(row[2].text), row[4], &row[5]};
    std::optional<std::string> key = StoreKeyOf(handle, file.filename);
    if (!key || key->empty())
      return Status::Internal(where + ": DuckDB wrote " + file.filename + " outside " + root);
    if (file.rows == 0) {
      // DuckDB writes an empty file for an empty result; a Delta table needs none.
      RETURN_IF_ERROR_CTX(table_store.Delete(*key), where);
      continue;
    }
    if (NeedsSplit(file, options.target_file_size_bytes)) {
      ASSIGN_OR_RETURN(std::vector<WrittenFile> parts,
                       SplitLargeFile(conn, file, table_store, *key, *options.target_file_size_bytes));
      for (WrittenFile& part : parts) {
        std::optional<std::string> part_key = StoreKeyOf(handle, part.filename);
        if (!part_key)
          return Status::Internal(where + ": DuckDB wrote " + part.filename + " outside " + root);
        keys.push_back(std::move(*part_key));
        written.push_back(std::move(part));
      }
    } else {
      keys.push_back(std::move(*key));
      written.push_back(std::move(file));
    }
  }

  std::vector<delta::AddFile> adds;
  for (size_t i = 0; i < written.size(); i++) {
    const WrittenFile& file = written[i];
    ASSIGN_OR_RETURN(ObjectInfo info, table_store.Head(keys[i]));
    delta::AddFile add;
    add.path = PercentEncodePath(keys[i]);
    add.size = static_cast<int64_t>(info.size_bytes);
    add.modification_time = info.modification_time_ms;
    add.data_change = true;
    for (size_t p = 0; p < options.partition_columns.size(); p++) {
      const Value* value = file.partition_keys->Find(options.partition_columns[p]);
      add.partition_values[options.partition_columns[p]] =
          value != nullptr ? SerializePartitionValue(*partition_types[p], *value) : std::nullopt;
    }
    add.stats = BuildStats(file.rows, file.column_statistics, stats_columns);
    adds.push_back(std::move(add));
  }
  return adds;
}

}  // namespace basin::engine
