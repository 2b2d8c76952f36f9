// Server: `basin serve` as a library. Runs the PostgreSQL wire protocol (version 3) over a
// warehouse: clients such as psql connect with SCRAM-SHA-256 as one of the warehouse's users
// and run any Basin statement; each connection has a Session of its own (session.h).
// Optionally also an HTTP API (JSON, bearer tokens) whose requests run on sessions of the
// token's user. It also runs streams and pipelines continuously, each on a thread and a
// session of its own, stopped and started by name over the HTTP API. docs/server.md says
// what the protocols answer and where users are kept.
//
// Thread safety: Shutdown() may be called from any thread (a signal handler's thread
// included, not the handler itself); the rest from the thread that started the server.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "basin/clock.h"
#include "basin/status.h"

namespace basin {

// The HTTP API's limits (docs/server.md "HTTP API").
struct HttpLimits {
  int64_t max_body_bytes = int64_t{64} << 20;      // larger bodies: 413
  int64_t max_statement_bytes = int64_t{1} << 20;  // a longer statement: 400
  int threads = 8;                                 // requests served at once
  int read_timeout_ms = 30'000;                    // a client that sends nothing for this long is dropped
  int write_timeout_ms = 30'000;                   // a client that reads nothing for this long is dropped
  int64_t page_size = 10'000;                      // rows per page unless the request asks fewer
  int64_t max_page_size = 100'000;
  int64_t cursor_idle_timeout_ms = 300'000;  // an unread result is dropped after this
  int max_statements_per_user = 16;          // running statements and open results
};

// A stream the server runs (basin/stream.h).
struct ServedStream {
  // The flow's name in the HTTP API, and its checkpoint folder's under
  // ServerOptions::checkpoint_root: 1 to 128 letters, digits and _.
  std::string name;
  std::string statement;  // the stream's INSERT or MERGE
};

struct ServerOptions {
  // The warehouse's local folder, or "memory://<name>".
  std::string warehouse = {};
  std::string bind_address = "127.0.0.1";
  int pg_port = 5433;  // 0: a free port chosen by the system (tests)
  // The HTTP API's port: -1 off, 0 a free port chosen by the system (tests).
  int http_port = -1;
  HttpLimits http = {};
  // The database name clients connect to: the warehouse's catalog.
  std::string database = "basin";
  // Connections served at once; the next one is refused with SQLSTATE 53300.
  int max_connections = 64;
  // The password of the `admin` user the first start creates (BASIN_ADMIN_PASSWORD); empty:
  // a random one, shown once through `log`.
  std::string admin_password = {};
  // Streams run continuously from the start, each checkpointed in <checkpoint_root>/<name>
  // (required when there are streams), a batch starting at most every stream_interval_ms.
  std::vector<ServedStream> streams = {};
  std::string checkpoint_root = {};
  int64_t stream_interval_ms = 1'000;
  // Pipeline folders (basin/pipeline.h), run continuously from the start; each flow is
  // named after its pipeline.
  std::vector<std::string> pipelines = {};
  // The warehouse user the streams and pipelines run as, under its grants
  // (docs/governance.md): a flow whose owner lacks a privilege it needs fails with
  // PermissionDenied and commits nothing. With flows to run, it must exist when the server
  // starts.
  std::string flow_owner = "admin";
  // Where the server reads the time (tokens' expiry, idle results); null: the system's.
  std::shared_ptr<const Clock> clock = {};
  // Every statement and refused sign-in, over either protocol, is written to the Delta table
  // `basin_system.audit_log` of the warehouse (docs/server.md "Audit log"), in one commit
  // per flush interval.
  bool audit = true;
  int64_t audit_flush_interval_ms = 1'000;
  // TLS on the pg port: PEM files of the server's certificate (chain) and private key. An
  // SSLRequest is answered 'S' when both are set, 'N' otherwise. With `tls_required`,
  // connections without TLS are refused with SQLSTATE 28000 (it needs the files).
  std::string tls_cert_file = {};
  std::string tls_key_file = {};
  bool tls_required = false;
  // Each session's statement_timeout until it SETs another (SessionOptions); 0: none.
  int64_t statement_timeout_ms = 0;
  // Lines for the operator (listening, the generated password, refused connections).
  std::function<void(const std::string&)> log = {};
};

class Server {
 public:
  // Listens, and serves on threads of its own until Shutdown(). IOError when the address
  // cannot be bound (naming it) or a TLS file cannot be read (naming it); the warehouse's
  // errors as Session::Open gives them; InvalidArgument for a TLS file that holds no
  // certificate or key, a stream's bad or repeated name, streams without a checkpoint root,
  // a pipeline folder that does not read (ReadPipelineGraph), and a flow owner that is no
  // user of the warehouse. A flow that fails once started (its sink missing, a bad batch,
  // its owner lacking a privilege) does not stop the server: it is FAILED alone.
  static Result<std::unique_ptr<Server>> Start(const ServerOptions& options);
  ~Server();  // Shutdown(), then waits
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // The port the PostgreSQL protocol listens on (the system's choice when 0 was asked).
  int pg_port() const;
  // The port the HTTP API listens on; -1 when it is off.
  int http_port() const;

  // Stops accepting, interrupts the statements running (they fail with Cancelled; nothing
  // is half committed: a commit is atomic), closes every connection and asks the streams
  // and pipelines to stop after their batch in flight. Any thread.
  void Shutdown();
  // Returns once the server has stopped (after Shutdown()), its flows included.
  void Wait();

 private:
  struct Impl;
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace basin
