#include "cli/command_support.h"

#include <pthread.h>

#include <charconv>
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

// "500ms", "2s", "1m", or a plain number of seconds.
Result<int64_t> ParseDurationMs(const std::string& text) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [rest, error] = std::from_chars(text.data(), end, value);
  const std::string_view unit(rest, static_cast<size_t>(end - rest));
  if (error != std::errc() || value < 0) {
    return Status::InvalidArgument("--interval: '" + text + "' is not a duration (500ms, 2s, 1m)");
  }
  if (unit == "ms") return value;
  if (unit.empty() || unit == "s") return value * 1000;
  if (unit == "m") return value * 60'000;
  return Status::InvalidArgument("--interval: '" + text + "' is not a duration (500ms, 2s, 1m)");
}

}  // namespace basin::cli
