// Scans of Delta snapshots for Basin's commands, as SQL over the delta_scan table function
// (engine/lakehouse.h): the snapshot is registered with the connection, never spelled out
// as a file list, and DuckDB reads it like any Delta scan (partition values, deletion
// vectors, column mapping, type widening, filter pushdown).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "basin/status.h"
#include "delta/snapshot.h"
#include "engine/duckdb.h"

namespace basin::engine {

struct ScanOptions {
  // Only these files (indexes into snapshot.files) are read; empty means all of them.
  // Data skipping fills this.
  std::optional<std::vector<size_t>> file_indexes;
  // Also return, after the table's columns, where each row lives: kScanFileColumn (which
  // file: ScanPlan::file_index_by_path maps its text to the index in snapshot.files) and
  // kScanRowIndexColumn (the row's physical position in that file, counting rows a deletion
  // vector hides). Commands that change rows (DELETE, UPDATE, MERGE) need them.
  bool row_positions = false;
};

inline constexpr const char* kScanFileColumn = "__basin_file";
inline constexpr const char* kScanRowIndexColumn = "__basin_row_index";

class RegisteredScan;

struct ScanPlan {
  std::string sql;  // "SELECT * FROM delta_scan('basin-scan:...')", valid while `registration` lives
  std::shared_ptr<const RegisteredScan> registration;
  size_t files_total = 0;
  size_t files_read = 0;
  // With ScanOptions::row_positions: kScanFileColumn's values -> indexes into snapshot.files.
  std::map<std::string, size_t> file_index_by_path;
};

Result<ScanPlan> BuildScanSql(std::shared_ptr<const delta::Snapshot> snapshot, Connection& conn,
                              const ScanOptions& options = {});
// The same for a snapshot the caller owns. REQUIRES: `snapshot` outlives the plan.
Result<ScanPlan> BuildScanSql(const delta::Snapshot& snapshot, Connection& conn, const ScanOptions& options = {});

// A serialized partition value (PROTOCOL.md "Partition Value Serialization") as a typed SQL
// constant of `type`: NULL when absent, and when empty for a type other than string.
std::string PartitionValueSql(const delta::DataType& type, const std::optional<std::string>& value);

}  // namespace basin::engine
