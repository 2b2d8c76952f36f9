// Exactly once under SIGKILL: `basin stream run` is killed at random moments (planning,
// writing data files, between the data files and the Delta commit, between the commit and
// its marker) over more than 20 restarts, with more input arriving between them; a final
// available-now run drains the rest. The sink then holds every input row exactly once. The
// same for a Kafka source into an INSERT sink (with malformed records and rows the sink's
// CHECK constraint refuses, which the dead-letter table holds once each), for a folder of files into an
// INSERT sink (with a malformed line in each file, dead-lettered once each), and for a table source into a
// MERGE sink, and for a Kafka source de-duplicated within a watermark (its state in the
// checkpoint).
// The seed is printed; BASIN_CRASH_SEED replays a run, and BASIN_CRASH_STDERR=FILE keeps the
// killed runs' stderr (appended) to see why one failed.
#include <fmt/format.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "basin/kafka_dev.h"
#include "cli/basin_process.h"
#include "stream/kafka/producer.h"
#include "testing/child_process.h"

namespace basin {
namespace {

constexpr int kRestarts = 22;
constexpr int kRowsPerRound = 40;

class StreamCrashTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(BasinBinary())) GTEST_SKIP() << "no basin binary at " << BasinBinary();
    random_.seed(CrashTestSeed());
  }

  RunOutput Sql(const std::string& sql) {
    return RunBasin({"sql", "-w", warehouse_.str(), "--format", "csv", "-c", sql});
  }

  std::vector<std::string> StreamArgs(const std::string& trigger, const std::string& statement) const {
    return {"stream",    "run",   "-w",         warehouse_.str(), "--checkpoint", checkpoint_.str(),
            "--trigger", trigger, "--interval", "20ms",           "-c",           statement};
  }

  // Starts the stream and kills it with SIGKILL: every other time after a random while
  // (`max_ms` at most: about the time a run takes to start and catch up), else a random
  // 0 to 8 ms after the run has written the offsets of a new batch, so that on a machine of
  // any speed some kills land inside a batch (reading, writing files or committing).
  void RunAndKill(const std::string& statement, int max_ms) {
    const int64_t planned_before = NewestPlannedBatch();
    const pid_t pid = StartKillableBasin(StreamArgs("continuous", statement));
    ASSERT_GT(pid, 0);
    if (std::bernoulli_distribution(0.5)(random_)) {
      std::uniform_int_distribution<int> pause_ms(30, max_ms);
      std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms(random_)));
    } else {
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (NewestPlannedBatch() == planned_before && std::chrono::steady_clock::now() < give_up) {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
      std::this_thread::sleep_for(
          std::chrono::milliseconds(std::uniform_int_distribution<int>(0, 8)(random_)));
    }
    ASSERT_EQ(kill(pid, SIGKILL), 0);
    EXPECT_EQ(testing::WaitChild(pid), -SIGKILL);
    // Where the kill landed, as the checkpoint tells: a batch planned and not marked done
    // (killed while reading, writing files or committing) or between batches.
    RunOutput status = RunBasin({"stream", "status", "--checkpoint", checkpoint_.str(), "--json"});
    if (status.exit_code != 0) {
      killed_before_first_plan_++;
      return;
    }
    auto planned = status.out.find("\"lastPlanned\":");
    auto committed = status.out.find("\"lastCommitted\":");
    ASSERT_NE(planned, std::string::npos) << status.out;
    ASSERT_NE(committed, std::string::npos) << status.out;
    const std::string p = status.out.substr(planned + 14, status.out.find(',', planned) - planned - 14);
    const std::string c = status.out.substr(committed + 16, status.out.find(',', committed) - committed - 16);
    if (p != c) killed_in_batch_++;
  }

  // The newest batch id with an offsets object in the checkpoint folder; -1 for none.
  int64_t NewestPlannedBatch() const {
    int64_t newest = -1;
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(checkpoint_.path() / "offsets", error)) {
      const std::string name = entry.path().filename().string();
      const std::string digits = name.substr(0, 20);
      if (name.size() != 25 || !name.ends_with(".json") ||
          !std::all_of(digits.begin(), digits.end(), ::isdigit)) {
        continue;  // a temporary file the store has not yet renamed
      }
      newest = std::max<int64_t>(newest, std::stoll(digits));
    }
    return newest;
  }

  // Drains what is left with an available-now run, which must end cleanly.
  void Drain(const std::string& statement) {
    RunOutput last = RunBasin(StreamArgs("available-now", statement));
    ASSERT_EQ(last.exit_code, 0) << last.err;
  }

  // After the kills (some of which must have landed inside a batch), drains the stream;
  // `table` then holds `rows` rows, each id once.
  void DrainAndExpectEachOnce(const std::string& statement, const std::string& table, int rows) {
    ExpectKillsInsideBatches();
    Drain(statement);
    const std::string expected = std::to_string(rows) + "," + std::to_string(rows);
    const std::string counts = Counts(table);
    EXPECT_NE(counts.find(expected), std::string::npos) << counts << " expected " << expected;
  }

  // "rows,distinct ids" of `table`.
  std::string Counts(const std::string& table) {
    RunOutput out = Sql("SELECT count(*) || ',' || count(DISTINCT id) FROM " + table);
    EXPECT_EQ(out.exit_code, 0) << out.err;
    return out.out;
  }

  // Report where the kills landed; the test asserts some landed inside a batch.
  void ExpectKillsInsideBatches() {
    std::printf("kills: %d inside a batch, %d before the first plan, of %d\n", killed_in_batch_,
                killed_before_first_plan_, kRestarts);
    EXPECT_GT(killed_in_batch_, 0);
  }

  int killed_in_batch_ = 0;
  int killed_before_first_plan_ = 0;
  std::mt19937_64 random_;
  testing::TempDir warehouse_;
  testing::TempDir checkpoint_;
};

TEST_F(StreamCrashTest, KafkaIntoInsertSinkExactlyOnce) {
  ASSERT_OK_AND_ASSIGN(auto cluster, KafkaDevCluster::Start({{"events", 3}}));
  ASSERT_OK_AND_ASSIGN(auto producer, stream::kafka::KafkaProducer::Open(cluster->bootstrap_servers()));
  ASSERT_EQ(Sql("CREATE TABLE bronze (id BIGINT, CONSTRAINT known CHECK (id >= 0))").exit_code, 0);
  const std::string statement =
      "INSERT INTO bronze SELECT id FROM STREAM read_kafka(bootstrapServers => '" +
      cluster->bootstrap_servers() +
      "', subscribe => 'events', startingOffsets => 'earliest', maxOffsetsPerTrigger => 25, "
      "valueFormat => 'json', schema => 'id BIGINT NOT NULL', deadLetterTable => 'events_dlq')";
  // Every seventh record is malformed (in two ways), and goes to the dead-letter table; so
  // does every eleventh, whose negative id the sink's CHECK constraint refuses.
  int good = 0;
  int malformed = 0;
  int refused = 0;
  for (int restart = 0; restart < kRestarts; restart++) {
    for (int i = 0; i < kRowsPerRound; i++) {
      stream::kafka::ProducerRecord record;
      const int n = good + malformed + refused;
      record.partition = n % 3;
      if (n % 7 == 6) {
        record.value = malformed % 2 == 0 ? "{\"id\": \"m" + std::to_string(malformed) + "\"}"
                                          : "m" + std::to_string(malformed);
        malformed++;
      } else if (n % 11 == 10) {
        record.value = "{\"id\": " + std::to_string(-1 - refused++) + "}";
      } else {
        record.value = "{\"id\": " + std::to_string(good++) + "}";
      }
      ASSERT_OK(producer->Produce("events", record));
    }
    ASSERT_OK(producer->Flush(10'000));
    RunAndKill(statement, 900);
  }
  DrainAndExpectEachOnce(statement, "bronze", good);
  // Each malformed record once, by its coordinates and by its bytes; each refused row once,
  // by its values.
  RunOutput letters = Sql(
      "SELECT count(*) FILTER (topic IS NOT NULL) || ',' || count(DISTINCT (partition, \"offset\")) FILTER "
      "(topic IS NOT NULL) || ',' || count(*) FILTER (topic IS NULL) || ',' || count(DISTINCT value) FROM "
      "events_dlq");
  ASSERT_EQ(letters.exit_code, 0) << letters.err;
  const std::string expected = std::to_string(malformed) + "," + std::to_string(malformed) + "," +
                               std::to_string(refused) + "," + std::to_string(malformed + refused);
  EXPECT_NE(letters.out.find(expected), std::string::npos) << letters.out << " expected " << expected;
}

// De-duplication within a watermark: the keys emitted live in the checkpoint's state, which
// every kill must leave consistent with the sink, or a duplicate would land twice.
TEST_F(StreamCrashTest, KafkaDeduplicatedWithinAWatermarkExactlyOnce) {
  ASSERT_OK_AND_ASSIGN(auto cluster, KafkaDevCluster::Start({{"events", 3}}));
  ASSERT_OK_AND_ASSIGN(auto producer, stream::kafka::KafkaProducer::Open(cluster->bootstrap_servers()));
  ASSERT_EQ(Sql("CREATE TABLE once (id BIGINT, ts TIMESTAMP)").exit_code, 0);
  const std::string statement =
      "INSERT INTO once SELECT DISTINCT ON (id) id, ts FROM STREAM read_kafka(bootstrapServers => '" +
      cluster->bootstrap_servers() +
      "', subscribe => 'events', startingOffsets => 'earliest', maxOffsetsPerTrigger => 25, "
      "valueFormat => 'json', schema => 'id BIGINT NOT NULL, ts TIMESTAMP') WATERMARK ts DELAY OF INTERVAL 1 "
      "HOUR";
  // Each round: new ids, each followed (a few records later, maybe in the next batch or
  // round) by a repeat of an id sent earlier, with its event time (a second per id).
  int ids = 0;
  for (int restart = 0; restart < kRestarts; restart++) {
    for (int i = 0; i < kRowsPerRound; i++) {
      const int id = i % 2 == 0 || ids == 0 ? ids++ : static_cast<int>(random_() % ids);
      stream::kafka::ProducerRecord record;
      record.partition = static_cast<int32_t>(random_() % 3);
      const std::string value = fmt::format(R"({{"id": {}, "ts": "2026-01-01 {:02}:{:02}:{:02}"}})", id,
                                            id / 3600, id / 60 % 60, id % 60);
      record.value = value;
      ASSERT_OK(producer->Produce("events", record));
    }
    ASSERT_OK(producer->Flush(10'000));
    RunAndKill(statement, 900);
  }
  DrainAndExpectEachOnce(statement, "once", ids);
}

TEST_F(StreamCrashTest, FilesIntoInsertSinkExactlyOnce) {
  testing::TempDir landing;
  ASSERT_EQ(Sql("CREATE TABLE bronze (id BIGINT)").exit_code, 0);
  const std::string statement = "INSERT INTO bronze SELECT id FROM STREAM read_files('" + landing.str() +
                                "', format => 'json', schema => 'id BIGINT', deadLetterTable => 'files_dlq', "
                                "maxFilesPerTrigger => 1)";
  // Each round lands files of ten records and one malformed line, each written under a
  // hidden name and renamed, as a producer that never shows a half-written file does.
  int next_id = 0;
  int files = 0;
  for (int restart = 0; restart < kRestarts; restart++) {
    for (int file = 0; file < kRowsPerRound / 10; file++, files++) {
      const std::filesystem::path hidden = landing.path() / "_incoming.json";
      {
        std::ofstream out(hidden);
        for (int i = 0; i < 10; i++) {
          out << "{\"id\": " << next_id++ << "}\n";
          if (i == file % 10) out << "{\"id\": " << next_id << "\n";
        }
      }
      std::filesystem::rename(
          hidden, landing.path() / ("r" + std::to_string(restart) + "-" + std::to_string(file) + ".json"));
    }
    RunAndKill(statement, 600);
  }
  DrainAndExpectEachOnce(statement, "bronze", next_id);
  RunOutput letters = Sql("SELECT count(*) || ',' || count(DISTINCT file) FROM files_dlq");
  ASSERT_EQ(letters.exit_code, 0) << letters.err;
  const std::string expected = std::to_string(files) + "," + std::to_string(files);
  EXPECT_NE(letters.out.find(expected), std::string::npos) << letters.out << " expected " << expected;
}

TEST_F(StreamCrashTest, TableIntoMergeSinkExactlyOnce) {
  ASSERT_EQ(
      Sql("CREATE TABLE bronze (id BIGINT, v BIGINT); CREATE TABLE silver (id BIGINT, v BIGINT, seen BIGINT)")
          .exit_code,
      0);
  // Each round appends ids that are new and ids seen before (with a larger v): the MERGE
  // keeps one row per id with the largest v, and counts the batches that touched it.
  const std::string statement =
      "MERGE INTO silver t USING (SELECT id, max(v) AS v FROM STREAM(bronze) GROUP BY id) s ON t.id = s.id\n"
      "WHEN MATCHED THEN UPDATE SET v = greatest(t.v, s.v), seen = t.seen + 1\n"
      "WHEN NOT MATCHED THEN INSERT (id, v, seen) VALUES (s.id, s.v, 1)";
  int next_id = 0;
  for (int restart = 0; restart < kRestarts; restart++) {
    const int first = next_id;
    next_id += kRowsPerRound / 2;
    // New ids first..next_id, and again the previous round's ids with v = this round.
    const std::string sql = "INSERT INTO bronze SELECT range, " + std::to_string(restart) + " FROM range(" +
                            std::to_string(std::max(0, first - kRowsPerRound / 2)) + ", " +
                            std::to_string(next_id) + ")";
    ASSERT_EQ(Sql(sql).exit_code, 0);
    RunAndKill(statement, 450);
  }
  DrainAndExpectEachOnce(statement, "silver", next_id);
  // Every id holds the largest v bronze has for it: nothing lost, nothing merged from a
  // batch that ran twice over different data.
  RunOutput wrong =
      Sql("SELECT count(*) FROM silver s JOIN (SELECT id, max(v) AS v FROM bronze GROUP BY id) b USING (id) "
          "WHERE s.v <> b.v");
  ASSERT_EQ(wrong.exit_code, 0) << wrong.err;
  EXPECT_NE(wrong.out.find("\n0"), std::string::npos) << wrong.out;
}

}  // namespace
}  // namespace basin
