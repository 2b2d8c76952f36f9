// basin pipeline validate | graph | run: a folder of pipeline SQL (basin/pipeline.h). A run
// goes on a thread of its own while the main thread waits for it or for SIGINT/SIGTERM,
// which stop it after the batch in flight.
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "basin/pipeline.h"
#include "cli/command_support.h"
#include "cli/commands.h"
#include "cli/output_format.h"

namespace basin::cli {

namespace {

std::string Joined(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

// What `basin pipeline run` prints on stderr: a line per flow as it finishes (in continuous
// runs, after the first pass, only for flows that wrote something) with its expectations, and
// on a terminal a live line for the flow running (its batches so far, rows, backlog, time).
// Thread safety: any thread.
class PipelineReport {
 public:
  explicit PipelineReport(bool live) : live_(live) {}

  // The flow running, as it starts and after each batch.
  void Progress(const PipelineFlowRun& flow) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!running_ || running_->flow != flow.flow) started_ = std::chrono::steady_clock::now();
    running_ = flow;
    DrawLocked();
  }

  void Finished(const PipelineFlowRun& flow) {
    std::lock_guard<std::mutex> lock(mu_);
    running_.reset();
    if (!seen_.insert(flow.flow).second) first_pass_ = false;
    if (!first_pass_ && flow.batches == 0) {
      DrawLocked();
      return;
    }
    ClearLocked();
    std::cerr << fmt::format("  flow {} ({}) -> {}: {} batch(es), {} rows written{}{} in {} ms\n", flow.flow,
                             flow.kind, flow.target, flow.batches, flow.rows_written,
                             flow.dead_letters > 0 ? fmt::format(", {} dead letters", flow.dead_letters) : "",
                             flow.note.empty() ? "" : " (" + flow.note + ")", flow.duration_ms);
    for (const PipelineExpectationRun& expectation : flow.expectations) {
      std::cerr << fmt::format("    expectation {} ({}): {} of {} rows failed{}\n", expectation.name,
                               expectation.on_violation, expectation.failed_rows, flow.rows_checked,
                               expectation.on_violation == "quarantine" && expectation.failed_rows > 0
                                   ? fmt::format(" ({} rows quarantined in all)", flow.quarantined)
                                   : "");
    }
  }

  // A line of its own (empty: just clears the live line).
  void Say(const std::string& line) {
    std::lock_guard<std::mutex> lock(mu_);
    ClearLocked();
    if (!line.empty()) std::cerr << line << "\n";
  }

  // The live line again, its time moving on.
  void Redraw() {
    std::lock_guard<std::mutex> lock(mu_);
    DrawLocked();
  }

 private:
  void ClearLocked() {
    if (live_ && drawn_) std::cerr << "\r\033[K" << std::flush;
    drawn_ = false;
  }

  void DrawLocked() {
    if (!live_ || !running_) return;
    const PipelineFlowRun& flow = *running_;
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    std::string line = fmt::format("  > flow {} ({}): ", flow.flow, flow.kind);
    if (flow.batches > 0) {
      line +=
          fmt::format("{} batch(es), {} rows in, {} written", flow.batches, flow.rows_in, flow.rows_written);
      if (flow.backlog >= 0) line += fmt::format(", backlog {}", flow.backlog);
      if (flow.dead_letters > 0) line += fmt::format(", {} dead letters", flow.dead_letters);
      line += ", ";
    }
    line += fmt::format("{:.1f} s", seconds);
    std::cerr << "\r\033[K" << line << std::flush;
    drawn_ = true;
  }

  const bool live_;
  std::mutex mu_;
  std::optional<PipelineFlowRun> running_;  // GUARDED_BY(mu_)
  std::chrono::steady_clock::time_point started_;
  std::set<std::string> seen_;  // flows finished once: a second time is a later pass
  bool first_pass_ = true;
  bool drawn_ = false;  // a live line is on the terminal
};

}  // namespace

int RunPipelineGraphCommand(const PipelineGraphCommandOptions& options) {
  if (!options.warehouse_dir.empty()) {
    // Checked against the warehouse too: the tables it reads from outside must be there.
    PipelineOptions open;
    open.folder = options.folder;
    open.warehouse = options.warehouse_dir;
    Result<std::unique_ptr<Pipeline>> opened = Pipeline::Open(open);
    if (!opened.ok()) return ExitStatus(opened.status());
  }
  Result<PipelineGraph> graph = ReadPipelineGraph(options.folder);
  if (!graph.ok()) return ExitStatus(graph.status());
  if (options.format == "dot") {
    std::cout << graph->dot;
  } else if (options.format == "json") {
    std::cout << graph->json;
  } else if (options.validate_only) {
    std::cout << fmt::format("pipeline {} is valid: {} datasets, in this order: ", graph->name,
                             graph->datasets.size());
    std::vector<std::string> names;
    for (const PipelineDataset& dataset : graph->datasets) names.push_back(dataset.name);
    std::cout << Joined(names) << "\n";
  } else {
    std::cout << graph->text;
  }
  return 0;
}

int RunPipelineRunCommand(const PipelineRunCommandOptions& options) {
  PipelineOptions open;
  open.folder = options.folder;
  open.warehouse = options.warehouse_dir;
  if (options.full_refresh) {
    if (options.full_refresh->empty()) {
      open.full_refresh_all = true;
    } else {
      open.full_refresh = *options.full_refresh;
    }
  }
  open.continuous = options.continuous;
  open.user = options.user;
  if (!options.interval.empty()) {
    Result<int64_t> interval = ParseDurationMs(options.interval);
    if (!interval.ok()) return ExitStatus(interval.status());
    open.interval_ms = *interval;
  }
  const StopSignals stop_signals;
  Result<std::unique_ptr<Pipeline>> opened = Pipeline::Open(open);
  if (!opened.ok()) return ExitStatus(opened.status());
  Pipeline& pipeline = **opened;
  std::cerr << fmt::format("pipeline {}: {} datasets, {}{}\n", pipeline.graph().name,
                           pipeline.graph().datasets.size(), open.continuous ? "continuous" : "triggered",
                           open.full_refresh_all       ? ", full refresh"
                           : open.full_refresh.empty() ? ""
                                                       : ", full refresh of " + Joined(open.full_refresh));
  PipelineReport report(isatty(STDERR_FILENO) != 0);
  std::mutex mu;
  std::optional<Result<std::vector<PipelineFlowRun>>> ended;  // GUARDED_BY(mu)
  const auto started = std::chrono::steady_clock::now();
  std::thread runner([&] {
    Result<std::vector<PipelineFlowRun>> result =
        pipeline.Run([&](const PipelineFlowRun& flow) { report.Finished(flow); },
                     [&](const PipelineFlowRun& flow) { report.Progress(flow); });
    std::lock_guard<std::mutex> lock(mu);
    ended = std::move(result);
  });
  for (;;) {
    if (const std::optional<int> signal = stop_signals.Wait(std::chrono::milliseconds(100))) {
      report.Say(fmt::format("pipeline {}: {}, stopping after the batch in flight", pipeline.graph().name,
                             *signal == SIGINT ? "interrupted" : "terminated"));
      pipeline.Stop();
    }
    report.Redraw();
    std::lock_guard<std::mutex> lock(mu);
    if (ended) break;
  }
  runner.join();
  report.Say("");
  if (!ended->ok()) return ExitStatus(ended->status());
  int64_t rows = 0, dead_letters = 0, quarantined = 0, failed = 0;
  for (const PipelineFlowRun& flow : **ended) {
    rows += flow.rows_written;
    dead_letters += flow.dead_letters;
    quarantined += flow.quarantined;
    for (const PipelineExpectationRun& expectation : flow.expectations) failed += expectation.failed_rows;
  }
  std::cout << fmt::format(
      "pipeline {}: {} flows ran in {:.1f} s, {} rows written, {} dead letters, {} rows failed expectations "
      "({} "
      "quarantined); events in {}.{}_event_log\n",
      pipeline.graph().name, (*ended)->size(),
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(), rows, dead_letters,
      failed, quarantined, pipeline.graph().schema, pipeline.graph().name);
  return 0;
}

}  // namespace basin::cli
