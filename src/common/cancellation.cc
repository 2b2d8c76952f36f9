#include "common/cancellation.h"

namespace basin {

void CancellationToken::Cancel() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    cancelled_ = true;
  }
  cv_.notify_all();
}

void CancellationToken::Reset() {
  std::lock_guard<std::mutex> lock(mu_);
  cancelled_ = false;
}

bool CancellationToken::cancelled() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cancelled_;
}

bool CancellationToken::WaitFor(std::chrono::milliseconds duration) const {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, duration, [this] { return cancelled_; });
}

}  // namespace basin
