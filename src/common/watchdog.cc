#include "common/watchdog.h"

namespace basin {

Watchdog::Watchdog(std::function<void()> on_expiry) : on_expiry_(std::move(on_expiry)) {}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

uint64_t Watchdog::Arm(std::chrono::milliseconds timeout) {
  std::lock_guard<std::mutex> lock(mu_);
  deadline_ = std::chrono::steady_clock::now() + timeout;
  if (!thread_.joinable()) thread_ = std::thread([this] { Run(); });
  changed_.notify_all();
  return ++armed_;
}

void Watchdog::Disarm(uint64_t number) {
  std::lock_guard<std::mutex> lock(mu_);
  if (number == armed_) deadline_.reset();
}

bool Watchdog::expired(uint64_t number) const {
  std::lock_guard<std::mutex> lock(mu_);
  return number != 0 && expired_ == number;
}

void Watchdog::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    if (!deadline_) {
      changed_.wait(lock);
      continue;
    }
    if (changed_.wait_until(lock, *deadline_) == std::cv_status::timeout && deadline_ &&
        std::chrono::steady_clock::now() >= *deadline_) {
      deadline_.reset();
      expired_ = armed_;
      on_expiry_();
    }
  }
}

}  // namespace basin
