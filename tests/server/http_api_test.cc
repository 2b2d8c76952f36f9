// The HTTP API of basin::Server, through cpp-httplib's client (and curl when it is on PATH):
// bearer tokens, statements and their pages, CSV, cancelling, records written exactly once,
// the catalog routes, and the limits (body size, odd names, slow clients).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <nlohmann/json.hpp>
#include <thread>

#include "basin/object_store.h"
#include "basin/server.h"
#include "basin/session.h"
#include "security/tokens.h"
#include "security/users.h"
#include "test_server.h"
#include "testing/interop.h"
#include "testing/test_util.h"

namespace basin {
namespace {

using json = nlohmann::json;

constexpr int64_t kMaxBodyBytes = 1 << 20;
constexpr int kReadTimeoutMs = 1000;

class HttpApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ServerOptions options = testing::HttpServerOptions(warehouse_.str(), "admin pass", clock_);
    options.http.max_body_bytes = kMaxBodyBytes;
    options.http.read_timeout_ms = kReadTimeoutMs;
    options.http.write_timeout_ms = kReadTimeoutMs;
    options.http.threads = 4;
    ASSERT_OK_AND_ASSIGN(server_, Server::Start(options));
    ASSERT_GT(server_->http_port(), 0);
    ASSERT_OK_AND_ASSIGN(token_,
                         testing::CreateUserWithToken(warehouse_.str(), "alice", "alice pass", clock_));
    ASSERT_OK_AND_ASSIGN(std::shared_ptr<ObjectStore> store, OpenStoreAt(warehouse_.str()));
    tokens_ = std::make_unique<security::TokenStore>(store, clock_);
    ASSERT_OK_AND_ASSIGN(session_, Session::Open({.warehouse = warehouse_.str()}));
    ASSERT_OK(session_
                  ->Execute("CREATE SCHEMA s; CREATE TABLE s.t (id BIGINT NOT NULL, name STRING, "
                            "price DECIMAL(10,2), day DATE)")
                  .status());
    // alice may do everything but an administrator's work (docs/governance.md).
    ASSERT_OK(session_->Execute("GRANT ALL PRIVILEGES ON CATALOG TO alice").status());
  }

  httplib::Client Client() const {
    httplib::Client client("127.0.0.1", server_->http_port());
    client.set_read_timeout(60, 0);
    return client;
  }
  httplib::Headers Auth(const std::string& token) const { return {{"Authorization", "Bearer " + token}}; }
  httplib::Headers Auth() const { return Auth(token_); }

  // The JSON answer to POST /api/v1/statements with `body`, and its HTTP status.
  std::pair<int, json> Post(const json& body, httplib::Headers headers = {}) {
    headers.merge(Auth());
    httplib::Result result = Client().Post("/api/v1/statements", headers, body.dump(), "application/json");
    EXPECT_TRUE(result) << httplib::to_string(result.error());
    if (!result) return {0, json()};
    return {result->status, json::parse(result->body, nullptr, false)};
  }
  std::pair<int, json> Get(const std::string& path) {
    httplib::Result result = Client().Get(path, Auth());
    EXPECT_TRUE(result) << httplib::to_string(result.error());
    if (!result) return {0, json()};
    return {result->status, json::parse(result->body, nullptr, false)};
  }

  // The first cell of `sql`'s result (DESCRIBE HISTORY: the latest version), run by the test's own session.
  std::string Scalar(const std::string& sql) {
    Result<std::vector<StatementResult>> results = session_->Execute(sql);
    EXPECT_OK(results.status());
    if (!results.ok()) return "";
    return results->back().result.rows.at(0).at(0).value_or("NULL");
  }

  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>(1'700'000'000'000);
  testing::TempDir warehouse_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<security::TokenStore> tokens_;
  std::string token_;
  std::unique_ptr<Session> session_;
};

TEST_F(HttpApiTest, HealthzNeedsNoToken) {
  httplib::Result result = Client().Get("/healthz");
  ASSERT_TRUE(result);
  EXPECT_EQ(result->status, 200);
  EXPECT_EQ(json::parse(result->body), json({{"status", "ok"}}));
}

TEST_F(HttpApiTest, RefusesMissingMalformedWrongExpiredAndRevokedTokens) {
  ASSERT_OK_AND_ASSIGN(security::NewToken expiring, tokens_->Create("alice", 1000));
  ASSERT_OK_AND_ASSIGN(security::NewToken revoked, tokens_->Create("alice", std::nullopt));
  ASSERT_OK(tokens_->Revoke(revoked.token.id));
  clock_->AdvanceMs(1000);
  std::string wrong = token_;
  wrong.back() = wrong.back() == 'a' ? 'b' : 'a';
  const std::vector<httplib::Headers> cases = {{},
                                               {{"Authorization", "Basic YWxpY2U6eA=="}},
                                               {{"Authorization", "Bearer"}},
                                               Auth("not-a-token"),
                                               Auth(wrong),
                                               Auth(expiring.text),
                                               Auth(revoked.text)};
  for (const httplib::Headers& headers : cases) {
    httplib::Result result = Client().Get("/api/v1/schemas", headers);
    ASSERT_TRUE(result);
    const std::string sent = headers.empty() ? "(none)" : headers.begin()->second;
    EXPECT_EQ(result->status, 401) << sent;
    EXPECT_EQ(result->get_header_value("WWW-Authenticate").rfind("Bearer", 0), 0u) << sent;
    json body = json::parse(result->body);
    EXPECT_EQ(body["error"]["code"], "Unauthenticated") << sent;
    EXPECT_EQ(body["error"]["sqlstate"], "28000") << sent;
  }
  EXPECT_EQ(Get("/api/v1/schemas").first, 200);
}

TEST_F(HttpApiTest, StatementResultsAsTypedJson) {
  auto [status, body] = Post({{"statement",
                               "SELECT 7::INTEGER AS i, 2.5::DOUBLE AS f, 1.25::DECIMAL(5,2) AS d, "
                               "DATE '2024-01-02' AS day, NULL::VARCHAR AS n, $1 AS s, true AS b"},
                              {"parameters", {"it's"}}});
  ASSERT_EQ(status, 200) << body;
  EXPECT_EQ(body["status"], "FINISHED");
  EXPECT_EQ(body["command"], "SELECT");
  EXPECT_EQ(body["row_count"], 1);
  EXPECT_FALSE(body.contains("next"));
  ASSERT_EQ(body["columns"].size(), 7u);
  EXPECT_EQ(body["columns"][0], json({{"name", "i"}, {"type", "INTEGER"}}));
  EXPECT_EQ(body["columns"][2]["type"], "DECIMAL(5,2)");
  EXPECT_EQ(body["rows"], json::parse(R"([[7, 2.5, "1.25", "2024-01-02", null, "it's", true]])"));
}

TEST_F(HttpApiTest, CopyToStdoutAnswersRows) {
  auto [status, body] = Post({{"statement", "COPY (SELECT 5 AS x UNION ALL SELECT 6) TO STDOUT"}});
  ASSERT_EQ(status, 200) << body;
  EXPECT_EQ(body["rows"], json::parse("[[5], [6]]"));
}

TEST_F(HttpApiTest, StatementErrorsCarryCodeAndSqlstate) {
  auto [status, body] = Post({{"statement", "SELECT * FROM s.missing"}});
  EXPECT_EQ(status, 404);
  EXPECT_EQ(body["error"]["code"], "NotFound");
  EXPECT_EQ(body["error"]["sqlstate"], "42P01");
  std::tie(status, body) = Post({{"statement", "SELECT 1; SELECT 2"}});
  EXPECT_EQ(status, 400);
  std::tie(status, body) = Post({{"statement", "SELECT $1"}, {"parameters", json::array()}});
  EXPECT_EQ(status, 400);
}

TEST_F(HttpApiTest, PagesAreReadInOrderFromTheCursor) {
  auto [status, body] = Post({{"statement", "SELECT range AS n FROM range(25)"}, {"page_size", 10}});
  ASSERT_EQ(status, 200) << body;
  const std::string id = body["statement_id"];
  std::vector<int64_t> seen;
  for (const json& row : body["rows"]) seen.push_back(row[0]);
  EXPECT_EQ(body["next"], "/api/v1/statements/" + id + "?page=1");
  EXPECT_EQ(Get("/api/v1/statements/" + id + "?page=2").first, 400);  // out of order
  for (int page = 1; body.contains("next"); ++page) {
    std::tie(status, body) = Get(body["next"]);
    ASSERT_EQ(status, 200) << body;
    EXPECT_EQ(body["page"], page);
    for (const json& row : body["rows"]) seen.push_back(row[0]);
  }
  ASSERT_EQ(seen.size(), 25u);
  for (int64_t i = 0; i < 25; ++i) EXPECT_EQ(seen[i], i);
  EXPECT_EQ(Get("/api/v1/statements/" + id + "?page=3").first, 404);  // read to its end: closed
}

TEST_F(HttpApiTest, AnotherUsersStatementIsNotFound) {
  auto [status, body] = Post({{"statement", "SELECT range FROM range(5)"}, {"page_size", 2}});
  ASSERT_EQ(status, 200);
  ASSERT_OK(security::UserStore(OpenStoreAt(warehouse_.str()).value(), clock_).Create("bob", "b", false));
  ASSERT_OK_AND_ASSIGN(security::NewToken bob, tokens_->Create("bob", std::nullopt));
  httplib::Result result = Client().Get(body["next"].get<std::string>(), Auth(bob.text));
  ASSERT_TRUE(result);
  EXPECT_EQ(result->status, 404);
}

TEST_F(HttpApiTest, ATokensUserIsGovernedByItsGrants) {
  ASSERT_OK(session_->Execute("INSERT INTO s.t VALUES (1, 'a', 1.50, DATE '2024-01-01')").status());
  ASSERT_OK(security::UserStore(OpenStoreAt(warehouse_.str()).value(), clock_).Create("bob", "b", false));
  ASSERT_OK_AND_ASSIGN(security::NewToken bob, tokens_->Create("bob", std::nullopt));
  const auto as_bob = [&](const std::string& path, const json& body) -> std::pair<int, json> {
    httplib::Result result = Client().Post(path, Auth(bob.text), body.dump(), "application/json");
    EXPECT_TRUE(result) << httplib::to_string(result.error());
    if (!result) return {0, json()};
    return {result->status, json::parse(result->body, nullptr, false)};
  };
  const std::string version = Scalar("DESCRIBE HISTORY s.t");
  // Without grants: 403 for a read, a path, a write by SQL or by records, and raw files.
  for (const auto& [path, body] : std::vector<std::pair<std::string, json>>{
           {"/api/v1/statements", {{"statement", "SELECT count(*) FROM s.t"}}},
           {"/api/v1/statements",
            {{"statement", "SELECT count(*) FROM delta_scan('" + warehouse_.str() + "/s/t')"}}},
           {"/api/v1/statements", {{"statement", "INSERT INTO s.t (id) VALUES (2)"}}},
           {"/api/v1/statements",
            {{"statement", "SELECT count(*) FROM read_parquet('" + warehouse_.str() + "/s/t/*.parquet')"}}},
           // A Kafka cluster is outside the warehouse too: refused before any connection.
           {"/api/v1/statements",
            {{"statement",
              "SELECT count(*) FROM read_kafka(bootstrapServers => '127.0.0.1:9', subscribe => 't')"}}},
           {"/api/v1/tables/s.t/records", json::array({{{"id", 3}}})}}) {
    auto [status, answer] = as_bob(path, body);
    EXPECT_EQ(status, 403) << body << answer;
    EXPECT_EQ(answer["error"]["code"], "PermissionDenied") << body << answer;
    EXPECT_EQ(answer["error"]["sqlstate"], "42501") << body << answer;
  }
  EXPECT_EQ(Scalar("DESCRIBE HISTORY s.t"), version);
  // Granted, bob reads; still not writes.
  ASSERT_OK(session_->Execute("GRANT SELECT ON SCHEMA s TO bob").status());
  auto [status, answer] = as_bob("/api/v1/statements", {{"statement", "SELECT count(*) FROM s.t"}});
  ASSERT_EQ(status, 200) << answer;
  EXPECT_EQ(answer["rows"], json::array({json::array({1})}));
  EXPECT_EQ(as_bob("/api/v1/tables/s.t/records", json::array({{{"id", 3}}})).first, 403);
  auto [kafka_status, kafka_answer] =
      as_bob("/api/v1/statements",
             {{"statement",
               "SELECT count(*) FROM read_kafka(bootstrapServers => '127.0.0.1:9', subscribe => 't')"}});
  EXPECT_EQ(kafka_status, 403) << kafka_answer;
  EXPECT_NE(kafka_answer["error"]["message"].get<std::string>().find("read_kafka"), std::string::npos)
      << kafka_answer;
}

TEST_F(HttpApiTest, CsvStreamsTheWholeResult) {
  httplib::Headers headers = Auth();
  headers.emplace("Accept", "text/csv");
  json body = {{"statement",
                "SELECT range AS n, CASE WHEN range = 1 THEN 'a,\"b\"' WHEN range = 2 THEN '' END AS s FROM "
                "range(3)"}};
  httplib::Result result = Client().Post("/api/v1/statements", headers, body.dump(), "application/json");
  ASSERT_TRUE(result);
  EXPECT_EQ(result->status, 200);
  EXPECT_EQ(result->get_header_value("Content-Type").rfind("text/csv", 0), 0u);
  EXPECT_EQ(result->body, "n,s\n0,\n1,\"a,\"\"b\"\"\"\n2,\"\"\n");
}

TEST_F(HttpApiTest, ParquetAnswersTheWholeResultAsOneFile) {
  ASSERT_OK(session_
                ->Execute("INSERT INTO s.t VALUES (1, 'a', 1.50, DATE '2024-01-01'), (2, NULL, NULL, NULL), "
                          "(3, 'it''s', -2.25, DATE '2024-02-29')")
                .status());
  testing::TempDir saved;
  const std::filesystem::path scratch = std::filesystem::temp_directory_path() / "basin-http-results";
  // The answer to `statement` asked as Parquet (with `accept`), saved to a file, and its status.
  const auto post = [&](const std::string& statement, const std::string& accept) {
    httplib::Headers headers = Auth();
    headers.emplace("Accept", accept);
    httplib::Result result =
        Client().Post("/api/v1/statements", headers,
                      json({{"statement", statement}, {"page_size", 1}}).dump(), "application/json");
    EXPECT_TRUE(result) << httplib::to_string(result.error());
    return result;
  };
  for (const std::string accept : {"application/vnd.apache.parquet", "application/x-parquet, text/csv"}) {
    httplib::Result result = post(
        "SELECT id, name, price, day, [id, id * 10] AS ids, {'n': name} AS st FROM s.t ORDER BY id", accept);
    ASSERT_TRUE(result);
    ASSERT_EQ(result->status, 200) << result->body;
    EXPECT_EQ(result->get_header_value("Content-Type"), "application/vnd.apache.parquet");
    EXPECT_EQ(result->get_header_value("X-Basin-Row-Count"), "3");
    const std::string id = result->get_header_value("X-Basin-Statement-Id");
    ASSERT_EQ(result->body.substr(0, 4), "PAR1");
    const std::string file = (saved.path() / "result.parquet").string();
    ASSERT_OK(OpenStoreAt(saved.str()).value()->Put("result.parquet", result->body));
    // Read back by DuckDB's own Parquet reader: the query's types and rows, all in one file
    // whatever the page size.
    ASSERT_OK_AND_ASSIGN(std::vector<StatementResult> read,
                         session_->Execute("SELECT * FROM read_parquet('" + file + "') ORDER BY id"));
    const QueryResult& rows = read.back().result;
    EXPECT_EQ(rows.column_names, (std::vector<std::string>{"id", "name", "price", "day", "ids", "st"}));
    EXPECT_EQ(rows.column_types, (std::vector<std::string>{"BIGINT", "VARCHAR", "DECIMAL(10,2)", "DATE",
                                                           "BIGINT[]", "STRUCT(\"n\" VARCHAR)"}));
    ASSERT_EQ(rows.rows.size(), 3u);
    EXPECT_EQ(rows.rows[0], (Row{"1", "a", "1.50", "2024-01-01", "[1, 10]", "{'n': a}"}));
    EXPECT_EQ(rows.rows[1], (Row{"2", std::nullopt, std::nullopt, std::nullopt, "[2, 20]", "{'n': NULL}"}));
    EXPECT_EQ(rows.rows[2], (Row{"3", "it's", "-2.25", "2024-02-29", "[3, 30]", "{'n': it's}"}));
    // The server's copy is deleted once sent.
    const std::filesystem::path left = scratch / ("result-" + id + ".parquet");
    for (int i = 0; i < 100 && std::filesystem::exists(left); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    EXPECT_FALSE(std::filesystem::exists(left)) << left;
  }

  // The COPY is built from the query's syntax tree: a trailing comment stays a comment.
  httplib::Result commented = post("SELECT 1 AS x -- a comment", "application/vnd.apache.parquet");
  ASSERT_TRUE(commented);
  EXPECT_EQ(commented->status, 200) << commented->body;
  EXPECT_EQ(commented->get_header_value("X-Basin-Row-Count"), "1");

  // COPY ... TO STDOUT's rows too.
  httplib::Result copied = post("COPY (SELECT 5 AS x) TO STDOUT", "application/vnd.apache.parquet");
  ASSERT_TRUE(copied);
  EXPECT_EQ(copied->status, 200) << copied->body;
  EXPECT_EQ(copied->get_header_value("X-Basin-Row-Count"), "1");

  // A statement that is not a query answers as JSON does, once.
  httplib::Result inserted = post("INSERT INTO s.t (id) VALUES (4)", "application/vnd.apache.parquet");
  ASSERT_TRUE(inserted);
  ASSERT_EQ(inserted->status, 200) << inserted->body;
  EXPECT_EQ(inserted->get_header_value("Content-Type"), "application/json");
  json answer = json::parse(inserted->body);
  EXPECT_EQ(answer["command"], "INSERT");
  EXPECT_EQ(Scalar("SELECT count(*) FROM s.t"), "4");

  // Errors are JSON errors, before and while the query runs.
  httplib::Result missing = post("SELECT * FROM s.missing", "application/vnd.apache.parquet");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(json::parse(missing->body)["error"]["code"], "NotFound");
  httplib::Result failed =
      post("SELECT CAST(name AS INTEGER) FROM s.t WHERE name = 'a'", "application/x-parquet");
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->status, 400) << failed->body;
  EXPECT_EQ(json::parse(failed->body)["error"]["code"], "InvalidArgument");
}

constexpr char kSlowQuery[] =
    "SELECT count(*) FROM range(1000000) a, range(1000000) b WHERE a.range + b.range = -1";

TEST_F(HttpApiTest, DeleteCancelsARunningStatement) {
  auto [status, body] = Post({{"statement", kSlowQuery}, {"wait", false}});
  ASSERT_EQ(status, 202) << body;
  EXPECT_EQ(body["status"], "RUNNING");
  const std::string path = "/api/v1/statements/" + body["statement_id"].get<std::string>();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  std::tie(status, body) = Get(path);
  EXPECT_EQ(status, 200);
  EXPECT_EQ(body["status"], "RUNNING");
  httplib::Result deleted = Client().Delete(path, Auth());
  ASSERT_TRUE(deleted);
  EXPECT_EQ(deleted->status, 200);
  EXPECT_EQ(json::parse(deleted->body)["status"], "CANCELLED");
  EXPECT_EQ(Get(path).first, 404);
}

TEST_F(HttpApiTest, CancelledWaitingStatementAnswersCancelled) {
  auto answer = std::async(std::launch::async, [&] { return Post({{"statement", kSlowQuery}}); });
  // The statement's id is not known to the client yet: shutting down interrupts it too.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  server_->Shutdown();
  auto [status, body] = answer.get();
  EXPECT_EQ(status, 499) << body;
  EXPECT_EQ(body["error"]["sqlstate"], "57014");
}

TEST_F(HttpApiTest, RecordsCommitOncePerIdempotencyKey) {
  const std::string records = R"([{"id": 1, "name": "a", "price": 1.5, "day": "2024-01-02"},
                                  {"id": 2, "price": "2.25"}])";
  httplib::Headers headers = Auth();
  headers.emplace("Idempotency-Key", "load-42");
  httplib::Result first = Client().Post("/api/v1/tables/s.t/records", headers, records, "application/json");
  ASSERT_TRUE(first);
  ASSERT_EQ(first->status, 200) << first->body;
  json answer = json::parse(first->body);
  EXPECT_EQ(answer["skipped"], false);
  EXPECT_EQ(answer["records"], 2);
  const int64_t version = answer["version"];
  httplib::Result retry = Client().Post("/api/v1/tables/s.t/records", headers, records, "application/json");
  ASSERT_TRUE(retry);
  ASSERT_EQ(retry->status, 200) << retry->body;
  EXPECT_EQ(json::parse(retry->body)["skipped"], true);
  EXPECT_EQ(json::parse(retry->body)["version"], version);
  EXPECT_EQ(Scalar("SELECT count(*) FROM s.t"), "2");
  EXPECT_EQ(Scalar("SELECT sum(price) FROM s.t"), "3.75");
  EXPECT_EQ(Scalar("DESCRIBE HISTORY s.t"), std::to_string(version));

  // NDJSON, another key: another commit.
  headers = Auth();
  headers.emplace("Idempotency-Key", "load-43");
  httplib::Result ndjson = Client().Post("/api/v1/tables/s.t/records", headers, "{\"id\": 3}\n{\"id\": 4}\n",
                                         "application/x-ndjson");
  ASSERT_TRUE(ndjson);
  EXPECT_EQ(ndjson->status, 200) << ndjson->body;
  EXPECT_EQ(Scalar("SELECT count(*) FROM s.t"), "4");
}

TEST_F(HttpApiTest, BadRecordsCommitNothing) {
  const std::string records = R"([{"id": 1}, {"name": "no id"}, {"id": "x"}, {"id": 4, "colour": "red"}])";
  httplib::Result result = Client().Post("/api/v1/tables/s.t/records", Auth(), records, "application/json");
  ASSERT_TRUE(result);
  EXPECT_EQ(result->status, 400);
  json body = json::parse(result->body);
  EXPECT_EQ(body["error"]["code"], "InvalidArgument");
  EXPECT_EQ(body["error"]["records"], json::parse(R"([{"record": 1, "field": "id", "message": "is required"},
                            {"record": 2, "field": "id", "message": "expects an integer for BIGINT"},
                            {"record": 3, "field": "colour", "message": "the table has no such column"}])"));
  EXPECT_EQ(Scalar("SELECT count(*) FROM s.t"), "0");
  EXPECT_EQ(Scalar("DESCRIBE HISTORY s.t"), "0");
}

TEST_F(HttpApiTest, StringsThatDoNotConvertAreListedProblems) {
  const std::string records = R"([{"id": 1, "day": "2024-13-45"}, {"id": 2, "price": 123456789012.5}])";
  httplib::Result result = Client().Post("/api/v1/tables/s.t/records", Auth(), records, "application/json");
  ASSERT_TRUE(result);
  EXPECT_EQ(result->status, 400) << result->body;
  EXPECT_EQ(json::parse(result->body)["error"]["records"],
            json::parse(R"j([{"record": 0, "field": "day", "message": "does not convert to DATE"},
                            {"record": 1, "field": "price", "message": "does not convert to DECIMAL(10,2)"}])j"));
  EXPECT_EQ(Scalar("DESCRIBE HISTORY s.t"), "0");
}

// A table with a NOT NULL column and a CHECK constraint, for records set aside.
class HttpRecordsDeadLetterTest : public HttpApiTest {
 protected:
  void SetUp() override {
    HttpApiTest::SetUp();
    ASSERT_OK(session_
                  ->Execute("CREATE TABLE s.c (id BIGINT NOT NULL, amount INT); "
                            "ALTER TABLE s.c ADD CONSTRAINT positive CHECK (amount > 0)")
                  .status());
  }

  // POST `body` to s.c's records with `key` (none when empty) and `query` ("?deadLetterTable=...").
  std::pair<int, json> PostRecords(const std::string& body, const std::string& key, const std::string& query,
                                   const std::string& token = "") {
    httplib::Headers headers = Auth(token.empty() ? token_ : token);
    if (!key.empty()) headers.emplace("Idempotency-Key", key);
    httplib::Result result =
        Client().Post("/api/v1/tables/s.c/records" + query, headers, body, "application/x-ndjson");
    EXPECT_TRUE(result) << httplib::to_string(result.error());
    if (!result) return {0, json()};
    return {result->status, json::parse(result->body, nullptr, false)};
  }
};

constexpr char kMixedRecords[] = R"({"id": 1, "amount": 5}
not json
{"id": 2, "amount": -1}
{"amount": 3}
{"id": 4, "amount": "x"}
{"id": 5, "amount": 7, "colour": "red"}
{"id": 6, "amount": 99999999999}
)";

TEST_F(HttpRecordsDeadLetterTest, RecordsThatDoNotFitGoToTheDeadLetterTableOncePerKey) {
  auto [status, answer] = PostRecords(kMixedRecords, "load-7", "?deadLetterTable=s.dlq");
  ASSERT_EQ(status, 200) << answer;
  EXPECT_EQ(answer["records"], 7);
  EXPECT_EQ(answer["appended"], 1);
  EXPECT_EQ(answer["dead_lettered"], 6);  // five that do not parse or fit, one the CHECK refuses
  EXPECT_EQ(answer["skipped"], false);
  const std::string dlq_version = Scalar("DESCRIBE HISTORY s.dlq");
  EXPECT_EQ(answer["dead_letter_version"], std::stoll(dlq_version));
  EXPECT_EQ(Scalar("SELECT string_agg(id::VARCHAR, ',' ORDER BY id) FROM s.c"), "1");

  ASSERT_OK_AND_ASSIGN(
      std::vector<StatementResult> letters,
      session_->Execute("SELECT \"offset\", decode(key), decode(value), error, topic, partition, "
                        "batch_id, stream_id, dead_lettered_at IS NOT NULL FROM s.dlq "
                        "ORDER BY \"offset\" NULLS LAST"));
  const std::vector<Row>& rows = letters.back().result.rows;
  ASSERT_EQ(rows.size(), 6u);
  const std::string stream_id = rows[0][7].value_or("");
  EXPECT_TRUE(stream_id.starts_with("http-records/") && stream_id.ends_with("/s.c")) << stream_id;
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"1", "not json"},
      {"3", R"({"amount": 3})"},
      {"4", R"({"id": 4, "amount": "x"})"},
      {"5", R"({"id": 5, "amount": 7, "colour": "red"})"},
      {"6", R"({"id": 6, "amount": 99999999999})"}};
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(rows[i][0], expected[i].first);
    EXPECT_EQ(rows[i][1], "load-7");
    EXPECT_EQ(rows[i][2], expected[i].second);
    EXPECT_EQ(rows[i][4], std::nullopt);  // no topic, no partition: a posted record
    EXPECT_EQ(rows[i][5], std::nullopt);
    EXPECT_EQ(rows[i][6], "1");
    EXPECT_EQ(rows[i][7], stream_id);
    EXPECT_EQ(rows[i][8], "true");
  }
  EXPECT_EQ(rows[0][3], "the line is not JSON");
  EXPECT_EQ(rows[1][3], "field 'id' is required");
  EXPECT_EQ(rows[2][3], "field 'amount' expects an integer for INTEGER");
  EXPECT_EQ(rows[3][3], "field 'colour' the table has no such column");
  EXPECT_EQ(rows[4][3], "field 'amount' does not convert to INTEGER");
  // The row the CHECK refused, as the table would have stored it; no coordinates.
  EXPECT_EQ(rows[5][0], std::nullopt);
  EXPECT_EQ(rows[5][1], std::nullopt);
  EXPECT_EQ(json::parse(rows[5][2].value_or("null")), json::parse(R"({"id": 2, "amount": -1})"));
  EXPECT_NE(rows[5][3].value_or("").find("CHECK constraint positive"), std::string::npos) << *rows[5][3];

  // The same request again: neither table changes.
  const std::string version = Scalar("DESCRIBE HISTORY s.c");
  std::tie(status, answer) = PostRecords(kMixedRecords, "load-7", "?deadLetterTable=s.dlq");
  ASSERT_EQ(status, 200) << answer;
  EXPECT_EQ(answer["skipped"], true);
  EXPECT_EQ(answer["appended"], 0);
  EXPECT_EQ(Scalar("DESCRIBE HISTORY s.c"), version);
  EXPECT_EQ(Scalar("DESCRIBE HISTORY s.dlq"), dlq_version);
  EXPECT_EQ(Scalar("SELECT count(*) FROM s.dlq"), "6");

  // Another key is another request; so is one without a key.
  std::tie(status, answer) = PostRecords(kMixedRecords, "load-8", "?deadLetterTable=s.dlq");
  ASSERT_EQ(status, 200) << answer;
  EXPECT_EQ(answer["appended"], 1);
  std::tie(status, answer) = PostRecords("{\"id\": 9, \"amount\": 0}\n", "", "?deadLetterTable=s.dlq");
  ASSERT_EQ(status, 200) << answer;
  EXPECT_EQ(answer["appended"], 0);
  EXPECT_EQ(answer["dead_lettered"], 1);
  EXPECT_EQ(Scalar("SELECT count(*) FROM s.c"), "2");
  EXPECT_EQ(Scalar("SELECT count(*) FROM s.dlq"), "13");
}

TEST_F(HttpRecordsDeadLetterTest, WithoutADeadLetterTableTheConstraintFailsTheRequest) {
  auto [status, answer] = PostRecords("{\"id\": 1, \"amount\": 1}\n{\"id\": 2, \"amount\": -1}\n", "k", "");
  EXPECT_EQ(status, 400) << answer;
  EXPECT_EQ(Scalar("SELECT count(*) FROM s.c"), "0");
  std::tie(status, answer) = PostRecords("{\"id\": 1}\n", "k", "?deadLetterTable=s.c");
  EXPECT_EQ(status, 400) << answer;
  std::tie(status, answer) = PostRecords("{\"id\": 1}\n", "k", "?deadLetterTable=../x");
  EXPECT_EQ(status, 400) << answer;
}

TEST_F(HttpRecordsDeadLetterTest, TheDeadLetterTableNeedsItsOwnRights) {
  ASSERT_OK(security::UserStore(OpenStoreAt(warehouse_.str()).value(), clock_).Create("bob", "b", false));
  ASSERT_OK_AND_ASSIGN(security::NewToken bob, tokens_->Create("bob", std::nullopt));
  ASSERT_OK(session_->Execute("GRANT SELECT, MODIFY ON TABLE s.c TO bob").status());
  const std::string good = "{\"id\": 1, \"amount\": 1}\n";
  // The table does not exist, and bob may not create tables in s: refused even though every
  // record fits, and nothing is committed.
  auto [status, answer] = PostRecords(good, "k1", "?deadLetterTable=s.dlq", bob.text);
  EXPECT_EQ(status, 403) << answer;
  EXPECT_EQ(answer["error"]["code"], "PermissionDenied");
  EXPECT_EQ(Scalar("DESCRIBE HISTORY s.c"), "1");
  // It exists; bob may not modify it.
  ASSERT_OK(session_
                ->Execute("CREATE TABLE s.dlq (stream_id STRING, batch_id BIGINT, topic STRING, "
                          "partition INT, \"offset\" BIGINT, file STRING, line BIGINT, key BINARY, "
                          "value BINARY, error STRING, dead_lettered_at TIMESTAMP)")
                .status());
  std::tie(status, answer) =
      PostRecords(good + "{\"id\": 2, \"amount\": -1}\n", "k1", "?deadLetterTable=s.dlq", bob.text);
  EXPECT_EQ(status, 403) << answer;
  EXPECT_EQ(Scalar("DESCRIBE HISTORY s.c"), "1");
  EXPECT_EQ(Scalar("SELECT count(*) FROM s.dlq"), "0");
  // Granted MODIFY on it (and no CREATE on s), bob's records and dead letters go in.
  ASSERT_OK(session_->Execute("GRANT MODIFY ON TABLE s.dlq TO bob").status());
  std::tie(status, answer) =
      PostRecords(good + "{\"id\": 2, \"amount\": -1}\n", "k1", "?deadLetterTable=s.dlq", bob.text);
  ASSERT_EQ(status, 200) << answer;
  EXPECT_EQ(answer["appended"], 1);
  EXPECT_EQ(answer["dead_lettered"], 1);
  EXPECT_EQ(Scalar("SELECT count(*) FROM s.dlq"), "1");
}

TEST_F(HttpApiTest, OversizedBodyIsRefusedAndChangesNothing) {
  std::string records = "[";
  while (records.size() <= static_cast<size_t>(kMaxBodyBytes)) records += R"({"id": 1, "name": "padding"},)";
  records += R"({"id": 1}])";
  httplib::Result result = Client().Post("/api/v1/tables/s.t/records", Auth(), records, "application/json");
  ASSERT_TRUE(result);
  EXPECT_EQ(result->status, 413);
  EXPECT_EQ(Scalar("SELECT count(*) FROM s.t"), "0");
}

TEST_F(HttpApiTest, OddNamesInPathsAreRefused) {
  for (const std::string path :
       {"/api/v1/tables/..%2F..%2Fetc", "/api/v1/tables/../history", "/api/v1/tables/a.b.c/history",
        "/api/v1/tables/s.t%2F..%2Fx/files", "/api/v1/tables/s.%22t%22", "/api/v1/schemas/..%2Fs/tables",
        "/api/v1/tables/s%00t", "/api/v1/tables/a.b.c/lineage"}) {
    auto [status, body] = Get(path);
    EXPECT_EQ(status, 400) << path << " " << body;
  }
  httplib::Result result =
      Client().Post("/api/v1/tables/..%2Fs.t/records", Auth(), "[{\"id\": 1}]", "application/json");
  ASSERT_TRUE(result);
  EXPECT_EQ(result->status, 400);
  EXPECT_EQ(Get("/api/v1/nowhere").first, 404);
}

TEST_F(HttpApiTest, CatalogRoutes) {
  ASSERT_OK(session_->Execute("INSERT INTO s.t VALUES (1, 'a', 1.5, DATE '2024-01-02')").status());
  auto [status, body] = Get("/api/v1/schemas");
  ASSERT_EQ(status, 200) << body;
  EXPECT_NE(std::find(body["schemas"].begin(), body["schemas"].end(), "s"), body["schemas"].end()) << body;
  std::tie(status, body) = Get("/api/v1/schemas/s/tables");
  EXPECT_EQ(body["tables"], json::array({"t"})) << body;
  EXPECT_EQ(Get("/api/v1/schemas/nope/tables").first, 404);
  std::tie(status, body) = Get("/api/v1/tables/s.t");
  ASSERT_EQ(status, 200) << body;
  EXPECT_EQ(body["columns"][0], json({{"name", "id"}, {"type", "bigint"}, {"nullable", false}}));
  EXPECT_EQ(body["columns"].size(), 4u);
  std::tie(status, body) = Get("/api/v1/tables/s.t/history");
  ASSERT_EQ(status, 200) << body;
  ASSERT_EQ(body["history"].size(), 2u);
  EXPECT_EQ(body["history"][0]["version"], 1);
  EXPECT_EQ(body["history"][0]["operation"], "WRITE");
  std::tie(status, body) = Get("/api/v1/tables/s.t/files");
  ASSERT_EQ(status, 200) << body;
  EXPECT_EQ(body["num_files"], 1);
  EXPECT_EQ(body["files"][0]["rows"], 1);
  EXPECT_GT(body["files"][0]["size_bytes"], 0);
  EXPECT_EQ(Get("/api/v1/tables/s.missing/files").first, 404);
}

// "source > target operation" of each edge of a lineage answer, and "table distance" of
// each node.
std::vector<std::string> LineageEdges(const json& answer) {
  std::vector<std::string> edges;
  for (const json& edge : answer["edges"]) {
    edges.push_back(edge["source"].get<std::string>() + " > " + edge["target"].get<std::string>() + " " +
                    edge["operation"].get<std::string>());
    EXPECT_TRUE(edge["first_seen"].is_string()) << edge;
  }
  return edges;
}
std::vector<std::string> LineageNodes(const json& answer) {
  std::vector<std::string> nodes;
  for (const json& node : answer["nodes"])
    nodes.push_back(node["table"].get<std::string>() + " " + std::to_string(node["distance"].get<int>()));
  return nodes;
}

TEST_F(HttpApiTest, LineageRouteFollowsEdgesTheUserMayRead) {
  auto [status, body] = Get("/api/v1/tables/s.t/lineage");
  ASSERT_EQ(status, 200) << body;  // nothing recorded yet: no lineage table
  EXPECT_EQ(body, json::parse(R"({"table": "s.t", "max_hops": 5, "nodes": [{"table": "s.t", "distance": 0}],
                                 "edges": []})"));
  // Writes through the API record their edges: a -> b, b -> c and a -> c.
  for (const char* sql : {"CREATE TABLE s.a (id BIGINT)", "INSERT INTO s.a VALUES (1), (2)",
                          "CREATE TABLE s.b AS SELECT * FROM s.a", "CREATE TABLE s.c (id BIGINT)",
                          "INSERT INTO s.c SELECT id FROM s.b", "INSERT INTO s.c SELECT id FROM s.a"}) {
    auto [posted, answer] = Post({{"statement", sql}});
    ASSERT_EQ(posted, 200) << sql << answer;
  }
  std::tie(status, body) = Get("/api/v1/tables/S.C/lineage");  // names fold to lower case
  ASSERT_EQ(status, 200) << body;
  EXPECT_EQ(body["table"], "s.c");
  EXPECT_EQ(LineageEdges(body),
            (std::vector<std::string>{"s.a > s.b CREATE TABLE", "s.a > s.c INSERT", "s.b > s.c INSERT"}));
  EXPECT_EQ(LineageNodes(body), (std::vector<std::string>{"s.a -1", "s.b -1", "s.c 0"}));
  // From b: a upstream, c downstream; a -> c is neither b's upstream nor downstream.
  std::tie(status, body) = Get("/api/v1/tables/s.b/lineage");
  ASSERT_EQ(status, 200) << body;
  EXPECT_EQ(LineageEdges(body), (std::vector<std::string>{"s.a > s.b CREATE TABLE", "s.b > s.c INSERT"}));
  EXPECT_EQ(LineageNodes(body), (std::vector<std::string>{"s.a -1", "s.b 0", "s.c 1"}));
  EXPECT_EQ(Get("/api/v1/tables/s.missing/lineage").first, 404);

  // At most 5 hops: c -> h1 -> ... -> h6, recorded straight into the lineage table.
  std::string chain = "INSERT INTO basin_system.lineage VALUES ('s.c', 's.h1', 'INSERT', now(), NULL)";
  for (int i = 1; i < 6; ++i) {
    ASSERT_OK(session_->Execute("CREATE TABLE s.h" + std::to_string(i) + " (id BIGINT)").status());
    chain += ", ('s.h" + std::to_string(i) + "', 's.h" + std::to_string(i + 1) + "', 'MERGE', now(), NULL)";
  }
  ASSERT_OK(session_->Execute("CREATE TABLE s.h6 (id BIGINT); " + chain).status());
  std::tie(status, body) = Get("/api/v1/tables/s.a/lineage");
  ASSERT_EQ(status, 200) << body;
  EXPECT_EQ(LineageNodes(body),
            (std::vector<std::string>{"s.a 0", "s.b 1", "s.c 1", "s.h1 2", "s.h2 3", "s.h3 4", "s.h4 5"}));
  EXPECT_EQ(LineageEdges(body).size(), 7u) << body;

  // bob: without grants, refused; with SELECT on a and c only, b and its edges are left
  // out, and nothing is followed through it.
  ASSERT_OK(security::UserStore(OpenStoreAt(warehouse_.str()).value(), clock_).Create("bob", "b", false));
  ASSERT_OK_AND_ASSIGN(security::NewToken bob, tokens_->Create("bob", std::nullopt));
  const auto as_bob = [&](const std::string& path) -> std::pair<int, json> {
    httplib::Result result = Client().Get(path, Auth(bob.text));
    EXPECT_TRUE(result) << httplib::to_string(result.error());
    if (!result) return {0, json()};
    return {result->status, json::parse(result->body, nullptr, false)};
  };
  std::tie(status, body) = as_bob("/api/v1/tables/s.c/lineage");
  EXPECT_EQ(status, 403) << body;
  EXPECT_EQ(body["error"]["code"], "PermissionDenied") << body;
  EXPECT_FALSE(body.contains("edges")) << body;
  ASSERT_OK(session_->Execute("GRANT SELECT ON TABLE s.a TO bob; GRANT SELECT ON TABLE s.c TO bob").status());
  std::tie(status, body) = as_bob("/api/v1/tables/s.c/lineage");
  ASSERT_EQ(status, 200) << body;
  EXPECT_EQ(LineageEdges(body), (std::vector<std::string>{"s.a > s.c INSERT"}));
  EXPECT_EQ(LineageNodes(body), (std::vector<std::string>{"s.a -1", "s.c 0"}));
  EXPECT_EQ(as_bob("/api/v1/tables/s.b/lineage").first, 403);
}

TEST_F(HttpApiTest, SlowClientIsDroppedWhileOthersAreServed) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(server_->http_port()));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  const std::string half = "POST /api/v1/statements HTTP/1.1\r\nHost: x\r\nContent-Le";
  ASSERT_EQ(::send(fd, half.data(), half.size(), 0), static_cast<ssize_t>(half.size()));
  EXPECT_EQ(Get("/api/v1/schemas").first, 200);  // served meanwhile
  const auto start = std::chrono::steady_clock::now();
  timeval wait{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait));
  char buffer[256];
  ssize_t read = 0;
  while ((read = ::recv(fd, buffer, sizeof(buffer), 0)) > 0) {
  }
  const auto waited = std::chrono::steady_clock::now() - start;
  ::close(fd);
  EXPECT_EQ(read, 0) << "the server should have closed the connection";
  EXPECT_LT(waited, std::chrono::seconds(5));
}

TEST_F(HttpApiTest, CurlRunsAStatement) {
  std::optional<std::filesystem::path> curl = testing::FindOnPath("curl");
  if (!curl) {
    if (testing::InCi()) FAIL() << "curl is not on PATH in CI (scripts/setup.sh installs it)";
    GTEST_SKIP() << "curl is not on PATH; skipping";
  }
  ASSERT_OK_AND_ASSIGN(
      testing::ProcessOutput output,
      testing::RunProcess(
          {curl->string(), "-sS", "--fail-with-body", "-H", "Authorization: Bearer " + token_, "-H",
           "Content-Type: application/json", "-d", R"({"statement": "SELECT 42 AS answer"})",
           "http://127.0.0.1:" + std::to_string(server_->http_port()) + "/api/v1/statements"},
          {}));
  ASSERT_EQ(output.exit_code, 0) << output.err << output.out;
  EXPECT_EQ(json::parse(output.out)["rows"], json::parse("[[42]]"));
}

// Statements, record appends and refused tokens become rows of basin_system.audit_log,
// written at the latest when the server stops.
TEST_F(HttpApiTest, RequestsAreAudited) {
  ASSERT_EQ(Post({{"statement", "SELECT 42"}}).first, 200);
  ASSERT_EQ(Post({{"statement", "SELECT * FROM s.nope"}}).first, 404);
  httplib::Result appended =
      Client().Post("/api/v1/tables/s.t/records", Auth(), R"([{"id": 1}, {"id": 2}])", "application/json");
  ASSERT_TRUE(appended);
  ASSERT_EQ(appended->status, 200) << appended->body;
  httplib::Result refused = Client().Get("/api/v1/schemas", Auth("basin_x_y"));
  ASSERT_TRUE(refused);
  ASSERT_EQ(refused->status, 401);
  server_->Shutdown();
  server_->Wait();

  ASSERT_OK_AND_ASSIGN(
      std::vector<StatementResult> results,
      session_->Execute("SELECT statement, coalesce(user_name, '-'), protocol, client_address, outcome, "
                        "coalesce(sqlstate, '-'), coalesce(CAST(row_count AS VARCHAR), '-') "
                        "FROM basin_system.audit_log ORDER BY statement"));
  std::vector<std::string> lines = testing::RowLines(results.back().result);
  EXPECT_EQ(lines, (std::vector<std::string>{
                       "POST /api/v1/tables/s.t/records|alice|http|127.0.0.1|ok|-|2",
                       "SELECT * FROM s.nope|alice|http|127.0.0.1|error|42P01|-",
                       "SELECT 42|alice|http|127.0.0.1|ok|-|-",
                       "sign-in: GET /api/v1/schemas|-|http|127.0.0.1|denied|28000|-",
                   }));
}

}  // namespace
}  // namespace basin
