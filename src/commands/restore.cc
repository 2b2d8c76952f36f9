// RESTORE: making the latest version's files and metadata those of an older version
// (commands/maintenance.h).

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "commands/maintenance.h"
#include "commands/maintenance_internal.h"
#include "delta/deletion_vector.h"
#include "delta/paths.h"
#include "delta/protocol.h"
#include "engine/parquet_log_io.h"

namespace basin::commands {

namespace {

// The table features a legacy protocol version implies (PROTOCOL.md "Table Features").
void AddLegacyFeatures(int32_t reader_version, int32_t writer_version, std::set<std::string>& reader,
                       std::set<std::string>& writer) {
  if (reader_version == 2) reader.insert("columnMapping");
  if (writer_version >= 2 && writer_version < 7) writer.insert({"appendOnly", "invariants"});
  if (writer_version >= 3 && writer_version < 7) writer.insert("checkConstraints");
  if (writer_version >= 4 && writer_version < 7) writer.insert({"changeDataFeed", "generatedColumns"});
  if (writer_version >= 5 && writer_version < 7) writer.insert("columnMapping");
  if (writer_version == 6) writer.insert("identityColumns");
}

// The smallest protocol that allows all that `a` and `b` allow: RESTORE never downgrades.
delta::Protocol MergeProtocols(const delta::Protocol& a, const delta::Protocol& b) {
  delta::Protocol merged;
  merged.min_reader_version = std::max(a.min_reader_version, b.min_reader_version);
  merged.min_writer_version = std::max(a.min_writer_version, b.min_writer_version);
  const bool reader_features = merged.min_reader_version >= 3;
  const bool writer_features = merged.min_writer_version >= 7;
  if (!reader_features && !writer_features) return merged;
  std::set<std::string> reader, writer;
  for (const delta::Protocol* p : {&a, &b}) {
    if (p->reader_features) reader.insert(p->reader_features->begin(), p->reader_features->end());
    if (p->writer_features) writer.insert(p->writer_features->begin(), p->writer_features->end());
    AddLegacyFeatures(p->reader_features ? 3 : p->min_reader_version,
                      p->writer_features ? 7 : p->min_writer_version, reader, writer);
  }
  if (reader_features) merged.reader_features = std::vector<std::string>(reader.begin(), reader.end());
  if (writer_features) {
    // Reader features are writer features too.
    writer.insert(reader.begin(), reader.end());
    merged.writer_features = std::vector<std::string>(writer.begin(), writer.end());
  }
  return merged;
}

bool SameProtocol(const delta::Protocol& a, const delta::Protocol& b) {
  auto sorted = [](const std::optional<std::vector<std::string>>& f) {
    std::vector<std::string> v = f.value_or(std::vector<std::string>{});
    std::sort(v.begin(), v.end());
    return v;
  };
  return a.min_reader_version == b.min_reader_version && a.min_writer_version == b.min_writer_version &&
         a.reader_features.has_value() == b.reader_features.has_value() &&
         a.writer_features.has_value() == b.writer_features.has_value() &&
         sorted(a.reader_features) == sorted(b.reader_features) &&
         sorted(a.writer_features) == sorted(b.writer_features);
}

bool SameMetadata(const delta::Metadata& a, const delta::Metadata& b) {
  return a.id == b.id && a.name == b.name && a.description == b.description &&
         a.format_provider == b.format_provider && a.format_options == b.format_options &&
         a.schema_string == b.schema_string && a.partition_columns == b.partition_columns &&
         a.configuration == b.configuration;
}

// NotFound naming the file when a file the restored version needs is gone (vacuumed).
Status CheckStillPresent(ObjectStore& store, const delta::AddFile& add, const std::string& where) {
  const std::string decoded = delta::DecodeDataPath(add.path);
  if (!delta::IsAbsoluteDataPath(decoded)) {
    auto head = store.Head(decoded);
    if (head.status().IsNotFound()) {
      return Status::NotFound(where + ": data file " + decoded +
                              " no longer exists (removed by VACUUM?); the version cannot be restored");
    }
    RETURN_IF_ERROR_CTX(head.status(), where);
  }
  if (add.deletion_vector && add.deletion_vector->storage_type == 'u') {
    ASSIGN_OR_RETURN(std::string key, delta::DeletionVectorKey(*add.deletion_vector));
    auto head = store.Head(key);
    if (head.status().IsNotFound()) {
      return Status::NotFound(where + ": deletion vector file " + key + " of data file " + decoded +
                              " no longer exists (removed by VACUUM?); the version cannot be restored");
    }
    RETURN_IF_ERROR_CTX(head.status(), where);
  }
  return Status::OK();
}

}  // namespace

Result<CommandResult> Restore(const CommandContext& ctx, std::shared_ptr<const delta::Snapshot> table,
                              const RestoreRequest& request) {
  const std::string name = "RESTORE " + table->table_root;
  if (request.version.has_value() == request.timestamp.has_value()) {
    return Status::InvalidArgument(name + ": give exactly one of a version and a timestamp to restore to");
  }
  if (request.version && *request.version > table->version) {
    return Status::InvalidArgument(name + ": cannot restore to version " + std::to_string(*request.version) +
                                   ", after the latest version " + std::to_string(table->version));
  }
  RETURN_IF_ERROR(
      delta::CheckWritable(table->protocol, table->schema,
                           "table " + table->table_root + " version " + std::to_string(table->version)));
  delta::SnapshotOptions options;
  options.version = request.version;
  options.timestamp = request.timestamp;
  ctx.Report("loading version", 0);
  engine::DuckDBParquetLogIO log_io;
  ASSIGN_OR_RETURN(std::shared_ptr<delta::Snapshot> old,
                   delta::LoadSnapshot(table->store, table->table_root, log_io, options));
  const std::string where = name + " to version " + std::to_string(old->version);
  if (old->version > table->version) {
    return Status::InvalidArgument(where + ": the table's latest version is " +
                                   std::to_string(table->version));
  }

  std::map<std::string, const delta::AddFile*> old_files, latest_files;
  for (const delta::AddFile& f : old->files) old_files.emplace(f.ReplayKey(), &f);
  for (const delta::AddFile& f : table->files) latest_files.emplace(f.ReplayKey(), &f);

  delta::Transaction txn(table, ctx.txn_options);
  txn.ReadWholeTable();  // the outcome is a whole-table state: any concurrent change conflicts
  int64_t restored = 0, restored_bytes = 0, removed = 0, removed_bytes = 0;
  for (const auto& [key, file] : old_files) {
    if (latest_files.count(key) > 0) continue;
    ctx.Report("checking files", restored, -1);
    RETURN_IF_ERROR(CheckStillPresent(*table->store, *file, where));
    delta::AddFile add = *file;
    add.data_change = true;
    txn.Add(std::move(add));
    restored++;
    restored_bytes += file->size;
  }
  for (const auto& [key, file] : latest_files) {
    if (old_files.count(key) > 0) continue;
    txn.Remove(delta::RemoveOf(*file, /*data_change=*/true));
    removed++;
    removed_bytes += file->size;
  }
  if (!SameMetadata(old->metadata, table->metadata)) txn.UpdateMetadata(old->metadata);
  delta::Protocol protocol = MergeProtocols(table->protocol, old->protocol);
  if (!SameProtocol(protocol, table->protocol)) txn.UpdateProtocol(protocol);

  nlohmann::json parameters = nlohmann::json::object();
  if (request.version) {
    parameters["version"] = *request.version;
  } else {
    parameters["timestamp"] = *request.timestamp;
  }
  txn.SetOperation("RESTORE", parameters);
  const nlohmann::json metrics = {
      {"tableSizeAfterRestore", old->size_bytes()},
      {"numOfFilesAfterRestore", old->files.size()},
      {"numRemovedFiles", removed},
      {"numRestoredFiles", restored},
      {"removedFilesSize", removed_bytes},
      {"restoredFilesSize", restored_bytes},
  };
  return CommitCommand(ctx, txn, metrics, table->table_root);
}

}  // namespace basin::commands
