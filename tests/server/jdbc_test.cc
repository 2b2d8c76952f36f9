// pgjdbc, the JDBC driver BI tools (DBeaver, Metabase) are built on, against basin::Server:
// what such tools send on connecting, and DatabaseMetaData's schemas, tables, columns and
// primary keys, read from Basin's pg_catalog (tests/server/JdbcMetadataClient.java). Needs
// java (a JDK: the client runs as a source file) and Debian's libpostgresql-jdbc-java
// (scripts/setup.sh); without them the test skips locally and fails in CI.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "basin/server.h"
#include "basin/session.h"
#include "test_server.h"
#include "testing/interop.h"
#include "testing/test_util.h"

namespace basin {
namespace {

constexpr char kDriverJar[] = "/usr/share/java/postgresql.jar";

TEST(JdbcTest, BiToolsBrowseTheWarehouse) {
  std::optional<std::filesystem::path> java = testing::FindOnPath("java");
  if (!java || !std::filesystem::exists(kDriverJar)) {
    if (testing::InCi())
      FAIL() << "java or " << kDriverJar << " is missing in CI (scripts/setup.sh installs them)";
    GTEST_SKIP() << "java or " << kDriverJar << " is missing (scripts/setup.sh installs them); skipping";
  }
  testing::TempDir warehouse;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Server> server, testing::StartServer(warehouse.str(), "jdbc-pass"));
  {
    SessionOptions session_options;
    session_options.warehouse = warehouse.str();
    ASSERT_OK_AND_ASSIGN(auto session, Session::Open(session_options));
    ASSERT_OK(
        session
            ->Execute("CREATE TABLE sales.orders (id BIGINT NOT NULL, name STRING, amount DECIMAL(12,2), "
                      "created TIMESTAMP)")
            .status());
  }
  const std::string client = (testing::SourceDir() / "tests" / "server" / "JdbcMetadataClient.java").string();
  ASSERT_OK_AND_ASSIGN(
      testing::ProcessOutput run,
      testing::RunProcess(
          {java->string(), "-cp", kDriverJar, client, std::to_string(server->pg_port()), "jdbc-pass"}, {}));
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  // Settings the tools SET are kept; the names of result column types come from the OIDs of
  // RowDescription, and pg_attribute/pg_type give the same OIDs for the table's columns.
  // Then DatabaseMetaData. Each block is the client's lines in order.
  const char* const expected[] = {
      "application_name\tMetabase\n",
      "current_schema\tdefault\n",
      "result_type\tid int8 -5\nresult_type\tname text 12\nresult_type\tamount numeric 2\n"
      "result_type\tcreated timestamptz 93\n",
      "pg_attribute\tid 20 int8 bigint\npg_attribute\tname 25 text text\n"
      "pg_attribute\tamount 1700 numeric numeric(12,2)\n"
      "pg_attribute\tcreated 1184 timestamptz timestamp with time zone\n",
      "schema\tdefault\nschema\tsales\n",
      "table\tsales.orders TABLE\n",
      "column\tid int8 -5 NO\ncolumn\tname text 12 YES\ncolumn\tamount numeric 2 YES\n"
      "column\tcreated timestamptz 93 YES\n",
      "primary_keys\t0\n",
      "isolation\tread committed\n",
      "statement_timeout\t150ms\n",
      "timeout\t57014 ERROR: canceling statement due to statement timeout\n",
      "done\tok\n",
  };
  for (const char* lines : expected)
    EXPECT_NE(run.out.find(lines), std::string::npos) << lines << "in\n" << run.out;
}

}  // namespace
}  // namespace basin
