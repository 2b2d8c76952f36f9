// GET /metrics of basin::Server: the text parsed as Prometheus reads it (format 0.0.4), the
// server's series moved by statements over HTTP and the PostgreSQL protocol (psql, which
// skips locally and fails in CI when absent), commit conflicts of two writers, and the
// table series against what the table holds, served from kept figures while the table does
// not change.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "basin/object_store.h"
#include "basin/server.h"
#include "basin/session.h"
#include "basin/version.h"
#include "catalog/warehouse.h"
#include "delta/log_segment.h"
#include "delta/transaction.h"
#include "engine/parquet_log_io.h"
#include "server/table_metrics.h"
#include "test_server.h"
#include "testing/interop.h"
#include "testing/test_util.h"

namespace basin {
namespace {

using json = nlohmann::json;

// One scrape, parsed: each sample's value by its series as written (`name{a="x",b="y"}`),
// and each family's type. Lines the format does not allow fail the test.
struct Scrape {
  std::map<std::string, double> values;
  std::map<std::string, std::string> types;

  // The value of `series`; NaN (failing the comparisons) when it is missing.
  double operator[](const std::string& series) const {
    auto found = values.find(series);
    EXPECT_NE(found, values.end()) << "no series " << series;
    return found == values.end() ? std::nan("") : found->second;
  }
};

bool IsNameChar(char c, bool first) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':' ||
         (!first && std::isdigit(static_cast<unsigned char>(c)));
}

// A metric or label name at `at`, advancing it; empty when there is none.
std::string ReadName(const std::string& line, size_t& at) {
  const size_t start = at;
  while (at < line.size() && IsNameChar(line[at], at == start)) at++;
  return line.substr(start, at - start);
}

// `name` without a histogram sample's suffix, when it has one and its family is a histogram.
std::string FamilyOf(const std::string& name, const std::map<std::string, std::string>& types) {
  for (const char* suffix : {"_bucket", "_sum", "_count"}) {
    const std::string s = suffix;
    if (name.size() > s.size() && name.ends_with(s)) {
      const std::string base = name.substr(0, name.size() - s.size());
      auto type = types.find(base);
      if (type != types.end() && type->second == "histogram") return base;
    }
  }
  return name;
}

// Parses `text` as the text exposition format 0.0.4 reads it, into `scrape`.
void ParseInto(const std::string& text, Scrape& scrape) {
  std::map<std::string, bool> has_help;
  EXPECT_TRUE(text.ends_with("\n"));
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    SCOPED_TRACE(line);
    if (line.starts_with("# HELP ") || line.starts_with("# TYPE ")) {
      size_t at = 7;
      const std::string name = ReadName(line, at);
      ASSERT_FALSE(name.empty());
      ASSERT_EQ(line[at], ' ');
      const std::string rest = line.substr(at + 1);
      if (line[2] == 'H') {
        EXPECT_FALSE(has_help[name]) << "a second HELP";
        has_help[name] = true;
      } else {
        EXPECT_FALSE(scrape.types.contains(name)) << "a second TYPE";
        EXPECT_TRUE(rest == "counter" || rest == "gauge" || rest == "histogram") << rest;
        scrape.types[name] = rest;
      }
      continue;
    }
    size_t at = 0;
    const std::string name = ReadName(line, at);
    ASSERT_FALSE(name.empty());
    EXPECT_TRUE(scrape.types.contains(FamilyOf(name, scrape.types))) << "a sample before its TYPE";
    if (line[at] == '{') {
      at++;
      while (line[at] != '}') {
        ASSERT_FALSE(ReadName(line, at).empty());
        ASSERT_EQ(line.substr(at, 2), "=\"");
        for (at += 2; line[at] != '"'; at++) {
          ASSERT_LT(at, line.size());
          if (line[at] == '\\') {
            at++;
            ASSERT_TRUE(line[at] == '\\' || line[at] == '"' || line[at] == 'n') << "escape at " << at;
          }
        }
        at++;
        if (line[at] == ',') at++;
      }
      at++;
    }
    const std::string series = line.substr(0, at);
    ASSERT_EQ(line[at], ' ');
    const std::string value = line.substr(at + 1);
    double parsed = 0;
    if (value == "+Inf" || value == "-Inf" || value == "NaN") {
      parsed = value == "NaN" ? std::nan("") : (value[0] == '+' ? 1 : -1) * HUGE_VAL;
    } else {
      size_t used = 0;
      parsed = std::stod(value, &used);
      ASSERT_EQ(used, value.size()) << value;
    }
    EXPECT_FALSE(scrape.values.contains(series)) << "a second sample of " << series;
    scrape.values[series] = parsed;
  }
}

Scrape Parse(const std::string& text) {
  Scrape scrape;
  ParseInto(text, scrape);
  return scrape;
}

constexpr char kSlowQuery[] =
    "SELECT count(*) FROM range(1000000) a, range(1000000) b WHERE a.range + b.range = -1";

std::string Queries(const std::string& protocol, const std::string& outcome) {
  return "basin_queries_total{protocol=\"" + protocol + "\",outcome=\"" + outcome + "\"}";
}

std::string OfTable(const std::string& family) { return family + "{schema=\"s\",table=\"t\"}"; }

bool EveryTable(const catalog::TableName&) { return true; }

class HttpMetricsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ServerOptions options = testing::HttpServerOptions(warehouse_.str(), "admin pass", clock_);
    options.http.threads = 4;
    ASSERT_OK_AND_ASSIGN(server_, Server::Start(options));
    ASSERT_OK_AND_ASSIGN(token_,
                         testing::CreateUserWithToken(warehouse_.str(), "alice", "alice pass", clock_));
    // alice may do everything but an administrator's work (docs/governance.md).
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> owner, Session::Open({.warehouse = warehouse_.str()}));
    ASSERT_OK(owner->Execute("GRANT ALL PRIVILEGES ON CATALOG TO alice").status());
    ASSERT_OK(Post("CREATE SCHEMA s"));
    ASSERT_OK(Post("CREATE TABLE s.t (id BIGINT, name STRING)"));
  }

  httplib::Client Client() const {
    httplib::Client client("127.0.0.1", server_->http_port());
    client.set_read_timeout(60, 0);
    return client;
  }
  httplib::Headers Auth() const { return {{"Authorization", "Bearer " + token_}}; }

  // Runs `sql` over HTTP: OK, or an error carrying the answer's status.
  Status Post(const std::string& sql, bool wait = true) {
    httplib::Result result = Client().Post(
        "/api/v1/statements", Auth(), json{{"statement", sql}, {"wait", wait}}.dump(), "application/json");
    if (!result) return Status::IOError(httplib::to_string(result.error()));
    if (result->status / 100 != 2)
      return Status::InvalidArgument(std::to_string(result->status) + result->body);
    return Status::OK();
  }

  Scrape Metrics() { return MetricsAs(token_); }
  Scrape MetricsAs(const std::string& token) {
    httplib::Result result = Client().Get("/metrics", {{"Authorization", "Bearer " + token}});
    EXPECT_TRUE(result);
    if (!result) return {};
    EXPECT_EQ(result->status, 200) << result->body;
    EXPECT_EQ(result->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
    return Parse(result->body);
  }

  // Scrapes until `done` holds of a scrape (what a background thread records), for at most 10 s.
  Scrape MetricsWhen(const std::function<bool(const Scrape&)>& done) {
    Scrape scrape = Metrics();
    for (int i = 0; i < 200 && !done(scrape); i++) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      scrape = Metrics();
    }
    EXPECT_TRUE(done(scrape));
    return scrape;
  }

  json TableFiles() {
    httplib::Result result = Client().Get("/api/v1/tables/s.t/files", Auth());
    EXPECT_TRUE(result && result->status == 200);
    return result ? json::parse(result->body) : json();
  }

  std::string TableLocation() {
    auto warehouse = catalog::Warehouse::Open(warehouse_.str());
    EXPECT_OK(warehouse.status());
    auto entry = (*warehouse)->Get({"s", "t"});
    EXPECT_OK(entry.status());
    return entry.ok() ? entry->location : "";
  }

  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>(SystemClock()->NowMs());
  testing::TempDir warehouse_;
  std::unique_ptr<Server> server_;
  std::string token_;
};

TEST_F(HttpMetricsTest, NeedsAToken) {
  httplib::Result result = Client().Get("/metrics");
  ASSERT_TRUE(result);
  EXPECT_EQ(result->status, 401);
  result = Client().Get("/metrics", {{"Authorization", "Bearer basin_0000000000000000_00"}});
  ASSERT_TRUE(result);
  EXPECT_EQ(result->status, 401);
}

TEST_F(HttpMetricsTest, ServerSeriesCountStatementsAndConnections) {
  const Scrape before = Metrics();
  EXPECT_EQ(before["basin_up"], 1);
  EXPECT_EQ(before["basin_build_info{version=\"" + std::string(kVersion) + "\"}"], 1);
  EXPECT_EQ(before.types.at("basin_queries_total"), "counter");
  EXPECT_EQ(before.types.at("basin_query_duration_seconds"), "histogram");
  EXPECT_EQ(before.types.at("basin_commit_conflicts_total"), "counter");
  EXPECT_GE(before["basin_connections{protocol=\"http\"}"], 1);  // the scrape's own
  EXPECT_EQ(before["basin_connections{protocol=\"pg\"}"], 0);

  ASSERT_OK(Post("SELECT 42"));
  ASSERT_OK(Post("INSERT INTO s.t VALUES (1, 'a')"));
  EXPECT_FALSE(Post("SELECT * FROM no_such_table").ok());
  httplib::Headers csv = Auth();
  csv.emplace("Accept", "text/csv");
  httplib::Result streamed = Client().Post(
      "/api/v1/statements", csv, json{{"statement", "SELECT * FROM range(5000)"}}.dump(), "application/json");
  ASSERT_TRUE(streamed && streamed->status == 200);
  // A statement cancelled while it runs.
  httplib::Result started =
      Client().Post("/api/v1/statements", Auth(), json{{"statement", kSlowQuery}, {"wait", false}}.dump(),
                    "application/json");
  ASSERT_TRUE(started && started->status == 202);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  httplib::Result deleted = Client().Delete(
      "/api/v1/statements/" + json::parse(started->body)["statement_id"].get<std::string>(), Auth());
  ASSERT_TRUE(deleted && deleted->status == 200);

  // A pg connection is counted from its accept to its end.
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(server_->pg_port()));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  // The cancelled and the CSV statements are counted once their threads are done with them.
  const std::string cancelled = Queries("http", "cancelled");
  const std::string ok = Queries("http", "ok");
  const Scrape after = MetricsWhen([&](const Scrape& s) {
    return s.values.at(cancelled) == before[cancelled] + 1 && s.values.at(ok) == before[ok] + 3 &&
           s.values.at("basin_connections{protocol=\"pg\"}") == 1;
  });
  ::close(fd);
  EXPECT_EQ(after[Queries("http", "error")], before[Queries("http", "error")] + 1);
  EXPECT_EQ(after[Queries("http", "denied")], before[Queries("http", "denied")]);
  EXPECT_EQ(after[Queries("pg", "ok")], before[Queries("pg", "ok")]);
  const std::string count = "basin_query_duration_seconds_count{protocol=\"http\"}";
  EXPECT_EQ(after[count], before[count] + 5);
  EXPECT_EQ(after["basin_query_duration_seconds_bucket{protocol=\"http\",le=\"+Inf\"}"], after[count]);
  // The cancelled statement ran 200 ms at least.
  EXPECT_GE(after["basin_query_duration_seconds_sum{protocol=\"http\"}"],
            before["basin_query_duration_seconds_sum{protocol=\"http\"}"] + 0.2);
  EXPECT_LT(after["basin_query_duration_seconds_bucket{protocol=\"http\",le=\"0.1\"}"], after[count]);
  MetricsWhen([](const Scrape& s) { return s.values.at("basin_connections{protocol=\"pg\"}") == 0; });
}

TEST_F(HttpMetricsTest, StatementsOverThePgProtocolAreCounted) {
  std::optional<std::filesystem::path> psql = testing::FindOnPath("psql");
  if (!psql) {
    if (testing::InCi()) FAIL() << "psql is not on PATH in CI (scripts/setup.sh installs postgresql-client)";
    GTEST_SKIP() << "psql is not on PATH (scripts/setup.sh installs postgresql-client); skipping";
  }
  auto run_psql = [&](const std::string& sql) {
    Result<testing::ProcessOutput> run = testing::RunProcess(
        {psql->string(), "-X", "-A", "-t", "-c", sql,
         "host=127.0.0.1 port=" + std::to_string(server_->pg_port()) + " user=admin dbname=basin"},
        {"PGPASSWORD=admin pass", "PGCONNECT_TIMEOUT=10"});
    EXPECT_OK(run.status());
    return run.ok() ? run->exit_code : -1;
  };
  const Scrape before = Metrics();
  EXPECT_EQ(run_psql("SELECT 1; INSERT INTO s.t VALUES (2, 'b')"), 0);
  EXPECT_NE(run_psql("SELECT * FROM no_such_table"), 0);
  const Scrape after = Metrics();
  EXPECT_EQ(after[Queries("pg", "ok")], before[Queries("pg", "ok")] + 2);
  EXPECT_EQ(after[Queries("pg", "error")], before[Queries("pg", "error")] + 1);
  EXPECT_EQ(after[Queries("http", "ok")], before[Queries("http", "ok")]);
  const std::string count = "basin_query_duration_seconds_count{protocol=\"pg\"}";
  EXPECT_EQ(after[count], before[count] + 3);
  EXPECT_GT(after["basin_query_duration_seconds_sum{protocol=\"pg\"}"],
            before["basin_query_duration_seconds_sum{protocol=\"pg\"}"]);
}

TEST_F(HttpMetricsTest, TwoWritersCountAConflictAndARetry) {
  ASSERT_OK(Post("INSERT INTO s.t VALUES (1, 'a')"));
  // A writer of this process reads version 1 and re-adds a file of it (as a compaction
  // that changes nothing would) ...
  engine::DuckDBParquetLogIO io;
  const std::string location = TableLocation();
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<ObjectStore> store, OpenStoreAt(location));
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<delta::Snapshot> read, delta::LoadSnapshot(store, location, io));
  delta::TransactionOptions options;
  options.backoff_initial_ms = 1;
  options.backoff_max_ms = 5;
  delta::Transaction writer(read, options);
  delta::AddFile again = *read->files.begin();
  again.data_change = false;
  writer.Add(again);
  // ... while the server commits version 2.
  ASSERT_OK(Post("INSERT INTO s.t VALUES (2, 'b')"));
  const Scrape before = Metrics();
  ASSERT_OK_AND_ASSIGN(delta::CommitResult committed, writer.Commit());
  EXPECT_EQ(committed.version, 3);
  const Scrape after = Metrics();
  EXPECT_EQ(after["basin_commit_conflicts_total"], before["basin_commit_conflicts_total"] + 1);
  EXPECT_EQ(after["basin_commit_retries_total"], before["basin_commit_retries_total"] + 1);
  EXPECT_EQ(after[OfTable("basin_table_version")], 3);
  EXPECT_EQ(after[OfTable("basin_table_files")], 2);
}

TEST_F(HttpMetricsTest, TableSeriesMatchTheTable) {
  ASSERT_OK(Post("INSERT INTO s.t VALUES (1, 'a')"));
  ASSERT_OK(Post("INSERT INTO s.t VALUES (2, 'b'), (3, 'c')"));
  json files = TableFiles();
  ASSERT_EQ(files["num_files"], 2);
  double bytes = 0;
  for (const json& file : files["files"]) bytes += file["size_bytes"].get<double>();
  clock_->AdvanceMs(3'600'000);
  Scrape scrape = Metrics();
  EXPECT_EQ(scrape.types.at("basin_table_files"), "gauge");
  EXPECT_EQ(scrape[OfTable("basin_table_version")], 2);
  EXPECT_EQ(files["version"], 2);
  EXPECT_EQ(scrape[OfTable("basin_table_files")], 2);
  EXPECT_EQ(scrape[OfTable("basin_table_bytes")], bytes);
  EXPECT_EQ(scrape[OfTable("basin_table_small_files")], 2);  // a few hundred bytes each, of 128 MiB
  const double age = scrape[OfTable("basin_table_last_commit_age_seconds")];
  EXPECT_GT(age, 3500);
  EXPECT_LE(age, 3600);
  EXPECT_EQ(scrape["basin_table_scrape_errors"], 0);

  // A target of 4 bytes: no file is under a quarter of it.
  ASSERT_OK(Post("ALTER TABLE s.t SET TBLPROPERTIES ('delta.targetFileSize' = '4')"));
  scrape = Metrics();
  EXPECT_EQ(scrape[OfTable("basin_table_version")], 3);
  EXPECT_EQ(scrape[OfTable("basin_table_small_files")], 0);
  EXPECT_LT(scrape[OfTable("basin_table_last_commit_age_seconds")], age);

  // While the table does not change, its figures are kept: a log that can no longer be
  // replayed from the start is not read again ...
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<ObjectStore> store, OpenStoreAt(TableLocation()));
  ASSERT_OK(store->Put(delta::CommitKey(1), "not json\n"));
  scrape = Metrics();
  EXPECT_EQ(scrape[OfTable("basin_table_files")], 2);
  EXPECT_EQ(scrape["basin_table_scrape_errors"], 0);
  // ... which a scraper without them would.
  server::TableMetrics fresh(warehouse_.str(), clock_);
  const Scrape unkept = Parse(metrics::RenderText(fresh.Collect(EveryTable)));
  EXPECT_FALSE(unkept.values.contains(OfTable("basin_table_files")));
  EXPECT_EQ(unkept["basin_table_scrape_errors"], 1);

  // A dropped table's series go.
  ASSERT_OK(Post("DROP TABLE s.t"));
  scrape = Metrics();
  EXPECT_FALSE(scrape.values.contains(OfTable("basin_table_version")));
}

TEST_F(HttpMetricsTest, TableSeriesAreThoseTheUserMayRead) {
  ASSERT_OK(Post("CREATE TABLE s.u (id BIGINT)"));
  ASSERT_OK(Post("INSERT INTO s.u VALUES (1)"));
  ASSERT_OK_AND_ASSIGN(std::string bob,
                       testing::CreateUserWithToken(warehouse_.str(), "bob", "bob pass", clock_));
  const std::string u = "basin_table_version{schema=\"s\",table=\"u\"}";
  // bob may read nothing: no table's series, the server's all the same.
  Scrape scrape = MetricsAs(bob);
  EXPECT_EQ(scrape["basin_up"], 1);
  EXPECT_TRUE(scrape.values.contains(Queries("http", "ok")));
  EXPECT_FALSE(scrape.values.contains(OfTable("basin_table_version")));
  EXPECT_FALSE(scrape.values.contains(u));
  EXPECT_EQ(scrape["basin_table_scrape_errors"], 0);

  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> owner, Session::Open({.warehouse = warehouse_.str()}));
  ASSERT_OK(owner->Execute("GRANT SELECT ON TABLE s.u TO bob").status());
  scrape = MetricsAs(bob);
  EXPECT_EQ(scrape[u], 1);
  EXPECT_EQ(scrape["basin_table_files{schema=\"s\",table=\"u\"}"], 1);
  EXPECT_FALSE(scrape.values.contains(OfTable("basin_table_version")));

  // A grant on the schema shows its every table; a REVOKE hides them from the next scrape.
  ASSERT_OK(owner->Execute("GRANT SELECT ON SCHEMA s TO bob; REVOKE SELECT ON TABLE s.u FROM bob").status());
  scrape = MetricsAs(bob);
  EXPECT_EQ(scrape[OfTable("basin_table_version")], 0);
  EXPECT_EQ(scrape[u], 1);
  ASSERT_OK(owner->Execute("REVOKE SELECT ON SCHEMA s FROM bob").status());
  EXPECT_FALSE(MetricsAs(bob).values.contains(u));

  // The administrator sees every table.
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<ObjectStore> store, OpenStoreAt(warehouse_.str()));
  ASSERT_OK_AND_ASSIGN(security::NewToken admin,
                       security::TokenStore(store, clock_).Create("admin", std::nullopt));
  scrape = MetricsAs(admin.text);
  EXPECT_EQ(scrape[OfTable("basin_table_version")], 0);
  EXPECT_EQ(scrape[u], 1);
}

TEST_F(HttpMetricsTest, KeptFiguresFollowAppendsDeletesAndOptimize) {
  server::TableMetrics kept(warehouse_.str(), clock_);
  // s.t only: the server creates its own tables (the audit log) meanwhile.
  const auto only_t = [](const catalog::TableName& table) {
    return table.schema == "s" && table.table == "t";
  };
  const std::vector<std::string> families = {"basin_table_version", "basin_table_files",
                                             "basin_table_small_files", "basin_table_bytes",
                                             "basin_table_last_commit_age_seconds"};
  // The kept figures equal those of a table read whole.
  auto expect_right = [&](const std::string& after) {
    const Scrape followed = Parse(metrics::RenderText(kept.Collect(only_t)));
    server::TableMetrics fresh(warehouse_.str(), clock_);
    const Scrape whole = Parse(metrics::RenderText(fresh.Collect(only_t)));
    for (const std::string& family : families)
      EXPECT_EQ(followed[OfTable(family)], whole[OfTable(family)]) << family << " after " << after;
    return followed;
  };
  expect_right("CREATE TABLE");
  for (const char* statement :
       {"INSERT INTO s.t VALUES (1, 'a'), (2, 'b')", "INSERT INTO s.t SELECT range, 'x' FROM range(10, 20)",
        "DELETE FROM s.t WHERE id = 1", "UPDATE s.t SET name = 'y' WHERE id = 12", "OPTIMIZE s.t",
        "INSERT INTO s.t VALUES (3, 'c')", "DELETE FROM s.t WHERE id >= 10"}) {
    ASSERT_OK(Post(statement));
    expect_right(statement);
  }
  // Read whole once: every commit since was followed.
  EXPECT_EQ(kept.full_reads(), 1);
  EXPECT_EQ(TableFiles()["num_files"].get<double>(),
            Parse(metrics::RenderText(kept.Collect(only_t)))[OfTable("basin_table_files")]);

  // A new target file size counts small files anew: the table is read whole.
  ASSERT_OK(Post("ALTER TABLE s.t SET TBLPROPERTIES ('delta.targetFileSize' = '4')"));
  EXPECT_EQ(expect_right("a new target file size")[OfTable("basin_table_small_files")], 0);
  EXPECT_EQ(kept.full_reads(), 2);
}

TEST_F(HttpMetricsTest, TablesWithCheckpointsAreRead) {
  ASSERT_OK(Post("CREATE TABLE s.c (id BIGINT) TBLPROPERTIES ('delta.checkpointInterval' = '2')"));
  for (int i = 0; i < 3; i++) ASSERT_OK(Post("INSERT INTO s.c VALUES (" + std::to_string(i) + ")"));
  auto warehouse = catalog::Warehouse::Open(warehouse_.str());
  ASSERT_OK(warehouse.status());
  ASSERT_OK_AND_ASSIGN(catalog::TableEntry entry, (*warehouse)->Get({"s", "c"}));
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<ObjectStore> store, OpenStoreAt(entry.location));
  ASSERT_OK_AND_ASSIGN(bool checkpointed,
                       store->HasObjectsWithPrefix("_delta_log/00000000000000000002.checkpoint"));
  ASSERT_TRUE(checkpointed);
  server::TableMetrics fresh(warehouse_.str(), clock_);
  const Scrape scrape = Parse(metrics::RenderText(fresh.Collect(EveryTable)));
  EXPECT_EQ(scrape["basin_table_version{schema=\"s\",table=\"c\"}"], 3);
  EXPECT_EQ(scrape["basin_table_files{schema=\"s\",table=\"c\"}"], 3);
  EXPECT_EQ(scrape["basin_table_scrape_errors"], 0);
}

TEST_F(HttpMetricsTest, LabelValuesAreEscapedInTheScrape) {
  ASSERT_OK(Post("CREATE TABLE s.\"we\"\"ird\" (id BIGINT)"));
  const Scrape scrape = Metrics();
  EXPECT_EQ(scrape["basin_table_version{schema=\"s\",table=\"we\\\"ird\"}"], 0);
}

}  // namespace
}  // namespace basin
