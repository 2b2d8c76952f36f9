// CheckpointWorker: writes the checkpoints commits make due on a thread of its own, so
// that a commit returns as soon as its log entry is durable. A checkpoint costs work in
// proportion to the table's files (every tenth commit by default); a writer waiting for it
// would see every tenth commit stall. A checkpoint is an optimization for readers (the
// log is complete without it), so writing it after the commit returns loses nothing:
// a checkpoint not written is written by the next due one.
//
// Jobs run one at a time in the order given. A table's job that has not started yet is
// replaced by a newer one of the same table (the newer checkpoint makes it moot), so a
// slow disk delays checkpoints but never queues more than one per table.
//
// Thread safety: all methods may be called from any thread. Jobs run on the worker's
// thread, started on the first Submit, at background priority (common/thread_priority.h).
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "basin/status.h"

namespace basin::delta {

class CheckpointWorker {
 public:
  CheckpointWorker() = default;
  // Waits for the jobs given (Drain), then stops the thread.
  ~CheckpointWorker();
  CheckpointWorker(const CheckpointWorker&) = delete;
  CheckpointWorker& operator=(const CheckpointWorker&) = delete;

  // Runs `job`, a checkpoint of the table at `table_root`, after the jobs given before it.
  // A failure's message is kept for TakeFailures: it should name the table and version.
  void Submit(const std::string& table_root, std::function<Status()> job);

  // Returns when every job given so far has run (before a table's files are deleted, or
  // when a caller needs the checkpoint on storage).
  void Drain();

  // The failures since the last call, one message each, oldest first.
  std::vector<std::string> TakeFailures();

 private:
  struct Job {
    std::string table_root;
    std::function<Status()> run;
  };

  void Loop();

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Job> queue_;              // GUARDED_BY(mutex_)
  bool running_job_ = false;           // GUARDED_BY(mutex_)
  bool stopping_ = false;              // GUARDED_BY(mutex_)
  std::vector<std::string> failures_;  // GUARDED_BY(mutex_)
  std::thread thread_;                 // started by the first Submit, under mutex_
};

}  // namespace basin::delta
