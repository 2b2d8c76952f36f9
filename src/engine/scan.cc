#include "engine/scan.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <filesystem>
#include <map>

#include "common/strings.h"
#include "delta/deletion_vector.h"
#include "delta/paths.h"
#include "engine/functions.h"

namespace basin::engine {

namespace {

using delta::DataType;
using delta::StructField;

// Spark matches Parquet columns case-insensitively when no exact match exists.
const ColumnType* FindPhysical(const std::vector<ColumnType>& columns, const std::string& name) {
  for (const ColumnType& c : columns) {
    if (c.name == name) return &c;
  }
  for (const ColumnType& c : columns) {
    if (EqualsIgnoreCase(c.name, name)) return &c;
  }
  return nullptr;
}

std::string NullOf(const DataType& type) { return "CAST(NULL AS " + type.ToDuckDBType() + ")"; }

// Builds the expression that reads physical `expr` (DuckDB type `phys`) as the logical
// `type`: nested fields renamed from physical to logical names, missing fields as NULL,
// narrower (older) types widened.
class Converter {
 public:
  Converter(bool column_mapping, std::string column) : mapped_(column_mapping), column_(std::move(column)) {}

  Result<std::string> Convert(const std::string& expr, const DataType& type, const ColumnType& phys,
                              int depth) {
    std::string target = type.ToDuckDBType();
    if (phys.type_name == target) return expr;
    switch (type.kind) {
      case DataType::Kind::kStruct: {
        if (phys.kind != ColumnType::Kind::kStruct) return Mismatch(type, phys);
        std::string out = "struct_pack(";
        for (size_t i = 0; i < type.struct_type.fields.size(); i++) {
          const StructField& f = type.struct_type.fields[i];
          const ColumnType* child = FindPhysical(phys.children, mapped_ ? f.PhysicalName() : f.name);
          std::string value = NullOf(*f.type);
          if (child != nullptr) {
            ASSIGN_OR_RETURN(value, Convert("struct_extract(" + expr + ", " + QuoteLiteral(child->name) + ")",
                                            *f.type, *child, depth + 1));
          }
          out += (i > 0 ? ", " : "") + QuoteIdentifier(f.name) + " := " + value;
        }
        return "CASE WHEN " + expr + " IS NULL THEN NULL ELSE " + out + ") END";
      }
      case DataType::Kind::kArray: {
        if (phys.kind != ColumnType::Kind::kList) return Mismatch(type, phys);
        std::string var = "__basin_e" + std::to_string(depth);
        ASSIGN_OR_RETURN(std::string element, Convert(var, *type.element_type, phys.children[0], depth + 1));
        if (element == var) return "CAST(" + expr + " AS " + target + ")";
        return "list_transform(" + expr + ", lambda " + var + ": " + element + ")";
      }
      case DataType::Kind::kMap: {
        if (phys.kind != ColumnType::Kind::kMap) return Mismatch(type, phys);
        std::string var = "__basin_e" + std::to_string(depth);
        ASSIGN_OR_RETURN(std::string key, Convert(var + ".key", *type.key_type, phys.children[0], depth + 1));
        ASSIGN_OR_RETURN(std::string value,
                         Convert(var + ".value", *type.value_type, phys.children[1], depth + 1));
        return "map_from_entries(list_transform(map_entries(" + expr + "), lambda " + var +
               ": struct_pack(key := " + key + ", value := " + value + ")))";
      }
      case DataType::Kind::kPrimitive:
        if (type.primitive == "variant") {
          // A Variant group (metadata, value, maybe typed_value) becomes its JSON text. Files
          // that mark the group VARIANT arrive as JSON already and matched `target` above.
          if (phys.kind != ColumnType::Kind::kStruct || FindPhysical(phys.children, "metadata") == nullptr) {
            return Mismatch(type, phys);
          }
          return std::string(kVariantToJsonFunction) + "(" + expr + ")";
        }
        if (phys.kind != ColumnType::Kind::kScalar) return Mismatch(type, phys);
        return "CAST(" + expr + " AS " + target + ")";
    }
    return Mismatch(type, phys);
  }

 private:
  Status Mismatch(const DataType& type, const ColumnType& phys) const {
    return Status::Corruption("column '" + column_ + "': data files hold " + phys.type_name +
                              " where the table schema has " + type.ToDuckDBType());
  }
  bool mapped_;
  std::string column_;
};

std::string FileList(const std::vector<std::string>& paths) {
  std::string out = "[";
  for (size_t i = 0; i < paths.size(); i++) out += (i > 0 ? ", " : "") + QuoteLiteral(paths[i]);
  return out + "]";
}

// Files read by one read_parquet: equal partition values, all with or all without DVs.
struct FileGroup {
  const delta::PartitionValues* partition_values = nullptr;
  bool with_deletion_vectors = false;
  std::vector<size_t> files;
  std::vector<std::string> paths;
};

std::string NewTempTableName() {
  static std::atomic<uint64_t> counter{0};
  return "__basin_deleted_rows_" + std::to_string(counter.fetch_add(1));
}

}  // namespace

Result<ScanPlan> BuildScanSql(const delta::Snapshot& snapshot, Connection& conn, const ScanOptions& options) {
  ScanPlan plan;
  plan.files_total = snapshot.files.size();
  const std::string table = snapshot.table_root;

  const bool mapped = delta::ColumnMappingEnabled(snapshot.metadata);
  auto is_partition_column = [&](const std::string& name) {
    return std::any_of(snapshot.metadata.partition_columns.begin(), snapshot.metadata.partition_columns.end(),
                       [&](const std::string& p) { return EqualsIgnoreCase(p, name); });
  };

  std::vector<size_t> selected;
  if (options.file_indexes) {
    selected = *options.file_indexes;
  } else {
    for (size_t i = 0; i < snapshot.files.size(); i++) selected.push_back(i);
  }
  plan.files_read = selected.size();

  // Group files; a map keyed by partition values keeps the generated SQL deterministic.
  std::map<std::pair<delta::PartitionValues, bool>, FileGroup> groups;
  for (size_t index : selected) {
    if (index >= snapshot.files.size()) {
      return Status::InvalidArgument("table " + table + ": file index " + std::to_string(index) +
                                     " out of range");
    }
    const delta::AddFile& add = snapshot.files[index];
    std::string decoded = delta::DecodeDataPath(add.path);
    std::string path = decoded;
    if (!delta::IsAbsoluteDataPath(decoded)) {
      std::optional<std::string> local = snapshot.store->LocalPath(decoded);
      if (!local) {
        return Status::NotImplemented("table " + table + ": DuckDB cannot open data file " + decoded +
                                      " in " + snapshot.store->Describe() + " (not a local store)");
      }
      path = *local;
    }
    // DuckDB would report a bare glob miss; say which table version lost which file.
    if (std::error_code ec; !std::filesystem::exists(path, ec)) {
      return Status::NotFound("table " + table + " version " + std::to_string(snapshot.version) +
                              ": data file " + decoded + " is missing (" + path + ")");
    }
    bool with_dv = add.deletion_vector.has_value() && add.deletion_vector->cardinality > 0;
    FileGroup& group = groups[{add.partition_values, with_dv}];
    group.partition_values = &add.partition_values;
    group.with_deletion_vectors = with_dv;
    group.files.push_back(index);
    if (options.row_positions) plan.file_index_by_path[path] = index;
    group.paths.push_back(std::move(path));
  }

  const std::string positions = options.row_positions
                                    ? ", CAST(NULL AS VARCHAR) AS " + QuoteIdentifier(kScanFileColumn) +
                                          ", CAST(NULL AS BIGINT) AS " + QuoteIdentifier(kScanRowIndexColumn)
                                    : "";

  if (groups.empty()) {
    std::string sql = "SELECT ";
    for (size_t i = 0; i < snapshot.schema.fields.size(); i++) {
      const StructField& f = snapshot.schema.fields[i];
      sql += (i > 0 ? ", " : "") + NullOf(*f.type) + " AS " + QuoteIdentifier(f.name);
    }
    if (snapshot.schema.fields.empty()) sql += "NULL AS " + QuoteIdentifier("__basin_empty");
    plan.sql = sql + positions + " WHERE false";
    return plan;
  }

  std::vector<std::string> selects;
  for (auto& [key, group] : groups) {
    std::string source =
        "read_parquet(" + FileList(group.paths) + ", union_by_name = true, hive_partitioning = false";
    auto described = conn.DescribeQuery("SELECT * FROM " + source + ")");
    if (!described.ok())
      return described.status().WithContext("table " + table + ": reading data file schemas");
    const std::vector<ColumnType>& physical = *described;
    std::string projection;
    for (size_t i = 0; i < snapshot.schema.fields.size(); i++) {
      const StructField& f = snapshot.schema.fields[i];
      std::string expr;
      if (is_partition_column(f.name)) {
        std::optional<std::string> value;
        for (const auto& [name, v] : *group.partition_values) {
          if (EqualsIgnoreCase(name, f.name) || (mapped && name == f.PhysicalName())) value = v;
        }
        expr = PartitionValueSql(*f.type, value);
      } else if (const ColumnType* phys = FindPhysical(physical, mapped ? f.PhysicalName() : f.name)) {
        Converter converter(mapped, f.name);
        ASSIGN_OR_RETURN(expr, converter.Convert(QuoteIdentifier(phys->name), *f.type, *phys, 0));
        if (expr != QuoteIdentifier(phys->name) && f.type->kind == DataType::Kind::kStruct) {
          expr = "CAST(" + expr + " AS " + f.type->ToDuckDBType() + ")";
        }
      } else {
        expr = NullOf(*f.type);  // added after these files were written, or a void column
      }
      projection += (i > 0 ? ", " : "") + expr + " AS " + QuoteIdentifier(f.name);
    }
    if (projection.empty()) projection = "NULL AS " + QuoteIdentifier("__basin_empty");
    if (options.row_positions) {
      projection += ", filename AS " + QuoteIdentifier(kScanFileColumn) + ", file_row_number AS " +
                    QuoteIdentifier(kScanRowIndexColumn);
    }

    if (!group.with_deletion_vectors) {
      std::string located = options.row_positions ? ", filename = true, file_row_number = true" : "";
      selects.push_back("SELECT " + projection + " FROM " + source + located + ")");
      continue;
    }
    // Deleted row positions go into a temp table that the scan anti-joins on.
    std::string temp = NewTempTableName();
    RETURN_IF_ERROR_CTX(
        conn.Execute("CREATE TEMP TABLE " + QuoteIdentifier(temp) + " (filename VARCHAR, pos BIGINT)"),
        "table " + table);
    plan.temp_tables.push_back(temp);
    ASSIGN_OR_RETURN(auto appender, Appender::Open(conn, "temp", temp));
    for (size_t i = 0; i < group.files.size(); i++) {
      const delta::AddFile& add = snapshot.files[group.files[i]];
      std::string context =
          "table " + table + " version " + std::to_string(snapshot.version) + " file " + add.path;
      ASSIGN_OR_RETURN(std::vector<uint64_t> deleted,
                       delta::LoadDeletionVector(*snapshot.store, *add.deletion_vector, context));
      for (uint64_t pos : deleted) {
        RETURN_IF_ERROR(appender->Append(group.paths[i]));
        RETURN_IF_ERROR(appender->Append(static_cast<int64_t>(pos)));
        RETURN_IF_ERROR(appender->EndRow());
      }
    }
    RETURN_IF_ERROR(appender->Close());
    selects.push_back("SELECT " + projection + " FROM (SELECT __basin_f.* FROM " + source +
                      ", filename = true, file_row_number = true) AS __basin_f ANTI JOIN temp.main." +
                      QuoteIdentifier(temp) +
                      " AS __basin_d ON __basin_f.filename = __basin_d.filename AND "
                      "__basin_f.file_row_number = __basin_d.pos)");
  }
  for (size_t i = 0; i < selects.size(); i++) plan.sql += (i > 0 ? "\nUNION ALL " : "") + selects[i];
  return plan;
}

void DropScanTempTables(Connection& conn, const ScanPlan& plan) {
  for (const std::string& temp : plan.temp_tables) {
    // Best effort: a temp table left behind disappears with the connection anyway.
    (void)conn.Execute("DROP TABLE IF EXISTS temp.main." + QuoteIdentifier(temp));
  }
}

std::string PartitionValueSql(const DataType& type, const std::optional<std::string>& value) {
  if (!value) return NullOf(type);
  const std::string& p = type.primitive;
  if (p == "string") return QuoteLiteral(*value);
  // An empty string stands for null for every non-string type.
  if (value->empty()) return NullOf(type);
  // Binary values are the raw bytes as a string; encode() keeps them byte for byte.
  if (p == "binary") return "encode(" + QuoteLiteral(*value) + ")";
  return "CAST(" + QuoteLiteral(*value) + " AS " + type.ToDuckDBType() + ")";
}

}  // namespace basin::engine
