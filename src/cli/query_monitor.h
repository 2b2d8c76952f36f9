// Watching a running query from the side: Ctrl-C becomes Session::Interrupt() (which also
// stops a commit waiting to retry),
// and a query that runs for more than a second gets a progress line on stderr.
//
// SIGINT only sets a flag (the one thing a signal handler may safely do); the monitor's
// thread polls it and interrupts the connection, re-issuing the interrupt until the query
// ends, because a Basin statement may run several DuckDB queries in a row.
//
// Thread safety: a QueryMonitor is owned by the thread running the query; its helper
// thread only calls the Session's thread-safe Interrupt() and Progress().
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "basin/session.h"

namespace basin::cli {

// Installs a SIGINT handler that records the request instead of ending the process.
void InstallInterruptHandler();
// Whether Ctrl-C was pressed since the last ClearInterruptRequest().
bool InterruptRequested();
void ClearInterruptRequest();

struct MonitorOptions {
  bool show_progress = false;  // draw on stderr (only sensible when it is a terminal)
  std::chrono::milliseconds progress_delay{1000};
  std::chrono::milliseconds poll_interval{100};
};

// Watches from construction to destruction; the destructor stops the thread and erases the
// progress line, so results printed afterwards start on a clean line.
class QueryMonitor {
 public:
  QueryMonitor(Session& session, MonitorOptions options);
  ~QueryMonitor();
  QueryMonitor(const QueryMonitor&) = delete;
  QueryMonitor& operator=(const QueryMonitor&) = delete;

  // What a long Basin command is doing ("writing 3 of 10"), shown before DuckDB's bar.
  void SetPhase(const CommandProgress& progress);

 private:
  void Watch();
  void DrawProgress(std::chrono::steady_clock::duration elapsed);

  Session& session_;
  const MonitorOptions options_;
  bool progress_drawn_ = false;  // touched only by the watching thread, then by the destructor after join
  std::mutex mu_;
  std::condition_variable stop_cv_;
  bool stop_ = false;  // guarded by mu_
  std::string phase_;  // guarded by mu_
  std::thread thread_;
};

}  // namespace basin::cli
