// What several `basin` subcommands share: reading a file of SQL, and waiting for the stop
// signals (SIGINT, SIGTERM) in ordinary code rather than in a handler.
//
// Thread safety: StopSignals must be made on the main thread before any other thread starts
// (threads inherit the blocked mask, so the signals wait for Wait()); Wait() on that thread.
#pragma once

#include <signal.h>

#include <chrono>
#include <optional>
#include <string>

#include "basin/status.h"

namespace basin::cli {

// The text of `path`. NotFound when it cannot be opened, IOError when reading fails.
Result<std::string> ReadSqlFile(const std::string& path);

// Blocks SIGINT and SIGTERM for this thread and the threads it starts from now on.
class StopSignals {
 public:
  StopSignals();
  // The stop signal that arrived within `timeout` (SIGINT or SIGTERM), nullopt when none did.
  std::optional<int> Wait(std::chrono::milliseconds timeout) const;

 private:
  sigset_t signals_;
};

// An --interval: "500ms", "2s", "1m", or a plain number of seconds, in milliseconds.
Result<int64_t> ParseDurationMs(const std::string& text);

}  // namespace basin::cli
