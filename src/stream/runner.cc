#include "stream/runner.h"

#include <algorithm>
#include <chrono>
#include <future>
#include <map>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include "common/task_thread.h"
#include "common/uuid.h"
#include "engine/stream_calls.h"
#include "sql/grammar/parse.h"
#include "sql/statements.h"
#include "storage/prefixed_object_store.h"
#include "stream/compactor.h"
#include "stream/dead_letters.h"
#include "stream/query_columns.h"
#include "stream/source.h"
#include "stream/stateful.h"

namespace basin::stream {
namespace {

using json = nlohmann::json;

// The stream's statement, as the runner needs it.
struct StreamStatement {
  std::string text;
  sql::grammar::ParsedStatement parsed;  // `text`'s, parsed once: every batch runs it
  catalog::TableEntry sink;
  bool complete = false;                            // INSERT OVERWRITE: each batch rewrites the sink
  std::vector<sql::grammar::StreamSource> sources;  // in the order written (their index)
  // With a WATERMARK, or complete over Kafka or files: state (stream/stateful.h), and the
  // statement and its query reading kStreamInput in place of the source.
  bool stateful = false;
  std::string stateful_text;
  sql::grammar::ParsedStatement stateful_parsed;
  std::string stateful_query;
};

// The rows the sink of an INSERT (its query) or a MERGE (its source) takes, with the CTEs.
std::string QueryOf(const sql::grammar::Insert* insert, const sql::grammar::Merge* merge) {
  const std::string& ctes = insert != nullptr ? insert->insert.ctes : merge->merge.ctes;
  std::string query = insert != nullptr ? insert->insert.query : "SELECT * FROM " + merge->merge.source;
  if (!ctes.empty()) query = ctes + " SELECT * FROM (" + query + "\n)";
  return query;
}

// The sink and the query that reads the stream (for binding) of an INSERT ... SELECT ...
// FROM STREAM ... or a MERGE INTO ... USING (... STREAM ...).
// `cdc`: the statement's source is read into state (an AUTO CDC flow's MERGE).
Result<StreamStatement> ReadStatement(sql::Session& session, const std::string& text, bool cdc) {
  ASSIGN_OR_RETURN(sql::grammar::ParsedStatement parsed, sql::grammar::ParseStatement(text));
  const auto* insert = std::get_if<sql::grammar::Insert>(&parsed.body);
  const auto* merge = std::get_if<sql::grammar::Merge>(&parsed.body);
  if (insert == nullptr && merge == nullptr) {
    return Status::InvalidArgument(
        "a stream is an INSERT INTO, INSERT OVERWRITE or MERGE INTO a table reading FROM STREAM "
        "read_kafka(...) or STREAM(table); got: " +
        text);
  }
  const auto& streams = parsed.streams.empty() && insert != nullptr ? insert->query_streams : parsed.streams;
  if (streams.empty()) {
    return Status::InvalidArgument(
        "the stream's statement reads no STREAM source (write FROM STREAM read_kafka(...) or FROM "
        "STREAM(table))");
  }
  if (insert != nullptr && (insert->replace_where || !insert->partitions.empty())) {
    return Status::NotImplemented(
        "a stream appends, merges or rewrites its whole sink: REPLACE WHERE and PARTITION (...) sinks");
  }
  const engine::SqlTableName& target = insert != nullptr ? insert->insert.target : merge->merge.target.name;
  ASSIGN_OR_RETURN(std::optional<catalog::TableEntry> sink, sql::LookupTarget(session.context(), target));
  if (!sink) return Status::NotFound("the stream's sink " + target.table + " is not a warehouse table");
  const bool complete = insert != nullptr && insert->overwrite;
  StreamStatement statement{text, parsed, std::move(*sink), complete, streams, false, "", {}, ""};
  const sql::grammar::StreamSource& first = streams[0];
  const bool table_source = first.is_table || first.is_changes;
  // A complete sink over a table reads the table's snapshot; over another source, its state.
  statement.stateful = cdc || first.watermark || (complete && !table_source);
  if (streams.size() > 1) {
    if (engine::JoinsStreamSources(QueryOf(insert, merge))) {
      return Status::NotImplemented(
          "a stream joining two STREAM sources: without state, each batch would match only the rows that "
          "arrived in that batch; combine them with UNION ALL, or join a STREAM source with tables");
    }
    for (const sql::grammar::StreamSource& source : streams) {
      if (source.watermark || complete) {
        return Status::NotImplemented(
            "a stream reading several STREAM sources appends or merges each batch's new rows of them all; a "
            "WATERMARK or an INSERT OVERWRITE sink takes one STREAM source");
      }
    }
  }
  if (!statement.stateful) return statement;
  if (complete && table_source) {
    return Status::NotImplemented(
        "a stream with a WATERMARK appends or merges: INSERT OVERWRITE sinks over a table, which read its "
        "whole snapshot");
  }
  ASSIGN_OR_RETURN(statement.stateful_text, sql::grammar::ReplaceStreamSources(text, kStreamInput));
  ASSIGN_OR_RETURN(statement.stateful_parsed, sql::grammar::ParseStatement(statement.stateful_text));
  const sql::grammar::StatementBody& stateful = statement.stateful_parsed.body;
  statement.stateful_query =
      QueryOf(std::get_if<sql::grammar::Insert>(&stateful), std::get_if<sql::grammar::Merge>(&stateful));
  return statement;
}

}  // namespace

int StreamSessionThreads() { return std::max(1, static_cast<int>(std::thread::hardware_concurrency()) - 1); }

Result<Trigger> ParseTrigger(const std::string& name) {
  if (name == "available-now") return Trigger::kAvailableNow;
  if (name == "once") return Trigger::kOnce;
  if (name == "continuous") return Trigger::kContinuous;
  return Status::InvalidArgument("--trigger must be available-now, once or continuous, got '" + name + "'");
}

struct StreamRunner::Impl {
  sql::Session* session = nullptr;
  std::shared_ptr<const Clock> clock;
  StreamStatement statement;
  std::unique_ptr<StreamCheckpoint> checkpoint;
  // A STREAM source of the statement, with the writer of its dead letters.
  struct Source {
    std::unique_ptr<DeadLetterWriter> dead_letters;
    std::unique_ptr<BatchSource> reader;
  };
  std::vector<Source> sources;           // by index
  std::unique_ptr<StatefulInput> state;  // when statement.stateful (of its one source)
  // The last batch's retention deletes, or the commit marker of the last batch of a stretch,
  // written off the batch's path (its rows are visible once the sink commits) while the next
  // batch is planned and runs.
  std::shared_future<Status> recording;
  // The last batch this run committed while its marker is not written: the next batch's
  // offsets record its commit instead (kPreviousCommitField), and the marker is written
  // when a plan finds nothing new after it or the run ends, so that a stream committing
  // batch after batch writes one object less per batch.
  std::optional<BatchCommit> unmarked;
  // Where the next batch starts when this run committed the last one, or found nothing new
  // since: what Recover() would read back from the folder and the sink (Recover() also
  // copes with that batch's marker still being written).
  std::optional<Recovery> next;
  // The last plan found something new: the next batch is planned ahead (RunPlannedAhead),
  // where an idle stream's polls plan first and start no statement.
  bool found_rows = false;
  // The columns of the batches' write queries, described once while their sources' keys
  // stay the same.
  QueryColumns query_columns{
      [this](const std::string& query) { return session->connection().DescribeQuery(query); }};
  // The threads that write a batch's offsets (while it runs) and its commit marker (while
  // the next one runs), kept for the run: starting two threads a batch was part of a
  // one-record batch's fixed cost. Last: destroyed first, after the writes given to them.
  TaskThread offsets_writer{1};
  TaskThread marker_writer{1};
  // Where a batch is planned while its statement starts (RunPlannedAhead).
  TaskThread planner{1};
  std::unique_ptr<SinkCompactor> compactor;

  ~Impl() {
    (void)MarkLast();
    (void)Settle();
  }

  // Whether the stream's batches may be planned ahead (RunPlannedAhead), their sources
  // permitting: one source, and no state to prepare before a batch reads.
  bool OneStatelessSource() const { return sources.size() == 1 && !state; }

  // Waits for the last batch's marker. When it failed, the next batch recovers from the
  // folder and the sink (which write the marker again).
  Status Settle() {
    if (!recording.valid()) return Status::OK();
    Status recorded = recording.get();
    recording = {};
    if (!recorded.ok()) next.reset();
    return recorded;
  }

  // Starts writing the marker of the last batch this run committed, when it is not written.
  Status MarkLast() {
    if (!unmarked) return Status::OK();
    RETURN_IF_ERROR(Settle());
    recording = marker_writer.Submit([this, commit = *unmarked] { return checkpoint->WriteCommit(commit); });
    unmarked.reset();
    return Status::OK();
  }

  std::string Where() const { return "stream " + checkpoint->metadata().stream_id; }

  // The columns of a write's `query` in the batch being read (QueryColumns).
  Result<std::vector<engine::ColumnType>> DescribeSource(const std::string& query) {
    std::optional<std::vector<std::string>> key(std::in_place);
    for (const Source& source : sources) {
      std::optional<std::string> columns = source.reader->ColumnsKey();
      if (!columns) {
        key.reset();
        break;
      }
      key->push_back(std::move(*columns));
    }
    return query_columns.Of(query, key);
  }

  // The sink's txn version for this stream.
  Result<std::optional<int64_t>> SinkTxnVersion() {
    ASSIGN_OR_RETURN(auto snapshot, session->context().LoadTable(statement.sink.location));
    auto it = snapshot->set_transactions.find(checkpoint->metadata().stream_id);
    if (it == snapshot->set_transactions.end()) return std::optional<int64_t>();
    return std::optional<int64_t>(it->second.version);
  }

  // The sources' entries in offsets/<N>.json, by index.
  Result<std::vector<json>> SourceEntries(const json& offsets, const std::string& where) const {
    if (!offsets.is_object() || !offsets.contains("sources") || !offsets["sources"].is_array()) {
      return Status::Corruption(where + ": expected \"sources\"");
    }
    const json& listed = offsets["sources"];
    if (listed.size() != sources.size()) {
      return Status::InvalidArgument(where + ": the checkpoint's batches read " +
                                     std::to_string(listed.size()) + " STREAM sources and the statement " +
                                     std::to_string(sources.size()) +
                                     "; a statement that reads other sources needs a new checkpoint folder");
    }
    std::vector<json> entries;
    for (size_t i = 0; i < listed.size(); i++) {
      if (!listed[i].is_object() || listed[i].value("index", int64_t{-1}) != static_cast<int64_t>(i)) {
        return Status::Corruption(where + ": source " + std::to_string(i) +
                                  " is not an object with \"index\": " + std::to_string(i));
      }
      entries.push_back(listed[i]);
    }
    return entries;
  }

  // Whether a source's entry is idle: it read nothing in its batch, which another source's
  // new rows made (docs/stream-checkpoints.md).
  static bool Idle(const json& entry) { return entry.value("idle", false); }

  // Where a source's entry leaves it, as its next plan starts from: the entry, or for an
  // idle one, the entry it kept (nullopt: none yet).
  static std::optional<json> Position(const json& entry) {
    if (!Idle(entry)) return entry;
    if (!entry.contains("after") || entry["after"].is_null()) return std::nullopt;
    return entry["after"];
  }

  // Runs `run` with every source reading its entry of the batch.
  Status ReadSources(const std::vector<json>& entries, BatchRead& read, const std::function<Status()>& run) {
    auto one = [&](size_t i, const std::function<Status()>& rest) {
      BatchSource& source = *sources[i].reader;
      const json& entry = entries[i];
      return Idle(entry) ? source.ReadNothing(Position(entry), read, rest) : source.Read(entry, read, rest);
    };
    return WithNestedReads(sources.size(), one, run);
  }

  // offsets/<batch_id>.json of a batch whose sources read `entries`, with `before` when it
  // is the unmarked commit of the batch before.
  json PlannedOffsets(int64_t batch_id, json entries, const std::optional<BatchCommit>& before) const {
    json offsets{{"batchId", batch_id}, {"plannedTime", clock->NowMs()}, {"sources", std::move(entries)}};
    if (before && before->batch_id == batch_id - 1) offsets[kPreviousCommitField] = CommitJson(*before);
    return offsets;
  }

  // Starts writing `offsets` as batch `batch_id`'s, while the batch reads and writes its data
  // files: its commits wait for them (an fsynced put's time off each batch).
  std::shared_future<Status> RecordOffsets(int64_t batch_id, json offsets) {
    return offsets_writer.Submit([this, batch_id, offsets = std::move(offsets)] {
      return checkpoint->WriteOffsets(batch_id, offsets);
    });
  }

  // Runs `run` with the batch's sources read around it.
  using SourcesRead = std::function<Status(BatchRead&, const std::function<Status()>&)>;

  // Runs batch `batch_id` over `offsets` (`entries` its sources') and starts recording its
  // commit. `offsets_durable`, when set, returns once the offsets are recorded (they are
  // being written meanwhile): nothing the batch writes commits before, nor is the batch
  // marked done.
  Result<BatchCommit> Execute(int64_t batch_id, const json& offsets, const std::vector<json>& entries,
                              const CancellationToken* abandon,
                              const std::function<Status()>& offsets_durable) {
    ASSIGN_OR_RETURN(BatchCommit commit, RunStatement(
                                             batch_id,
                                             [&](BatchRead& read, const std::function<Status()>& run) {
                                               return ReadSources(entries, read, run);
                                             },
                                             abandon, offsets_durable));
    return Committed(std::move(commit), offsets, entries);
  }

  // Runs batch `batch_id`'s statement with its sources read by `read_sources`, committing
  // after `offsets_durable` (as Execute). The commit's rows_in is for Committed() to count.
  Result<BatchCommit> RunStatement(int64_t batch_id, const SourcesRead& read_sources,
                                   const CancellationToken* abandon,
                                   const std::function<Status()>& offsets_durable) {
    const int64_t started = clock->NowMs();
    const std::string& id = checkpoint->metadata().stream_id;
    std::optional<engine::QueryResult> row;
    BatchRead read;
    read.batch_id = batch_id;
    read.abandon = abandon;
    // Before anything the batch writes commits: its offsets are durable, and what its sources
    // commit first (their dead letters) is committed.
    session->GateCommits([&read, &offsets_durable]() -> Status {
      if (offsets_durable) RETURN_IF_ERROR(offsets_durable());
      return read.BeforeCommit();
    });
    session->LayOutFiles(kBatchFileLayout);
    session->DescribeSourcesWith(
        [this](const std::string& source_sql) { return DescribeSource(source_sql); });
    Status ran = read_sources(read, [&] {
      return WithStreamsAllowed(*session, [&]() -> Status {
        // First: its late rows' dead letters are committed with a txn of their own.
        Status prepared = state ? state->Prepare(read, *sources[0].dead_letters) : Status::OK();
        Result<sql::StatementResult> result =
            prepared.ok() ? session->ExecuteParsed(state ? statement.stateful_parsed : statement.parsed,
                                                   delta::SetTransaction{id, batch_id, std::nullopt})
                          : Result<sql::StatementResult>(prepared);
        const Status finished = state ? state->Finish() : Status::OK();
        RETURN_IF_ERROR(result.status());
        RETURN_IF_ERROR(finished);
        row = std::move(result->result);
        return Status::OK();
      });
    });
    session->GateCommits(nullptr);
    session->LayOutFiles({});
    session->DescribeSourcesWith(nullptr);
    if (ran.ok() && offsets_durable) ran = offsets_durable();  // a batch that committed nothing
    RETURN_IF_ERROR(ran.WithContext(Where() + " batch " + std::to_string(batch_id)));
    BatchCommit commit;
    commit.batch_id = batch_id;
    commit.dead_letters = read.dead_letters;
    commit.dead_letter_version = read.dead_letter_version;
    commit.late_rows = read.late_rows;
    commit.source_time_ms = read.source_time_ms;
    if (auto rows = ReportedInteger(*row, "num_affected_rows")) commit.rows_out = *rows;
    if (auto version = ReportedInteger(*row, "version")) commit.table_version = *version;
    commit.committed_time_ms = clock->NowMs();
    commit.duration_ms = commit.committed_time_ms - started;
    return commit;
  }

  // Counts what `commit` read (`entries`, its sources' in `offsets`), and starts recording it.
  Result<BatchCommit> Committed(BatchCommit commit, const json& offsets, const std::vector<json>& entries) {
    for (size_t i = 0; i < sources.size(); i++) {
      if (!Idle(entries[i])) commit.rows_in += sources[i].reader->RecordsIn(entries[i]);
    }
    RETURN_IF_ERROR(Settle());
    const int64_t batch_id = commit.batch_id;
    next = Recovery{Recovery::Action::kPlan, batch_id + 1, std::nullopt, offsets};
    found_rows = true;
    unmarked = commit;
    recording = marker_writer.Submit(
        [this, batch_id] { return checkpoint->Expire(batch_id + 1 - kRetainedBatches, /*sweep=*/false); });
    commit.notice = compactor->TakeNotice();
    if ((batch_id + 1) % kCompactEveryBatches == 0) compactor->Request();
    return commit;
  }

  // Runs batch `batch_id` of the statement's one source, planned after `after` on the
  // planning thread while the statement starts (BatchSource::ReadAhead: a Kafka plan's round
  // trip to the broker overlaps with the statement's parsing and binding); the offsets are
  // written once planned, and the batch's commits wait for them as Execute's do. nullopt
  // when the plan found nothing new: the statement then stopped where it would have read.
  Result<std::optional<BatchCommit>> RunPlannedAhead(int64_t batch_id, const std::optional<json>& after,
                                                     const CancellationToken* abandon) {
    struct Planned {
      std::optional<json> offsets;          // offsets/<batch_id>.json, when there is something to read
      std::shared_future<Status> recorded;  // their write, once planned
    };
    auto planned = std::make_shared<Planned>();
    BatchSource& source = *sources[0].reader;
    const std::shared_future<Status> planning =
        planner.Submit([this, &source, planned, batch_id, after, before = unmarked]() -> Status {
          ASSIGN_OR_RETURN(std::optional<json> entry, source.Plan(after));
          if (!entry) return Status::OK();
          (*entry)["index"] = 0;
          planned->offsets = PlannedOffsets(batch_id, json::array({*std::move(entry)}), before);
          planned->recorded = RecordOffsets(batch_id, *planned->offsets);
          return Status::OK();
        });
    auto entry = [planning, planned]() -> Result<std::optional<json>> {
      RETURN_IF_ERROR(planning.get());
      if (!planned->offsets) return std::optional<json>();
      return std::optional<json>((*planned->offsets)["sources"][0]);
    };
    auto durable = [planning, planned]() -> Status {
      RETURN_IF_ERROR(planning.get());
      if (!planned->offsets) return Status::Internal("a batch whose plan found nothing new came to commit");
      return planned->recorded.get();
    };
    Result<BatchCommit> commit = RunStatement(
        batch_id,
        [&](BatchRead& read, const std::function<Status()>& run) {
          return source.ReadAhead(entry, read, run);
        },
        abandon, durable);
    // The plan and the offsets' write end before the batch does, whatever happened.
    const Status plan = planning.get();
    if (planned->recorded.valid()) planned->recorded.wait();
    RETURN_IF_ERROR(plan);
    if (!planned->offsets) return std::optional<BatchCommit>();
    RETURN_IF_ERROR(commit.status());
    const json& offsets = *planned->offsets;
    ASSIGN_OR_RETURN(BatchCommit done, Committed(*std::move(commit), offsets, {offsets["sources"][0]}));
    return std::optional<BatchCommit>(std::move(done));
  }

  // After a plan of `recovery` found nothing new: the next poll plans the same batch from
  // what the run holds, without reading the folder and the sink again, and the batch before
  // gets its marker.
  Status FoundNothing(const Recovery& recovery) {
    next = Recovery{Recovery::Action::kPlan, recovery.batch_id, std::nullopt, recovery.previous};
    found_rows = false;
    return MarkLast();
  }

  // Marks batch `batch_id` done, which the sink's txn says committed: with its figures when
  // this run committed it, else without (it committed before a crash).
  Status RecordFoundCommit(int64_t batch_id) {
    BatchCommit commit;
    if (unmarked && unmarked->batch_id == batch_id) {
      commit = *unmarked;
    } else {
      commit.batch_id = batch_id;
      commit.committed_time_ms = clock->NowMs();
    }
    unmarked.reset();
    RETURN_IF_ERROR(checkpoint->WriteCommit(commit));
    return checkpoint->Expire(batch_id + 1 - kRetainedBatches, /*sweep=*/false);
  }
};

StreamRunner::StreamRunner(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
StreamRunner::~StreamRunner() = default;

const StreamMetadata& StreamRunner::metadata() const { return impl_->checkpoint->metadata(); }
std::optional<int64_t> StreamRunner::Backlog() const {
  std::optional<int64_t> backlog;  // what the sources that can tell hold
  for (const Impl::Source& source : impl_->sources) {
    if (std::optional<int64_t> held = source.reader->Backlog()) backlog = backlog.value_or(0) + *held;
  }
  return backlog;
}

Result<std::unique_ptr<StreamRunner>> StreamRunner::Open(sql::Session& session,
                                                         std::shared_ptr<ObjectStore> checkpoint,
                                                         const std::string& statement,
                                                         std::shared_ptr<const Clock> clock) {
  return OpenWith(session, std::move(checkpoint), statement, std::move(clock), nullptr);
}

Result<std::unique_ptr<StreamRunner>> StreamRunner::OpenCdc(sql::Session& session,
                                                            std::shared_ptr<ObjectStore> checkpoint,
                                                            const CdcPlan& plan,
                                                            std::shared_ptr<const Clock> clock) {
  return OpenWith(session, std::move(checkpoint), plan.statement, std::move(clock), &plan);
}

Result<std::unique_ptr<StreamRunner>> StreamRunner::OpenWith(sql::Session& session,
                                                             std::shared_ptr<ObjectStore> checkpoint,
                                                             const std::string& statement,
                                                             std::shared_ptr<const Clock> clock,
                                                             const CdcPlan* cdc) {
  auto impl = std::make_unique<Impl>();
  impl->session = &session;
  impl->clock = std::move(clock);
  ASSIGN_OR_RETURN(impl->statement, ReadStatement(session, statement, cdc != nullptr));
  sql::SessionOptions compaction = session.options();
  compaction.snapshots = session.snapshot_cache();
  impl->compactor = std::make_unique<SinkCompactor>(std::move(compaction), impl->statement.sink.name,
                                                    impl->statement.sink.location);
  StreamMetadata proposed;
  proposed.stream_id = NewUuid();
  proposed.created_time_ms = impl->clock->NowMs();
  proposed.statement = statement;
  proposed.sink_table = impl->statement.sink.name.ToString();
  proposed.sink_location = impl->statement.sink.location;
  // The sources are opened before a new checkpoint is written, so that a statement whose
  // source is refused (a bad option) leaves no stream behind to refuse its correction.
  Result<std::unique_ptr<StreamCheckpoint>> existing = StreamCheckpoint::OpenExisting(checkpoint);
  if (!existing.ok() && !existing.status().IsNotFound()) return existing.status();
  const std::string stream_id = existing.ok() ? (*existing)->metadata().stream_id : proposed.stream_id;
  const std::vector<sql::grammar::StreamSource>& streams = impl->statement.sources;
  for (const sql::grammar::StreamSource& stream : streams) {
    const std::string index = std::to_string(stream.index);
    Impl::Source source;
    source.dead_letters = std::make_unique<DeadLetterWriter>(session, stream_id, stream.index);
    ASSIGN_OR_RETURN(
        source.reader,
        OpenBatchSource(session, stream, StreamSink{impl->statement.sink.location, impl->statement.complete},
                        *source.dead_letters, NewPrefixedObjectStore(checkpoint, "sources/" + index),
                        "stream " + stream_id + (streams.size() > 1 ? " source " + index : "")));
    impl->sources.push_back(std::move(source));
  }
  if (cdc != nullptr) {
    impl->state = std::make_unique<CdcApplier>(session.connection(), *cdc, streams[0].relation,
                                               NewPrefixedObjectStore(checkpoint, "state"), impl->clock,
                                               "AUTO CDC into " + impl->statement.sink.name.ToString());
  } else if (impl->statement.stateful) {
    ASSIGN_OR_RETURN(impl->state,
                     StreamState::Open(session.connection(), streams[0], impl->statement.stateful_query,
                                       impl->statement.complete, NewPrefixedObjectStore(checkpoint, "state"),
                                       "stream " + stream_id));
  }
  ASSIGN_OR_RETURN(impl->checkpoint, StreamCheckpoint::Open(std::move(checkpoint), proposed));
  if (impl->checkpoint->metadata().stream_id != stream_id) {
    return Status::Conflict("stream " + impl->checkpoint->metadata().stream_id +
                            ": another process created this checkpoint folder at the same time; run again");
  }
  // What crashes (or an earlier Basin) left beyond the retained batches.
  ASSIGN_OR_RETURN(std::optional<int64_t> planned, impl->checkpoint->LatestPlanned());
  if (planned) RETURN_IF_ERROR(impl->checkpoint->Expire(*planned + 1 - kRetainedBatches, /*sweep=*/true));
  return std::unique_ptr<StreamRunner>(new StreamRunner(std::move(impl)));
}

Result<std::optional<BatchCommit>> StreamRunner::RunBatch(const CancellationToken* abandon) {
  Impl& s = *impl_;
  for (;;) {
    Recovery recovery;
    // The run committed the batch before: its sources are likely to have more.
    const bool continuing = s.next.has_value() && s.found_rows;
    if (s.next) {
      recovery = std::move(*s.next);
      s.next.reset();  // a batch that fails is recovered from the folder and the sink
    } else {
      (void)s.Settle();  // what it failed to write, the recovery writes
      ASSIGN_OR_RETURN(std::optional<int64_t> txn, s.SinkTxnVersion());
      ASSIGN_OR_RETURN(recovery, s.checkpoint->Recover(txn));
    }
    const std::string where = s.Where() + " " + StreamCheckpoint::OffsetsKey(recovery.batch_id);
    switch (recovery.action) {
      case Recovery::Action::kRecordCommit: {
        RETURN_IF_ERROR(s.RecordFoundCommit(recovery.batch_id));
        continue;
      }
      case Recovery::Action::kRerun: {
        ASSIGN_OR_RETURN(std::vector<json> entries, s.SourceEntries(*recovery.planned, where));
        ASSIGN_OR_RETURN(BatchCommit commit,
                         s.Execute(recovery.batch_id, *recovery.planned, entries, abandon, nullptr));
        return std::optional<BatchCommit>(commit);
      }
      case Recovery::Action::kPlan: {
        std::vector<json> previous;  // none: the stream's first batch
        if (recovery.previous) {
          ASSIGN_OR_RETURN(previous, s.SourceEntries(*recovery.previous, s.Where() + " previous offsets"));
        }
        if (continuing && s.OneStatelessSource() && s.sources[0].reader->PlansAhead()) {
          ASSIGN_OR_RETURN(std::optional<BatchCommit> ahead,
                           s.RunPlannedAhead(recovery.batch_id, Impl::Position(previous[0]), abandon));
          if (!ahead) RETURN_IF_ERROR(s.FoundNothing(recovery));
          return ahead;
        }
        // A batch runs when one source has something new; the others read nothing in it.
        std::vector<json> entries;
        bool fresh = false;
        for (size_t i = 0; i < s.sources.size(); i++) {
          const std::optional<json> after = previous.empty() ? std::nullopt : Impl::Position(previous[i]);
          ASSIGN_OR_RETURN(std::optional<json> entry, s.sources[i].reader->Plan(after));
          fresh = fresh || entry.has_value();
          if (!entry) entry = json{{"idle", true}, {"after", after.value_or(json(nullptr))}};
          (*entry)["index"] = i;
          entries.push_back(std::move(*entry));
        }
        if (!fresh) {
          RETURN_IF_ERROR(s.FoundNothing(recovery));
          return std::optional<BatchCommit>();
        }
        const json planned = s.PlannedOffsets(recovery.batch_id, entries, s.unmarked);
        std::shared_future<Status> recorded = s.RecordOffsets(recovery.batch_id, planned);
        Result<BatchCommit> commit =
            s.Execute(recovery.batch_id, planned, entries, abandon, [recorded] { return recorded.get(); });
        recorded.wait();  // the write ends before the batch does, whatever happened
        RETURN_IF_ERROR(commit.status());
        return std::optional<BatchCommit>(*std::move(commit));
      }
    }
  }
}

void StreamRunner::Idle() {
  for (Impl::Source& source : impl_->sources) source.reader->Idle();
}

Status StreamRunner::Run(const RunOptions& options) {
  for (Impl::Source& source : impl_->sources) {
    source.reader->CapAtCurrentEnd(options.trigger == Trigger::kAvailableNow);
    // RunBatch plans such runs' batches ahead, where an early read is taken.
    source.reader->ReadNextEarly(impl_->OneStatelessSource() && options.trigger != Trigger::kOnce);
  }
  auto cancelled = [&] { return options.cancellation != nullptr && options.cancellation->cancelled(); };
  while (!cancelled()) {
    const auto started = std::chrono::steady_clock::now();
    ASSIGN_OR_RETURN(std::optional<BatchCommit> batch, RunBatch(options.abandon));
    if (options.on_batch) options.on_batch(batch);
    if (options.trigger == Trigger::kOnce || (options.trigger == Trigger::kAvailableNow && !batch)) break;
    if (options.trigger != Trigger::kContinuous) continue;
    const auto spent =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
    const auto wait = std::chrono::milliseconds(options.interval_ms) - spent;
    if (wait.count() <= 0) continue;
    Idle();
    if (options.cancellation != nullptr) {
      options.cancellation->WaitFor(wait);
    } else {
      std::this_thread::sleep_for(wait);
    }
  }
  RETURN_IF_ERROR(impl_->MarkLast());  // the run's last batch
  return impl_->Settle();
}

}  // namespace basin::stream
