// Log cleanup: deleting expired _delta_log files (PROTOCOL.md "Metadata Cleanup"), as
// Delta does after writing a checkpoint.
//
// What is kept: every version whose commit timestamp lies inside the retention window
// stays reconstructable, and so does time travel to any timestamp inside it.
//   cutoff            = midnight UTC of (now - delta.logRetentionDuration), default
//                       "interval 30 days"; truncating to the day keeps a little more.
//   cutoff commit     = the newest commit whose timestamp is at or before the cutoff (the
//                       version a `TIMESTAMP AS OF cutoff` query reads). Commit timestamps
//                       are in-commit timestamps where commits have them, else commit file
//                       modification times made monotonic (delta/history.h).
//   cutoff checkpoint = the newest complete checkpoint at or below the cutoff commit.
// The cutoff checkpoint, the commit file at its version (checkpoints drop commitInfo, which
// in-commit timestamps need) and everything newer are kept. Without a cutoff checkpoint
// nothing is deleted: no older version can be dropped without losing a retained one.
//
// What is deleted, and in this order, so that a crash part-way leaves every retained
// version readable and older versions either readable or cleanly NotFound (never a log
// with a hole a reader would call Corruption):
//   1. checkpoint files (classic, multi-part and UUID-named V2) older than the cutoff
//      checkpoint;
//   2. log compaction files starting at or before it (a reader starting from the cutoff
//      checkpoint or a newer one never uses them);
//   3. commit files older than it, oldest first;
//   4. version checksum files <version>.crc older than it, then the hidden .<name>.crc
//      files Hadoop writes next to files (for every file of steps 1-4, whether or not
//      the file itself is still there);
//   5. when step 1 deleted checkpoints: sidecars in _delta_log/_sidecars/ (and their .crc
//      companions) that no remaining checkpoint references and that were written before
//      midnight UTC of the previous day (a checkpoint being written now may not reference
//      its sidecars yet), orphans of crashed checkpoint writes included. Finding the
//      references reads the remaining checkpoints' top-level files, so it is done only
//      when references went away and such old sidecars exist;
//   6. temporary files a local store's interrupted write left (include/basin/object_store.h
//      IsLocalTempFile) written before that same midnight: a write in progress now is
//      younger.
// Nothing else in _delta_log (_last_checkpoint, which names the newest checkpoint, other
// unknown files) is touched. After cleanup, LoadSnapshot of a version
// older than the cutoff checkpoint is NotFound naming the versions the log still holds.
//
// Thread safety: stateless; `io` allows concurrent calls. Concurrent cleanups
// of one table are harmless (deleting an absent file succeeds), but a reader that listed
// the log before a cleanup may find an expired file gone, as in Delta.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "basin/object_store.h"
#include "basin/status.h"
#include "delta/actions.h"
#include "delta/parquet_io.h"

namespace basin::delta {

// delta.logRetentionDuration in milliseconds ("interval 30 days" by default).
// InvalidArgument naming the property for a value it cannot parse.
Result<int64_t> LogRetentionMs(const Metadata& metadata);

// delta.enableExpiredLogCleanup ("true" by default; "true"/"false", case-insensitive).
// InvalidArgument naming the property for another value.
Result<bool> ExpiredLogCleanupEnabled(const Metadata& metadata);

struct LogCleanupResult {
  bool enabled = true;  // false when delta.enableExpiredLogCleanup is false: nothing was read
  int64_t cutoff_ms = 0;
  // The cutoff checkpoint: the oldest version still reconstructable. Unset when there is
  // none, and then nothing was deleted.
  std::optional<int64_t> oldest_kept_version;
  std::vector<std::string> deleted_keys;  // in deletion order
};

// Cleans up the _delta_log of the table at `store`'s root with the retention `metadata`
// asks for, as of `now_ms` (milliseconds since the epoch). `io` reads checkpoints to
// find the sidecars they reference; `table_root` names the table in messages. Errors are
// the store's (naming the key) or InvalidArgument for a bad table property; files deleted
// before an error stay deleted, which the order above makes safe.
Result<LogCleanupResult> CleanUpExpiredLogs(ObjectStore& store, const Metadata& metadata, int64_t now_ms,
                                            ParquetLogIO& io, const std::string& table_root);

}  // namespace basin::delta
