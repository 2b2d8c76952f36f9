#include "cli/query_monitor.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>

namespace basin::cli {

namespace {

// Process-wide by nature: a signal handler has nowhere else to write.
std::atomic<bool> interrupt_requested{false};
static_assert(std::atomic<bool>::is_always_lock_free);

void OnSigint(int /*signal*/) { interrupt_requested.store(true); }

constexpr int kBarWidth = 30;

}  // namespace

void InstallInterruptHandler() {
  struct sigaction action {};
  action.sa_handler = OnSigint;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGINT, &action, nullptr);
}

bool InterruptRequested() { return interrupt_requested.load(); }

void ClearInterruptRequest() { interrupt_requested.store(false); }

QueryMonitor::QueryMonitor(Session& session, MonitorOptions options)
    : session_(session), options_(options), thread_([this] { Watch(); }) {}

QueryMonitor::~QueryMonitor() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  stop_cv_.notify_one();
  thread_.join();
  if (progress_drawn_) {
    std::fputs("\r\033[2K", stderr);
    std::fflush(stderr);
  }
}

void QueryMonitor::Watch() {
  auto start = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_cv_.wait_for(lock, options_.poll_interval, [this] { return stop_; })) {
    if (InterruptRequested()) session_.Interrupt();
    auto elapsed = std::chrono::steady_clock::now() - start;
    if (options_.show_progress && elapsed >= options_.progress_delay) DrawProgress(elapsed);
  }
}

void QueryMonitor::SetPhase(const CommandProgress& progress) {
  std::string text = progress.phase;
  if (progress.total >= 0) {
    text += fmt::format(" {} of {}", progress.done, progress.total);
  } else if (progress.done > 0) {
    text += fmt::format(" {}", progress.done);
  }
  std::lock_guard<std::mutex> lock(mu_);
  phase_ = std::move(text);
}

void QueryMonitor::DrawProgress(std::chrono::steady_clock::duration elapsed) {
  double seconds = std::chrono::duration<double>(elapsed).count();
  double percent = session_.Progress();
  std::string line;
  std::string phase = phase_.empty() ? "" : phase_ + "  ";
  if (percent >= 0) {
    int filled = std::clamp(static_cast<int>(percent / 100 * kBarWidth), 0, kBarWidth);
    line = fmt::format("\r\033[2K{}[{}{}] {:3.0f}%  {:.1f} s", phase, std::string(filled, '#'),
                       std::string(kBarWidth - filled, '.'), percent, seconds);
  } else {
    line = fmt::format("\r\033[2K{}running... {:.1f} s", phase, seconds);
  }
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
  progress_drawn_ = true;
}

}  // namespace basin::cli
