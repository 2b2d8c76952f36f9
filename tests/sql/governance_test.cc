// Governance through sql::Session (docs/governance.md): what tests/sql/governance/*.test
// cannot show with one session at a time: a user's access read again at every statement of
// an open session, a dropped user's session stopped, tokens that the token store accepts,
// passwords kept as verifiers, and a denied write that leaves the table's version alone.
#include <gtest/gtest.h>

#include "basin/object_store.h"
#include "catalog/warehouse.h"
#include "security/scram_verifier.h"
#include "security/tokens.h"
#include "security/users.h"
#include "sql/session.h"
#include "testing/test_util.h"

namespace basin::sql {
namespace {

class GovernanceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    owner_ = Open("");
    Run(*owner_,
        "CREATE TABLE sales.orders AS SELECT range AS id FROM range(3); "
        "CREATE USER bob PASSWORD 'bob-secret'");
  }

  std::unique_ptr<Session> Open(const std::string& user) {
    SessionOptions options;
    options.warehouse_dir = dir_.str();
    options.user = user;
    auto session = Session::Open(options);
    EXPECT_TRUE(session.ok()) << session.status().ToString();
    return session.ok() ? std::move(*session) : nullptr;
  }

  static std::vector<StatementResult> Run(Session& session, const std::string& sql) {
    auto results = session.Execute(sql);
    EXPECT_TRUE(results.ok()) << sql << ": " << results.status().ToString();
    return results.ok() ? std::move(*results) : std::vector<StatementResult>{};
  }

  std::shared_ptr<ObjectStore> WarehouseStore() {
    auto warehouse = catalog::Warehouse::Open(dir_.str());
    EXPECT_TRUE(warehouse.ok());
    return (*warehouse)->store();
  }

  int64_t OrdersVersion() {
    auto rows = Run(*owner_, "DESCRIBE DETAIL sales.orders");
    return rows.empty() ? -1 : std::stoll(*rows[0].result.rows[0][1]);
  }

  testing::TempDir dir_;
  std::unique_ptr<Session> owner_;
};

TEST_F(GovernanceTest, GrantsAndRevocationsHoldFromTheNextStatementOfAnOpenSession) {
  std::unique_ptr<Session> bob = Open("bob");
  ASSERT_ERROR_CODE(bob->Execute("SELECT count(*) FROM sales.orders").status(), kPermissionDenied);
  Run(*owner_, "GRANT SELECT ON SCHEMA sales TO bob");
  auto rows = Run(*bob, "SELECT count(*) FROM sales.orders");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].result.rows[0][0], "3");
  Run(*owner_, "REVOKE SELECT ON SCHEMA sales FROM bob");
  ASSERT_ERROR_CODE(bob->Execute("SELECT count(*) FROM sales.orders").status(), kPermissionDenied);
}

TEST_F(GovernanceTest, ADroppedUsersSessionIsNoLongerAuthenticated) {
  std::unique_ptr<Session> bob = Open("bob");
  Run(*bob, "SELECT 1");
  Run(*owner_, "DROP USER bob");
  ASSERT_ERROR_CODE(bob->Execute("SELECT 1").status(), kUnauthenticated);
  // A user that never existed gets the same, as its session opens.
  ASSERT_ERROR_CODE(Session::Open({.warehouse_dir = dir_.str(), .user = "nobody"}).status(),
                    kUnauthenticated);
}

TEST_F(GovernanceTest, ADeniedWriteLeavesTheTableAtItsVersion) {
  Run(*owner_, "GRANT SELECT ON TABLE sales.orders TO bob");
  const int64_t before = OrdersVersion();
  std::unique_ptr<Session> bob = Open("bob");
  for (const char* write :
       {"INSERT INTO sales.orders VALUES (9)", "DELETE FROM sales.orders", "UPDATE sales.orders SET id = 0",
        "OPTIMIZE sales.orders", "RESTORE TABLE sales.orders TO VERSION AS OF 0", "DROP TABLE sales.orders",
        "CREATE OR REPLACE TABLE sales.orders AS SELECT 1 AS id"}) {
    SCOPED_TRACE(write);
    Status denied = bob->Execute(write).status();
    ASSERT_ERROR_CODE(denied, kPermissionDenied);
    EXPECT_NE(denied.message().find("for user bob"), std::string::npos) << denied.message();
  }
  EXPECT_EQ(OrdersVersion(), before);
  auto rows = Run(*owner_, "SELECT count(*) FROM sales.orders");
  EXPECT_EQ(rows[0].result.rows[0][0], "3");
}

TEST_F(GovernanceTest, CreateUserKeepsAScramVerifierOfThePassword) {
  security::UserStore users(WarehouseStore(), SystemClock());
  ASSERT_OK_AND_ASSIGN(std::optional<security::User> bob, users.Find("bob"));
  ASSERT_TRUE(bob.has_value());
  EXPECT_FALSE(bob->admin);
  EXPECT_EQ(bob->scram_verifier.find("bob-secret"), std::string::npos);
  ASSERT_OK_AND_ASSIGN(security::ScramVerifier stored, security::ParseScramVerifier(bob->scram_verifier));
  ASSERT_OK_AND_ASSIGN(security::ScramVerifier again,
                       security::MakeScramVerifierWithSalt("bob-secret", stored.salt, stored.iterations));
  EXPECT_EQ(again.stored_key, stored.stored_key);
}

TEST_F(GovernanceTest, CreateTokenGivesATokenTheStoreAcceptsUntilRevoked) {
  std::unique_ptr<Session> bob = Open("bob");
  auto created = Run(*bob, "CREATE TOKEN EXPIRES IN INTERVAL 2 HOURS");
  ASSERT_EQ(created.size(), 1u);
  const engine::QueryResult& row = created[0].result;
  ASSERT_EQ(row.column_names, (std::vector<std::string>{"token", "id", "user", "expires"}));
  ASSERT_EQ(row.row_count(), 1u);
  const std::string text = *row.rows[0][0];
  const std::string id = *row.rows[0][1];
  EXPECT_EQ(row.rows[0][2], "bob");
  ASSERT_TRUE(row.rows[0][3].has_value());

  security::TokenStore tokens(WarehouseStore(), SystemClock());
  ASSERT_OK_AND_ASSIGN(security::Token token, tokens.Authenticate(text));
  EXPECT_EQ(token.user, "bob");
  ASSERT_TRUE(token.expires_time_ms.has_value());
  const int64_t lifetime_ms = *token.expires_time_ms - token.created_time_ms;
  EXPECT_EQ(lifetime_ms, 2 * 3600 * 1000);

  // Another user's token is as unknown to bob as a token that does not exist.
  auto carols = Run(*owner_, "CREATE USER carol PASSWORD 'c'; CREATE TOKEN FOR carol");
  ASSERT_EQ(carols.size(), 2u);
  const std::string carol_id = *carols[1].result.rows[0][1];
  ASSERT_ERROR_CODE(bob->Execute("REVOKE TOKEN '" + carol_id + "'").status(), kNotFound);

  Run(*bob, "REVOKE TOKEN '" + id + "'");
  ASSERT_ERROR_CODE(tokens.Authenticate(text).status(), kUnauthenticated);
  // Dropping a user ends its tokens.
  ASSERT_OK_AND_ASSIGN(std::vector<security::Token> before, tokens.List("carol"));
  EXPECT_EQ(before.size(), 1u);
  Run(*owner_, "DROP USER carol");
  ASSERT_OK_AND_ASSIGN(std::vector<security::Token> after, tokens.List("carol"));
  EXPECT_TRUE(after.empty());
}

TEST_F(GovernanceTest, AnAdministratorIsUnrestricted) {
  security::UserStore users(WarehouseStore(), SystemClock());
  ASSERT_OK(users.Create("admin", "admin-secret", /*admin=*/true));
  std::unique_ptr<Session> admin = Open("admin");
  Run(*admin,
      "SELECT count(*) FROM sales.orders; CREATE USER dave PASSWORD 'd'; "
      "GRANT SELECT ON TABLE sales.orders TO dave; SELECT count(*) FROM read_text('" +
          dir_.str() + "/_basin_security/users/dave.json')");
  // It created no grant for itself: it needs none.
  auto grants = Run(*admin, "SHOW GRANTS TO admin");
  ASSERT_EQ(grants.size(), 1u);
  EXPECT_EQ(grants[0].result.row_count(), 0u);
}

}  // namespace
}  // namespace basin::sql
