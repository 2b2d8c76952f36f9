// Server: `basin serve` as a library. Runs the PostgreSQL wire protocol (version 3) over a
// warehouse: clients such as psql connect with SCRAM-SHA-256 as one of the warehouse's users
// and run any Basin statement; each connection has a Session of its own (session.h).
// docs/server.md says what the protocol answers and where users are kept.
//
// Thread safety: Shutdown() may be called from any thread (a signal handler's thread
// included, not the handler itself); the rest from the thread that started the server.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "basin/status.h"

namespace basin {

struct ServerOptions {
  // The warehouse's local folder, or "memory://<name>".
  std::string warehouse = {};
  std::string bind_address = "127.0.0.1";
  int pg_port = 5433;  // 0: a free port chosen by the system (tests)
  // The database name clients connect to: the warehouse's catalog.
  std::string database = "basin";
  // Connections served at once; the next one is refused with SQLSTATE 53300.
  int max_connections = 64;
  // The password of the `admin` user the first start creates (BASIN_ADMIN_PASSWORD); empty:
  // a random one, shown once through `log`.
  std::string admin_password = {};
  // Lines for the operator (listening, the generated password, refused connections).
  std::function<void(const std::string&)> log = {};
};

class Server {
 public:
  // Listens, and serves on threads of its own until Shutdown(). IOError when the address
  // cannot be bound (naming it); the warehouse's errors as Session::Open gives them.
  static Result<std::unique_ptr<Server>> Start(const ServerOptions& options);
  ~Server();  // Shutdown(), then waits
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // The port the PostgreSQL protocol listens on (the system's choice when 0 was asked).
  int pg_port() const;

  // Stops accepting, interrupts the statements running (they fail with Cancelled; nothing
  // is half committed: a commit is atomic) and closes every connection. Any thread.
  void Shutdown();
  // Returns once the server has stopped (after Shutdown()).
  void Wait();

 private:
  struct Impl;
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace basin
