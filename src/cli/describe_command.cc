// `basin describe PATH`: a Delta table at a glance, from its latest snapshot.
#include <fmt/format.h>

#include <ctime>
#include <iostream>

#include "basin/object_store.h"
#include "cli/commands.h"
#include "cli/output_format.h"
#include "delta/snapshot.h"
#include "engine/duckdb.h"
#include "engine/parquet_log_io.h"

namespace basin::cli {

namespace {

// Delta's own spelling, as in the log: struct<a: long, b: array<string>>.
std::string DeltaTypeName(const delta::DataType& type) {
  switch (type.kind) {
    case delta::DataType::Kind::kPrimitive:
      return type.primitive == "decimal" ? fmt::format("decimal({},{})", type.precision, type.scale)
                                         : type.primitive;
    case delta::DataType::Kind::kArray:
      return "array<" + DeltaTypeName(*type.element_type) + ">";
    case delta::DataType::Kind::kMap:
      return "map<" + DeltaTypeName(*type.key_type) + ", " + DeltaTypeName(*type.value_type) + ">";
    case delta::DataType::Kind::kStruct: {
      std::string out = "struct<";
      for (size_t i = 0; i < type.struct_type.fields.size(); i++) {
        const delta::StructField& field = type.struct_type.fields[i];
        out += (i > 0 ? ", " : "") + field.name + ": " + DeltaTypeName(*field.type);
      }
      return out + ">";
    }
  }
  return type.primitive;
}

std::string HumanSize(int64_t bytes) {
  static constexpr const char* kUnits[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  auto value = static_cast<double>(bytes);
  size_t unit = 0;
  while (value >= 1024 && unit + 1 < std::size(kUnits)) {
    value /= 1024;
    unit++;
  }
  if (unit == 0) return fmt::format("{} bytes", bytes);
  return fmt::format("{:.1f} {} ({} bytes)", value, kUnits[unit], bytes);
}

std::string UtcTime(int64_t epoch_ms) {
  auto seconds = static_cast<std::time_t>(epoch_ms / 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%d %H:%M:%S UTC", &tm);
  return text;
}

std::string JoinOrNone(const std::vector<std::string>& items) {
  return items.empty() ? "(none)" : fmt::format("{}", fmt::join(items, ", "));
}

void WriteOverview(const delta::Snapshot& snapshot, std::ostream& out) {
  const delta::Protocol& protocol = snapshot.protocol;
  out << "Table:              " << snapshot.table_root << '\n';
  if (snapshot.metadata.name) out << "Name:               " << *snapshot.metadata.name << '\n';
  if (snapshot.metadata.description) out << "Description:        " << *snapshot.metadata.description << '\n';
  out << "Table id:           " << snapshot.metadata.id << '\n';
  out << "Version:            " << snapshot.version << " (committed " << UtcTime(snapshot.timestamp_ms)
      << ")\n";
  out << "Protocol:           reader " << protocol.min_reader_version << ", writer "
      << protocol.min_writer_version << '\n';
  if (protocol.reader_features)
    out << "Reader features:    " << JoinOrNone(*protocol.reader_features) << '\n';
  if (protocol.writer_features)
    out << "Writer features:    " << JoinOrNone(*protocol.writer_features) << '\n';
  out << "Partition columns:  " << JoinOrNone(snapshot.metadata.partition_columns) << '\n';
  out << "Files:              " << snapshot.files.size() << '\n';
  out << "Size:               " << HumanSize(snapshot.size_bytes()) << '\n';
  int64_t rows = snapshot.num_records();
  out << "Rows:               " << (rows >= 0 ? std::to_string(rows) : "unknown (files have no statistics)")
      << '\n';
}

void WriteSchema(const delta::Snapshot& snapshot, std::ostream& out) {
  bool mapped = delta::ColumnMappingEnabled(snapshot.metadata);
  engine::QueryResult table;
  table.column_names = {"column", "type", "nullable"};
  if (mapped) table.column_names.emplace_back("physical name");
  table.column_types.assign(table.column_names.size(), "VARCHAR");
  for (const delta::StructField& field : snapshot.schema.fields) {
    std::vector<std::optional<std::string>> row = {field.name, DeltaTypeName(*field.type),
                                                   field.nullable ? "yes" : "no"};
    if (mapped) row.emplace_back(field.PhysicalName());
    table.rows.push_back(std::move(row));
  }
  out << "\nSchema:\n";
  WriteTable(table, out, /*footer=*/false);
}

void WriteProperties(const delta::Snapshot& snapshot, std::ostream& out) {
  out << "\nProperties:";
  if (snapshot.metadata.configuration.empty()) out << " (none)";
  out << '\n';
  for (const auto& [key, value] : snapshot.metadata.configuration)
    out << "  " << key << " = " << value << '\n';
}

Result<std::shared_ptr<delta::Snapshot>> LoadTable(const DescribeCommandOptions& options) {
  std::string path = options.table_path;
  if (!path.starts_with('/') && !options.warehouse_dir.empty()) path = options.warehouse_dir + "/" + path;
  ASSIGN_OR_RETURN(std::shared_ptr<ObjectStore> store, OpenStoreAt(path));
  ASSIGN_OR_RETURN(bool has_log, store->HasObjectsWithPrefix("_delta_log/"));
  if (!has_log) return Status::NotFound("no Delta table at '" + path + "' (it has no _delta_log)");
  ASSIGN_OR_RETURN(std::shared_ptr<engine::Database> db, engine::Database::Open());
  ASSIGN_OR_RETURN(std::unique_ptr<engine::Connection> conn, engine::Connection::Open(db));
  delta::SnapshotOptions snapshot_options;
  snapshot_options.version = options.version;
  engine::DuckDBParquetLogIO log_io(conn->database());
  return delta::LoadSnapshot(store, path, log_io, snapshot_options);
}

}  // namespace

int RunDescribeCommand(const DescribeCommandOptions& options) {
  Result<std::shared_ptr<delta::Snapshot>> snapshot = LoadTable(options);
  if (!snapshot.ok()) {
    WriteError(snapshot.status(), std::cerr);
    return 1;
  }
  WriteOverview(**snapshot, std::cout);
  WriteSchema(**snapshot, std::cout);
  WriteProperties(**snapshot, std::cout);
  return 0;
}

}  // namespace basin::cli
