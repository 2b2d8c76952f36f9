// Pipeline: a folder of `.sql` files declaring streaming tables, materialized views and flows
// in the spelling of Lakeflow Declarative Pipelines, run as one unit (docs/pipelines.md):
//
//   CREATE OR REFRESH STREAMING TABLE bronze AS
//   SELECT * FROM STREAM read_kafka(bootstrapServers => '${kafka}', subscribe => 'payments', ...);
//   CREATE OR REFRESH MATERIALIZED VIEW gold AS SELECT region, count(*) AS n FROM bronze GROUP BY ALL;
//
// Basin reads every statement with its grammar and DuckDB's parser, builds the dependency
// graph from the tables each query reads, refuses cycles and unknown names naming the file
// and line, and runs the datasets in that order: streaming tables as exactly-once streams
// whose checkpoints live in the warehouse (`_pipelines/<name>/`), materialized views
// refreshed incrementally when their queries allow it and recomputed otherwise.
//
// Thread safety: Run() on one thread; Stop() from any thread while it runs.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "basin/session.h"
#include "basin/status.h"

namespace basin {

// One dataset of a pipeline's graph.
struct PipelineDataset {
  std::string name;
  std::string kind;                   // "streaming table" or "materialized view"
  std::string place;                  // where it is declared: "silver.sql:3"
  std::vector<std::string> flows;     // "name (stream)", "backfill (once)", ...
  std::vector<std::string> reads;     // datasets of the pipeline it reads
  std::vector<std::string> external;  // tables outside the pipeline it reads, "schema.table"
};

struct PipelineGraph {
  std::string name;
  std::string schema;                     // where the datasets are
  std::string event_log;                  // its event log table, "schema.<name>_event_log"
  std::vector<PipelineDataset> datasets;  // in run order: each after those it reads
  // The graph as text, Graphviz dot and JSON (basin pipeline graph --format).
  std::string text, dot, json;
};

// The graph of the pipeline in `folder`. InvalidArgument naming the file and line for a bad
// statement, a dataset declared twice, a flow into no streaming table, a cycle; NotFound
// when the folder holds no .sql file.
Result<PipelineGraph> ReadPipelineGraph(const std::string& folder);

struct PipelineOptions {
  std::string folder;     // the pipeline's .sql files (and pipeline.json)
  std::string warehouse;  // as SessionOptions::warehouse
  bool full_refresh_all = false;
  // Datasets recomputed from their sources: their tables dropped, streaming tables' sources
  // read again from the start.
  std::vector<std::string> full_refresh;
  // Run() keeps running the flows, a pass over them starting at most every `interval_ms`
  // (negative: pipeline.json's "trigger_interval", 1 s by default), until Stop().
  bool continuous = false;
  int64_t interval_ms = -1;
  // The warehouse user every statement of the pipeline runs as, under its grants
  // (SessionOptions::user): creating its tables needs CREATE on the pipeline's schema, a
  // flow's reads SELECT on its sources. Empty: the process's rights, unchecked.
  std::string user = {};
  // The table snapshots the pipeline's sessions read through (SessionOptions::tables); null:
  // a cache of their own.
  std::shared_ptr<TableCache> tables = nullptr;
};

// How the rows a flow wrote fared against one expectation of its table.
struct PipelineExpectationRun {
  std::string name;
  std::string on_violation;  // "warn", "drop row", "fail update", "quarantine"
  int64_t failed_rows = 0;
};

// What one flow did in a run.
struct PipelineFlowRun {
  std::string flow;
  std::string target;  // "schema.table"
  std::string kind;    // "stream", "recompute", "once"
  int64_t batches = 0;
  int64_t rows_in = 0;
  int64_t rows_written = 0;
  int64_t dead_letters = 0;
  int64_t rows_checked = 0;  // against the table's expectations
  std::vector<PipelineExpectationRun> expectations;
  int64_t quarantined = 0;  // rows put in <table>_quarantine
  int64_t duration_ms = 0;
  std::string note;
  // Materialized views: "incremental", "full" or "unchanged", and why (a full refresh's
  // reason: "first refresh", "it has a WITH clause", "orders version 7 (DELETE) removed or
  // rewrote rows").
  std::string refresh;
  std::string refresh_reason;
  // Streaming flows: the records their source held beyond the last batch, when it can tell
  // (-1 when not).
  int64_t backlog = -1;
  // Streaming flows: the last batch's end-to-end latency (StreamBatch::end_to_end_ms), -1
  // when its source cannot tell.
  int64_t end_to_end_ms = -1;
};

class Pipeline {
 public:
  // Reads the pipeline and checks it against the warehouse: every table outside the pipeline
  // that a flow reads must exist (InvalidArgument naming the flow's file and line), and every
  // dataset named for a full refresh must be the pipeline's.
  static Result<std::unique_ptr<Pipeline>> Open(const PipelineOptions& options);
  ~Pipeline();
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  const PipelineGraph& graph() const;

  // Runs every flow once (triggered), in the graph's order; `on_flow` hears of each as it
  // finishes. The first failure stops the run and is returned naming the flow; what
  // committed stays, and the next run goes on from there. Continuous: pass after pass until
  // Stop(), then OK with each flow's sums (`on_flow` hears of each flow on every pass).
  // `on_progress` hears of a flow as it starts and after each of its micro-batches, with
  // what it did so far: for a live view.
  Result<std::vector<PipelineFlowRun>> Run(
      const std::function<void(const PipelineFlowRun&)>& on_flow = {},
      const std::function<void(const PipelineFlowRun&)>& on_progress = {});

  // Makes Run() return Cancelled after the batch in flight. Idempotent; any thread.
  void Stop();

 private:
  struct Impl;
  explicit Pipeline(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace basin
