// The server's audit log (server/audit_log.h): events become rows of
// basin_system.audit_log, a commit that fails keeps its events for the next flush, and
// Stop() writes what is queued.
#include "server/audit_log.h"

#include <gtest/gtest.h>

#include "test_server.h"
#include "testing/test_util.h"

namespace basin::server {
namespace {

constexpr int64_t kHour = 3'600'000;
constexpr int64_t kAt = 1'767'225'600'000;  // 2026-01-01 00:00:00 UTC

class AuditLogTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_OK_AND_ASSIGN(session_, Session::Open({.warehouse = warehouse_.str()})); }

  std::unique_ptr<AuditLog> Open(size_t max_statement_bytes = 64 * 1024) {
    Result<std::unique_ptr<AuditLog>> opened = AuditLog::Open(
        warehouse_.str(), clock_, {.flush_interval_ms = kHour, .max_statement_bytes = max_statement_bytes});
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    return opened.ok() ? std::move(*opened) : nullptr;
  }

  std::vector<std::string> Logged() {
    Result<std::vector<StatementResult>> results = session_->Execute(
        "SELECT strftime(event_time AT TIME ZONE 'UTC', '%Y-%m-%d %H:%M:%S'), user_name, protocol, "
        "client_address, statement, outcome, error_code, sqlstate, message, row_count, "
        "duration_ms FROM basin_system.audit_log ORDER BY event_time, statement");
    EXPECT_TRUE(results.ok()) << results.status().ToString();
    return results.ok() ? testing::RowLines(results->back().result) : std::vector<std::string>{};
  }

  testing::TempDir warehouse_;
  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>(kAt);
  std::unique_ptr<Session> session_;
};

// Statements past the bound are cut between characters; quotes survive.
TEST_F(AuditLogTest, EventsBecomeRows) {
  std::unique_ptr<AuditLog> log = Open(/*max_statement_bytes=*/12);
  ASSERT_NE(log, nullptr);
  log->Record({.at_ms = kAt,
               .user = "alice",
               .protocol = "pg",
               .client_address = "10.0.0.7",
               .statement = "INSERT INTO t VALUES (1), (2)",
               .outcome = Status::OK(),
               .rows = 2,
               .duration_ms = 5});
  log->Record({.at_ms = kAt + 1000,
               .user = "bob",
               .protocol = "http",
               .client_address = "::1",
               .statement = "SELECT 'xééé'",
               .outcome = Status::PermissionDenied("no SELECT on 'it''s'"),
               .duration_ms = 1});
  log->Record({.at_ms = kAt + 2000,
               .protocol = "pg",
               .statement = "sign-in",
               .outcome = Status::Unauthenticated("password authentication failed")});
  EXPECT_EQ(Logged(), std::vector<std::string>{}) << "nothing is written before a flush";
  ASSERT_OK(log->Flush());
  EXPECT_EQ(Logged(), (std::vector<std::string>{
                          "2026-01-01 00:00:00|alice|pg|10.0.0.7|INSERT INTO ...|ok|NULL|NULL|NULL|2|5",
                          "2026-01-01 00:00:01|bob|http|::1|SELECT 'xé...|denied|PermissionDenied|42501|no "
                          "SELECT on 'it''s'|NULL|1",
                          "2026-01-01 00:00:02|NULL|pg|NULL|sign-in|denied|Unauthenticated|28000|password "
                          "authentication failed|NULL|0",
                      }));
}

TEST_F(AuditLogTest, AFailedCommitKeepsItsEventsForTheNextFlush) {
  std::unique_ptr<AuditLog> log = Open();
  ASSERT_NE(log, nullptr);
  log->Record(
      {.at_ms = kAt, .user = "alice", .protocol = "pg", .statement = "SELECT 1", .outcome = Status::OK()});
  ASSERT_OK(session_->Execute(std::string("DROP TABLE ") + kAuditTable).status());
  EXPECT_FALSE(log->Flush().ok());
  std::unique_ptr<AuditLog> again = Open();  // creates the table again
  ASSERT_NE(again, nullptr);
  ASSERT_OK(log->Flush());
  EXPECT_EQ(
      Logged(),
      (std::vector<std::string>{"2026-01-01 00:00:00|alice|pg|NULL|SELECT 1|ok|NULL|NULL|NULL|NULL|0"}));
}

TEST_F(AuditLogTest, StopWritesWhatIsQueued) {
  std::unique_ptr<AuditLog> log = Open();
  ASSERT_NE(log, nullptr);
  for (int i = 0; i < 3; i++) {
    log->Record({.at_ms = kAt + i,
                 .protocol = "http",
                 .statement = "SELECT " + std::to_string(i),
                 .outcome = Status::OK()});
  }
  log->Stop();
  EXPECT_EQ(Logged().size(), 3u);
}

}  // namespace
}  // namespace basin::server
