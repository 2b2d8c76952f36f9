// Exactly once across pipeline runs under SIGKILL: `basin pipeline run` over a bronze
// streaming table (STREAM of a warehouse table, plus an INSERT INTO ONCE backfill), a silver
// streaming table (STREAM of bronze, its rows without a positive amount quarantined by an
// expectation) and a gold materialized view (refreshed incrementally) is killed at random
// moments over more than 20 runs, every other one continuous, with new rows arriving between
// them; a last run that ends cleanly leaves every row once in bronze, silver or
// silver_quarantine, the backfill once, gold equal to its query over silver, and the event
// log's expectation counts equal to the rows kept and quarantined. Alongside, random change
// events (shuffled, duplicated, late) feed AUTO CDC flows into an SCD type 1 and a type 2
// table, which end equal to the reference model's (tests/pipeline/cdc_model.h). The seed is
// printed; BASIN_CRASH_SEED replays a run, and BASIN_CRASH_STDERR=FILE keeps the killed runs'
// stderr.
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "cli/basin_process.h"
#include "pipeline/cdc_model.h"
#include "testing/child_process.h"

namespace basin {
namespace {

constexpr int kRuns = 22;
constexpr int kRowsPerRound = 30;

class PipelineCrashTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(BasinBinary())) GTEST_SKIP() << "no basin binary at " << BasinBinary();
    random_.seed(CrashTestSeed());
    folder_ = dir_.path() / "payments";
    std::filesystem::create_directories(folder_);
    std::ofstream(folder_ / "bronze.sql")
        << "CREATE OR REFRESH STREAMING TABLE bronze AS SELECT * FROM STREAM(raw);\n"
           "CREATE FLOW backfill AS INSERT INTO ONCE bronze BY NAME SELECT * FROM archive;\n";
    std::ofstream(folder_ / "silver.sql") << "CREATE OR REFRESH STREAMING TABLE silver (CONSTRAINT positive "
                                             "EXPECT (amount > 0) ON VIOLATION QUARANTINE) AS SELECT id, "
                                             "amount FROM STREAM(bronze);\n"
                                             "CREATE OR REFRESH MATERIALIZED VIEW gold AS SELECT count(*) AS "
                                             "n, sum(amount) AS total FROM silver;\n";
    std::ofstream(folder_ / "customers.sql")
        << "CREATE OR REFRESH STREAMING TABLE customers;\n"
           "CREATE FLOW customers_cdc AS AUTO CDC INTO customers FROM STREAM(changes) KEYS (id)\n"
           "  APPLY AS DELETE WHEN op = 'DELETE' SEQUENCE BY seq COLUMNS * EXCEPT (op, seq);\n"
           "CREATE OR REFRESH STREAMING TABLE customers_history;\n"
           "CREATE FLOW customers_history_cdc AS AUTO CDC INTO customers_history FROM STREAM(changes) KEYS "
           "(id)\n"
           "  APPLY AS DELETE WHEN op = 'DELETE' SEQUENCE BY seq COLUMNS * EXCEPT (op, seq) STORED AS SCD "
           "TYPE 2;\n";
    RunOutput created =
        Sql("CREATE TABLE raw (id BIGINT, amount BIGINT); CREATE TABLE archive (id BIGINT, amount BIGINT);"
            "INSERT INTO archive SELECT -range - 1, 1 FROM range(5);"
            "CREATE TABLE changes (id BIGINT, name VARCHAR, op VARCHAR, seq BIGINT)");
    ASSERT_EQ(created.exit_code, 0) << created.err;
  }

  RunOutput Sql(const std::string& sql) {
    return RunBasin({"sql", "-w", Warehouse(), "--format", "csv", "-c", sql});
  }
  std::string Warehouse() const { return (dir_.path() / "wh").string(); }

  // One value of a one-row, one-column query.
  std::string Value(const std::string& sql) {
    RunOutput out = Sql(sql);
    EXPECT_EQ(out.exit_code, 0) << out.err;
    const size_t newline = out.out.find('\n');
    return out.out.substr(newline + 1, out.out.find('\n', newline + 1) - newline - 1);
  }

  // Starts a run (triggered, or `continuous`, which never ends by itself) and kills it with
  // SIGKILL after a random 5 to 600 ms (a triggered run takes about 400 ms here), unless it
  // ended first.
  void RunAndKill(bool continuous) {
    std::vector<std::string> args{"pipeline", "run", folder_.string(), "-w", Warehouse()};
    if (continuous) args.insert(args.end(), {"--continuous", "--interval", "20ms"});
    const pid_t pid = StartKillableBasin(args);
    ASSERT_GT(pid, 0);
    std::this_thread::sleep_for(
        std::chrono::milliseconds(std::uniform_int_distribution<int>(5, 600)(random_)));
    kill(pid, SIGKILL);  // it may have ended already
    const int status = testing::WaitChild(pid);
    if (status == -SIGKILL) killed_++;
  }

  testing::TempDir dir_;
  std::filesystem::path folder_;
  std::mt19937_64 random_;
  int killed_ = 0;
};

TEST_F(PipelineCrashTest, KilledRunsNeitherLoseNorRepeatARow) {
  int64_t rows = 0;
  const std::vector<pipeline::Change> changes =
      pipeline::RandomChanges(random_, /*keys=*/15, /*count=*/kRuns * 10);
  for (int run = 0; run < kRuns; run++) {
    const std::vector<pipeline::Change> slice(changes.begin() + changes.size() * run / kRuns,
                                              changes.begin() + changes.size() * (run + 1) / kRuns);
    RunOutput changed = Sql("INSERT INTO changes VALUES " + pipeline::ChangeValues(slice));
    ASSERT_EQ(changed.exit_code, 0) << changed.err;
    // Ids rows..rows+k; every third amount is not positive (silver quarantines it).
    RunOutput added = Sql(fmt::format(
        "INSERT INTO raw SELECT {0} + range, CASE WHEN range % 3 = 0 THEN 0 ELSE range END FROM range({1})",
        rows, kRowsPerRound));
    ASSERT_EQ(added.exit_code, 0) << added.err;
    rows += kRowsPerRound;
    RunAndKill(/*continuous=*/run % 2 == 1);
  }
  std::printf("%d of %d runs were killed before they ended\n", killed_, kRuns);
  EXPECT_GT(killed_, kRuns / 3) << "runs should mostly have been killed before they ended";
  RunOutput last = RunBasin({"pipeline", "run", folder_.string(), "-w", Warehouse()});
  ASSERT_EQ(last.exit_code, 0) << last.err;

  EXPECT_EQ(Value("SELECT count(*) || '/' || count(DISTINCT id) FROM bronze"),
            fmt::format("{0}/{0}", rows + 5));  // with the backfill's 5 rows, once
  EXPECT_EQ(Value("SELECT count(*) FROM bronze WHERE id < 0"), "5");
  const std::string silver =
      Value("SELECT count(*) || '/' || count(DISTINCT id) || '/' || sum(amount) FROM silver");
  EXPECT_EQ(silver, Value("SELECT count(*) || '/' || count(DISTINCT id) || '/' || sum(amount) FROM "
                          "(SELECT * FROM raw UNION ALL SELECT * FROM archive) WHERE amount > 0"));
  EXPECT_EQ(Value("SELECT count(*) || '/' || count(DISTINCT id) FROM silver_quarantine"),
            Value("SELECT count(*) || '/' || count(*) FROM raw WHERE amount <= 0"));
  EXPECT_EQ(Value("SELECT count(*) FROM silver_quarantine WHERE failed_expectations <> ['positive']"), "0");
  // The event log's expectation counts, written before each batch commits with its txn, are
  // the rows kept and quarantined, whatever the kills.
  EXPECT_EQ(
      Value("SELECT sum(passed_rows) || '/' || sum(failed_rows) FROM payments_event_log WHERE event_type = "
            "'expectation' AND flow = 'silver'"),
      Value("SELECT (SELECT count(*) FROM silver) || '/' || (SELECT count(*) FROM silver_quarantine)"));
  EXPECT_EQ(Value("SELECT n || '/' || total FROM gold"),
            Value("SELECT count(*) || '/' || sum(amount) FROM silver"));
  EXPECT_EQ(
      Value("SELECT string_agg(id || '=' || coalesce(name, 'NULL') || ';', '' ORDER BY id) FROM customers"),
      pipeline::ModelType1(changes));
  EXPECT_EQ(
      Value("SELECT string_agg(id || '=' || coalesce(name, 'NULL') || '@' || __START_AT || '-' || "
            "coalesce(__END_AT::VARCHAR, '') || ';', '' ORDER BY id, __START_AT) FROM customers_history"),
      pipeline::ModelType2(changes));
}

}  // namespace
}  // namespace basin
