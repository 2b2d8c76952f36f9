// TaskThread: one thread, kept for the owner's lifetime, that runs the tasks handed to it in
// the order given, so that work taken off a caller's path (a stream's checkpoint writes, a
// read of a batch's records) does not pay for starting and joining a thread each time.
//
// The queue is bounded: Submit waits while `capacity` tasks are queued. The destructor runs
// the tasks already given, then stops the thread (a task that waits on something must be
// given a way to end, as a cancellation token).
//
// Thread safety: every method may be called from any thread; tasks run on the TaskThread's
// own, started by the first Submit.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>

#include "basin/status.h"

namespace basin {

class TaskThread {
 public:
  // REQUIRES: capacity >= 1.
  explicit TaskThread(size_t capacity = 4);
  ~TaskThread();
  TaskThread(const TaskThread&) = delete;
  TaskThread& operator=(const TaskThread&) = delete;

  // Runs `task` after the tasks given before it; the future has its status once it ran.
  std::shared_future<Status> Submit(std::function<Status()> task);

 private:
  struct Task {
    std::function<Status()> run;
    std::promise<Status> done;
  };

  void Loop();

  const size_t capacity_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Task> queue_;  // GUARDED_BY(mutex_)
  bool stopping_ = false;   // GUARDED_BY(mutex_)
  std::thread thread_;      // started by the first Submit, under mutex_
};

}  // namespace basin
