// StreamRunner: runs a stream (an INSERT whose source is `STREAM read_kafka(...)` or
// `STREAM(table)`) as a sequence of micro-batches, exactly once, with the checkpoint folder
// of docs/stream-checkpoints.md.
//
// A batch: Recover() says where to resume from the folder and the sink table's `txn` for
// the stream. A new batch is planned by the source (stream/source.h) from the previous
// batch's entry, recorded in offsets/<N>.json (put-if-absent: a second run of the stream
// loses with Conflict) while the INSERT runs with `txn(appId = stream id, version = N)`,
// the source reading exactly that entry (every commit of the batch waits for the offsets
// first: Session::GateCommits), and commits/<N>.json is written (on a thread
// the runner keeps, as it keeps one for the offsets, while the caller goes on: the next
// batch waits for it). The statement's query is described (its columns, for the write) once,
// and again only when its sources say their columns may have changed
// (BatchSource::ColumnsKey), unless it reads tables beside its STREAM sources. A run that committed
// batch N (and polled nothing new since, or not) plans N + 1 from what it holds; the folder and
// the sink are read again only when a run starts or a batch failed. When the statement's one source plans
// ahead (BatchSource::PlansAhead: Kafka without a dead-letter table), batch N + 1 is planned on a thread the
// runner keeps while its statement starts (BatchSource::ReadAhead), its offsets written once planned; a plan
// that finds nothing stops the statement before it reads. A batch planned before a crash is run again over
// its recorded entry; its commit is skipped by the txn when it had committed. A batch with nothing to read is
// not run (no offsets, no commit).
//
// Only the newest kRetainedBatches batches keep their checkpoint objects (older ones are
// dropped as batches commit, and swept when a run starts).
//
// Automatic compaction: after every kCompactEveryBatches batches the sink is compacted
// (OPTIMIZE, which Delta's conflict rules let commit beside appends) off the batches' path,
// while the next batches run (stream/compactor.h), unless its
// `delta.autoOptimize.autoCompact` property is false. A compaction that fails (a conflict
// with another writer's delete, say) never fails the stream: the notice of the next batch
// after it ended says so, and the next compaction tries again. The runner's destructor
// waits for a compaction under way.
//
// An INSERT OVERWRITE is a complete sink: each batch rewrites the sink, over a table source
// from its whole snapshot at the batch's end version, over Kafka or files from every row the
// source gave, which the state keeps (aggregates stay exact).
//
// A source with a WATERMARK keeps state between batches too (stream/stateful.h): late rows
// are set aside, and de-duplication and window aggregates see what earlier batches read.
//
// What is not here yet (issue 8): several sources in one statement.
//
// Thread safety: one thread; Run() may be stopped from any thread through its token.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "basin/clock.h"
#include "basin/object_store.h"
#include "basin/status.h"
#include "common/cancellation.h"
#include "sql/session.h"
#include "stream/cdc.h"
#include "stream/checkpoint.h"

namespace basin::stream {

inline constexpr int64_t kCompactEveryBatches = 50;

// The Parquet row groups of a batch's data files hold at most this many rows: DuckDB then
// encodes each as the batch's rows arrive (a Kafka batch's are parsed on its read thread
// meanwhile), where one row group of a whole batch was encoded once its read had ended, on
// one core, with the other idle.
inline constexpr int64_t kBatchRowGroupRows = 8'192;
// How a batch's data files are laid out: row groups of kBatchRowGroupRows, and no bloom
// filters. The sink's compaction writes them again with full row groups and bloom filters.
inline constexpr engine::FileLayout kBatchFileLayout{kBatchRowGroupRows, /*bloom_filters=*/false};

enum class Trigger {
  kAvailableNow,  // every batch up to the sources' ends at start, then stop
  kOnce,          // one batch (or none when there is nothing to read), then stop
  kContinuous,    // until cancelled, a batch every interval (or as soon as data is there)
};

// Trigger names as `basin stream run --trigger` takes them: available-now, once, continuous.
Result<Trigger> ParseTrigger(const std::string& name);

// DuckDB's threads for the session a stream runs on (sql::SessionOptions::threads): one
// fewer than the machine's cores, at least one. A batch's statement runs beside threads of
// the stream's own (a Kafka source's read and librdkafka's broker threads, the sink's
// checkpoint), and a Kafka batch's statement is one pipeline: with a DuckDB thread per core,
// the statement's calling thread spins while another DuckDB thread runs that pipeline, and
// takes a core from the read (on 2 cores, a Kafka stream ingested 0.36 of librdkafka's rate
// with two threads and 0.41 with one, stream_ingest_bench).
int StreamSessionThreads();

struct RunOptions {
  Trigger trigger = Trigger::kContinuous;
  int64_t interval_ms = 1'000;  // continuous: the least time between two batch starts
  const CancellationToken* cancellation = nullptr;
  // Cancelled: the batch in flight is abandoned at once (its source's reads end with
  // Cancelled; a commit under way still completes or fails whole), and Run returns that error.
  // The next run runs the batch again. Null for none.
  const CancellationToken* abandon = nullptr;
  // Called after every committed batch (and after each idle poll, with nullopt).
  std::function<void(const std::optional<BatchCommit>&)> on_batch;
};

class StreamRunner {
 public:
  // The stream `statement` over `session`'s warehouse, with its checkpoint in `checkpoint`
  // (a store rooted at the folder; created on first use). InvalidArgument when the
  // statement is not an INSERT or MERGE into a warehouse table reading STREAM sources, or when
  // the folder holds another statement's stream.
  static Result<std::unique_ptr<StreamRunner>> Open(sql::Session& session,
                                                    std::shared_ptr<ObjectStore> checkpoint,
                                                    const std::string& statement,
                                                    std::shared_ptr<const Clock> clock);
  // The stream of an AUTO CDC flow (stream/cdc.h): `plan`'s statement, its batches' changes
  // prepared by a CdcApplier.
  static Result<std::unique_ptr<StreamRunner>> OpenCdc(sql::Session& session,
                                                       std::shared_ptr<ObjectStore> checkpoint,
                                                       const CdcPlan& plan,
                                                       std::shared_ptr<const Clock> clock);
  ~StreamRunner();

  const StreamMetadata& metadata() const;

  // The source's lag when the last batch was planned (BatchSource::Backlog).
  std::optional<int64_t> Backlog() const;

  // Runs one batch: the one a crash left, or the next. nullopt when there was nothing to
  // read. `abandon` as RunOptions::abandon. It returns once the sink committed; the batch's
  // commit marker is written meanwhile, and is there when the next RunBatch starts, when
  // Run returns and when the runner is destroyed.
  Result<std::optional<BatchCommit>> RunBatch(const CancellationToken* abandon = nullptr);

  // The caller waits before the next RunBatch (Run does, between a continuous trigger's
  // batches): the sources let go of what they keep only for a batch that follows at once
  // (BatchSource::Idle).
  void Idle();

  // Batches as `options.trigger` says. Cancelled stops between batches (a batch in flight
  // finishes or fails; a re-run resumes it).
  Status Run(const RunOptions& options);

 private:
  struct Impl;
  static Result<std::unique_ptr<StreamRunner>> OpenWith(sql::Session& session,
                                                        std::shared_ptr<ObjectStore> checkpoint,
                                                        const std::string& statement,
                                                        std::shared_ptr<const Clock> clock,
                                                        const CdcPlan* cdc);
  explicit StreamRunner(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace basin::stream
