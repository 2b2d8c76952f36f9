#include "delta/checkpoint_worker.h"

#include <algorithm>
#include <utility>

#include "common/thread_priority.h"

namespace basin::delta {

CheckpointWorker::~CheckpointWorker() {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return queue_.empty() && !running_job_; });
    stopping_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void CheckpointWorker::Submit(const std::string& table_root, std::function<Status()> job) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto same_table = std::find_if(queue_.begin(), queue_.end(),
                                   [&](const Job& queued) { return queued.table_root == table_root; });
    if (same_table != queue_.end()) {
      same_table->run = std::move(job);
    } else {
      queue_.push_back(Job{table_root, std::move(job)});
    }
    if (!thread_.joinable()) thread_ = std::thread([this] { Loop(); });
  }
  changed_.notify_all();
}

void CheckpointWorker::Drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return queue_.empty() && !running_job_; });
}

std::vector<std::string> CheckpointWorker::TakeFailures() {
  std::lock_guard<std::mutex> lock(mutex_);
  return std::exchange(failures_, {});
}

void CheckpointWorker::Loop() {
  RunAsBackgroundThread();
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    changed_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and nothing left
    Job job = std::move(queue_.front());
    queue_.pop_front();
    running_job_ = true;
    lock.unlock();
    Status status = job.run();
    lock.lock();
    running_job_ = false;
    if (!status.ok()) failures_.push_back(status.message());
    changed_.notify_all();
  }
}

}  // namespace basin::delta
