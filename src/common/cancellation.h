// CancellationToken: a flag one thread raises to stop work another thread is doing, and a
// wait that ends early when it is raised. Ctrl-C reaches Basin code through one
// (engine::Connection::Interrupt() cancels the connection's token); code that blocks
// between steps, such as a commit waiting to retry, waits on it instead of sleeping.
//
// Thread safety: every method may be called from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace basin {

class CancellationToken {
 public:
  CancellationToken() = default;
  CancellationToken(const CancellationToken&) = delete;
  CancellationToken& operator=(const CancellationToken&) = delete;

  // Raises the flag and wakes every WaitFor(). Idempotent.
  void Cancel();
  // Lowers the flag, for the next piece of work (the next statement).
  void Reset();
  bool cancelled() const;

  // Waits `duration`, or less when the token is (or becomes) cancelled. Returns whether it
  // is cancelled.
  bool WaitFor(std::chrono::milliseconds duration) const;

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  bool cancelled_ = false;  // guarded by mu_
};

}  // namespace basin
