// `basin stream run`: a stream (basin/stream.h) from the command line, with a line per
// batch on stderr, stopped cleanly by SIGINT or SIGTERM.
//
// As in `basin kafka-dev`, the stop signals are blocked before any thread starts; the
// stream runs on a thread of its own while the main thread waits for a signal or for the
// stream to end, and a signal asks the stream to stop after the batch in flight.
#include <fmt/format.h>
#include <signal.h>

#include <charconv>
#include <iostream>
#include <mutex>
#include <optional>
#include <thread>

#include "basin/stream.h"
#include "cli/command_support.h"
#include "cli/commands.h"
#include "cli/output_format.h"

namespace basin::cli {

namespace {

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

Result<std::string> StatementOf(const StreamCommandOptions& options) {
  if (!options.command.empty()) return options.command;
  if (options.file.empty())
    return Status::InvalidArgument("basin stream run needs the stream's statement: -c SQL or -f FILE");
  return ReadSqlFile(options.file);
}

}  // namespace

int RunStreamStatusCommand(const StreamStatusCommandOptions& options) {
  Result<StreamStatus> status = ReadStreamStatus(options.checkpoint);
  if (!status.ok()) return ExitStatus(status.status());
  auto batch_or_none = [](const std::optional<int64_t>& id) {
    return id ? std::to_string(*id) : std::string("none");
  };
  if (options.json) {
    std::string last = "null";
    if (status->last_batch) {
      last =
          fmt::format(R"({{"batchId":{},"rowsIn":{},"rowsOut":{},"durationMs":{},"committedTime":{}}})",
                      status->last_batch->batch_id, status->last_batch->rows_in, status->last_batch->rows_out,
                      status->last_batch->duration_ms, status->last_committed_time_ms);
    }
    auto number_or_null = [](const std::optional<int64_t>& id) {
      return id ? std::to_string(*id) : std::string("null");
    };
    std::cout
        << fmt::format(
               R"({{"streamId":{},"sink":{},"statement":{},"lastPlanned":{},"lastCommitted":{},"lastBatch":{}}})",
               JsonString(status->id), JsonString(status->sink_table), JsonString(status->statement),
               number_or_null(status->last_planned), number_or_null(status->last_committed), last)
        << "\n";
    return 0;
  }
  std::cout << fmt::format("stream {}\nsink {}\nlast planned batch {}\nlast committed batch {}\n", status->id,
                           status->sink_table, batch_or_none(status->last_planned),
                           batch_or_none(status->last_committed));
  if (status->last_planned && (!status->last_committed || *status->last_planned > *status->last_committed)) {
    std::cout << fmt::format("batch {} is planned but not committed: the next run runs it again\n",
                             *status->last_planned);
  }
  if (status->last_batch) {
    std::cout << fmt::format("last batch: {} offsets in, {} rows out, {} ms\n", status->last_batch->rows_in,
                             status->last_batch->rows_out, status->last_batch->duration_ms);
  }
  std::cout << "statement:\n" << status->statement << "\n";
  return 0;
}

int RunStreamCommand(const StreamCommandOptions& options) {
  StreamOptions stream_options;
  stream_options.warehouse = options.warehouse_dir;
  stream_options.checkpoint = options.checkpoint;
  stream_options.trigger = options.trigger;
  Result<std::string> statement = StatementOf(options);
  if (!statement.ok()) return ExitStatus(statement.status());
  stream_options.statement = *statement;
  if (!options.interval.empty()) {
    Result<int64_t> interval = ParseDurationMs(options.interval);
    if (!interval.ok()) return ExitStatus(interval.status());
    stream_options.interval_ms = *interval;
  }

  const StopSignals stop_signals;

  Result<std::unique_ptr<Stream>> opened = Stream::Open(stream_options);
  if (!opened.ok()) return ExitStatus(opened.status());
  Stream& stream = **opened;
  std::cerr << fmt::format("stream {}: {} into the checkpoint {}\n", stream.id(), options.trigger,
                           options.checkpoint);

  std::mutex mu;
  std::optional<Status> ended;  // GUARDED_BY(mu)
  std::thread runner([&] {
    Status status = stream.Run([](const std::optional<StreamBatch>& batch) {
      if (!batch) return;
      std::cerr << fmt::format("batch {}: {} offsets in, {} rows out, {} ms\n", batch->batch_id,
                               batch->rows_in, batch->rows_out, batch->duration_ms);
    });
    std::lock_guard<std::mutex> lock(mu);
    ended = std::move(status);
  });
  for (;;) {
    if (const std::optional<int> signal = stop_signals.Wait(std::chrono::milliseconds(100))) {
      std::cerr << fmt::format("stream {}: {}, stopping after the batch in flight\n", stream.id(),
                               *signal == SIGINT ? "interrupted" : "terminated");
      stream.Stop();
    }
    std::lock_guard<std::mutex> lock(mu);
    if (ended) break;
  }
  runner.join();
  if (!ended->ok()) return ExitStatus(*ended);
  return 0;
}

}  // namespace basin::cli
