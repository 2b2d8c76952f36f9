// Snapshot: the state of a Delta table at one version, built by log replay.
//
// LoadSnapshot() lists _delta_log, picks the newest usable checkpoint at or below the
// requested version (classic, multi-part, V2 with sidecars, classic-named V2), applies
// log-compaction files and JSON commits after it, and reconciles actions. It refuses
// tables whose protocol it cannot read (Unsupported, naming the feature or version) and
// logs with a gap in versions (Corruption, naming the missing version).
//
// UpdateSnapshot() brings a loaded snapshot to the latest version by applying only the
// commits written since, for callers that keep snapshots (a snapshot cache).
//
// Thread safety: a Snapshot is immutable after loading; share it freely. Its parsed file
// statistics (stats_index()) are built once, by the first thread that asks.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "basin/object_store.h"
#include "delta/actions.h"
#include "delta/file_list.h"
#include "delta/file_stats.h"
#include "delta/parquet_io.h"
#include "delta/schema.h"

namespace basin::delta {

// Whether a snapshot holds its tombstones.
enum class TombstoneState : uint8_t {
  kNotKept,  // loaded without SnapshotOptions::keep_tombstones
  kKept,     // `tombstones` holds every one
  // There were more than SnapshotOptions::tombstone_limit: none is held, and UpdateSnapshot
  // brings the snapshot forward without them (a checkpoint then loads its version again).
  kOverLimit,
};

struct Snapshot {
  int64_t version = -1;
  Protocol protocol;
  Metadata metadata;
  StructType schema;  // parsed metadata.schema_string
  // Active files, in no particular order, in chunks shared with the snapshots this one
  // was brought forward from or to (delta/file_list.h).
  FileList files;
  std::map<std::string, SetTransaction> set_transactions;  // by appId
  std::map<std::string, DomainMetadata> domain_metadata;   // by domain, live ones only
  // Removed files not re-added since, for checkpoints and VACUUM; filled only when
  // SnapshotOptions::keep_tombstones (tombstones can outnumber live files), and only while
  // they number at most its tombstone_limit.
  TombstoneList tombstones;
  TombstoneState tombstone_state = TombstoneState::kNotKept;
  size_t tombstone_limit = 0;  // the options', carried forward by UpdateSnapshot
  int64_t timestamp_ms = 0;    // in-commit timestamp when enabled, else commit file mtime
  // Commit file `version` as listed, when it is still in the log: UpdateSnapshot checks
  // that the log it extends is the one this snapshot was read from.
  std::optional<ObjectInfo> commit_file;

  // The table's root; data file paths in `files` are relative to it.
  std::shared_ptr<ObjectStore> store;
  std::string table_root;  // human-readable location, for messages

  int64_t num_records() const;  // sum of stats numRecords minus DV cardinalities; -1 if unknown
  int64_t size_bytes() const;

  // The files' statistics and partition values, typed, for data skipping
  // (delta/skipping.h): parsed from `files` on the first call, then shared. UpdateSnapshot
  // carries a parsed index over to the new snapshot, parsing only the new files.
  // REQUIRES: files, schema and metadata no longer change once it has been called.
  const FileStatsIndex& stats_index() const { return stats_cache.Get(schema, metadata, files); }
  LazyFileStatsIndex stats_cache;
};

struct SnapshotOptions {
  std::optional<int64_t> version;        // exactly this version (NotFound if not reconstructable)
  std::optional<std::string> timestamp;  // the latest version committed at or before this time
  bool keep_tombstones = false;          // fill Snapshot::tombstones
  // With keep_tombstones: past this many tombstones none is kept (kOverLimit), so that a
  // snapshot kept up to date for long (a session's, under a stream whose compactions remove
  // a file a batch) holds memory bounded by its files, not by the week of removes Delta
  // retains. 0: no limit.
  size_t tombstone_limit = 0;
};

// REQUIRES: `store` is rooted at the table folder (keys like "_delta_log/...").
// `io` reads Parquet checkpoints and sidecars.
Result<std::shared_ptr<Snapshot>> LoadSnapshot(std::shared_ptr<ObjectStore> store,
                                               const std::string& table_root, ParquetLogIO& io,
                                               const SnapshotOptions& options = {});

// The latest snapshot of `snapshot`'s table: `snapshot` itself (the same pointer) when no
// commit was written after its version, else a new snapshot made by applying only the new
// commits to it. The log is not listed: commit `snapshot->version` and each next one are
// looked up by key (Head) until one is missing, and _last_checkpoint is read when none is
// new (the log is listed, from `snapshot`'s version on, only when that names a newer
// checkpoint: a cleanup deleted commits out of order). Neither checkpoints nor older
// commits are read again, and the new snapshot shares the chunks of files and tombstones
// the new commits did not touch (delta/file_list.h), so an update costs O(new actions)
// plus a look-up of their keys per chunk, whatever the length of the log or the number of
// files. Tombstones are carried along when `snapshot` kept them. Parsed statistics carry
// over too; only the new files' are parsed.
//
// Falls back to LoadSnapshot of the latest version (reading its checkpoint) when the new
// commits cannot simply be applied: commit `snapshot->version` is gone or differs from the
// one it was read from (log cleanup, or the table deleted and created again), or commits
// after it are missing while a newer checkpoint exists. Errors: as LoadSnapshot's
// (Unsupported for a new protocol Basin cannot read, Corruption for a malformed commit).
// Thread safety: `snapshot` is only read; call from any thread.
Result<std::shared_ptr<const Snapshot>> UpdateSnapshot(std::shared_ptr<const Snapshot> snapshot,
                                                       ParquetLogIO& io);

// One commit as DESCRIBE HISTORY shows it.
struct CommitSummary {  // NOLINT(bugprone-exception-escape): nlohmann::json's constructor
  int64_t version = 0;
  int64_t timestamp_ms = 0;
  std::optional<std::string> operation;
  nlohmann::json operation_parameters;
  nlohmann::json operation_metrics;
  std::optional<std::string> engine_info;
  std::optional<bool> is_blind_append;
};

// Commits still in the log, newest first; `limit` 0 means all.
Result<std::vector<CommitSummary>> ReadHistory(const std::shared_ptr<ObjectStore>& store, size_t limit = 0);

}  // namespace basin::delta
