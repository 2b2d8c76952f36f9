// basin::server::FlowSet (flows.h): a thread per flow, over basin::Stream and basin::Pipeline.
#include "server/flows.h"

#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "server/http/url_names.h"

namespace basin::server {
namespace {

// A change to a flow's status, applied under the flow's lock.
using StatusUpdate = std::function<void(const std::function<void(FlowStatus&)>&)>;

// A flow while it runs: a basin::Stream or a basin::Pipeline, opened by the flow's thread.
class RunningFlow {
 public:
  virtual ~RunningFlow() = default;
  // Runs until Stop() (then OK or Cancelled) or a failure, reporting through `update`.
  virtual Status Run(const StatusUpdate& update) = 0;
  // Makes Run() return after the batch in flight. Any thread.
  virtual void Stop() = 0;
};

using FlowOpener = std::function<Result<std::unique_ptr<RunningFlow>>(const StatusUpdate&)>;

class RunningStream final : public RunningFlow {
 public:
  static Result<std::unique_ptr<RunningFlow>> Open(const StreamOptions& options, const StatusUpdate& update) {
    ASSIGN_OR_RETURN(std::unique_ptr<Stream> stream, Stream::Open(options));
    // What the checkpoint says, for a flow that has committed no batch in this process yet.
    ASSIGN_OR_RETURN(StreamStatus checkpoint, ReadStreamStatus(options.checkpoint));
    update([&](FlowStatus& status) {
      status.sink = checkpoint.sink_table;
      if (status.figures.last_batch_id || !checkpoint.last_batch) return;
      status.figures.last_batch_id = checkpoint.last_batch->batch_id;
      if (checkpoint.last_batch->table_version >= 0)
        status.figures.table_version = checkpoint.last_batch->table_version;
    });
    return std::unique_ptr<RunningFlow>(new RunningStream(std::move(stream)));
  }

  Status Run(const StatusUpdate& update) override {
    return stream_->Run([&](const std::optional<StreamBatch>& batch) {
      if (batch) update([&](FlowStatus& status) { AddStreamBatch(*batch, status.figures); });
    });
  }
  void Stop() override { stream_->Stop(); }

 private:
  explicit RunningStream(std::unique_ptr<Stream> stream) : stream_(std::move(stream)) {}
  std::unique_ptr<Stream> stream_;
};

class RunningPipeline final : public RunningFlow {
 public:
  static Result<std::unique_ptr<RunningFlow>> Open(const PipelineOptions& options) {
    ASSIGN_OR_RETURN(std::unique_ptr<Pipeline> pipeline, Pipeline::Open(options));
    return std::unique_ptr<RunningFlow>(new RunningPipeline(std::move(pipeline)));
  }

  Status Run(const StatusUpdate& update) override {
    return pipeline_
        ->Run([&](const PipelineFlowRun& run) {
          update([&](FlowStatus& status) {
            AddPipelineFlowRun(run, status.figures);
            if (run.backlog >= 0) backlogs_[run.flow] = run.backlog;
            if (backlogs_.empty()) return;
            int64_t lag = 0;
            for (const auto& [flow, backlog] : backlogs_) lag += backlog;
            status.figures.lag = lag;
          });
        })
        .status();
  }
  void Stop() override { pipeline_->Stop(); }

 private:
  explicit RunningPipeline(std::unique_ptr<Pipeline> pipeline) : pipeline_(std::move(pipeline)) {}
  std::unique_ptr<Pipeline> pipeline_;
  std::map<std::string, int64_t> backlogs_;  // each streaming flow's latest; changed under the flow's lock
};

}  // namespace

std::string_view FlowKindName(FlowKind kind) { return kind == FlowKind::kStream ? "stream" : "pipeline"; }

std::string_view FlowStateName(FlowState state) {
  static constexpr std::string_view kNames[] = {"RUNNING", "STOPPED", "FAILED"};  // FlowState's order
  return kNames[static_cast<int>(state)];
}

std::vector<metrics::FamilySamples> FlowFamilies(const std::vector<FlowStatus>& flows) {
  using metrics::MetricType;
  struct Series {
    const char* name;
    const char* help;
    MetricType type;
    std::function<std::optional<double>(const FlowStatus&)> value;
  };
  const Series kSeries[] = {
      {"basin_flow_running", "1 while the flow runs, 0 when it is stopped or failed", MetricType::kGauge,
       [](const FlowStatus& f) { return f.state == FlowState::kRunning ? 1.0 : 0.0; }},
      {"basin_flow_failed", "1 when the flow failed and waits to be started again", MetricType::kGauge,
       [](const FlowStatus& f) { return f.state == FlowState::kFailed ? 1.0 : 0.0; }},
      {"basin_flow_batches_total", "Batches committed", MetricType::kCounter,
       [](const FlowStatus& f) { return double(f.figures.batches); }},
      {"basin_flow_input_rows_total", "Records the sources offered (Kafka offsets; 0 for table sources)",
       MetricType::kCounter, [](const FlowStatus& f) { return double(f.figures.rows_in); }},
      {"basin_flow_output_rows_total", "Rows the sinks received", MetricType::kCounter,
       [](const FlowStatus& f) { return double(f.figures.rows_out); }},
      {"basin_flow_dead_letters_total", "Records sent to the dead-letter table", MetricType::kCounter,
       [](const FlowStatus& f) { return double(f.figures.dead_letters); }},
      {"basin_flow_failures_total", "Runs of the flow that ended in an error", MetricType::kCounter,
       [](const FlowStatus& f) { return double(f.figures.failures); }},
      {"basin_flow_batch_duration_seconds_total", "Time spent in committed batches", MetricType::kCounter,
       [](const FlowStatus& f) { return f.figures.durations.sum_ms / 1000.0; }},
      {"basin_flow_last_batch_duration_seconds", "Duration of the last committed batch", MetricType::kGauge,
       [](const FlowStatus& f) -> std::optional<double> {
         if (f.figures.batches == 0) return std::nullopt;
         return f.figures.last_duration_ms / 1000.0;
       }},
      {"basin_flow_lag_records", "Records the sources held beyond the last batch (consumer lag)",
       MetricType::kGauge,
       [](const FlowStatus& f) -> std::optional<double> {
         if (!f.figures.lag) return std::nullopt;
         return double(*f.figures.lag);
       }},
      {"basin_flow_table_version", "The sink's version the last batch committed (streams)",
       MetricType::kGauge,
       [](const FlowStatus& f) -> std::optional<double> {
         if (!f.figures.table_version) return std::nullopt;
         return double(*f.figures.table_version);
       }},
  };
  std::vector<metrics::FamilySamples> families;
  const std::vector<double> bounds = metrics::LatencyBucketsSeconds();
  auto histogram = [&](const char* name, const char* help, TimeBuckets FlowFigures::*buckets) {
    metrics::FamilySamples family{name, help, MetricType::kHistogram, {}};
    for (const FlowStatus& flow : flows) {
      std::vector<uint64_t> counts = (flow.figures.*buckets).counts;
      counts.resize(bounds.size() + 1);
      metrics::AppendHistogramSamples(bounds, counts, (flow.figures.*buckets).sum_ms / 1000.0,
                                      {{"flow", flow.name}, {"kind", std::string(FlowKindName(flow.kind))}},
                                      family.samples);
    }
    families.push_back(std::move(family));
  };
  histogram("basin_flow_batch_duration_seconds", "Committed batches by duration", &FlowFigures::durations);
  histogram("basin_flow_end_to_end_latency_seconds",
            "Committed batches by the time from the newest source data they read to their commit",
            &FlowFigures::end_to_end);
  for (const Series& series : kSeries) {
    metrics::FamilySamples family{series.name, series.help, series.type, {}};
    for (const FlowStatus& flow : flows) {
      std::optional<double> value = series.value(flow);
      if (!value) continue;
      family.samples.push_back(
          {"", {{"flow", flow.name}, {"kind", std::string(FlowKindName(flow.kind))}}, *value});
    }
    families.push_back(std::move(family));
  }
  return families;
}

void TimeBuckets::Observe(int64_t ms) {
  const std::vector<double> bounds = metrics::LatencyBucketsSeconds();
  counts.resize(bounds.size() + 1);
  ++counts[metrics::BucketOf(bounds, ms / 1000.0)];
  sum_ms += ms;
}

void AddStreamBatch(const StreamBatch& batch, FlowFigures& figures) {
  figures.durations.Observe(batch.duration_ms);
  if (batch.end_to_end_ms) figures.end_to_end.Observe(*batch.end_to_end_ms);
  figures.last_end_to_end_ms = batch.end_to_end_ms;
  ++figures.batches;
  figures.rows_in += batch.rows_in;
  figures.rows_out += batch.rows_out;
  figures.dead_letters += batch.dead_letters;
  figures.last_batch_id = batch.batch_id;
  if (batch.table_version >= 0) figures.table_version = batch.table_version;
  figures.last_rows_in = batch.rows_in;
  figures.last_rows_out = batch.rows_out;
  figures.last_duration_ms = batch.duration_ms;
  figures.lag = batch.lag;
}

void AddPipelineFlowRun(const PipelineFlowRun& run, FlowFigures& figures) {
  // A pass that found nothing to read is no batch.
  if (run.batches == 0) return;
  figures.durations.Observe(run.duration_ms);
  if (run.end_to_end_ms >= 0) figures.end_to_end.Observe(run.end_to_end_ms);
  figures.last_end_to_end_ms =
      run.end_to_end_ms >= 0 ? std::optional<int64_t>(run.end_to_end_ms) : std::nullopt;
  figures.batches += run.batches;
  figures.rows_in += run.rows_in;
  figures.rows_out += run.rows_written;
  figures.dead_letters += run.dead_letters;
  figures.last_rows_in = run.rows_in;
  figures.last_rows_out = run.rows_written;
  figures.last_duration_ms = run.duration_ms;
}

// One flow: its status, and the thread that runs it.
class Flow {
 public:
  Flow(std::string name, FlowKind kind, std::string event_log, FlowOpener open,
       std::function<void(const std::string&)> log)
      : name_(std::move(name)), open_(std::move(open)), log_(std::move(log)) {
    status_.name = name_;
    status_.kind = kind;
    status_.event_log = std::move(event_log);
  }

  const std::string& name() const { return name_; }

  FlowStatus status() const {
    std::lock_guard<std::mutex> lock(mu_);
    return status_;
  }

  // A flow not running: runs it on a new thread. Cancelled once `closed`.
  Status Start(const std::atomic<bool>& closed) {
    std::lock_guard<std::mutex> lifecycle(lifecycle_);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (status_.state == FlowState::kRunning) return Status::OK();
    }
    // The last run's thread is past its end (it set the state), or there was none.
    if (thread_.joinable()) thread_.join();
    {
      std::lock_guard<std::mutex> lock(mu_);
      // Checked under mu_: Close() raises `closed` before it asks each flow to stop.
      if (closed.load()) {
        return Status::Cancelled("the server is shutting down: flow " + name_ + " stays " +
                                 std::string(FlowStateName(status_.state)));
      }
      status_.state = FlowState::kRunning;
      status_.error = Status::OK();
      stop_requested_ = false;
    }
    log_("flow " + name_ + " (" + std::string(FlowKindName(status_.kind)) + ") running");
    thread_ = std::thread([this] { RunThread(); });
    return Status::OK();
  }

  // Asks a running flow to stop after its batch in flight. Does not wait.
  void RequestStop() {
    std::lock_guard<std::mutex> lock(mu_);
    if (status_.state != FlowState::kRunning) return;
    stop_requested_ = true;
    if (running_ != nullptr) running_->Stop();
  }

  FlowStatus StopAndWait() {
    RequestStop();
    Join();
    return status();
  }

  void Join() {
    std::lock_guard<std::mutex> lifecycle(lifecycle_);
    if (thread_.joinable()) thread_.join();
  }

 private:
  void RunThread() {
    const Status ended = OpenAndRun();
    std::string line;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (ended.ok() || (stop_requested_ && ended.code() == ErrorCode::kCancelled)) {
        status_.state = FlowState::kStopped;
        line = "flow " + name_ + " stopped";
      } else {
        status_.state = FlowState::kFailed;
        status_.error = ended;
        ++status_.figures.failures;
        line = "flow " + name_ + " failed: " + ended.ToString();
      }
    }
    log_(line);
  }

  // Opens the flow and runs it until it stops or fails. The flow is closed (a stream's last
  // commit marker written) when this returns.
  Status OpenAndRun() {
    const StatusUpdate update = [this](const std::function<void(FlowStatus&)>& change) {
      std::lock_guard<std::mutex> lock(mu_);
      change(status_);
    };
    Result<std::unique_ptr<RunningFlow>> opened = open_(update);
    if (!opened.ok()) return opened.status();
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stop_requested_) return Status::OK();
      running_ = opened->get();
    }
    const Status ran = (*opened)->Run(update);
    std::lock_guard<std::mutex> lock(mu_);
    running_ = nullptr;
    return ran;
  }

  const std::string name_;
  const FlowOpener open_;
  const std::function<void(const std::string&)> log_;
  std::mutex lifecycle_;  // one Start or Join at a time: both touch thread_
  std::thread thread_;    // GUARDED_BY(lifecycle_)
  mutable std::mutex mu_;
  FlowStatus status_;               // GUARDED_BY(mu_)
  RunningFlow* running_ = nullptr;  // GUARDED_BY(mu_): set while Run() runs
  bool stop_requested_ = false;     // GUARDED_BY(mu_)
};

Result<std::unique_ptr<FlowSet>> FlowSet::Open(const ServerOptions& options, const security::UserStore& users,
                                               std::function<void(const std::string&)> log,
                                               std::shared_ptr<TableCache> tables) {
  if (!log) log = [](const std::string&) {};
  std::unique_ptr<FlowSet> set(new FlowSet());
  std::set<std::string> names;
  auto add = [&](const std::string& name, FlowKind kind, std::string event_log, FlowOpener open) -> Status {
    if (!names.insert(name).second) return Status::InvalidArgument("two flows are named " + name);
    set->flows_.push_back(std::make_unique<Flow>(name, kind, std::move(event_log), std::move(open), log));
    return Status::OK();
  };
  if (!options.streams.empty() && options.checkpoint_root.empty()) {
    return Status::InvalidArgument(
        "streams need a checkpoint root (--checkpoint-root DIR): each keeps its checkpoint in DIR/<name>");
  }
  if (!options.streams.empty() || !options.pipelines.empty()) {
    if (options.flow_owner.empty())
      return Status::InvalidArgument("the streams and pipelines need an owner (--flow-owner USER)");
    ASSIGN_OR_RETURN(std::optional<security::User> owner, users.Find(options.flow_owner));
    if (!owner) {
      return Status::InvalidArgument("the flows' owner (--flow-owner) " + options.flow_owner +
                                     " is no user of the warehouse: create it first (CREATE USER)");
    }
  }
  for (const ServedStream& served : options.streams) {
    RETURN_IF_ERROR(http::CheckIdentifier(served.name, "a stream's name"));
    StreamOptions stream;
    stream.warehouse = options.warehouse;
    stream.checkpoint = options.checkpoint_root + "/" + served.name;
    stream.statement = served.statement;
    stream.trigger = "continuous";
    stream.interval_ms = options.stream_interval_ms;
    stream.user = options.flow_owner;
    stream.tables = tables;
    RETURN_IF_ERROR(
        add(served.name, FlowKind::kStream, /*event_log=*/"",
            [stream](const StatusUpdate& update) { return RunningStream::Open(stream, update); }));
  }
  for (const std::string& folder : options.pipelines) {
    ASSIGN_OR_RETURN(PipelineGraph graph, ReadPipelineGraph(folder));
    PipelineOptions pipeline;
    pipeline.folder = folder;
    pipeline.warehouse = options.warehouse.empty() ? "." : options.warehouse;
    pipeline.continuous = true;
    pipeline.user = options.flow_owner;
    pipeline.tables = tables;
    RETURN_IF_ERROR(add(graph.name, FlowKind::kPipeline, graph.event_log,
                        [pipeline](const StatusUpdate&) { return RunningPipeline::Open(pipeline); }));
  }
  return set;
}

FlowSet::~FlowSet() {
  Close();
  Join();
}

Status FlowSet::StartAll() {
  for (const std::unique_ptr<Flow>& flow : flows_) RETURN_IF_ERROR(flow->Start(closed_));
  return Status::OK();
}

Result<Flow*> FlowSet::Find(const std::string& name) const {
  for (const std::unique_ptr<Flow>& flow : flows_) {
    if (flow->name() == name) return flow.get();
  }
  return Status::NotFound("no flow " + name);
}

std::vector<FlowStatus> FlowSet::List() const {
  std::vector<FlowStatus> listed;
  for (const std::unique_ptr<Flow>& flow : flows_) listed.push_back(flow->status());
  return listed;
}

Result<FlowStatus> FlowSet::Get(const std::string& name) const {
  ASSIGN_OR_RETURN(Flow * flow, Find(name));
  return flow->status();
}

Result<FlowStatus> FlowSet::StopFlow(const std::string& name) {
  ASSIGN_OR_RETURN(Flow * flow, Find(name));
  return flow->StopAndWait();
}

Result<FlowStatus> FlowSet::StartFlow(const std::string& name) {
  ASSIGN_OR_RETURN(Flow * flow, Find(name));
  RETURN_IF_ERROR(flow->Start(closed_));
  return flow->status();
}

void FlowSet::Close() {
  closed_.store(true);
  for (const std::unique_ptr<Flow>& flow : flows_) flow->RequestStop();
}

void FlowSet::Join() {
  for (const std::unique_ptr<Flow>& flow : flows_) flow->Join();
}

}  // namespace basin::server
