// Watchdog: calls a function once a deadline passes, unless the deadline is cleared first;
// what stops a statement that runs past its timeout. Its thread starts with the first
// deadline and ends with the Watchdog, so a session that never sets one costs nothing.
//
// Thread safety: every method may be called from any thread. `on_expiry` runs on the
// watchdog's thread with its lock held: it must be quick and must not call the Watchdog.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

namespace basin {

class Watchdog {
 public:
  explicit Watchdog(std::function<void()> on_expiry);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // Sets a deadline `timeout` from now, replacing any other, and returns its number, by
  // which Disarm() and expired() name it.
  uint64_t Arm(std::chrono::milliseconds timeout);
  // Clears deadline `number` if it is still the one set. After it returns, on_expiry does
  // not run for it.
  void Disarm(uint64_t number);
  // Whether on_expiry ran for deadline `number`.
  bool expired(uint64_t number) const;

 private:
  void Run();

  const std::function<void()> on_expiry_;
  mutable std::mutex mu_;
  std::condition_variable changed_;
  uint64_t armed_ = 0;  // GUARDED_BY(mu_): the number of the last deadline set
  std::optional<std::chrono::steady_clock::time_point> deadline_;  // GUARDED_BY(mu_)
  uint64_t expired_ = 0;   // GUARDED_BY(mu_): the number of the last deadline that passed
  bool stopping_ = false;  // GUARDED_BY(mu_)
  std::thread thread_;     // started by the first Arm()
};

}  // namespace basin
