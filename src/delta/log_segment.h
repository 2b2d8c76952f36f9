// The files of a Delta log (PROTOCOL.md "Delta Log Entries", "Checkpoints", "Log Compaction
// Files") and the segment of them that reconstructs one version: the newest complete
// checkpoint at or below it, then commits (or log-compaction files standing for runs of
// commits) up to it.
//
// Reading the latest version, `_last_checkpoint` is a hint: the listing starts at the
// checkpoint it names (ObjectStore::ListAfter, which object stores serve without listing
// older entries). A corrupt, missing or stale hint (naming a checkpoint that is absent or
// incomplete) falls back to listing the whole folder, so it never changes the result.
//
// Thread safety: plain values and stateless functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "basin/object_store.h"
#include "basin/status.h"

namespace basin::delta {

inline constexpr char kLogFolder[] = "_delta_log/";

enum class LogFileType {
  kCommit,               // 00000000000000000007.json
  kClassicCheckpoint,    // 00000000000000000007.checkpoint.parquet (V1 or V2 content)
  kMultiPartCheckpoint,  // 00000000000000000007.checkpoint.0000000001.0000000003.parquet
  kV2Checkpoint,         // 00000000000000000007.checkpoint.<uuid>.json / .parquet
  kCompaction,           // 00000000000000000004.00000000000000000006.compacted.json
};

struct LogFile {
  LogFileType type = LogFileType::kCommit;
  int64_t version = 0;      // a compaction's first version
  int64_t end_version = 0;  // a compaction's last version; `version` for the others
  int32_t part = 0;         // multi-part checkpoints: 1-based part and part count
  int32_t num_parts = 0;
  ObjectInfo object;
};

// The key of commit `version`: "_delta_log/00000000000000000007.json".
std::string CommitKey(int64_t version);

// Classifies a listed object; nullopt for anything that is not a log file Basin reads
// (.crc, _last_checkpoint, .tmp/, _staged_commits/, _sidecars/, other junk).
std::optional<LogFile> ParseLogFile(const ObjectInfo& object);

struct CheckpointFiles {
  int64_t version = 0;
  LogFileType type = LogFileType::kClassicCheckpoint;
  std::vector<ObjectInfo> files;  // one file, or the parts of a multi-part checkpoint in order
};

struct LogListing {
  std::map<int64_t, ObjectInfo> commits;
  std::vector<CheckpointFiles> checkpoints;  // complete ones only, ascending by version
  std::vector<LogFile> compactions;

  bool empty() const { return commits.empty() && checkpoints.empty(); }
  int64_t latest_version() const;    // REQUIRES: !empty()
  int64_t earliest_version() const;  // the oldest version a reader can reconstruct; REQUIRES: !empty()
};

// Lists and classifies _delta_log/, from the files of `from_version` on when given.
Result<LogListing> ListLog(ObjectStore& store, std::optional<int64_t> from_version = std::nullopt);

// The checkpoint version in _delta_log/_last_checkpoint; nullopt when it is absent or does not
// parse (it is only a hint).
std::optional<int64_t> ReadLastCheckpointHint(ObjectStore& store);

// The listing to reconstruct the latest version: from the hinted checkpoint when the listing
// from there holds that checkpoint complete, else the whole log.
Result<LogListing> ListLogForLatest(ObjectStore& store);

struct LogSegment {
  int64_t version = -1;
  std::optional<CheckpointFiles> checkpoint;
  // Commits and compactions to replay after the checkpoint, oldest first.
  std::vector<LogFile> deltas;
  // Commit file `version`, when it is still in the log (its mtime is the commit time).
  std::optional<ObjectInfo> last_commit;
};

// The segment for `version` (the latest when unset). NotFound when the log is empty or
// `version` lies outside what the log can reconstruct; Corruption naming the missing
// version when commits after the checkpoint are not contiguous.
Result<LogSegment> BuildLogSegment(const LogListing& listing, std::optional<int64_t> version,
                                   const std::string& table);

}  // namespace basin::delta
