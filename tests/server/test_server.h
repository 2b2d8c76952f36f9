// A basin::Server for a driver test: on a free loopback port, over `warehouse`, with the
// user admin's password `password`; and a result's rows as lines to compare.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "basin/object_store.h"
#include "basin/server.h"
#include "basin/session.h"
#include "security/tokens.h"
#include "security/users.h"

namespace basin::testing {

inline Result<std::unique_ptr<Server>> StartServer(const std::string& warehouse, const std::string& password,
                                                   bool with_http = false) {
  ServerOptions options;
  options.warehouse = warehouse;
  options.pg_port = 0;
  if (with_http) options.http_port = 0;  // the HTTP API and the web console, on a free port too
  options.admin_password = password;
  return Server::Start(options);
}

// Each row of `result` as its cells joined by '|', NULL as "NULL".
inline std::vector<std::string> RowLines(const QueryResult& result) {
  std::vector<std::string> lines;
  for (const Row& row : result.rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); c++) line += (c > 0 ? "|" : "") + row[c].value_or("NULL");
    lines.push_back(std::move(line));
  }
  return lines;
}

// Options of a server with the HTTP API too, both on free loopback ports, reading the time
// from `clock`.
inline ServerOptions HttpServerOptions(const std::string& warehouse, const std::string& password,
                                       std::shared_ptr<const Clock> clock) {
  ServerOptions options;
  options.warehouse = warehouse;
  options.pg_port = 0;
  options.http_port = 0;
  options.admin_password = password;
  options.clock = std::move(clock);
  return options;
}

// Creates the user `name` (not an admin) in `warehouse` and returns the text of a token of
// theirs that does not expire.
inline Result<std::string> CreateUserWithToken(const std::string& warehouse, const std::string& name,
                                               const std::string& password,
                                               std::shared_ptr<const Clock> clock) {
  ASSIGN_OR_RETURN(std::shared_ptr<ObjectStore> store, OpenStoreAt(warehouse));
  RETURN_IF_ERROR(security::UserStore(store, clock).Create(name, password, /*admin=*/false));
  ASSIGN_OR_RETURN(security::NewToken token, security::TokenStore(store, clock).Create(name, std::nullopt));
  return token.text;
}

}  // namespace basin::testing
