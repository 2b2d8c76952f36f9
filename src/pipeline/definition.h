// A pipeline's definition: the datasets and flows that a folder of `.sql` files declares, in
// the spelling of Lakeflow Declarative Pipelines (docs/pipelines.md):
//
//   CREATE OR REFRESH STREAMING TABLE bronze AS SELECT * FROM STREAM read_kafka(...);
//   CREATE OR REFRESH MATERIALIZED VIEW gold AS SELECT region, count(*) FROM bronze GROUP BY ALL;
//   CREATE STREAMING TABLE all_payments;
//   CREATE FLOW eu AS INSERT INTO all_payments BY NAME SELECT * FROM STREAM(eu_payments);
//   CREATE FLOW history AS INSERT INTO ONCE all_payments BY NAME SELECT * FROM archive;
//   CREATE TEMPORARY VIEW eu AS SELECT * FROM all_payments WHERE region = 'eu';
//
// Every statement is read by Basin's grammar (sql/grammar/), its queries by DuckDB's parser;
// what a query reads comes from DuckDB's syntax tree (engine/table_refs.h). An optional
// `pipeline.json` names the pipeline, the schema its datasets live in, and configuration
// values that `${name}` in the SQL files stands for.
//
// Thread safety: values; LoadPipeline is a function of its arguments.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "basin/object_store.h"
#include "basin/status.h"
#include "engine/sql_text.h"
#include "sql/grammar/statement.h"

namespace basin::pipeline {

// Where a statement was written: "silver.sql:12".
struct SourcePlace {
  std::string file;
  int64_t line = 0;
  std::string Describe() const { return file + ":" + std::to_string(line); }
};

enum class DatasetKind { kStreamingTable, kMaterializedView, kTemporaryView };
// "streaming table", "materialized view", "temporary view"
const char* DatasetKindName(DatasetKind kind);

struct Dataset {
  std::string name;  // as written, unqualified: the pipeline's schema holds it
  DatasetKind kind = DatasetKind::kStreamingTable;
  sql::grammar::PipelineTable table;  // columns, constraints, expectations, properties
  SourcePlace place;
};

enum class FlowKind {
  kStream,     // micro-batches of the query's STREAM sources appended to the target
  kRecompute,  // a materialized view's query, run whole into it
  kOnce,       // INSERT INTO ONCE: the query appended once in the pipeline's life
  kAutoCdc,    // AUTO CDC INTO: the source's changes applied by key (stream/cdc.h)
  kView,       // a temporary view's query, defined in the run's session (no table)
};
// "stream", "recompute", "once", "auto cdc", "view"
const char* FlowKindName(FlowKind kind);
// "warn", "drop row", "fail update", "quarantine"
const char* ExpectationActionName(sql::grammar::Expectation::OnViolation action);

struct Flow {
  std::string name;    // a dataset's own flow bears the dataset's name
  std::string target;  // the dataset it writes, as its name is written
  FlowKind kind = FlowKind::kStream;
  sql::grammar::Query query;  // empty for AUTO CDC
  std::optional<sql::grammar::AutoCdcFlow> cdc;
  // The tables the flow reads (its query's, engine::TablesReadBy; AUTO CDC's source).
  std::vector<engine::SqlTableName> reads;
  SourcePlace place;
};

struct PipelineSettings {
  std::string name;                                  // the pipeline's; default: the folder's name
  std::string schema = "default";                    // where its datasets are
  std::map<std::string, std::string> configuration;  // what ${name} stands for
  // Continuous runs: the least time between the starts of two passes over the flows
  // ("trigger_interval": "10 seconds", "500 milliseconds").
  int64_t trigger_interval_ms = 1'000;
  // At most this many datasets that do not read each other run at the same time ("parallelism").
  int parallelism = 2;
};

struct PipelineDefinition {
  PipelineSettings settings;
  std::vector<Dataset> datasets;  // in the order declared
  std::vector<Flow> flows;        // in the order declared
};

// Reads `folder`: every object whose key ends in ".sql", in key order, and `pipeline.json`
// when present (`folder_name` names the pipeline when it does not). InvalidArgument naming
// the file and line for a statement that is not a pipeline's, a syntax error, a `${name}`
// without a value, a dataset declared twice, a flow into a name no streaming table has, a
// streaming table with neither a query nor a flow, a streaming flow reading no STREAM
// source, a materialized view reading one; NotFound when the folder holds no `.sql` file.
Result<PipelineDefinition> LoadPipeline(ObjectStore& folder, const std::string& folder_name);

// The dataset named `name` (case-insensitive, as DuckDB compares names); null for none.
const Dataset* FindDataset(const PipelineDefinition& pipeline, const std::string& name);
// The dataset a table a flow reads is: one named so, when the name is unqualified or
// qualified by the pipeline's schema; null for a table outside the pipeline.
const Dataset* DatasetRead(const PipelineDefinition& pipeline, const engine::SqlTableName& name);

}  // namespace basin::pipeline
