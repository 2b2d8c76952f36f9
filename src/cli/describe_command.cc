// `basin describe PATH`: a Delta table at a glance, from its latest snapshot.
#include <fmt/format.h>

#include <ctime>
#include <iostream>

#include "basin/status.h"
#include "basin/table.h"
#include "cli/commands.h"
#include "cli/output_format.h"

namespace basin::cli {

namespace {

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

void WriteOverview(const Snapshot& snapshot, std::ostream& out) {
  out << "Table:              " << snapshot.location() << '\n';
  if (snapshot.name()) out << "Name:               " << *snapshot.name() << '\n';
  if (snapshot.description()) out << "Description:        " << *snapshot.description() << '\n';
  out << "Table id:           " << snapshot.table_id() << '\n';
  out << "Version:            " << snapshot.version() << " (committed " << UtcTime(snapshot.timestamp_ms())
      << ")\n";
  out << "Protocol:           reader " << snapshot.min_reader_version() << ", writer "
      << snapshot.min_writer_version() << '\n';
  if (snapshot.reader_features())
    out << "Reader features:    " << JoinOrNone(*snapshot.reader_features()) << '\n';
  if (snapshot.writer_features())
    out << "Writer features:    " << JoinOrNone(*snapshot.writer_features()) << '\n';
  out << "Partition columns:  " << JoinOrNone(snapshot.partition_columns()) << '\n';
  out << "Files:              " << snapshot.num_files() << '\n';
  out << "Size:               " << HumanSize(snapshot.size_bytes()) << '\n';
  std::optional<int64_t> rows = snapshot.num_records();
  out << "Rows:               " << (rows ? std::to_string(*rows) : "unknown (files have no statistics)")
      << '\n';
}

void WriteSchema(const Snapshot& snapshot, std::ostream& out) {
  bool mapped = snapshot.column_mapping();
  QueryResult table;
  table.column_names = {"column", "type", "nullable"};
  if (mapped) table.column_names.emplace_back("physical name");
  table.column_types.assign(table.column_names.size(), "VARCHAR");
  for (const Column& column : snapshot.columns()) {
    Row row = {column.name, column.type, column.nullable ? "yes" : "no"};
    if (mapped) row.emplace_back(column.physical_name);
    table.rows.push_back(std::move(row));
  }
  out << "\nSchema:\n";
  WriteTable(table, out, /*footer=*/false);
}

void WriteProperties(const Snapshot& snapshot, std::ostream& out) {
  out << "\nProperties:";
  if (snapshot.properties().empty()) out << " (none)";
  out << '\n';
  for (const auto& [key, value] : snapshot.properties()) out << "  " << key << " = " << value << '\n';
}

Result<Snapshot> LoadTable(const DescribeCommandOptions& options) {
  std::string path = options.table_path;
  if (!path.starts_with('/') && !options.warehouse_dir.empty()) path = options.warehouse_dir + "/" + path;
  ASSIGN_OR_RETURN(Table table, Table::OpenAt(path));
  if (options.version) return table.SnapshotAtVersion(*options.version);
  return table.LatestSnapshot();
}

}  // namespace

int RunDescribeCommand(const DescribeCommandOptions& options) {
  Result<Snapshot> snapshot = LoadTable(options);
  if (!snapshot.ok()) {
    WriteError(snapshot.status(), std::cerr);
    return 1;
  }
  WriteOverview(*snapshot, std::cout);
  WriteSchema(*snapshot, std::cout);
  WriteProperties(*snapshot, std::cout);
  return 0;
}

}  // namespace basin::cli
