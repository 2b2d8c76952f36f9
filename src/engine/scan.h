// Scans of Delta snapshots as DuckDB SQL.
//
// BuildScanSql() turns a snapshot into one DuckDB query (a subquery usable in FROM) that
// returns the table's rows with the logical schema: read_parquet over the selected files,
// partition values as typed constants, column mapping resolved to logical names, type
// widening upcast, columns missing from older files as NULL, and rows marked by deletion
// vectors removed (through a temporary table of deleted positions on `conn`).
#pragma once

#include <memory>
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
};

struct ScanPlan {
  std::string sql;                       // "SELECT ... FROM read_parquet(...) ... UNION ALL ..."
  std::vector<std::string> temp_tables;  // created on `conn`; DropScanTempTables() removes them
  size_t files_total = 0;
  size_t files_read = 0;
};

Result<ScanPlan> BuildScanSql(const delta::Snapshot& snapshot, Connection& conn,
                              const ScanOptions& options = {});
void DropScanTempTables(Connection& conn, const ScanPlan& plan);

}  // namespace basin::engine
