// `basin pipeline` as a user runs it: validate and graph a folder of pipeline SQL, run it
// twice (the second run reads only what arrived), run it continuously until SIGINT, and
// errors that name the file and line with status 1.
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "cli/basin_process.h"
#include "testing/test_util.h"

namespace basin {
namespace {

class PipelineCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(BasinBinary())) GTEST_SKIP() << "no basin binary at " << BasinBinary();
    folder_ = dir_.path() / "orders";
    std::filesystem::create_directories(folder_);
    Write("pipeline.json", R"({"configuration": {"source": "raw"}})");
    Write("tables.sql",
          "CREATE OR REFRESH STREAMING TABLE clean AS\n"
          "SELECT id, amount FROM STREAM(${source}) WHERE amount > 0;\n"
          "CREATE OR REFRESH MATERIALIZED VIEW totals AS SELECT count(*) AS n, sum(amount) AS total FROM "
          "clean;\n");
    RunOutput created =
        Sql("CREATE TABLE raw (id BIGINT, amount INTEGER); INSERT INTO raw VALUES (1, 5), (2, -1)");
    ASSERT_EQ(created.exit_code, 0) << created.err;
  }

  void Write(const std::string& name, const std::string& text) { std::ofstream(folder_ / name) << text; }

  RunOutput Sql(const std::string& sql) {
    return RunBasin({"sql", "-w", Warehouse(), "--format", "csv", "-c", sql});
  }
  std::string Warehouse() const { return (dir_.path() / "wh").string(); }

  testing::TempDir dir_;
  std::filesystem::path folder_;
};

TEST_F(PipelineCliTest, ValidatesGraphsAndRunsAFolder) {
  RunOutput valid = RunBasin({"pipeline", "validate", folder_.string(), "--warehouse", Warehouse()});
  ASSERT_EQ(valid.exit_code, 0) << valid.err;
  EXPECT_EQ(valid.out, "pipeline orders is valid: 2 datasets, in this order: clean, totals\n");
  RunOutput graph = RunBasin({"pipeline", "graph", folder_.string(), "--format", "json"});
  ASSERT_EQ(graph.exit_code, 0) << graph.err;
  EXPECT_NE(graph.out.find("\"external\": [\n        \"default.raw\""), std::string::npos) << graph.out;

  RunOutput first = RunBasin({"pipeline", "run", folder_.string(), "--warehouse", Warehouse()});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(first.out.rfind("pipeline orders: 2 flows ran in ", 0), 0u) << first.out;
  EXPECT_NE(first.out.find(
                " s, 2 rows written, 0 dead letters, 0 rows failed expectations (0 quarantined); events in "
                "default.orders_event_log\n"),
            std::string::npos)
      << first.out;
  EXPECT_NE(
      first.err.find("flow clean (stream) -> default.clean: 1 batch(es), 1 rows written (created the table)"),
      std::string::npos)
      << first.err;
  ASSERT_EQ(Sql("INSERT INTO raw VALUES (3, 7)").exit_code, 0);
  RunOutput second = RunBasin({"pipeline", "run", folder_.string(), "--warehouse", Warehouse()});
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(Sql("SELECT n, total FROM totals").out, "n,total\n2,12\n");  // sum() kept as decimal(38,0)
}

TEST_F(PipelineCliTest, ContinuousRunsUntilInterrupted) {
  const pid_t pid = StartKillableBasin({"pipeline", "run", folder_.string(), "--warehouse", Warehouse(),
                                        "--continuous", "--interval", "50ms"});
  ASSERT_GT(pid, 0);
  auto totals = [&] { return Sql("SELECT n, total FROM totals").out; };
  for (int i = 0; i < 300 && totals() != "n,total\n1,5\n"; i++)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(totals(), "n,total\n1,5\n");
  ASSERT_EQ(Sql("INSERT INTO raw VALUES (3, 7)").exit_code, 0);
  for (int i = 0; i < 300 && totals() != "n,total\n2,12\n"; i++)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(totals(), "n,total\n2,12\n");  // without another command
  kill(pid, SIGINT);
  EXPECT_EQ(testing::WaitChild(pid), 0);  // stopped cleanly
  EXPECT_EQ(Sql("SELECT outcome FROM orders_event_log WHERE event_type = 'update_end'").out,
            "outcome\nstopped\n");
  RunOutput bad = RunBasin({"pipeline", "run", folder_.string(), "--warehouse", Warehouse(), "--continuous",
                            "--interval", "soon"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("--interval: 'soon' is not a duration"), std::string::npos) << bad.err;
}

TEST_F(PipelineCliTest, UserRunsUnderItsGrants) {
  ASSERT_EQ(Sql("CREATE USER bob PASSWORD 'b'; GRANT SELECT ON TABLE raw TO bob").exit_code, 0);
  const std::vector<std::string> as_bob = {"pipeline", "run", folder_.string(), "--warehouse", Warehouse(),
                                           "--user",   "bob"};
  // bob may read raw but not create the pipeline's tables.
  RunOutput denied = RunBasin(as_bob);
  EXPECT_EQ(denied.exit_code, 1);
  EXPECT_NE(denied.err.find("Error: PermissionDenied: "), std::string::npos) << denied.err;
  EXPECT_NE(denied.err.find("CREATE on SCHEMA default for user bob"), std::string::npos) << denied.err;
  EXPECT_EQ(Sql("SELECT count(*) AS n FROM information_schema.tables WHERE table_name = 'clean'").out,
            "n\n0\n");

  ASSERT_EQ(Sql("GRANT CREATE ON SCHEMA default TO bob").exit_code, 0);
  RunOutput allowed = RunBasin(as_bob);
  ASSERT_EQ(allowed.exit_code, 0) << allowed.err;
  EXPECT_EQ(Sql("SELECT n, total FROM totals").out, "n,total\n1,5\n");
  // What bob's pipeline created is bob's.
  EXPECT_NE(Sql("SHOW GRANTS ON TABLE clean").out.find("bob,TABLE default.clean,ALL PRIVILEGES"),
            std::string::npos);
}

TEST_F(PipelineCliTest, ErrorsNameTheFileAndLine) {
  Write("broken.sql",
        "\nCREATE OR REFRESH MATERIALIZED VIEW loop_a AS SELECT * FROM loop_b;\n"
        "CREATE OR REFRESH MATERIALIZED VIEW loop_b AS SELECT * FROM loop_a;\n");
  RunOutput cycle = RunBasin({"pipeline", "validate", folder_.string()});
  EXPECT_EQ(cycle.exit_code, 1);
  EXPECT_NE(
      cycle.err.find("Error: InvalidArgument: the pipeline's datasets read each other in a cycle: loop_a "
                     "(broken.sql:2) reads loop_b (broken.sql:3) reads loop_a"),
      std::string::npos)
      << cycle.err;
  Write("broken.sql", "SELECT 1;\n");
  RunOutput stray = RunBasin({"pipeline", "run", folder_.string(), "--warehouse", Warehouse()});
  EXPECT_EQ(stray.exit_code, 1);
  EXPECT_NE(stray.err.find("broken.sql:1: a pipeline's files declare datasets and flows"), std::string::npos)
      << stray.err;
}

}  // namespace
}  // namespace basin
