// AUTO CDC flows (stream/cdc.h): random change streams sent out of order over several runs
// against a reference model, for SCD types 1 and 2; IGNORE NULL UPDATES, truncates, TRACK
// HISTORY ON with a struct sequence, tombstone retention, a NULL sequence, and the flows a
// pipeline refuses.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "basin/kafka_dev.h"
#include "pipeline/cdc_model.h"
#include "pipeline/pipeline_harness.h"
#include "stream/batch_state.h"
#include "stream/kafka/producer.h"
#include "testing/test_util.h"

namespace basin::pipeline {
namespace {

class CdcTest : public PipelineHarness {
 protected:
  // customers (type 1) and customers_history (type 2) from the changes in `changes`, read
  // as `source`.
  void WriteCustomerFlows(const std::string& source = "STREAM(changes)") {
    Write("customers.sql",
          "CREATE OR REFRESH STREAMING TABLE customers;\n"
          "CREATE FLOW customers_cdc AS AUTO CDC INTO customers FROM " +
              source +
              "\n"
              "  KEYS (id) APPLY AS DELETE WHEN op = 'DELETE' SEQUENCE BY seq\n"
              "  COLUMNS * EXCEPT (op, seq) STORED AS SCD TYPE 1;\n"
              "CREATE OR REFRESH STREAMING TABLE customers_history;\n"
              "CREATE FLOW customers_history_cdc AS AUTO CDC INTO customers_history FROM " +
              source +
              "\n"
              "  KEYS (id) APPLY AS DELETE WHEN op = 'DELETE' SEQUENCE BY seq\n"
              "  COLUMNS * EXCEPT (op, seq) STORED AS SCD TYPE 2;\n");
    Sql("CREATE TABLE changes (id BIGINT, name VARCHAR, op VARCHAR, seq BIGINT)");
  }
  // Two targets of the same changes: kept keeps tombstones (two days by default),
  // forgotten not at all.
  static std::string TombstoneFlows() {
    return "CREATE OR REFRESH STREAMING TABLE kept;\n"
           "CREATE FLOW kept_cdc AS AUTO CDC INTO kept FROM STREAM(changes)\n"
           "  KEYS (id) APPLY AS DELETE WHEN op = 'DELETE' SEQUENCE BY seq COLUMNS id, name;\n"
           "CREATE OR REFRESH STREAMING TABLE forgotten TBLPROPERTIES ('basin.cdc.tombstoneRetention' = "
           "'interval 0 seconds');\n"
           "CREATE FLOW forgotten_cdc AS AUTO CDC INTO forgotten FROM STREAM(changes)\n"
           "  KEYS (id) APPLY AS DELETE WHEN op = 'DELETE' SEQUENCE BY seq COLUMNS id, name;\n";
  }
  // Runs the pipeline continuously (a pass every 20 ms) until StopContinuous().
  void StartContinuous() {
    PipelineOptions options;
    options.folder = folder_.string();
    options.warehouse = warehouse_;
    options.continuous = true;
    options.interval_ms = 20;
    ASSERT_OK_AND_ASSIGN(continuous_, Pipeline::Open(options));
    continuous_thread_ = std::thread([this] { continuous_ended_ = continuous_->Run(); });
  }
  Result<std::vector<PipelineFlowRun>> StopContinuous() {
    continuous_->Stop();
    continuous_thread_.join();
    return *std::move(continuous_ended_);
  }
  void TearDown() override {
    if (continuous_thread_.joinable()) (void)StopContinuous();
  }
  // What `query` reads (its rows Printed, or its error: the tables may not be there yet)
  // once it reads `wanted`, or after about ten seconds.
  std::string WaitFor(const std::string& query, const std::string& wanted) {
    auto read = [&]() -> std::string {
      auto session = Session::Open({.warehouse = warehouse_});
      if (!session.ok()) return session.status().ToString();
      auto results = (*session)->Execute(query);
      if (!results.ok()) return results.status().ToString();
      const auto& rows = results->back().result.rows;
      return rows.size() == 1 && rows[0].size() == 1 ? rows[0][0].value_or("") : Printed(rows);
    };
    std::string seen = read();
    for (int i = 0; i < 500 && seen != wanted; i++) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      seen = read();
    }
    return seen;
  }
  static constexpr const char* kType1 = "SELECT id, name FROM customers ORDER BY id";
  static constexpr const char* kType2 =
      "SELECT id, name, __START_AT, __END_AT FROM customers_history ORDER BY id, __START_AT";
  std::string Type1() { return Printed(Sql(kType1)); }
  std::string Type2() { return Printed(Sql(kType2)); }

  std::unique_ptr<Pipeline> continuous_;
  std::thread continuous_thread_;
  std::optional<Result<std::vector<PipelineFlowRun>>> continuous_ended_;
};

TEST_F(CdcTest, RandomChangeStreamsMatchTheModelOverSeveralRuns) {
  WriteCustomerFlows();
  for (uint64_t seed : {1u, 2u, 3u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    const std::vector<Change> changes = RandomChanges(rng, /*keys=*/12, /*count=*/180);
    std::vector<Change> sent;
    const size_t runs = 5;
    for (size_t run = 0; run < runs; run++) {
      // Two commits a run, so that a batch holds several; late changes all along.
      for (size_t part = 0; part < 2; part++) {
        const size_t from = changes.size() * (2 * run + part) / (2 * runs);
        const size_t to = changes.size() * (2 * run + part + 1) / (2 * runs);
        std::vector<Change> slice(changes.begin() + from, changes.begin() + to);
        Sql("INSERT INTO changes VALUES " + ChangeValues(slice));
        sent.insert(sent.end(), slice.begin(), slice.end());
      }
      ASSERT_OK(Run().status());
      ASSERT_EQ(Type1(), ModelType1(sent)) << "after run " << run;
      ASSERT_EQ(Type2(), ModelType2(sent)) << "after run " << run;
    }
    // The next seed starts from nothing.
    Sql("DELETE FROM changes");
    ASSERT_OK(Run({"all"}).status());
    ASSERT_EQ(Type1(), "");
  }
}

// A continuous run keeps each flow's stream from pass to pass: each batch (here, a commit
// each) starts from the state the batch before left in memory, its changes applied.
TEST_F(CdcTest, AContinuousRunMatchesTheModelBatchByBatch) {
  WriteCustomerFlows();
  ASSERT_NO_FATAL_FAILURE(StartContinuous());
  std::mt19937_64 rng(7);
  const std::vector<Change> changes = RandomChanges(rng, /*keys=*/10, /*count=*/120);
  std::vector<Change> sent;
  const size_t commits = 12;
  for (size_t part = 0; part < commits; part++) {
    std::vector<Change> slice(changes.begin() + changes.size() * part / commits,
                              changes.begin() + changes.size() * (part + 1) / commits);
    Sql("INSERT INTO changes VALUES " + ChangeValues(slice));
    sent.insert(sent.end(), slice.begin(), slice.end());
    const std::string type1 = ModelType1(sent), type2 = ModelType2(sent);
    ASSERT_EQ(WaitFor(kType1, type1), type1) << "after commit " << part;
    ASSERT_EQ(WaitFor(kType2, type2), type2) << "after commit " << part;
  }
  ASSERT_OK_AND_ASSIGN(std::vector<PipelineFlowRun> flows, StopContinuous());
  // A batch a commit at least (and the first pass's, of the table's empty snapshot, when it
  // ran before the first commit).
  for (const PipelineFlowRun& flow : flows)
    EXPECT_GE(flow.batches, static_cast<int64_t>(commits)) << flow.flow;
}

// The same in memory: a tombstone past its retention leaves the state when the next batch
// starts, and a late change of its key then lands.
TEST_F(CdcTest, AContinuousRunDropsTombstonesFromItsStateInMemoryAtTheirRetention) {
  Write("a.sql", TombstoneFlows());
  Sql("CREATE TABLE changes (id BIGINT, name VARCHAR, op VARCHAR, seq BIGINT)");
  ASSERT_NO_FATAL_FAILURE(StartContinuous());
  const std::string both =
      "SELECT (SELECT coalesce(string_agg(id || '=' || name || ';', '' ORDER BY id), '') FROM kept) || ' ' "
      "|| "
      "(SELECT coalesce(string_agg(id || '=' || name || ';', '' ORDER BY id), '') FROM forgotten)";
  Sql("INSERT INTO changes VALUES (1, 'a', 'UPSERT', 1), (1, NULL, 'DELETE', 3)");
  ASSERT_EQ(WaitFor(both, " "), " ");
  std::this_thread::sleep_for(std::chrono::milliseconds(5));  // past zero seconds
  Sql("INSERT INTO changes VALUES (2, 'b', 'UPSERT', 1)");
  ASSERT_EQ(WaitFor(both, "2=b; 2=b;"), "2=b; 2=b;");
  Sql("INSERT INTO changes VALUES (1, 'late', 'UPSERT', 2)");
  EXPECT_EQ(WaitFor(both, "2=b; 1=late;2=b;"), "2=b; 1=late;2=b;");
  ASSERT_OK(StopContinuous().status());
}

// Debezium's JSON envelope of a change: a snapshot read ('r'), create, update or delete, with
// the row before and after, and the log position as the sequence.
std::string DebeziumEnvelope(const Change& change, const char* op) {
  const std::string row = "{\"id\": " + std::to_string(change.id) +
                          ", \"name\": " + (change.name ? "\"" + *change.name + "\"" : "null") + "}";
  return std::string("{\"before\": ") + (change.deletes ? row : "null") +
         ", \"after\": " + (change.deletes ? "null" : row) + ", \"op\": \"" + op +
         "\", \"ts_ms\": 1767225600000, \"source\": {\"connector\": \"postgresql\", \"lsn\": " +
         std::to_string(change.seq) + "}}";
}

TEST_F(CdcTest, DebeziumChangeEventsFromKafkaThroughTheDocumentedMapping) {
  ASSERT_OK_AND_ASSIGN(auto cluster, KafkaDevCluster::Start({{"pg.public.customers", 2}}));
  ASSERT_OK_AND_ASSIGN(auto producer, stream::kafka::KafkaProducer::Open(cluster->bootstrap_servers()));
  // The mapping of docs/pipelines.md: tombstones left out, the row from `after` (or for a
  // delete `before`), the log position as the sequence.
  Write("customers.sql",
        "CREATE OR REFRESH STREAMING TABLE customer_changes AS\n"
        "SELECT CAST(coalesce(json_extract_string(decode(value), '$.after.id'),\n"
        "                     json_extract_string(decode(value), '$.before.id')) AS BIGINT) AS id,\n"
        "       json_extract_string(decode(value), '$.after.name') AS name,\n"
        "       json_extract_string(decode(value), '$.op') AS op,\n"
        "       CAST(json_extract_string(decode(value), '$.source.lsn') AS BIGINT) AS lsn\n"
        "FROM STREAM read_kafka(bootstrapServers => '" +
            cluster->bootstrap_servers() +
            "', subscribe => 'pg.public.customers', startingOffsets => 'earliest')\n"
            "WHERE value IS NOT NULL;\n"
            "CREATE OR REFRESH STREAMING TABLE customers;\n"
            "CREATE FLOW customers_cdc AS AUTO CDC INTO customers FROM STREAM(customer_changes) KEYS (id)\n"
            "  APPLY AS DELETE WHEN op = 'd' SEQUENCE BY lsn COLUMNS * EXCEPT (op, lsn);\n"
            "CREATE OR REFRESH STREAMING TABLE customers_history;\n"
            "CREATE FLOW customers_history_cdc AS AUTO CDC INTO customers_history FROM "
            "STREAM(customer_changes)\n"
            "  KEYS (id) APPLY AS DELETE WHEN op = 'd' SEQUENCE BY lsn COLUMNS * EXCEPT (op, lsn)\n"
            "  STORED AS SCD TYPE 2;\n");
  std::mt19937_64 rng(7);
  const std::vector<Change> changes = RandomChanges(rng, /*keys=*/8, /*count=*/120);
  std::vector<Change> sent;
  for (size_t run = 0; run < 3; run++) {
    for (size_t i = changes.size() * run / 3; i < changes.size() * (run + 1) / 3; i++) {
      const Change& change = changes[i];
      // The first run is the connector's snapshot; a delete is followed by its key's tombstone.
      const char* op = change.deletes ? "d" : run == 0 ? "r" : (change.seq % 2 == 0 ? "u" : "c");
      const std::string key = "{\"id\": " + std::to_string(change.id) + "}";
      const std::string value = DebeziumEnvelope(change, op);
      stream::kafka::ProducerRecord record;
      record.key = key;
      record.value = value;
      ASSERT_OK(producer->Produce("pg.public.customers", record));
      if (change.deletes) {
        record.value.reset();  // the tombstone
        ASSERT_OK(producer->Produce("pg.public.customers", record));
      }
      sent.push_back(change);
    }
    ASSERT_OK(producer->Flush(10'000));
    ASSERT_OK(Run().status());
    EXPECT_EQ(Type1(), ModelType1(sent)) << "after run " << run;
    EXPECT_EQ(Type2(), ModelType2(sent)) << "after run " << run;
  }
}

TEST_F(CdcTest, IgnoreNullUpdatesAndTruncate) {
  Write("a.sql",
        "CREATE OR REFRESH STREAMING TABLE current;\n"
        "CREATE FLOW current_cdc AS AUTO CDC INTO current FROM STREAM(events) KEYS (id) IGNORE NULL UPDATES\n"
        "  APPLY AS DELETE WHEN op = 'D' APPLY AS TRUNCATE WHEN op = 'T' SEQUENCE BY seq\n"
        "  COLUMNS id, a, b;\n");
  Sql("CREATE TABLE events (id BIGINT, a VARCHAR, b VARCHAR, op VARCHAR, seq BIGINT);"
      "INSERT INTO events VALUES (1, 'x', 'y', 'U', 1), (1, NULL, 'y2', 'U', 2), (2, 'p', 'q', 'U', 3)");
  auto rows = [&] {
    return Printed(Sql("SELECT id, a || '/' || coalesce(b, 'NULL') FROM current ORDER BY id"));
  };
  ASSERT_OK(Run().status());
  EXPECT_EQ(rows(), "1=x/y2;2=p/q;");
  // A NULL keeps the column, in a later run too; after a delete it does not.
  Sql("INSERT INTO events VALUES (1, 'x2', NULL, 'U', 4), (2, NULL, NULL, 'D', 5), (2, 'n', NULL, 'U', 6)");
  ASSERT_OK(Run().status());
  EXPECT_EQ(rows(), "1=x2/y2;2=n/NULL;");
  // A truncate removes the rows whose latest change is older; changes older than it are late.
  Sql("INSERT INTO events VALUES (NULL, NULL, NULL, 'T', 10), (3, 'z', 'z', 'U', 11), (1, 'late', 'l', 'U', "
      "9)");
  ASSERT_OK(Run().status());
  EXPECT_EQ(rows(), "3=z/z;");
  Sql("INSERT INTO events VALUES (2, 'older', 'o', 'U', 8), (2, 'newer', 'w', 'U', 12)");
  ASSERT_OK(Run().status());
  EXPECT_EQ(rows(), "2=newer/w;3=z/z;");
}

TEST_F(CdcTest, TrackHistoryOnSomeColumnsWithAStructSequence) {
  Write("a.sql",
        "CREATE OR REFRESH STREAMING TABLE tiers;\n"
        "CREATE FLOW tiers_cdc AS AUTO CDC INTO tiers FROM STREAM(events) KEYS (id)\n"
        "  SEQUENCE BY struct_pack(ts, n) COLUMNS * EXCEPT (ts, n) STORED AS SCD TYPE 2\n"
        "  TRACK HISTORY ON (tier);\n");
  Sql("CREATE TABLE events (id BIGINT, tier VARCHAR, email VARCHAR, ts BIGINT, n BIGINT);"
      "INSERT INTO events VALUES (1, 'gold', 'a@x', 1, 1), (1, 'gold', 'b@x', 1, 2), (1, 'silver', 'b@x', 2, "
      "0)");
  ASSERT_OK(Run().status());
  // An email change updates the version in place; a tier change starts one. The struct's
  // second field breaks the tie of its first.
  auto rows = [&] {
    return Printed(
        Sql("SELECT id, tier || '/' || email, __START_AT.ts::VARCHAR || '.' || __START_AT.n::VARCHAR, "
            "__END_AT.ts::VARCHAR || '.' || __END_AT.n::VARCHAR FROM tiers ORDER BY id, __START_AT"));
  };
  EXPECT_EQ(rows(), "1=gold/b@x@1.1-2.0;1=silver/b@x@2.0-;");
  // A late tier change lands inside the history.
  Sql("INSERT INTO events VALUES (1, 'bronze', 'b@x', 1, 5)");
  ASSERT_OK(Run().status());
  EXPECT_EQ(rows(), "1=gold/b@x@1.1-1.5;1=bronze/b@x@1.5-2.0;1=silver/b@x@2.0-;");
}

TEST_F(CdcTest, TombstonesKeepLateInsertsOutForTheirRetention) {
  // Two targets of the same changes: one keeps tombstones (two days by default), one not at all.
  Write("a.sql", TombstoneFlows());
  Sql("CREATE TABLE changes (id BIGINT, name VARCHAR, op VARCHAR, seq BIGINT);"
      "INSERT INTO changes VALUES (1, 'a', 'UPSERT', 1), (1, NULL, 'DELETE', 3)");
  ASSERT_OK(Run().status());
  Sql("INSERT INTO changes VALUES (2, 'b', 'UPSERT', 1)");  // a batch later: past zero seconds
  ASSERT_OK(Run().status());
  Sql("INSERT INTO changes VALUES (1, 'late', 'UPSERT', 2)");
  ASSERT_OK(Run().status());
  EXPECT_EQ(Printed(Sql("SELECT id, name FROM kept ORDER BY id")), "2=b;");
  EXPECT_EQ(Printed(Sql("SELECT id, name FROM forgotten ORDER BY id")), "1=late;2=b;");
}

// A type 1 state of more keys than BatchStateFiles::kMinRowsForChanges: the batches after
// the first write what they changed, and each run reads the state back from the first
// batch's and those changes: changed keys replace their rows, tombstones leave at their
// retention (none, or two days), a truncate leaves no key below it.
TEST_F(CdcTest, ALargeStateWrittenAsChangesKeepsTombstonesAndTruncatesAcrossRuns) {
  std::string flows;
  for (const std::string target : {"kept", "forgotten"}) {
    flows += "CREATE OR REFRESH STREAMING TABLE " + target +
             (target == "forgotten" ? " TBLPROPERTIES ('basin.cdc.tombstoneRetention' = 'interval 0 seconds')"
                                    : "") +
             ";\nCREATE FLOW " + target + "_cdc AS AUTO CDC INTO " + target +
             " FROM STREAM(changes) KEYS (id) APPLY AS DELETE WHEN op = 'D' APPLY AS TRUNCATE WHEN op = 'T' "
             "SEQUENCE BY seq COLUMNS id, name;\n";
  }
  Write("a.sql", flows);
  Sql("CREATE TABLE changes (id BIGINT, name VARCHAR, op VARCHAR, seq BIGINT)");
  // Rows/rows named b=the rows named neither a nor b.
  auto rows = [&](const std::string& target) {
    return Printed(Sql("SELECT (SELECT count(*) FROM " + target + ") || '/' || (SELECT count(*) FROM " +
                       target + " WHERE name = 'b'), (SELECT string_agg(id || name, ',' ORDER BY id) FROM " +
                       target + " WHERE name NOT IN ('a', 'b'))"));
  };
  const int64_t keys = stream::BatchStateFiles::kMinRowsForChanges + 10'000;
  // Every key; then 100 updated and 100 deleted; then one more key: a run each.
  for (const std::string& change :
       {"SELECT range, 'a', 'U', range FROM range(1, " + std::to_string(keys + 1) + ")",
        std::string(
            "SELECT range, CASE WHEN range <= 100 THEN 'b' END, CASE WHEN range <= 100 THEN 'U' ELSE 'D' "
            "END, 100000 + range FROM range(1, 201)"),
        "VALUES (" + std::to_string(keys + 1) + ", 'new', 'U', 200001)"}) {
    Sql("INSERT INTO changes " + change);
    ASSERT_OK(Run().status());
  }
  const std::string after_first = std::to_string(keys - 99) + "/100=" + std::to_string(keys + 1) + "new;";
  EXPECT_EQ(rows("kept"), after_first);
  EXPECT_EQ(rows("forgotten"), after_first);
  // The batches after the first wrote their changes.
  int changes = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir_.path())) {
    if (entry.path().parent_path().filename() != "state" || entry.path().extension() != ".json") continue;
    std::ifstream in(entry.path());
    if (nlohmann::json::parse(in).contains("base")) changes++;
  }
  EXPECT_EQ(changes, 4);  // batches 1 and 2 of both flows
  // A change older than a key's delete is late while its tombstone is kept, and applies
  // once the tombstone is gone.
  Sql("INSERT INTO changes VALUES (150, 'late', 'U', 50)");
  ASSERT_OK(Run().status());
  EXPECT_EQ(rows("kept"), after_first);
  EXPECT_EQ(rows("forgotten"),
            std::to_string(keys - 98) + "/100=150late," + std::to_string(keys + 1) + "new;");
  // A truncate, then changes below it (late) and above it.
  for (const char* values : {"(NULL, NULL, 'T', 300000), (7, 'after', 'U', 300001)",
                             "(8, 'old', 'U', 250000), (9, 'x', 'U', 300002)",
                             "(10, 'below', 'U', 299999), (11, 'y', 'U', 300003)"}) {
    Sql(std::string("INSERT INTO changes VALUES ") + values);
    ASSERT_OK(Run().status());
  }
  EXPECT_EQ(rows("kept"), "3/0=7after,9x,11y;");
  EXPECT_EQ(rows("forgotten"), "3/0=7after,9x,11y;");
}

TEST_F(CdcTest, ANullSequenceFailsTheBatchNamingTheKey) {
  WriteCustomerFlows();
  Sql("INSERT INTO changes VALUES (1, 'a', 'UPSERT', 1), (7, 'b', 'UPSERT', NULL)");
  EXPECT_ERROR_WITH(Run().status(), kInvalidArgument, "the change of key {\"id\":7} has a NULL sequence");
  EXPECT_EQ(Type1(), "");  // the table exists, and nothing of the batch committed
  // Mended at the source, the targets are computed again from the start.
  Sql("DELETE FROM changes WHERE seq IS NULL");
  ASSERT_OK(Run({"customers", "customers_history"}).status());
  EXPECT_EQ(Type1(), "1=a;");
}

TEST_F(CdcTest, RefusesFlowsItCannotApply) {
  Sql("CREATE TABLE changes (id BIGINT, name VARCHAR, op VARCHAR, seq BIGINT)");
  const std::string target = "CREATE OR REFRESH STREAMING TABLE t;\n";
  auto load = [&](const std::string& text) {
    Write("a.sql", text);
    return Run().status();
  };
  EXPECT_ERROR_WITH(load(target + "CREATE FLOW f AS AUTO CDC INTO t FROM changes KEYS (id) SEQUENCE BY seq;"),
                    kInvalidArgument, "a.sql:2: flow f reads its changes FROM STREAM(changes)");
  EXPECT_ERROR_WITH(load("CREATE OR REFRESH STREAMING TABLE t (CONSTRAINT c EXPECT (id > 0));\n"
                         "CREATE FLOW f AS AUTO CDC INTO t FROM STREAM(changes) KEYS (id) SEQUENCE BY seq;"),
                    kInvalidArgument, "flow f applies changes to t, which declares expectations");
  EXPECT_ERROR_WITH(
      load(target + "CREATE FLOW f AS AUTO CDC INTO t FROM STREAM(changes) KEYS (id) SEQUENCE BY seq;\n"
                    "CREATE FLOW g AS INSERT INTO t BY NAME SELECT * FROM STREAM(changes);"),
      kInvalidArgument, "flow f applies changes to t, which flow g writes too");
  EXPECT_ERROR_WITH(
      load(target +
           "CREATE FLOW f AS AUTO CDC INTO t FROM STREAM(changes) KEYS (id) SEQUENCE BY seq COLUMNS name;"),
      kInvalidArgument, "the key column id is not among the columns the flow writes (name)");
  EXPECT_ERROR_WITH(
      load(target + "CREATE FLOW f AS AUTO CDC INTO t FROM STREAM(changes) KEYS (id) APPLY AS TRUNCATE WHEN "
                    "op = 'T' SEQUENCE BY seq STORED AS SCD TYPE 2;"),
      kInvalidArgument, "APPLY AS TRUNCATE WHEN is for SCD type 1");
}

}  // namespace
}  // namespace basin::pipeline
