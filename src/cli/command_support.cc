#include "cli/command_support.h"

#include <pthread.h>

#include <fstream>
#include <sstream>

namespace basin::cli {

Result<std::string> ReadSqlFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("cannot open SQL file '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::IOError("cannot read SQL file '" + path + "'");
  return text.str();
}

StopSignals::StopSignals() {
  sigemptyset(&signals_);
  sigaddset(&signals_, SIGINT);
  sigaddset(&signals_, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals_, nullptr);
}

std::optional<int> StopSignals::Wait(std::chrono::milliseconds timeout) const {
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(timeout);
  const timespec wait{static_cast<time_t>(seconds.count()),
                      static_cast<long>(std::chrono::nanoseconds(timeout - seconds).count())};
  const int signal = sigtimedwait(&signals_, nullptr, &wait);
  if (signal < 0) return std::nullopt;
  return signal;
}

}  // namespace basin::cli
