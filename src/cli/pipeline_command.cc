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
  std::mutex mu;
  std::optional<Result<std::vector<PipelineFlowRun>>> ended;  // GUARDED_BY(mu)
  std::thread runner([&] {
    bool first_pass = true;  // continuous: later passes print only the flows that wrote
    std::set<std::string> seen;
    Result<std::vector<PipelineFlowRun>> result = pipeline.Run([&](const PipelineFlowRun& flow) {
      if (!seen.insert(flow.flow).second) first_pass = false;
      if (!first_pass && flow.batches == 0) return;
      std::cerr << fmt::format(
          "  flow {} ({}) -> {}: {} batch(es), {} rows written{}{} in {} ms\n", flow.flow, flow.kind,
          flow.target, flow.batches, flow.rows_written,
          flow.dead_letters > 0 ? fmt::format(", {} dead letters", flow.dead_letters) : "",
          flow.note.empty() ? "" : " (" + flow.note + ")", flow.duration_ms);
      for (const PipelineExpectationRun& expectation : flow.expectations) {
        std::cerr << fmt::format("    expectation {} ({}): {} of {} rows failed{}\n", expectation.name,
                                 expectation.on_violation, expectation.failed_rows, flow.rows_checked,
                                 expectation.on_violation == "quarantine" && expectation.failed_rows > 0
                                     ? fmt::format(" ({} rows quarantined in all)", flow.quarantined)
                                     : "");
      }
    });
    std::lock_guard<std::mutex> lock(mu);
    ended = std::move(result);
  });
  for (;;) {
    if (const std::optional<int> signal = stop_signals.Wait(std::chrono::milliseconds(100))) {
      std::cerr << fmt::format("pipeline {}: {}, stopping after the batch in flight\n", pipeline.graph().name,
                               *signal == SIGINT ? "interrupted" : "terminated");
      pipeline.Stop();
    }
    std::lock_guard<std::mutex> lock(mu);
    if (ended) break;
  }
  runner.join();
  if (!ended->ok()) return ExitStatus(ended->status());
  int64_t rows = 0;
  for (const PipelineFlowRun& flow : **ended) rows += flow.rows_written;
  std::cout << fmt::format("pipeline {}: {} flows ran, {} rows written\n", pipeline.graph().name,
                           (*ended)->size(), rows);
  return 0;
}

}  // namespace basin::cli
