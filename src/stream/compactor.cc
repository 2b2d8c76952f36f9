#include "stream/compactor.h"

#include <chrono>
#include <utility>

#include "commands/table_features.h"
#include "common/strings.h"
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
  Result<std::shared_ptr<const delta::Snapshot>> snapshot = session_->context().LoadTable(location_);
  if (snapshot.ok() && !commands::TablePropertyIsTrue((*snapshot)->metadata, "delta.autoOptimize.autoCompact",
                                                      /*fallback=*/true)) {
    return "";
  }
  Result<std::vector<sql::StatementResult>> optimized =
      session_->Execute("OPTIMIZE " + QuoteIdentifier(table_.schema) + "." + QuoteIdentifier(table_.table));
  if (!optimized.ok()) return failed(optimized.status());
  return "compacted " + table + " (OPTIMIZE)";
}

}  // namespace basin::stream
