// A pipeline's dependency graph: which datasets each dataset's flows read, the tables
// outside the pipeline they read, and an order to run them in where every dataset comes
// after the datasets it reads (docs/pipelines.md).
//
// Thread safety: values; BuildGraph is a function of its argument.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "basin/status.h"
#include "pipeline/definition.h"

namespace basin::pipeline {

struct GraphNode {
  size_t dataset = 0;                 // index into PipelineDefinition::datasets
  std::vector<size_t> flows;          // indexes into PipelineDefinition::flows, writing it
  std::vector<size_t> upstream;       // datasets its flows read
  std::vector<std::string> external;  // tables outside the pipeline its flows read, "s.t"
};

struct PipelineGraph {
  std::vector<GraphNode> nodes;  // in run order
};

// A name a flow reads is a dataset of the pipeline when it is unqualified or qualified by the
// pipeline's schema and a dataset has that name; otherwise a table outside the pipeline.
// InvalidArgument naming the datasets and where they are declared when they read each other
// in a cycle.
Result<PipelineGraph> BuildGraph(const PipelineDefinition& pipeline);

// The graph as text (one line per dataset: kind, name, what it reads), Graphviz dot, or JSON
// ({"pipeline", "datasets": [{"name", "kind", "place", "flows", "reads", "external"}]}).
std::string GraphText(const PipelineDefinition& pipeline, const PipelineGraph& graph);
std::string GraphDot(const PipelineDefinition& pipeline, const PipelineGraph& graph);
std::string GraphJson(const PipelineDefinition& pipeline, const PipelineGraph& graph);

}  // namespace basin::pipeline
