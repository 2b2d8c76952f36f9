// SinkCompactor: a stream's automatic compaction of its sink, off the batches' path.
//
// Every kCompactEveryBatches batches the runner asks for one. It bin-packs the sink's small
// files as OPTIMIZE does, in size-tiered bins (commands::OptimizeRequest::automatic: the
// files earlier compactions wrote are not rewritten by every one), on a thread the
// compactor keeps, at background priority (common/thread_priority.h), through a session of
// its own over the same warehouse (opened on first use, with the stream's session's
// options, so the same user, who needs MANAGE on the sink, and the same snapshot cache, but
// one DuckDB thread), while the next batches run and commit: Delta's conflict rules let a
// compaction and a stream's appends commit side by side.
// The sink is left alone when its `delta.autoOptimize.autoCompact` property is false. A
// compaction that fails (a conflict with another writer's delete, say) never fails the
// stream; the next request tries again. A request while one runs is dropped: the one under
// way already takes the small files.
//
// What a compaction did is told once, by TakeNotice, after it ended ("compacted
// default.bronze: 52 files into 1").
//
// Thread safety: one thread calls Request, TakeNotice and Wait; the compaction runs on the
// compactor's own.
#pragma once

#include <future>
#include <memory>
#include <string>

#include "catalog/warehouse.h"
#include "common/task_thread.h"
#include "sql/session.h"

namespace basin::stream {

class SinkCompactor {
 public:
  // The sink `table` at `location`, compacted through sessions opened with `options`.
  SinkCompactor(sql::SessionOptions options, catalog::TableName table, std::string location);
  // Waits for a compaction under way.
  ~SinkCompactor();
  SinkCompactor(const SinkCompactor&) = delete;
  SinkCompactor& operator=(const SinkCompactor&) = delete;

  // Starts a compaction unless one is under way.
  void Request();
  // What the last compaction did, in a sentence, once it ended; "" when there is nothing new
  // to tell (none ended since the last call, or it did nothing).
  std::string TakeNotice();
  // Waits for the compaction under way, if any.
  void Wait();

 private:
  // Compacts the sink: its notice.
  std::string Compact();

  const sql::SessionOptions options_;
  const catalog::TableName table_;
  const std::string location_;
  std::unique_ptr<sql::Session> session_;  // opened by the first compaction, on its thread
  std::shared_future<Status> running_;
  std::string notice_;    // written by the compaction, read once running_ is ready
  TaskThread thread_{1};  // last: destroyed first, after the compaction given to it
};

}  // namespace basin::stream
