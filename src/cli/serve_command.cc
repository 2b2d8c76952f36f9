// `basin serve`: the server of basin/server.h until SIGINT or SIGTERM (docs/server.md).
//
// The stop signals are blocked before the server's threads start, so they wait for the main
// thread's StopSignals::Wait(): shutdown happens in ordinary code.
#include <fmt/format.h>
#include <signal.h>

#include <cstdlib>
#include <iostream>

#include "basin/server.h"
#include "cli/command_support.h"
#include "cli/commands.h"
#include "cli/output_format.h"

namespace basin::cli {

int RunServeCommand(const ServeCommandOptions& options) {
  const StopSignals stop_signals;
  ServerOptions server_options;
  server_options.warehouse = options.warehouse_dir;
  server_options.bind_address = options.bind_address;
  server_options.pg_port = options.pg_port;
  server_options.database = options.database;
  server_options.max_connections = options.max_connections;
  server_options.http_port = options.http_port;
  server_options.http = options.http;
  server_options.http.write_timeout_ms = options.http.read_timeout_ms;
  if (const char* password = std::getenv("BASIN_ADMIN_PASSWORD")) server_options.admin_password = password;
  server_options.log = [](const std::string& line) { std::cerr << "serve: " << line << std::endl; };
  Result<std::unique_ptr<Server>> server = Server::Start(server_options);
  if (!server.ok()) return ExitStatus(server.status());
  // The first line of stdout, flushed: scripts wait for it.
  std::cout << "postgresql://" << options.bind_address << ":" << (*server)->pg_port() << "/"
            << options.database << std::endl;
  std::optional<int> signal;
  while (!signal) signal = stop_signals.Wait(std::chrono::milliseconds(500));
  std::cerr << fmt::format("serve: {}, stopping\n", *signal == SIGINT ? "interrupted" : "terminated");
  (*server)->Shutdown();
  (*server)->Wait();
  return 0;
}

}  // namespace basin::cli
