// Runs a pipeline once, triggered (docs/pipelines.md): every dataset in the graph's order,
// each after the datasets it reads.
//
// - A streaming table is created on first run (from its declared columns, or from its query's
//   columns as its STREAM sources give them), then each of its flows runs: a streaming flow
//   as a stream (stream/runner.h) with trigger available-now and its checkpoint in the
//   pipeline's state folder, `checkpoints/<flow>/`, so a run reads only what arrived since
//   the last one, exactly once across crashes; an INSERT INTO ONCE flow as one INSERT whose
//   commit carries txn(appId "pipeline <pipeline> flow <flow>", version 0), so it lands once
//   in the table's life.
// - A materialized view is refreshed incrementally when its query allows it, and recomputed
//   whole otherwise (CREATE OR REPLACE TABLE ... AS its query, one commit, its history kept;
//   pipeline/view_refresh.h); its state is in the pipeline's state folder,
//   `checkpoints/<view>/`.
// - A full refresh of a dataset drops its table and its flows' checkpoints first: a
//   streaming table then reads its sources from the start again.
// - A pipeline's tables carry the table property basin.pipeline = its name; a dataset whose
//   table exists without it (or with another pipeline's) is refused, never replaced,
//   dropped or written.
//
// - Expectations (commands/expectations.h) check every row a flow writes before it is
//   written: warn counts, DROP ROW leaves the row out, FAIL UPDATE fails the flow with nothing
//   of that batch committed, QUARANTINE puts the row in <table>_quarantine (its columns,
//   failed_expectations, batch_id, quarantined_at), committed before the batch with txn
//   (the flow's txn appId + "/quarantine", the batch id): once, whatever the re-runs.
//
// - An AUTO CDC flow is a stream too (stream/cdc.h): each batch of its source's changes is
//   applied to its table by one MERGE, type 1 or type 2, in sequence order.
//
// - Every run appends its events to the pipeline's event log (pipeline/event_log.h): its
//   start and end, lineage, each streaming batch (once, by txn) and each other flow's run,
//   expectation counts per batch, errors.
//
// - Continuous (PipelineRunOptions::continuous): the flows run pass after pass, a pass
//   starting at most every interval (pipeline.json "trigger_interval"), each streaming flow
//   reading what arrived since its last batch, until the run is stopped; the flow in flight
//   finishes its batch. Its event log holds one update for the whole run; views and ONCE
//   flows are logged after the first pass only when they wrote something.
//
// - Datasets that do not read each other (a wave of the graph: each one past the latest wave
//   of what it reads) run at the same time on sessions of their own
//   (PipelineRunOptions::parallelism); the results come in graph order.
//
// Thread safety: RunPipeline on one thread, the session's; it runs datasets on threads of
// its own, each with its own session.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "basin/clock.h"
#include "basin/object_store.h"
#include "basin/status.h"
#include "common/cancellation.h"
#include "pipeline/definition.h"
#include "pipeline/graph.h"
#include "sql/session.h"

namespace basin::pipeline {

// How the rows a flow wrote fared against one expectation of its table.
struct ExpectationRun {
  std::string name;
  sql::grammar::Expectation::OnViolation action = sql::grammar::Expectation::OnViolation::kKeep;
  int64_t failed_rows = 0;  // rows whose condition was not TRUE
};

// What one flow did in a run.
struct FlowRun {
  std::string flow;
  std::string target;  // "schema.table"
  FlowKind kind = FlowKind::kStream;
  int64_t batches = 0;       // micro-batches (streaming flows); 1 for the others when they wrote
  int64_t rows_in = 0;       // records the sources offered (streaming flows)
  int64_t rows_written = 0;  // rows the target got
  int64_t dead_letters = 0;
  int64_t rows_checked = 0;                  // rows checked against the table's expectations
  std::vector<ExpectationRun> expectations;  // the table's, in the order declared
  int64_t quarantined = 0;                   // rows put in <table>_quarantine
  int64_t duration_ms = 0;
  std::string note;  // "created the table", "loaded before: skipped", ...
  // Materialized views: how the refresh went ("incremental", "full", "unchanged"), and why
  // (pipeline/view_refresh.h).
  std::string refresh;
  std::string refresh_reason;
  std::optional<int64_t> backlog;  // streaming flows: the records the source held beyond the last batch
  // Streaming flows: the last batch's end-to-end latency (stream::EndToEndMs), when its source could tell.
  std::optional<int64_t> end_to_end_ms;
};

struct PipelineRunOptions {
  // The pipeline's state folder (checkpoints/<flow>/...), kept between runs.
  std::shared_ptr<ObjectStore> state;
  std::shared_ptr<const Clock> clock = SystemClock();
  bool full_refresh_all = false;
  std::vector<std::string> full_refresh;  // datasets to recompute from their sources
  // Continuous: pass after pass over every flow, a pass starting at most every
  // `interval_ms`, until `cancellation` is raised (then OK, with the flows' sums).
  bool continuous = false;
  int64_t interval_ms = 1'000;
  // Datasets that do not read each other run at the same time, at most `parallelism` at
  // once, each on a session `open_session` opens (on the same warehouse, with the same
  // functions registered; kept for the run). Unset, or a pipeline with temporary views
  // (defined in one session): one dataset at a time, on the run's session.
  std::function<Result<std::unique_ptr<sql::Session>>()> open_session;
  int parallelism = 2;
  // Raised: the run stops after the batch in flight, returning Cancelled. Null for none.
  const CancellationToken* cancellation = nullptr;
  // Hears of each flow once it finished (on the thread that ran it: several at once when
  // datasets run at the same time).
  std::function<void(const FlowRun&)> on_flow;
  // Hears of a flow as it starts (no batch yet) and after each of its micro-batches, with
  // what it did so far (and the source's backlog in `backlog`, when known).
  std::function<void(const FlowRun&)> on_progress;
};

// InvalidArgument naming the flow's file and line when a table a flow reads is neither a
// dataset of the pipeline nor a table of the session's warehouse (names qualified by
// another catalog are left to DuckDB).
Status CheckOutsideTables(sql::Session& session, const PipelineDefinition& pipeline);

// Runs every flow of `pipeline` once (or continuously, as `options` says), in `graph`'s order. The first
// failure stops the run and is returned with the flow's name and place; what committed before stays
// committed, and the next run goes on from there.
Result<std::vector<FlowRun>> RunPipeline(sql::Session& session, const PipelineDefinition& pipeline,
                                         const PipelineGraph& graph, const PipelineRunOptions& options);

}  // namespace basin::pipeline
