// The web console (docs/console.md) served by basin::Server: its files over HTTP (without a
// token, with their types and a strict Content-Security-Policy), and its pages in headless
// Chromium (testing/webdriver.h) against the HTTP API: sign-in with a wrong and a right
// token, the catalog browser, the SQL editor with pages, a chart, an error and cancelling,
// and a revoked token sending the user back to sign in; no JavaScript or CSP errors.
#include <gtest/gtest.h>
#include <httplib.h>

#include <fstream>
#include <nlohmann/json.hpp>

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
    ASSERT_OK_AND_ASSIGN(server_, testing::StartServer(warehouse_.str(), "admin pass", /*with_http=*/true));
    ASSERT_OK_AND_ASSIGN(std::shared_ptr<ObjectStore> store, OpenStoreAt(warehouse_.str()));
    ASSERT_OK(security::UserStore(store, clock_).Create("alice", "alice pass", /*admin=*/false));
    tokens_ = std::make_unique<security::TokenStore>(store, clock_);
    ASSERT_OK_AND_ASSIGN(security::NewToken admin, tokens_->Create("admin", std::nullopt));
    admin_token_ = admin.text;
    ASSERT_OK_AND_ASSIGN(alice_, tokens_->Create("alice", std::nullopt));
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> session, Session::Open({.warehouse = warehouse_.str()}));
    ASSERT_OK(session
                  ->Execute("CREATE SCHEMA sales; "
                            "CREATE TABLE sales.orders (region STRING, n BIGINT, amount DECIMAL(10,2)); "
                            "INSERT INTO sales.orders VALUES ('EU', 120, 10.50), ('US', 98, 20.25), "
                            "('APAC', 40, 5.00), ('LATAM', 7, 1.25)")
                  .status());
  }

  std::string BaseUrl() const { return "http://127.0.0.1:" + std::to_string(server_->http_port()); }

  std::shared_ptr<const Clock> clock_ = SystemClock();
  testing::TempDir warehouse_;
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
  ASSERT_OK_AND_ASSIGN(json log, browser->TakeConsoleLog());
  for (const json& entry : log) {
    if (entry.value("level", "") != "SEVERE" && entry.value("level", "") != "WARNING") continue;
    const std::string message = entry.value("message", "");
    const bool expected_refusal =
        entry.value("source", "") == "network" && (message.find("status of 401") != std::string::npos ||
                                                   message.find("status of 403") != std::string::npos);
    EXPECT_TRUE(expected_refusal) << entry.dump();
  }
}

}  // namespace
}  // namespace basin
