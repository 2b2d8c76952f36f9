// What every route of the HTTP API shares, and the step each (but /healthz) starts with:
// the bearer token, authenticated against the warehouse's tokens and users.
//
// Thread safety: the context is read-only once the server runs (the stores and the registry
// are safe for many threads); WithUser's handlers run on the server's worker threads.
#pragma once

#include <httplib.h>

#include <functional>
#include <memory>
#include <string>

#include "basin/clock.h"
#include "basin/object_store.h"
#include "basin/server.h"
#include "basin/session.h"
#include "security/grants.h"
#include "security/tokens.h"
#include "security/users.h"
#include "server/audit_log.h"
#include "server/flows.h"
#include "server/server_metrics.h"

namespace basin::sql {
class Session;
}  // namespace basin::sql

namespace basin::server::http {

class StatementRegistry;

struct HttpContext {
  std::string warehouse;
  HttpLimits limits;
  std::shared_ptr<const Clock> clock;
  const security::TokenStore* tokens = nullptr;
  const security::UserStore* users = nullptr;
  const security::GrantStore* grants = nullptr;
  StatementRegistry* statements = nullptr;
  ServerMetrics* metrics = nullptr;
  AuditLog* audit = nullptr;         // null: requests are not audited
  FlowSet* flows = nullptr;          // the streams and pipelines the server runs
  int64_t statement_timeout_ms = 0;  // each session's statement_timeout (ServerOptions)
  // The server's table snapshots, which every session of a route reads through.
  std::shared_ptr<TableCache> tables;
  // Where Parquet results are written before they are sent, and deleted once sent: a folder
  // of the process's temporary folder.
  std::shared_ptr<ObjectStore> scratch;

  // A session on the warehouse running as `user`, so that the user's grants apply; with
  // `user` empty, the process's own rights (for what a route reads on a user's behalf once
  // it has checked that user's rights).
  Result<std::unique_ptr<Session>> OpenSession(const std::string& user) const;
  // The same, as the SQL layer's session: for routes that reuse the layers below the public
  // API (records set aside with the streams' dead-letter writer).
  Result<std::unique_ptr<sql::Session>> OpenSqlSession(const std::string& user) const;

  // What `user` may do now: its grants and its roles'. Unauthenticated when the user no
  // longer exists.
  Result<security::Access> AccessOf(const std::string& user) const;
  // Records what `user` ran (`statement`, begun at `started_ms`) from `client_address` into
  // the audit log, when the server keeps one.
  void Audit(const std::string& client_address, const std::string& user, const std::string& statement,
             int64_t started_ms, const Status& outcome, std::optional<int64_t> rows = std::nullopt) const;
};

// A route's handler, called with the authenticated user's name.
using UserHandler = std::function<void(const httplib::Request&, httplib::Response&, const std::string& user)>;

// `handler` behind bearer-token authentication: a request without `Authorization: Bearer
// <token>`, or whose token is malformed, unknown, expired or revoked, or whose user no
// longer exists, is answered 401 (Unauthenticated) with `WWW-Authenticate: Bearer`.
httplib::Server::Handler WithUser(const HttpContext& context, UserHandler handler);

}  // namespace basin::server::http
