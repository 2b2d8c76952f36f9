// A stream whose statement reads several STREAM sources: each source reads its own new rows
// in every batch (the others none, when only one has something new), exactly once across
// restarts and a batch planned before a crash; each source's dead letters are kept; and the
// statements such a stream refuses.
#include <gtest/gtest.h>

#include "kafka_test_util.h"
#include "runner_test_util.h"
#include "stream/checkpoint.h"
#include "stream/runner.h"

namespace basin::stream {
namespace {

using json = nlohmann::json;

class MultiSourceTest : public kafka::testing::KafkaStreamTest {
 protected:
  void SetUp() override {
    SetUpSession(
        "CREATE TABLE sink (v VARCHAR, src VARCHAR, o BIGINT); CREATE TABLE history (id BIGINT, v VARCHAR)");
    if (HasFatalFailure()) return;
    ASSERT_OK(cluster_->CreateTopic({"refunds", 1}));
  }

  std::string Kafka(const std::string& topic, const std::string& more = "") const {
    return "read_kafka(bootstrapServers => '" + cluster_->bootstrap_servers() + "', subscribe => '" + topic +
           "', startingOffsets => 'earliest'" + more + ")";
  }

  // Two topics and a table into one sink.
  std::string Statement() const {
    return "INSERT INTO sink\n"
           "SELECT decode(value), 'payments', \"offset\" FROM STREAM " +
           Kafka("payments") + "\nUNION ALL SELECT decode(value), 'refunds', \"offset\" FROM STREAM " +
           Kafka("refunds") + "\nUNION ALL SELECT v, 'history', id FROM STREAM(history)";
  }

  void History(int64_t from, int64_t count) {
    ASSERT_OK(session_
                  ->Execute("INSERT INTO history SELECT range, 'h' || range FROM range(" +
                            std::to_string(from) + ", " + std::to_string(from + count) + ")")
                  .status());
  }

  int64_t RowsOut(StreamRunner& runner) {
    auto commit = runner.RunBatch();
    EXPECT_TRUE(commit.ok()) << commit.status().ToString();
    if (!commit.ok() || !*commit) return -1;
    return (*commit)->rows_out;
  }

  // Rows in the sink, and distinct (source, value) pairs among them.
  std::pair<int64_t, int64_t> Counts() {
    return basin::testing::TwoCounts(*session_, "SELECT count(*), count(DISTINCT (src, v)) FROM sink");
  }
};

TEST_F(MultiSourceTest, EachSourceReadsItsOwnNewRowsExactlyOnce) {
  Produce("payments", 0, 0, 50);
  History(0, 5);
  ASSERT_OK_AND_ASSIGN(auto runner, OpenRunner(Statement()));
  EXPECT_EQ(RowsOut(*runner), 55);  // refunds has nothing yet
  ASSERT_OK_AND_ASSIGN(auto folder, StreamCheckpoint::Open(checkpoint_, runner->metadata()));
  ASSERT_OK_AND_ASSIGN(json first, folder->ReadOffsets(0));
  ASSERT_EQ(first["sources"].size(), 3u);
  EXPECT_EQ(first["sources"][0]["kind"], "kafka");
  EXPECT_TRUE(first["sources"][1]["idle"].get<bool>()) << first.dump();
  EXPECT_EQ(first["sources"][2]["kind"], "table");

  Produce("refunds", 0, 100, 10);
  EXPECT_EQ(RowsOut(*runner), 10);  // only refunds has something new
  ASSERT_OK_AND_ASSIGN(std::optional<BatchCommit> idle, runner->RunBatch());
  EXPECT_FALSE(idle);  // none has: no batch

  // Another run resumes each source where it was.
  runner.reset();
  History(5, 2);
  Produce("payments", 1, 50, 5);
  ASSERT_OK_AND_ASSIGN(auto again, OpenRunner(Statement()));
  EXPECT_EQ(RowsOut(*again), 7);
  EXPECT_EQ(Counts(), std::make_pair(int64_t{72}, int64_t{72}));
  auto by_source = session_->Execute(
      "SELECT string_agg(src || '=' || n, ',' ORDER BY src) FROM "
      "(SELECT src, count(*) AS n FROM sink GROUP BY src)");
  ASSERT_OK(by_source.status());
  EXPECT_EQ(by_source->back().result.at(0, 0), "history=7,payments=55,refunds=10");
}

// A batch planned before a crash, in which two of the three sources had nothing new, runs
// again over exactly what it recorded, and the idle sources go on from where they were.
TEST_F(MultiSourceTest, APlannedBatchWithIdleSourcesIsRunAgainAsRecorded) {
  Produce("payments", 0, 0, 20);
  Produce("refunds", 0, 100, 4);
  History(0, 3);
  ASSERT_OK_AND_ASSIGN(auto runner, OpenRunner(Statement()));
  EXPECT_EQ(RowsOut(*runner), 27);
  ASSERT_OK_AND_ASSIGN(auto folder, StreamCheckpoint::Open(checkpoint_, runner->metadata()));
  ASSERT_OK_AND_ASSIGN(json done, folder->ReadOffsets(0));
  // Batch 1 planned 3 more payments only, then the process died.
  Produce("payments", 0, 20, 3);
  json planned = {{"batchId", 1}, {"plannedTime", 0}, {"sources", json::array()}};
  planned["sources"].push_back({{"index", 0},
                                {"kind", "kafka"},
                                {"ranges", {{"payments", {{"0", {20, 23}}, {"1", {0, 0}}, {"2", {0, 0}}}}}}});
  planned["sources"].push_back({{"index", 1}, {"idle", true}, {"after", done["sources"][1]}});
  planned["sources"].push_back({{"index", 2}, {"idle", true}, {"after", done["sources"][2]}});
  ASSERT_OK(folder->WriteOffsets(1, planned));
  runner.reset();
  Produce("payments", 0, 23, 6);
  Produce("refunds", 0, 104, 2);
  History(3, 1);
  ASSERT_OK_AND_ASSIGN(auto restarted, OpenRunner(Statement()));
  EXPECT_EQ(RowsOut(*restarted), 3);          // the recorded batch, not what is there now
  EXPECT_EQ(RowsOut(*restarted), 6 + 2 + 1);  // then each source's rows after it
  EXPECT_EQ(Counts(), std::make_pair(int64_t{39}, int64_t{39}));
}

TEST_F(MultiSourceTest, EachSourcesDeadLettersAreKept) {
  // Neither topic's records ("v0", ...) are JSON: every one is a dead letter.
  Produce("payments", 2, 0, 6);
  Produce("refunds", 0, 0, 4);
  const std::string json_options = ", valueFormat => 'json', schema => 'id BIGINT', deadLetterTable => 'dlq'";
  const std::string statement =
      "INSERT INTO sink SELECT 'x', 'payments', id FROM STREAM " + Kafka("payments", json_options) +
      "\nUNION ALL SELECT 'y', 'refunds', id FROM STREAM " + Kafka("refunds", json_options);
  ASSERT_OK_AND_ASSIGN(auto runner, OpenRunner(statement));
  ASSERT_OK_AND_ASSIGN(std::optional<BatchCommit> batch, runner->RunBatch());
  ASSERT_TRUE(batch);
  EXPECT_EQ(batch->dead_letters, 10);
  EXPECT_EQ(batch->rows_out, 0);
  auto letters = session_->Execute("SELECT count(*), count(DISTINCT (topic, \"offset\")) FROM dlq");
  ASSERT_OK(letters.status());
  EXPECT_EQ(letters->back().result.at(0, 0), "10");  // the second source's were not taken for a re-run's
  EXPECT_EQ(letters->back().result.at(0, 1), "10");
}

TEST_F(MultiSourceTest, RefusesStateOverSeveralSources) {
  const std::string two =
      "SELECT decode(value), 'a', \"offset\" FROM STREAM " + Kafka("payments") +
      " WATERMARK timestamp DELAY OF INTERVAL 1 SECOND UNION ALL SELECT decode(value), 'b', "
      "\"offset\" FROM STREAM " +
      Kafka("refunds");
  Status watermark = OpenRunner("INSERT INTO sink " + two).status();
  EXPECT_EQ(watermark.code(), ErrorCode::kNotImplemented) << watermark.ToString();
  EXPECT_NE(watermark.message().find("WATERMARK"), std::string::npos) << watermark.ToString();
  Status complete =
      OpenRunner(
          "INSERT OVERWRITE sink SELECT v, 'h', id FROM STREAM(history) UNION ALL SELECT decode(value), "
          "'b', \"offset\" FROM STREAM " +
          Kafka("refunds"))
          .status();
  EXPECT_EQ(complete.code(), ErrorCode::kNotImplemented) << complete.ToString();
}

// Without state, a join of two STREAM sources would match only rows of the same batch: it
// is refused wherever the two meet, and a STREAM source joined with a table is not.
TEST_F(MultiSourceTest, RefusesAJoinOfTwoSources) {
  const std::string payments = "STREAM " + Kafka("payments"), refunds = "STREAM " + Kafka("refunds");
  for (const std::string& query : {
           "SELECT decode(p.value), 'j', p.\"offset\" FROM " + payments + " p JOIN " + refunds +
               " r ON p.key = r.key",
           "SELECT decode(p.value), 'j', p.\"offset\" FROM " + payments + " p, " + refunds + " r",
           "SELECT decode(value), 'j', \"offset\" FROM " + payments + " WHERE key IN (SELECT key FROM " +
               refunds + ")",
           "WITH r AS (SELECT * FROM " + refunds + ") SELECT decode(p.value), 'j', p.\"offset\" FROM " +
               payments + " p JOIN r USING (key)",
       }) {
    Status joined = OpenRunner("INSERT INTO sink " + query).status();
    EXPECT_EQ(joined.code(), ErrorCode::kNotImplemented) << query << ": " << joined.ToString();
    EXPECT_NE(joined.message().find("UNION ALL"), std::string::npos) << joined.ToString();
  }
  // Unioned after each is joined with a table: accepted.
  ASSERT_OK(
      OpenRunner("INSERT INTO sink SELECT decode(p.value), h.v, p.\"offset\" FROM " + payments +
                 " p JOIN history h ON h.id = p.partition UNION ALL SELECT decode(value), 'r', \"offset\" "
                 "FROM " +
                 refunds)
          .status());
}

}  // namespace
}  // namespace basin::stream
