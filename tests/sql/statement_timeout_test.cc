// statement_timeout in sql::Session: a statement running past it is interrupted with
// PostgreSQL's 57014 message, streamed rows included; a write stopped before its commit
// leaves the table's version as it was; SET, RESET and the session's default; SHOW ALL.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "engine/duckdb.h"
#include "sql/session.h"
#include "testing/test_util.h"

namespace basin::sql {
namespace {

using std::chrono::milliseconds;

constexpr char kTimeoutMessage[] = "canceling statement due to statement timeout";
// Runs for minutes unless interrupted.
constexpr char kSlowQuery[] = "SELECT count(*) FROM range(1000000000000) a WHERE hash(a.range) % 7 = 99";

class StatementTimeoutTest : public ::testing::Test {
 protected:
  void Open(int64_t default_timeout_ms) {
    SessionOptions options;
    options.warehouse_dir = dir_.str();
    options.statement_timeout_ms = default_timeout_ms;
    ASSERT_OK_AND_ASSIGN(session_, Session::Open(options));
  }

  // The statement's error, after checking it came in time.
  Status Fails(const std::string& sql) {
    const auto start = std::chrono::steady_clock::now();
    Result<std::vector<StatementResult>> run = session_->Execute(sql);
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30)) << sql;
    EXPECT_FALSE(run.ok()) << sql;
    return run.ok() ? Status::OK() : run.status();
  }

  std::string Show() {
    Result<std::vector<StatementResult>> shown = session_->Execute("SHOW statement_timeout");
    EXPECT_TRUE(shown.ok()) << shown.status().ToString();
    if (!shown.ok() || shown->empty() || shown->back().result.rows.empty()) return "";
    return shown->back().result.rows[0][0].value_or("NULL");
  }

  testing::TempDir dir_;
  std::unique_ptr<Session> session_;
};

TEST_F(StatementTimeoutTest, ASlowQueryIsInterruptedAndTheSessionGoesOn) {
  Open(0);
  ASSERT_OK(session_->Execute("SET statement_timeout = '200ms'").status());
  const Status failed = Fails(kSlowQuery);
  EXPECT_EQ(failed.code(), ErrorCode::kCancelled);
  EXPECT_EQ(failed.message(), kTimeoutMessage);
  // The next statement runs, under the same timeout.
  ASSERT_OK_AND_ASSIGN(auto next, session_->Execute("SELECT 41 + 1"));
  EXPECT_EQ(next[0].result.rows[0][0], "42");
  EXPECT_EQ(Fails(kSlowQuery).message(), kTimeoutMessage);
  ASSERT_OK(session_->Execute("RESET statement_timeout").status());
  EXPECT_EQ(Show(), "0");
}

TEST_F(StatementTimeoutTest, TheSessionsDefaultAppliesUntilSetAndResetGoesBackToIt) {
  Open(150);
  EXPECT_EQ(Show(), "150ms");
  EXPECT_EQ(Fails(kSlowQuery).message(), kTimeoutMessage);
  ASSERT_OK(session_->Execute("SET statement_timeout = 0").status());
  // With no limit, a query that takes longer than the default finishes.
  ASSERT_OK_AND_ASSIGN(
      auto finished,
      session_->Execute("SELECT count(*) FROM range(30000000) a WHERE hash(a.range) % 7 = 99"));
  EXPECT_EQ(finished[0].result.rows.size(), 1u);
  ASSERT_OK(session_->Execute("RESET statement_timeout").status());
  EXPECT_EQ(Show(), "150ms");
}

TEST_F(StatementTimeoutTest, AStreamedResultIsTimedUntilItsRowsAreRead) {
  Open(0);
  ASSERT_OK(session_->Execute("SET statement_timeout = 300").status());
  const std::string script = "SELECT a.range, hash(a.range) FROM range(1000000000000) a";
  engine::ScriptStatement statement{script, 0};
  ASSERT_OK_AND_ASSIGN(StatementResult result,
                       session_->ExecuteStatement(script, statement, /*stream=*/true));
  ASSERT_NE(result.rows, nullptr);
  Status failed;
  std::vector<std::vector<std::optional<std::string>>> rows;
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - start < std::chrono::seconds(60)) {
    Result<bool> more = result.rows->Next(&rows);
    if (!more.ok()) {
      failed = more.status();
      break;
    }
    ASSERT_TRUE(*more);
  }
  EXPECT_EQ(failed.code(), ErrorCode::kCancelled);
  EXPECT_EQ(failed.message(), kTimeoutMessage);
  result.rows.reset();
  // A stream read to its end in time leaves nothing armed for what follows.
  ASSERT_OK_AND_ASSIGN(StatementResult small,
                       session_->ExecuteStatement("SELECT 1", engine::ScriptStatement{"SELECT 1", 0}, true));
  while (true) {
    ASSERT_OK_AND_ASSIGN(bool more, small.rows->Next(&rows));
    if (!more) break;
  }
  std::this_thread::sleep_for(milliseconds(400));
  ASSERT_OK(session_->Execute("SELECT 2").status());
}

TEST_F(StatementTimeoutTest, AWriteStoppedBeforeItsCommitCommitsNothing) {
  Open(0);
  ASSERT_OK(session_->Execute("CREATE TABLE events (id BIGINT)").status());
  ASSERT_OK(session_->Execute("INSERT INTO events VALUES (1)").status());
  // The commit waits past the timeout: the statement is interrupted right before it writes.
  session_->GateCommits([] {
    std::this_thread::sleep_for(milliseconds(500));
    return Status::OK();
  });
  ASSERT_OK(session_->Execute("SET statement_timeout = '100ms'").status());
  const Status failed = Fails("INSERT INTO events VALUES (2)");
  EXPECT_EQ(failed.code(), ErrorCode::kCancelled);
  EXPECT_EQ(failed.message(), kTimeoutMessage);
  session_->GateCommits(nullptr);
  // A write interrupted while DuckDB produces its rows, too.
  EXPECT_EQ(
      Fails("INSERT INTO events SELECT a.range FROM range(1000000000000) a WHERE hash(a.range) % 7 = 99")
          .message(),
      kTimeoutMessage);
  ASSERT_OK(session_->Execute("RESET statement_timeout").status());
  ASSERT_OK_AND_ASSIGN(auto history, session_->Execute("DESCRIBE HISTORY events"));
  EXPECT_EQ(history[0].result.rows.size(), 2u);  // CREATE TABLE and the first INSERT
  ASSERT_OK_AND_ASSIGN(auto rows, session_->Execute("SELECT count(*) FROM events"));
  EXPECT_EQ(rows[0].result.rows[0][0], "1");
}

TEST_F(StatementTimeoutTest, ShowAllListsPostgresAndDuckDbSettings) {
  Open(5000);
  ASSERT_OK_AND_ASSIGN(auto all, session_->Execute("SHOW ALL"));
  const engine::QueryResult& result = all[0].result;
  ASSERT_EQ(result.column_names, (std::vector<std::string>{"name", "setting", "description"}));
  std::map<std::string, std::string> settings;
  for (const auto& row : result.rows) settings[row[0].value_or("")] = row[1].value_or("NULL");
  EXPECT_EQ(settings["statement_timeout"], "5s");
  EXPECT_EQ(settings["transaction_isolation"], "read committed");
  EXPECT_EQ(settings["server_encoding"], "UTF8");
  EXPECT_TRUE(settings.contains("threads"));    // DuckDB's
  EXPECT_FALSE(settings.contains("timezone"));  // shown once, as PostgreSQL spells it
  EXPECT_EQ(settings["TimeZone"], "UTC");
}

}  // namespace
}  // namespace basin::sql
