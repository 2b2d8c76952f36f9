// Following a table's log from a version read earlier, without keeping that version's
// snapshot: the commits written since and their actions, found as UpdateSnapshot finds them
// (server/table_metrics.h keeps only a few figures per table and brings them forward so).
//
// Thread safety: free functions that only read the store; call from any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "basin/object_store.h"
#include "basin/status.h"
#include "delta/actions.h"
#include "delta/log_segment.h"

namespace basin::delta {

// The commit files after `version` of the table in `store` (oldest first; empty when none
// is new), each next commit looked up by its key. `commit_file` is commit `version`'s file
// as it was when that version was read (nullopt when the version came from a checkpoint
// whose commit was gone). nullopt when the new commits cannot simply be applied to what
// was read: commit `version` is gone or differs from `commit_file` (a log cleanup, the
// table written anew), or commits after it were cleaned up behind a newer checkpoint.
// IOError naming `table_root` when the store fails.
Result<std::optional<std::vector<LogFile>>> CommitFilesAfter(ObjectStore& store,
                                                             const std::string& table_root, int64_t version,
                                                             const std::optional<ObjectInfo>& commit_file);

// Calls `visit` with each action of commit file `file` (CommitFilesAfter's), in log order.
// Corruption naming the file and line for a malformed action.
Status ForEachCommitAction(ObjectStore& store, const LogFile& file, const std::string& table_root,
                           const std::function<Status(Action&)>& visit);

// When a commit was made: its in-commit timestamp (from `info`, its commitInfo) when the
// table's `metadata` enables them, else its file's modification time.
int64_t CommitTimestampMs(const Metadata& metadata, const std::optional<CommitInfo>& info,
                          int64_t file_time_ms);

}  // namespace basin::delta
