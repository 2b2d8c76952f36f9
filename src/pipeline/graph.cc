#include "pipeline/graph.h"

#include <algorithm>
#include <functional>
#include <nlohmann/json.hpp>

#include "common/strings.h"

namespace basin::pipeline {

namespace {

// The index of `dataset`, one of the pipeline's.
size_t IndexOf(const PipelineDefinition& pipeline, const Dataset* dataset) {
  return static_cast<size_t>(dataset - pipeline.datasets.data());
}

std::string Qualified(const PipelineDefinition& pipeline, const engine::SqlTableName& name) {
  std::vector<std::string> parts = name.Parts();
  if (parts.size() == 1) parts.insert(parts.begin(), pipeline.settings.schema);
  return sql::grammar::JoinName(parts);
}

}  // namespace

Result<PipelineGraph> BuildGraph(const PipelineDefinition& pipeline) {
  const size_t count = pipeline.datasets.size();
  std::vector<GraphNode> nodes(count);
  for (size_t i = 0; i < count; i++) nodes[i].dataset = i;
  for (size_t f = 0; f < pipeline.flows.size(); f++) {
    const Flow& flow = pipeline.flows[f];
    const Dataset* target = FindDataset(pipeline, flow.target);
    GraphNode& node = nodes[IndexOf(pipeline, target)];
    node.flows.push_back(f);
    for (const engine::SqlTableName& read : flow.reads) {
      if (const Dataset* dataset = DatasetRead(pipeline, read)) {
        const size_t upstream = IndexOf(pipeline, dataset);
        if (std::find(node.upstream.begin(), node.upstream.end(), upstream) == node.upstream.end())
          node.upstream.push_back(upstream);
      } else {
        const std::string name = Qualified(pipeline, read);
        if (std::find(node.external.begin(), node.external.end(), name) == node.external.end())
          node.external.push_back(name);
      }
    }
  }
  // Depth-first, in declaration order, so that the order is stable; a dataset met again while
  // it is on the path closes a cycle.
  enum class Mark { kNone, kOnPath, kDone };
  std::vector<Mark> marks(count, Mark::kNone);
  std::vector<size_t> path;
  PipelineGraph graph;
  std::function<Status(size_t)> visit = [&](size_t i) -> Status {
    if (marks[i] == Mark::kDone) return Status::OK();
    if (marks[i] == Mark::kOnPath) {
      std::string cycle;
      for (auto it = std::find(path.begin(), path.end(), i); it != path.end(); ++it) {
        const Dataset& dataset = pipeline.datasets[*it];
        cycle += dataset.name + " (" + dataset.place.Describe() + ") reads ";
      }
      return Status::InvalidArgument("the pipeline's datasets read each other in a cycle: " + cycle +
                                     pipeline.datasets[i].name);
    }
    marks[i] = Mark::kOnPath;
    path.push_back(i);
    for (size_t upstream : nodes[i].upstream) RETURN_IF_ERROR(visit(upstream));
    path.pop_back();
    marks[i] = Mark::kDone;
    graph.nodes.push_back(nodes[i]);
    return Status::OK();
  };
  for (size_t i = 0; i < count; i++) RETURN_IF_ERROR(visit(i));
  return graph;
}

std::string GraphText(const PipelineDefinition& pipeline, const PipelineGraph& graph) {
  std::string out = "pipeline " + pipeline.settings.name + " (schema " + pipeline.settings.schema + ")\n";
  for (const GraphNode& node : graph.nodes) {
    const Dataset& dataset = pipeline.datasets[node.dataset];
    out += std::string(DatasetKindName(dataset.kind)) + " " + dataset.name + "  [" +
           dataset.place.Describe() + "]\n";
    for (size_t f : node.flows) {
      const Flow& flow = pipeline.flows[f];
      out += "  flow " + flow.name + " (" + FlowKindName(flow.kind) + ")\n";
    }
    for (size_t upstream : node.upstream) out += "  reads " + pipeline.datasets[upstream].name + "\n";
    for (const std::string& table : node.external) out += "  reads " + table + " (outside the pipeline)\n";
  }
  return out;
}

std::string GraphDot(const PipelineDefinition& pipeline, const PipelineGraph& graph) {
  auto quoted = [](const std::string& name) { return nlohmann::json(name).dump(); };
  std::string out = "digraph " + quoted(pipeline.settings.name) + " {\n  rankdir=LR;\n";
  for (const GraphNode& node : graph.nodes) {
    const Dataset& dataset = pipeline.datasets[node.dataset];
    out += "  " + quoted(dataset.name) + " [shape=" +
           (dataset.kind == DatasetKind::kStreamingTable     ? "box"
            : dataset.kind == DatasetKind::kMaterializedView ? "ellipse"
                                                             : "hexagon") +
           "];\n";
    for (size_t upstream : node.upstream)
      out += "  " + quoted(pipeline.datasets[upstream].name) + " -> " + quoted(dataset.name) + ";\n";
    for (const std::string& table : node.external) {
      out += "  " + quoted(table) + " [shape=note];\n";
      out += "  " + quoted(table) + " -> " + quoted(dataset.name) + ";\n";
    }
  }
  return out + "}\n";
}

std::string GraphJson(const PipelineDefinition& pipeline, const PipelineGraph& graph) {
  nlohmann::json datasets = nlohmann::json::array();
  for (const GraphNode& node : graph.nodes) {
    const Dataset& dataset = pipeline.datasets[node.dataset];
    nlohmann::json flows = nlohmann::json::array();
    for (size_t f : node.flows) {
      flows.push_back({{"name", pipeline.flows[f].name}, {"kind", FlowKindName(pipeline.flows[f].kind)}});
    }
    nlohmann::json reads = nlohmann::json::array();
    for (size_t upstream : node.upstream) reads.push_back(pipeline.datasets[upstream].name);
    datasets.push_back({{"name", dataset.name},
                        {"kind", DatasetKindName(dataset.kind)},
                        {"place", dataset.place.Describe()},
                        {"flows", flows},
                        {"reads", reads},
                        {"external", node.external}});
  }
  return nlohmann::json{{"pipeline", pipeline.settings.name},
                        {"schema", pipeline.settings.schema},
                        {"datasets", datasets}}
             .dump(2) +
         "\n";
}

}  // namespace basin::pipeline
