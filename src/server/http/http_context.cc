#include "server/http/http_context.h"

#include "api/table_cache.h"
#include "server/http/result_encoding.h"
#include "server/http/statement_registry.h"
#include "sql/session.h"

namespace basin::server::http {
namespace {

constexpr std::string_view kBearer = "Bearer ";

// The user `authorization` (the header's value) authenticates.
Result<std::string> AuthenticatedUser(const HttpContext& context, const std::string& authorization) {
  if (authorization.empty())
    return Status::Unauthenticated("this route needs an Authorization: Bearer token");
  if (!authorization.starts_with(kBearer)) {
    return Status::Unauthenticated("the Authorization header must be \"Bearer <token>\"");
  }
  ASSIGN_OR_RETURN(security::Token token, context.tokens->Authenticate(authorization.substr(kBearer.size())));
  ASSIGN_OR_RETURN(std::optional<security::User> user, context.users->Find(token.user));
  // A token outliving its user is refused as any other bad token is.
  if (!user) return Status::Unauthenticated("invalid, expired or revoked token");
  return token.user;
}

}  // namespace

Result<std::unique_ptr<Session>> HttpContext::OpenSession(const std::string& user) const {
  SessionOptions options;
  options.warehouse = warehouse;
  options.user = user;
  // COPY ... TO STDOUT answers its rows like a query, never on the server's own stdout.
  options.copy_to_caller = true;
  options.statement_timeout_ms = statement_timeout_ms;
  options.record_lineage = true;
  options.tables = tables;
  return Session::Open(options);
}

Result<std::unique_ptr<sql::Session>> HttpContext::OpenSqlSession(const std::string& user) const {
  return sql::Session::Open({.warehouse_dir = warehouse,
                             .copy_to_caller = true,
                             .statement_timeout_ms = statement_timeout_ms,
                             .user = user,
                             .record_lineage = true,
                             .snapshots = tables});
}

Result<security::Access> HttpContext::AccessOf(const std::string& user) const {
  ASSIGN_OR_RETURN(std::optional<security::User> found, users->Find(user));
  if (!found) return Status::Unauthenticated("user " + user + " does not exist");
  return security::Access::Load(*grants, user, found->admin);
}

void HttpContext::Audit(const std::string& client_address, const std::string& user,
                        const std::string& statement, int64_t started_ms, const Status& outcome,
                        std::optional<int64_t> rows) const {
  if (!audit) return;
  audit->Record({.at_ms = started_ms,
                 .user = user,
                 .protocol = "http",
                 .client_address = client_address,
                 .statement = statement,
                 .outcome = outcome,
                 .rows = rows,
                 .duration_ms = clock->NowMs() - started_ms});
}

httplib::Server::Handler WithUser(const HttpContext& context, UserHandler handler) {
  return [&context, handler = std::move(handler)](const httplib::Request& request,
                                                  httplib::Response& response) {
    const int64_t started_ms = context.clock->NowMs();
    Result<std::string> user = AuthenticatedUser(context, request.get_header_value("Authorization"));
    if (!user.ok()) {
      context.Audit(request.remote_addr, "", "sign-in: " + request.method + " " + request.path, started_ms,
                    user.status());
      const bool sent_token = request.has_header("Authorization");
      response.set_header("WWW-Authenticate", sent_token ? "Bearer realm=\"basin\", error=\"invalid_token\""
                                                         : "Bearer realm=\"basin\"");
      SendError(response, user.status());
      return;
    }
    context.statements->ExpireIdle();
    handler(request, response, *user);
  };
}

}  // namespace basin::server::http
