#include "server/audit_log.h"

#include <chrono>

#include "common/strings.h"

namespace basin::server {
namespace {

// One commit holds at most this many events, or this much SQL, whichever comes first.
constexpr size_t kEventsPerCommit = 1'000;
constexpr size_t kSqlBytesPerCommit = 4 << 20;
// The log is compacted every this many commits, as a stream compacts its sink.
constexpr int64_t kCommitsPerCompaction = 100;

constexpr char kCreateTable[] =
    "CREATE TABLE IF NOT EXISTS basin_system.audit_log ("
    "event_time TIMESTAMPTZ NOT NULL, user_name VARCHAR, protocol VARCHAR NOT NULL, "
    "client_address VARCHAR, statement VARCHAR, outcome VARCHAR NOT NULL, error_code VARCHAR, "
    "sqlstate VARCHAR, message VARCHAR, row_count BIGINT, duration_ms BIGINT)";

std::string TextOrNull(const std::string& text) { return text.empty() ? "NULL" : QuoteLiteral(text); }

std::string ValuesOf(const AuditEvent& event, size_t max_statement_bytes) {
  std::string statement = event.statement;
  if (statement.size() > max_statement_bytes) {
    size_t cut = max_statement_bytes;
    while (cut > 0 && (static_cast<unsigned char>(statement[cut]) & 0xC0) == 0x80) --cut;  // whole characters
    statement.resize(cut);
    statement += "...";
  }
  const bool ok = event.outcome.ok();
  const ErrorCodeInfo& code = GetErrorCodeInfo(event.outcome.code());
  return "(to_timestamp(" + std::to_string(event.at_ms) + " / 1000.0), " + TextOrNull(event.user) + ", " +
         QuoteLiteral(event.protocol) + ", " + TextOrNull(event.client_address) + ", " +
         TextOrNull(statement) + ", " + QuoteLiteral(OutcomeName(event.outcome)) + ", " +
         (ok ? "NULL" : QuoteLiteral(code.name)) + ", " + (ok ? "NULL" : QuoteLiteral(code.sqlstate)) + ", " +
         (ok ? "NULL" : QuoteLiteral(event.outcome.message())) + ", " +
         (event.rows ? std::to_string(*event.rows) : "NULL") + ", " + std::to_string(event.duration_ms) + ")";
}

}  // namespace

std::string OutcomeName(const Status& outcome) {
  if (outcome.ok()) return "ok";
  if (outcome.code() == ErrorCode::kPermissionDenied || outcome.code() == ErrorCode::kUnauthenticated)
    return "denied";
  return "error";
}

Result<std::unique_ptr<AuditLog>> AuditLog::Open(const std::string& warehouse,
                                                 std::shared_ptr<const Clock> clock, AuditOptions options) {
  SessionOptions session_options;
  session_options.warehouse = warehouse;
  ASSIGN_OR_RETURN(std::unique_ptr<Session> session, Session::Open(session_options));
  Status created = session->Execute(kCreateTable).status();
  if (!created.ok()) return created.WithContext("creating the audit log " + std::string(kAuditTable));
  return std::unique_ptr<AuditLog>(new AuditLog(std::move(session), std::move(clock), std::move(options)));
}

AuditLog::AuditLog(std::unique_ptr<Session> session, std::shared_ptr<const Clock> clock, AuditOptions options)
    : session_(std::move(session)), clock_(std::move(clock)), options_(std::move(options)) {
  writer_ = std::thread([this] { WriteLoop(); });
}

AuditLog::~AuditLog() { Stop(); }

void AuditLog::Record(AuditEvent event) {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return stopping_ || queued_.size() < options_.max_queued; });
  queued_.push_back(std::move(event));
  if (queued_.size() >= kEventsPerCommit) changed_.notify_all();
}

Status AuditLog::Flush() { return WriteQueued(); }

void AuditLog::Stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
  }
  changed_.notify_all();
  if (writer_.joinable()) writer_.join();
}

void AuditLog::WriteLoop() {
  int64_t commits = 0;
  for (;;) {
    bool stopping = false;
    {
      std::unique_lock lock(mutex_);
      changed_.wait_for(lock, std::chrono::milliseconds(options_.flush_interval_ms),
                        [&] { return stopping_ || queued_.size() >= kEventsPerCommit; });
      stopping = stopping_;
    }
    Status written = WriteQueued();
    if (!written.ok() && options_.log) options_.log("audit log: " + written.ToString() + " (will retry)");
    if (written.ok() && ++commits % kCommitsPerCompaction == 0) {
      std::lock_guard write_lock(write_mutex_);
      Status compacted = session_->Execute(std::string("OPTIMIZE ") + kAuditTable).status();
      if (!compacted.ok() && options_.log) options_.log("audit log compaction: " + compacted.ToString());
    }
    if (stopping) return;
  }
}

Status AuditLog::WriteQueued() {
  std::lock_guard write_lock(write_mutex_);
  for (;;) {
    // Only this function removes events, and it holds write_mutex_: the first `count`
    // events stay where they are while the lock on the queue is let go.
    size_t count = 0;
    std::string values;
    {
      std::lock_guard lock(mutex_);
      while (count < queued_.size() && count < kEventsPerCommit && values.size() < kSqlBytesPerCommit) {
        if (count > 0) values += ",\n";
        values += ValuesOf(queued_[count], options_.max_statement_bytes);
        ++count;
      }
    }
    if (count == 0) return Status::OK();
    RETURN_IF_ERROR(
        session_->Execute(std::string("INSERT INTO ") + kAuditTable + " VALUES " + values).status());
    {
      std::lock_guard lock(mutex_);
      queued_.erase(queued_.begin(), queued_.begin() + static_cast<std::ptrdiff_t>(count));
    }
    changed_.notify_all();
  }
}

}  // namespace basin::server
