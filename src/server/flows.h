// The streams and pipelines `basin serve` runs (ServerOptions::streams, ::pipelines): each
// flow on a thread of its own with its own session (basin::Stream, basin::Pipeline, run
// continuously), stopped and started by name (the HTTP API's /api/v1/flows), with its
// figures kept for the API and for metrics.
//
// A flow that fails stops alone: it is FAILED with its error, and stays so until it is
// started again (no automatic restart: a batch that fails mostly fails again until someone
// changes something). Starting a flow opens it anew from its checkpoint, so a flow stopped,
// failed or killed resumes exactly where its last committed batch ended.
//
// Thread safety: every method may be called from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "basin/pipeline.h"
#include "basin/server.h"
#include "basin/status.h"
#include "basin/stream.h"
#include "common/metrics.h"
#include "security/users.h"

namespace basin::server {

enum class FlowKind { kStream, kPipeline };
enum class FlowState { kRunning, kStopped, kFailed };

std::string_view FlowKindName(FlowKind kind);     // "stream", "pipeline"
std::string_view FlowStateName(FlowState state);  // "RUNNING", "STOPPED", "FAILED"

// What a flow did since the server started: one struct per flow, updated from its runner's
// batch callback, read by GET /api/v1/flows and by a metrics export.
// Observed times as a histogram's counts per bucket of metrics::LatencyBucketsSeconds()
// (and +Inf), with their sum.
struct TimeBuckets {
  std::vector<uint64_t> counts;
  int64_t sum_ms = 0;
  void Observe(int64_t ms);
};

struct FlowFigures {
  int64_t batches = 0;       // batches committed
  int64_t rows_in = 0;       // records the sources offered (Kafka offsets; 0 from tables)
  int64_t rows_out = 0;      // rows the sinks got
  int64_t dead_letters = 0;  // records that did not parse
  int64_t failures = 0;      // runs that ended in an error
  // Batches by duration (durations.sum_ms: all batches' time), and by end-to-end latency
  // (StreamBatch::end_to_end_ms; only those whose sources could tell).
  TimeBuckets durations;
  TimeBuckets end_to_end;

  // The last batch that committed: a stream's, or the last pipeline flow that wrote.
  std::optional<int64_t> last_batch_id;  // streams only
  std::optional<int64_t> table_version;  // streams only: the sink's version it committed
  int64_t last_rows_in = 0;
  int64_t last_rows_out = 0;
  int64_t last_duration_ms = 0;
  std::optional<int64_t> last_end_to_end_ms;
  // Records the sources held beyond the last batch (a pipeline: summed over its streaming
  // flows), when they can tell.
  std::optional<int64_t> lag;
};

// A stream's committed batch, added to `figures`.
void AddStreamBatch(const StreamBatch& batch, FlowFigures& figures);
// One pipeline flow's run (one pass of a continuous pipeline), added to `figures`.
void AddPipelineFlowRun(const PipelineFlowRun& run, FlowFigures& figures);

struct FlowStatus {
  std::string name;
  FlowKind kind = FlowKind::kStream;
  FlowState state = FlowState::kStopped;
  std::string sink;       // a stream's sink table (known once it opened); empty for pipelines
  std::string event_log;  // a pipeline's event log table, "schema.table"; empty for streams
  FlowFigures figures;
  Status error;  // why it is FAILED; OK otherwise
};

// The basin_flow_* families of GET /metrics (docs/server.md "Metrics") for `flows`.
std::vector<metrics::FamilySamples> FlowFamilies(const std::vector<FlowStatus>& flows);

class Flow;

class FlowSet {
 public:
  // The flows of `options`, none running yet. InvalidArgument for a stream's name that is
  // not an identifier, two flows of one name, streams without a checkpoint root; a pipeline
  // folder's errors as ReadPipelineGraph gives them; InvalidArgument when there are flows and
  // options.flow_owner is no user in `users`. Each flow's sessions run as that owner, and
  // read tables through `tables` (the server's, which its connections share). `log` hears
  // of flows that start, stop and fail.
  static Result<std::unique_ptr<FlowSet>> Open(const ServerOptions& options, const security::UserStore& users,
                                               std::function<void(const std::string&)> log,
                                               std::shared_ptr<TableCache> tables);
  ~FlowSet();  // Close(), then Join()
  FlowSet(const FlowSet&) = delete;
  FlowSet& operator=(const FlowSet&) = delete;

  // Starts every flow. A flow that cannot open (its sink missing) is FAILED, not an error
  // here; Cancelled after Close().
  Status StartAll();

  std::vector<FlowStatus> List() const;
  // NotFound when no flow has that name.
  Result<FlowStatus> Get(const std::string& name) const;
  // Stops the flow after its batch in flight (that batch commits, or fails whole and runs
  // again at the next start) and returns once it has stopped. A flow that is not running
  // is left as it is.
  Result<FlowStatus> StopFlow(const std::string& name);
  // Starts a STOPPED or FAILED flow again from its checkpoint; a running one is left as it
  // is. Cancelled after Close().
  Result<FlowStatus> StartFlow(const std::string& name);

  // Asks every flow to stop after its batch in flight, and refuses StartFlow from now on.
  // Does not wait.
  void Close();
  // Returns once every flow's thread has ended.
  void Join();

 private:
  FlowSet() = default;
  Result<Flow*> Find(const std::string& name) const;

  std::vector<std::unique_ptr<Flow>> flows_;
  std::atomic<bool> closed_{false};
};

}  // namespace basin::server
