// `basin serve` run as a user runs it: the first line of stdout is the connection URL, the
// first start creates the admin user (printing a generated password once), psql connects,
// and SIGTERM stops the server with status 0 while a client is connected; a stream given
// with --stream runs in the server until SIGTERM, which leaves its last batch committed.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <future>
#include <regex>
#include <thread>

#include "basin/session.h"
#include "basin/stream.h"
#include "cli/basin_process.h"
#include "testing/interop.h"
#include "testing/test_util.h"

namespace basin {
namespace {

TEST(ServeCliTest, ServesPsqlAndStopsOnSigterm) {
  if (!std::filesystem::exists(BasinBinary())) GTEST_SKIP() << "no basin binary at " << BasinBinary();
  std::optional<std::filesystem::path> psql = testing::FindOnPath("psql");
  if (!psql) {
    if (testing::InCi()) FAIL() << "psql is not on PATH in CI (scripts/setup.sh installs postgresql-client)";
    GTEST_SKIP() << "psql is not on PATH (scripts/setup.sh installs postgresql-client); skipping";
  }
  testing::TempDir warehouse;
  ::unsetenv("BASIN_ADMIN_PASSWORD");
  BasinChild server({"serve", "--warehouse", warehouse.str(), "--pg-port", "0"});
  const std::string url = server.FirstLine(30'000);
  std::smatch match;
  ASSERT_TRUE(std::regex_match(url, match, std::regex(R"(postgresql://127\.0\.0\.1:(\d+)/basin)")))
      << "stdout: '" << url << "'\n"
      << server.stderr_text();
  const std::string port = match[1];
  // The generated password, shown once on stderr.
  std::smatch shown;
  const std::string log = server.stderr_text();
  ASSERT_TRUE(std::regex_search(log, shown, std::regex(R"(created user admin with password (\S+))"))) << log;
  const std::string password = shown[1];

  ASSERT_OK_AND_ASSIGN(testing::ProcessOutput run,
                       testing::RunProcess({psql->string(), "-X", "-A", "-t",
                                            "host=127.0.0.1 port=" + port + " user=admin dbname=basin", "-c",
                                            "CREATE TABLE t AS SELECT 1 AS a; SELECT count(*) FROM t"},
                                           {"PGPASSWORD=" + password}));
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "CREATE TABLE\n1\n") << run.err;

  // A statement running when SIGTERM arrives is interrupted; the server stops with status 0.
  auto running = std::async(std::launch::async, [&] {
    return testing::RunProcess(
        {psql->string(), "-X", "-v", "VERBOSITY=verbose",
         "host=127.0.0.1 port=" + port + " user=admin dbname=basin", "-c",
         "SELECT count(*) FROM range(10000000000) a(i), range(10) b(j) WHERE a.i + b.j < 0"},
        {"PGPASSWORD=" + password});
  });
  std::this_thread::sleep_for(std::chrono::seconds(1));
  EXPECT_EQ(server.StopWith(SIGTERM), 0) << server.stderr_text();
  EXPECT_NE(server.stderr_text().find("terminated, stopping"), std::string::npos) << server.stderr_text();
  ASSERT_OK_AND_ASSIGN(testing::ProcessOutput interrupted, running.get());
  EXPECT_NE(interrupted.exit_code, 0);
  EXPECT_NE(interrupted.err.find("57014"), std::string::npos) << interrupted.err;
}

TEST(ServeCliTest, RunsStreamsUntilSigterm) {
  if (!std::filesystem::exists(BasinBinary())) GTEST_SKIP() << "no basin binary at " << BasinBinary();
  testing::TempDir warehouse;
  testing::TempDir checkpoints;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> session, Session::Open({.warehouse = warehouse.str()}));
  ASSERT_OK(session->Execute("CREATE TABLE src (id BIGINT); CREATE TABLE sink (id BIGINT)").status());
  const std::filesystem::path statement = checkpoints.path() / "copy.sql";
  WriteWholeFile(statement, "INSERT INTO sink SELECT id FROM STREAM(src)");
  auto count = [&](const std::string& table) {
    Result<std::vector<StatementResult>> counted = session->Execute("SELECT count(*) FROM " + table);
    return counted.ok() ? counted->back().result.rows.at(0).at(0).value_or("") : counted.status().ToString();
  };

  // A stream without a checkpoint root is refused before anything runs.
  RunOutput refused = RunBasin(
      {"serve", "--warehouse", warehouse.str(), "--pg-port", "0", "--stream", "copy=" + statement.string()});
  EXPECT_EQ(refused.exit_code, 1) << refused.err;
  EXPECT_NE(refused.err.find("--checkpoint-root"), std::string::npos) << refused.err;

  ::setenv("BASIN_ADMIN_PASSWORD", "admin pass", 1);
  BasinChild server({"serve", "--warehouse", warehouse.str(), "--pg-port", "0", "--stream",
                     "copy=" + statement.string(), "--checkpoint-root", checkpoints.str(),
                     "--stream-interval", "50ms"});
  ::unsetenv("BASIN_ADMIN_PASSWORD");
  ASSERT_NE(server.FirstLine(30'000), "") << server.stderr_text();
  for (int i = 0; i < 10; ++i)
    ASSERT_OK(session->Execute("INSERT INTO src SELECT range FROM range(3)").status());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (count("sink") != "30" && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(count("sink"), "30") << server.stderr_text();
  ASSERT_OK(session->Execute("INSERT INTO src SELECT range FROM range(3)").status());

  EXPECT_EQ(server.StopWith(SIGTERM), 0) << server.stderr_text();
  const std::string log = server.stderr_text();
  EXPECT_NE(log.find("flow copy (stream) running"), std::string::npos) << log;
  EXPECT_NE(log.find("flow copy stopped"), std::string::npos) << log;
  ASSERT_OK_AND_ASSIGN(StreamStatus checkpoint, ReadStreamStatus((checkpoints.path() / "copy").string()));
  ASSERT_TRUE(checkpoint.last_committed.has_value());
  EXPECT_EQ(checkpoint.last_planned, checkpoint.last_committed);
}

}  // namespace
}  // namespace basin
