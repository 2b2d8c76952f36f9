#include "basin/clock.h"

#include <chrono>

namespace basin {

namespace {

class SystemClockImpl final : public Clock {
 public:
  int64_t NowMs() const override {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
};

}  // namespace

std::shared_ptr<const Clock> SystemClock() {
  static const std::shared_ptr<const Clock> clock = std::make_shared<SystemClockImpl>();
  return clock;
}

}  // namespace basin
