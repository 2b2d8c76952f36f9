// BatchSource: one STREAM source of a stream's statement, as the runner (stream/runner.h)
// plans its micro-batches and has the statement read them (a statement of several sources
// has one BatchSource each, each read through its basin_stream_source,
// engine/stream_calls.h). A batch's range is the
// source's entry in offsets/<N>.json (docs/stream-checkpoints.md): a JSON object with
// "kind" and what that kind records, written before the batch commits and read back to run it
// again after a crash, so a source must read exactly the same rows for the same entry.
//
// Thread safety: one thread (the runner's), except that a source whose PlansAhead() is true
// is planned on another thread while ReadAhead() runs (as ReadAhead says).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "basin/object_store.h"
#include "basin/status.h"
#include "common/cancellation.h"
#include "sql/grammar/statement.h"
#include "sql/session.h"

namespace basin::stream {

class DeadLetterWriter;

// The table a stream writes, as its source needs to know it.
struct StreamSink {
  std::string location;
  // INSERT OVERWRITE: every batch rewrites the sink from everything the source holds (a
  // complete output, for aggregates), instead of appending or merging what is new.
  bool complete = false;
};

// The batch a Read runs, and what the source did beside the statement.
struct BatchRead {
  int64_t batch_id = 0;
  // Cancelled when the batch is abandoned (Stream::Abandon): the source's reads end with
  // Cancelled instead of waiting. Null for none.
  const CancellationToken* abandon = nullptr;
  int64_t dead_letters = 0;                    // records the source set aside
  std::optional<int64_t> dead_letter_version;  // the dead-letter table's version that has them
  std::string dead_letter_table;               // the source's, as written; empty for none
  // The newest source data the batch read, as a time (ms since the epoch): a Kafka record's
  // timestamp, the commit time of a table source's last version, a file's modification
  // time. Unset when no source could tell. The batch's end-to-end latency runs from it.
  std::optional<int64_t> source_time_ms;
  void NoteSourceTime(std::optional<int64_t> time_ms) {
    if (time_ms) source_time_ms = std::max(source_time_ms.value_or(*time_ms), *time_ms);
  }
  int64_t late_rows = 0;  // rows behind the watermark (stream/stateful.h)
  // Set by a source while its statement runs: what must commit before anything else the
  // batch writes (a Kafka source's dead letters, which the statement's read finds). The
  // runner's commit gate calls it through BeforeCommit(), once: what it commits goes through
  // the gate too, and finds it taken.
  std::function<Status()> before_commit;
  Status BeforeCommit() {
    if (!before_commit) return Status::OK();
    return std::exchange(before_commit, nullptr)();
  }
};

class BatchSource {
 public:
  virtual ~BatchSource() = default;

  // The entry of the batch after the one whose entry is `previous` (nullopt: the stream's
  // first batch); nullopt when there is nothing new to read.
  virtual Result<std::optional<nlohmann::json>> Plan(const std::optional<nlohmann::json>& previous) = 0;

  // Runs `run` (which runs the statement on the session) with the source reading `planned`
  // as batch `batch.batch_id`. Records that do not parse go to the source's dead-letter
  // table (stream/dead_letters.h) before the batch's sink commits, and are counted in `batch`.
  virtual Status Read(const nlohmann::json& planned, BatchRead& batch,
                      const std::function<Status()>& run) = 0;

  // Whether the next Plan() may run on another thread while ReadAhead() starts the batch's
  // statement: a source that holds what its plans need (its options, its schema) and sets
  // nothing aside before the statement reads (no dead-letter table to fill first).
  virtual bool PlansAhead() const { return false; }

  // As Read(), while the batch's entry is still being planned on another thread (by Plan(),
  // when PlansAhead() said so): `planned()` waits for it (nullopt: the plan found nothing
  // new, and the statement must read nothing). The statement starts at once, so that planning
  // (a round trip to a broker) overlaps with its parsing and binding; the source waits for
  // the entry only where it needs its range.
  virtual Status ReadAhead(const std::function<Result<std::optional<nlohmann::json>>()>& planned,
                           BatchRead& batch, const std::function<Status()>& run);

  // Runs `run` with the source reading no row in batch `batch.batch_id`, its last entry
  // `previous` (nullopt: none yet): a stream of several sources runs a batch when one of
  // them has something new. InvalidArgument when the source cannot tell its columns yet (a
  // schema to infer from records it has not had).
  virtual Status ReadNothing(const std::optional<nlohmann::json>& previous, BatchRead& batch,
                             const std::function<Status()>& run) = 0;

  // What the columns the source gives the statement depend on beside the statement's text,
  // while a Read or ReadNothing runs: two batches whose sources give equal keys bind the
  // statement's query to the same columns, so the stream describes it once. nullopt when
  // the source cannot tell (a table's columns change with its schema): the query is then
  // described every batch.
  virtual std::optional<std::string> ColumnsKey() const { return std::nullopt; }

  // The records the source offers in `planned` (0 when it cannot tell before reading).
  virtual int64_t RecordsIn(const nlohmann::json& planned) const = 0;

  // The records the source held beyond what the last Plan() took, when it planned (the
  // stream's lag); nullopt when the source cannot tell, or before the first plan.
  virtual std::optional<int64_t> Backlog() const = 0;

  // Until the next call, plans end where the source ends now (trigger available-now), or,
  // with false, wherever it ends when planning.
  virtual void CapAtCurrentEnd(bool capped) = 0;

  // Whether the source may plan and start reading its next batch as soon as it has read a
  // batch's last record, while the batch's statement ends and commits, when it held more
  // than the batch took: the run then plans that batch from where this one ends (Plan) and
  // starts it with ReadAhead, which take what the source began (a run of one stateless
  // source, planning ahead, that goes on after the batch). Off until called.
  virtual void ReadNextEarly(bool /*allowed*/) {}

  // The stream waits before its next batch (a continuous trigger's interval, a pipeline's
  // pass): the source may let go of what it keeps only for a batch that follows at once.
  virtual void Idle() {}
};

// maxFilesPerTrigger and maxBytesPerTrigger as a source bounds a batch: it takes items (files,
// or commits with the files they add) in order while both bounds hold, and always its first,
// so that one item larger than a bound still moves the stream.
class BatchBound {
 public:
  BatchBound(std::optional<int64_t> max_files, std::optional<int64_t> max_bytes)
      : max_files_(max_files.value_or(std::numeric_limits<int64_t>::max())),
        max_bytes_(max_bytes.value_or(std::numeric_limits<int64_t>::max())) {}

  // Takes an item of `files` files and `bytes` bytes when it fits beside those taken (the
  // first always does); false, taking nothing, when the batch is full.
  bool Take(int64_t files, int64_t bytes) {
    if (taken_ && (files > max_files_ - files_ || bytes > max_bytes_ - bytes_)) return false;
    taken_ = true;
    files_ += files;
    bytes_ += bytes;
    return true;
  }

 private:
  int64_t max_files_, max_bytes_;
  bool taken_ = false;
  int64_t files_ = 0, bytes_ = 0;
};

// `run()` with STREAM sources allowed on `session` (Session::AllowStreams), as a batch's
// statement and its binding need.
Status WithStreamsAllowed(sql::Session& session, const std::function<Status()>& run);

// The integer a one-row statement result reports in `column` (an INSERT's
// "num_affected_rows", a write's "version"); nullopt when the result has no such value.
std::optional<int64_t> ReportedInteger(const engine::QueryResult& result, std::string_view column);

// Binds `stream`'s relation on `session` with STREAM sources allowed, reading nothing: how
// a source learns what the statement asks of it (its options, its table) from its batch
// installed meanwhile.
Status BindStreamSource(sql::Session& session, const sql::grammar::StreamSource& stream);

// The source `stream` names, read on `session` for `sink`, writing its dead letters with
// `dead_letters` and what it keeps beside the offsets (a files source's paths) in
// `source_store`, the checkpoint's sources/<index>/ folder; `where` names the source in
// messages. NotImplemented for a source the runner cannot read yet (found when the first
// batch is planned, for a function source). Only a table source reads differently for a
// complete sink (its whole snapshot); the runner's state (stream/stateful.h) gives a complete
// sink over another source every row it read.
Result<std::unique_ptr<BatchSource>> OpenBatchSource(sql::Session& session,
                                                     const sql::grammar::StreamSource& stream,
                                                     const StreamSink& sink, DeadLetterWriter& dead_letters,
                                                     std::shared_ptr<ObjectStore> source_store,
                                                     const std::string& where);

// Runs `run` inside `count` nested reads, as a statement of several STREAM sources needs:
// `read(i, rest)` runs source i's read around `rest`, which reads the sources after i and
// then runs `run`.
Status WithNestedReads(size_t count,
                       const std::function<Status(size_t, const std::function<Status()>&)>& read,
                       const std::function<Status()>& run);

// The columns of `query` (a query with STREAM sources, as a pipeline's streaming table
// declares it), learned the way a stream binds its sources, reading no row: what a sink
// created before the first batch takes. InvalidArgument naming the source when its columns
// come only from rows it has not read (Kafka JSON or files without `schema`).
Result<std::vector<engine::ColumnType>> DescribeStreamQuery(sql::Session& session,
                                                            const sql::grammar::Query& query);

}  // namespace basin::stream
