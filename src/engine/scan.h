// Scans of Delta snapshots as DuckDB SQL.
//
// BuildScanSql() turns a snapshot into one DuckDB query (a subquery usable in FROM) that
// returns the table's rows with the logical schema: read_parquet over the selected files,
// partition values as typed constants, column mapping resolved to logical names, type
// widening upcast, columns missing from older files as NULL, and rows marked by deletion
// vectors removed (through a temporary table of deleted positions on `conn`).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "delta/snapshot.h"
#include "engine/duckdb.h"

namespace basin::engine {

struct ScanOptions {
  // Only these files (indexes into snapshot.files) are read; empty means all of them.
  // Data skipping fills this.
  std::optional<std::vector<size_t>> file_indexes;
  // Also return, after the table's columns, where each row lives: kScanFileColumn (the path
  // DuckDB read, which ScanPlan::file_index_by_path maps back to snapshot.files) and
  // kScanRowIndexColumn (the row's physical position in that file, counting rows a deletion
  // vector hides). Commands that change rows (DELETE, UPDATE, MERGE) need them.
  bool row_positions = false;
};

inline constexpr const char* kScanFileColumn = "__basin_file";
inline constexpr const char* kScanRowIndexColumn = "__basin_row_index";

struct ScanPlan {
  std::string sql;                       // "SELECT ... FROM read_parquet(...) ... UNION ALL ..."
  std::vector<std::string> temp_tables;  // created on `conn`; DropScanTempTables() removes them
  size_t files_total = 0;
  size_t files_read = 0;
  // With ScanOptions::row_positions: kScanFileColumn's values -> indexes into snapshot.files.
  std::map<std::string, size_t> file_index_by_path;
};

Result<ScanPlan> BuildScanSql(const delta::Snapshot& snapshot, Connection& conn,
                              const ScanOptions& options = {});
void DropScanTempTables(Connection& conn, const ScanPlan& plan);

// A serialized partition value (PROTOCOL.md "Partition Value Serialization") as a typed SQL
// constant of `type`: NULL when absent, and when empty for a type other than string.
std::string PartitionValueSql(const delta::DataType& type, const std::optional<std::string>& value);

}  // namespace basin::engine
