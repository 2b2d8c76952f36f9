// A PostgreSQL client connection on libpq, so that one client measures `basin serve` and
// PostgreSQL alike (bench/serve_bench.cc). Results come back whole, as text.
//
// Thread safety: one thread at a time per connection; connections are independent.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "basin/status.h"

struct pg_conn;

namespace basin::bench {

struct PgResult {
  std::vector<std::vector<std::optional<std::string>>> rows;
  int64_t affected_rows = 0;  // the count of a command's tag (INSERT 0 n), 0 for a query
};

class PgClient {
 public:
  // IOError naming `conninfo`'s host and port, with libpq's reason, when it cannot connect.
  static Result<PgClient> Connect(const std::string& conninfo);
  PgClient(PgClient&& other) noexcept;
  PgClient& operator=(PgClient&& other) noexcept;
  ~PgClient();

  // Prepares `sql` as statement `name` (extended protocol: Parse), its parameters of the
  // types `parameter_oids`.
  Status Prepare(const std::string& name, const std::string& sql,
                 const std::vector<uint32_t>& parameter_oids);
  // Runs prepared statement `name` with `parameters` in text format (Bind, Execute, Sync).
  Result<PgResult> ExecutePrepared(const std::string& name, const std::vector<std::string>& parameters);
  // Runs `sql` with the simple query protocol: the last statement's result.
  Result<PgResult> Execute(const std::string& sql);

  // The first cell of `sql`'s result: InvalidArgument when it returns no row or a NULL.
  Result<std::string> QueryValue(const std::string& sql);

 private:
  explicit PgClient(pg_conn* conn) : conn_(conn) {}
  pg_conn* conn_ = nullptr;
};

// libpq's reply to a ping of `conninfo`: whether a server accepts connections there.
bool PgAcceptsConnections(const std::string& conninfo);

}  // namespace basin::bench
