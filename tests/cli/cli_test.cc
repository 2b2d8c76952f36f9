// Runs the built `basin` binary as a user would and checks what it prints and how it exits.
// The binary is $BASIN_BINARY, else <build dir>/basin found from this test's own path
// (<build dir>/tests/cli/cli_test).
#include <fcntl.h>
#include <gmock/gmock.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "cli/basin_process.h"
#include "testing/test_util.h"

namespace basin {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

RunOutput RunSql(const std::string& sql, const std::string& format = "csv") {
  return RunBasin({"sql", "--format", format, "-c", sql});
}

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(BasinBinary())) GTEST_SKIP() << "no basin binary at " << BasinBinary();
  }
};

TEST_F(CliTest, VersionAndHelp) {
  RunOutput version = RunBasin({"--version"});
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_THAT(version.out, StartsWith("basin "));
  EXPECT_THAT(version.out, HasSubstr("DuckDB v1.4.4"));

  RunOutput help = RunBasin({"help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_THAT(help.out, HasSubstr("sql"));
  EXPECT_THAT(help.out, HasSubstr("describe"));

  RunOutput sql_help = RunBasin({"help", "sql"});
  EXPECT_EQ(sql_help.exit_code, 0);
  EXPECT_THAT(sql_help.out, HasSubstr("--format"));

  EXPECT_EQ(RunBasin({}).exit_code, 1);
}

TEST_F(CliTest, UsageErrorsUseTheErrorFormat) {
  RunOutput bad_flag = RunBasin({"sql", "--no-such-flag"});
  EXPECT_EQ(bad_flag.exit_code, 1);
  EXPECT_THAT(bad_flag.err, StartsWith("Error: InvalidArgument: "));

  RunOutput bad_format = RunBasin({"sql", "--format", "xml", "-c", "SELECT 1"});
  EXPECT_EQ(bad_format.exit_code, 1);
  EXPECT_THAT(bad_format.err, StartsWith("Error: InvalidArgument: "));

  RunOutput both_inputs = RunBasin({"sql", "-c", "SELECT 1", "-f", "x.sql"});
  EXPECT_EQ(both_inputs.exit_code, 1);
}

TEST_F(CliTest, ServeRefusesABadTimeoutOrTlsFileBeforeListening) {
  // A plain number is milliseconds, as PostgreSQL's statement_timeout takes it.
  RunOutput timeout = RunBasin({"serve", "--pg-port", "0", "--statement-timeout", "5x"});
  EXPECT_EQ(timeout.exit_code, 1);
  EXPECT_THAT(timeout.err,
              StartsWith("Error: InvalidArgument: --statement-timeout: \"5x\" is not a duration"));
  EXPECT_EQ(timeout.out, "");
  RunOutput tls =
      RunBasin({"serve", "--pg-port", "0", "--tls-cert", "/no/such/cert.pem", "--tls-key", "k.pem"});
  EXPECT_EQ(tls.exit_code, 1);
  EXPECT_THAT(tls.err, StartsWith("Error: IOError: cannot read the TLS certificate file /no/such/cert.pem"));
  RunOutput half = RunBasin({"serve", "--pg-port", "0", "--tls-required"});
  EXPECT_EQ(half.exit_code, 1);
  EXPECT_THAT(half.err, HasSubstr("--tls-cert and --tls-key"));
}

TEST_F(CliTest, ServeRefusesAnUnknownFlowOwnerBeforeListening) {
  testing::TempDir dir;
  std::ofstream(dir.path() / "copy.sql") << "INSERT INTO sink SELECT id FROM STREAM(src)";
  RunOutput serve = RunBasin({"serve", "-w", (dir.path() / "wh").string(), "--pg-port", "0", "--stream",
                              "copy=" + (dir.path() / "copy.sql").string(), "--checkpoint-root",
                              (dir.path() / "checkpoints").string(), "--flow-owner", "ghost"});
  EXPECT_EQ(serve.exit_code, 1);
  EXPECT_THAT(serve.err,
              HasSubstr("Error: InvalidArgument: the flows' owner (--flow-owner) ghost is no user"));
  EXPECT_EQ(serve.out, "");
}

TEST_F(CliTest, CsvQuotesAndNulls) {
  RunOutput run =
      RunSql("SELECT 1 AS a, 'x,y' AS b, NULL AS c, '' AS d, 'say \"hi\"' AS e, 'two\nlines' AS f");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "a,b,c,d,e,f\n1,\"x,y\",,\"\",\"say \"\"hi\"\"\",\"two\nlines\"\n");
  EXPECT_EQ(run.err, "");
}

TEST_F(CliTest, JsonIsOneArrayOfObjectsPerResult) {
  RunOutput run = RunSql(
      "SELECT * FROM (VALUES (1, 'a', 2.50::DECIMAL(5,2), true), (2, NULL, NULL, false)) t(id, name, price, "
      "ok) "
      "ORDER BY id; SELECT 42 AS answer",
      "json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::istringstream lines(run.out);
  std::string first, second, rest;
  ASSERT_TRUE(std::getline(lines, first));
  ASSERT_TRUE(std::getline(lines, second));
  EXPECT_FALSE(std::getline(lines, rest));

  nlohmann::json rows = nlohmann::json::parse(first, nullptr, false);
  ASSERT_FALSE(rows.is_discarded()) << first;
  ASSERT_TRUE(rows.is_array());
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["id"], 1);
  EXPECT_EQ(rows[0]["name"], "a");
  EXPECT_DOUBLE_EQ(rows[0]["price"].get<double>(), 2.5);
  EXPECT_EQ(rows[0]["ok"], true);
  EXPECT_TRUE(rows[1]["name"].is_null());
  EXPECT_TRUE(rows[1]["price"].is_null());
  EXPECT_EQ(rows[1]["ok"], false);

  EXPECT_EQ(nlohmann::json::parse(second, nullptr, false), nlohmann::json::parse(R"([{"answer":42}])"));
}

TEST_F(CliTest, TableHasHeaderAlignmentAndRowCount) {
  RunOutput run = RunSql("SELECT * FROM (VALUES (1, 'one'), (200, NULL)) t(n, word) ORDER BY n", "table");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out,
            "+-----+------+\n"
            "| n   | word |\n"
            "+-----+------+\n"
            "|   1 | one  |\n"
            "| 200 | NULL |\n"
            "+-----+------+\n"
            "(2 rows)\n");
}

TEST_F(CliTest, ErrorsExitOneWithTheCodeName) {
  RunOutput run = RunSql("SELEC 1");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_THAT(run.err, StartsWith("Error: InvalidArgument: "));
  EXPECT_EQ(run.out, "");
}

TEST_F(CliTest, UserRunsUnderItsGrants) {
  testing::TempDir dir;
  const std::vector<std::string> owner = {"sql", "--format", "csv", "-w", dir.str(), "-c"};
  const auto run = [](std::vector<std::string> args, const std::string& sql) {
    args.push_back(sql);
    return RunBasin(args);
  };
  std::vector<std::string> bob = owner;
  bob.insert(bob.begin() + 1, {"--user", "bob"});
  // Without --user: the owner, unrestricted.
  ASSERT_EQ(run(owner, "CREATE TABLE t AS SELECT 1 AS a; CREATE USER bob PASSWORD 'b'").exit_code, 0);
  RunOutput denied = run(bob, "SELECT a FROM t");
  EXPECT_EQ(denied.exit_code, 1);
  EXPECT_THAT(
      denied.err,
      StartsWith("Error: PermissionDenied: permission denied: SELECT on TABLE default.t for user bob"));
  ASSERT_EQ(run(owner, "GRANT SELECT ON TABLE t TO bob").exit_code, 0);
  RunOutput allowed = run(bob, "SELECT a FROM t");
  EXPECT_EQ(allowed.exit_code, 0) << allowed.err;
  EXPECT_EQ(allowed.out, "a\n1\n");
  RunOutput ghost = run({"sql", "--user", "ghost", "-w", dir.str(), "-c"}, "SELECT 1");
  EXPECT_THAT(ghost.err, StartsWith("Error: Unauthenticated: "));
}

TEST_F(CliTest, StopsAtTheFirstFailingStatementAfterPrintingEarlierResults) {
  RunOutput run = RunSql("SELECT 1 AS x;\nSELEC 2;\nSELECT 3 AS z;");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(run.out, "x\n1\n");
  EXPECT_THAT(run.err, StartsWith("Error: InvalidArgument: statement 2 (line 2): "));
}

TEST_F(CliTest, SemicolonsInsideLiteralsAndCommentsDoNotSplit) {
  RunOutput run = RunSql("SELECT 'a;b' AS \"c;d\"; -- not; a statement\n/* nor; this */ SELECT $$;$$ AS e");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "c;d\na;b\ne\n;\n");
}

TEST_F(CliTest, RunsStatementsFromAFile) {
  testing::TempDir dir;
  WriteWholeFile(dir.path() / "q.sql", "-- two queries\nSELECT 1 AS one;\n\nSELECT 'two' AS two;\n");
  RunOutput run = RunBasin({"sql", "--format", "csv", "-f", (dir.path() / "q.sql").string()});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "one\n1\ntwo\ntwo\n");

  RunOutput missing = RunBasin({"sql", "-f", (dir.path() / "absent.sql").string()});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.err, StartsWith("Error: NotFound: "));
}

TEST_F(CliTest, RunsStatementsFromStdinWhenItIsNotATerminal) {
  RunOutput run = RunBasin({"sql", "--format", "csv"}, "SELECT 1 AS x;\nSELECT 2\n  AS y;\n");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "x\n1\ny\n2\n");
}

TEST_F(CliTest, ReadsSharedDeltaTablesWithTimeTravel) {
  SKIP_WITHOUT_SHARED_TESTDATA(testdata);
  std::string table = (testdata / "delta/dat/basic_append/delta").string();
  RunOutput latest = RunSql("SELECT count(*) AS n FROM delta_scan('" + table + "')");
  ASSERT_EQ(latest.exit_code, 0) << latest.err;
  EXPECT_EQ(latest.out, "n\n5\n");

  RunOutput v0 = RunSql("SELECT count(*) AS n FROM delta_scan('" + table + "', version => 0)");
  ASSERT_EQ(v0.exit_code, 0) << v0.err;
  EXPECT_EQ(v0.out, "n\n3\n");

  RunOutput relative = RunBasin({"sql", "--warehouse", (testdata / "delta/dat").string(), "--format", "csv",
                                 "-c", "SELECT count(*) AS n FROM delta_scan('basic_append/delta')"});
  ASSERT_EQ(relative.exit_code, 0) << relative.err;
  EXPECT_EQ(relative.out, "n\n5\n");
}

TEST_F(CliTest, RefusesAnUnreadableTableWithItsCode) {
  SKIP_WITHOUT_SHARED_TESTDATA(testdata);
  std::string table =
      (testdata / "delta/delta-kernel-rs-golden/deltalog-invalid-protocol-version/delta").string();
  RunOutput run = RunSql("SELECT * FROM delta_scan('" + table + "')");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_THAT(run.err, StartsWith("Error: Unsupported: "));

  RunOutput describe = RunBasin({"describe", table});
  EXPECT_EQ(describe.exit_code, 1);
  EXPECT_THAT(describe.err, StartsWith("Error: Unsupported: "));
}

TEST_F(CliTest, DescribeShowsSchemaProtocolAndVersion) {
  SKIP_WITHOUT_SHARED_TESTDATA(testdata);
  RunOutput run = RunBasin({"describe", (testdata / "delta/dat/basic_partitioned/delta").string()});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("Version:            1 "));
  EXPECT_THAT(run.out, HasSubstr("Protocol:           reader 1, writer 2\n"));
  EXPECT_THAT(run.out, HasSubstr("Partition columns:  letter\n"));
  EXPECT_THAT(run.out, HasSubstr("Rows:               6\n"));
  EXPECT_THAT(run.out, HasSubstr("| letter  | string | yes      |"));
  EXPECT_THAT(run.out, HasSubstr("| number  | long   | yes      |"));
}

TEST_F(CliTest, DescribeShowsPhysicalNamesUnderColumnMapping) {
  SKIP_WITHOUT_SHARED_TESTDATA(testdata);
  RunOutput run = RunBasin({"describe", (testdata / "delta/delta-rs/table_with_column_mapping").string()});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("physical name"));
  EXPECT_THAT(run.out, HasSubstr("col-173b4db9-b5ad-427f-9e75-516aae37fbbb"));
  EXPECT_THAT(run.out, HasSubstr("delta.columnMapping.mode = name"));
}

TEST_F(CliTest, DescribeOfAMissingTableIsNotFound) {
  testing::TempDir dir;
  RunOutput run = RunBasin({"describe", (dir.path() / "nothing").string()});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_THAT(run.err, StartsWith("Error: NotFound: "));
}

// Rows of click-stream events for days [first_day, end_day) from 2024-06-01, 100 a day.
// Event ids are consecutive, so each day's file has an id and time range of its own.
std::string EventsOfDays(int first_day, int end_day) {
  return "SELECT i AS event_id, "
         "TIMESTAMPTZ '2024-06-01 00:00:00+00' + to_microseconds((i * 864000000)::BIGINT) AS ts, "
         "(hash(i) % 5000)::INTEGER AS user_id, "
         "['view', 'click', 'purchase'][1 + (hash(i // 7) % 3)::INTEGER] AS event_type, "
         "round(((hash(i * 31) % 20000) / 100.0)::DOUBLE, 2) AS amount, "
         "DATE '2024-06-01' + (i // 100)::INTEGER AS day "
         "FROM range(" +
         std::to_string(first_day * 100) + ", " + std::to_string(end_day * 100) + ") t(i)";
}

// A warehouse table written by `basin sql` in four commits, so that history, time travel,
// removed files and data skipping have something to show: v0 CTAS of days 0..9
// (partitioned by day, one file a day), v1 and v2 append days 10..19 and 20..29, v3
// deletes the first day (its file is removed).
class EventsTableTest : public CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    if (IsSkipped()) return;
    table_ = (dir_.path() / "default" / "events").string();
    const std::string sql = CreateSql() + ";\n" +                                   //
                            "INSERT INTO events " + EventsOfDays(10, 20) + ";\n" +  //
                            "INSERT INTO events " + EventsOfDays(20, 30) + ";\n" +  //
                            "DELETE FROM events WHERE day = DATE '2024-06-01';\n";
    WriteWholeFile(dir_.path() / "events.sql", sql);
    RunOutput run = Sql({"-f", (dir_.path() / "events.sql").string()});
    ASSERT_EQ(run.exit_code, 0) << run.err;
  }

  static std::string CreateSql() {
    return "CREATE TABLE events PARTITIONED BY (day) AS " + EventsOfDays(0, 10);
  }

  // `basin sql --warehouse <dir> --format csv ARGS...`
  RunOutput Sql(const std::vector<std::string>& args) const {
    std::vector<std::string> all = {"sql", "--warehouse", dir_.path().string(), "--format", "csv"};
    all.insert(all.end(), args.begin(), args.end());
    return RunBasin(all);
  }

  std::string Scan(const std::string& extra = "") const {
    return "delta_scan('" + table_ + "'" + extra + ")";
  }

  testing::TempDir dir_;
  std::string table_;
};

TEST_F(EventsTableTest, TimeTravelsAcrossCommits) {
  RunOutput run = RunSql("SELECT count(*) AS n FROM " + Scan() + "; SELECT count(*) AS n FROM " +
                         Scan(", version => 0") + "; SELECT count(*) AS n FROM " + Scan(", version => 2"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "n\n2900\nn\n1000\nn\n3000\n");

  RunOutput by_name = Sql({"-c", "SELECT count(*) AS n FROM events VERSION AS OF 1"});
  ASSERT_EQ(by_name.exit_code, 0) << by_name.err;
  EXPECT_EQ(by_name.out, "n\n2000\n");
}

TEST_F(EventsTableTest, HistoryListsEveryCommitNewestFirst) {
  RunOutput run = RunSql("DESCRIBE HISTORY " + Scan(), "json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  nlohmann::json rows = nlohmann::json::parse(run.out, nullptr, false);
  ASSERT_TRUE(rows.is_array()) << run.out;
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0]["version"], 3);
  EXPECT_EQ(rows[0]["operation"], "DELETE");
  EXPECT_EQ(rows[1]["operation"], "WRITE");
  EXPECT_EQ(rows[3]["version"], 0);
  EXPECT_EQ(rows[3]["operation"], "CREATE TABLE AS SELECT");
}

TEST_F(EventsTableTest, StatsReportFilesSkipped) {
  const std::string query = "SELECT count(*) AS n FROM " + Scan() + " WHERE day = DATE '2024-06-10'";
  RunOutput run = RunBasin({"sql", "--stats", "--format", "csv", "-c", query});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "n\n100\n");
  EXPECT_THAT(run.err, HasSubstr("Files: 1 of 29 read (28 skipped by data skipping)"));

  RunOutput unskipped = RunBasin({"sql", "--stats", "--no-data-skipping", "--format", "csv", "-c", query});
  ASSERT_EQ(unskipped.exit_code, 0) << unskipped.err;
  EXPECT_EQ(unskipped.out, "n\n100\n");
  EXPECT_THAT(unskipped.err, HasSubstr("Files: 29 of 29 read"));
}

TEST_F(EventsTableTest, DescribeShowsTheTable) {
  RunOutput run = RunBasin({"describe", table_});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("Name:               events\n"));
  EXPECT_THAT(run.out, HasSubstr("Version:            3 "));
  EXPECT_THAT(run.out, HasSubstr("Partition columns:  day\n"));
  EXPECT_THAT(run.out, HasSubstr("Files:              29\n"));
  EXPECT_THAT(run.out, HasSubstr("Rows:               2900\n"));
  EXPECT_THAT(run.out, HasSubstr("| ts         | timestamp | yes      |"));

  RunOutput old = RunBasin({"describe", table_, "--at-version", "0"});
  ASSERT_EQ(old.exit_code, 0) << old.err;
  EXPECT_THAT(old.out, HasSubstr("Rows:               1000\n"));

  // A relative path resolves against the warehouse.
  RunOutput relative = RunBasin({"describe", "default/events", "--warehouse", dir_.path().string()});
  ASSERT_EQ(relative.exit_code, 0) << relative.err;
  EXPECT_THAT(relative.out, HasSubstr("Version:            3 "));
}

TEST_F(EventsTableTest, RefusesToCreateATableThatExists) {
  RunOutput run = Sql({"-c", CreateSql()});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_THAT(run.err, StartsWith("Error: AlreadyExists: "));

  RunOutput unchanged = RunBasin({"describe", table_});
  ASSERT_EQ(unchanged.exit_code, 0) << unchanged.err;
  EXPECT_THAT(unchanged.out, HasSubstr("Version:            3 "));
}

// The interactive shell, driven through a pseudo-terminal.
class ShellTest : public CliTest {
 protected:
  static constexpr const char* kCtrlC = "\x03";

  // Starts `basin sql` on a pty, types `lines` (kCtrlC: press Ctrl-C), and returns
  // everything it printed.
  std::string Converse(const std::vector<std::string>& lines) {
    int master = -1;
    pid_t pid = forkpty(&master, nullptr, nullptr, nullptr);
    if (pid == 0) {
      setenv("HOME", home_.str().c_str(), 1);
      execl(BasinBinary().c_str(), BasinBinary().c_str(), "sql", static_cast<char*>(nullptr));
      _exit(127);
    }
    std::string transcript;
    for (const std::string& line : lines) {
      // Ctrl-C goes alone, once the statement before it has had time to start.
      if (line == kCtrlC) std::this_thread::sleep_for(std::chrono::seconds(1));
      std::string typed = line == kCtrlC ? line : line + "\r";
      EXPECT_EQ(write(master, typed.data(), typed.size()), static_cast<ssize_t>(typed.size()));
      transcript += Drain(master, std::chrono::milliseconds(300));
    }
    transcript += Drain(master, std::chrono::milliseconds(5000));
    int status = 0;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (waitpid(pid, &status, WNOHANG) != pid) {
      if (std::chrono::steady_clock::now() > deadline) {  // .quit did not end it
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    close(master);
    return transcript;
  }

  // Reads what the shell prints until it has been quiet for `quiet`.
  static std::string Drain(int fd, std::chrono::milliseconds quiet) {
    std::string out;
    char buffer[4096];
    while (true) {
      fd_set ready;
      FD_ZERO(&ready);
      FD_SET(fd, &ready);
      timeval timeout{0, static_cast<suseconds_t>(quiet.count() * 1000)};
      if (select(fd + 1, &ready, nullptr, nullptr, &timeout) <= 0) return out;
      ssize_t n = read(fd, buffer, sizeof(buffer));
      if (n <= 0) return out;
      out.append(buffer, static_cast<size_t>(n));
    }
  }

  testing::TempDir home_;
  int exit_code_ = -1;
};

TEST_F(ShellTest, RunsMultiLineStatementsAndDotCommands) {
  std::string transcript = Converse(
      {"SELECT 40", "  + 2 AS answer;", ".format csv", "SELECT 'csv' AS mode;", ".format xml", ".quit"});
  EXPECT_EQ(exit_code_, 0);
  EXPECT_THAT(transcript, HasSubstr("| answer |"));
  EXPECT_THAT(transcript, HasSubstr("|     42 |"));
  EXPECT_THAT(transcript, HasSubstr("mode\r\ncsv\r\n"));
  EXPECT_THAT(transcript, HasSubstr("Error: InvalidArgument: unknown output format 'xml'"));
  EXPECT_THAT(ReadWholeFile(home_.path() / ".basin_history"), HasSubstr(".format"));
}

TEST_F(ShellTest, KeepsGoingAfterAnError) {
  std::string transcript = Converse({"SELEC 1;", "SELECT 7 AS seven;", ".quit"});
  EXPECT_EQ(exit_code_, 0);
  EXPECT_THAT(transcript, HasSubstr("Error: InvalidArgument: "));
  EXPECT_THAT(transcript, HasSubstr("|     7 |"));
}

TEST_F(ShellTest, CtrlCInterruptsTheRunningStatementNotTheShell) {
  // Runs for hours unless interrupted.
  std::string transcript = Converse({"SELECT sum(a.range * b.range) FROM range(1000000) a, range(1000000) b;",
                                     kCtrlC, "SELECT 'alive' AS state;", ".quit"});
  EXPECT_EQ(exit_code_, 0);
  EXPECT_THAT(transcript, HasSubstr("Error: Cancelled: "));
  EXPECT_THAT(transcript, HasSubstr("| alive |"));
}

TEST_F(ShellTest, CtrlCAtThePromptDiscardsThePartialStatement) {
  std::string transcript = Converse({"SELECT 'discarded'", kCtrlC, "SELECT 'kept' AS s;", ".quit"});
  EXPECT_EQ(exit_code_, 0);
  EXPECT_THAT(transcript, HasSubstr("| kept |"));
  EXPECT_THAT(transcript, ::testing::Not(HasSubstr("| discarded")));
}

}  // namespace
}  // namespace basin
