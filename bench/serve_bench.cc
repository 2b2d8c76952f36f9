// `basin serve` under pgbench-style load (issue 10): 16 clients on loopback, each running
// prepared statements over the PostgreSQL protocol (libpq, extended protocol), 90% point
// lookups by key and 10% range aggregates, for BASIN_BENCH_SECONDS (60 at full scale), while
// one more connection INSERTs 10 rows every 100 ms into the same table. The table holds 1M
// rows written sorted by id in 20 INSERTs, so its files have disjoint id ranges and data
// skipping leaves one file per lookup.
//
// Printed per side: queries/s, p50/p99 latency per kind, failed queries, rows inserted, and
// count(*) at the end against the initial rows plus the inserted ones. Any failed query, a
// lookup that does not find its row, an aggregate that does not count its range or a lost
// insert fails the benchmark. The peers, in the same run:
// - PostgreSQL 15 with the same rows in a table with a primary key, the same client and load
//   (context, not a goal: an OLTP engine with a B-tree against files on a lakehouse); skipped,
//   with the reason, when its binaries are absent (scripts/setup.sh --bench installs them);
// - the same statements through basin::Session in this process (what `basin sql` runs), 16
//   threads with a session each (sharing a TableCache, as the server's connections do) and
//   the same writer, for as many queries as the server ran:
//   server p50 / in-process p50 is the protocol's overhead.

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "basin/server.h"
#include "basin/session.h"
#include "bench_util.h"
#include "pg_client.h"
#include "postgres_server.h"

namespace basin::bench {
namespace {

constexpr int64_t kFullRows = 1'000'000;
constexpr int kFiles = 20;
constexpr int kClients = 16;
constexpr double kFullSeconds = 60;
constexpr int64_t kFullSingleClientQueries = 5'000;  // the unloaded comparison, one client
constexpr int kAggregateOneIn = 10;
constexpr int64_t kAggregateSpan = 10'000;  // ids per aggregate: the range is span + 1 ids
constexpr int kInsertRows = 10;
constexpr auto kInsertInterval = std::chrono::milliseconds(100);
constexpr uint32_t kInt8Oid = 20;

// PostgreSQL's table has a primary key (its B-tree index); Basin's has no indexes.
std::string CreateTableSql(bool primary_key) {
  return fmt::format("CREATE TABLE t (id BIGINT NOT NULL, x BIGINT, name VARCHAR, amount DOUBLE PRECISION{})",
                     primary_key ? ", PRIMARY KEY (id)" : "");
}
constexpr char kLookupSql[] = "SELECT * FROM t WHERE id = $1";
constexpr char kAggregateSql[] = "SELECT count(*), sum(x) FROM t WHERE id BETWEEN $1 AND $1 + 10000";
static_assert(kAggregateSpan == 10'000, "kAggregateSql's span");

// Rows [begin, end): DuckDB and PostgreSQL read this alike.
std::string RowsSelect(int64_t begin, int64_t end) {
  return fmt::format(
      "SELECT i, i % 1000, 'name-' || (i % 997), CAST(i AS DOUBLE PRECISION) / 2 "
      "FROM generate_series({}, {}) AS r(i)",
      begin, end - 1);
}

// The writer's batch of ids [first, first + kInsertRows), the same rows RowsSelect makes.
std::string InsertSql(int64_t first) {
  std::string sql = "INSERT INTO t VALUES ";
  for (int64_t id = first; id < first + kInsertRows; id++) {
    sql += fmt::format("{}({}, {}, 'name-{}', CAST({} AS DOUBLE PRECISION) / 2)", id == first ? "" : ", ", id,
                       id % 1000, id % 997, id);
  }
  return sql;
}

enum class QueryKind { kLookup, kAggregate };

// One client's connection: the statements of the mix over the PostgreSQL protocol or in
// this process.
class Client {
 public:
  virtual ~Client() = default;
  // Runs `kind` for `id`: the rows a lookup found, or the count an aggregate gave.
  virtual Result<int64_t> Run(QueryKind kind, int64_t id) = 0;
  // Runs an INSERT: the rows it inserted.
  virtual Result<int64_t> Insert(const std::string& sql) = 0;
  // The first cell of `sql`'s result.
  virtual Result<std::string> QueryValue(const std::string& sql) = 0;
};

Result<int64_t> ParseInt(const std::optional<std::string>& cell, const std::string& what) {
  int64_t value = 0;
  const std::string text = cell.value_or("");
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
    return Status::InvalidArgument(what + " gave '" + text + "', not an integer");
  }
  return value;
}

class WireClient final : public Client {
 public:
  static Result<std::unique_ptr<Client>> Connect(const std::string& conninfo) {
    ASSIGN_OR_RETURN(PgClient connection, PgClient::Connect(conninfo));
    RETURN_IF_ERROR(connection.Prepare("lookup", kLookupSql, {kInt8Oid}));
    RETURN_IF_ERROR(connection.Prepare("aggregate", kAggregateSql, {kInt8Oid}));
    return std::unique_ptr<Client>(new WireClient(std::move(connection)));
  }

  Result<int64_t> Run(QueryKind kind, int64_t id) override {
    const bool lookup = kind == QueryKind::kLookup;
    ASSIGN_OR_RETURN(PgResult result,
                     connection_.ExecutePrepared(lookup ? "lookup" : "aggregate", {std::to_string(id)}));
    if (lookup) return static_cast<int64_t>(result.rows.size());
    if (result.rows.size() != 1)
      return Status::Internal("an aggregate returned " + std::to_string(result.rows.size()) + " rows");
    return ParseInt(result.rows[0][0], "count(*)");
  }
  Result<int64_t> Insert(const std::string& sql) override {
    ASSIGN_OR_RETURN(PgResult result, connection_.Execute(sql));
    return result.affected_rows;
  }
  Result<std::string> QueryValue(const std::string& sql) override { return connection_.QueryValue(sql); }

 private:
  explicit WireClient(PgClient connection) : connection_(std::move(connection)) {}
  PgClient connection_;
};

// The statements as the server runs them: each parameter bound as the literal the server
// makes of an int8 parameter.
class InProcessClient final : public Client {
 public:
  static Result<std::unique_ptr<Client>> Open(const std::string& warehouse,
                                              std::shared_ptr<TableCache> tables = nullptr) {
    ASSIGN_OR_RETURN(std::unique_ptr<Session> session,
                     Session::Open({.warehouse = warehouse, .tables = std::move(tables)}));
    return std::unique_ptr<Client>(new InProcessClient(std::move(session)));
  }

  Result<int64_t> Run(QueryKind kind, int64_t id) override {
    const bool lookup = kind == QueryKind::kLookup;
    ASSIGN_OR_RETURN(std::string sql, BindParameters(lookup ? kLookupSql : kAggregateSql,
                                                     {"CAST('" + std::to_string(id) + "' AS BIGINT)"}));
    ASSIGN_OR_RETURN(QueryResult result, Query(sql));
    if (lookup) return static_cast<int64_t>(result.row_count());
    if (result.row_count() != 1)
      return Status::Internal("an aggregate returned " + std::to_string(result.row_count()) + " rows");
    return ParseInt(result.rows[0][0], "count(*)");
  }
  Result<int64_t> Insert(const std::string& sql) override {
    ASSIGN_OR_RETURN(QueryResult result, Query(sql));
    const auto column =
        std::find(result.column_names.begin(), result.column_names.end(), "num_inserted_rows");
    if (column == result.column_names.end() || result.row_count() != 1) {
      return Status::Internal("an INSERT did not report num_inserted_rows");
    }
    return ParseInt(result.rows[0][column - result.column_names.begin()], "num_inserted_rows");
  }
  Result<std::string> QueryValue(const std::string& sql) override {
    ASSIGN_OR_RETURN(QueryResult result, Query(sql));
    if (result.row_count() == 0 || result.column_count() == 0 || !result.rows[0][0]) {
      return Status::InvalidArgument("expected a value from: " + sql);
    }
    return *result.rows[0][0];
  }

 private:
  explicit InProcessClient(std::unique_ptr<Session> session) : session_(std::move(session)) {}
  Result<QueryResult> Query(const std::string& sql) {
    ASSIGN_OR_RETURN(std::vector<StatementResult> results, session_->Execute(sql));
    return std::move(results.back().result);
  }
  std::unique_ptr<Session> session_;
};

struct KindFigures {
  std::vector<double> latencies_ms;
  int64_t failed = 0;
  double Percentile(double fraction) const {
    if (latencies_ms.empty()) return 0;
    std::vector<double> sorted = latencies_ms;
    const size_t rank = static_cast<size_t>(std::ceil(fraction * static_cast<double>(sorted.size())));
    const size_t index = std::min(sorted.size() - 1, rank == 0 ? 0 : rank - 1);
    std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(index), sorted.end());
    return sorted[index];
  }
};

struct LoadFigures {
  std::string side;
  KindFigures lookups;
  KindFigures aggregates;
  double seconds = 0;
  int64_t inserted_rows = 0;
  int64_t failed_inserts = 0;
  std::string first_error;

  int64_t queries() const {
    return static_cast<int64_t>(lookups.latencies_ms.size() + aggregates.latencies_ms.size());
  }
  int64_t failed() const { return lookups.failed + aggregates.failed + failed_inserts; }
  double queries_per_second() const { return static_cast<double>(queries()) / seconds; }
};

// When the clients stop: after `seconds`, or once `query_budget` queries have started.
struct LoadLimit {
  double seconds = 0;
  std::optional<int64_t> query_budget;
};

// A client thread's share: the mix until the limit, each query's latency recorded (failed
// ones counted, not timed).
void RunClient(Client& client, int index, int64_t rows, const LoadLimit& limit,
               std::chrono::steady_clock::time_point deadline, std::atomic<int64_t>& started,
               LoadFigures& out) {
  std::mt19937_64 random(0x5eed + static_cast<uint64_t>(index));
  std::uniform_int_distribution<int64_t> lookup_id(0, rows - 1);
  std::uniform_int_distribution<int64_t> range_start(0, std::max<int64_t>(0, rows - kAggregateSpan - 1));
  while (true) {
    if (limit.query_budget ? started.fetch_add(1) >= *limit.query_budget
                           : std::chrono::steady_clock::now() >= deadline) {
      break;
    }
    const QueryKind kind = random() % kAggregateOneIn == 0 ? QueryKind::kAggregate : QueryKind::kLookup;
    const int64_t id = kind == QueryKind::kLookup ? lookup_id(random) : range_start(random);
    const int64_t expected = kind == QueryKind::kLookup ? 1 : std::min(kAggregateSpan + 1, rows - id);
    KindFigures& figures = kind == QueryKind::kLookup ? out.lookups : out.aggregates;
    const auto start = std::chrono::steady_clock::now();
    Result<int64_t> got = client.Run(kind, id);
    const double ms = SecondsSince(start) * 1000;
    Status status = got.status();
    if (got.ok() && *got != expected) {
      status = Status::Internal(fmt::format("{} of id {} gave {}, expected {}",
                                            kind == QueryKind::kLookup ? "a lookup" : "an aggregate", id,
                                            *got, expected));
    }
    if (status.ok()) {
      figures.latencies_ms.push_back(ms);
    } else {
      figures.failed++;
      if (out.first_error.empty()) out.first_error = status.ToString();
    }
  }
}

// Inserts kInsertRows rows every kInsertInterval, ids from `first_id` up, until `stop`;
// counts them (and failures) in `out`.
void RunWriter(Client& writer, int64_t first_id, const std::atomic<bool>& stop, LoadFigures& out) {
  auto next = std::chrono::steady_clock::now();
  for (int64_t id = first_id; !stop.load(); id += kInsertRows) {
    Result<int64_t> inserted = writer.Insert(InsertSql(id));
    if (inserted.ok() && *inserted == kInsertRows) {
      out.inserted_rows += kInsertRows;
    } else {
      out.failed_inserts++;
      if (out.first_error.empty()) {
        out.first_error = inserted.ok()
                              ? fmt::format("an INSERT of {} rows reported {}", kInsertRows, *inserted)
                              : inserted.status().ToString();
      }
    }
    next += kInsertInterval;
    std::this_thread::sleep_until(next);
  }
}

// The load on `clients` (one thread each) while `writer` inserts; then checks that the
// table holds `rows` plus every inserted row.
Result<LoadFigures> RunLoad(const std::string& side, std::vector<std::unique_ptr<Client>>& clients,
                            Client& writer, int64_t rows, const LoadLimit& limit) {
  LoadFigures total;
  total.side = side;
  std::vector<LoadFigures> shares(clients.size());
  std::atomic<int64_t> started{0};
  std::atomic<bool> stop_writer{false};
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                    std::chrono::duration<double>(limit.seconds));
  std::thread writer_thread([&] { RunWriter(writer, rows, stop_writer, total); });
  std::vector<std::thread> threads;
  for (size_t i = 0; i < clients.size(); i++) {
    threads.emplace_back(
        [&, i] { RunClient(*clients[i], static_cast<int>(i), rows, limit, deadline, started, shares[i]); });
  }
  for (std::thread& thread : threads) thread.join();
  total.seconds = SecondsSince(start);
  stop_writer = true;
  writer_thread.join();

  for (const LoadFigures& share : shares) {
    for (auto [from, to] :
         {std::pair{&share.lookups, &total.lookups}, {&share.aggregates, &total.aggregates}}) {
      to->latencies_ms.insert(to->latencies_ms.end(), from->latencies_ms.begin(), from->latencies_ms.end());
      to->failed += from->failed;
    }
    if (total.first_error.empty()) total.first_error = share.first_error;
  }

  ASSIGN_OR_RETURN(std::string count, writer.QueryValue("SELECT count(*) FROM t"));
  if (count != std::to_string(rows + total.inserted_rows)) {
    return Status::Internal(fmt::format("{}: t holds {} rows after the load, expected {} + {} inserted", side,
                                        count, rows, total.inserted_rows));
  }
  Progress(
      "serve_bench",
      fmt::format(
          "{}: {} queries in {:.1f} s = {:.0f}/s; lookups p50 {:.2f} ms p99 {:.2f} ms ({}), aggregates "
          "p50 {:.2f} ms p99 {:.2f} ms ({}); {} failed; {} rows inserted, count(*) {} as expected{}",
          side, total.queries(), total.seconds, total.queries_per_second(), total.lookups.Percentile(0.5),
          total.lookups.Percentile(0.99), total.lookups.latencies_ms.size(), total.aggregates.Percentile(0.5),
          total.aggregates.Percentile(0.99), total.aggregates.latencies_ms.size(), total.failed(),
          total.inserted_rows, count,
          total.first_error.empty() ? "" : "; first error: " + total.first_error));
  return total;
}

Result<std::string> Fingerprint(Client& client) {
  std::string out;
  for (const char* part : {"count(*)", "sum(x)", "sum(length(name))"}) {
    ASSIGN_OR_RETURN(std::string value, client.QueryValue(fmt::format("SELECT {} FROM t", part)));
    out += (out.empty() ? "" : "/") + value;
  }
  return out;
}

// The warehouse every Basin side starts from a copy of.
Status CreateSeedWarehouse(const std::filesystem::path& warehouse, int64_t rows) {
  ASSIGN_OR_RETURN(std::unique_ptr<Session> session, Session::Open({.warehouse = warehouse.string()}));
  RETURN_IF_ERROR(session->Execute(CreateTableSql(false)).status());
  for (int file = 0; file < kFiles; file++) {
    RETURN_IF_ERROR(
        session->Execute("INSERT INTO t " + RowsSelect(rows * file / kFiles, rows * (file + 1) / kFiles))
            .status());
  }
  return Status::OK();
}

Result<std::filesystem::path> CopyWarehouse(const std::filesystem::path& seed,
                                            const std::filesystem::path& to) {
  std::error_code ec;
  std::filesystem::copy(seed, to, std::filesystem::copy_options::recursive, ec);
  if (ec) return Status::IOError("cannot copy " + seed.string() + " to " + to.string() + ": " + ec.message());
  return to;
}

template <typename Open>
Result<std::vector<std::unique_ptr<Client>>> OpenClients(int count, const Open& open) {
  std::vector<std::unique_ptr<Client>> clients;
  for (int i = 0; i < count; i++) {
    ASSIGN_OR_RETURN(std::unique_ptr<Client> client, open());
    clients.push_back(std::move(client));
  }
  return clients;
}

Result<LoadFigures> RunServer(const std::filesystem::path& warehouse, int64_t rows, int client_count,
                              const LoadLimit& limit) {
  ServerOptions options;
  options.warehouse = warehouse.string();
  options.pg_port = 0;
  options.admin_password = "bench";
  ASSIGN_OR_RETURN(std::unique_ptr<Server> server, Server::Start(options));
  const std::string conninfo = fmt::format(
      "host=127.0.0.1 port={} user=admin password=bench dbname=basin sslmode=disable", server->pg_port());
  ASSIGN_OR_RETURN(auto clients, OpenClients(client_count, [&] { return WireClient::Connect(conninfo); }));
  ASSIGN_OR_RETURN(auto writer, WireClient::Connect(conninfo));
  return RunLoad(fmt::format("basin serve, {} client{}", client_count, client_count == 1 ? "" : "s"), clients,
                 *writer, rows, limit);
}

Result<LoadFigures> RunInProcess(const std::filesystem::path& warehouse, int64_t rows, int client_count,
                                 const LoadLimit& limit) {
  // The server's connections share one cache of table snapshots; so do these sessions.
  std::shared_ptr<TableCache> tables = NewTableCache(32);
  ASSIGN_OR_RETURN(auto clients, OpenClients(client_count, [&] {
                     return InProcessClient::Open(warehouse.string(), tables);
                   }));
  ASSIGN_OR_RETURN(auto writer, InProcessClient::Open(warehouse.string(), tables));
  return RunLoad(
      fmt::format("in-process basin::Session, {} thread{}", client_count, client_count == 1 ? "" : "s"),
      clients, *writer, rows, limit);
}

// The PostgreSQL peer; nullopt when its binaries are absent.
Result<std::optional<LoadFigures>> RunPostgres(const std::filesystem::path& folder, int64_t rows,
                                               const std::string& basin_fingerprint, const LoadLimit& limit) {
  const std::optional<std::filesystem::path> binaries = PostgresServer::FindBinaries();
  if (!binaries) {
    Progress("serve_bench",
             "PostgreSQL peer skipped: no initdb and postgres in $BASIN_BENCH_PG_BIN or, when that is unset, "
             "/usr/lib/postgresql/15/bin or PATH (scripts/setup.sh --bench installs postgresql-15)");
    return std::optional<LoadFigures>();
  }
  ASSIGN_OR_RETURN(std::unique_ptr<PostgresServer> server, PostgresServer::Start(*binaries, folder));
  ASSIGN_OR_RETURN(PgClient loader, PgClient::Connect(server->conninfo()));
  ASSIGN_OR_RETURN(std::string version, loader.QueryValue("SHOW server_version"));
  RETURN_IF_ERROR(loader.Execute(CreateTableSql(true)).status());
  RETURN_IF_ERROR(loader.Execute("INSERT INTO t " + RowsSelect(0, rows)).status());
  RETURN_IF_ERROR(loader.Execute("VACUUM ANALYZE t").status());
  ASSIGN_OR_RETURN(auto writer, WireClient::Connect(server->conninfo()));
  ASSIGN_OR_RETURN(std::string fingerprint, Fingerprint(*writer));
  if (fingerprint != basin_fingerprint) {
    return Status::Internal("PostgreSQL's table differs from Basin's: " + fingerprint + " against " +
                            basin_fingerprint);
  }
  ASSIGN_OR_RETURN(auto clients,
                   OpenClients(kClients, [&] { return WireClient::Connect(server->conninfo()); }));
  ASSIGN_OR_RETURN(LoadFigures figures, RunLoad("PostgreSQL " + version, clients, *writer, rows, limit));
  return std::optional<LoadFigures>(std::move(figures));
}

// BASIN_BENCH_SECONDS, else 60 s times the scale, at least 5.
double LoadSeconds() {
  if (const char* text = std::getenv("BASIN_BENCH_SECONDS"); text != nullptr && *text != '\0') {
    char* end = nullptr;
    const double seconds = std::strtod(text, &end);
    if (end != text && *end == '\0' && seconds > 0) return seconds;
    std::fprintf(stderr, "BASIN_BENCH_SECONDS='%s' is not a positive number; using the default\n", text);
  }
  return std::max(5.0, kFullSeconds * Scale());
}

Status Run() {
  const int64_t rows = Scaled(kFullRows, 20'000);
  const LoadLimit limit{.seconds = LoadSeconds(), .query_budget = std::nullopt};
  Progress("serve_bench",
           fmt::format("{} rows in {} files, {} clients for {:.0f} s (1 in {} an aggregate over {} "
                       "ids), a writer inserting {} rows every {} ms",
                       rows, kFiles, kClients, limit.seconds, kAggregateOneIn, kAggregateSpan + 1,
                       kInsertRows, kInsertInterval.count()));
  ASSIGN_OR_RETURN(ScratchDir scratch, ScratchDir::Create("serve"));
  const std::filesystem::path seed = scratch.path() / "seed";
  RETURN_IF_ERROR(CreateSeedWarehouse(seed, rows));
  ASSIGN_OR_RETURN(auto seed_client, InProcessClient::Open(seed.string()));
  ASSIGN_OR_RETURN(std::string fingerprint, Fingerprint(*seed_client));
  seed_client.reset();

  // Each Basin side starts from its own copy of the seed, so that none reads another's inserts.
  int copies = 0;
  auto fresh_copy = [&]() {
    return CopyWarehouse(seed, scratch.path() / fmt::format("warehouse-{}", copies++));
  };
  ASSIGN_OR_RETURN(auto served_warehouse, fresh_copy());
  ASSIGN_OR_RETURN(LoadFigures served, RunServer(served_warehouse, rows, kClients, limit));
  ASSIGN_OR_RETURN(std::optional<LoadFigures> postgres,
                   RunPostgres(scratch.path() / "postgres", rows, fingerprint, limit));
  // The protocol's overhead: the same statements in process, under the same load, and
  // without load (one client, no queueing for the two cores).
  ASSIGN_OR_RETURN(auto local_warehouse, fresh_copy());
  ASSIGN_OR_RETURN(LoadFigures local, RunInProcess(local_warehouse, rows, kClients,
                                                   {.seconds = 0, .query_budget = served.queries()}));
  const LoadLimit single{.seconds = 0, .query_budget = Scaled(kFullSingleClientQueries, 1000)};
  ASSIGN_OR_RETURN(auto served_single_warehouse, fresh_copy());
  ASSIGN_OR_RETURN(LoadFigures served_single, RunServer(served_single_warehouse, rows, 1, single));
  ASSIGN_OR_RETURN(auto local_single_warehouse, fresh_copy());
  ASSIGN_OR_RETURN(LoadFigures local_single, RunInProcess(local_single_warehouse, rows, 1, single));

  const auto p50 = [](const LoadFigures& side, QueryKind kind) {
    return (kind == QueryKind::kLookup ? side.lookups : side.aggregates).Percentile(0.5);
  };
  const auto p50_ratios = [&](const LoadFigures& basin, const LoadFigures& peer) {
    return fmt::format("lookup {:.2f}, aggregate {:.2f}",
                       p50(basin, QueryKind::kLookup) / p50(peer, QueryKind::kLookup),
                       p50(basin, QueryKind::kAggregate) / p50(peer, QueryKind::kAggregate));
  };
  std::string text = fmt::format(
      "{} clients, {:.0f} s, {} rows (scale {}): basin serve {:.0f} queries/s, lookup p50 {:.2f} ms p99 "
      "{:.2f} ms, "
      "aggregate p50 {:.2f} ms p99 {:.2f} ms, {} failed, {} rows inserted; server/in-process p50 at {} "
      "clients {}, "
      "at 1 client {} ({:.2f} against {:.2f} ms per lookup)",
      kClients, limit.seconds, rows, Scale(), served.queries_per_second(), served.lookups.Percentile(0.5),
      served.lookups.Percentile(0.99), served.aggregates.Percentile(0.5), served.aggregates.Percentile(0.99),
      served.failed(), served.inserted_rows, kClients, p50_ratios(served, local),
      p50_ratios(served_single, local_single), p50(served_single, QueryKind::kLookup),
      p50(local_single, QueryKind::kLookup));
  if (postgres) {
    text += fmt::format(
        "; {} {:.0f} queries/s, lookup p50 {:.2f} ms, aggregate p50 {:.2f} ms: basin/postgres throughput "
        "{:.3f}, p50 {} "
        "(context, not a goal)",
        postgres->side, postgres->queries_per_second(), p50(*postgres, QueryKind::kLookup),
        p50(*postgres, QueryKind::kAggregate), served.queries_per_second() / postgres->queries_per_second(),
        p50_ratios(served, *postgres));
  } else {
    text += "; PostgreSQL peer skipped (not installed)";
  }
  PrintSummary("serve_bench", text);
  for (const LoadFigures* side :
       {&served, &local, &served_single, &local_single, postgres ? &*postgres : nullptr}) {
    if (side != nullptr && side->failed() > 0) {
      return Status::Internal(
          fmt::format("{}: {} queries failed, the first: {}", side->side, side->failed(), side->first_error));
    }
  }
  return Status::OK();
}

}  // namespace
}  // namespace basin::bench

int main() { return basin::bench::RunBenchmark("serve_bench", basin::bench::Run); }
