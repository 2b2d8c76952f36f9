#include "engine/scan.h"

#include "engine/lakehouse.h"

namespace basin::engine {

namespace {

using delta::DataType;

std::string NullOf(const DataType& type) { return "CAST(NULL AS " + type.ToDuckDBType() + ")"; }

}  // namespace

Result<ScanPlan> BuildScanSql(std::shared_ptr<const delta::Snapshot> snapshot, Connection& conn,
                              const ScanOptions& options) {
  ScanPlan plan;
  plan.files_total = snapshot->files.size();
  plan.files_read = options.file_indexes ? options.file_indexes->size() : snapshot->files.size();
  if (options.file_indexes) {
    for (size_t index : *options.file_indexes) {
      if (index >= snapshot->files.size()) {
        return Status::InvalidArgument("table " + snapshot->table_root + ": file index " + std::to_string(index) +
                                       " out of range");
      }
    }
  }
  if (options.row_positions) {
    if (options.file_indexes) {
      for (size_t index : *options.file_indexes) plan.file_index_by_path[std::to_string(index)] = index;
    } else {
      for (size_t index = 0; index < snapshot->files.size(); index++) {
        plan.file_index_by_path[std::to_string(index)] = index;
      }
    }
  }
  std::string name = snapshot->table_root;
  plan.registration = RegisterScan(conn, std::move(snapshot), options.file_indexes, std::move(name));
  plan.sql = "SELECT *";
  if (options.row_positions) {
    plan.sql += ", CAST(" + std::string(kScanFileIndexColumn) + " AS VARCHAR) AS " + QuoteIdentifier(kScanFileColumn) +
                ", file_row_number AS " + QuoteIdentifier(kScanRowIndexColumn);
  }
  plan.sql += " FROM " + ScanTableSql(*plan.registration);
  return plan;
}

Result<ScanPlan> BuildScanSql(const delta::Snapshot& snapshot, Connection& conn, const ScanOptions& options) {
  // Not owned: the caller keeps the snapshot alive while the plan is used.
  return BuildScanSql(std::shared_ptr<const delta::Snapshot>(std::shared_ptr<const delta::Snapshot>(), &snapshot),
                      conn, options);
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
