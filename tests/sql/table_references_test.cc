#include "sql/table_references.h"

#include <gtest/gtest.h>

#include "testing/test_util.h"

namespace basin::sql {
namespace {

class TableReferencesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(db_, engine::Database::Open());
    ASSERT_OK_AND_ASSIGN(conn_, engine::Connection::Open(db_));
  }

  // Warehouse tables: t -> /wh/default/t, sales.orders -> /wh/sales/orders.
  static Result<std::optional<std::string>> Lookup(const std::vector<std::string>& parts) {
    std::string name = parts.size() == 2 ? parts[0] + "." + parts[1] : "default." + parts[0];
    if (name == "default.t") return std::optional<std::string>("/wh/default/t");
    if (name == "sales.orders") return std::optional<std::string>("/wh/sales/orders");
    return std::optional<std::string>();
  }

  std::string Rewrite(const std::string& sql) {
    auto r = RewriteTableNames(sql, *conn_, Lookup);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : "";
  }

  std::shared_ptr<engine::Database> db_;
  std::unique_ptr<engine::Connection> conn_;
};

TEST_F(TableReferencesTest, NamesBecomeScansWithTheirNameAsAlias) {
  EXPECT_EQ(Rewrite("SELECT t.a FROM t WHERE a > 1"),
            "SELECT t.a FROM delta_scan('/wh/default/t') AS \"t\" WHERE a > 1");
  EXPECT_EQ(Rewrite("SELECT * FROM sales.orders o JOIN other USING (id)"),
            "SELECT * FROM delta_scan('/wh/sales/orders') o JOIN other USING (id)");
  EXPECT_EQ(Rewrite("SELECT * FROM default.t AS x"), "SELECT * FROM delta_scan('/wh/default/t') AS x");
}

TEST_F(TableReferencesTest, LeavesColumnsStringsCtesAndOtherTablesAlone) {
  EXPECT_EQ(Rewrite("SELECT t FROM other WHERE s = 't'"), "SELECT t FROM other WHERE s = 't'");
  EXPECT_EQ(Rewrite("WITH t AS (SELECT 1 AS a) SELECT * FROM t"),
            "WITH t AS (SELECT 1 AS a) SELECT * FROM t");
  EXPECT_EQ(Rewrite("SELECT * FROM memory.main.t"), "SELECT * FROM memory.main.t");
  EXPECT_EQ(Rewrite("SELECT * FROM read_parquet('t')"), "SELECT * FROM read_parquet('t')");
}

TEST_F(TableReferencesTest, SubqueriesAndJoinsWithDeltaScan) {
  EXPECT_EQ(
      Rewrite("SELECT * FROM delta_scan('/x') d JOIN t ON d.id = t.id WHERE t.id IN (SELECT id FROM t)"),
      "SELECT * FROM delta_scan('/x') d JOIN delta_scan('/wh/default/t') AS \"t\" ON d.id = t.id WHERE t.id "
      "IN "
      "(SELECT id FROM delta_scan('/wh/default/t') AS \"t\")");
}

TEST_F(TableReferencesTest, TimeTravel) {
  EXPECT_EQ(Rewrite("SELECT count(*) FROM t VERSION AS OF 3"),
            "SELECT count(*) FROM delta_scan('/wh/default/t', version => 3) AS \"t\"");
  EXPECT_EQ(Rewrite("SELECT * FROM sales.orders TIMESTAMP AS OF '2024-01-01' o WHERE o.x = 1"),
            "SELECT * FROM delta_scan('/wh/sales/orders', timestamp => '2024-01-01') o WHERE o.x = 1");
  auto missing = RewriteTableNames("SELECT * FROM nope VERSION AS OF 1", *conn_, Lookup);
  ASSERT_ERROR_CODE(missing, kNotFound);
  ASSERT_ERROR_CODE(RewriteTableNames("SELECT * FROM t VERSION AS OF x", *conn_, Lookup), kInvalidArgument);
  // Past int64: an error, not an exception (found by fuzz/statement_fuzz).
  ASSERT_ERROR_CODE(RewriteTableNames("SELECT * FROM t VERSION AS OF 99999999999999999999", *conn_, Lookup),
                    kInvalidArgument);
}

TEST_F(TableReferencesTest, StatementsDuckDbCannotSerializeUseTheWordsBeforeNames) {
  EXPECT_EQ(Rewrite("INSERT INTO dst SELECT * FROM t"),
            "INSERT INTO dst SELECT * FROM delta_scan('/wh/default/t') AS \"t\"");
  EXPECT_EQ(Rewrite("CREATE TEMP TABLE x AS SELECT * FROM sales.orders"),
            "CREATE TEMP TABLE x AS SELECT * FROM delta_scan('/wh/sales/orders') AS \"orders\"");
}

TEST(TableChangesCallsTest, FindsCallsAndRefusesOtherForms) {
  ASSERT_OK_AND_ASSIGN(auto calls, FindTableChangesCalls("SELECT * FROM table_changes('s.t', 2, 5) WHERE x"));
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].name, (std::vector<std::string>{"s", "t"}));
  EXPECT_EQ(calls[0].start_version, 2);
  EXPECT_EQ(calls[0].end_version, 5);
  EXPECT_EQ(calls[0].begin, 14u);
  EXPECT_EQ(calls[0].end, 40u);
  ASSERT_OK_AND_ASSIGN(auto open, FindTableChangesCalls("FROM table_changes('t', 0)"));
  ASSERT_EQ(open.size(), 1u);
  EXPECT_FALSE(open[0].end_version.has_value());
  ASSERT_ERROR_CODE(FindTableChangesCalls("FROM table_changes(t, 0)"), kInvalidArgument);
}

TEST(DeltaScanCallsTest, FindsCallsWithArguments) {
  std::string sql =
      "SELECT 'delta_scan(''no'')', \"delta_scan\" FROM Delta_Scan ( 'a b' ) -- delta_scan('c')\n"
      "JOIN delta_scan('d', version => 3) USING (k) JOIN delta_scan('e', timestamp => '2024-01-01') USING "
      "(k)";
  ASSERT_OK_AND_ASSIGN(auto calls, FindDeltaScanCalls(sql));
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[0].path, "a b");
  EXPECT_EQ(sql.substr(calls[0].begin, calls[0].end - calls[0].begin), "Delta_Scan ( 'a b' )");
  EXPECT_EQ(calls[1].version, 3);
  EXPECT_EQ(calls[2].timestamp, "2024-01-01");
  ASSERT_ERROR_CODE(FindDeltaScanCalls("SELECT * FROM delta_scan(42)"), kInvalidArgument);
  ASSERT_ERROR_CODE(FindDeltaScanCalls("SELECT * FROM delta_scan('a', flavour => 1)"), kInvalidArgument);
}

}  // namespace
}  // namespace basin::sql
