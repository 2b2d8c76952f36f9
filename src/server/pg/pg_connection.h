// One client of the PostgreSQL protocol, from its startup packet to its Terminate: SCRAM
// authentication, then simple and extended queries run on a Session of its own.
//
// Thread safety: Serve() runs on the connection's thread; Cancel() from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "basin/session.h"
#include "security/users.h"
#include "server/audit_log.h"
#include "server/pg/tls.h"
#include "server/pg/wire.h"
#include "server/server_metrics.h"

namespace basin::server::pg {

// What every connection of one server shares.
struct ServerContext {
  std::string warehouse;
  std::string database;
  const security::UserStore* users = nullptr;
  // Interrupts the statement of the connection a CancelRequest names, when its secret key
  // matches (pg's cancel protocol); nothing otherwise.
  std::function<void(int32_t process_id, int32_t secret_key)> cancel;
  AuditLog* audit = nullptr;         // null: statements are not audited
  ServerMetrics* metrics = nullptr;  // null: statements are not counted
  // An SSLRequest is answered 'S' and the connection switches to TLS; null: 'N'.
  std::shared_ptr<const TlsContext> tls;
  // Connections that did not switch to TLS are refused (28000); a CancelRequest is not.
  bool tls_required = false;
  int64_t statement_timeout_ms = 0;  // each session's default (SessionOptions)
  // The server's table snapshots, which every connection's session reads through.
  std::shared_ptr<TableCache> tables;
};

class PgConnection {
 public:
  PgConnection(std::unique_ptr<Socket> socket, const ServerContext& context, int32_t process_id,
               int32_t secret_key);
  ~PgConnection();

  // Serves the client until it leaves, the connection fails or the server shuts down. What
  // failed is returned for the server's log (the client has been told, when it still
  // listens).
  Status Serve();
  // Interrupts the running statement (CancelRequest). Any thread.
  void Cancel();
  // Ends the connection for a server shutting down: a running statement is interrupted (its
  // client gets its error), then the client is told the server is terminating it. Any thread.
  void Close();

  int32_t process_id() const { return process_id_; }
  int32_t secret_key() const { return secret_key_; }

 private:
  struct State;
  struct Portal;
  // A message after startup. A Status that is not OK ends the connection (the protocol was
  // broken); a statement's failure is an ErrorResponse to the client, and OK here.
  Status Handle(const Message& message);
  Status SimpleQuery(const std::string& text);
  Status Parse(const Message& message);
  Status Bind(const Message& message);
  Status Describe(const Message& message);
  Status Execute(const Message& message);
  Status ClosePrepared(const Message& message);
  // Runs the portal's statement unless it ran, and sends its RowDescription (or NoData)
  // when `describe`.
  Status Start(Portal& portal, bool describe);
  // Sends up to `max_rows` rows (all when 0) and the CommandComplete, or PortalSuspended.
  Status SendRows(Portal& portal, int64_t max_rows);
  // COPY ... TO STDOUT's CopyOutResponse, and its HEADER line.
  Status StartCopyOut(Portal& portal);
  // A DataRow of `row` (cells in text form), in the result formats the portal's Bind asked.
  Result<std::string> DataRow(const Portal& portal, Row& row) const;
  // The portal's statement failed: done, counted, audited, and its ErrorResponse sent.
  Status Fail(Portal& portal, const Status& status);
  // The portal's statement ended: counted in the metrics, and written into the audit log
  // when the server keeps one.
  void RecordEnd(const Portal& portal, const Status& outcome, std::optional<int64_t> rows);
  // A statement's failure, as an ErrorResponse.
  Status SendError(const Status& status);
  // Output is gathered, and written when it grows past a bound or the client waits for it.
  Status Send(const std::string& bytes);
  Status Flush();
  std::unique_ptr<Socket> socket_;
  std::atomic<bool> closing_{false};
  const ServerContext& context_;
  const int32_t process_id_;
  const int32_t secret_key_;
  std::mutex session_mutex_;  // guards session_ against Cancel() while it is set or reset
  std::unique_ptr<Session> session_;
  std::unique_ptr<State> state_;
  std::string out_;
  std::string user_name_;       // once signed in
  std::string client_address_;  // the peer's IP address
};

// A connection refused before it starts (too many clients): the ErrorResponse, sent
// after reading its startup packet (in TLS when the client asks and `tls` is set) so that
// the client shows it.
void RefuseConnection(Socket& socket, const std::shared_ptr<const TlsContext>& tls,
                      const std::string& sqlstate, const std::string& message);

}  // namespace basin::server::pg
