// Lineage (sql/lineage.h): the warehouse tables a write read, through every way a query
// reaches a table, become edges of basin_system.lineage, once each.
#include "sql/lineage.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "sql/session.h"
#include "testing/test_util.h"

namespace basin::sql {
namespace {

class LineageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(session_,
                         Session::Open({.warehouse_dir = warehouse_.str(), .record_lineage = true}));
    Run("CREATE TABLE a (id BIGINT, x BIGINT); CREATE TABLE sales.b (id BIGINT, y BIGINT); "
        "INSERT INTO a VALUES (1, 10), (2, 20); INSERT INTO sales.b VALUES (1, 5)");
  }

  void Run(const std::string& sql) {
    Result<std::vector<StatementResult>> results = session_->Execute(sql);
    ASSERT_TRUE(results.ok()) << sql << ": " << results.status().ToString();
    for (const StatementResult& result : *results)
      EXPECT_EQ(result.notices, std::vector<std::string>{}) << sql;
  }

  // "source > target operation", sorted.
  std::vector<std::string> Edges() {
    Result<std::vector<StatementResult>> results = session_->Execute(
        "SELECT source_table || ' > ' || target_table || ' ' || operation FROM basin_system.lineage ORDER BY "
        "1");
    EXPECT_TRUE(results.ok()) << results.status().ToString();
    std::vector<std::string> edges;
    if (!results.ok()) return edges;
    for (const auto& row : results->back().result.rows) edges.push_back(row.at(0).value_or("NULL"));
    return edges;
  }

  testing::TempDir warehouse_;
  std::unique_ptr<Session> session_;
};

TEST_F(LineageTest, WritesRecordTheTablesTheyRead) {
  EXPECT_FALSE(session_->Execute("SELECT * FROM basin_system.lineage").ok())
      << "writes that read no other table record nothing";
  Run("CREATE TABLE t AS SELECT a.id, x, y FROM a JOIN sales.b USING (id)");
  Run("CREATE TABLE u (id BIGINT, x BIGINT)");
  // Through a CTE, a subquery in CASE, and a view.
  Run("CREATE VIEW recent AS SELECT * FROM t WHERE id > 0");
  Run("INSERT INTO u WITH w AS (SELECT id, x FROM recent) "
      "SELECT id, CASE WHEN x > (SELECT max(y) FROM sales.b) THEN x END FROM w");
  Run("MERGE INTO u USING (SELECT * FROM a) s ON u.id = s.id WHEN MATCHED THEN UPDATE SET x = s.x");
  Run("UPDATE a SET x = x + 1 WHERE id IN (SELECT id FROM sales.b)");
  Run("DELETE FROM a WHERE x > 100");  // reads only itself
  EXPECT_EQ(Edges(), (std::vector<std::string>{
                         "default.a > default.t CREATE TABLE",
                         "default.a > default.u MERGE",
                         "default.t > default.u INSERT",
                         "sales.b > default.a UPDATE",
                         "sales.b > default.t CREATE TABLE",
                         "sales.b > default.u INSERT",
                     }));
}

TEST_F(LineageTest, DeltaScanOfAWarehouseTableIsThatTable) {
  Run("CREATE TABLE c (id BIGINT, x BIGINT)");
  Run("INSERT INTO c SELECT * FROM delta_scan('default/a')");
  EXPECT_EQ(Edges(), (std::vector<std::string>{"default.a > default.c INSERT"}));
}

TEST_F(LineageTest, DeltaScanOfARelativePathIsFoundFromTheWorkingFolder) {
  // A warehouse opened by a relative path hands the binder relative delta_scan locations,
  // which name the table as seen from the working folder.
  const std::filesystem::path before = std::filesystem::current_path();
  std::filesystem::current_path(warehouse_.path().parent_path());
  Result<std::unique_ptr<Session>> relative =
      Session::Open({.warehouse_dir = warehouse_.path().filename().string(), .record_lineage = true});
  Status inserted = relative.status();
  if (relative.ok()) {
    inserted = (*relative)
                   ->Execute(
                       "CREATE TABLE c (id BIGINT, x BIGINT); "
                       "INSERT INTO c SELECT * FROM delta_scan('default/a')")
                   .status();
  }
  std::filesystem::current_path(before);
  ASSERT_OK(inserted);
  EXPECT_EQ(Edges(), (std::vector<std::string>{"default.a > default.c INSERT"}));
}

TEST_F(LineageTest, AnEdgeIsWrittenOnceAcrossStatementsAndSessions) {
  Run("CREATE TABLE c (id BIGINT, x BIGINT)");
  Run("INSERT INTO c SELECT * FROM a");
  ASSERT_OK_AND_ASSIGN(std::vector<StatementResult> history,
                       session_->Execute("DESCRIBE HISTORY basin_system.lineage"));
  const size_t commits = history.back().result.rows.size();
  Run("INSERT INTO c SELECT * FROM a");
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> other,
                       Session::Open({.warehouse_dir = warehouse_.str(), .record_lineage = true}));
  ASSERT_OK(other->Execute("INSERT INTO c SELECT * FROM a").status());
  EXPECT_EQ(Edges(), (std::vector<std::string>{"default.a > default.c INSERT"}));
  ASSERT_OK_AND_ASSIGN(history, session_->Execute("DESCRIBE HISTORY basin_system.lineage"));
  EXPECT_EQ(history.back().result.rows.size(), commits) << "a known edge commits nothing";
}

TEST_F(LineageTest, SessionsWithoutLineageRecordNothing) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> plain, Session::Open({.warehouse_dir = warehouse_.str()}));
  ASSERT_OK(plain->Execute("CREATE TABLE c AS SELECT * FROM a").status());
  EXPECT_FALSE(plain->Execute("SELECT * FROM basin_system.lineage").ok());
}

}  // namespace
}  // namespace basin::sql
