// DELETE, UPDATE and MERGE INTO on Delta tables.
//
// Each prunes the table's files by partition values and stats before reading data, reads
// only the candidate files (with file name and row position), and commits one
// transaction. Two physical modes give identical rows:
//   - deletion vectors (merge-on-read), when the table has delta.enableDeletionVectors:
//     changed rows are marked deleted in a new DV for their file (merged with the file's
//     old DV), the file is removed and re-added with the DV (stats tightBounds=false), and
//     updated or inserted rows go to new files;
//   - copy-on-write otherwise: every touched file is rewritten without the deleted rows.
// In both, a DELETE true for every row of a file (no WHERE, or a WHERE over partition
// columns only that the file's partition values satisfy) removes the file unread.
// With delta.enableChangeDataFeed, the commit also carries _change_data files (cdc
// actions) holding the changed rows with _change_type delete / update_preimage /
// update_postimage / insert.
//
// Memory is bounded by the touched data: DuckDB runs the joins and spills; Basin holds
// only per-file row positions of the touched files.
//
// Expressions are DuckDB SQL over the table's logical column names, optionally qualified
// by the target alias (and, in MERGE, the source alias); named tables inside them are
// already resolved by the caller.
//
// Thread safety: functions; the context's Connection is used by one thread at a time.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "basin/status.h"
#include "commands/command_context.h"
#include "delta/snapshot.h"

namespace basin::commands {

// Physical mode, for tests and users who want to override the table's choice.
enum class DmlMode { kTableDefault, kDeletionVectors, kCopyOnWrite };

struct DeleteRequest {
  std::string where;  // empty: every row
  std::string target_alias;
  DmlMode mode = DmlMode::kTableDefault;
};

using Assignment = std::pair<std::string, std::string>;  // column (logical), expression

struct UpdateRequest {
  std::vector<Assignment> assignments;
  std::string where;  // empty: every row
  std::string target_alias;
  DmlMode mode = DmlMode::kTableDefault;
};

struct MergeClause {
  enum class Kind {
    kMatchedUpdate,
    kMatchedDelete,
    kNotMatchedInsert,  // WHEN NOT MATCHED [BY TARGET]
    kNotMatchedBySourceUpdate,
    kNotMatchedBySourceDelete,
  };
  Kind kind = Kind::kMatchedUpdate;
  std::string condition;  // the AND condition; empty for none
  bool star = false;      // UPDATE SET * / INSERT *: every target column from the source column of that name
  std::vector<Assignment> assignments;      // UPDATE SET col = expr
  std::vector<std::string> insert_columns;  // INSERT (cols) VALUES (exprs)
  std::vector<std::string> insert_values;
};

struct MergeRequest {
  std::string source_sql;  // a resolved query or table scan
  std::string source_alias;
  std::string target_alias;
  std::string on;
  // In statement order; within each kind, the first clause whose condition holds applies.
  std::vector<MergeClause> clauses;
  bool schema_evolution = false;  // MERGE WITH SCHEMA EVOLUTION: source columns added
  DmlMode mode = DmlMode::kTableDefault;
};

// Errors: InvalidArgument for bad expressions, unknown columns (naming them), a target
// row matched by more than one source row ("MERGE matched target row ... more than once"),
// constraint violations, a generated column assigned a value other than its expression's
// (naming the column), and DELETE/UPDATE/MERGE changing rows of a delta.appendOnly table;
// Conflict from the transaction. Metrics: numDeletedRows, numUpdatedRows, numCopiedRows,
// numAddedFiles, numRemovedFiles, numDeletionVectorsAdded, numTargetRowsInserted/Updated/
// Deleted (MERGE), numSourceRows, numTargetFilesScanned...
// (numbers in CommandResult::metrics; strings in the commit's operationMetrics, as Delta).
Result<CommandResult> Delete(const CommandContext& ctx, std::shared_ptr<const delta::Snapshot> table,
                             const DeleteRequest& request);
Result<CommandResult> Update(const CommandContext& ctx, std::shared_ptr<const delta::Snapshot> table,
                             const UpdateRequest& request);
Result<CommandResult> Merge(const CommandContext& ctx, std::shared_ptr<const delta::Snapshot> table,
                            const MergeRequest& request);

}  // namespace basin::commands
