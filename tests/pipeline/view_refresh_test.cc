// Materialized views refreshed incrementally (pipeline/view_refresh.h): after random appends
// over several runs every view holds exactly its query's rows, refreshed incrementally where
// the query allows it; what cannot be refreshed so is recomputed whole, with the reason.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "basin/pipeline.h"
#include "pipeline/pipeline_harness.h"
#include "testing/test_util.h"

namespace basin::pipeline {
namespace {

// Each view's query, as the pipeline declares it.
const std::vector<std::pair<std::string, std::string>> kViews = {
    {"by_region",
     "SELECT region, date_trunc('day', ts) AS day, count(*) AS n, sum(amount) AS total, round(avg(amount), "
     "6) AS mean, "
     "min(id) AS lo, max(id) AS hi, count(region) AS with_region FROM orders WHERE amount > 3 GROUP BY ALL"},
    {"by_zone",
     "SELECT r.zone, sum(o.amount) * 2 AS twice, count(*) FILTER (WHERE o.id % 2 = 0) AS evens "
     "FROM orders o JOIN regions r ON o.region = r.region GROUP BY r.zone"},
    {"by_position",
     "SELECT id % 7 AS bucket, max(ts) AS latest, count(DISTINCT region) AS regions, count(DISTINCT amount) "
     "FILTER (WHERE amount > 50) AS big_amounts FROM orders GROUP BY 1"},
    {"totals", "SELECT count(*) AS n, sum(amount) AS s, round(avg(id), 6) AS mean_id FROM orders"},
    {"big", "SELECT id, upper(region) AS region, amount FROM orders WHERE amount > 100"},
};

class ViewRefreshTest : public PipelineHarness {
 protected:
  ViewRefreshTest() {
    Sql("CREATE TABLE orders (id BIGINT, region VARCHAR, amount DECIMAL(12,2), ts TIMESTAMP);"
        "CREATE TABLE regions (region VARCHAR, zone VARCHAR);"
        "INSERT INTO regions VALUES ('eu', 'A'), ('us', 'B')");
    std::string views;
    for (const auto& [name, query] : kViews) {
      views += "CREATE OR REFRESH MATERIALIZED VIEW " + name + " AS " + query + ";\n";
    }
    Write("views.sql", views);
  }

  // Appends `n` random orders.
  void AddOrders(int n) {
    std::string values;
    for (int i = 0; i < n; i++) {
      const int64_t id = next_id_++;
      const char* regions[] = {"'eu'", "'us'", "'apac'", "NULL"};
      values += std::string(values.empty() ? "" : ", ") + "(" + std::to_string(id) + ", " +
                regions[random_() % 4] + ", " + std::to_string(random_() % 20000) +
                " / 100, TIMESTAMP '2026-01-01' + " + "INTERVAL " + std::to_string(random_() % 500) +
                " HOUR)";
    }
    Sql("INSERT INTO orders VALUES " + values);
  }

  // Rows in the view and not in its query, or in the query and not in the view.
  std::string Difference(const std::string& view, const std::string& query) {
    const auto rows = Sql("SELECT count(*) FROM ((SELECT * FROM " + view + " EXCEPT ALL " + query +
                          ") UNION ALL (" + query + " EXCEPT ALL SELECT * FROM " + view + "))");
    if (!rows.empty() && rows[0][0] != "0") {
      for (const auto& row : Sql("(SELECT 'view', * FROM " + view + " EXCEPT ALL SELECT 'view', * FROM (" +
                                 query + ")) UNION ALL (SELECT 'query', * FROM (" + query +
                                 ") EXCEPT ALL SELECT 'query', * FROM " + view + ")")) {
        std::string line;
        for (const auto& cell : row) line += cell.value_or("NULL") + " | ";
        ADD_FAILURE() << line;
      }
    }
    return rows.empty() ? "?" : rows[0][0].value_or("NULL");
  }

  const PipelineFlowRun* Flow(const std::vector<PipelineFlowRun>& runs, const std::string& name) {
    for (const PipelineFlowRun& run : runs) {
      if (run.flow == name) return &run;
    }
    ADD_FAILURE() << "no flow " << name;
    return nullptr;
  }

  std::mt19937 random_{7};
  int64_t next_id_ = 0;
};

TEST_F(ViewRefreshTest, RandomAppendsRefreshIncrementallyToTheQuerysRows) {
  AddOrders(200);
  for (int run = 0; run < 5; run++) {
    SCOPED_TRACE("run " + std::to_string(run));
    ASSERT_OK_AND_ASSIGN(std::vector<PipelineFlowRun> runs, Run());
    for (const auto& [name, query] : kViews) {
      SCOPED_TRACE(name);
      const PipelineFlowRun* flow = Flow(runs, name);
      ASSERT_NE(flow, nullptr);
      EXPECT_EQ(flow->refresh, run == 0 ? "full" : "incremental") << flow->refresh_reason;
      if (run == 0) {
        EXPECT_EQ(flow->refresh_reason, "first refresh");
      }
      EXPECT_EQ(Difference(name, query), "0");
    }
    if (run == 4) break;
    AddOrders(1 + static_cast<int>(random_() % 60));
    if (run == 2) AddOrders(5);  // two commits between refreshes
  }
  // A new region row changes only by_zone's inner join: the new region's orders join it.
  Sql("INSERT INTO regions VALUES ('apac', 'C')");
  ASSERT_OK_AND_ASSIGN(std::vector<PipelineFlowRun> runs, Run());
  EXPECT_EQ(Flow(runs, "by_zone")->refresh, "incremental");
  EXPECT_EQ(Flow(runs, "by_zone")->refresh_reason, "regions versions 2 to 2");
  EXPECT_EQ(Flow(runs, "by_region")->refresh, "unchanged");
  EXPECT_EQ(Difference("by_zone", kViews[1].second), "0");
  EXPECT_EQ(Sql("SELECT count(*) FROM by_zone")[0][0], "3");
}

TEST_F(ViewRefreshTest, RecomputesWholeWhenItMustAndSaysWhy) {
  Write(
      "more.sql",
      "CREATE OR REFRESH MATERIALIZED VIEW distinct_regions AS SELECT median(amount) AS n FROM "
      "orders;\n"
      "CREATE OR REFRESH MATERIALIZED VIEW from_cte AS WITH o AS (SELECT * FROM orders) SELECT count(*) AS n "
      "FROM o;\n"
      "CREATE OR REFRESH MATERIALIZED VIEW outer_zone AS SELECT o.id, r.zone FROM orders o LEFT JOIN regions "
      "r "
      "ON o.region = r.region;\n");
  AddOrders(50);
  ASSERT_OK(Run().status());

  // Nothing changed: nothing is written.
  ASSERT_OK_AND_ASSIGN(std::vector<PipelineFlowRun> runs, Run());
  EXPECT_EQ(Flow(runs, "by_region")->refresh, "unchanged");
  EXPECT_EQ(Flow(runs, "by_region")->rows_written, 0);
  EXPECT_EQ(Flow(runs, "distinct_regions")->refresh, "full");
  EXPECT_EQ(Flow(runs, "distinct_regions")->refresh_reason,
            "median(...) does not combine from partial results");
  EXPECT_EQ(Flow(runs, "from_cte")->refresh_reason, "it has a WITH clause");

  // A dimension row on the inner side of a LEFT JOIN changes rows already in the view.
  Sql("INSERT INTO regions VALUES ('apac', 'C')");
  ASSERT_OK_AND_ASSIGN(runs, Run());
  EXPECT_EQ(Flow(runs, "outer_zone")->refresh, "full");
  EXPECT_EQ(Flow(runs, "outer_zone")->refresh_reason,
            "regions changed, and it is on the side of a join whose other rows it changes");
  EXPECT_EQ(Difference("outer_zone",
                       "SELECT o.id, r.zone FROM orders o LEFT JOIN regions r ON o.region = r.region"),
            "0");

  // A DELETE is no append.
  Sql("DELETE FROM orders WHERE id < 10");
  ASSERT_OK_AND_ASSIGN(runs, Run());
  EXPECT_EQ(Flow(runs, "by_region")->refresh, "full");
  EXPECT_EQ(Flow(runs, "by_region")->refresh_reason, "orders version 2 (DELETE) removed or rewrote rows");
  for (const auto& [name, query] : kViews) EXPECT_EQ(Difference(name, query), "0") << name;

  // OPTIMIZE changes no data: the refresh after it reads nothing new.
  AddOrders(3);
  AddOrders(3);
  Sql("OPTIMIZE orders");
  ASSERT_OK_AND_ASSIGN(runs, Run());
  EXPECT_EQ(Flow(runs, "by_region")->refresh, "incremental");
  for (const auto& [name, query] : kViews) EXPECT_EQ(Difference(name, query), "0") << name;

  // A view's table written by someone else is recomputed.
  Sql("INSERT INTO totals VALUES (1, 1, 1)");
  ASSERT_OK_AND_ASSIGN(runs, Run());
  EXPECT_EQ(Flow(runs, "totals")->refresh, "full");
  EXPECT_EQ(Flow(runs, "totals")->refresh_reason, "its table is not as the last refresh left it");
  EXPECT_EQ(Difference("totals", kViews[3].second), "0");

  // An edited query is recomputed.
  Write("more.sql",
        "CREATE OR REFRESH MATERIALIZED VIEW distinct_regions AS SELECT count(*) AS n FROM orders;\n");
  ASSERT_OK_AND_ASSIGN(runs, Run());
  EXPECT_EQ(Flow(runs, "distinct_regions")->refresh_reason, "first refresh");  // decomposable now
  AddOrders(2);
  Write("views.sql",
        "CREATE OR REFRESH MATERIALIZED VIEW by_region AS SELECT region, count(*) AS n FROM orders "
        "GROUP BY ALL;\n");
  ASSERT_OK_AND_ASSIGN(runs, Run());
  EXPECT_EQ(Flow(runs, "by_region")->refresh_reason, "its query changed");
  EXPECT_EQ(Difference("by_region", "SELECT region, count(*) AS n FROM orders GROUP BY ALL"), "0");
}

TEST_F(ViewRefreshTest, ARefreshCutShortBeforeItsStateIsRecomputedNotCountedTwice) {
  AddOrders(40);
  ASSERT_OK(Run().status());
  AddOrders(10);
  ASSERT_OK(Run().status());
  // As if the last refresh had committed the view but died before writing its state: its
  // newest state goes.
  const std::filesystem::path state =
      std::filesystem::path(warehouse_) / "_pipelines" / "pipeline" / "checkpoints" / "totals";
  ASSERT_TRUE(std::filesystem::exists(state / "1.json"));
  std::filesystem::remove(state / "1.json");
  std::filesystem::remove(state / "1.parquet");
  AddOrders(5);
  ASSERT_OK_AND_ASSIGN(std::vector<PipelineFlowRun> runs, Run());
  EXPECT_EQ(Flow(runs, "totals")->refresh, "full");
  EXPECT_EQ(Flow(runs, "totals")->refresh_reason, "its table is not as the last refresh left it");
  EXPECT_EQ(Difference("totals", kViews[3].second), "0");
  EXPECT_EQ(Sql("SELECT n FROM totals")[0][0], "55");
}

}  // namespace
}  // namespace basin::pipeline
