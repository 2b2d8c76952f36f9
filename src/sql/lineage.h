// Table-to-table lineage (docs/lineage.md): which warehouse tables a write
// read, kept in the Delta table `basin_system.lineage`, one row per (source, target,
// operation) ever seen, so SQL answers "what feeds this table" and "what does this feed":
//
//   SELECT source_table FROM basin_system.lineage WHERE target_table = 'sales.daily';
//
// A session records the tables its write statements read (the binder's catalog lookups,
// delta_scan paths, STREAM and table_changes sources) and, when the write commits, gives
// the edges to its warehouse's recorder. The recorder keeps the edges it has seen in
// memory, so a statement whose edges are known costs a set lookup; a new edge is merged
// into the table (MERGE on the three key columns, so two processes never write one edge
// twice) through a session of the recorder's own, unrestricted by the writer's grants.
//
// Thread safety: a recorder is shared by the sessions of one process on one warehouse;
// Record() may be called from any thread.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "basin/status.h"
#include "sql/grammar/statement.h"

namespace basin::sql {

class Session;

inline constexpr char kLineageTable[] = "basin_system.lineage";

struct LineageEdge {
  std::string source;     // "schema.table"
  std::string target;     // "schema.table"
  std::string operation;  // INSERT, MERGE, UPDATE, DELETE, CREATE TABLE
  auto operator<=>(const LineageEdge&) const = default;
};

// The table a statement writes rows into, as it names it, and its operation: INSERT,
// MERGE, UPDATE, DELETE, or CREATE TABLE for CREATE TABLE ... AS; nullopt for others.
struct WrittenTable {
  std::vector<std::string> name_parts;
  std::string operation;
};
std::optional<WrittenTable> WrittenTableOf(const grammar::ParsedStatement& statement);

class LineageRecorder {
 public:
  // The recorder of the warehouse `warehouse_dir` (as sql::SessionOptions names it), shared
  // by every session of the process on it while one holds it.
  static std::shared_ptr<LineageRecorder> For(const std::string& warehouse_dir);
  ~LineageRecorder();

  // Adds the edges not seen yet, by `user` ("" for the process's own) at `at_ms`.
  Status Record(const std::vector<LineageEdge>& edges, const std::string& user, int64_t at_ms);

  explicit LineageRecorder(std::string warehouse_dir);  // use For()

 private:
  // The recorder's session, opened at the first new edge; the known edges read then.
  Status Open();

  const std::string warehouse_dir_;
  std::mutex mutex_;
  std::unique_ptr<Session> session_;  // guarded by mutex_
  std::set<LineageEdge> known_;       // guarded by mutex_
};

}  // namespace basin::sql
