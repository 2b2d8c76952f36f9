// basin::Stream (include/basin/stream.h) over stream::StreamRunner.
#include "basin/stream.h"

#include "api/table_cache.h"
#include "basin/clock.h"
#include "basin/object_store.h"
#include "common/cancellation.h"
#include "sql/session.h"
#include "stream/kafka/read_kafka.h"
#include "stream/runner.h"

namespace basin {
namespace {

StreamBatch BatchOf(const stream::BatchCommit& commit) {
  StreamBatch batch;
  batch.batch_id = commit.batch_id;
  batch.rows_in = commit.rows_in;
  batch.rows_out = commit.rows_out;
  batch.duration_ms = commit.duration_ms;
  batch.table_version = commit.table_version;
  batch.dead_letters = commit.dead_letters;
  batch.late_rows = commit.late_rows;
  batch.end_to_end_ms = stream::EndToEndMs(commit);
  batch.notice = commit.notice;
  return batch;
}

}  // namespace

struct Stream::Impl {
  StreamOptions options;
  stream::Trigger trigger = stream::Trigger::kContinuous;
  std::unique_ptr<sql::Session> session;
  std::unique_ptr<stream::StreamRunner> runner;
  CancellationToken stop;
  CancellationToken abandon;
};

Stream::Stream(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Stream::~Stream() = default;

Result<std::unique_ptr<Stream>> Stream::Open(const StreamOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  ASSIGN_OR_RETURN(impl->trigger, stream::ParseTrigger(options.trigger));
  if (options.interval_ms < 0) return Status::InvalidArgument("the stream's interval must not be negative");
  if (options.checkpoint.empty()) return Status::InvalidArgument("a stream needs a checkpoint folder");
  ASSIGN_OR_RETURN(impl->session, sql::Session::Open({.warehouse_dir = options.warehouse,
                                                      .user = options.user,
                                                      .record_lineage = true,
                                                      .threads = stream::StreamSessionThreads(),
                                                      .snapshots = options.tables}));
  RETURN_IF_ERROR(stream::kafka::RegisterReadKafka(*impl->session));
  ASSIGN_OR_RETURN(auto checkpoint, OpenLocalObjectStore(options.checkpoint));
  ASSIGN_OR_RETURN(impl->runner, stream::StreamRunner::Open(*impl->session, std::move(checkpoint),
                                                            options.statement, SystemClock()));
  return std::unique_ptr<Stream>(new Stream(std::move(impl)));
}

const std::string& Stream::id() const { return impl_->runner->metadata().stream_id; }

Status Stream::Run(const std::function<void(const std::optional<StreamBatch>&)>& on_batch) {
  stream::RunOptions run;
  run.trigger = impl_->trigger;
  run.interval_ms = impl_->options.interval_ms;
  run.cancellation = &impl_->stop;
  run.abandon = &impl_->abandon;
  if (on_batch) {
    run.on_batch = [&](const std::optional<stream::BatchCommit>& commit) {
      if (!commit) return on_batch(std::nullopt);
      StreamBatch batch = BatchOf(*commit);
      batch.lag = impl_->runner->Backlog();
      on_batch(batch);
    };
  }
  return impl_->runner->Run(run);
}

void Stream::Stop() { impl_->stop.Cancel(); }

void Stream::Abandon() {
  impl_->stop.Cancel();
  impl_->abandon.Cancel();
}

Result<StreamStatus> ReadStreamStatus(const std::string& checkpoint) {
  ASSIGN_OR_RETURN(auto store, OpenLocalObjectStore(checkpoint, {.create_root = false}));
  ASSIGN_OR_RETURN(auto folder, stream::StreamCheckpoint::OpenExisting(std::move(store)));
  StreamStatus status;
  status.id = folder->metadata().stream_id;
  status.statement = folder->metadata().statement;
  status.sink_table = folder->metadata().sink_table;
  ASSIGN_OR_RETURN(status.last_planned, folder->LatestPlanned());
  ASSIGN_OR_RETURN(std::optional<stream::BatchCommit> commit, folder->NewestCommit());
  if (commit) {
    status.last_committed = commit->batch_id;
    status.last_batch = BatchOf(*commit);
    status.last_committed_time_ms = commit->committed_time_ms;
  }
  return status;
}

}  // namespace basin
