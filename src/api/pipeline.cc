// basin::Pipeline (include/basin/pipeline.h) over pipeline::RunPipeline.
#include "basin/pipeline.h"

#include "api/table_cache.h"
#include "basin/object_store.h"
#include "common/cancellation.h"
#include "pipeline/definition.h"
#include "pipeline/event_log.h"
#include "pipeline/graph.h"
#include "pipeline/runner.h"
#include "sql/session.h"
#include "stream/kafka/read_kafka.h"

namespace basin {
namespace {

struct Loaded {
  pipeline::PipelineDefinition definition;
  pipeline::PipelineGraph graph;
  PipelineGraph view;
};

Result<Loaded> Load(const std::string& folder) {
  ASSIGN_OR_RETURN(std::shared_ptr<ObjectStore> store, OpenStoreAt(folder));
  // The folder's last name: the pipeline's, unless pipeline.json names it.
  std::string name = folder;
  while (name.size() > 1 && name.back() == '/') name.pop_back();
  name = name.substr(name.rfind('/') == std::string::npos ? 0 : name.rfind('/') + 1);
  Loaded loaded;
  ASSIGN_OR_RETURN(loaded.definition, pipeline::LoadPipeline(*store, name));
  ASSIGN_OR_RETURN(loaded.graph, pipeline::BuildGraph(loaded.definition));
  PipelineGraph& view = loaded.view;
  view.name = loaded.definition.settings.name;
  view.schema = loaded.definition.settings.schema;
  view.event_log = view.schema + "." + pipeline::EventLogTableName(view.name);
  for (const pipeline::GraphNode& node : loaded.graph.nodes) {
    const pipeline::Dataset& dataset = loaded.definition.datasets[node.dataset];
    PipelineDataset out;
    out.name = dataset.name;
    out.kind = pipeline::DatasetKindName(dataset.kind);
    out.place = dataset.place.Describe();
    for (size_t f : node.flows) {
      const pipeline::Flow& flow = loaded.definition.flows[f];
      out.flows.push_back(flow.name + " (" + pipeline::FlowKindName(flow.kind) + ")");
    }
    for (size_t upstream : node.upstream) out.reads.push_back(loaded.definition.datasets[upstream].name);
    out.external = node.external;
    view.datasets.push_back(std::move(out));
  }
  view.text = pipeline::GraphText(loaded.definition, loaded.graph);
  view.dot = pipeline::GraphDot(loaded.definition, loaded.graph);
  view.json = pipeline::GraphJson(loaded.definition, loaded.graph);
  return loaded;
}

PipelineFlowRun FlowRunOf(const pipeline::FlowRun& run) {
  PipelineFlowRun out;
  out.flow = run.flow;
  out.target = run.target;
  out.kind = pipeline::FlowKindName(run.kind);
  out.batches = run.batches;
  out.rows_in = run.rows_in;
  out.rows_written = run.rows_written;
  out.dead_letters = run.dead_letters;
  out.rows_checked = run.rows_checked;
  for (const pipeline::ExpectationRun& expectation : run.expectations) {
    out.expectations.push_back(
        {expectation.name, pipeline::ExpectationActionName(expectation.action), expectation.failed_rows});
  }
  out.quarantined = run.quarantined;
  out.duration_ms = run.duration_ms;
  out.note = run.note;
  out.refresh = run.refresh;
  out.refresh_reason = run.refresh_reason;
  out.backlog = run.backlog.value_or(-1);
  out.end_to_end_ms = run.end_to_end_ms.value_or(-1);
  return out;
}

}  // namespace

Result<PipelineGraph> ReadPipelineGraph(const std::string& folder) {
  ASSIGN_OR_RETURN(Loaded loaded, Load(folder));
  return std::move(loaded.view);
}

struct Pipeline::Impl {
  PipelineOptions options;
  Loaded loaded;
  std::unique_ptr<sql::Session> session;
  std::shared_ptr<ObjectStore> state;
  CancellationToken stop;
};

Pipeline::Pipeline(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Pipeline::~Pipeline() = default;

Result<std::unique_ptr<Pipeline>> Pipeline::Open(const PipelineOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  ASSIGN_OR_RETURN(impl->loaded, Load(options.folder));
  for (const std::string& name : options.full_refresh) {
    if (pipeline::FindDataset(impl->loaded.definition, name) == nullptr) {
      return Status::InvalidArgument("--full-refresh names " + name + ", which is no dataset of pipeline " +
                                     impl->loaded.view.name);
    }
  }
  ASSIGN_OR_RETURN(impl->session, sql::Session::Open({.warehouse_dir = options.warehouse,
                                                      .user = options.user,
                                                      .record_lineage = true,
                                                      .snapshots = options.tables}));
  RETURN_IF_ERROR(stream::kafka::RegisterReadKafka(*impl->session));
  RETURN_IF_ERROR(pipeline::CheckOutsideTables(*impl->session, impl->loaded.definition));
  ASSIGN_OR_RETURN(impl->state, OpenStoreAt(options.warehouse + "/_pipelines/" + impl->loaded.view.name));
  return std::unique_ptr<Pipeline>(new Pipeline(std::move(impl)));
}

const PipelineGraph& Pipeline::graph() const { return impl_->loaded.view; }

Result<std::vector<PipelineFlowRun>> Pipeline::Run(
    const std::function<void(const PipelineFlowRun&)>& on_flow,
    const std::function<void(const PipelineFlowRun&)>& on_progress) {
  pipeline::PipelineRunOptions run;
  run.state = impl_->state;
  run.full_refresh_all = impl_->options.full_refresh_all;
  run.full_refresh = impl_->options.full_refresh;
  run.cancellation = &impl_->stop;
  run.continuous = impl_->options.continuous;
  run.parallelism = impl_->loaded.definition.settings.parallelism;
  run.open_session = [warehouse = impl_->options.warehouse, user = impl_->options.user,
                      tables = impl_->options.tables]() -> Result<std::unique_ptr<sql::Session>> {
    ASSIGN_OR_RETURN(
        std::unique_ptr<sql::Session> session,
        sql::Session::Open(
            {.warehouse_dir = warehouse, .user = user, .record_lineage = true, .snapshots = tables}));
    RETURN_IF_ERROR(stream::kafka::RegisterReadKafka(*session));
    return session;
  };
  run.interval_ms = impl_->options.interval_ms >= 0 ? impl_->options.interval_ms
                                                    : impl_->loaded.definition.settings.trigger_interval_ms;
  if (on_flow) run.on_flow = [&](const pipeline::FlowRun& flow) { on_flow(FlowRunOf(flow)); };
  if (on_progress) run.on_progress = [&](const pipeline::FlowRun& flow) { on_progress(FlowRunOf(flow)); };
  ASSIGN_OR_RETURN(
      std::vector<pipeline::FlowRun> flows,
      pipeline::RunPipeline(*impl_->session, impl_->loaded.definition, impl_->loaded.graph, run));
  std::vector<PipelineFlowRun> out;
  for (const pipeline::FlowRun& flow : flows) out.push_back(FlowRunOf(flow));
  return out;
}

void Pipeline::Stop() { impl_->stop.Cancel(); }

}  // namespace basin
