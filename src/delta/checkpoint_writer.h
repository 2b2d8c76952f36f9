// Writing classic single-file checkpoints (PROTOCOL.md "Checkpoints", "Checkpoint Schema"):
// _delta_log/<version>.checkpoint.parquet holding the table state at a version as one
// action per row (columns txn, add, remove, metaData, protocol, domainMetadata), then
// _delta_log/_last_checkpoint.
//
// DuckDB writes the Parquet: each action is serialized to its log JSON form and typed
// with from_json() against the protocol's checkpoint schema (add.stats as a JSON string,
// partitionValues/tags/configuration as MAP(VARCHAR, VARCHAR), deletionVector as a
// struct), so the writer and the reader (delta/checkpoint.h) share one action format.
// The file lands with one Put(); rewriting a checkpoint gives identical content, so a
// concurrent or repeated writer is harmless.
//
// Thread safety: stateless functions; `conn` is used by one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "common/status.h"
#include "delta/actions.h"
#include "delta/snapshot.h"
#include "engine/duckdb.h"
#include "storage/object_store.h"

namespace basin::delta {

// delta.checkpointInterval: a checkpoint after every commit whose version is a multiple
// of it (default 10). InvalidArgument naming the property for a non-positive or
// unparsable value.
Result<int64_t> CheckpointInterval(const Metadata& metadata);

// delta.deletedFileRetentionDuration ("interval 1 week" by default; units
// millisecond(s)..week(s)) in milliseconds: how long a checkpoint keeps `remove`
// tombstones. InvalidArgument naming the property for a value it cannot parse.
Result<int64_t> DeletedFileRetentionMs(const Metadata& metadata);

struct CheckpointInfo {
  int64_t version = 0;
  int64_t num_actions = 0;  // rows written ("size" in _last_checkpoint)
  int64_t num_add_files = 0;
  int64_t size_bytes = 0;
};

// Writes the checkpoint of `snapshot`, which must have been loaded with
// SnapshotOptions::keep_tombstones: protocol, metadata, txns, live domain metadata, active
// files, and tombstones deleted after `now_ms` minus the retention. Then updates
// _last_checkpoint unless it already names a newer version. Errors name the table and
// version; the log is unchanged by a failure other than a stale _last_checkpoint.
Result<CheckpointInfo> WriteCheckpoint(ObjectStore& store, engine::Connection& conn, const Snapshot& snapshot,
                                       int64_t now_ms);

// Loads version `version` of the table (with tombstones) and writes its checkpoint.
Result<CheckpointInfo> CheckpointVersion(const std::shared_ptr<ObjectStore>& store,
                                         const std::string& table_root, engine::Connection& conn,
                                         int64_t version, int64_t now_ms);

}  // namespace basin::delta
