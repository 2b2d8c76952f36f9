// Writing checkpoints (PROTOCOL.md "Checkpoints", "Checkpoint Specs", "Sidecar Files",
// "Checkpoint Schema", "Last Checkpoint File Schema"), then _delta_log/_last_checkpoint.
//
// Two kinds, chosen by the table's delta.checkpointPolicy (CheckpointOptions can override):
// - classic (the default): _delta_log/<version>.checkpoint.parquet, V1 spec, one action per
//   row (columns txn, add, remove, metaData, protocol, domainMetadata).
// - v2: a UUID-named top-level file _delta_log/<version>.checkpoint.<uuid>.parquet (or
//   .json) holding checkpointMetadata, protocol, metaData, txns, domain metadata and one
//   `sidecar` action per file of _delta_log/_sidecars/<uuid>.parquet, which hold every
//   add and remove (columns add, remove). Only written when the protocol lists the
//   v2Checkpoint feature as a reader and a writer feature: a reader that does not know the
//   feature would not see UUID-named checkpoints, and log cleanup may delete the commits
//   it would need instead. A table asking for v2 without the feature gets classic ones.
//
// The Parquet files are written through a ParquetLogIO (delta/parquet_io.h) with the
// protocol's checkpoint schema (add.stats as a JSON string, partitionValues/tags/
// configuration as MAP(VARCHAR, VARCHAR), deletionVector as a struct), and read back by
// delta/checkpoint.h through the same interface. Every file lands with one Put(). A V2 checkpoint's sidecars
// are written before the top-level file that names them, so a crash leaves at worst unreferenced sidecars
// (log cleanup removes them) and never a checkpoint pointing at missing files. Rewriting a checkpoint gives
// the same table, so a concurrent or repeated writer is harmless.
//
// Thread safety: stateless functions; `io` allows concurrent calls.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "basin/object_store.h"
#include "basin/status.h"
#include "delta/actions.h"
#include "delta/parquet_io.h"
#include "delta/snapshot.h"

namespace basin::delta {

// Where V2 checkpoints keep their sidecar files.
inline constexpr char kSidecarFolder[] = "_delta_log/_sidecars/";

// delta.checkpointInterval: a checkpoint after every commit whose version is a multiple
// of it (default 10). InvalidArgument naming the property for a non-positive or
// unparsable value.
Result<int64_t> CheckpointInterval(const Metadata& metadata);

// A duration table property ("interval 7 days", "1 hour"; units millisecond(s)..week(s),
// case-insensitive) in milliseconds; `default_ms` when the property is absent.
// InvalidArgument naming the property for a value it cannot parse.
Result<int64_t> DurationPropertyMs(const Metadata& metadata, const std::string& key, int64_t default_ms);

// delta.deletedFileRetentionDuration ("interval 1 week" by default) in milliseconds: how
// long a checkpoint keeps `remove` tombstones.
Result<int64_t> DeletedFileRetentionMs(const Metadata& metadata);

enum class CheckpointPolicy { kClassic, kV2 };

// delta.checkpointPolicy: "classic" (also when absent) or "v2", case-insensitive.
// InvalidArgument naming the property otherwise.
Result<CheckpointPolicy> CheckpointPolicyOf(const Metadata& metadata);

// The policy a checkpoint of `snapshot` follows: v2 when the table asks for it and its
// protocol lists v2Checkpoint as reader and writer feature, classic otherwise.
Result<CheckpointPolicy> EffectiveCheckpointPolicy(const Snapshot& snapshot);

enum class CheckpointFileFormat { kParquet, kJson };

struct CheckpointOptions {
  // Overrides the table's policy. kV2 on a table without the v2Checkpoint feature is
  // InvalidArgument (the protocol forbids it).
  std::optional<CheckpointPolicy> policy;
  // The format of a V2 checkpoint's top-level file; sidecars are always Parquet.
  CheckpointFileFormat v2_top_level_format = CheckpointFileFormat::kParquet;
  // add/remove actions per sidecar file; a V2 checkpoint has ceil(n / this) sidecars
  // (none for a table without files or tombstones). REQUIRES: > 0.
  int64_t actions_per_sidecar = 1'000'000;
};

struct CheckpointInfo {
  int64_t version = 0;
  CheckpointPolicy policy = CheckpointPolicy::kClassic;
  std::string key;                        // the top-level file ("_delta_log/...")
  std::vector<std::string> sidecar_keys;  // "_delta_log/_sidecars/<uuid>.parquet"; V2 only
  int64_t num_actions = 0;                // rows written in all files ("size" in _last_checkpoint)
  int64_t num_add_files = 0;
  int64_t size_bytes = 0;  // all files
};

// Writes the checkpoint of `snapshot`, which must have been loaded with
// SnapshotOptions::keep_tombstones: protocol, metadata, txns, live domain metadata, active
// files, and tombstones deleted after `now_ms` minus the retention. Then updates
// _last_checkpoint unless it already names a newer version; for a V2 checkpoint it carries
// `v2Checkpoint` (file name, size, modification time, and when there are at most a few
// dozen of them the non-file actions and the sidecar list, so readers may skip the
// top-level file). Errors name the table and version; the log is unchanged by a failure
// other than a stale _last_checkpoint or unreferenced sidecar files.
Result<CheckpointInfo> WriteCheckpoint(ObjectStore& store, ParquetLogIO& io, const Snapshot& snapshot,
                                       int64_t now_ms, const CheckpointOptions& options = {});

// Loads version `version` of the table (with tombstones) and writes its checkpoint.
Result<CheckpointInfo> CheckpointVersion(const std::shared_ptr<ObjectStore>& store,
                                         const std::string& table_root, ParquetLogIO& io, int64_t version,
                                         int64_t now_ms, const CheckpointOptions& options = {});

}  // namespace basin::delta
