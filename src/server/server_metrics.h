// What `basin serve` counts about itself, for GET /metrics (docs/server.md "Metrics"):
// connections open now and statements by protocol and outcome, with their durations; and
// the exposition of those, the warehouse's tables (server/table_metrics.h) and what the
// process counts (metrics::ProcessRegistry: commit conflicts and retries).
//
// Thread safety: every method may be called from any thread; recording is lock-free.
#pragma once

#include <array>
#include <chrono>
#include <memory>
#include <string>

#include "basin/clock.h"
#include "basin/status.h"
#include "common/metrics.h"
#include "security/grants.h"
#include "server/table_metrics.h"

namespace basin::server {

enum class Protocol { kPg, kHttp };

class ServerMetrics {
 public:
  using Time = std::chrono::steady_clock::time_point;

  // The series of the server over `warehouse`; a table's age is measured on `clock`.
  ServerMetrics(const std::string& warehouse, std::shared_ptr<const Clock> clock);

  // Connections open now: Add(1) when one is accepted, Add(-1) when it is closed.
  metrics::Gauge& connections(Protocol protocol) { return *connections_[Index(protocol)]; }
  // A statement that started at `started` ended with `status`: ok, cancelled (Cancelled),
  // denied (PermissionDenied) or error (any other code).
  void RecordQuery(Protocol protocol, const Status& status, Time started);
  static Time Now() { return std::chrono::steady_clock::now(); }

  // The exposition (metrics::RenderText) of everything above, for one scrape by a user with
  // `access`: the per-table series only for the tables it may SELECT (an administrator: all).
  // The server's and the flows' series hold no table data and are there for every user.
  std::string Render(const security::Access& access);

  // Where streams, pipelines and other parts of the server add their series.
  metrics::Registry& registry() { return registry_; }

 private:
  static size_t Index(Protocol protocol) { return protocol == Protocol::kPg ? 0 : 1; }

  metrics::Registry registry_;
  TableMetrics tables_;
  std::array<metrics::Gauge*, 2> connections_{};
  std::array<std::array<metrics::Counter*, 4>, 2> queries_{};  // by protocol, then outcome
  std::array<metrics::Histogram*, 2> durations_{};
};

}  // namespace basin::server
