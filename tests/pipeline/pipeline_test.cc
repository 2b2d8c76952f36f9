// Pipelines: a folder of SQL read into datasets and flows (errors naming file and line), the
// dependency graph from DuckDB's syntax trees (CTEs shadowing tables, cycles refused), and
// triggered runs: streaming tables reading only what arrived since the last run, an INSERT
// INTO ONCE flow landing once, materialized views recomputed, full refreshes, expectations.
#include "basin/pipeline.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "basin/object_store.h"
#include "basin/session.h"
#include "engine/table_refs.h"
#include "pipeline/definition.h"
#include "pipeline/graph.h"
#include "pipeline/pipeline_harness.h"
#include "testing/test_util.h"

namespace basin::pipeline {
namespace {

// A pipeline folder of the files given, in memory.
Result<PipelineDefinition> Load(const std::vector<std::pair<std::string, std::string>>& files) {
  std::shared_ptr<ObjectStore> folder = NewMemoryObjectStore();
  for (const auto& [key, text] : files) RETURN_IF_ERROR(folder->Put(key, text));
  return LoadPipeline(*folder, "sales");
}

std::vector<std::string> Names(const std::vector<engine::SqlTableName>& tables) {
  std::vector<std::string> out;
  for (const engine::SqlTableName& table : tables) {
    std::string name;
    for (const std::string& part : table.Parts()) name += (name.empty() ? "" : ".") + part;
    out.push_back(name);
  }
  return out;
}

TEST(TablesReadByTest, NamesTablesNotCtesNorTableFunctions) {
  ASSERT_OK_AND_ASSIGN(
      auto tables,
      engine::TablesReadBy("WITH a AS (SELECT * FROM t1), b AS (SELECT * FROM a JOIN s.t2 USING (k)) "
                           "SELECT *, (SELECT max(x) FROM t3 WHERE t3.k = b.k) FROM b "
                           "UNION ALL SELECT * FROM read_parquet('x.parquet') "
                           "UNION ALL SELECT * FROM (SELECT * FROM t4) q WHERE k IN (SELECT k FROM a)"));
  EXPECT_EQ(Names(tables), (std::vector<std::string>{"t1", "s.t2", "t3", "t4"}));
  // A CTE hides a table of its name only within the query that defines it.
  ASSERT_OK_AND_ASSIGN(tables,
                       engine::TablesReadBy("SELECT * FROM (WITH a AS (SELECT 1) SELECT * FROM a) x, a"));
  EXPECT_EQ(Names(tables), (std::vector<std::string>{"a"}));
  // A qualified name is never a CTE's; a change feed's table is read.
  ASSERT_OK_AND_ASSIGN(
      tables, engine::TablesReadBy("WITH a AS (SELECT 1) SELECT * FROM main.a, table_changes('s.c', 0)"));
  EXPECT_EQ(Names(tables), (std::vector<std::string>{"main.a", "s.c"}));
  EXPECT_EQ(engine::TablesReadBy("SELECT FROM WHERE").status().code(), ErrorCode::kInvalidArgument);
}

TEST(LoadPipelineTest, ReadsDatasetsAndFlowsWithTheirPlaces) {
  ASSERT_OK_AND_ASSIGN(
      PipelineDefinition pipeline,
      Load({{"pipeline.json", R"({"schema": "shop", "configuration": {"source": "raw_orders"}})"},
            {"a.sql",
             "-- bronze\nCREATE OR REFRESH STREAMING TABLE bronze AS SELECT * FROM STREAM(${source});\n"
             "CREATE FLOW backfill AS INSERT INTO ONCE bronze BY NAME SELECT * FROM archive;"},
            {"b.sql",
             "CREATE OR REFRESH MATERIALIZED VIEW shop.gold AS\n"
             "SELECT region, count(*) AS n FROM bronze GROUP BY ALL;"},
            {"notes.txt", "not SQL"}}));
  EXPECT_EQ(pipeline.settings.name, "sales");
  EXPECT_EQ(pipeline.settings.schema, "shop");
  ASSERT_EQ(pipeline.datasets.size(), 2u);
  EXPECT_EQ(pipeline.datasets[0].name, "bronze");
  EXPECT_EQ(pipeline.datasets[0].place.Describe(), "a.sql:2");
  EXPECT_EQ(pipeline.datasets[1].kind, DatasetKind::kMaterializedView);
  ASSERT_EQ(pipeline.flows.size(), 3u);
  EXPECT_EQ(pipeline.flows[0].kind, FlowKind::kStream);
  EXPECT_EQ(Names(pipeline.flows[0].reads), (std::vector<std::string>{"raw_orders"}));
  EXPECT_EQ(pipeline.flows[1].name, "backfill");
  EXPECT_EQ(pipeline.flows[1].kind, FlowKind::kOnce);
  EXPECT_EQ(pipeline.flows[1].place.Describe(), "a.sql:3");
  EXPECT_EQ(pipeline.flows[2].kind, FlowKind::kRecompute);
}

TEST(ReadPipelineGraphTest, NamesTheEventLogInThePipelinesSchema) {
  testing::TempDir folder;
  std::ofstream(folder.path() / "pipeline.json") << R"({"name": "orders.v2", "schema": "shop"})";
  std::ofstream(folder.path() / "gold.sql") << "CREATE OR REFRESH MATERIALIZED VIEW gold AS SELECT 1 AS n;\n";
  ASSERT_OK_AND_ASSIGN(basin::PipelineGraph graph, basin::ReadPipelineGraph(folder.str()));
  EXPECT_EQ(graph.name, "orders.v2");
  EXPECT_EQ(graph.event_log, "shop.orders.v2_event_log");
}

TEST(LoadPipelineTest, RefusesWhatIsNoPipelineNamingFileAndLine) {
  const std::string bronze = "CREATE OR REFRESH STREAMING TABLE bronze AS SELECT * FROM STREAM(raw);\n";
  EXPECT_ERROR_WITH(Load({{"a.sql", bronze + "SELECT 1;"}}).status(), kInvalidArgument,
                    "a.sql:2: a pipeline's files declare datasets and flows");
  EXPECT_ERROR_WITH(Load({{"a.sql", bronze}, {"b.sql", "\n" + bronze}}).status(), kInvalidArgument,
                    "b.sql:2: bronze is declared twice (first at a.sql:1)");
  EXPECT_ERROR_WITH(Load({{"a.sql", "CREATE OR REFRESH STREAMING TABLE s AS SELECT * FROM raw;"}}).status(),
                    kInvalidArgument, "a.sql:1: flow s reads no STREAM source");
  EXPECT_ERROR_WITH(
      Load({{"a.sql", "CREATE OR REFRESH MATERIALIZED VIEW m AS SELECT * FROM STREAM(raw);"}}).status(),
      kInvalidArgument, "a.sql:1: flow m reads a STREAM source");
  EXPECT_ERROR_WITH(Load({{"a.sql", "CREATE STREAMING TABLE lonely;"}}).status(), kInvalidArgument,
                    "a.sql:1: streaming table lonely has no query and no flow writes it");
  EXPECT_ERROR_WITH(
      Load({{"a.sql", "CREATE FLOW f AS INSERT INTO nowhere BY NAME SELECT * FROM STREAM(raw);"}}).status(),
      kInvalidArgument, "a.sql:1: flow f writes nowhere");
  EXPECT_ERROR_WITH(
      Load({{"a.sql", "\n\nCREATE OR REFRESH STREAMING TABLE b AS SELECT * FROM STREAM(${x});"}}).status(),
      kInvalidArgument, "a.sql:3: ${x} has no value");
  EXPECT_ERROR_WITH(Load({{"a.sql", "CREATE OR REFRESH MATERIALIZED VIEW m AS SELECT FROM WHERE;"}}).status(),
                    kInvalidArgument, "a.sql");
  EXPECT_ERROR_WITH(Load({{"pipeline.json", R"({"schemas": "x"})"}, {"a.sql", bronze}}).status(),
                    kInvalidArgument, "unknown field \"schemas\"");
  EXPECT_EQ(Load({{"readme.md", "x"}}).status().code(), ErrorCode::kNotFound);
  EXPECT_ERROR_WITH(Load({{"a.sql",
                           "CREATE OR REFRESH STREAMING TABLE s (CONSTRAINT e EXPECT (x > 0),\n"
                           "  CONSTRAINT E EXPECT (y > 0)) AS SELECT * FROM STREAM(raw);"}})
                        .status(),
                    kInvalidArgument, "a.sql:1: streaming table s: expectation E is declared twice");
  EXPECT_ERROR_WITH(Load({{"a.sql",
                           "CREATE OR REFRESH MATERIALIZED VIEW m (CONSTRAINT e EXPECT (x > 0) ON VIOLATION "
                           "QUARANTINE) AS SELECT 1 AS x;"}})
                        .status(),
                    kInvalidArgument, "materialized view m: expectation e is ON VIOLATION QUARANTINE");
}

TEST(BuildGraphTest, OrdersDatasetsAfterWhatTheyReadAndRefusesCycles) {
  ASSERT_OK_AND_ASSIGN(
      PipelineDefinition pipeline,
      Load({{"a.sql",
             "CREATE OR REFRESH MATERIALIZED VIEW gold AS WITH s AS (SELECT * FROM silver) SELECT count(*) "
             "FROM s;\n"
             "CREATE OR REFRESH STREAMING TABLE silver AS SELECT * FROM STREAM(bronze);\n"
             "CREATE OR REFRESH STREAMING TABLE bronze AS SELECT * FROM STREAM(default.raw);"}}));
  ASSERT_OK_AND_ASSIGN(PipelineGraph graph, BuildGraph(pipeline));
  std::vector<std::string> order;
  for (const GraphNode& node : graph.nodes) order.push_back(pipeline.datasets[node.dataset].name);
  EXPECT_EQ(order, (std::vector<std::string>{"bronze", "silver", "gold"}));
  EXPECT_EQ(graph.nodes[0].external, (std::vector<std::string>{"default.raw"}));
  EXPECT_NE(GraphDot(pipeline, graph).find("\"silver\" -> \"gold\""), std::string::npos);

  ASSERT_OK_AND_ASSIGN(pipeline, Load({{"a.sql",
                                        "CREATE OR REFRESH MATERIALIZED VIEW a AS SELECT * FROM b;\n"
                                        "CREATE OR REFRESH MATERIALIZED VIEW b AS SELECT * FROM c;\n"
                                        "CREATE OR REFRESH MATERIALIZED VIEW c AS SELECT * FROM a;"}}));
  EXPECT_ERROR_WITH(BuildGraph(pipeline).status(), kInvalidArgument,
                    "cycle: a (a.sql:1) reads b (a.sql:2) reads c (a.sql:3) reads a");
}

class PipelineRunTest : public PipelineHarness {
 protected:
  void SetUp() override {
    Write("bronze.sql",
          "CREATE OR REFRESH STREAMING TABLE bronze AS SELECT * FROM STREAM(raw);\n"
          "CREATE FLOW history AS INSERT INTO ONCE bronze BY NAME SELECT * FROM archive;\n");
    Write("silver.sql",
          "CREATE OR REFRESH STREAMING TABLE silver AS\n"
          "SELECT id, region, amount FROM STREAM(bronze) WHERE amount > 0;\n"
          "CREATE OR REFRESH MATERIALIZED VIEW gold AS\n"
          "SELECT region, count(*) AS n, sum(amount) AS total FROM silver GROUP BY ALL;\n");
    Sql("CREATE TABLE raw (id BIGINT, region VARCHAR, amount DOUBLE);"
        "CREATE TABLE archive (id BIGINT, region VARCHAR, amount DOUBLE);"
        "INSERT INTO raw VALUES (1, 'eu', 10), (2, 'us', -5), (3, 'eu', 7);"
        "INSERT INTO archive VALUES (100, 'us', 1);");
  }

  std::string Gold() {
    std::string out;
    for (const auto& row : Sql("SELECT region, n, total FROM gold ORDER BY region")) {
      out += *row[0] + "=" + *row[1] + "/" + *row[2] + " ";
    }
    return out;
  }
};

TEST_F(PipelineRunTest, RunsReadOnlyWhatArrivedAndOnceFlowsLandOnce) {
  ASSERT_OK_AND_ASSIGN(std::vector<PipelineFlowRun> first, Run());
  ASSERT_EQ(first.size(), 4u);
  EXPECT_EQ(first[0].flow, "bronze");
  EXPECT_EQ(first[0].rows_written, 3);
  EXPECT_EQ(first[1].flow, "history");
  EXPECT_EQ(first[1].rows_written, 1);
  EXPECT_EQ(first[2].rows_written, 3);  // silver: the positive amounts
  EXPECT_EQ(Gold(), "eu=2/17.0 us=1/1.0 ");

  Sql("INSERT INTO raw VALUES (4, 'us', 3), (5, 'us', -1)");
  ASSERT_OK_AND_ASSIGN(std::vector<PipelineFlowRun> second, Run());
  EXPECT_EQ(second[0].rows_written, 2);  // only the new rows
  EXPECT_EQ(second[1].rows_written, 0);  // history landed once
  EXPECT_EQ(second[2].rows_written, 1);
  EXPECT_EQ(Gold(), "eu=2/17.0 us=2/4.0 ");
  EXPECT_EQ(Sql("SELECT count(*), count(DISTINCT id) FROM bronze")[0][0], "6");

  // A full refresh of silver reads bronze from its start again; bronze is left alone.
  ASSERT_OK_AND_ASSIGN(std::vector<PipelineFlowRun> refreshed, Run({"silver"}));
  EXPECT_EQ(refreshed[0].rows_written, 0);
  EXPECT_EQ(refreshed[2].rows_written, 4);
  EXPECT_EQ(Sql("SELECT count(*) FROM silver")[0][0], "4");
  EXPECT_EQ(Gold(), "eu=2/17.0 us=2/4.0 ");

  // A full refresh of everything: the ONCE flow loads its history again into the new bronze.
  ASSERT_OK_AND_ASSIGN(std::vector<PipelineFlowRun> all, Run({"all"}));
  EXPECT_EQ(all[0].rows_written, 5);
  EXPECT_EQ(all[1].rows_written, 1);
  EXPECT_EQ(Sql("SELECT count(*) FROM bronze")[0][0], "6");
}

TEST_F(PipelineRunTest, RefusesUnknownTablesAndDatasetsBeforeRunning) {
  Write("extra.sql", "CREATE OR REFRESH MATERIALIZED VIEW stray AS SELECT * FROM missing_table;\n");
  EXPECT_ERROR_WITH(
      Run().status(), kInvalidArgument,
      "extra.sql:1: flow stray reads missing_table, which is neither a dataset of the pipeline nor a "
      "table of the warehouse");
  std::filesystem::remove(folder_ / "extra.sql");
  EXPECT_ERROR_WITH(Run({"nope"}).status(), kInvalidArgument, "--full-refresh names nope");
  // Nothing ran: no dataset was created.
  EXPECT_EQ(
      Sql("SELECT count(*) FROM information_schema.tables WHERE table_name IN ('bronze', 'silver', 'gold')")
          [0][0],
      "0");
}

// A pipeline writes only the tables it made: a user's table, or another pipeline's, of a
// dataset's name is neither replaced, dropped nor written.
TEST_F(PipelineRunTest, LeavesTablesItDidNotMakeAlone) {
  auto tables_named = [&](const std::string& name) {
    return Sql("SELECT count(*) FROM information_schema.tables WHERE table_name = '" + name + "'")[0][0];
  };
  Sql("CREATE TABLE gold (note VARCHAR); INSERT INTO gold VALUES ('mine')");
  EXPECT_ERROR_WITH(Run().status(), kInvalidArgument,
                    "table default.gold exists and no pipeline made it (its property basin.pipeline)");
  EXPECT_EQ(tables_named("bronze"), "0");  // checked before anything ran
  Sql("DROP TABLE gold");
  ASSERT_OK(Run().status());
  bool owned = false;
  for (const auto& row : Sql("SHOW TBLPROPERTIES silver")) {
    owned = owned || (row[0] == "basin.pipeline" && row[1] == "pipeline");
  }
  EXPECT_TRUE(owned);

  // A full refresh drops none of the pipeline's own tables when one dataset's is the user's.
  Sql("DROP TABLE gold; CREATE TABLE gold (note VARCHAR); INSERT INTO gold VALUES ('mine')");
  EXPECT_ERROR_WITH(Run({"all"}).status(), kInvalidArgument, "table default.gold exists");
  EXPECT_EQ(Sql("SELECT count(*) FROM bronze")[0][0], "4");
  EXPECT_EQ(Sql("SELECT note FROM gold")[0][0], "mine");
  Sql("DROP TABLE gold");

  // Another pipeline of the same datasets (a folder of another name) leaves them alone.
  const std::filesystem::path other = dir_.path() / "other";
  std::filesystem::copy(folder_, other);
  PipelineOptions options;
  options.folder = other.string();
  options.warehouse = warehouse_;
  ASSERT_OK_AND_ASSIGN(auto pipeline, Pipeline::Open(options));
  EXPECT_ERROR_WITH(pipeline->Run().status(), kInvalidArgument,
                    "table default.bronze exists and pipeline pipeline made it");
}

// Expectations: warn counts, DROP ROW leaves the row out, QUARANTINE puts it (every column,
// the names of every expectation it failed, the batch id) in <table>_quarantine once, FAIL
// UPDATE stops the flow with nothing of the batch committed.
TEST_F(PipelineRunTest, ExpectationsCountDropQuarantineAndFail) {
  Write("silver.sql",
        "CREATE OR REFRESH STREAMING TABLE silver (\n"
        "  CONSTRAINT valid_id EXPECT (id IS NOT NULL) ON VIOLATION DROP ROW,\n"
        "  CONSTRAINT positive EXPECT (amount > 0) ON VIOLATION QUARANTINE,\n"
        "  CONSTRAINT known_region EXPECT (region IN ('eu', 'us'))\n"
        ") AS SELECT id, region, amount FROM STREAM(bronze);\n"
        "CREATE OR REFRESH MATERIALIZED VIEW gold (CONSTRAINT few EXPECT (n < 3) ON VIOLATION DROP ROW) AS\n"
        "SELECT region, count(*) AS n, sum(amount) AS total FROM silver GROUP BY ALL;\n");
  Sql("INSERT INTO raw VALUES (NULL, 'eu', 1), (6, 'mars', 2), (NULL, 'us', -3)");
  ASSERT_OK_AND_ASSIGN(std::vector<PipelineFlowRun> first, Run());
  ASSERT_EQ(first.size(), 4u);
  const PipelineFlowRun& silver = first[2];
  EXPECT_EQ(silver.rows_checked, 7);  // raw's 6 and archive's 1, through bronze
  ASSERT_EQ(silver.expectations.size(), 3u);
  EXPECT_EQ(silver.expectations[0].name, "valid_id");
  EXPECT_EQ(silver.expectations[0].on_violation, "drop row");
  EXPECT_EQ(silver.expectations[0].failed_rows, 2);
  EXPECT_EQ(silver.expectations[1].failed_rows, 2);  // 2 (-5) and the NULL id's -3
  EXPECT_EQ(silver.expectations[2].failed_rows, 1);  // mars, kept
  EXPECT_EQ(silver.quarantined, 2);
  EXPECT_EQ(silver.rows_written, 4);  // 1, 3, 100 and mars
  EXPECT_EQ(Sql("SELECT string_agg(id::VARCHAR, ',' ORDER BY id) FROM silver")[0][0], "1,3,6,100");
  auto quarantine =
      Sql("SELECT coalesce(id::VARCHAR, 'null'), amount, array_to_string(failed_expectations, '+'), batch_id "
          "FROM silver_quarantine ORDER BY amount");
  ASSERT_EQ(quarantine.size(), 2u);
  EXPECT_EQ(quarantine[0], (std::vector<std::optional<std::string>>{"2", "-5.0", "positive", "0"}));
  EXPECT_EQ(quarantine[1],
            (std::vector<std::optional<std::string>>{"null", "-3.0", "valid_id+positive", "0"}));
  // gold: eu has 2 rows (1, 3), us 1 (100), mars 1; all kept by `few`.
  EXPECT_EQ(first[3].expectations.at(0).failed_rows, 0);
  EXPECT_EQ(Gold(), "eu=2/17.0 mars=1/2.0 us=1/1.0 ");

  // The next batch quarantines only its own rows, with its batch id.
  Sql("INSERT INTO raw VALUES (7, 'eu', -1), (8, 'eu', 4)");
  ASSERT_OK_AND_ASSIGN(std::vector<PipelineFlowRun> second, Run());
  EXPECT_EQ(second[2].quarantined, 1);
  EXPECT_EQ(Sql("SELECT count(*), max(batch_id) FROM silver_quarantine")[0],
            (std::vector<std::optional<std::string>>{"3", "1"}));
  // gold's eu now has 3 rows: dropped by `few`.
  EXPECT_EQ(second[3].expectations.at(0).failed_rows, 1);
  EXPECT_EQ(Gold(), "mars=1/2.0 us=1/1.0 ");

  // FAIL UPDATE: the flow stops naming the expectation and the row; silver commits nothing.
  Write("silver.sql",
        "CREATE OR REFRESH STREAMING TABLE silver (\n"
        "  CONSTRAINT no_big EXPECT (amount < 1000) ON VIOLATION FAIL UPDATE\n"
        ") AS SELECT id, region, amount FROM STREAM(bronze);\n");
  Sql("INSERT INTO raw VALUES (9, 'us', 5), (10, 'us', 5000)");
  const size_t commits = Sql("DESCRIBE HISTORY silver").size();
  EXPECT_ERROR_WITH(Run().status(), kInvalidArgument,
                    "expectation no_big (amount < 1000) failed on 1 of 2 row(s), and it is ON VIOLATION FAIL "
                    "UPDATE: the update commits nothing; the first: {\"id\":10");
  EXPECT_EQ(Sql("DESCRIBE HISTORY silver").size(), commits);
  EXPECT_EQ(Sql("SELECT count(*) FROM silver WHERE id IN (9, 10)")[0][0], "0");

  // The event log's counts are the rows kept, dropped and quarantined.
  const std::string log = "pipeline_event_log WHERE flow = 'silver' AND ";
  EXPECT_EQ(
      Sql("SELECT sum(rows_written) || '/' || sum(quarantined) FROM " + log +
          "event_type = 'flow_progress'")[0][0],
      Sql("SELECT (SELECT count(*) FROM silver) || '/' || (SELECT count(*) FROM silver_quarantine)")[0][0]);
  EXPECT_EQ(
      Sql("SELECT string_agg(expectation || ' ' || action || ' ' || passed || '/' || failed, ', ' ORDER BY "
          "expectation) FROM (SELECT expectation, action, sum(passed_rows) AS passed, sum(failed_rows) AS "
          "failed FROM " +
          log + "event_type = 'expectation' GROUP BY ALL)")[0][0],
      "known_region warn 8/1, positive quarantine 6/3, valid_id drop row 7/2");
  EXPECT_EQ(Sql("SELECT count(*) FROM " + log + "event_type = 'expectation' AND level = 'WARN'")[0][0], "4");
  EXPECT_EQ(
      Sql("SELECT sum(failed_rows) FROM pipeline_event_log WHERE flow = 'gold' AND action = 'drop row'")[0]
                                                                                                        [0],
      "1");
  // The failed update: its error, and its end.
  auto failed =
      Sql("SELECT e.level, e.message, u.outcome FROM pipeline_event_log e JOIN pipeline_event_log u USING "
          "(update_id) WHERE e.event_type = 'error' AND u.event_type = 'update_end'");
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0][0], "ERROR");
  EXPECT_NE(failed[0][1]->find("expectation no_big (amount < 1000) failed on 1 of 2 row(s)"),
            std::string::npos)
      << *failed[0][1];
  EXPECT_EQ(failed[0][2], "failed");
  EXPECT_EQ(Sql("SELECT string_agg(DISTINCT outcome, ',' ORDER BY outcome) FROM pipeline_event_log")[0][0],
            "completed,failed");
  // Lineage: which table feeds which, by which flow.
  EXPECT_EQ(
      Sql("SELECT string_agg(edge, ', ' ORDER BY flow, edge) FROM (SELECT DISTINCT flow, source || '->' || "
          "dataset || ' (' || flow || ')' AS edge FROM pipeline_event_log WHERE event_type = 'lineage')")[0]
                                                                                                         [0],
      "raw->default.bronze (bronze), default.silver->default.gold (gold), archive->default.bronze (history), "
      "default.bronze->default.silver (silver)");
}

// Views that do not read each other run at the same time (two at once by default), one at a
// time with "parallelism": 1; the results come in graph order either way.
TEST_F(PipelineRunTest, IndependentDatasetsRunAtTheSameTime) {
  std::string views;
  for (int i = 0; i < 6; i++) {
    views += fmt::format(
        "CREATE OR REFRESH MATERIALIZED VIEW v{0} AS WITH r AS (SELECT * FROM raw) SELECT region, count(*) + "
        "{0} AS n "
        "FROM r GROUP BY ALL;\n",
        i);
  }
  Write("views.sql", views);
  auto intervals = [&](const std::string& settings) {
    Write("pipeline.json", settings);
    PipelineOptions options;
    options.folder = folder_.string();
    options.warehouse = warehouse_;
    std::mutex mu;
    std::map<std::string, std::pair<int64_t, int64_t>> spans;  // flow -> (start, end) in us
    auto now = [] {
      return std::chrono::duration_cast<std::chrono::microseconds>(
                 std::chrono::steady_clock::now().time_since_epoch())
          .count();
    };
    auto pipeline = Pipeline::Open(options);
    EXPECT_TRUE(pipeline.ok()) << pipeline.status().ToString();
    auto ran = (*pipeline)->Run(
        [&](const PipelineFlowRun& flow) {
          std::lock_guard<std::mutex> lock(mu);
          spans[flow.flow].second = now();
        },
        [&](const PipelineFlowRun& flow) {
          std::lock_guard<std::mutex> lock(mu);
          if (flow.batches == 0) spans[flow.flow].first = now();
        });
    EXPECT_TRUE(ran.ok()) << ran.status().ToString();
    std::vector<std::string> order;
    for (const PipelineFlowRun& flow : *ran) order.push_back(flow.flow);
    EXPECT_EQ(order, (std::vector<std::string>{"bronze", "history", "silver", "gold", "v0", "v1", "v2", "v3",
                                               "v4", "v5"}));
    int overlapping = 0;
    for (const auto& [a, x] : spans) {
      for (const auto& [b, y] : spans) {
        if (a < b && x.first < y.second && y.first < x.second) overlapping++;
      }
    }
    return overlapping;
  };
  EXPECT_EQ(intervals(R"({"name": "pipeline", "parallelism": 1})"), 0);
  EXPECT_GT(intervals(R"({"name": "pipeline"})"), 0);
  EXPECT_EQ(Sql("SELECT n FROM v5 WHERE region = 'eu'")[0][0], "7");
}

TEST_F(PipelineRunTest, ContinuousRunsPassAfterPassUntilStopped) {
  PipelineOptions options;
  options.folder = folder_.string();
  options.warehouse = warehouse_;
  options.continuous = true;
  options.interval_ms = 50;
  ASSERT_OK_AND_ASSIGN(auto pipeline, Pipeline::Open(options));
  std::optional<Result<std::vector<PipelineFlowRun>>> ended;
  std::thread runner([&] { ended = pipeline->Run(); });
  // Rows arriving while it runs reach gold without another command.
  auto wait_for_gold = [&](const std::string& wanted) {
    std::string seen;
    for (int i = 0; i < 600; i++) {
      auto session = Session::Open({.warehouse = warehouse_});
      if (!session.ok()) return session.status().ToString();
      auto rows = (*session)->Execute(
          "SELECT string_agg(region || '=' || n || '/' || total || ' ', '' ORDER BY region) "
          "FROM gold");
      seen = rows.ok() ? rows->back().result.rows[0][0].value_or("") : rows.status().ToString();
      if (seen == wanted) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return seen;
  };
  EXPECT_EQ(wait_for_gold("eu=2/17.0 us=1/1.0 "), "eu=2/17.0 us=1/1.0 ");
  Sql("INSERT INTO raw VALUES (4, 'us', 3)");
  EXPECT_EQ(wait_for_gold("eu=2/17.0 us=2/4.0 "), "eu=2/17.0 us=2/4.0 ");
  pipeline->Stop();
  runner.join();
  ASSERT_TRUE(ended.has_value());
  ASSERT_OK(ended->status());
  const PipelineFlowRun* bronze = nullptr;
  for (const PipelineFlowRun& flow : **ended) {
    if (flow.flow == "bronze") bronze = &flow;
  }
  ASSERT_NE(bronze, nullptr);
  EXPECT_EQ(bronze->rows_written, 4);  // summed over the passes
  // One update, stopped; the view logged only when it changed.
  EXPECT_EQ(Sql("SELECT count(DISTINCT update_id) || ' ' || string_agg(outcome, ',') FROM pipeline_event_log "
                "WHERE event_type IN ('update_start', 'update_end')")[0][0],
            "1 stopped");
  EXPECT_EQ(
      Sql("SELECT count(*) FROM pipeline_event_log WHERE flow = 'gold' AND refresh = 'unchanged'")[0][0],
      "0");
  EXPECT_EQ(Sql("SELECT count(*) FROM bronze")[0][0], "5");
}

// A continuous run keeps each flow's stream from pass to pass: a de-duplicating stream's
// state stays in memory (here, its objects in the checkpoint are damaged meanwhile, and no
// pass reads them back), and a dataset to refresh fully is refreshed in the first pass only.
TEST_F(PipelineRunTest, AContinuousRunKeepsItsStreamsFromPassToPassAndRefreshesFullyOnce) {
  Write("unique.sql",
        "CREATE OR REFRESH STREAMING TABLE unique_events AS\n"
        "SELECT DISTINCT ON (id) * FROM STREAM(events) WATERMARK ts DELAY OF INTERVAL 1 HOUR;\n");
  Sql("CREATE TABLE events (id BIGINT, ts TIMESTAMP);"
      "INSERT INTO events VALUES (1, TIMESTAMP '2026-12-01 10:00:00'), (2, TIMESTAMP '2026-12-01 "
      "10:00:01');");
  PipelineOptions options;
  options.folder = folder_.string();
  options.warehouse = warehouse_;
  options.continuous = true;
  options.interval_ms = 50;
  options.full_refresh = {"bronze"};
  ASSERT_OK_AND_ASSIGN(auto pipeline, Pipeline::Open(options));
  std::optional<Result<std::vector<PipelineFlowRun>>> ended;
  std::thread runner([&] { ended = pipeline->Run(); });
  auto wait_for = [&](const std::string& query, const std::string& wanted) {
    std::string seen;
    for (int i = 0; i < 600 && seen != wanted; i++) {
      auto session = Session::Open({.warehouse = warehouse_});
      if (!session.ok()) return session.status().ToString();
      auto rows = (*session)->Execute(query);
      seen = rows.ok() ? rows->back().result.rows[0][0].value_or("") : rows.status().ToString();
      if (seen != wanted) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return seen;
  };
  const std::string unique = "SELECT count(*) || '/' || count(DISTINCT id) FROM unique_events";
  const std::string gold = "SELECT string_agg(region || '=' || n, ' ' ORDER BY region) FROM gold";
  EXPECT_EQ(wait_for(unique, "2/2"), "2/2");
  EXPECT_EQ(wait_for(gold, "eu=2 us=1"), "eu=2 us=1");
  int damaged = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(warehouse_ + "/_pipelines")) {
    const std::string path = entry.path().string();
    if (path.find("unique_events/state/") != std::string::npos && entry.path().extension() == ".parquet") {
      std::ofstream(entry.path(), std::ios::trunc) << "not parquet";
      damaged++;
    }
  }
  EXPECT_GT(damaged, 0);
  Sql("INSERT INTO events VALUES (2, TIMESTAMP '2026-12-01 10:00:02'), (3, TIMESTAMP '2026-12-01 10:00:03');"
      "INSERT INTO raw VALUES (4, 'us', 3)");
  EXPECT_EQ(wait_for(unique, "3/3"), "3/3");
  EXPECT_EQ(wait_for(gold, "eu=2 us=2"), "eu=2 us=2");
  pipeline->Stop();
  runner.join();
  ASSERT_TRUE(ended.has_value());
  ASSERT_OK(ended->status());
  for (const PipelineFlowRun& flow : **ended) {
    if (flow.flow == "bronze") {
      EXPECT_EQ(flow.rows_written, 4);  // refreshed once: 3, then 1
    }
  }
  EXPECT_EQ(
      Sql("SELECT count(*) FROM pipeline_event_log WHERE flow = 'bronze' AND event_type = 'flow_progress' "
          "AND batch_id = 0")[0][0],
      "1");
}

}  // namespace
}  // namespace basin::pipeline
