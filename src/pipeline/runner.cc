#include "pipeline/runner.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include "commands/expectations.h"
#include "common/strings.h"
#include "common/uuid.h"
#include "delta/checkpoint_writer.h"
#include "engine/parquet_writer.h"
#include "pipeline/event_log.h"
#include "pipeline/view_refresh.h"
#include "sql/grammar/parse.h"
#include "sql/statements.h"
#include "storage/prefixed_object_store.h"
#include "stream/runner.h"
#include "stream/source.h"

namespace basin::pipeline {

namespace {

// The table property naming the pipeline a table belongs to: a pipeline creates its tables
// with it, and refuses to replace, drop or write a table it does not own.
constexpr char kOwnerProperty[] = "basin.pipeline";
// How long an AUTO CDC target's state keeps a deleted key (stream/cdc.h): a duration.
constexpr char kTombstoneRetentionProperty[] = "basin.cdc.tombstoneRetention";

int64_t MillisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start)
      .count();
}

class Run {
 public:
  Run(sql::Session& session, const PipelineDefinition& pipeline, const PipelineRunOptions& options)
      : session_(session), pipeline_(pipeline), options_(options) {}

  // Where the flows' events go from now on.
  void LogTo(EventLog* log) { log_ = log; }
  // The run's first pass is over: from now on, a view or a ONCE flow is logged only when it
  // wrote something, and the datasets to refresh fully were refreshed (not again each pass).
  void PastFirstPass() { past_first_pass_ = true; }

  // The run waits before its next pass: the kept streams let go of what they keep only for
  // a batch that follows at once (stream::StreamRunner::Idle).
  void Idle() {
    for (auto& [name, stream] : streams_) stream->Idle();
  }

  Status RunDataset(const GraphNode& node, std::vector<FlowRun>& out) {
    const pipeline::Dataset& dataset = pipeline_.datasets[node.dataset];
    const std::string where =
        dataset.place.Describe() + ": " + DatasetKindName(dataset.kind) + " " + dataset.name;
    if (!past_first_pass_ && RefreshesFully(dataset)) {
      RETURN_IF_ERROR(Forget(dataset, node).WithContext(where));
    }
    for (size_t f : node.flows) {
      const pipeline::Flow& flow = pipeline_.flows[f];
      if (options_.cancellation != nullptr && options_.cancellation->cancelled()) {
        return Status::Cancelled("the pipeline run was stopped before flow " + flow.name);
      }
      const auto started = std::chrono::steady_clock::now();
      FlowRun run;
      run.flow = flow.name;
      run.target = TableOf(dataset).schema + "." + dataset.name;
      run.kind = flow.kind;
      if (options_.on_progress) options_.on_progress(run);
      Status ran = RunFlow(dataset, flow, run);
      run.duration_ms = MillisecondsSince(started);
      if (!ran.ok()) {
        ran = ran.WithContext(flow.place.Describe() + ": flow " + flow.name);
        Event error = FlowEvent("error", run);
        error.level = "ERROR";
        error.message = ran.ToString();
        Status logged = log_->Append({error});
        return logged.ok() ? ran : ran.WithContext("(and the event log failed: " + logged.ToString() + ")");
      }
      const bool wrote = run.batches > 0 && run.refresh != "unchanged";
      if (flow.kind != FlowKind::kStream && flow.kind != FlowKind::kAutoCdc && (wrote || !past_first_pass_)) {
        Event progress = FlowEvent("flow_progress", run);
        progress.rows_written = run.rows_written;
        progress.quarantined = run.quarantined;
        progress.duration_ms = run.duration_ms;
        progress.refresh = run.refresh;
        progress.message = run.note;
        RETURN_IF_ERROR(log_->Append({progress}));
      }
      if (options_.on_flow) options_.on_flow(run);
      out.push_back(std::move(run));
    }
    return Status::OK();
  }

  // InvalidArgument naming the flow's file and line when a streaming or ONCE flow of `node`
  // writes a column its streaming table lacks: the table's declared columns, else those it
  // has, else those its first flow creates it with. Before anything runs, so that no flow
  // commits in a run another cannot finish; a flow whose query cannot be described yet (it
  // reads a dataset this run creates) is left to its run.
  Status CheckColumns(const GraphNode& node) {
    const pipeline::Dataset& dataset = pipeline_.datasets[node.dataset];
    if (dataset.kind != DatasetKind::kStreamingTable) return Status::OK();
    std::vector<std::string> columns;  // the table's
    for (const delta::StructField& field : dataset.table.columns) columns.push_back(field.name);
    if (columns.empty()) {
      ASSIGN_OR_RETURN(std::optional<catalog::TableEntry> existing,
                       sql::LookupTarget(session_.context(), TableOf(dataset)));
      if (existing) {
        ASSIGN_OR_RETURN(auto snapshot, session_.context().LoadTable(existing->location));
        for (const delta::StructField& field : snapshot->schema.fields) columns.push_back(field.name);
      }
    }
    const bool from_first_flow = columns.empty();
    if (from_first_flow && node.flows.size() < 2) return Status::OK();  // nothing to compare
    for (size_t f : node.flows) {
      const pipeline::Flow& flow = pipeline_.flows[f];
      if (flow.kind != FlowKind::kStream && flow.kind != FlowKind::kOnce) continue;
      const std::string where = flow.place.Describe() + ": flow " + flow.name;
      Result<std::vector<engine::ColumnType>> described =
          flow.kind == FlowKind::kStream ? stream::DescribeStreamQuery(session_, flow.query)
                                         : session_.connection().DescribeQuery(flow.query.sql);
      // A query over a dataset this run creates first cannot be described yet: its run says.
      if (!described.ok()) continue;
      if (columns.empty()) {
        for (const engine::ColumnType& column : *described) columns.push_back(column.name);
        continue;
      }
      for (const engine::ColumnType& column : *described) {
        const bool known = std::any_of(columns.begin(), columns.end(), [&](const std::string& name) {
          return EqualsIgnoreCase(name, column.name);
        });
        if (known) continue;
        return Status::InvalidArgument(where + " writes column " + column.name + ", which streaming table " +
                                       dataset.name + " (" + dataset.place.Describe() +
                                       ") does not have; its columns" +
                                       (from_first_flow ? " (from its first flow's query)" : "") + ": " +
                                       fmt::format("{}", fmt::join(columns, ", ")));
      }
    }
    return Status::OK();
  }

  // InvalidArgument when the dataset's table exists and another pipeline, or none, made it.
  // RunPipeline checks every dataset before anything runs; what runs then only asks Exists().
  Status CheckOwned(const pipeline::Dataset& dataset) {
    if (dataset.kind == DatasetKind::kTemporaryView) return Status::OK();  // no table
    ASSIGN_OR_RETURN(std::optional<catalog::TableEntry> existing,
                     sql::LookupTarget(session_.context(), TableOf(dataset)));
    if (!existing) return Status::OK();
    ASSIGN_OR_RETURN(auto snapshot, session_.context().LoadTable(existing->location));
    const auto& configuration = snapshot->metadata.configuration;
    auto owner = configuration.find(kOwnerProperty);
    if (owner != configuration.end() && owner->second == pipeline_.settings.name) return Status::OK();
    return Status::InvalidArgument(
        "table " + pipeline_.settings.schema + "." + dataset.name + " exists and " +
        (owner == configuration.end() ? std::string("no pipeline made it")
                                      : "pipeline " + owner->second + " made it") +
        " (its property " + kOwnerProperty + "): a pipeline writes only the tables it creates; rename the " +
        std::string(DatasetKindName(dataset.kind)) + " or drop the table");
  }

 private:
  Result<bool> Exists(const pipeline::Dataset& dataset) {
    ASSIGN_OR_RETURN(std::optional<catalog::TableEntry> existing,
                     sql::LookupTarget(session_.context(), TableOf(dataset)));
    return existing.has_value();
  }

  engine::SqlTableName TableOf(const pipeline::Dataset& dataset) const {
    return {"", pipeline_.settings.schema, dataset.name};
  }
  std::string QuotedName(const pipeline::Dataset& dataset) const {
    return QuoteIdentifier(pipeline_.settings.schema) + "." + QuoteIdentifier(dataset.name);
  }

  bool RefreshesFully(const pipeline::Dataset& dataset) const {
    if (options_.full_refresh_all) return true;
    for (const std::string& name : options_.full_refresh) {
      if (EqualsIgnoreCase(name, dataset.name)) return true;
    }
    return false;
  }

  // A full refresh: the table and its flows' checkpoints go, to be made again.
  Status Forget(const pipeline::Dataset& dataset, const GraphNode& node) {
    if (dataset.kind == DatasetKind::kTemporaryView) return Status::OK();  // no table, no state
    ASSIGN_OR_RETURN(bool exists, Exists(dataset));
    if (!exists) return Status::OK();
    sql::grammar::DropTable drop;
    drop.if_exists = true;
    drop.name = {pipeline_.settings.schema, dataset.name};
    RETURN_IF_ERROR(
        sql::RunDropTable(session_.context(), "DROP TABLE IF EXISTS " + QuotedName(dataset), drop).status());
    for (size_t f : node.flows) {
      streams_.erase(pipeline_.flows[f].name);
      const std::string prefix = CheckpointFolder(pipeline_.flows[f]) + "/";
      ASSIGN_OR_RETURN(std::vector<ObjectInfo> objects, options_.state->List(prefix));
      for (const ObjectInfo& object : objects) RETURN_IF_ERROR(options_.state->Delete(object.key));
    }
    return Status::OK();
  }

  static std::string CheckpointFolder(const pipeline::Flow& flow) { return "checkpoints/" + flow.name; }

  // An event of `run`'s flow, writing its target.
  static Event FlowEvent(const std::string& type, const FlowRun& run) {
    Event event;
    event.type = type;
    event.flow = run.flow;
    event.dataset = run.target;
    return event;
  }

  Status RunFlow(const pipeline::Dataset& dataset, const pipeline::Flow& flow, FlowRun& run) {
    switch (flow.kind) {
      case FlowKind::kRecompute:
        return Recompute(dataset, flow, run);
      case FlowKind::kView:
        // Defined in the session, where the flows after it read it (DuckDB's temporary
        // tables and views come before the catalog's).
        run.note = "defined";
        return session_.connection().Execute("CREATE OR REPLACE TEMP VIEW " + QuoteIdentifier(dataset.name) +
                                             " AS " + flow.query.sql);
      case FlowKind::kStream:
      case FlowKind::kOnce: {
        RETURN_IF_ERROR(EnsureStreamingTable(dataset, flow, run));
        ASSIGN_OR_RETURN(std::shared_ptr<commands::TableExpectations> expectations,
                         ExpectationsOf(dataset, run));
        session_.ExpectOnWrites(expectations);
        Status ran =
            flow.kind == FlowKind::kStream ? RunStream(dataset, flow, run) : Once(dataset, flow, run);
        session_.ExpectOnWrites(nullptr);
        return ran;
      }
      case FlowKind::kAutoCdc:
        RETURN_IF_ERROR(EnsureStreamingTable(dataset, flow, run));
        return RunStream(dataset, flow, run);
    }
    return Status::Internal("unknown flow kind");
  }

  // The rules of `dataset`'s expectations for its table (which exists), their outcomes
  // counted in `run`; null when it has none.
  Result<std::shared_ptr<commands::TableExpectations>> ExpectationsOf(const pipeline::Dataset& dataset,
                                                                      FlowRun& run) {
    if (dataset.table.expectations.empty()) return std::shared_ptr<commands::TableExpectations>();
    auto expectations = std::make_shared<commands::TableExpectations>();
    ASSIGN_OR_RETURN(std::optional<catalog::TableEntry> entry,
                     sql::LookupTarget(session_.context(), TableOf(dataset)));
    if (entry) {
      ASSIGN_OR_RETURN(auto snapshot, session_.context().LoadTable(entry->location));
      expectations->table_root = snapshot->table_root;
    }
    using OnViolation = sql::grammar::Expectation::OnViolation;
    using Action = commands::Expectation::Action;
    for (const sql::grammar::Expectation& expectation : dataset.table.expectations) {
      const Action action = expectation.on_violation == OnViolation::kDropRow      ? Action::kDropRow
                            : expectation.on_violation == OnViolation::kFailUpdate ? Action::kFailUpdate
                            : expectation.on_violation == OnViolation::kQuarantine ? Action::kQuarantine
                                                                                   : Action::kWarn;
      expectations->rules.push_back({expectation.name, expectation.condition, action});
      run.expectations.push_back({expectation.name, expectation.on_violation, 0});
    }
    // Each write's counts go to the event log before the write commits, with the write's
    // txn (a batch's): a batch run again after a crash logs them once, as they were.
    expectations->counted = [this, &run](const std::vector<int64_t>& failed, int64_t rows,
                                         const std::optional<delta::SetTransaction>& txn) -> Status {
      run.rows_checked += rows;
      std::vector<Event> events;
      for (size_t i = 0; i < failed.size() && i < run.expectations.size(); i++) {
        ExpectationRun& expectation = run.expectations[i];
        expectation.failed_rows += failed[i];
        Event event = FlowEvent("expectation", run);
        if (txn) event.batch_id = txn->version;
        event.expectation = expectation.name;
        event.action = ExpectationActionName(expectation.action);
        event.failed_rows = failed[i];
        event.passed_rows = rows - failed[i];
        if (failed[i] > 0) event.level = "WARN";
        events.push_back(std::move(event));
      }
      std::optional<delta::SetTransaction> own;
      if (txn) own = delta::SetTransaction{txn->app_id + "/expectations", txn->version, std::nullopt};
      return log_->Append(events, own);
    };
    expectations->quarantine = [this, &dataset, &run](const std::string& rows_sql, int64_t count,
                                                      const std::optional<delta::SetTransaction>& txn) {
      Status put = Quarantine(dataset, rows_sql, txn);
      if (put.ok()) run.quarantined += count;
      return put.WithContext("quarantine of " + dataset.name);
    };
    return expectations;
  }

  // Appends the rows of `rows_sql` to the dataset's quarantine table (created when absent),
  // with the batch id: txn's version, under txn's appId + "/quarantine", so that a batch run
  // again adds none.
  Status Quarantine(const pipeline::Dataset& dataset, const std::string& rows_sql,
                    const std::optional<delta::SetTransaction>& txn) {
    pipeline::Dataset quarantine;
    quarantine.name = dataset.name + "_quarantine";
    const std::string rows = "SELECT *, " + (txn ? std::to_string(txn->version) : std::string("NULL")) +
                             "::BIGINT AS batch_id, current_timestamp AS quarantined_at FROM (" + rows_sql +
                             ")";
    ASSIGN_OR_RETURN(bool exists, Exists(quarantine));
    if (!exists) {
      sql::grammar::CreateTable create = TableDefinition(quarantine);
      create.has_columns = true;
      ASSIGN_OR_RETURN(std::vector<engine::ColumnType> columns, session_.connection().DescribeQuery(rows));
      ASSIGN_OR_RETURN(create.request.schema, engine::DeltaSchemaOf(columns));
      create.request.description = "rows of " + dataset.name + " that failed a QUARANTINE expectation";
      RETURN_IF_ERROR(
          sql::RunCreateTable(session_.context(), "CREATE TABLE " + QuotedName(quarantine) + " (...)", create)
              .status());
    }
    ASSIGN_OR_RETURN(
        sql::grammar::ParsedStatement insert,
        sql::grammar::ParseStatement("INSERT INTO " + QuotedName(quarantine) + " BY NAME " + rows));
    std::optional<delta::SetTransaction> own;
    if (txn) own = delta::SetTransaction{txn->app_id + "/quarantine", txn->version, std::nullopt};
    return session_.ExecuteParsed(insert, own).status();
  }

  // A materialized view brought up to date (pipeline/view_refresh.h): incrementally when its
  // query allows it, else recomputed whole into its table (CREATE OR REPLACE TABLE ... AS);
  // with expectations always whole, its rows first held in a temporary table, checked, and
  // the rows kept written.
  Status Recompute(const pipeline::Dataset& dataset, const pipeline::Flow& flow, FlowRun& run) {
    ViewTarget view;
    view.name = TableOf(dataset);
    view.query = flow.query.sql;
    view.state = NewPrefixedObjectStore(options_.state, CheckpointFolder(flow));
    view.replace = [&](const std::string& select_sql) { return Replace(dataset, select_sql, run); };
    if (!dataset.table.expectations.empty()) view.always_full = "its rows are checked against expectations";
    ASSIGN_OR_RETURN(ViewRefresh refresh, RefreshView(session_, view));
    run.refresh = ViewRefreshModeName(refresh.mode);
    run.refresh_reason = refresh.reason;
    run.rows_written = refresh.rows_written;
    run.batches = refresh.mode == ViewRefresh::Mode::kUnchanged ? 0 : 1;
    run.note = refresh.mode == ViewRefresh::Mode::kIncremental ? "refreshed incrementally: " + refresh.reason
               : refresh.mode == ViewRefresh::Mode::kFull      ? "recomputed: " + refresh.reason
                                                               : "up to date: " + refresh.reason;
    return Status::OK();
  }

  // The view's table replaced by the rows of `select_sql`, checked against its expectations
  // first when it has any; the rows written.
  Result<int64_t> Replace(const pipeline::Dataset& dataset, const std::string& select_sql, FlowRun& run) {
    sql::grammar::CreateTable create = TableDefinition(dataset);
    create.or_replace = true;
    create.has_columns = !dataset.table.columns.empty();
    create.query = sql::grammar::Query{select_sql, {}, select_sql};
    constexpr char kRows[] = "temp.basin_view_rows";
    if (!dataset.table.expectations.empty()) {
      RETURN_IF_ERROR(
          session_.connection().Execute("CREATE OR REPLACE TEMP TABLE basin_view_rows AS " + select_sql));
      ASSIGN_OR_RETURN(std::shared_ptr<commands::TableExpectations> expectations,
                       ExpectationsOf(dataset, run));
      Result<std::string> kept =
          commands::ApplyExpectations(session_.connection(), *expectations, kRows, std::nullopt);
      if (!kept.ok()) {
        (void)session_.connection().Execute(std::string("DROP TABLE IF EXISTS ") + kRows);
        return kept.status();
      }
      create.query = sql::grammar::Query{*kept, {}, *kept};
    }
    Result<std::optional<sql::StatementResult>> created = sql::RunCreateTable(
        session_.context(), "CREATE OR REPLACE TABLE " + QuotedName(dataset) + " AS ...", create);
    if (!dataset.table.expectations.empty()) {
      Status dropped = session_.connection().Execute(std::string("DROP TABLE IF EXISTS ") + kRows);
      if (created.ok() && !dropped.ok()) return dropped;
    }
    ASSIGN_OR_RETURN(std::optional<sql::StatementResult> result, std::move(created));
    return result ? stream::ReportedInteger(result->result, "numOutputRows").value_or(0) : 0;
  }

  // The streaming table, created when absent from its declared columns or `flow`'s query's.
  Status EnsureStreamingTable(const pipeline::Dataset& dataset, const pipeline::Flow& flow, FlowRun& run) {
    ASSIGN_OR_RETURN(bool exists, Exists(dataset));
    if (exists) return Status::OK();
    sql::grammar::CreateTable create = TableDefinition(dataset);
    create.has_columns = true;
    if (dataset.table.columns.empty()) {
      std::vector<engine::ColumnType> columns;
      if (flow.kind == FlowKind::kStream) {
        ASSIGN_OR_RETURN(columns, stream::DescribeStreamQuery(session_, flow.query));
      } else if (flow.kind == FlowKind::kAutoCdc) {
        ASSIGN_OR_RETURN(stream::CdcFlow cdc, CdcFlowOf(dataset, flow));
        ASSIGN_OR_RETURN(columns, session_.connection().DescribeQuery(stream::CdcTargetQuery(cdc)));
      } else {
        ASSIGN_OR_RETURN(columns, session_.connection().DescribeQuery(flow.query.sql));
      }
      ASSIGN_OR_RETURN(create.request.schema, engine::DeltaSchemaOf(columns));
    }
    RETURN_IF_ERROR(
        sql::RunCreateTable(session_.context(), "CREATE TABLE " + QuotedName(dataset) + " (...)", create)
            .status());
    run.note = "created the table";
    return Status::OK();
  }

  // The table part of a dataset's declaration, as CREATE TABLE takes it.
  sql::grammar::CreateTable TableDefinition(const pipeline::Dataset& dataset) const {
    sql::grammar::CreateTable create;
    create.name = {pipeline_.settings.schema, dataset.name};
    const sql::grammar::PipelineTable& table = dataset.table;
    create.request.schema.fields = table.columns;
    create.request.partition_columns = table.partition_columns;
    create.request.properties = table.properties;
    create.request.properties[kOwnerProperty] = pipeline_.settings.name;
    for (const auto& [name, check] : table.checks)
      create.request.properties["delta.constraints." + name] = check;
    create.request.description = table.comment;
    return create;
  }

  // What an AUTO CDC flow applies, as stream/cdc.h takes it.
  Result<stream::CdcFlow> CdcFlowOf(const pipeline::Dataset& dataset, const pipeline::Flow& flow) const {
    const sql::grammar::AutoCdcFlow& cdc = *flow.cdc;
    stream::CdcFlow out;
    out.target = QuotedName(dataset);
    const pipeline::Dataset* source = DatasetRead(pipeline_, flow.reads.at(0));
    if (source != nullptr) {
      out.source = QuotedName(*source);
    } else {
      std::vector<std::string> parts;
      for (const std::string& part : cdc.source) parts.push_back(QuoteIdentifier(part));
      out.source = fmt::format("{}", fmt::join(parts, "."));
    }
    out.keys = cdc.keys;
    out.sequence_by = cdc.sequence_by;
    out.delete_when = cdc.apply_as_delete;
    out.truncate_when = cdc.apply_as_truncate;
    out.ignore_null_updates = cdc.ignore_null_updates;
    out.columns = cdc.columns;
    out.scd_type = cdc.scd_type;
    out.track_history = cdc.track_history;
    delta::Metadata declared;
    declared.configuration = dataset.table.properties;
    ASSIGN_OR_RETURN(out.tombstone_retention_ms,
                     delta::DurationPropertyMs(declared, kTombstoneRetentionProperty,
                                               stream::kDefaultTombstoneRetentionMs));
    return out;
  }

  // A streaming flow's stream (an AUTO CDC flow's too), run until its sources' ends: the one
  // the session ran in the passes before, or one opened now. A stream that fails is dropped,
  // to be opened again from its checkpoint by the next pass.
  Status RunStream(const pipeline::Dataset& dataset, const pipeline::Flow& flow, FlowRun& run) {
    auto kept = streams_.find(flow.name);
    if (kept == streams_.end()) {
      ASSIGN_OR_RETURN(std::unique_ptr<stream::StreamRunner> opened, OpenStream(dataset, flow));
      kept = streams_.emplace(flow.name, std::move(opened)).first;
    }
    Status ran = RunKeptStream(*kept->second, run);
    if (!ran.ok()) streams_.erase(kept);
    return ran;
  }

  // `flow`'s stream on this run's session, from its checkpoint.
  Result<std::unique_ptr<stream::StreamRunner>> OpenStream(const pipeline::Dataset& dataset,
                                                           const pipeline::Flow& flow) {
    std::shared_ptr<ObjectStore> checkpoint = NewPrefixedObjectStore(options_.state, CheckpointFolder(flow));
    auto open = [&]() -> Result<std::unique_ptr<stream::StreamRunner>> {
      if (flow.kind != FlowKind::kAutoCdc) {
        return stream::StreamRunner::Open(
            session_, checkpoint, "INSERT INTO " + QuotedName(dataset) + " BY NAME\n" + flow.query.written,
            options_.clock);
      }
      ASSIGN_OR_RETURN(stream::CdcFlow cdc, CdcFlowOf(dataset, flow));
      ASSIGN_OR_RETURN(stream::CdcPlan plan, stream::PlanCdc(session_.connection(), cdc));
      return stream::StreamRunner::OpenCdc(session_, checkpoint, plan, options_.clock);
    };
    Result<std::unique_ptr<stream::StreamRunner>> opened = open();
    if (opened.status().code() == ErrorCode::kInvalidArgument) {
      // Most often a query edited since the checkpoint began (a new stream).
      return opened.status().WithContext("run it from its sources again with --full-refresh " + dataset.name);
    }
    return opened;
  }

  // Runs `runner` available-now, its batches counted in `run` and logged.
  Status RunKeptStream(stream::StreamRunner& runner, FlowRun& run) {
    stream::RunOptions run_options;
    run_options.trigger = stream::Trigger::kAvailableNow;
    run_options.cancellation = options_.cancellation;
    int64_t quarantined_before = run.quarantined;  // when the batch before ended
    Status logged;
    const auto flow_started = std::chrono::steady_clock::now();
    run_options.on_batch = [&](const std::optional<stream::BatchCommit>& batch) {
      if (!batch) return;
      run.batches++;
      run.rows_in += batch->rows_in;
      run.rows_written += batch->rows_out;
      run.dead_letters += batch->dead_letters;
      Event progress = FlowEvent("flow_progress", run);
      progress.batch_id = batch->batch_id;
      progress.rows_in = batch->rows_in;
      progress.rows_written = batch->rows_out;
      progress.dead_letters = batch->dead_letters;
      progress.quarantined = run.quarantined - quarantined_before;
      progress.duration_ms = batch->duration_ms;
      progress.backlog = runner.Backlog();
      run.end_to_end_ms = stream::EndToEndMs(*batch);
      run.backlog = progress.backlog;
      run.duration_ms = MillisecondsSince(flow_started);
      if (options_.on_progress) options_.on_progress(run);
      quarantined_before = run.quarantined;
      // Once per batch, whatever the re-runs; in the log's next commit (the next batch's, or
      // the pass's end).
      Status appended = log_->AppendDeferred(
          {progress},
          delta::SetTransaction{runner.metadata().stream_id + "/events", batch->batch_id, std::nullopt});
      if (logged.ok()) logged = appended;
    };
    RETURN_IF_ERROR(runner.Run(run_options));
    return logged;
  }

  // INSERT INTO ONCE: its commit carries the flow's txn, so it lands once in the table's life.
  Status Once(const pipeline::Dataset& dataset, const pipeline::Flow& flow, FlowRun& run) {
    ASSIGN_OR_RETURN(sql::grammar::ParsedStatement insert,
                     sql::grammar::ParseStatement("INSERT INTO " + QuotedName(dataset) + " BY NAME\n" +
                                                  flow.query.written));
    const delta::SetTransaction txn{"pipeline " + pipeline_.settings.name + " flow " + flow.name, 0,
                                    std::nullopt};
    ASSIGN_OR_RETURN(sql::StatementResult result, session_.ExecuteParsed(insert, txn));
    const std::optional<int64_t> rows = stream::ReportedInteger(result.result, "num_affected_rows");
    run.rows_written = rows.value_or(0);
    run.batches = run.rows_written > 0 ? 1 : 0;
    if (!result.notices.empty()) run.note = result.notices.front();
    return Status::OK();
  }

  sql::Session& session_;
  const PipelineDefinition& pipeline_;
  const PipelineRunOptions& options_;
  EventLog* log_ = nullptr;  // set before any dataset runs
  bool past_first_pass_ = false;
  // The streams of the flows this run's session ran, by flow name, kept from pass to pass
  // (a dataset runs on the same session every pass, Workers): a stream's state stays in
  // memory between its batches, not read back from its checkpoint every pass.
  std::map<std::string, std::unique_ptr<stream::StreamRunner>> streams_;
};

// Runs the datasets of a pass: wave after wave of the graph (a dataset's wave is one past the
// latest of those it reads), the datasets of a wave at the same time on sessions of their
// own when there are several and PipelineRunOptions allows it.
class Workers {
 public:
  // `run` runs on the run's own session, and `log` is its event log.
  Workers(const PipelineDefinition& pipeline, const PipelineGraph& graph, const PipelineRunOptions& options,
          Run& run, EventLog& log)
      : pipeline_(pipeline), graph_(graph), options_(options), log_(log) {
    runs_.push_back(&run);
    std::vector<size_t> wave_of(graph.nodes.size(), 0);
    std::vector<size_t> node_of(pipeline.datasets.size(), 0);
    for (size_t n = 0; n < graph.nodes.size(); n++) node_of[graph.nodes[n].dataset] = n;
    for (size_t n = 0; n < graph.nodes.size(); n++) {  // in run order: upstream first
      for (size_t upstream : graph.nodes[n].upstream) {
        wave_of[n] = std::max(wave_of[n], wave_of[node_of[upstream]] + 1);
      }
      if (wave_of[n] >= waves_.size()) waves_.resize(wave_of[n] + 1);
      waves_[wave_of[n]].push_back(n);
    }
    const bool temporary_views =
        std::any_of(pipeline.datasets.begin(), pipeline.datasets.end(),
                    [](const Dataset& d) { return d.kind == DatasetKind::kTemporaryView; });
    concurrent_ = options.open_session && options.parallelism > 1 && !temporary_views;
  }

  void PastFirstPass() {
    past_first_pass_ = true;
    for (Run* run : runs_) run->PastFirstPass();
  }

  void Idle() {
    for (Run* run : runs_) run->Idle();
  }

  // One pass over every dataset; `out` gets their flows' runs in graph order.
  Status Pass(std::vector<FlowRun>& out) {
    std::vector<std::vector<FlowRun>> by_node(graph_.nodes.size());
    Status ran;
    for (const std::vector<size_t>& wave : waves_) {
      ran = RunWave(wave, by_node);
      if (!ran.ok()) break;
    }
    for (std::vector<FlowRun>& runs : by_node) {
      for (FlowRun& run : runs) out.push_back(std::move(run));
    }
    // The pass's events held or deferred (flow progress, errors) commit now, one commit per
    // session; a triggered run's own session commits them with its update_end.
    Status flushed = options_.continuous ? log_.Flush() : Status::OK();
    for (const std::unique_ptr<Worker>& worker : workers_) {
      Status more = worker->log->Flush();
      if (flushed.ok()) flushed = more;
    }
    return ran.ok() ? flushed : ran;
  }

 private:
  Status RunWave(const std::vector<size_t>& wave, std::vector<std::vector<FlowRun>>& by_node) {
    const size_t width =
        concurrent_ ? std::min<size_t>(wave.size(), static_cast<size_t>(options_.parallelism)) : 1;
    while (runs_.size() < width) {  // sessions for the datasets that run beside the first
      auto worker = std::make_unique<Worker>();
      ASSIGN_OR_RETURN(worker->session, options_.open_session());
      worker->log = log_.Fork(*worker->session);
      worker->run = std::make_unique<Run>(*worker->session, pipeline_, options_);
      worker->run->LogTo(worker->log.get());
      if (past_first_pass_) worker->run->PastFirstPass();
      runs_.push_back(worker->run.get());
      workers_.push_back(std::move(worker));
    }
    std::mutex mu;
    Status first_error;  // GUARDED_BY(mu)
    // The wave's i-th dataset runs on session i % width, the same in every pass, where its
    // flows' streams are kept (Run::RunStream).
    auto work = [&](size_t w) {
      Run& run = *runs_[w];
      for (size_t i = w; i < wave.size(); i += width) {
        {
          std::lock_guard<std::mutex> lock(mu);
          if (!first_error.ok()) return;
        }
        Status ran = run.RunDataset(graph_.nodes[wave[i]], by_node[wave[i]]);
        std::lock_guard<std::mutex> lock(mu);
        if (!ran.ok() && first_error.ok()) first_error = ran;
      }
    };
    std::vector<std::thread> threads;
    for (size_t w = 1; w < width; w++) threads.emplace_back(work, w);
    work(0);
    for (std::thread& thread : threads) thread.join();
    return first_error;
  }

  // A session of its own for datasets that run beside others, and what runs on it.
  struct Worker {
    std::unique_ptr<sql::Session> session;
    std::unique_ptr<EventLog> log;
    std::unique_ptr<Run> run;
  };

  const PipelineDefinition& pipeline_;
  const PipelineGraph& graph_;
  const PipelineRunOptions& options_;
  EventLog& log_;                           // the run's own session's
  std::vector<std::vector<size_t>> waves_;  // node indexes
  bool concurrent_ = false;
  bool past_first_pass_ = false;
  std::vector<Run*> runs_;  // [0]: the run's own session's
  std::vector<std::unique_ptr<Worker>> workers_;
};

// `pass`'s flow runs added to `total`'s of the same flows (appended when new).
void AddUp(std::vector<FlowRun>& pass, std::vector<FlowRun>& total) {
  for (FlowRun& run : pass) {
    auto same =
        std::find_if(total.begin(), total.end(), [&](const FlowRun& t) { return t.flow == run.flow; });
    if (same == total.end()) {
      total.push_back(std::move(run));
      continue;
    }
    same->batches += run.batches;
    same->rows_in += run.rows_in;
    same->rows_written += run.rows_written;
    same->dead_letters += run.dead_letters;
    same->rows_checked += run.rows_checked;
    same->quarantined += run.quarantined;
    same->duration_ms += run.duration_ms;
    for (size_t i = 0; i < run.expectations.size() && i < same->expectations.size(); i++) {
      same->expectations[i].failed_rows += run.expectations[i].failed_rows;
    }
    if (!run.note.empty()) same->note = run.note;
    if (run.backlog) same->backlog = run.backlog;
    if (!run.refresh.empty()) {
      same->refresh = run.refresh;
      same->refresh_reason = run.refresh_reason;
    }
  }
}

// An update_start or update_end event of a run with `options`.
Event UpdateEvent(const std::string& type, const PipelineRunOptions& options) {
  Event event;
  event.type = type;
  if (type == "update_start") {
    event.message = options.continuous
                        ? "continuous run, every " + std::to_string(options.interval_ms) + " ms"
                        : "triggered run";
    if (options.full_refresh_all) event.message += ", full refresh";
    if (!options.full_refresh.empty()) {
      event.message += ", full refresh of " + fmt::format("{}", fmt::join(options.full_refresh, ", "));
    }
  }
  return event;
}

}  // namespace

Status CheckOutsideTables(sql::Session& session, const PipelineDefinition& pipeline) {
  for (const Flow& flow : pipeline.flows) {
    for (const engine::SqlTableName& read : flow.reads) {
      if (!read.catalog.empty() || DatasetRead(pipeline, read) != nullptr) continue;
      ASSIGN_OR_RETURN(std::optional<catalog::TableEntry> entry, sql::LookupTarget(session.context(), read));
      if (!entry) {
        return Status::InvalidArgument(
            flow.place.Describe() + ": flow " + flow.name + " reads " + sql::grammar::JoinName(read.Parts()) +
            ", which is neither a dataset of the pipeline nor a table of the warehouse");
      }
    }
  }
  return Status::OK();
}

Result<std::vector<FlowRun>> RunPipeline(sql::Session& session, const PipelineDefinition& pipeline,
                                         const PipelineGraph& graph, const PipelineRunOptions& options) {
  Run run(session, pipeline, options);
  // Every table the run would write is the pipeline's, before anything runs.
  for (const GraphNode& node : graph.nodes) {
    const Dataset& dataset = pipeline.datasets[node.dataset];
    RETURN_IF_ERROR(run.CheckOwned(dataset));
    RETURN_IF_ERROR(run.CheckColumns(node));
    const bool quarantines = std::any_of(
        dataset.table.expectations.begin(), dataset.table.expectations.end(),
        [](const auto& e) { return e.on_violation == sql::grammar::Expectation::OnViolation::kQuarantine; });
    if (quarantines) {  // its quarantine table too
      Dataset quarantine;
      quarantine.name = dataset.name + "_quarantine";
      RETURN_IF_ERROR(run.CheckOwned(quarantine));
    }
  }
  Dataset log_table;
  log_table.name = EventLogTableName(pipeline.settings.name);
  if (const Dataset* clash = FindDataset(pipeline, log_table.name)) {
    return Status::InvalidArgument(clash->place.Describe() + ": " + DatasetKindName(clash->kind) + " " +
                                   clash->name + " has the name of the pipeline's event log; rename it");
  }
  RETURN_IF_ERROR(run.CheckOwned(log_table));
  ASSIGN_OR_RETURN(
      std::unique_ptr<EventLog> log,
      EventLog::Open(session, pipeline.settings.schema, pipeline.settings.name, NewUuid(), options.clock));
  run.LogTo(log.get());
  const auto started = std::chrono::steady_clock::now();
  std::vector<Event> start{UpdateEvent("update_start", options)};
  for (const Flow& flow : pipeline.flows) {
    for (const engine::SqlTableName& read : flow.reads) {
      Event lineage;
      lineage.type = "lineage";
      lineage.flow = flow.name;
      lineage.dataset = pipeline.settings.schema + "." + flow.target;
      const Dataset* dataset = DatasetRead(pipeline, read);
      lineage.source = dataset != nullptr ? pipeline.settings.schema + "." + dataset->name
                                          : sql::grammar::JoinName(read.Parts());
      start.push_back(std::move(lineage));
    }
  }
  RETURN_IF_ERROR(log->Append(start));
  std::vector<FlowRun> flows;  // each flow's, summed over the passes
  Status ran;
  bool stopped = false;  // a continuous run ended by its cancellation
  Workers workers(pipeline, graph, options, run, *log);
  for (;;) {
    const auto pass_started = std::chrono::steady_clock::now();
    std::vector<FlowRun> pass;
    ran = workers.Pass(pass);
    AddUp(pass, flows);
    if (options.continuous && ran.code() == ErrorCode::kCancelled) {
      ran = Status::OK();
      stopped = true;
    }
    if (!ran.ok() || !options.continuous || stopped) break;
    // The passes after the first log a view or a ONCE flow only when it wrote something,
    // and refresh nothing fully.
    workers.PastFirstPass();
    const auto wait = std::chrono::milliseconds(options.interval_ms) -
                      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                            pass_started);
    if (wait.count() > 0) workers.Idle();
    if (options.cancellation != nullptr) {
      if (options.cancellation->WaitFor(std::max(wait, std::chrono::milliseconds(0)))) stopped = true;
    } else if (wait.count() > 0) {
      std::this_thread::sleep_for(wait);
    }
    if (stopped) break;
  }
  Event end = UpdateEvent("update_end", options);
  end.duration_ms = MillisecondsSince(started);
  end.outcome = stopped                               ? "stopped"
                : ran.ok()                            ? "completed"
                : ran.code() == ErrorCode::kCancelled ? "cancelled"
                                                      : "failed";
  if (!ran.ok()) {
    end.level = "ERROR";
    end.message = ran.ToString();
  }
  Status logged = log->Append({end});
  if (logged.ok()) logged = log->Flush();
  RETURN_IF_ERROR(ran);
  RETURN_IF_ERROR(logged);
  return flows;
}

}  // namespace basin::pipeline
