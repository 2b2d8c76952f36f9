// `basin stream run`: a stream (basin/stream.h) from the command line, stopped cleanly by
// SIGINT or SIGTERM. On a terminal, stderr shows one live line (batches, rows/s in and out
// over the last 10 s, lag, the last batch's time); otherwise a line per batch.
//
// As in `basin kafka-dev`, the stop signals are blocked before any thread starts; the
// stream runs on a thread of its own while the main thread waits for a signal or for the
// stream to end, and a signal asks the stream to stop after the batch in flight.
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <deque>
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

// "500 offsets in, " for a Kafka batch; "" for a table source's, which counts no offsets.
std::string OffsetsIn(const StreamBatch& batch) {
  return batch.rows_in > 0 ? std::to_string(batch.rows_in) + " offsets in, " : std::string();
}

// ", 3 late" for rows behind a watermark; "" for none, and for streams without one.
std::string Late(int64_t late_rows) {
  return late_rows > 0 ? ", " + std::to_string(late_rows) + " late" : std::string();
}

// What stderr shows of the running stream; every write to stderr goes through it, from the
// stream's thread and the main thread.
class StreamReport {
 public:
  explicit StreamReport(bool live) : live_(live) {}

  // A message on a line of its own (after the live line, which is drawn again later).
  void Message(const std::string& text) {
    std::lock_guard<std::mutex> lock(mu_);
    if (drawn_) std::cerr << "\n";
    drawn_ = false;
    std::cerr << text << "\n" << std::flush;
  }

  // A committed batch, or (nullopt) a poll that found nothing new.
  void Batch(const std::optional<StreamBatch>& batch) {
    std::lock_guard<std::mutex> lock(mu_);
    const auto now = std::chrono::steady_clock::now();
    if (batch) {
      last_ = batch;
      window_.push_back({now, batch->rows_in, batch->rows_out});
      rows_out_ += batch->rows_out;
      dead_letters_ += batch->dead_letters;
      late_rows_ += batch->late_rows;
      if (!live_) {
        std::cerr << fmt::format("batch {}: {}{} rows out, {} dead letters{}, {} ms\n", batch->batch_id,
                                 OffsetsIn(*batch), batch->rows_out, batch->dead_letters,
                                 Late(batch->late_rows), batch->duration_ms);
        if (!batch->notice.empty()) std::cerr << batch->notice << "\n";
        return;
      }
      if (!batch->notice.empty()) {
        if (drawn_) std::cerr << "\n";
        std::cerr << batch->notice << "\n";
        drawn_ = false;
      }
    }
    if (!live_) return;
    while (!window_.empty() && now - window_.front().at > kWindow) window_.pop_front();
    int64_t in = 0, out = 0;
    for (const Seen& seen : window_) {
      in += seen.rows_in;
      out += seen.rows_out;
    }
    const double seconds = std::chrono::duration<double>(kWindow).count();
    std::string line =
        last_ ? fmt::format(
                    "batch {} | {:.0f} in/s, {:.0f} rows out/s | lag {} | last batch {} ms | {} rows out | "
                    "{} dead letters{} | table version {}",
                    last_->batch_id, static_cast<double>(in) / seconds, static_cast<double>(out) / seconds,
                    last_->lag ? std::to_string(*last_->lag) : std::string("?"), last_->duration_ms,
                    rows_out_, dead_letters_, Late(late_rows_), last_->table_version)
              : std::string("waiting for the first batch");
    if (!batch) line += " | idle";
    std::cerr << "\r\033[K" << line << std::flush;
    drawn_ = true;
  }

  void End() {
    std::lock_guard<std::mutex> lock(mu_);
    if (drawn_) std::cerr << "\n" << std::flush;
    drawn_ = false;
  }

 private:
  static constexpr std::chrono::seconds kWindow{10};
  struct Seen {
    std::chrono::steady_clock::time_point at;
    int64_t rows_in = 0;
    int64_t rows_out = 0;
  };

  const bool live_;
  std::mutex mu_;
  bool drawn_ = false;               // GUARDED_BY(mu_): the live line is on screen
  std::optional<StreamBatch> last_;  // GUARDED_BY(mu_)
  std::deque<Seen> window_;          // GUARDED_BY(mu_): batches of the last kWindow
  int64_t rows_out_ = 0;             // GUARDED_BY(mu_)
  int64_t dead_letters_ = 0;         // GUARDED_BY(mu_)
  int64_t late_rows_ = 0;            // GUARDED_BY(mu_)
};

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
      last = fmt::format(
          R"({{"batchId":{},"rowsIn":{},"rowsOut":{},"deadLetters":{},"lateRows":{},"durationMs":{},)"
          R"("committedTime":{},"tableVersion":{}}})",
          status->last_batch->batch_id, status->last_batch->rows_in, status->last_batch->rows_out,
          status->last_batch->dead_letters, status->last_batch->late_rows, status->last_batch->duration_ms,
          status->last_committed_time_ms, status->last_batch->table_version);
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
    std::cout << fmt::format(
        "batch {} is planned, its commit not recorded yet: a run is at it, or the next run finds it in the "
        "sink table or runs it again\n",
        *status->last_planned);
  }
  if (status->last_batch) {
    std::cout << fmt::format("last batch: {}{} rows out, {} dead letters{}, {} ms, table version {}\n",
                             OffsetsIn(*status->last_batch), status->last_batch->rows_out,
                             status->last_batch->dead_letters, Late(status->last_batch->late_rows),
                             status->last_batch->duration_ms, status->last_batch->table_version);
  }
  std::cout << "statement:\n" << status->statement << "\n";
  return 0;
}

int RunStreamCommand(const StreamCommandOptions& options) {
  StreamOptions stream_options;
  stream_options.warehouse = options.warehouse_dir;
  stream_options.checkpoint = options.checkpoint;
  stream_options.trigger = options.trigger;
  stream_options.user = options.user;
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
  StreamReport report(isatty(STDERR_FILENO) != 0);
  report.Message(
      fmt::format("stream {}: {} into the checkpoint {}", stream.id(), options.trigger, options.checkpoint));

  std::mutex mu;
  std::optional<Status> ended;  // GUARDED_BY(mu)
  std::thread runner([&] {
    Status status = stream.Run([&](const std::optional<StreamBatch>& batch) { report.Batch(batch); });
    std::lock_guard<std::mutex> lock(mu);
    ended = std::move(status);
  });
  int signals = 0;
  for (;;) {
    if (const std::optional<int> signal = stop_signals.Wait(std::chrono::milliseconds(100))) {
      const char* what = *signal == SIGINT ? "interrupted" : "terminated";
      if (signals++ == 0) {
        report.Message(fmt::format("stream {}: {}, stopping after the batch in flight (again to abandon it)",
                                   stream.id(), what));
        stream.Stop();
      } else {
        report.Message(
            fmt::format("stream {}: {} again, abandoning the batch in flight (the next run runs it "
                        "again)",
                        stream.id(), what));
        stream.Abandon();
      }
    }
    std::lock_guard<std::mutex> lock(mu);
    if (ended) break;
  }
  runner.join();
  report.End();
  if (!ended->ok()) return ExitStatus(*ended);
  return 0;
}

}  // namespace basin::cli
