#include "stream/compactor.h"

#include <chrono>
#include <utility>

#include "commands/maintenance.h"
#include "commands/table_features.h"
#include "common/thread_priority.h"
#include "sql/session_context.h"

namespace basin::stream {

namespace {

// The stream's session's options, with one DuckDB thread: beside the batches, not in their
// cores' way.
sql::SessionOptions OneThread(sql::SessionOptions options) {
  options.threads = 1;
  return options;
}

}  // namespace

SinkCompactor::SinkCompactor(sql::SessionOptions options, catalog::TableName table, std::string location)
    : options_(OneThread(std::move(options))), table_(std::move(table)), location_(std::move(location)) {}

SinkCompactor::~SinkCompactor() { Wait(); }

void SinkCompactor::Request() {
  if (running_.valid() && running_.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return;
  running_ = thread_.Submit([this] {
    RunAsBackgroundThread();
    notice_ = Compact();
    return Status::OK();
  });
}

std::string SinkCompactor::TakeNotice() {
  if (!running_.valid() || running_.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return "";
  running_ = {};
  return std::exchange(notice_, "");
}

void SinkCompactor::Wait() {
  if (running_.valid()) running_.wait();
}

std::string SinkCompactor::Compact() {
  const std::string table = table_.ToString();
  auto failed = [&](const Status& status) {
    return "automatic compaction of " + table + " failed, to be tried again: " + status.message();
  };
  if (!session_) {
    Result<std::unique_ptr<sql::Session>> opened = sql::Session::Open(options_);
    if (!opened.ok()) return failed(opened.status());
    session_ = std::move(*opened);
  }
  sql::SessionContext& context = session_->context();
  // As OPTIMIZE on the table: the session's user needs MANAGE on it.
  Status allowed = context.governor().RequireOnTable(security::Privilege::kManage, table_);
  if (!allowed.ok()) return failed(allowed);
  Result<std::shared_ptr<const delta::Snapshot>> snapshot = context.LoadTable(location_);
  if (!snapshot.ok()) return failed(snapshot.status());
  if (!commands::TablePropertyIsTrue((*snapshot)->metadata, "delta.autoOptimize.autoCompact",
                                     /*fallback=*/true)) {
    return "";
  }
  commands::OptimizeRequest request;
  request.automatic = true;
  Result<commands::CommandResult> optimized =
      commands::Optimize(context.MakeCommandContext(), *std::move(snapshot), request);
  // Each compaction reads files no earlier one read: the database would keep an entry for
  // every one of them.
  const Status forgotten = context.conn().ForgetOpenedFiles();
  std::string notice;
  if (!optimized.ok()) {
    notice = failed(optimized.status());
  } else if (optimized->commit.version >= 0) {  // else nothing was worth merging
    notice = "compacted " + table + ": " + std::to_string(optimized->metrics.value("numFilesRemoved", 0)) +
             " files into " + std::to_string(optimized->metrics.value("numFilesAdded", 0));
  }
  if (!forgotten.ok()) {
    notice += (notice.empty() ? "" : "; ") +
              std::string("the compaction's session kept the files it read: ") + forgotten.message();
  }
  return notice;
}

}  // namespace basin::stream
