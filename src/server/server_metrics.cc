#include "server/server_metrics.h"

#include "basin/version.h"

namespace basin::server {
namespace {

constexpr std::array<const char*, 2> kProtocols = {"pg", "http"};
constexpr std::array<const char*, 4> kOutcomes = {"ok", "error", "cancelled", "denied"};

// The index of `status`'s outcome in kOutcomes.
size_t Outcome(const Status& status) {
  if (status.ok()) return 0;
  if (status.code() == ErrorCode::kCancelled) return 2;
  if (status.code() == ErrorCode::kPermissionDenied) return 3;
  return 1;
}

}  // namespace

ServerMetrics::ServerMetrics(const std::string& warehouse, std::shared_ptr<const Clock> clock)
    : tables_(warehouse, std::move(clock)) {
  registry_.AddGauge("basin_up", "1 while the server runs.").With().Set(1);
  registry_.AddGauge("basin_build_info", "The server's version, as a label; the value is 1.", {"version"})
      .With({kVersion})
      .Set(1);
  metrics::Family<metrics::Gauge>& connections =
      registry_.AddGauge("basin_connections", "Client connections open now.", {"protocol"});
  metrics::Family<metrics::Counter>& queries = registry_.AddCounter(
      "basin_queries_total", "Statements run, by how they ended.", {"protocol", "outcome"});
  metrics::Family<metrics::Histogram>& durations = registry_.AddHistogram(
      "basin_query_duration_seconds", "How long statements ran, from arrival to their last row sent.",
      metrics::LatencyBucketsSeconds(), {"protocol"});
  for (size_t p = 0; p < kProtocols.size(); p++) {
    connections_[p] = &connections.With({kProtocols[p]});
    durations_[p] = &durations.With({kProtocols[p]});
    for (size_t o = 0; o < kOutcomes.size(); o++)
      queries_[p][o] = &queries.With({kProtocols[p], kOutcomes[o]});
  }
}

void ServerMetrics::RecordQuery(Protocol protocol, const Status& status, Time started) {
  const std::chrono::duration<double> seconds = Now() - started;
  queries_[Index(protocol)][Outcome(status)]->Increment();
  durations_[Index(protocol)]->Observe(seconds.count());
}

std::string ServerMetrics::Render(const security::Access& access) {
  std::vector<metrics::FamilySamples> families = registry_.Collect();
  std::vector<metrics::FamilySamples> tables = tables_.Collect([&access](const catalog::TableName& table) {
    return access.Holds(security::Privilege::kSelect, security::Securable::Table(table.schema, table.table));
  });
  std::move(tables.begin(), tables.end(), std::back_inserter(families));
  std::vector<metrics::FamilySamples> process = metrics::ProcessRegistry().Collect();
  std::move(process.begin(), process.end(), std::back_inserter(families));
  return metrics::RenderText(families);
}

}  // namespace basin::server
