// The web console (docs/console.md) served by basin::Server: its files over HTTP (without a
// token, with their types and a strict Content-Security-Policy), and its pages in headless
// Chromium (testing/webdriver.h) against the HTTP API: sign-in with a wrong and a right
// token, the catalog browser, the SQL editor with pages, a chart, an error and cancelling,
// and a revoked token sending the user back to sign in; the lineage graph, the flows page
// with a running stream, the metrics page, and the data quality page of a running pipeline;
// no JavaScript or CSP errors.
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "basin/object_store.h"
#include "basin/server.h"
#include "basin/session.h"
#include "security/tokens.h"
#include "security/users.h"
#include "test_server.h"
#include "testing/test_util.h"
#include "testing/webdriver.h"

namespace basin {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

class ConsoleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> session, Session::Open({.warehouse = warehouse_.str()}));
    ASSERT_OK(session
                  ->Execute("CREATE SCHEMA sales; "
                            "CREATE TABLE sales.orders (region STRING, n BIGINT, amount DECIMAL(10,2)); "
                            "INSERT INTO sales.orders VALUES ('EU', 120, 10.50), ('US', 98, 20.25), "
                            "('APAC', 40, 5.00), ('LATAM', 7, 1.25); "
                            "CREATE TABLE sales.orders_copy (region STRING, n BIGINT)")
                  .status());
    ServerOptions options = testing::HttpServerOptions(warehouse_.str(), "admin pass", clock_);
    AddFlows(options);
    ASSERT_OK_AND_ASSIGN(server_, Server::Start(options));
    ASSERT_OK_AND_ASSIGN(std::shared_ptr<ObjectStore> store, OpenStoreAt(warehouse_.str()));
    ASSERT_OK(security::UserStore(store, clock_).Create("alice", "alice pass", /*admin=*/false));
    tokens_ = std::make_unique<security::TokenStore>(store, clock_);
    ASSERT_OK_AND_ASSIGN(security::NewToken admin, tokens_->Create("admin", std::nullopt));
    admin_token_ = admin.text;
    ASSERT_OK_AND_ASSIGN(alice_, tokens_->Create("alice", std::nullopt));
  }

  // The flows the server runs: one stream, for the flows page (and its lineage: orders ->
  // orders_copy).
  virtual void AddFlows(ServerOptions& options) {
    options.streams = {
        {"orders_copy", "INSERT INTO sales.orders_copy SELECT region, n FROM STREAM(sales.orders)"}};
    options.checkpoint_root = checkpoints_.str();
    options.stream_interval_ms = 200;
  }

  std::string BaseUrl() const { return "http://127.0.0.1:" + std::to_string(server_->http_port()); }

  // Whether sales.orders' lineage holds the stream's edge to sales.orders_copy, waiting for
  // it up to a minute.
  bool StreamEdgeRecorded() {
    httplib::Client client("127.0.0.1", server_->http_port());
    for (int attempt = 0; attempt < 600; ++attempt) {
      httplib::Result answer =
          client.Get("/api/v1/tables/sales.orders/lineage", {{"Authorization", "Bearer " + admin_token_}});
      if (answer && answer->body.find("sales.orders_copy") != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }

  // Runs `sql` through the HTTP API as the admin user.
  void AdminSql(const std::string& sql) {
    httplib::Client client("127.0.0.1", server_->http_port());
    client.set_read_timeout(60, 0);
    httplib::Result answer = client.Post("/api/v1/statements", {{"Authorization", "Bearer " + admin_token_}},
                                         json{{"statement", sql}}.dump(), "application/json");
    ASSERT_TRUE(answer) << sql << ": " << httplib::to_string(answer.error());
    EXPECT_EQ(answer->status, 200) << sql << ": " << answer->body;
  }

  std::shared_ptr<const Clock> clock_ = SystemClock();
  testing::TempDir warehouse_;
  testing::TempDir checkpoints_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<security::TokenStore> tokens_;
  std::string admin_token_;
  security::NewToken alice_;
};

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST_F(ConsoleTest, ServesItsFilesWithoutATokenWithTypesAndPolicy) {
  httplib::Client client("127.0.0.1", server_->http_port());
  const std::map<std::string, std::string> types = {{".html", "text/html; charset=utf-8"},
                                                    {".js", "text/javascript; charset=utf-8"},
                                                    {".css", "text/css; charset=utf-8"},
                                                    {".svg", "image/svg+xml"}};
  int files = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(testing::SourceDir() / "web" / "console")) {
    const std::string name = entry.path().filename().string();
    httplib::Result answer = client.Get("/console/" + name);
    ASSERT_TRUE(answer) << name;
    EXPECT_EQ(answer->status, 200) << name;
    EXPECT_EQ(answer->body, ReadFile(entry.path())) << name << " differs from the file built in";
    ASSERT_TRUE(types.contains(entry.path().extension().string()))
        << name << " has a type the server does not know";
    EXPECT_EQ(answer->get_header_value("Content-Type"), types.at(entry.path().extension().string())) << name;
    const std::string policy = answer->get_header_value("Content-Security-Policy");
    EXPECT_NE(policy.find("default-src 'none'"), std::string::npos) << policy;
    EXPECT_NE(policy.find("script-src 'self'"), std::string::npos) << policy;
    EXPECT_EQ(policy.find("unsafe"), std::string::npos) << policy;
    EXPECT_EQ(answer->get_header_value("X-Content-Type-Options"), "nosniff");
    ++files;
  }
  EXPECT_GE(files, 5);
  const std::string index = ReadFile(testing::SourceDir() / "web" / "console" / "index.html");
  for (const char* path : {"/", "/console", "/console/"}) {
    httplib::Result answer = client.Get(path);
    ASSERT_TRUE(answer) << path;
    EXPECT_EQ(answer->status, 200) << path;
    EXPECT_EQ(answer->body, index) << path;
  }
  // Only the embedded files exist: nothing is read from disk by name.
  for (const char* path :
       {"/console/missing.js", "/console/../CMakeLists.txt", "/console/%2e%2e/README.md"}) {
    httplib::Result answer = client.Get(path);
    ASSERT_TRUE(answer) << path;
    EXPECT_EQ(answer->status, 404) << path << ": " << answer->body;
    EXPECT_EQ(json::parse(answer->body, nullptr, false)["error"]["code"], "NotFound") << answer->body;
  }
}

// Each step of the browser test waits for what the page shows, through these scripts.
constexpr char kRowsScript[] =
    "return [...document.querySelectorAll(arguments[0] + ' tbody tr')].map((r) => [...r.cells].map((c) => "
    "c.textContent));";
constexpr char kTextScript[] =
    "const e = document.querySelector(arguments[0]); return e ? e.textContent : null;";
constexpr char kBarHeightsScript[] =
    "return [...document.querySelectorAll('#chart-svg rect.bar')].map((b) => "
    "Number(b.getAttribute('height')));";

// The rows of the table `table_selector` once there are `count` of them.
json WaitForRows(testing::Browser& browser, const std::string& table_selector, size_t count) {
  Result<json> counted =
      browser.WaitFor("return document.querySelectorAll(arguments[0] + ' tbody tr').length === arguments[1];",
                      json::array({table_selector, count}));
  EXPECT_OK(counted.status());
  Result<json> seen = browser.Execute(kRowsScript, json::array({table_selector}));
  EXPECT_OK(seen.status());
  return seen.ok() ? *seen : json();
}

// Text of `selector` once it contains `part`.
void WaitForText(testing::Browser& browser, const std::string& selector, const std::string& part) {
  Status found = browser
                     .WaitFor(
                         "const e = document.querySelector(arguments[0]); return e !== null && "
                         "e.textContent.includes(arguments[1]);",
                         json::array({selector, part}))
                     .status();
  EXPECT_TRUE(found.ok()) << found.ToString() << "\ntext of " << selector << ": "
                          << browser.Execute(kTextScript, json::array({selector})).ValueOr(json());
}

void RunSql(testing::Browser& browser, const std::string& sql) {
  // The page is drawn on the hashchange after a click on its link, not at once.
  ASSERT_OK(browser.WaitFor("return document.querySelector('#sql-text') !== null;").status());
  ASSERT_OK(browser.Type("#sql-text", sql));
  ASSERT_OK(browser.Click("#run"));
}

// Chooses `value` in the <select> `selector`, as a user does.
void Choose(testing::Browser& browser, const std::string& selector, const std::string& value) {
  ASSERT_OK(browser
                .Execute("const s = document.querySelector(arguments[0]); s.value = arguments[1]; "
                         "s.dispatchEvent(new Event('change'));",
                         json::array({selector, value}))
                .status());
}

// No script error and no CSP violation in the browser's console: its only errors are
// requests the server refused with 401 or 403.
void ExpectOnlyRefusalsLogged(testing::Browser& browser) {
  Result<json> log = browser.TakeConsoleLog();
  ASSERT_OK(log.status());
  for (const json& entry : *log) {
    if (entry.value("level", "") != "SEVERE" && entry.value("level", "") != "WARNING") continue;
    const std::string message = entry.value("message", "");
    const bool expected_refusal =
        entry.value("source", "") == "network" && (message.find("status of 401") != std::string::npos ||
                                                   message.find("status of 403") != std::string::npos);
    EXPECT_TRUE(expected_refusal) << entry.dump();
  }
}

void SignIn(testing::Browser& browser, const std::string& token) {
  ASSERT_OK(browser.WaitFor("return document.querySelector('#token-input') !== null;").status());
  ASSERT_OK(browser.Type("#token-input", token));
  ASSERT_OK(browser.Click("#signin-button"));
  WaitForText(browser, "#schemas", "sales");
}

TEST_F(ConsoleTest, PagesWorkInHeadlessChromium) {
  SKIP_OR_FAIL_WITHOUT_BROWSER();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<testing::Browser> browser, testing::Browser::Start());
  ASSERT_OK(browser->Navigate(BaseUrl() + "/"));

  // A wrong token is refused on the sign-in page and not kept.
  ASSERT_OK(browser->WaitFor("return document.querySelector('#token-input') !== null;").status());
  ASSERT_OK(browser->Type("#token-input", "basin_0123456789abcdef_" + std::string(64, '0')));
  ASSERT_OK(browser->Click("#signin-button"));
  WaitForText(*browser, "#signin-error", "401 Unauthenticated");
  EXPECT_EQ(*browser->Execute("return sessionStorage.getItem('basin.token');"), json());

  // The admin's token opens the catalog: schemas, tables, then a table's columns, history
  // and files.
  ASSERT_OK(browser->Type("#token-input", admin_token_));
  ASSERT_OK(browser->Click("#signin-button"));
  WaitForText(*browser, "#schemas", "sales");
  EXPECT_EQ(*browser->Execute("return location.hash;"), "#/catalog");
  ASSERT_OK(browser->Click("#schemas a[href='#/catalog/sales']"));
  WaitForText(*browser, "#tables", "orders");
  ASSERT_OK(browser->Click("#tables a[href='#/catalog/sales/orders']"));
  EXPECT_EQ(WaitForRows(*browser, "#columns", 3),
            json::parse(R"json([["region", "string", "true"], ["n", "bigint", "true"],
                                ["amount", "decimal(10,2)", "true"]])json"));
  const json history = WaitForRows(*browser, "#history", 2);  // CREATE TABLE, then the INSERT
  ASSERT_EQ(history.size(), 2u);
  EXPECT_EQ(history[0][0], "1") << history;  // newest first
  const json files = WaitForRows(*browser, "#files", 1);
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0][2], "4") << files;  // the file's rows

  // A query's rows render, and its chart has one bar per row, as tall as the values.
  ASSERT_OK(browser->Click("#nav a[data-page='sql']"));
  RunSql(*browser, "SELECT region, n, amount FROM sales.orders ORDER BY n DESC");
  EXPECT_EQ(WaitForRows(*browser, "#results", 4),
            json::parse(R"([["EU", "120", "10.50"], ["US", "98", "20.25"], ["APAC", "40", "5.00"],
                            ["LATAM", "7", "1.25"]])"));
  json heights = browser->WaitFor(kBarHeightsScript).ValueOr(json());
  ASSERT_EQ(heights.size(), 4u) << heights;
  EXPECT_GT(heights[0], heights[1]);
  EXPECT_GT(heights[1], heights[2]);
  EXPECT_GT(heights[2], heights[3]);
  // The decimal column (values given as text): US's 20.25 is the tallest bar.
  Choose(*browser, "#chart-column", "2");
  heights = browser->WaitFor(kBarHeightsScript).ValueOr(json());
  ASSERT_EQ(heights.size(), 4u) << heights;
  EXPECT_GT(heights[1], heights[0]);
  EXPECT_GT(heights[0], heights[2]);
  Choose(*browser, "#chart-kind", "line");
  EXPECT_EQ(
      browser->WaitFor("return document.querySelectorAll('#chart-svg circle.point').length;").ValueOr(0), 4);
  EXPECT_EQ(*browser->Execute("return document.querySelectorAll('#chart-svg polyline.line').length;"), 1);

  // A result of 250 rows arrives in pages of 100 through the statement's `next`.
  RunSql(*browser, "SELECT i, i * 2 AS twice FROM range(250) t(i)");
  WaitForRows(*browser, "#results", 100);
  WaitForText(*browser, "#sql-status", "100 rows so far");
  ASSERT_OK(browser->Click("#next-page"));
  WaitForRows(*browser, "#results", 200);
  ASSERT_OK(browser->Click("#next-page"));
  const json all = WaitForRows(*browser, "#results", 250);
  ASSERT_EQ(all.size(), 250u);
  EXPECT_EQ(all[249], json::array({"249", "498"}));
  EXPECT_EQ(*browser->Execute("return document.querySelector('#next-page').hidden;"), true);
  // The chart keeps the kind chosen for the previous result: a line, with a point per row.
  EXPECT_EQ(*browser->Execute("return document.querySelectorAll('#chart-svg circle.point').length;"), 250);

  // A running statement is cancelled.
  RunSql(*browser, "SELECT count(*) FROM range(1000000000000) t(i) WHERE i % 7 = 3");
  ASSERT_OK(browser->WaitFor("return !document.querySelector('#cancel').disabled;").status());
  ASSERT_OK(browser->Click("#cancel"));
  WaitForText(*browser, "#sql-status", "Cancelled");
  EXPECT_EQ(*browser->Execute("return document.querySelector('#results');"), json());

  // A user without grants sees an error with its SQLSTATE and no rows.
  ASSERT_OK(browser->Click("#sign-out"));
  ASSERT_OK(browser->WaitFor("return document.querySelector('#token-input') !== null;").status());
  ASSERT_OK(browser->Type("#token-input", alice_.text));
  ASSERT_OK(browser->Click("#signin-button"));
  WaitForText(*browser, "#schemas", "sales");
  ASSERT_OK(browser->Click("#nav a[data-page='sql']"));
  RunSql(*browser, "SELECT * FROM sales.orders");
  WaitForText(*browser, "#sql-error", "SQLSTATE 42501 PermissionDenied");
  EXPECT_EQ(*browser->Execute("return document.querySelectorAll('#results tr, #chart-svg').length;"), 0);

  // A token revoked while in use sends the user back to sign in.
  ASSERT_OK(tokens_->Revoke(alice_.token.id));
  ASSERT_OK(browser->Click("#nav a[data-page='catalog']"));
  WaitForText(*browser, "#signin-error", "Signed out");
  EXPECT_EQ(*browser->Execute("return sessionStorage.getItem('basin.token');"), json());

  // No script error and no CSP violation on the way; the only failed requests are the
  // refused tokens (401) and the refused read (403).
  ExpectOnlyRefusalsLogged(*browser);
}

// The tables of the lineage graph's nodes, in the order drawn.
constexpr char kLineageNodesScript[] =
    "return [...document.querySelectorAll('#lineage-svg g.node')].map((g) => g.dataset.table);";

TEST_F(ConsoleTest, LineageFlowsAndMetricsPagesInHeadlessChromium) {
  SKIP_OR_FAIL_WITHOUT_BROWSER();
  // An INSERT ... SELECT through the HTTP API records the edge sales.orders -> sales.summary.
  AdminSql("CREATE TABLE sales.summary (region STRING, n BIGINT)");
  AdminSql("INSERT INTO sales.summary SELECT region, n FROM sales.orders WHERE n > 50");
  // The stream's first batch records sales.orders -> sales.orders_copy.
  ASSERT_TRUE(StreamEdgeRecorded()) << "the stream recorded no lineage within a minute";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<testing::Browser> browser, testing::Browser::Start());
  ASSERT_OK(browser->Navigate(BaseUrl() + "/"));
  SignIn(*browser, admin_token_);

  // The lineage graph of sales.summary, reached from its catalog page: its source upstream
  // (to the left), one edge with an arrow, the chosen table highlighted.
  ASSERT_OK(browser->Navigate(BaseUrl() + "/#/catalog/sales/summary"));
  ASSERT_OK(browser->WaitFor("return document.querySelector('#table-lineage') !== null;").status());
  ASSERT_OK(browser->Click("#table-lineage"));
  ASSERT_OK(
      browser->WaitFor("return document.querySelector('#lineage-svg g.node.chosen') !== null;").status());
  EXPECT_EQ(*browser->Execute(kLineageNodesScript), json::array({"sales.orders", "sales.summary"}));
  EXPECT_EQ(*browser->Execute("return document.querySelector('#lineage-svg g.node.chosen').dataset.table;"),
            "sales.summary");
  EXPECT_EQ(*browser->Execute("return [...document.querySelectorAll('#lineage-svg g.node text')]"
                              ".map((t) => t.textContent);"),
            json::array({"sales.orders", "sales.summary"}));
  EXPECT_EQ(*browser->Execute("return [...document.querySelectorAll('#lineage-svg path.edge')].map((p) => "
                              "[p.dataset.source, p.dataset.target, p.getAttribute('marker-end')]);"),
            json::parse(R"json([["sales.orders", "sales.summary", "url(#lineage-arrow)"]])json"));
  EXPECT_EQ(*browser->Execute("const x = (t) => Number(document.querySelector(`#lineage-svg "
                              "g.node[data-table='${t}'] rect`).getAttribute('x')); "
                              "return x('sales.orders') < x('sales.summary');"),
            true);
  const json edges = WaitForRows(*browser, "#lineage-edges", 1);
  ASSERT_EQ(edges.size(), 1u);
  EXPECT_EQ(edges[0][0], "sales.orders");
  EXPECT_EQ(edges[0][1], "sales.summary");
  EXPECT_EQ(edges[0][2], "INSERT");
  // Clicking sales.orders shows its lineage: both tables it feeds, the stream's sink too.
  ASSERT_OK(browser->Click("#lineage-svg g.node[data-table='sales.orders'] rect"));
  const Status fed = browser
                         ->WaitFor(
                             "return document.querySelector('#lineage-svg g.node.chosen')?.dataset.table "
                             "=== 'sales.orders' && document.querySelectorAll('#lineage-svg "
                             "path.edge').length === 2;")
                         .status();
  EXPECT_TRUE(fed.ok()) << fed.ToString() << *browser->Execute(kLineageNodesScript);
  EXPECT_EQ(*browser->Execute("return location.hash;"), "#/lineage/sales.orders");
  EXPECT_EQ(*browser->Execute(kLineageNodesScript),
            json::array({"sales.orders", "sales.orders_copy", "sales.summary"}));

  // The flows page lists the stream; the admin stops and starts it.
  ASSERT_OK(browser->Click("#nav a[data-page='flows']"));
  WaitForText(*browser, "#flows tr[data-flow='orders_copy']", "RUNNING");
  EXPECT_EQ(*browser->Execute(
                "return document.querySelector('#flows tr[data-flow=\"orders_copy\"] td:nth-child(4)')"
                ".textContent;"),
            "sales.orders_copy");
  ASSERT_OK(browser->Click("#flows tr[data-flow='orders_copy'] button.stop"));
  WaitForText(*browser, "#flows tr[data-flow='orders_copy']", "STOPPED");
  ASSERT_OK(browser->Click("#flows tr[data-flow='orders_copy'] button.start"));
  WaitForText(*browser, "#flows tr[data-flow='orders_copy']", "RUNNING");

  // The metrics page: a row and bars per table, the server's figures, read again while open.
  ASSERT_OK(browser->Click("#nav a[data-page='metrics']"));
  // Rows by table (basin_system's tables are listed too).
  const json tables = browser
                          ->WaitFor(
                              "const rows = [...document.querySelectorAll('#metrics-tables tbody tr')]"
                              ".map((r) => [...r.cells].map((c) => c.textContent)); "
                              "return rows.some((r) => r[0] === 'sales.summary') && "
                              "Object.fromEntries(rows.map((r) => [r[0], r.slice(1)]));")
                          .ValueOr(json());
  ASSERT_TRUE(tables.contains("sales.orders")) << tables;
  EXPECT_EQ(tables["sales.orders"][0], "1") << tables;  // version
  EXPECT_EQ(tables["sales.orders"][1], "1") << tables;  // files
  EXPECT_EQ(tables["sales.summary"][0], "1") << tables;
  EXPECT_EQ(*browser->Execute("return document.querySelectorAll('#chart-files rect.bar').length;"),
            tables.size());
  WaitForText(*browser, "#metrics-server", "http");
  AdminSql("INSERT INTO sales.summary VALUES ('MENA', 3)");
  ASSERT_OK(browser
                ->WaitFor("return [...document.querySelectorAll('#metrics-tables tbody tr')].some((r) => "
                          "r.cells[0].textContent === 'sales.summary' && r.cells[1].textContent === '2');")
                .status());

  // A user without grants sees an error and no graph; stopping a flow is refused.
  ASSERT_OK(browser->Click("#sign-out"));
  SignIn(*browser, alice_.text);
  ASSERT_OK(browser->Navigate(BaseUrl() + "/#/lineage/sales.summary"));
  WaitForText(*browser, "#lineage-error", "SQLSTATE 42501 PermissionDenied");
  EXPECT_EQ(*browser->Execute("return document.querySelectorAll('#lineage-svg, #lineage-edges').length;"), 0);
  ASSERT_OK(browser->Click("#nav a[data-page='flows']"));
  WaitForText(*browser, "#flows tr[data-flow='orders_copy']", "RUNNING");
  ASSERT_OK(browser->Click("#flows tr[data-flow='orders_copy'] button.stop"));
  WaitForText(*browser, "#flows-action-error", "SQLSTATE 42501 PermissionDenied");
  ExpectOnlyRefusalsLogged(*browser);
}

// The console's server running a pipeline instead of the stream: its table checks the rows
// of sales.orders against a warning and a DROP ROW expectation that some of them fail.
class DataQualityConsoleTest : public ConsoleTest {
 protected:
  void AddFlows(ServerOptions& options) override {
    std::ofstream(pipeline_.path() / "pipeline.json")
        << R"({"name": "checks", "trigger_interval": "200 milliseconds"})";
    std::ofstream(pipeline_.path() / "checks.sql")
        << "CREATE OR REFRESH STREAMING TABLE checked_orders (\n"
           "  CONSTRAINT large EXPECT (n > 50),\n"
           "  CONSTRAINT known_region EXPECT (region IN ('EU', 'US', 'APAC')) ON VIOLATION DROP ROW\n"
           ") AS SELECT region, n FROM STREAM(sales.orders);\n";
    options.pipelines = {pipeline_.str()};
  }

  // Whether the pipeline's event log holds both expectations' events, waiting up to a minute.
  bool ExpectationsLogged() {
    httplib::Client client("127.0.0.1", server_->http_port());
    const std::string count =
        "SELECT count(DISTINCT expectation) FROM default.checks_event_log WHERE event_type = 'expectation'";
    for (int attempt = 0; attempt < 600; ++attempt) {
      httplib::Result answer =
          client.Post("/api/v1/statements", {{"Authorization", "Bearer " + admin_token_}},
                      json{{"statement", count}}.dump(), "application/json");
      if (answer && answer->status == 200 && json::parse(answer->body)["rows"] == json::parse("[[2]]"))
        return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }

  testing::TempDir pipeline_;
};

constexpr char kExpectationsTable[] = "section[data-pipeline='checks'] table.expectations";

TEST_F(DataQualityConsoleTest, DataQualityPageInHeadlessChromium) {
  SKIP_OR_FAIL_WITHOUT_BROWSER();
  // The pipeline's first pass checks the four rows of sales.orders in one batch.
  ASSERT_TRUE(ExpectationsLogged()) << "the pipeline logged no expectations within a minute";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<testing::Browser> browser, testing::Browser::Start());
  ASSERT_OK(browser->Navigate(BaseUrl() + "/"));
  SignIn(*browser, admin_token_);

  // Per expectation its passed and failed rows (APAC and LATAM are not large; LATAM's region
  // is unknown), and the failed fraction as a table and as bars.
  ASSERT_OK(browser->Click("#nav a[data-page='quality']"));
  EXPECT_EQ(WaitForRows(*browser, kExpectationsTable, 2),
            json::parse(R"json([["checked_orders", "known_region", "drop row", "3", "1", "25.0 %"],
                                ["checked_orders", "large", "warn", "2", "2", "50.0 %"]])json"));
  WaitForText(*browser, "section[data-pipeline='checks'] h2", "default.checks_event_log");
  const json heights = *browser->Execute(
      "return [...document.querySelectorAll('#quality-chart-0 rect.bar')].map((b) => "
      "Number(b.getAttribute('height')));");
  ASSERT_EQ(heights.size(), 2u) << heights;
  EXPECT_GT(heights[1], heights[0]);

  // A user without SELECT on the event log sees the server's refusal and no rows.
  ASSERT_OK(browser->Click("#sign-out"));
  SignIn(*browser, alice_.text);
  ASSERT_OK(browser->Click("#nav a[data-page='quality']"));
  WaitForText(*browser, "section[data-pipeline='checks'] .error", "SQLSTATE 42501 PermissionDenied");
  EXPECT_EQ(
      *browser->Execute("return document.querySelectorAll(arguments[0] + ' tr, #quality-chart-0').length;",
                        json::array({kExpectationsTable})),
      0);
  ExpectOnlyRefusalsLogged(*browser);
}

}  // namespace
}  // namespace basin
