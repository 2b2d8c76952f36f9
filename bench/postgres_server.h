// A throwaway PostgreSQL server, the peer of the server benchmark (serve_bench.cc): initdb
// into a folder, postgres listening on a free loopback port (no Unix socket) with trust
// authentication for the superuser `bench`, stopped by a fast shutdown when the object goes
// away. PostgreSQL refuses to run as root, so a root process runs it as the user `postgres`
// (which Debian's package creates) or else `nobody`.
//
// Thread safety: Start and the destructor from one thread; conninfo() from any.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "basin/status.h"

namespace basin::bench {

class PostgresServer {
 public:
  // The folder holding initdb and postgres: $BASIN_BENCH_PG_BIN when set (and only it),
  // else Debian's /usr/lib/postgresql/15/bin, else one on PATH; nullopt when none has them.
  static std::optional<std::filesystem::path> FindBinaries();

  // Creates the cluster in `folder` (which must not exist yet: data in folder/data, the
  // server's log in folder/postgres.log) and starts the server. Internal, with the end of
  // the log, when initdb fails or the server does not accept connections within a minute.
  static Result<std::unique_ptr<PostgresServer>> Start(const std::filesystem::path& bin_dir,
                                                       const std::filesystem::path& folder);
  ~PostgresServer();
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

  // libpq's connection string for the database `postgres` as `bench`.
  const std::string& conninfo() const { return conninfo_; }

 private:
  PostgresServer(pid_t pid, std::string conninfo) : pid_(pid), conninfo_(std::move(conninfo)) {}
  pid_t pid_;
  std::string conninfo_;
};

}  // namespace basin::bench
