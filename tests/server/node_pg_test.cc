// node-postgres against basin::Server (tests/server/node_pg_client.mjs): a driver that shares
// no code with Basin, over the extended protocol. Needs node and the npm package pg
// (scripts/setup.sh); without them the test skips locally and fails in CI.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "basin/server.h"
#include "test_server.h"
#include "testing/interop.h"
#include "testing/test_util.h"

namespace basin {
namespace {

TEST(NodePgTest, DriverRunsParameterisedQueries) {
  std::optional<std::filesystem::path> node = testing::FindOnPath("node");
  const std::filesystem::path modules = testing::NodeModulesDir();
  if (!node || !std::filesystem::exists(modules / "pg" / "package.json")) {
    if (testing::InCi())
      FAIL() << "node or the npm package pg is missing in CI (scripts/setup.sh installs them)";
    GTEST_SKIP() << "node or the npm package pg (in " << modules << ") is missing; run scripts/setup.sh";
  }
  testing::TempDir warehouse;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Server> server, testing::StartServer(warehouse.str(), "driver-pass"));
  const std::string script = (testing::SourceDir() / "tests" / "server" / "node_pg_client.mjs").string();
  ASSERT_OK_AND_ASSIGN(
      testing::ProcessOutput run,
      testing::RunProcess({node->string(), script, std::to_string(server->pg_port()), "driver-pass"},
                          {"BASIN_NODE_MODULES=" + modules.string()}));
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  const nlohmann::json seen = nlohmann::json::parse(run.out, nullptr, false);
  ASSERT_TRUE(seen.is_object()) << run.out;

  EXPECT_EQ(seen["insertCommand"], "INSERT");
  EXPECT_EQ(seen["insertRowCount"], 2);
  // node-pg parses by type OID: BIGINT (int8) arrives as a string, DOUBLE as a number,
  // BOOLEAN as a boolean, DATE as a Date.
  EXPECT_EQ(seen["rows"], nlohmann::json::parse(R"([
      {"id": "1", "name": "it's", "score": 2.5, "ok": true, "day": "2024-06-15"},
      {"id": "2", "name": null, "score": null, "ok": null, "day": null}])"));
  EXPECT_EQ(seen["fields"], nlohmann::json::parse(R"([["id", 20], ["name", 25], ["score", 701], ["ok", 16],
                                                      ["day", 1082]])"));
  EXPECT_EQ(seen["named"], nlohmann::json::parse(R"([[{"name": null}], [{"name": "it's"}]])"));
  EXPECT_EQ(seen["hostile"], nlohmann::json::parse(R"([{"n": "0"}])"));
  EXPECT_EQ(seen["missingTable"]["code"], "42P01") << seen["missingTable"];
  EXPECT_EQ(seen["afterError"], nlohmann::json::parse(R"([{"n": 42}])"));
  EXPECT_EQ(seen["many"], nlohmann::json::parse(R"([{"n": "14286"}])"));
  // Describe of a statement: parameter types (float8 and date, inferred) and the columns.
  EXPECT_EQ(seen["describedQuery"], nlohmann::json::parse(R"({"parameters": [701, 1082],
      "fields": [["id", 20], ["name", 25], ["high", 16]]})"));
  EXPECT_EQ(seen["describedWrite"], nlohmann::json::parse(R"({"parameters": [20], "noData": true})"));
  // DuckDB types `id + $1` only once it has the value: no columns yet.
  EXPECT_EQ(seen["describedUntypable"]["noData"], true) << seen["describedUntypable"];
  EXPECT_EQ(seen["inFailedBlock"], nlohmann::json::parse(R"(["22023", "25P02"])"));
  EXPECT_EQ(seen["commitOfFailedBlock"], "ROLLBACK");
  // BEGIN, SELECT, the failure, the refused statement (an extended query: its Sync), COMMIT,
  // SELECT.
  EXPECT_EQ(seen["statuses"], "TTEEII");
  EXPECT_EQ(seen["wrongPassword"]["code"], "28P01") << seen["wrongPassword"];
  EXPECT_EQ(seen["wrongDatabase"]["code"], "3D000") << seen["wrongDatabase"];
}

}  // namespace
}  // namespace basin
