// Streams and pipelines run by basin::Server (ServerOptions::streams, ::pipelines), seen and
// driven through the HTTP API's /api/v1/flows: rows arrive exactly once across stops and
// starts, a failing flow is FAILED alone while queries go on, only admins stop and start,
// and shutdown leaves every checkpoint with its last batch committed.
#include "server/flows.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <thread>

#include "basin/object_store.h"
#include "basin/server.h"
#include "basin/session.h"
#include "basin/stream.h"
#include "security/tokens.h"
#include "security/users.h"
#include "testing/test_util.h"

namespace basin {
namespace {

using json = nlohmann::json;

constexpr char kCopyStream[] = "INSERT INTO sink SELECT id FROM STREAM(src)";

// Waits up to 60 s for `done`; whether it came true.
bool WaitUntil(const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

class FlowsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(std::shared_ptr<ObjectStore> store, OpenStoreAt(warehouse_.str()));
    auto clock = SystemClock();
    security::UserStore users(store, clock);
    ASSERT_OK(users.EnsureAdmin("admin pass").status());
    ASSERT_OK(users.Create("alice", "alice pass", /*admin=*/false));
    security::TokenStore tokens(store, clock);
    ASSERT_OK_AND_ASSIGN(security::NewToken admin, tokens.Create("admin", std::nullopt));
    admin_token_ = admin.text;
    ASSERT_OK_AND_ASSIGN(security::NewToken alice, tokens.Create("alice", std::nullopt));
    alice_token_ = alice.text;
    options_.warehouse = warehouse_.str();
    options_.pg_port = 0;
    options_.http_port = 0;
    options_.admin_password = "admin pass";
    options_.checkpoint_root = checkpoints_.str();
    options_.stream_interval_ms = 20;
    Sql("CREATE TABLE src (id BIGINT); CREATE TABLE sink (id BIGINT)");
  }

  void StartServer() {
    ASSERT_OK_AND_ASSIGN(server_, Server::Start(options_));
    ASSERT_GT(server_->http_port(), 0);
  }

  // The answer to `method` `path` (POST with `body`) as `token`'s user, and its status.
  std::pair<int, json> Call(const std::string& method, const std::string& path, const std::string& token,
                            const json& body = json()) {
    httplib::Client client("127.0.0.1", server_->http_port());
    client.set_read_timeout(120, 0);
    const httplib::Headers auth = {{"Authorization", "Bearer " + token}};
    httplib::Result result =
        method == "GET" ? client.Get(path, auth)
                        : client.Post(path, auth, body.is_null() ? "" : body.dump(), "application/json");
    EXPECT_TRUE(result) << method << " " << path << ": " << httplib::to_string(result.error());
    if (!result) return {0, json()};
    return {result->status, json::parse(result->body, nullptr, false)};
  }

  // A flow's status as GET /api/v1/flows/{name} answers it.
  json Flow(const std::string& name) {
    auto [status, body] = Call("GET", "/api/v1/flows/" + name, admin_token_);
    EXPECT_EQ(status, 200) << body;
    return body;
  }
  std::string State(const std::string& name) { return Flow(name).value("state", ""); }

  // Runs `sql` on a session of the test's own.
  void Local(const std::string& sql) {
    Result<std::unique_ptr<Session>> session = Session::Open({.warehouse = warehouse_.str()});
    ASSERT_OK(session.status());
    const Status ran = (*session)->Execute(sql).status();
    EXPECT_TRUE(ran.ok()) << sql << ": " << ran.ToString();
  }

  // The rows of `sql` run over the HTTP API (before the server starts: Local(), no rows).
  json Sql(const std::string& sql) {
    if (!server_) {
      Local(sql);
      return json();
    }
    auto [status, body] = Call("POST", "/api/v1/statements", admin_token_, {{"statement", sql}});
    EXPECT_EQ(status, 200) << sql << ": " << body;
    return body["rows"];
  }
  int64_t Count(const std::string& table) {
    return Sql("SELECT count(*) FROM " + table)[0][0].get<int64_t>();
  }
  int64_t LatestVersion(const std::string& table) {
    return Sql("DESCRIBE HISTORY " + table)[0][0].get<int64_t>();  // newest first
  }

  // Whether `sink` holds exactly the rows of `source`: each id as many times.
  void ExpectSameRows(const std::string& source, const std::string& sink) {
    EXPECT_EQ(Count(source), Count(sink));
    const std::string difference = "SELECT count(*) FROM (SELECT id FROM " + source +
                                   " EXCEPT ALL SELECT id FROM " + sink +
                                   ") UNION ALL SELECT count(*) FROM "
                                   "(SELECT id FROM " +
                                   sink + " EXCEPT ALL SELECT id FROM " + source + ")";
    EXPECT_EQ(Sql(difference), json::parse("[[0], [0]]"));
  }

  // A pipeline "copies" whose streaming table `copied` copies src, checked every 50 ms.
  std::string CopiesPipeline() {
    std::ofstream(pipeline_.path() / "pipeline.json")
        << R"({"name": "copies", "trigger_interval": "50 milliseconds"})";
    std::ofstream(pipeline_.path() / "copies.sql")
        << "CREATE OR REFRESH STREAMING TABLE copied AS SELECT id FROM STREAM(src);\n";
    return pipeline_.str();
  }

  testing::TempDir warehouse_;
  testing::TempDir checkpoints_;
  testing::TempDir pipeline_;
  ServerOptions options_;
  std::unique_ptr<Server> server_;
  std::string admin_token_;
  std::string alice_token_;
};

TEST_F(FlowsTest, StreamStopsAndStartsWithEveryRowOnce) {
  options_.streams = {{"copy", kCopyStream}};
  StartServer();
  Sql("INSERT INTO src VALUES (1), (2), (3)");
  // The figures follow the commit a moment later.
  ASSERT_TRUE(WaitUntil([&] { return Flow("copy")["totals"]["rows_out"] == 3; }));
  EXPECT_EQ(Count("sink"), 3);

  auto [status, listed] = Call("GET", "/api/v1/flows", admin_token_);
  ASSERT_EQ(status, 200) << listed;
  ASSERT_EQ(listed["flows"].size(), 1u) << listed;
  json flow = listed["flows"][0];
  EXPECT_EQ(flow["name"], "copy");
  EXPECT_EQ(flow["kind"], "stream");
  EXPECT_EQ(flow["state"], "RUNNING");
  EXPECT_EQ(flow["sink"], "default.sink");
  EXPECT_TRUE(flow["event_log"].is_null()) << flow;  // a stream has none
  EXPECT_TRUE(flow["error"].is_null()) << flow;
  EXPECT_EQ(flow["last_batch"]["table_version"], LatestVersion("sink")) << flow;
  EXPECT_EQ(flow["totals"]["rows_out"], 3) << flow;

  std::tie(status, flow) = Call("POST", "/api/v1/flows/copy/stop", admin_token_);
  ASSERT_EQ(status, 200) << flow;
  EXPECT_EQ(flow["state"], "STOPPED");
  Sql("INSERT INTO src VALUES (4), (5)");
  std::this_thread::sleep_for(
      std::chrono::milliseconds(500));  // 25 intervals: a running stream would copy them
  EXPECT_EQ(Count("sink"), 3);
  EXPECT_EQ(State("copy"), "STOPPED");
  // Stopping again changes nothing.
  EXPECT_EQ(Call("POST", "/api/v1/flows/copy/stop", admin_token_).second["state"], "STOPPED");

  std::tie(status, flow) = Call("POST", "/api/v1/flows/copy/start", admin_token_);
  ASSERT_EQ(status, 200) << flow;
  EXPECT_EQ(flow["state"], "RUNNING");
  ASSERT_TRUE(WaitUntil([&] { return Count("sink") == 5; }));
  ExpectSameRows("src", "sink");

  // Stops and starts while a writer appends: batches in flight finish, none runs twice.
  std::thread writer([&] {
    for (int i = 0; i < 30; ++i)
      Sql("INSERT INTO src SELECT range + " + std::to_string(100 * i) + " FROM range(10)");
  });
  for (int round = 0; round < 4; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_EQ(Call("POST", "/api/v1/flows/copy/stop", admin_token_).second["state"], "STOPPED");
    EXPECT_EQ(Call("POST", "/api/v1/flows/copy/start", admin_token_).second["state"], "RUNNING");
  }
  writer.join();
  ASSERT_TRUE(WaitUntil([&] { return Flow("copy")["totals"]["rows_out"] == 305; }));
  ExpectSameRows("src", "sink");
  EXPECT_EQ(Count("src"), 305);
  flow = Flow("copy");
  EXPECT_EQ(flow["last_batch"]["table_version"], LatestVersion("sink")) << flow;
  EXPECT_EQ(flow["totals"]["failures"], 0) << flow;
  // Streams record their lineage.
  EXPECT_EQ(Sql("SELECT source_table, target_table, operation FROM basin_system.lineage"),
            json::parse(R"([["default.src", "default.sink", "INSERT"]])"));
}

// GET /metrics has a flow's figures as basin_flow_* series.
TEST_F(FlowsTest, FlowFiguresAreMetrics) {
  options_.streams = {{"copy", kCopyStream}};
  StartServer();
  Sql("INSERT INTO src VALUES (1), (2), (3)");
  ASSERT_TRUE(WaitUntil([&] { return Flow("copy")["totals"]["rows_out"] == 3; }));
  const json copy = Flow("copy");
  const std::string batches = copy["totals"]["batches"].dump();
  ASSERT_TRUE(copy["last_batch"]["end_to_end_ms"].is_number_integer()) << copy;
  EXPECT_GE(copy["last_batch"]["end_to_end_ms"].get<int64_t>(), 0) << copy;
  EXPECT_LT(copy["last_batch"]["end_to_end_ms"].get<int64_t>(), 60'000) << copy;
  httplib::Client client("127.0.0.1", server_->http_port());
  httplib::Result scraped = client.Get("/metrics", {{"Authorization", "Bearer " + admin_token_}});
  ASSERT_TRUE(scraped);
  ASSERT_EQ(scraped->status, 200) << scraped->body;
  const std::string labels = "{flow=\"copy\",kind=\"stream\"} ";
  for (const std::string& line : std::vector<std::string>{
           "# TYPE basin_flow_batch_duration_seconds histogram",
           "basin_flow_batch_duration_seconds_bucket{flow=\"copy\",kind=\"stream\",le=\"+Inf\"} " + batches,
           "basin_flow_batch_duration_seconds_count" + labels + batches,
           // Every batch of a table source knows its source commit's time.
           "basin_flow_end_to_end_latency_seconds_count" + labels + batches,
           "# TYPE basin_flow_output_rows_total counter", "basin_flow_output_rows_total" + labels + "3",
           "basin_flow_running" + labels + "1", "basin_flow_failed" + labels + "0",
           "basin_flow_failures_total" + labels + "0",
           "basin_flow_table_version" + labels + std::to_string(LatestVersion("sink"))}) {
    EXPECT_NE(scraped->body.find(line + "\n"), std::string::npos) << line << " in\n" << scraped->body;
  }
  EXPECT_EQ(Call("POST", "/api/v1/flows/copy/stop", admin_token_).second["state"], "STOPPED");
  scraped = client.Get("/metrics", {{"Authorization", "Bearer " + admin_token_}});
  ASSERT_TRUE(scraped);
  EXPECT_NE(scraped->body.find("basin_flow_running" + labels + "0\n"), std::string::npos) << scraped->body;
}

TEST_F(FlowsTest, FailingFlowIsFailedAloneWhileQueriesGoOn) {
  Sql("CREATE TABLE other (id BIGINT)");
  options_.streams = {{"copy", kCopyStream}, {"broken", "INSERT INTO sink2 SELECT id FROM STREAM(other)"}};
  StartServer();
  // sink2 does not exist: the flow cannot open.
  ASSERT_TRUE(WaitUntil([&] { return State("broken") == "FAILED"; }));
  json broken = Flow("broken");
  EXPECT_EQ(broken["error"]["code"], "NotFound") << broken;
  EXPECT_EQ(broken["totals"]["failures"], 1) << broken;
  Sql("INSERT INTO src VALUES (1), (2)");
  ASSERT_TRUE(WaitUntil([&] { return Count("sink") == 2; }));
  EXPECT_EQ(State("copy"), "RUNNING");
  EXPECT_EQ(State("broken"), "FAILED");

  // Started again once its sink exists, it runs.
  Sql("CREATE TABLE sink2 (id BIGINT)");
  Sql("INSERT INTO other VALUES (7), (8), (9)");
  auto [status, started] = Call("POST", "/api/v1/flows/broken/start", admin_token_);
  ASSERT_EQ(status, 200) << started;
  EXPECT_EQ(started["state"], "RUNNING");
  EXPECT_TRUE(started["error"].is_null()) << started;
  ASSERT_TRUE(WaitUntil([&] { return Count("sink2") == 3; }));
  ExpectSameRows("other", "sink2");

  // A DELETE in its source stops a STREAM(t) stream: this flow fails, the other runs on.
  Sql("DELETE FROM other WHERE id = 7");
  ASSERT_TRUE(WaitUntil([&] { return State("broken") == "FAILED"; }));
  broken = Flow("broken");
  EXPECT_EQ(broken["totals"]["failures"], 2) << broken;
  EXPECT_FALSE(broken["error"]["message"].get<std::string>().empty()) << broken;
  Sql("INSERT INTO src VALUES (3)");
  ASSERT_TRUE(WaitUntil([&] { return Count("sink") == 3; }));
  EXPECT_EQ(State("copy"), "RUNNING");
  EXPECT_EQ(Sql("SELECT 40 + 2"), json::parse("[[42]]"));
}

TEST_F(FlowsTest, OnlyAdminsStopAndStart) {
  options_.streams = {{"copy", kCopyStream}};
  StartServer();
  auto [status, body] = Call("GET", "/api/v1/flows", alice_token_);
  EXPECT_EQ(status, 200) << body;
  std::tie(status, body) = Call("GET", "/api/v1/flows/copy", alice_token_);
  EXPECT_EQ(status, 200) << body;
  for (const char* action : {"stop", "start"}) {
    std::tie(status, body) = Call("POST", std::string("/api/v1/flows/copy/") + action, alice_token_);
    EXPECT_EQ(status, 403) << action << ": " << body;
    EXPECT_EQ(body["error"]["code"], "PermissionDenied") << body;
  }
  EXPECT_EQ(State("copy"), "RUNNING");
  std::tie(status, body) = Call("GET", "/api/v1/flows/nothing", admin_token_);
  EXPECT_EQ(status, 404) << body;
  std::tie(status, body) = Call("POST", "/api/v1/flows/nothing/stop", admin_token_);
  EXPECT_EQ(status, 404) << body;
  std::tie(status, body) = Call("GET", "/api/v1/flows", "basin_wrong_token");
  EXPECT_EQ(status, 401) << body;
  EXPECT_EQ(Call("POST", "/api/v1/flows/copy/stop", admin_token_).first, 200);

  // Stops and starts, refused or not, are in the audit log (written by the shutdown).
  server_.reset();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> session, Session::Open({.warehouse = warehouse_.str()}));
  ASSERT_OK_AND_ASSIGN(
      std::vector<StatementResult> audited,
      session->Execute("SELECT user_name, statement, outcome FROM basin_system.audit_log "
                       "WHERE statement LIKE 'POST /api/v1/flows/copy/%' ORDER BY event_time"));
  std::vector<std::string> rows;
  for (const Row& row : audited.back().result.rows) rows.push_back(*row[0] + " " + *row[1] + " " + *row[2]);
  EXPECT_EQ(rows, (std::vector<std::string>{"alice POST /api/v1/flows/copy/stop denied",
                                            "alice POST /api/v1/flows/copy/start denied",
                                            "admin POST /api/v1/flows/copy/stop ok"}));
}

TEST_F(FlowsTest, ShutdownLeavesTheLastBatchCommitted) {
  options_.streams = {{"copy", kCopyStream}};
  StartServer();
  std::thread writer([&] {
    for (int i = 0; i < 20; ++i) Local("INSERT INTO src SELECT range FROM range(5)");
  });
  ASSERT_TRUE(WaitUntil([&] { return Count("sink") >= 10; }));
  // Shut down while the writer still writes, so a batch may be in flight.
  server_->Shutdown();
  writer.join();
  server_->Wait();
  server_.reset();
  ASSERT_OK_AND_ASSIGN(StreamStatus checkpoint, ReadStreamStatus(checkpoints_.str() + "/copy"));
  ASSERT_TRUE(checkpoint.last_committed.has_value());
  EXPECT_EQ(checkpoint.last_planned, checkpoint.last_committed);

  // The next server resumes from there.
  StartServer();
  ASSERT_TRUE(WaitUntil([&] { return Count("sink") == Count("src"); }));
  ExpectSameRows("src", "sink");
  // Once the figures follow the last commit, they name the sink's latest version.
  EXPECT_TRUE(WaitUntil([&] { return Flow("copy")["last_batch"]["table_version"] == LatestVersion("sink"); }))
      << Flow("copy");

  // A server that runs no batch still shows the one the checkpoint committed last.
  server_.reset();
  ASSERT_OK_AND_ASSIGN(checkpoint, ReadStreamStatus(checkpoints_.str() + "/copy"));
  StartServer();
  ASSERT_TRUE(WaitUntil([&] { return !Flow("copy")["last_batch"].is_null(); }));
  EXPECT_EQ(Flow("copy")["last_batch"]["batch_id"], *checkpoint.last_committed);
  EXPECT_EQ(Flow("copy")["totals"]["batches"], 0);
}

TEST_F(FlowsTest, FlowsRunAsTheirOwnerUnderItsGrants) {
  options_.streams = {{"copy", kCopyStream}};
  options_.pipelines = {CopiesPipeline()};
  options_.flow_owner = "alice";
  Sql("INSERT INTO src VALUES (1), (2), (3)");
  StartServer();
  const int64_t sink_version = LatestVersion("sink");
  // alice may read nothing: both flows fail on their first statement, writing nothing.
  ASSERT_TRUE(WaitUntil([&] { return State("copy") == "FAILED" && State("copies") == "FAILED"; }));
  for (const char* name : {"copy", "copies"}) {
    json flow = Flow(name);
    EXPECT_EQ(flow["error"]["sqlstate"], "42501") << flow;
    EXPECT_NE(flow["error"]["message"].get<std::string>().find("for user alice"), std::string::npos) << flow;
  }
  EXPECT_EQ(LatestVersion("sink"), sink_version);
  EXPECT_EQ(Sql("SHOW TABLES").dump().find("copied"), std::string::npos);

  // SELECT on the source is not enough to write the sink.
  Sql("GRANT SELECT ON TABLE src TO alice");
  EXPECT_EQ(Call("POST", "/api/v1/flows/copy/start", admin_token_).first, 200);
  ASSERT_TRUE(WaitUntil([&] { return State("copy") == "FAILED"; }));
  json copy = Flow("copy");
  EXPECT_EQ(copy["error"]["sqlstate"], "42501") << copy;
  EXPECT_NE(copy["error"]["message"].get<std::string>().find("MODIFY on TABLE default.sink for user alice"),
            std::string::npos)
      << copy;
  EXPECT_EQ(LatestVersion("sink"), sink_version);
  EXPECT_EQ(Count("sink"), 0);

  // Granted what they need, both run, every row once.
  Sql("GRANT MODIFY ON TABLE sink TO alice");
  Sql("GRANT CREATE ON SCHEMA default TO alice");
  for (const char* name : {"copy", "copies"}) {
    EXPECT_EQ(Call("POST", std::string("/api/v1/flows/") + name + "/start", admin_token_).first, 200);
  }
  ASSERT_TRUE(WaitUntil([&] { return Count("sink") == 3; })) << Flow("copy");
  ASSERT_TRUE(WaitUntil([&] { return Flow("copies")["totals"]["rows_out"] == 3; })) << Flow("copies");
  ExpectSameRows("src", "sink");
  ExpectSameRows("src", "copied");
  // The pipeline created its table as alice, who holds ALL PRIVILEGES on it.
  EXPECT_NE(Sql("SHOW GRANTS ON TABLE copied").dump().find("alice"), std::string::npos);

  // A REVOKE holds from the next batch.
  Sql("REVOKE MODIFY ON TABLE sink FROM alice");
  Sql("INSERT INTO src VALUES (4)");
  ASSERT_TRUE(WaitUntil([&] { return State("copy") == "FAILED"; }));
  EXPECT_EQ(Flow("copy")["error"]["sqlstate"], "42501");
  EXPECT_EQ(Count("sink"), 3);
}

TEST_F(FlowsTest, RefusesAnUnknownFlowOwner) {
  options_.streams = {{"copy", kCopyStream}};
  options_.flow_owner = "nobody";
  Result<std::unique_ptr<Server>> started = Server::Start(options_);
  EXPECT_EQ(started.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(started.status().message().find("nobody"), std::string::npos) << started.status().ToString();
  // Without flows, no owner is needed.
  options_.streams.clear();
  EXPECT_OK(Server::Start(options_).status());
}

TEST_F(FlowsTest, RefusesBadFlowDefinitions) {
  options_.streams = {{"../escape", kCopyStream}};
  EXPECT_EQ(Server::Start(options_).status().code(), ErrorCode::kInvalidArgument);
  options_.streams = {{"copy", kCopyStream}, {"copy", kCopyStream}};
  EXPECT_EQ(Server::Start(options_).status().code(), ErrorCode::kInvalidArgument);
  options_.streams = {{"copy", kCopyStream}};
  options_.checkpoint_root.clear();
  EXPECT_EQ(Server::Start(options_).status().code(), ErrorCode::kInvalidArgument);
  options_.streams.clear();
  options_.pipelines = {(warehouse_.path() / "no_such_pipeline").string()};
  EXPECT_FALSE(Server::Start(options_).ok());
}

TEST_F(FlowsTest, PipelineRunsContinuouslyAndStops) {
  options_.pipelines = {CopiesPipeline()};
  StartServer();
  Sql("INSERT INTO src VALUES (1), (2), (3)");
  ASSERT_TRUE(WaitUntil([&] { return Flow("copies")["totals"]["rows_out"] == 3; }));
  json flow = Flow("copies");
  EXPECT_EQ(flow["kind"], "pipeline");
  EXPECT_EQ(flow["state"], "RUNNING");
  // Its event log, in the pipeline's schema, names the table the runs append to.
  EXPECT_EQ(flow["event_log"], "default.copies_event_log");
  EXPECT_EQ(Call("GET", "/api/v1/flows", alice_token_).second["flows"][0]["event_log"],
            "default.copies_event_log");
  // That table exists: the run made it before its first flow (its events commit later, with
  // the flows' batches).
  const json count = {{"statement", "SELECT count(*) FROM default.copies_event_log"}};
  EXPECT_EQ(Call("POST", "/api/v1/statements", admin_token_, count).first, 200);
  EXPECT_EQ(Call("POST", "/api/v1/flows/copies/stop", admin_token_).second["state"], "STOPPED");
  Sql("INSERT INTO src VALUES (4)");
  EXPECT_EQ(Call("POST", "/api/v1/flows/copies/start", admin_token_).second["state"], "RUNNING");
  ASSERT_TRUE(WaitUntil([&] { return Flow("copies")["totals"]["rows_out"] == 4; }));
  ExpectSameRows("src", "copied");
}

TEST(FlowFiguresTest, BatchesAddUp) {
  server::FlowFigures figures;
  StreamBatch batch;
  batch.batch_id = 4;
  batch.rows_in = 10;
  batch.rows_out = 8;
  batch.dead_letters = 2;
  batch.duration_ms = 30;
  batch.table_version = 7;
  batch.lag = 5;
  server::AddStreamBatch(batch, figures);
  batch.batch_id = 5;
  batch.table_version = -1;  // unknown: the last known version stays
  batch.lag.reset();
  server::AddStreamBatch(batch, figures);
  EXPECT_EQ(figures.batches, 2);
  EXPECT_EQ(figures.rows_in, 20);
  EXPECT_EQ(figures.rows_out, 16);
  EXPECT_EQ(figures.dead_letters, 4);
  EXPECT_EQ(figures.durations.sum_ms, 60);
  EXPECT_EQ(figures.last_batch_id, 5);
  EXPECT_EQ(figures.table_version, 7);
  EXPECT_FALSE(figures.lag.has_value());

  server::FlowFigures pipeline;
  PipelineFlowRun idle;  // a pass that read nothing
  idle.duration_ms = 100;
  server::AddPipelineFlowRun(idle, pipeline);
  EXPECT_EQ(pipeline.batches, 0);
  EXPECT_EQ(pipeline.durations.sum_ms, 0);
  PipelineFlowRun run;
  run.batches = 2;
  run.rows_in = 6;
  run.rows_written = 5;
  run.duration_ms = 40;
  server::AddPipelineFlowRun(run, pipeline);
  EXPECT_EQ(pipeline.batches, 2);
  EXPECT_EQ(pipeline.rows_out, 5);
  EXPECT_EQ(pipeline.last_rows_out, 5);
  EXPECT_EQ(pipeline.durations.sum_ms, 40);
}

}  // namespace
}  // namespace basin
