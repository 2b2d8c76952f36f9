// `psql`, PostgreSQL's own client, against basin::Server: SCRAM, simple queries, command
// tags, errors with their SQLSTATE, refused connections. psql comes from Debian's
// postgresql-client (scripts/setup.sh); without it the tests skip locally and fail in CI.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "basin/server.h"
#include "basin/session.h"
#include "basin/version.h"
#include "test_server.h"
#include "testing/interop.h"
#include "testing/test_util.h"

namespace basin {
namespace {

using testing::ProcessOutput;

constexpr char kPassword[] = "s3cret pass";

class PsqlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    psql_ = testing::FindOnPath("psql");
    if (!psql_) {
      if (testing::InCi())
        FAIL() << "psql is not on PATH in CI (scripts/setup.sh installs postgresql-client)";
      GTEST_SKIP() << "psql is not on PATH (scripts/setup.sh installs postgresql-client); skipping";
    }
    StartServer(Options());
  }

  ServerOptions Options() const {
    ServerOptions options;
    options.warehouse = warehouse_.str();
    options.pg_port = 0;
    options.admin_password = kPassword;
    return options;
  }

  void StartServer(const ServerOptions& options) {
    server_.reset();
    ASSERT_OK_AND_ASSIGN(server_, Server::Start(options));
  }

  // psql's output for `sql` run as -c (unaligned, tuples only), with `password`.
  ProcessOutput Psql(const std::string& sql, const std::string& password = kPassword,
                     const std::string& database = "basin", const std::string& user = "admin") {
    return PsqlWith({"-v", "ON_ERROR_STOP=1", "-c", sql}, password, database, user);
  }

  // psql's output for `commands`, each a -c of one connection.
  ProcessOutput PsqlCommands(const std::vector<std::string>& commands) {
    std::vector<std::string> arguments = {"-v", "ON_ERROR_STOP=1"};
    for (const std::string& command : commands) {
      arguments.push_back("-c");
      arguments.push_back(command);
    }
    return PsqlWith(arguments);
  }

  // psql (unaligned, tuples only, verbose errors) with `arguments`.
  ProcessOutput PsqlWith(const std::vector<std::string>& arguments, const std::string& password = kPassword,
                         const std::string& database = "basin", const std::string& user = "admin") {
    std::vector<std::string> argv = {psql_->string(), "-X", "-A", "-t", "-v", "VERBOSITY=verbose"};
    argv.insert(argv.end(), arguments.begin(), arguments.end());
    argv.push_back("host=127.0.0.1 port=" + std::to_string(server_->pg_port()) + " user=" + user +
                   " dbname=" + database + " " + connection_options_);
    Result<ProcessOutput> run = testing::RunProcess(argv, {"PGPASSWORD=" + password, "PGCONNECT_TIMEOUT=10"});
    EXPECT_TRUE(run.ok()) << run.status().ToString();
    return run.ok() ? *run : ProcessOutput{};
  }

  std::optional<std::filesystem::path> psql_;
  std::string connection_options_;  // more of psql's connection string: "sslmode=require"
  testing::TempDir warehouse_;
  std::unique_ptr<Server> server_;
};

TEST_F(PsqlTest, RunsStatementsWithCommandTags) {
  ProcessOutput created =
      Psql("CREATE TABLE sales.orders (id BIGINT, region VARCHAR, paid BOOLEAN, amount DOUBLE)");
  ASSERT_EQ(created.exit_code, 0) << created.err;
  EXPECT_EQ(created.out, "CREATE TABLE\n");
  ProcessOutput inserted = Psql(
      "INSERT INTO sales.orders VALUES (1, 'eu', true, 2.5), (2, 'us', false, 4), (3, NULL, NULL, NULL)");
  ASSERT_EQ(inserted.exit_code, 0) << inserted.err;
  EXPECT_EQ(inserted.out, "INSERT 0 3\n");
  ProcessOutput updated = Psql("UPDATE sales.orders SET amount = 5 WHERE id = 2");
  EXPECT_EQ(updated.out, "UPDATE 1\n");
  ProcessOutput deleted = Psql("DELETE FROM sales.orders WHERE id = 3");
  EXPECT_EQ(deleted.out, "DELETE 1\n");
  ProcessOutput selected = Psql("SELECT id, region, paid, amount FROM sales.orders ORDER BY id");
  ASSERT_EQ(selected.exit_code, 0) << selected.err;
  EXPECT_EQ(selected.out, "1|eu|t|2.5\n2|us|f|5\n");
  // Several statements in one query message: each answered in turn.
  ProcessOutput several =
      Psql("SELECT count(*) FROM sales.orders; SELECT 'two', [1, 2], INTERVAL '14 months'");
  ASSERT_EQ(several.exit_code, 0) << several.err;
  EXPECT_EQ(several.out, "2\ntwo|{1,2}|1 year 2 mons\n");
  // Each psql run is a connection of its own: the table is the warehouse's, with its history.
  ProcessOutput travelled = Psql("SELECT count(*) FROM sales.orders VERSION AS OF 1");
  EXPECT_EQ(travelled.out, "3\n") << travelled.err;
}

TEST_F(PsqlTest, CopyToStdoutStreamsRowsInTextAndCsv) {
  ASSERT_EQ(Psql("CREATE TABLE sales.orders (id BIGINT, note VARCHAR, paid BOOLEAN)").exit_code, 0);
  ASSERT_EQ(
      Psql("INSERT INTO sales.orders VALUES (1, 'tab\there', true), (2, NULL, false), (3, 'a,\"b\"', NULL)")
          .exit_code,
      0);
  // COPY table TO STDOUT: PostgreSQL's text format, values in their text form, a tab escaped.
  ProcessOutput text = Psql("COPY sales.orders TO STDOUT");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_EQ(text.out, "1\ttab\\there\tt\n2\t\\N\tf\n3\ta,\"b\"\t\\N\n");
  ProcessOutput csv = Psql(
      "COPY (SELECT id, note FROM sales.orders ORDER BY id) TO STDOUT WITH (FORMAT csv, HEADER, NULL 'nil')");
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(csv.out, "id,note\n1,tab\there\n2,nil\n3,\"a,\"\"b\"\"\"\n");
  // psql's \copy runs COPY ... TO STDOUT and writes the file itself.
  testing::TempDir out;
  const std::string file = out.str() + "/orders.csv";
  ProcessOutput copied = Psql("\\copy (SELECT id FROM sales.orders WHERE id > 1 ORDER BY id) TO '" + file +
                              "' WITH (FORMAT csv, DELIMITER ';', HEADER)");
  ASSERT_EQ(copied.exit_code, 0) << copied.err;
  EXPECT_EQ(copied.out, "COPY 2\n");
  std::ifstream in(file);
  const std::string written((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(written, "id\n2\n3\n");
  // Rows stream: a result far larger than a message goes through.
  ProcessOutput large = Psql("COPY (SELECT i, repeat('x', 100) FROM range(200000) t(i)) TO STDOUT");
  ASSERT_EQ(large.exit_code, 0) << large.err;
  EXPECT_EQ(std::count(large.out.begin(), large.out.end(), '\n'), 200000);

  ProcessOutput from = Psql("COPY sales.orders FROM STDIN");
  EXPECT_NE(from.err.find("ERROR:  0A000"), std::string::npos) << from.err;
  ProcessOutput parquet = Psql("COPY sales.orders TO STDOUT (FORMAT parquet)");
  EXPECT_NE(parquet.err.find("ERROR:  0A000"), std::string::npos) << parquet.err;
  ProcessOutput bad = Psql("COPY sales.orders TO STDOUT (DELIMITER 'ab')");
  EXPECT_NE(bad.err.find("ERROR:  22023"), std::string::npos) << bad.err;
  // Nothing was written on the server's side.
  EXPECT_EQ(Psql("SELECT count(*) FROM sales.orders").out, "3\n");
}

TEST_F(PsqlTest, TransactionBlocksFollowPostgres) {
  // One connection (-f): BEGIN opens a block; after an error, statements are refused with
  // 25P02 until the block ends, and COMMIT then rolls back.
  testing::TempDir scripts;
  const std::string script = scripts.str() + "/block.sql";
  std::ofstream(script) << "CREATE TABLE t (a INT);\n"
                           "BEGIN;\n"
                           "CREATE TEMP TABLE scratch (a INT);\n"
                           "INSERT INTO t VALUES (1);\n"
                           "SELECT nope;\n"
                           "SELECT 1;\n"
                           "COMMIT;\n"
                           "SELECT count(*) FROM scratch;\n"
                           "SELECT count(*) FROM t;\n"
                           "BEGIN;\n"
                           "CREATE TEMP TABLE kept (a INT);\n"
                           "COMMIT;\n"
                           "SELECT count(*) FROM kept;\n";
  const ProcessOutput run = PsqlWith({"-f", script});
  EXPECT_EQ(run.out, "CREATE TABLE\nBEGIN\nCREATE\nINSERT 0 1\nROLLBACK\n1\nBEGIN\nCREATE\nCOMMIT\n0\n")
      << run.err;
  EXPECT_NE(run.err.find("block.sql:5: ERROR:  22023"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("block.sql:6: ERROR:  25P02"), std::string::npos) << run.err;
  // The rolled back block's temporary table is gone; the warehouse write committed with its
  // statement (docs/server.md).
  EXPECT_NE(run.err.find("block.sql:8: ERROR:  42P01"), std::string::npos) << run.err;
}

TEST_F(PsqlTest, ErrorsCarryTheirSqlState) {
  ProcessOutput missing = Psql("SELECT * FROM sales.nothing_here");
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.err.find("ERROR:  42P01"), std::string::npos) << missing.err;
  ProcessOutput syntax = Psql("SELEC 1");
  EXPECT_NE(syntax.exit_code, 0);
  EXPECT_NE(syntax.err.find("ERROR:  22023"), std::string::npos) << syntax.err;
  // The rest of a query message is not run after a failing statement.
  ProcessOutput stopped = Psql("CREATE TABLE t (a INT); SELECT nope; INSERT INTO t VALUES (1)");
  EXPECT_NE(stopped.exit_code, 0);
  ProcessOutput count = Psql("SELECT count(*) FROM t");
  EXPECT_EQ(count.out, "0\n") << count.err;
}

TEST_F(PsqlTest, GrantsGovernWhatAConnectedUserDoes) {
  ProcessOutput setup = Psql(
      "CREATE TABLE sales.orders AS SELECT range AS id FROM range(3); CREATE USER bob PASSWORD 'bob pass'; "
      "CREATE ROLE readers");
  ASSERT_EQ(setup.exit_code, 0) << setup.err;
  const auto as_bob = [&](const std::string& sql) { return Psql(sql, "bob pass", "basin", "bob"); };
  const std::string table = warehouse_.str() + "/sales/orders";
  const std::vector<std::string> reads = {"SELECT count(*) FROM sales.orders",
                                          "SELECT count(*) FROM delta_scan('" + table + "')"};
  // The admin's connection has read the table, so its snapshot is in the server's cache,
  // which bob's connections read through too: his grants are checked all the same.
  for (const std::string& sql : reads) ASSERT_EQ(Psql(sql).out, "3\n") << sql;
  std::vector<std::string> denied = reads;
  denied.push_back("INSERT INTO sales.orders VALUES (9)");
  denied.push_back("SELECT count(*) FROM read_parquet('" + table + "/*.parquet')");
  for (const std::string& sql : denied) {
    ProcessOutput refused = as_bob(sql);
    EXPECT_NE(refused.err.find("ERROR:  42501"), std::string::npos) << sql << ": " << refused.err;
  }
  EXPECT_NE(as_bob(reads[0]).err.find("SELECT on TABLE sales.orders for user bob"), std::string::npos);

  // A role's grant holds for its members: bob reads, by name and by path, and psql lists it.
  ASSERT_EQ(Psql("GRANT SELECT ON SCHEMA sales TO readers; GRANT readers TO bob").exit_code, 0);
  for (const std::string& sql : reads) EXPECT_EQ(as_bob(sql).out, "3\n") << sql;
  ProcessOutput listed = as_bob("\\dt sales.*");
  EXPECT_NE(listed.out.find("orders"), std::string::npos) << listed.err;
  // Still no writes, and the denied INSERT wrote nothing.
  EXPECT_NE(as_bob("INSERT INTO sales.orders VALUES (9)").err.find("ERROR:  42501"), std::string::npos);
  EXPECT_EQ(Psql("SELECT count(*) FROM sales.orders").out, "3\n");

  // Revoked, it no longer holds.
  ASSERT_EQ(Psql("REVOKE readers FROM bob").exit_code, 0);
  EXPECT_NE(as_bob(reads[0]).err.find("ERROR:  42501"), std::string::npos);
  // A dropped user cannot log in.
  ASSERT_EQ(Psql("DROP USER bob").exit_code, 0);
  ProcessOutput dropped = as_bob("SELECT 1");
  EXPECT_NE(dropped.err.find("password authentication failed for user \"bob\""), std::string::npos)
      << dropped.err;
}

TEST_F(PsqlTest, ConnectionGoesOnAfterAFailedQuery) {
  // Without ON_ERROR_STOP, psql sends each -c on the same connection after an error.
  const ProcessOutput run = PsqlWith({"-c", "SELECT nope", "-c", "SELECT 40 + 2"});
  EXPECT_NE(run.err.find("nope"), std::string::npos) << run.err;
  EXPECT_EQ(run.out, "42\n") << run.err;
}

TEST_F(PsqlTest, CtrlCCancelsTheRunningStatement) {
  // psql answers SIGINT with a CancelRequest on a connection of its own.
  std::optional<std::filesystem::path> timeout = testing::FindOnPath("timeout");
  ASSERT_TRUE(timeout.has_value());
  const auto started = std::chrono::steady_clock::now();
  ASSERT_OK_AND_ASSIGN(
      ProcessOutput cancelled,
      testing::RunProcess(
          {timeout->string(), "-s", "INT", "1", psql_->string(), "-X", "-v", "VERBOSITY=verbose",
           "host=127.0.0.1 port=" + std::to_string(server_->pg_port()) + " user=admin dbname=basin", "-c",
           "SELECT count(*) FROM range(10000000000) a(i), range(10) b(j) WHERE a.i + b.j < 0"},
          {std::string("PGPASSWORD=") + kPassword}));
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(30));
  EXPECT_NE(cancelled.err.find("Cancel request sent"), std::string::npos) << cancelled.err;
  EXPECT_NE(cancelled.err.find("ERROR:  57014"), std::string::npos) << cancelled.err;
  EXPECT_EQ(Psql("SELECT 1").out, "1\n");
}

TEST_F(PsqlTest, RefusesWrongPasswordsUnknownUsersAndDatabases) {
  ProcessOutput wrong = Psql("SELECT 1", "not the password");
  EXPECT_NE(wrong.exit_code, 0);
  // (psql shows no SQLSTATE for a failed connection; node_pg_test checks them.)
  EXPECT_NE(wrong.err.find("password authentication failed for user \"admin\""), std::string::npos)
      << wrong.err;
  // A user that does not exist is told the same as a wrong password.
  ProcessOutput ghost = Psql("SELECT 1", kPassword, "basin", "ghost");
  EXPECT_NE(ghost.err.find("password authentication failed for user \"ghost\""), std::string::npos)
      << ghost.err;
  ProcessOutput database = Psql("SELECT 1", kPassword, "elsewhere");
  EXPECT_NE(database.err.find("database \"elsewhere\" does not exist"), std::string::npos) << database.err;
  // The password is kept as a SCRAM verifier only.
  ProcessOutput stored =
      Psql("SELECT content FROM read_text('" + warehouse_.str() + "/_basin_security/users/admin.json')");
  ASSERT_EQ(stored.exit_code, 0) << stored.err;
  EXPECT_NE(stored.out.find("SCRAM-SHA-256$4096:"), std::string::npos) << stored.out;
  EXPECT_EQ(stored.out.find(kPassword), std::string::npos);
}

// psql's meta-commands read pg_catalog with PostgreSQL's spellings (OPERATOR(pg_catalog.~),
// COLLATE pg_catalog.default, ::pg_catalog.regclass) and functions (pg_get_userbyid,
// format_type): each lists the warehouse's objects, columns by their PostgreSQL types.
TEST_F(PsqlTest, MetaCommandsListTheWarehouse) {
  ProcessOutput created = Psql(
      "CREATE TABLE events (id BIGINT NOT NULL, name STRING, amount DECIMAL(12,2), day DATE, tags "
      "ARRAY<INT>); "
      "CREATE TABLE sales.orders (k INT, placed TIMESTAMP)");
  ASSERT_EQ(created.exit_code, 0) << created.err;

  ProcessOutput databases = Psql("\\l");
  ASSERT_EQ(databases.exit_code, 0) << databases.err;
  EXPECT_EQ(databases.out, "basin|basin|UTF8|C|C||libc|\n");
  ProcessOutput schemas = Psql("\\dn");
  ASSERT_EQ(schemas.exit_code, 0) << schemas.err;
  // basin_system holds the server's audit log.
  EXPECT_EQ(schemas.out, "basin_system|basin\ndefault|basin\nsales|basin\n");
  ProcessOutput tables = Psql("\\dt");
  ASSERT_EQ(tables.exit_code, 0) << tables.err;
  const std::string listed =
      "basin_system|audit_log|table|basin\ndefault|events|table|basin\nsales|orders|table|basin\n";
  EXPECT_EQ(tables.out, listed);
  EXPECT_EQ(Psql("\\dt sales.*").out, "sales|orders|table|basin\n");
  EXPECT_EQ(Psql("\\d").out, listed);

  // Name, type, collation, nullable, default.
  ProcessOutput events = Psql("\\d events");
  ASSERT_EQ(events.exit_code, 0) << events.err;
  EXPECT_EQ(events.out,
            "id|bigint||not null|\nname|text|||\namount|numeric(12,2)|||\nday|date|||\ntags|integer[]|||\n");
  ProcessOutput orders = Psql("\\d sales.orders");
  ASSERT_EQ(orders.exit_code, 0) << orders.err;
  EXPECT_EQ(orders.out, "k|integer|||\nplaced|timestamp with time zone|||\n");
  ProcessOutput missing = Psql("\\d nothing_here");
  EXPECT_NE(missing.err.find("Did not find any relation named \"nothing_here\""), std::string::npos)
      << missing.err;

  // Views live as long as the session: one connection creates and lists it.
  ProcessOutput views = PsqlCommands(
      {"CREATE VIEW sales.recent AS SELECT k FROM sales.orders WHERE k > 1", "\\dv", "\\d sales.recent"});
  ASSERT_EQ(views.exit_code, 0) << views.err;
  EXPECT_NE(views.out.find("sales|recent|view|basin\n"), std::string::npos) << views.out;
  EXPECT_NE(views.out.find("k|integer|||\n"), std::string::npos) << views.out;
  EXPECT_EQ(Psql("\\dv").out, "");
}

// pg_attribute and pg_type give PostgreSQL's OIDs and names (jdbc_test checks them against
// RowDescription's).
TEST_F(PsqlTest, CatalogTypesAgreeWithResultColumns) {
  ASSERT_EQ(Psql("CREATE TABLE t (a BIGINT, b DOUBLE, c DECIMAL(5,1), d BOOLEAN, e TIMESTAMP_NTZ)").exit_code,
            0);
  ProcessOutput catalog = Psql(
      "SELECT a.attname, a.atttypid, t.typname, format_type(a.atttypid, a.atttypmod) FROM "
      "pg_catalog.pg_attribute a "
      "JOIN pg_catalog.pg_type t ON t.oid = a.atttypid WHERE a.attrelid = 't'::regclass ORDER BY a.attnum");
  ASSERT_EQ(catalog.exit_code, 0) << catalog.err;
  EXPECT_EQ(
      catalog.out,
      "a|20|int8|bigint\nb|701|float8|double precision\nc|1700|numeric|numeric(5,1)\nd|16|bool|boolean\n"
      "e|1114|timestamp|timestamp without time zone\n");
}

TEST_F(PsqlTest, RefusesConnectionsPastTheBound) {
  ServerOptions options = Options();
  options.max_connections = 1;
  StartServer(options);
  // A client that connected and said nothing yet holds the one place.
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(server_->pg_port()));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ProcessOutput refused;
  for (int attempt = 0; attempt < 50; attempt++) {  // until the server has accepted the first
    refused = Psql("SELECT 1");
    if (refused.err.find("too many clients") != std::string::npos) break;
    ::usleep(100'000);
  }
  EXPECT_NE(refused.err.find("too many clients"), std::string::npos) << refused.err;
  ::close(fd);
  ProcessOutput served;
  for (int attempt = 0; attempt < 50; attempt++) {  // until the server saw the first leave
    served = Psql("SELECT 41 + 1");
    if (served.exit_code == 0) break;
    ::usleep(100'000);
  }
  EXPECT_EQ(served.out, "42\n") << served.err;
}

// Each statement, failed ones and refused sign-ins included, becomes a row of
// basin_system.audit_log, written at the latest when the server stops.
TEST_F(PsqlTest, StatementsAndRefusedSignInsAreAudited) {
  ASSERT_EQ(Psql("CREATE TABLE audited (id BIGINT)").exit_code, 0);
  ASSERT_EQ(Psql("INSERT INTO audited VALUES (1), (2), (3)").exit_code, 0);
  ASSERT_EQ(Psql("SELECT id FROM audited WHERE id > 1").exit_code, 0);
  EXPECT_NE(Psql("SELECT * FROM no_such_table").exit_code, 0);
  EXPECT_NE(Psql("SELECT 1", "not the password").exit_code, 0);
  server_->Shutdown();
  server_->Wait();

  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> session, Session::Open({.warehouse = warehouse_.str()}));
  ASSERT_OK_AND_ASSIGN(
      std::vector<StatementResult> results,
      session->Execute(
          "SELECT statement, user_name, protocol, client_address, outcome, coalesce(sqlstate, '-'), "
          "coalesce(CAST(row_count AS VARCHAR), '-'), duration_ms >= 0 "
          "FROM basin_system.audit_log ORDER BY event_time, statement"));
  std::vector<std::string> lines = testing::RowLines(results.back().result);
  std::sort(lines.begin(), lines.end());
  EXPECT_EQ(lines, (std::vector<std::string>{
                       "CREATE TABLE audited (id BIGINT)|admin|pg|127.0.0.1|ok|-|-|true",
                       "INSERT INTO audited VALUES (1), (2), (3)|admin|pg|127.0.0.1|ok|-|3|true",
                       "SELECT * FROM no_such_table|admin|pg|127.0.0.1|error|42P01|-|true",
                       "SELECT id FROM audited WHERE id > 1|admin|pg|127.0.0.1|ok|-|2|true",
                       "sign-in|admin|pg|127.0.0.1|denied|28000|-|true",
                   }));
}

// SHOW answers as PostgreSQL does (DuckDB would describe a table of that name).
TEST_F(PsqlTest, ShowAnswersPostgresSettings) {
  const ProcessOutput shown =
      PsqlCommands({"SHOW TRANSACTION ISOLATION LEVEL", "SHOW server_version", "SHOW search_path",
                    "SHOW client_encoding", "SHOW DateStyle", "SET statement_timeout = '5s'",
                    "SHOW statement_timeout", "RESET statement_timeout", "SHOW statement_timeout"});
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_EQ(shown.out, std::string("read committed\n16.0 (Basin ") + kVersion +
                           ")\ndefault\nUTF8\nISO, MDY\nSET\n5s\nRESET\n0\n");
  const ProcessOutput all = Psql("SHOW ALL");
  ASSERT_EQ(all.exit_code, 0) << all.err;
  EXPECT_NE(all.out.find("\nstatement_timeout|0|"), std::string::npos) << all.out;
  EXPECT_NE(all.out.find("\ntransaction_isolation|read committed|"), std::string::npos) << all.out;
  EXPECT_NE(all.out.find("\nthreads|"), std::string::npos) << all.out;  // DuckDB's
}

TEST_F(PsqlTest, StatementTimeoutCancelsWith57014AndCommitsNothing) {
  ASSERT_EQ(Psql("CREATE TABLE t (a BIGINT); INSERT INTO t VALUES (1)").exit_code, 0);
  const std::string slow_insert =
      "INSERT INTO t SELECT a.i FROM range(1000000000000) a(i) WHERE hash(a.i) % 7 = 99";
  const auto started = std::chrono::steady_clock::now();
  const ProcessOutput run =
      PsqlWith({"-c", "SET statement_timeout = 200", "-c", slow_insert, "-c", "SELECT count(*) FROM t"});
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(30));
  EXPECT_NE(run.err.find("ERROR:  57014: canceling statement due to statement timeout"), std::string::npos)
      << run.err;
  EXPECT_EQ(run.out, "SET\n1\n") << run.err;
  // Nothing was committed: the table is at the INSERT's version.
  EXPECT_EQ(Psql("DESCRIBE HISTORY t LIMIT 1").out.substr(0, 2), "1|");

  // The server's default applies to every session until it SETs another.
  ServerOptions options = Options();
  options.statement_timeout_ms = 250;
  StartServer(options);
  EXPECT_EQ(Psql("SHOW statement_timeout").out, "250ms\n");
  const ProcessOutput slow = Psql("SELECT count(*) FROM range(1000000000000) a(i) WHERE hash(a.i) % 7 = 99");
  EXPECT_NE(slow.err.find("ERROR:  57014"), std::string::npos) << slow.err;
  EXPECT_EQ(PsqlCommands({"SET statement_timeout = 0", "SELECT count(*) FROM range(1000)"}).out,
            "SET\n1000\n");
}

// TLS: certificates made here with the openssl CLI (Debian's openssl, scripts/setup.sh): a
// test CA and a server certificate for localhost and 127.0.0.1 signed by it.
class PsqlTlsTest : public PsqlTest {
 protected:
  void SetUp() override {
    PsqlTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    const std::optional<std::filesystem::path> openssl = testing::FindOnPath("openssl");
    if (!openssl) {
      if (testing::InCi()) FAIL() << "openssl is not on PATH in CI (scripts/setup.sh installs it)";
      GTEST_SKIP() << "openssl is not on PATH (scripts/setup.sh installs it); skipping";
    }
    const std::string dir = certs_.str();
    std::ofstream(dir + "/server.ext") << "subjectAltName=DNS:localhost,IP:127.0.0.1\n";
    const std::vector<std::vector<std::string>> commands = {
        {"req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
         dir + "/ca.key", "-out", dir + "/ca.pem", "-days", "2", "-subj", "/CN=Basin test CA"},
        {"req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
         dir + "/server.key", "-out", dir + "/server.csr", "-subj", "/CN=localhost"},
        {"x509", "-req", "-in", dir + "/server.csr", "-CA", dir + "/ca.pem", "-CAkey", dir + "/ca.key",
         "-CAcreateserial", "-out", dir + "/server.pem", "-days", "2", "-extfile", dir + "/server.ext"},
    };
    for (const std::vector<std::string>& command : commands) {
      std::vector<std::string> argv = {openssl->string()};
      argv.insert(argv.end(), command.begin(), command.end());
      ASSERT_OK_AND_ASSIGN(ProcessOutput made, testing::RunProcess(argv, {}));
      ASSERT_EQ(made.exit_code, 0) << made.err;
    }
    StartServer(TlsOptions(/*required=*/false));
  }

  ServerOptions TlsOptions(bool required) const {
    ServerOptions options = Options();
    options.tls_cert_file = certs_.str() + "/server.pem";
    options.tls_key_file = certs_.str() + "/server.key";
    options.tls_required = required;
    return options;
  }

  testing::TempDir certs_;
};

TEST_F(PsqlTlsTest, SslModeRequireConnectsOverTls) {
  connection_options_ = "sslmode=require";
  const ProcessOutput info = Psql("\\conninfo");
  ASSERT_EQ(info.exit_code, 0) << info.err;
  EXPECT_NE(info.out.find("SSL connection (protocol: TLSv1."), std::string::npos) << info.out;
  const ProcessOutput created = Psql("CREATE TABLE t (a BIGINT, b VARCHAR); INSERT INTO t VALUES (1, 'x')");
  ASSERT_EQ(created.exit_code, 0) << created.err;
  EXPECT_EQ(Psql("SELECT a, b FROM t").out, "1|x\n");
  // A result of many TLS records, and an error, go through.
  const ProcessOutput large = Psql("COPY (SELECT i, repeat('x', 100) FROM range(100000) t(i)) TO STDOUT");
  ASSERT_EQ(large.exit_code, 0) << large.err;
  EXPECT_EQ(std::count(large.out.begin(), large.out.end(), '\n'), 100000);
  EXPECT_NE(Psql("SELECT nope").err.find("ERROR:  22023"), std::string::npos);
  // Without a certificate the server answers no to TLS, and require fails.
  StartServer(Options());
  const ProcessOutput plain_server = Psql("SELECT 1");
  EXPECT_NE(plain_server.exit_code, 0);
  EXPECT_NE(plain_server.err.find("server does not support SSL"), std::string::npos) << plain_server.err;
}

TEST_F(PsqlTlsTest, VerifyFullChecksTheCertificateAgainstTheTestCa) {
  const std::string ca = " sslrootcert=" + certs_.str() + "/ca.pem";
  connection_options_ = "sslmode=verify-full host=localhost hostaddr=127.0.0.1" + ca;
  const ProcessOutput verified = Psql("SELECT 40 + 2");
  ASSERT_EQ(verified.exit_code, 0) << verified.err;
  EXPECT_EQ(verified.out, "42\n");
  // The certificate does not name this host.
  connection_options_ = "sslmode=verify-full host=elsewhere.test hostaddr=127.0.0.1" + ca;
  const ProcessOutput mismatch = Psql("SELECT 1");
  EXPECT_NE(mismatch.exit_code, 0);
  EXPECT_NE(mismatch.err.find("does not match host name"), std::string::npos) << mismatch.err;
}

TEST_F(PsqlTlsTest, TlsRequiredRefusesPlainConnections) {
  connection_options_ = "sslmode=disable";
  EXPECT_EQ(Psql("SELECT 1").out, "1\n");  // TLS offered, not required
  StartServer(TlsOptions(/*required=*/true));
  const ProcessOutput refused = Psql("SELECT 1");
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.err.find("this server accepts TLS connections only"), std::string::npos) << refused.err;
  connection_options_ = "sslmode=prefer";
  EXPECT_EQ(Psql("SELECT 2").out, "2\n");
  // psql's Ctrl-C sends its CancelRequest without TLS; it still cancels.
  std::optional<std::filesystem::path> timeout = testing::FindOnPath("timeout");
  ASSERT_TRUE(timeout.has_value());
  ASSERT_OK_AND_ASSIGN(
      ProcessOutput cancelled,
      testing::RunProcess(
          {timeout->string(), "-s", "INT", "1", psql_->string(), "-X", "-v", "VERBOSITY=verbose",
           "host=127.0.0.1 sslmode=require port=" + std::to_string(server_->pg_port()) +
               " user=admin dbname=basin",
           "-c", "SELECT count(*) FROM range(1000000000000) a(i) WHERE hash(a.i) % 7 = 99"},
          {std::string("PGPASSWORD=") + kPassword}));
  EXPECT_NE(cancelled.err.find("ERROR:  57014"), std::string::npos) << cancelled.err;
}

TEST_F(PsqlTlsTest, BadCertificateOrKeyFilesStopTheStartNamingTheFile) {
  // The start with `cert` and `key` (files of certs_) fails with `code`, saying each of `says`.
  auto refused = [&](const std::string& cert, const std::string& key, ErrorCode code,
                     const std::vector<std::string>& says) {
    ServerOptions options = TlsOptions(false);
    options.tls_cert_file = certs_.str() + "/" + cert;
    options.tls_key_file = certs_.str() + "/" + key;
    const Status started = Server::Start(options).status();
    EXPECT_EQ(started.code(), code) << started.ToString();
    for (const std::string& text : says)
      EXPECT_NE(started.message().find(text), std::string::npos) << started.ToString();
  };
  refused("absent.pem", "server.key", ErrorCode::kIOError, {"certificate file", "absent.pem"});
  refused("server.pem", "absent.key", ErrorCode::kIOError, {"key file", "absent.key"});
  refused("server.key", "server.key", ErrorCode::kInvalidArgument, {"server.key holds no PEM certificate"});
  refused("server.pem", "server.ext", ErrorCode::kInvalidArgument, {"server.ext holds no PEM private key"});
  // The CA's key, not the certificate's.
  refused("server.pem", "ca.key", ErrorCode::kInvalidArgument,
          {"ca.key holds no PEM private key of the certificate", "key values mismatch"});

  ServerOptions no_key = Options();
  no_key.tls_required = true;
  EXPECT_EQ(Server::Start(no_key).status().code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace basin
