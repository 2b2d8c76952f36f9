// A basin::Server for a driver test: on a free loopback port, over `warehouse`, with the
// user admin's password `password`.
#pragma once

#include <memory>
#include <string>

#include "basin/server.h"

namespace basin::testing {

inline Result<std::unique_ptr<Server>> StartServer(const std::string& warehouse,
                                                   const std::string& password) {
  ServerOptions options;
  options.warehouse = warehouse;
  options.pg_port = 0;
  options.admin_password = password;
  return Server::Start(options);
}

}  // namespace basin::testing
