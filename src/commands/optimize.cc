// OPTIMIZE: bin-packing compaction and Z-order clustering (commands/maintenance.h).

#include <algorithm>
#include <atomic>
#include <cctype>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "commands/maintenance.h"
#include "commands/maintenance_internal.h"
#include "commands/partition_predicate.h"
#include "commands/table_features.h"
#include "commands/table_rows.h"
#include "common/strings.h"
#include "delta/protocol.h"
#include "engine/scan.h"

namespace basin::commands {

namespace {

using engine::QuoteIdentifier;
using engine::QuoteLiteral;

using PartitionGroups = std::map<delta::PartitionValues, std::vector<size_t>>;

// The files of the partitions `where` selects, evaluated by DuckDB over the partition
// columns alone: a reference to any other column fails to bind.
Result<std::vector<size_t>> FilesOfPartitionsMatching(engine::Connection& conn, const delta::Snapshot& table,
                                                      const std::vector<size_t>& files,
                                                      const std::string& where) {
  auto selected = FilesWherePartitionsSatisfy(conn, table, files, where, "__basin_partitions");
  if (selected.ok() || selected.status().code() != ErrorCode::kInvalidArgument) return selected;
  std::string allowed;
  for (const std::string& p : table.metadata.partition_columns) allowed += (allowed.empty() ? "" : ", ") + p;
  return Status::InvalidArgument("OPTIMIZE " + table.table_root +
                                 ": the WHERE predicate may reference only " +
                                 (allowed.empty() ? std::string("partition columns (the table has none)")
                                                  : "the partition columns (" + allowed + ")") +
                                 ": " + selected.status().message());
}

bool HasDeletedRows(const delta::AddFile& file) {
  return file.deletion_vector.has_value() && file.deletion_vector->cardinality > 0;
}

// Delta's bin-packing: small files (and files with deleted rows) of one partition, by
// size, filled into bins up to the target size; a bin is worth rewriting when it merges
// enough files or drops deleted rows. `tiered`: size-tiered, as OptimizeRequest::automatic.
std::vector<std::vector<size_t>> PackBins(const delta::Snapshot& table, const std::vector<size_t>& files,
                                          int64_t target_size, int64_t min_files_per_bin, bool tiered) {
  std::vector<size_t> candidates;
  for (size_t index : files) {
    const delta::AddFile& file = table.files[index];
    if (file.size < target_size || HasDeletedRows(file)) candidates.push_back(index);
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [&](size_t a, size_t b) { return table.files[a].size < table.files[b].size; });
  std::vector<std::vector<size_t>> bins;
  std::vector<size_t> bin;
  int64_t bin_size = 0;
  auto close_bin = [&] {
    bool drops_rows =
        std::any_of(bin.begin(), bin.end(), [&](size_t i) { return HasDeletedRows(table.files[i]); });
    if (static_cast<int64_t>(bin.size()) >= std::max<int64_t>(min_files_per_bin, 1) ||
        (drops_rows && !bin.empty()))
      bins.push_back(bin);
    bin.clear();
    bin_size = 0;
  };
  for (size_t index : candidates) {
    int64_t size = table.files[index].size;
    const bool outweighs = tiered && size > 2 * bin_size;  // the smaller files weigh under half of it
    if (!bin.empty() && (outweighs || bin_size + size > target_size)) close_bin();
    bin.push_back(index);
    bin_size += size;
  }
  close_bin();
  return bins;
}

// Bits per column of the Z-order value: every column gets the same share of 62 bits
// (a BIGINT stays non-negative), at most 16.
int ZOrderBitsPerColumn(size_t columns) { return static_cast<int>(std::min<size_t>(16, 62 / columns)); }

std::string ColumnList(const delta::StructType& schema) {
  std::string list;
  for (const delta::StructField& field : schema.fields)
    list += (list.empty() ? "" : ", ") + QuoteIdentifier(field.name);
  return list;
}

// The rows of `scan_sql` with their Z-order value __basin_z over `columns`: each column's
// rank (ntile over 2^bits buckets, so skewed values spread evenly) with the ranks' bits
// interleaved, most significant first.
std::string WithZOrderValue(const std::string& scan_sql, const delta::StructType& schema,
                            const std::vector<const delta::StructField*>& columns) {
  const int bits = ZOrderBitsPerColumn(columns.size());
  const int64_t buckets = int64_t{1} << bits;
  std::string ranks;
  for (size_t c = 0; c < columns.size(); c++) {
    ranks += ", ntile(" + std::to_string(buckets) + ") OVER (ORDER BY " + QuoteIdentifier(columns[c]->name) +
             " NULLS FIRST) - 1 AS __basin_r" + std::to_string(c);
  }
  std::string z;
  const size_t n = columns.size();
  for (int b = 0; b < bits; b++) {
    for (size_t c = 0; c < n; c++) {
      const int64_t out_bit = static_cast<int64_t>(b) * static_cast<int64_t>(n) + static_cast<int64_t>(c);
      z += (z.empty() ? "" : " | ") + std::string("(((__basin_r") + std::to_string(c) + " >> " +
           std::to_string(b) + ") & 1) << " + std::to_string(out_bit) + ")";
    }
  }
  return "SELECT " + ColumnList(schema) + ", (" + z + ") AS __basin_z FROM (SELECT *" + ranks + " FROM (" +
         scan_sql + ") AS __basin_rows) AS __basin_ranked";
}

std::string NewTempTableName() {
  static std::atomic<uint64_t> counter{0};
  return "__basin_zorder_" + std::to_string(counter.fetch_add(1));
}

// Writes the rows of `rows_sql` (logical columns) as new files of `target`.
Result<std::vector<delta::AddFile>> WriteLogicalRows(engine::Connection& conn, const WriteTarget& target,
                                                     const std::string& rows_sql) {
  ASSIGN_OR_RETURN(std::string stored, StoredRowsSql(target, rows_sql));
  return WriteRows(conn, target, stored);
}

// Z-orders the rows of `scan_sql` into files of about `target_size`: the rows, with their
// Z-order value, go to a temporary table (DuckDB spills it when large) in Z-order, split
// into `files` runs of consecutive values; each run is written on its own, so each file
// covers one compact region whatever row-group size the Parquet writer uses.
Result<std::vector<delta::AddFile>> WriteZOrdered(engine::Connection& conn, const WriteTarget& target,
                                                  const std::string& scan_sql,
                                                  const std::vector<const delta::StructField*>& columns,
                                                  int64_t files) {
  const std::string name = QuoteIdentifier(NewTempTableName());
  const std::string temp = "temp.main." + name;
  RETURN_IF_ERROR(conn.Execute("CREATE TEMP TABLE " + name + " AS SELECT *, ntile(" + std::to_string(files) +
                               ") OVER (ORDER BY __basin_z) AS __basin_run FROM (" +
                               WithZOrderValue(scan_sql, target.schema, columns) + ") ORDER BY __basin_z"));
  std::vector<delta::AddFile> written;
  Status status;
  for (int64_t run = 1; run <= files && status.ok(); run++) {
    auto adds = WriteLogicalRows(conn, target,
                                 "SELECT " + ColumnList(target.schema) + " FROM " + temp +
                                     " WHERE __basin_run = " + std::to_string(run) + " ORDER BY __basin_z");
    if (!adds.ok()) {
      status = adds.status();
      break;
    }
    for (auto& add : *adds) written.push_back(std::move(add));
  }
  Status dropped = conn.Execute("DROP TABLE IF EXISTS " + temp);
  if (!status.ok()) {
    if (dropped.ok()) return status;
    return Status(status.code(), status.message() + " (and dropping temporary table " + temp +
                                     " failed: " + dropped.message() + ")");
  }
  // The files are written; a temporary table left behind goes with the connection, so its
  // DROP failing must not fail the command.
  return written;
}

nlohmann::json FileSizeStats(const std::vector<int64_t>& sizes) {
  nlohmann::json stats = {{"totalFiles", sizes.size()}, {"totalSize", 0}};
  if (sizes.empty()) return stats;
  int64_t total = 0;
  for (int64_t s : sizes) total += s;
  stats["min"] = *std::min_element(sizes.begin(), sizes.end());
  stats["max"] = *std::max_element(sizes.begin(), sizes.end());
  stats["avg"] = static_cast<double>(total) / static_cast<double>(sizes.size());
  stats["totalSize"] = total;
  return stats;
}

int64_t Percentile(std::vector<int64_t> sizes, double p) {
  if (sizes.empty()) return 0;
  std::sort(sizes.begin(), sizes.end());
  return sizes[static_cast<size_t>(p * static_cast<double>(sizes.size() - 1))];
}

nlohmann::json JsonStringList(const std::vector<std::string>& items) {
  nlohmann::json list = nlohmann::json::array();
  for (const std::string& item : items) list.push_back(item);
  return list;
}

}  // namespace

Result<CommandResult> Optimize(const CommandContext& ctx, std::shared_ptr<const delta::Snapshot> table,
                               const OptimizeRequest& request) {
  const delta::Snapshot& snapshot = *table;
  const std::string where = "table " + snapshot.table_root + " version " + std::to_string(snapshot.version);
  RETURN_IF_ERROR(delta::CheckWritable(snapshot.protocol, snapshot.schema, where));
  ASSIGN_OR_RETURN(int64_t target_size, TargetFileSizeBytes(snapshot.metadata));
  engine::Connection& conn = *ctx.conn;

  std::vector<const delta::StructField*> zorder_columns;
  for (const std::string& name : request.zorder_by) {
    const delta::StructField* field = snapshot.schema.Find(name);
    if (field == nullptr) {
      return Status::InvalidArgument("OPTIMIZE " + snapshot.table_root + " ZORDER BY: column '" + name +
                                     "' does not exist");
    }
    for (const std::string& p : snapshot.metadata.partition_columns) {
      if (AsciiLower(p) == AsciiLower(field->name)) {
        return Status::InvalidArgument("OPTIMIZE " + snapshot.table_root + " ZORDER BY: '" + field->name +
                                       "' is a partition column; Z-ordering applies within partitions");
      }
    }
    if (std::find(zorder_columns.begin(), zorder_columns.end(), field) != zorder_columns.end()) {
      return Status::InvalidArgument("OPTIMIZE " + snapshot.table_root + " ZORDER BY: column '" +
                                     field->name + "' is listed twice");
    }
    zorder_columns.push_back(field);
  }
  if (zorder_columns.size() > 62) {
    return Status::InvalidArgument("OPTIMIZE " + snapshot.table_root + " ZORDER BY: at most 62 columns");
  }

  ctx.Report("planning", 0);
  std::vector<size_t> selected(snapshot.files.size());
  std::iota(selected.begin(), selected.end(), 0);
  if (!request.where.empty()) {
    ASSIGN_OR_RETURN(selected, FilesOfPartitionsMatching(conn, snapshot, selected, request.where));
  }
  PartitionGroups partitions;
  for (size_t i : selected) partitions[snapshot.files[i].partition_values].push_back(i);
  size_t considered_files = 0;
  std::vector<std::vector<size_t>> bins;
  for (const auto& [values, files] : partitions) {
    considered_files += files.size();
    if (!zorder_columns.empty()) {
      bins.push_back(files);  // Z-order clusters a whole partition
      continue;
    }
    for (auto& bin : PackBins(snapshot, files, target_size, request.min_files_per_bin, request.automatic))
      bins.push_back(std::move(bin));
  }

  CommandResult result;
  std::vector<int64_t> removed_sizes, added_sizes;
  int64_t dvs_removed = 0;
  std::set<delta::PartitionValues> partitions_optimized;
  std::vector<delta::AddFile> read_files;
  std::vector<delta::AddFile> added;
  const WriteTarget target = internal::TargetOf(snapshot);
  for (size_t b = 0; b < bins.size(); b++) {
    ctx.Report(zorder_columns.empty() ? "compacting" : "z-ordering", static_cast<int64_t>(b),
               static_cast<int64_t>(bins.size()));
    engine::ScanOptions options;
    options.file_indexes = bins[b];
    ASSIGN_OR_RETURN(engine::ScanPlan plan, engine::BuildScanSql(snapshot, conn, options));
    Result<std::vector<delta::AddFile>> written = std::vector<delta::AddFile>();
    if (zorder_columns.empty()) {
      written = WriteLogicalRows(conn, target, plan.sql);
    } else {
      int64_t bin_bytes = 0;
      for (size_t index : bins[b]) bin_bytes += snapshot.files[index].size;
      written = WriteZOrdered(conn, target, plan.sql, zorder_columns,
                              std::max<int64_t>(1, (bin_bytes + target_size - 1) / target_size));
    }
    if (!written.ok()) return written.status().WithContext("OPTIMIZE " + where);
    for (delta::AddFile& add : *written) {
      add.data_change = false;
      added_sizes.push_back(add.size);
      added.push_back(std::move(add));
    }
    for (size_t index : bins[b]) {
      const delta::AddFile& file = snapshot.files[index];
      read_files.push_back(file);
      removed_sizes.push_back(file.size);
      if (file.deletion_vector) dvs_removed++;
      partitions_optimized.insert(file.partition_values);
    }
  }

  const nlohmann::json files_added = FileSizeStats(added_sizes);
  const nlohmann::json files_removed = FileSizeStats(removed_sizes);
  result.metrics = {
      {"numFilesAdded", added_sizes.size()},
      {"numFilesRemoved", removed_sizes.size()},
      {"filesAdded", files_added},
      {"filesRemoved", files_removed},
      {"partitionsOptimized", partitions_optimized.size()},
      {"numBatches", bins.size()},
      {"totalConsideredFiles", considered_files},
      {"totalFilesSkipped", considered_files - removed_sizes.size()},
      {"numDeletionVectorsRemoved", dvs_removed},
      {"numAddedBytes", files_added["totalSize"]},
      {"numRemovedBytes", files_removed["totalSize"]},
  };
  if (bins.empty()) return result;  // nothing to do: commit.version stays -1

  delta::Transaction txn(std::move(table), ctx.txn_options);
  // Only the rewritten files matter: appends and changes to other files commute with this.
  txn.ReadFiles(read_files);
  for (const delta::AddFile& file : read_files) txn.Remove(delta::RemoveOf(file, /*data_change=*/false));
  for (delta::AddFile& add : added) txn.Add(std::move(add));
  std::vector<std::string> predicate;
  if (!request.where.empty()) predicate.push_back(request.where);
  std::vector<std::string> zorder_names;
  zorder_names.reserve(zorder_columns.size());
  for (const delta::StructField* field : zorder_columns) zorder_names.push_back(field->name);
  txn.SetOperation("OPTIMIZE", {{"predicate", JsonStringList(predicate).dump()},
                                {"zOrderBy", JsonStringList(zorder_names).dump()},
                                {"auto", request.automatic}});
  nlohmann::json commit_metrics = {
      {"numAddedFiles", added_sizes.size()},         {"numRemovedFiles", removed_sizes.size()},
      {"numAddedBytes", files_added["totalSize"]},   {"numRemovedBytes", files_removed["totalSize"]},
      {"numDeletionVectorsRemoved", dvs_removed},    {"minFileSize", files_added.value("min", 0)},
      {"maxFileSize", files_added.value("max", 0)},  {"p25FileSize", Percentile(added_sizes, 0.25)},
      {"p50FileSize", Percentile(added_sizes, 0.5)}, {"p75FileSize", Percentile(added_sizes, 0.75)},
  };
  ASSIGN_OR_RETURN(CommandResult committed,
                   CommitCommand(ctx, txn, std::move(commit_metrics), snapshot.table_root));
  committed.metrics = std::move(result.metrics);  // the statement's result row, not commitInfo's
  return committed;
}

}  // namespace basin::commands
