// `basin serve` run as a user runs it: the first line of stdout is the connection URL, the
// first start creates the admin user (printing a generated password once), psql connects,
// and SIGTERM stops the server with status 0 while a client is connected.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <future>
#include <regex>
#include <thread>

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

}  // namespace
}  // namespace basin
