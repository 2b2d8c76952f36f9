// `basin serve`: the server of basin/server.h until SIGINT or SIGTERM (docs/server.md).
//
// The stop signals are blocked before the server's threads start, so they wait for the main
// thread's StopSignals::Wait(): shutdown happens in ordinary code.
#include <fmt/format.h>
#include <signal.h>

#include <cstdlib>
#include <iostream>

#include "basin/duration.h"
#include "basin/server.h"
#include "cli/command_support.h"
#include "cli/commands.h"
#include "cli/output_format.h"

namespace basin::cli {

namespace {

// A --stream NAME=FILE: the name, and the statement FILE holds.
Result<ServedStream> ServedStreamOf(const std::string& flag) {
  const size_t equals = flag.find('=');
  if (equals == std::string::npos || equals == 0 || equals + 1 == flag.size())
    return Status::InvalidArgument("--stream takes NAME=FILE, got '" + flag + "'");
  ServedStream stream;
  stream.name = flag.substr(0, equals);
  ASSIGN_OR_RETURN(stream.statement, ReadSqlFile(flag.substr(equals + 1)));
  return stream;
}

}  // namespace

int RunServeCommand(const ServeCommandOptions& options) {
  const StopSignals stop_signals;
  ServerOptions server_options;
  for (const std::string& flag : options.streams) {
    Result<ServedStream> stream = ServedStreamOf(flag);
    if (!stream.ok()) return ExitStatus(stream.status());
    server_options.streams.push_back(std::move(*stream));
  }
  server_options.checkpoint_root = options.checkpoint_root;
  if (!options.stream_interval.empty()) {
    Result<int64_t> interval = ParseDurationMs(options.stream_interval);
    if (!interval.ok()) return ExitStatus(interval.status());
    server_options.stream_interval_ms = *interval;
  }
  server_options.pipelines = options.pipelines;
  server_options.flow_owner = options.flow_owner;
  server_options.warehouse = options.warehouse_dir;
  server_options.bind_address = options.bind_address;
  server_options.pg_port = options.pg_port;
  server_options.database = options.database;
  server_options.max_connections = options.max_connections;
  server_options.http_port = options.http_port;
  server_options.http = options.http;
  server_options.http.write_timeout_ms = options.http.read_timeout_ms;
  server_options.tls_cert_file = options.tls_cert_file;
  server_options.tls_key_file = options.tls_key_file;
  server_options.tls_required = options.tls_required;
  // PostgreSQL's spelling (a plain number is milliseconds), not --interval's (cli::ParseDurationMs).
  Result<int64_t> timeout = basin::ParseDurationMs(options.statement_timeout);
  if (!timeout.ok()) return ExitStatus(timeout.status().WithContext("--statement-timeout"));
  server_options.statement_timeout_ms = *timeout;
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
