// Clock: where Basin reads the time, so that tests can set it (ManualClock) and code that
// compares times (retention windows, created times) is reproducible. Milliseconds since the
// Unix epoch, UTC.
//
// Thread safety: NowMs() may be called from any thread; ManualClock may be set concurrently.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

namespace basin {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual int64_t NowMs() const = 0;
};

// The machine's wall clock. One process-wide instance; it has no state.
std::shared_ptr<const Clock> SystemClock();

// A clock that stands still until told to move.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(int64_t now_ms) : now_ms_(now_ms) {}
  int64_t NowMs() const override { return now_ms_.load(std::memory_order_relaxed); }
  void SetMs(int64_t now_ms) { now_ms_.store(now_ms, std::memory_order_relaxed); }
  void AdvanceMs(int64_t delta_ms) { now_ms_.fetch_add(delta_ms, std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> now_ms_;
};

}  // namespace basin
