// The HTTP API of `basin serve` (docs/server.md "HTTP API") on cpp-httplib: JSON over
// HTTP/1.1, bearer tokens, a bounded pool of worker threads, and the limits of HttpLimits
// (body size, timeouts so that a slow client cannot hold a worker forever).
//
// Thread safety: Start() and Stop() from the thread owning the server; the routes run on the
// worker threads.
#pragma once

#include <memory>
#include <string>

#include "basin/server.h"
#include "security/tokens.h"
#include "security/users.h"
#include "server/audit_log.h"
#include "server/flows.h"
#include "server/server_metrics.h"

namespace basin::server::http {

class HttpServer {
 public:
  // Listens on `options.bind_address`:`options.http_port` and serves on threads of its own.
  // IOError naming the address when it cannot be bound. `audit`: where requests are
  // recorded; null for none. `tables`: the table snapshots the routes' sessions read through
  // (the server's, which its PostgreSQL connections share).
  static Result<std::unique_ptr<HttpServer>> Start(
      const ServerOptions& options, std::shared_ptr<const Clock> clock, const security::TokenStore& tokens,
      const security::UserStore& users, const security::GrantStore& grants, AuditLog* audit,
      ServerMetrics& metrics, FlowSet& flows, std::shared_ptr<TableCache> tables);
  ~HttpServer();  // Stop()
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  int port() const;
  // Interrupts the running statements (they are answered with Cancelled, 499), drops the
  // open results, stops accepting and waits for the workers. Idempotent.
  void Stop();

 private:
  struct Impl;
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace basin::server::http
