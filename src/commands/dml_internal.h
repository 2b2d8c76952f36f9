// The machinery DELETE, UPDATE and MERGE share (commands/dml.h): opening a table for a
// row-changing command, pruning its files, reading candidate rows with their file and
// position, and applying a materialized set of row changes in deletion-vector or
// copy-on-write mode, with change data files when the table keeps a change feed.
//
// Each command describes what it changes as a DuckDB temporary table (a "change table"):
//   __basin_file       VARCHAR  the target row's file, as the candidate scan names it
//                               (engine::kScanFileColumn); NULL for inserted rows
//   __basin_row_index  BIGINT   its physical position in that file; NULL for inserts
//   __basin_action     VARCHAR  'delete', 'update' or 'insert'
//   then, when the command produces rows, every column of DmlTable::target.schema under its
//   logical name: the row's new values (NULL for deletes). Other columns are ignored.
// At most one row per (file, row index). The applier never pulls rows into C++: it asks
// DuckDB for per-file position ranges and lets COPY write every row.
//
// Thread safety: functions; the context's Connection is used by one thread at a time.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "basin/status.h"
#include "commands/command_context.h"
#include "commands/dml.h"
#include "commands/table_rows.h"
#include "delta/snapshot.h"
#include "delta/transaction.h"
#include "engine/predicate_parser.h"
#include "engine/scan.h"

namespace basin::commands::dml {

inline constexpr const char* kActionColumn = "__basin_action";

// Temporary tables (and the scans registered for the command) on one connection, dropped
// when this goes away, whether the command succeeded or not.
class TempTables {
 public:
  explicit TempTables(engine::Connection& conn) : conn_(conn) {}
  ~TempTables();
  TempTables(const TempTables&) = delete;
  TempTables& operator=(const TempTables&) = delete;

  // A fresh name for a temporary table the caller creates ("temp.main.<name>" quoted).
  std::string NewTable(std::string_view what);
  // Keeps `plan`'s scan registered as long as the temporary tables live.
  void Adopt(const engine::ScanPlan& plan);

 private:
  engine::Connection& conn_;
  std::vector<std::string> names_;
  std::vector<std::shared_ptr<const engine::RegisteredScan>> scans_;
};

// A table opened for a row-changing command.
struct DmlTable {
  const CommandContext* ctx = nullptr;
  std::shared_ptr<const delta::Snapshot> snapshot;
  std::string where;  // "table <root> version <v>", for messages
  bool deletion_vectors = false;
  bool change_data_feed = false;
  // Where new rows go. Its schema is the snapshot's, or the evolved one when MERGE WITH
  // SCHEMA EVOLUTION adds columns (then new_metadata / new_protocol are set).
  WriteTarget target;
  std::optional<delta::Metadata> new_metadata;
  std::optional<delta::Protocol> new_protocol;
};

// Checks that Basin may write the table and, when the command may change or delete rows
// (`changes_rows`), that it is not delta.appendOnly; picks the physical mode. Errors:
// Unsupported for an unwritable protocol, InvalidArgument for an append-only table or a
// deletion-vector mode the table's protocol does not allow.
Result<DmlTable> OpenDmlTable(const CommandContext& ctx, std::shared_ptr<const delta::Snapshot> snapshot,
                              DmlMode mode, std::string_view operation, bool changes_rows);

// The predicate `expression` states about `snapshot`'s rows (engine::ParsePredicate); unknown
// when DuckDB cannot parse it on its own (the command's query then reports why).
delta::Predicate PredicateOf(const std::string& expression, const delta::Snapshot& snapshot,
                             const engine::PredicateScope& scope);

// The files a command reads, and what it tells the transaction it read.
struct Candidates {
  std::vector<size_t> files;  // indexes into snapshot.files
  // The rows read: those `predicate` may hold for (unknown: the whole table).
  delta::Predicate predicate;
};

// The files that may hold rows for which `predicate` holds (every file for unknown).
Candidates SelectCandidates(const delta::Snapshot& snapshot, delta::Predicate predicate);

// A scan of `files` of the table with engine::kScanFileColumn / kScanRowIndexColumn; its
// temporary tables belong to `temps`.
Result<engine::ScanPlan> ScanWithPositions(const DmlTable& table, const std::vector<size_t>& files,
                                           TempTables& temps);

// "t"."a", "t"."b", ... for every column of `schema`, reading it from relation `qualifier`
// whose columns are `available` (by logical name); columns it lacks are typed NULLs.
std::string ColumnsFrom(const delta::StructType& schema, const delta::StructType& available,
                        std::string_view qualifier);

// Generated columns a command assigns explicitly: column (schema name) -> SQL condition
// over the change table picking the rows whose clause assigns it ("TRUE": every row).
using GeneratedAssignments = std::map<std::string, std::string>;

// Delta's rule for generated columns: a stored value must equal the column's expression.
// Unassigned generated columns are recomputed when rows are stored; an assigned one must
// already hold the expression's value (over the row's new values) in every inserted or
// updated row that assigns it. InvalidArgument naming the table, the column, the value and
// the expected one for the first row that does not; nothing is written.
Status CheckGeneratedAssignments(const DmlTable& table, const std::string& changes,
                                 std::string_view operation, const GeneratedAssignments& assigned);

// What applying a change table did, for metrics.
struct AppliedChanges {
  int64_t deleted_rows = 0;
  int64_t updated_rows = 0;
  int64_t inserted_rows = 0;
  int64_t copied_rows = 0;  // unchanged rows rewritten (copy-on-write)
  int64_t added_files = 0;
  int64_t removed_files = 0;
  int64_t added_bytes = 0;
  int64_t removed_bytes = 0;
  int64_t added_change_files = 0;
  int64_t deletion_vectors_added = 0;
  int64_t deletion_vectors_removed = 0;
  int64_t deletion_vectors_updated = 0;
};

// Applies the change table `changes` (see the top of this file; `with_values` says whether
// it has the value columns) to the rows `candidates` scanned: marks or rewrites the
// touched files, writes updated and inserted rows, and change data files, adding the
// actions to `txn`. Constraint violations in written rows are InvalidArgument.
Result<AppliedChanges> ApplyChanges(const DmlTable& table, const engine::ScanPlan& candidates,
                                    const std::string& changes, bool with_values, TempTables& temps,
                                    delta::Transaction& txn);

// Removes `files` (indexes into snapshot.files) whole, in metadata only: a DELETE that
// matches every row of a file needs no DV or rewrite. Deleted rows are the files' live
// rows from their stats, which every file must have (numRecords). With
// `with_change_data`, their rows are also written as change data deletes: a commit with
// cdc files must list every change there, since readers derive deletes from remove
// actions only in commits without any.
Status RemoveWholeFiles(const DmlTable& table, const std::vector<size_t>& files, bool with_change_data,
                        TempTables& temps, delta::Transaction& txn, AppliedChanges& applied);

// The result to return without doing anything when the context's idempotent write id is
// already in the table (so no data files are written for nothing).
std::optional<CommandResult> AlreadyCommitted(const CommandContext& ctx, const delta::Snapshot& snapshot);

// Records what the command read, its operation and metrics (and an evolved schema), and
// commits. Notices report a checkpoint that could not be written.
Result<CommandResult> CommitDml(const DmlTable& table, const Candidates& candidates, delta::Transaction& txn,
                                std::string operation, nlohmann::json parameters, nlohmann::json metrics);

// The metrics every DML command reports, as Delta names them for DELETE and UPDATE.
nlohmann::json FileMetrics(const AppliedChanges& applied);

}  // namespace basin::commands::dml
