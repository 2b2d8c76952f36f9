// Table maintenance: OPTIMIZE (bin-packing, Z-order), VACUUM and RESTORE.
//
// Thread safety: functions; the context's Connection is used by one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "basin/status.h"
#include "commands/command_context.h"
#include "delta/snapshot.h"

namespace basin::commands {

struct OptimizeRequest {
  std::string where;                   // a predicate over partition columns only (else InvalidArgument)
  std::vector<std::string> zorder_by;  // logical column names; not partition columns
  // Bin-packing rewrites a bin only when it holds at least this many files (as Delta's
  // optimize.minNumFiles), or a file with deleted rows.
  int64_t min_files_per_bin = 2;
  // A writer's automatic compaction (Delta's auto compaction: commitInfo's
  // operationParameters.auto is true), a stream's of its sink. Its bins are size-tiered: a
  // file joins a bin only when the smaller files in it weigh at least half as much, so a
  // compaction rewrites the new small files, and merges a file an earlier one wrote only
  // once half as much again has come. A row is then rewritten a logarithmic number of times
  // on its way to a file of the target size, not by every compaction until then (whose work
  // and memory would grow with the table).
  bool automatic = false;
};

// Bin-packs small files (below delta.targetFileSize) of each partition toward the target
// size, or, with zorder_by, rewrites the selected files clustered by the Z-order of those
// columns. Commits removes and adds with dataChange=false (operation OPTIMIZE), so it never
// conflicts with concurrent appends. Files with deletion vectors are rewritten without
// their deleted rows. Nothing to do commits nothing (commit.version = -1).
Result<CommandResult> Optimize(const CommandContext& ctx, std::shared_ptr<const delta::Snapshot> table,
                               const OptimizeRequest& request);

struct VacuumRequest {
  std::optional<double> retain_hours;  // default: delta.deletedFileRetentionDuration (7 days)
  bool dry_run = false;
  // Retention shorter than the table's is refused unless this is false (as Spark's
  // spark.databricks.delta.retentionDurationCheck.enabled).
  bool retention_check = true;
};

struct VacuumResult {
  std::vector<std::string> files;  // deleted (or, dry run, to delete), relative paths
  int64_t bytes = 0;
};

// Deletes files under the table folder that no version inside the retention window
// references and that are older than it: data files, DV files and _change_data files
// (never _delta_log, never hidden or underscore-prefixed folders except _change_data).
// InvalidArgument for a retention below the table's while retention_check is on.
// Unsupported when the table has the vacuumProtocolCheck feature and Basin's protocol
// check refuses it. Records VACUUM START / VACUUM END commits as Delta does (not dry run).
Result<VacuumResult> Vacuum(const CommandContext& ctx, std::shared_ptr<const delta::Snapshot> table,
                            const VacuumRequest& request);

struct RestoreRequest {
  std::optional<int64_t> version;
  std::optional<std::string> timestamp;
};

// Makes the latest version's files those of `version`: removes files added since and
// re-adds files removed since (NotFound naming the file when one was vacuumed). Metadata
// and protocol come back too (protocol never downgraded). Operation RESTORE.
Result<CommandResult> Restore(const CommandContext& ctx, std::shared_ptr<const delta::Snapshot> table,
                              const RestoreRequest& request);

}  // namespace basin::commands
