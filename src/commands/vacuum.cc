// VACUUM: deleting files no version inside the retention window references
// (commands/maintenance.h).

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "commands/maintenance.h"
#include "commands/maintenance_internal.h"
#include "delta/checkpoint_writer.h"
#include "delta/deletion_vector.h"
#include "delta/log_segment.h"
#include "delta/paths.h"
#include "delta/protocol.h"
#include "engine/parquet_log_io.h"

namespace basin::commands {

namespace {

constexpr double kMsPerHour = 3600.0 * 1000.0;

// The store key of a path the log names, when the file lies inside the table, whose
// location is `table_root`: relative paths are, absolute ones when below that location.
std::optional<std::string> KeyInTable(const std::string& table_root, const std::string& decoded_path) {
  if (!delta::IsAbsoluteDataPath(decoded_path)) return decoded_path;
  std::string prefix = table_root;
  if (!prefix.empty() && prefix.back() != '/') prefix += '/';
  if (!decoded_path.starts_with(prefix)) return std::nullopt;
  return decoded_path.substr(prefix.size());
}

class ReferencedFiles {
 public:
  explicit ReferencedFiles(std::string table_root) : table_root_(std::move(table_root)) {}

  void AddDataPath(const std::string& log_path) {
    if (auto key = KeyInTable(table_root_, delta::DecodeDataPath(log_path))) keys_.insert(*key);
  }
  void AddDeletionVector(const std::optional<delta::DeletionVectorDescriptor>& dv) {
    if (!dv || dv->storage_type == 'i') return;
    auto key = delta::DeletionVectorKey(*dv);
    // A malformed DV path references nothing VACUUM could find anyway.
    if (!key.ok()) return;
    if (auto in_table = KeyInTable(table_root_, *key)) keys_.insert(*in_table);
  }
  bool Contains(const std::string& key) const { return keys_.count(key) > 0; }

 private:
  const std::string table_root_;
  std::set<std::string> keys_;
};

// Delta's hidden-file rule: a folder or file whose name starts with '_' or '.' is not the
// table's data (the log, checkpoints, Spark markers, checksums), except _change_data and
// partition folders of a column whose name starts with '_'.
bool IsVacuumable(const std::string& key, const std::vector<std::string>& partition_columns) {
  size_t start = 0;
  bool first = true;
  while (start <= key.size()) {
    size_t slash = key.find('/', start);
    std::string part = key.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (part.empty()) return false;
    if (part[0] == '_' || part[0] == '.') {
      bool allowed = first && part == "_change_data" && slash != std::string::npos;
      for (const std::string& column : partition_columns) {
        if (slash != std::string::npos && part.rfind(column + "=", 0) == 0) allowed = true;
      }
      if (!allowed) return false;
    }
    if (slash == std::string::npos) break;
    start = slash + 1;
    first = false;
  }
  return true;
}

// The folders above `key` ("a/b/c.parquet": "a", "a/b").
void AddFolders(const std::string& key, std::set<std::string>& folders) {
  for (size_t slash = key.find('/'); slash != std::string::npos; slash = key.find('/', slash + 1)) {
    folders.insert(key.substr(0, slash));
  }
}

// How many folders deleting `deleted` out of `listed` leaves without objects: they are gone
// (folders exist only as parts of keys; the local store removes emptied ones).
int64_t EmptiedFolders(const std::vector<ObjectInfo>& listed, const std::vector<std::string>& deleted) {
  const std::set<std::string> deleted_keys(deleted.begin(), deleted.end());
  std::set<std::string> emptied, kept;
  for (const std::string& key : deleted) AddFolders(key, emptied);
  for (const ObjectInfo& object : listed) {
    if (deleted_keys.count(object.key) == 0) AddFolders(object.key, kept);
  }
  return static_cast<int64_t>(std::count_if(emptied.begin(), emptied.end(),
                                            [&](const std::string& f) { return kept.count(f) == 0; }));
}

}  // namespace

Result<VacuumResult> Vacuum(const CommandContext& ctx, std::shared_ptr<const delta::Snapshot> table,
                            const VacuumRequest& request) {
  const std::string name = "VACUUM " + table->table_root;
  ctx.Report("loading tombstones", 0);
  delta::SnapshotOptions snapshot_options;
  snapshot_options.keep_tombstones = true;
  engine::DuckDBParquetLogIO log_io;
  ASSIGN_OR_RETURN(std::shared_ptr<delta::Snapshot> latest,
                   delta::LoadSnapshot(table->store, table->table_root, log_io, snapshot_options));
  const std::string where = "table " + latest->table_root + " version " + std::to_string(latest->version);
  if (latest->protocol.HasReaderFeature("vacuumProtocolCheck") ||
      latest->protocol.HasWriterFeature("vacuumProtocolCheck") || !request.dry_run) {
    RETURN_IF_ERROR(delta::CheckWritable(latest->protocol, latest->schema, where));
  }

  ASSIGN_OR_RETURN(int64_t table_retention_ms, delta::DeletedFileRetentionMs(latest->metadata));
  int64_t retention_ms = table_retention_ms;
  if (request.retain_hours) {
    if (!std::isfinite(*request.retain_hours) || *request.retain_hours < 0) {
      return Status::InvalidArgument(name + ": RETAIN must be a non-negative number of hours");
    }
    retention_ms = static_cast<int64_t>(std::llround(*request.retain_hours * kMsPerHour));
    if (request.retention_check && retention_ms < table_retention_ms) {
      return Status::InvalidArgument(
          name + ": a retention of " + std::to_string(*request.retain_hours) +
          " hours is shorter than the table's delta.deletedFileRetentionDuration (" +
          std::to_string(static_cast<double>(table_retention_ms) / kMsPerHour) +
          " hours): readers and writers still using older versions could lose files. Set "
          "basin.vacuum_retention_check = false to vacuum anyway");
    }
  }
  const int64_t now_ms = ctx.clock->NowMs();
  const int64_t cutoff_ms = now_ms - retention_ms;
  ObjectStore& store = *latest->store;

  ReferencedFiles referenced(latest->table_root);
  for (const delta::AddFile& add : latest->files) {
    referenced.AddDataPath(add.path);
    referenced.AddDeletionVector(add.deletion_vector);
  }
  // A tombstone as old as the retention has expired, as Spark and the checkpoint writer
  // count it: RETAIN 0 HOURS deletes the files a commit removed in the same millisecond.
  for (const delta::RemoveFile& remove : latest->tombstones) {
    if (remove.deletion_timestamp && *remove.deletion_timestamp <= cutoff_ms) continue;
    referenced.AddDataPath(remove.path);
    referenced.AddDeletionVector(remove.deletion_vector);
  }
  // Change data of commits inside the window stays readable by table_changes.
  ASSIGN_OR_RETURN(delta::LogListing listing, delta::ListLog(store));
  for (const auto& [version, object] : listing.commits) {
    if (object.modification_time_ms < cutoff_ms) continue;
    ASSIGN_OR_RETURN(std::string content, store.Get(object.key));
    ASSIGN_OR_RETURN(auto actions, delta::ParseCommitLinesContaining(
                                       content, latest->table_root + ": " + object.key, "\"cdc\""));
    for (const delta::Action& action : actions) {
      if (const auto* cdc = std::get_if<delta::CdcFile>(&action)) referenced.AddDataPath(cdc->path);
    }
  }

  ctx.Report("listing files", 0);
  ASSIGN_OR_RETURN(std::vector<ObjectInfo> objects, store.List(""));
  std::vector<std::string> partition_columns = latest->metadata.partition_columns;
  for (const std::string& column : latest->metadata.partition_columns) {
    if (const delta::StructField* field = latest->schema.Find(column))
      partition_columns.push_back(field->PhysicalName());
  }
  VacuumResult result;
  for (const ObjectInfo& object : objects) {
    if (!IsVacuumable(object.key, partition_columns) || referenced.Contains(object.key)) continue;
    if (object.modification_time_ms >= cutoff_ms) continue;
    result.files.push_back(object.key);
    result.bytes += static_cast<int64_t>(object.size_bytes);
  }
  if (request.dry_run) return result;

  nlohmann::json parameters = {{"retentionCheckEnabled", request.retention_check},
                               {"defaultRetentionMillis", table_retention_ms}};
  if (request.retain_hours) parameters["specifiedRetentionMillis"] = retention_ms;
  delta::Transaction start(latest, ctx.txn_options);
  start.SetOperation("VACUUM START", parameters);
  start.SetOperationMetrics(
      CommitMetrics({{"numFilesToDelete", result.files.size()}, {"sizeOfDataToDelete", result.bytes}}));
  ASSIGN_OR_RETURN(delta::CommitResult started, start.Commit());

  for (size_t i = 0; i < result.files.size(); i++) {
    ctx.Report("deleting files", static_cast<int64_t>(i), static_cast<int64_t>(result.files.size()));
    RETURN_IF_ERROR_CTX(store.Delete(result.files[i]), name + ": deleting " + result.files[i] +
                                                           " (VACUUM START is version " +
                                                           std::to_string(started.version) + ")");
  }
  const int64_t folders = EmptiedFolders(objects, result.files);

  delta::Transaction end(latest, ctx.txn_options);
  end.SetOperation("VACUUM END", {{"status", "COMPLETED"}});
  end.SetOperationMetrics(
      CommitMetrics({{"numDeletedFiles", result.files.size()}, {"numVacuumedDirectories", folders}}));
  RETURN_IF_ERROR(end.Commit().status());
  return result;
}

}  // namespace basin::commands
