// The server's audit log (docs/server.md "Audit log"): every statement a client sends over
// the PostgreSQL protocol or the HTTP API, and every refused sign-in, as one row of the
// Delta table `basin_system.audit_log` in the warehouse: who, what, when, from where, by
// which protocol, allowed or denied, rows affected.
//
// Record() only queues the event: a writer thread appends what is queued in one commit
// every flush interval (or sooner when many are waiting), so a statement never waits for
// an audit commit. Stop() (the server's shutdown) writes what is left. A commit that fails
// (a full disk, a conflict) keeps its events queued and is tried again at the next flush;
// the queue is bounded, and when it is full Record() waits for the writer rather than
// drop an event: a server that cannot write its audit log stops answering rather than
// serve unaudited. Events of the last interval are lost only if the process dies.
//
// Thread safety: Record() from any thread; Stop() once, from the owner.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "basin/clock.h"
#include "basin/session.h"
#include "basin/status.h"

namespace basin::server {

inline constexpr char kAuditTable[] = "basin_system.audit_log";

struct AuditEvent {
  int64_t at_ms = 0;                // when the statement started, ms since the epoch (UTC)
  std::string user = {};            // "" when the client never signed in
  std::string protocol = {};        // "pg" or "http"
  std::string client_address = {};  // the peer's IP address
  std::string statement = {};       // the SQL text, or what was refused ("sign-in")
  Status outcome = {};              // OK, or the error the client was answered
  // Rows a write changed (over pg also rows a query returned); nullopt when unknown.
  std::optional<int64_t> rows = {};
  int64_t duration_ms = 0;
};

// "ok", "denied" (PermissionDenied, Unauthenticated) or "error".
std::string OutcomeName(const Status& outcome);

struct AuditOptions {
  int64_t flush_interval_ms = 1'000;
  size_t max_queued = 100'000;             // Record() waits past this many unwritten events
  size_t max_statement_bytes = 64 * 1024;  // longer statements are cut, marked "..."
  // Where failures to write are told (the server's log); null: nowhere.
  std::function<void(const std::string&)> log = {};
};

class AuditLog {
 public:
  // Creates `basin_system.audit_log` in the warehouse when it is absent, and starts the
  // writer. The warehouse's errors as Session::Open gives them.
  static Result<std::unique_ptr<AuditLog>> Open(const std::string& warehouse,
                                                std::shared_ptr<const Clock> clock,
                                                AuditOptions options = {});
  ~AuditLog();  // Stop()
  AuditLog(const AuditLog&) = delete;
  AuditLog& operator=(const AuditLog&) = delete;

  void Record(AuditEvent event);
  // Writes every queued event now; the first failure. Any thread.
  Status Flush();
  // Writes what is queued and stops the writer; later events are written by Flush() only.
  void Stop();

  int64_t now_ms() const { return clock_->NowMs(); }

 private:
  AuditLog(std::unique_ptr<Session> session, std::shared_ptr<const Clock> clock, AuditOptions options);
  void WriteLoop();
  // Appends the queued events in one commit; they leave the queue only once committed.
  Status WriteQueued();

  std::unique_ptr<Session> session_;  // used by the writer under write_mutex_
  std::shared_ptr<const Clock> clock_;
  const AuditOptions options_;
  std::mutex write_mutex_;  // one commit at a time
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<AuditEvent> queued_;  // guarded by mutex_
  bool stopping_ = false;          // guarded by mutex_
  std::thread writer_;
};

}  // namespace basin::server
