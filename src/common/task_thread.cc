#include "common/task_thread.h"

#include <cassert>
#include <utility>

namespace basin {

TaskThread::TaskThread(size_t capacity) : capacity_(capacity) { assert(capacity >= 1); }

TaskThread::~TaskThread() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::shared_future<Status> TaskThread::Submit(std::function<Status()> task) {
  std::shared_future<Status> done;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return queue_.size() < capacity_; });
    queue_.push_back(Task{std::move(task), std::promise<Status>()});
    done = queue_.back().done.get_future().share();
    if (!thread_.joinable()) thread_ = std::thread([this] { Loop(); });
  }
  changed_.notify_all();
  return done;
}

void TaskThread::Loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    changed_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and every task given ran
    Task task = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    changed_.notify_all();  // a Submit waiting for room
    task.done.set_value(task.run());
    lock.lock();
  }
}

}  // namespace basin
