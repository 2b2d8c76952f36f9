// Snapshot: the state of a Delta table at one version, built by log replay.
//
// LoadSnapshot() lists _delta_log, picks the newest usable checkpoint at or below the
// requested version (classic, multi-part, V2 with sidecars, classic-named V2), applies
// log-compaction files and JSON commits after it, and reconciles actions. It refuses
// tables whose protocol it cannot read (Unsupported, naming the feature or version) and
// logs with a gap in versions (Corruption, naming the missing version).
//
// Thread safety: a Snapshot is immutable after loading; share it freely.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "delta/actions.h"
#include "delta/schema.h"
#include "storage/object_store.h"

namespace basin::engine {
class Connection;
}

namespace basin::delta {

struct Snapshot {
  int64_t version = -1;
  Protocol protocol;
  Metadata metadata;
  StructType schema;                                       // parsed metadata.schema_string
  std::vector<AddFile> files;                              // active files, in no particular order
  std::map<std::string, SetTransaction> set_transactions;  // by appId
  std::map<std::string, DomainMetadata> domain_metadata;   // by domain, live ones only
  // Removed files not re-added since, for checkpoints and VACUUM; filled only when
  // SnapshotOptions::keep_tombstones (tombstones can outnumber live files).
  std::vector<RemoveFile> tombstones;
  int64_t timestamp_ms = 0;  // in-commit timestamp when enabled, else commit file mtime

  // The table's root; data file paths in `files` are relative to it.
  std::shared_ptr<ObjectStore> store;
  std::string table_root;  // human-readable location, for messages

  int64_t num_records() const;  // sum of stats numRecords minus DV cardinalities; -1 if unknown
  int64_t size_bytes() const;
};

struct SnapshotOptions {
  std::optional<int64_t> version;        // exactly this version (NotFound if not reconstructable)
  std::optional<std::string> timestamp;  // the latest version committed at or before this time
  bool keep_tombstones = false;          // fill Snapshot::tombstones
};

// REQUIRES: `store` is rooted at the table folder (keys like "_delta_log/...").
// `conn` reads Parquet checkpoints and sidecars.
Result<std::shared_ptr<Snapshot>> LoadSnapshot(std::shared_ptr<ObjectStore> store,
                                               const std::string& table_root, engine::Connection& conn,
                                               const SnapshotOptions& options = {});

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
