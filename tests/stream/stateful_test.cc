// Stateful streams (stream/stateful.h): a source with `WATERMARK ts DELAY OF interval`.
// De-duplication (SELECT DISTINCT ON) and tumbling windows (GROUP BY window(ts, size)) give,
// batch after batch and across restarts, what the same query gives run once as a batch over
// all the data that was on time; late rows are counted and dead-lettered; queries whose
// results a watermark cannot bound are refused, naming why.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "kafka_test_util.h"
#include "runner_test_util.h"
#include "storage/faulty_object_store.h"
#include "stream/batch_state.h"
#include "stream/kafka/generator.h"
#include "stream/runner.h"
#include "testing/test_util.h"

namespace basin::stream {
namespace {

// Runs one batch of `statement` in a runner of its own, as a restarted stream would: its
// late rows (-1, and a test failure, when it fails or has nothing to read).
int64_t LateRowsOfOneBatch(sql::Session& session, std::shared_ptr<ObjectStore> checkpoint,
                           const std::string& statement) {
  auto runner = StreamRunner::Open(session, std::move(checkpoint), statement, SystemClock());
  EXPECT_TRUE(runner.ok()) << runner.status().ToString();
  if (!runner.ok()) return -1;
  auto commit = (*runner)->RunBatch();
  EXPECT_TRUE(commit.ok()) << commit.status().ToString();
  if (!commit.ok() || !*commit) return -1;
  return (*commit)->late_rows;
}

class StatefulStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(session_, sql::Session::Open({.warehouse_dir = warehouse_.str()}));
    ASSERT_OK(session_->Execute("CREATE TABLE events (id BIGINT, ts TIMESTAMP, amount INTEGER)").status());
    checkpoint_ = NewMemoryObjectStore();
  }

  // Events `id` at `seconds` past 2026-01-01 00:00:00, as one commit.
  void Insert(const std::vector<std::tuple<int64_t, int64_t, int64_t>>& events) {
    std::string values;
    for (const auto& [id, seconds, amount] : events) {
      values += std::string(values.empty() ? "" : ", ") + "(" + std::to_string(id) +
                ", TIMESTAMP '2026-01-01 00:00:00' + INTERVAL " + std::to_string(seconds) + " SECOND, " +
                std::to_string(amount) + ")";
    }
    ASSERT_OK(session_->Execute("INSERT INTO events VALUES " + values).status());
  }

  int64_t RunOneBatch(const std::string& statement) {
    return LateRowsOfOneBatch(*session_, checkpoint_, statement);
  }

  // Rows in `table` and rows in neither or only one of `table` and `query` (0: the same rows).
  std::pair<int64_t, int64_t> Compare(const std::string& table, const std::string& query) {
    return basin::testing::TwoCounts(
        *session_, "SELECT (SELECT count(*) FROM " + table + "), (SELECT count(*) FROM ((SELECT * FROM " +
                       table + " EXCEPT ALL SELECT * FROM (" + query + ")) UNION ALL (SELECT * FROM (" +
                       query + ") EXCEPT ALL SELECT * FROM " + table + ")))");
  }

  // The keys of the checkpoint's state/ objects, sorted.
  std::vector<std::string> StateObjects() {
    Result<std::vector<ObjectInfo>> states = checkpoint_->List("state/");
    EXPECT_TRUE(states.ok()) << states.status().ToString();
    std::vector<std::string> keys;
    if (!states.ok()) return keys;
    for (const ObjectInfo& state : *states) keys.push_back(state.key);
    std::sort(keys.begin(), keys.end());
    return keys;
  }

  Status OpenError(const std::string& statement) {
    return StreamRunner::Open(*session_, checkpoint_, statement, SystemClock()).status();
  }

  testing::TempDir warehouse_;
  std::unique_ptr<sql::Session> session_;
  std::shared_ptr<ObjectStore> checkpoint_;
};

TEST_F(StatefulStreamTest, DistinctOnDropsKeysSeenWithinTheWatermarkAsTheBatchQueryDoes) {
  ASSERT_OK(session_->Execute("CREATE TABLE deduped (id BIGINT, ts TIMESTAMP, amount INTEGER)").status());
  const std::string statement =
      "INSERT INTO deduped SELECT DISTINCT ON (id) id, ts, amount FROM STREAM(events) "
      "WATERMARK ts DELAY OF INTERVAL 30 SECONDS WHERE amount > 0";
  int64_t late = 0;
  for (int64_t round = 0; round < 6; round++) {
    std::vector<std::tuple<int64_t, int64_t, int64_t>> events;
    for (int64_t i = 0; i < 10; i++) events.emplace_back(round * 10 + i, round * 20 + i, 1 + i);
    events.emplace_back(round * 10 + 1, round * 20 + 1, 2);  // a duplicate within the batch
    if (round > 0) {
      events.emplace_back(round * 10 - 3, round * 20 - 13, 8);  // one of the batch before, again
    }
    if (round == 2) events.emplace_back(33, 60 + 3, -1);  // filtered out: its key is not taken
    if (round == 3) events.emplace_back(999, 0, 5);       // late: the watermark is at 19 s
    Insert(events);
    late += RunOneBatch(statement);
  }
  EXPECT_EQ(late, 1);
  // The batch query over everything on time gives the same rows.
  EXPECT_EQ(
      Compare("deduped", "SELECT DISTINCT ON (id) id, ts, amount FROM events WHERE amount > 0 AND id <> 999"),
      std::make_pair(int64_t{60}, int64_t{0}));
  // Only the state of the newest two batches is kept, each with keys still within the watermark.
  EXPECT_EQ(StateObjects(),
            (std::vector<std::string>{"state/4.json", "state/4.parquet", "state/5.json", "state/5.parquet"}));
}

// A key leaves the state once the watermark passes its event time plus the delay, in days
// or in months (whose length varies), whether the state stays in one runner or is read back
// by a new one each batch: the key is then emitted again, another one still within the delay
// is not.
TEST_F(StatefulStreamTest, KeysLeaveTheStateWhenTheWatermarkPassesTheirDelayInDaysOrMonths) {
  int sink = 0;
  for (const char* delay : {"INTERVAL 1 MONTH", "INTERVAL 30 DAYS"}) {
    for (const bool reopen : {false, true}) {
      SCOPED_TRACE(std::string(delay) + (reopen ? ", reopened" : ", one runner"));
      checkpoint_ = NewMemoryObjectStore();
      const std::string source = "source_" + std::to_string(sink),
                        target = "deduped_" + std::to_string(sink++);
      ASSERT_OK(session_
                    ->Execute("CREATE TABLE " + source + " (id BIGINT, ts TIMESTAMP); CREATE TABLE " +
                              target + " (id BIGINT, ts TIMESTAMP)")
                    .status());
      const std::string statement = "INSERT INTO " + target + " SELECT DISTINCT ON (id) id, ts FROM STREAM(" +
                                    source + ") WATERMARK ts DELAY OF " + delay;
      ASSERT_OK_AND_ASSIGN(auto runner, StreamRunner::Open(*session_, checkpoint_, statement, SystemClock()));
      // After the second batch the watermark is Feb 8 or 10: id 1 (Jan 1) leaves, id 2 (Feb 5) stays.
      for (const char* rows :
           {"(1, TIMESTAMP '2026-01-01'), (2, TIMESTAMP '2026-02-05')", "(3, TIMESTAMP '2026-03-10')",
            "(1, TIMESTAMP '2026-03-11'), (2, TIMESTAMP '2026-03-11')"}) {
        ASSERT_OK(session_->Execute("INSERT INTO " + source + " VALUES " + rows).status());
        if (reopen) {
          EXPECT_EQ(LateRowsOfOneBatch(*session_, checkpoint_, statement), 0);
        } else {
          ASSERT_OK_AND_ASSIGN(std::optional<BatchCommit> commit, runner->RunBatch());
          EXPECT_TRUE(commit.has_value());
        }
      }
      EXPECT_EQ(basin::testing::FirstColumn(
                    *session_, "SELECT id || ' ' || CAST(ts AS DATE) FROM " + target + " ORDER BY ts"),
                (std::vector<std::string>{"1 2026-01-01", "2 2026-02-05", "3 2026-03-10", "1 2026-03-11"}));
    }
  }
}

// A state of more keys than BatchStateFiles::kMinRowsForChanges: each batch writes the keys
// it added, not all the state holds; a runner kept across batches and one reopened for each
// read the same state (the last full one and the changes since), until the changes outweigh
// it and a full state is written again, and the states before it are deleted.
TEST_F(StatefulStreamTest, ALargeStateIsWrittenAsChangesAndReadBackAcrossRestarts) {
  ASSERT_OK(session_->Execute("CREATE TABLE deduped (id BIGINT, ts TIMESTAMP, amount INTEGER)").status());
  const std::string statement =
      "INSERT INTO deduped SELECT DISTINCT ON (id) id, ts, amount FROM STREAM(events) "
      "WATERMARK ts DELAY OF INTERVAL 7 DAYS";
  // New ids [from, from + count), and ids [again, again + count) again (the same rows:
  // duplicates of an earlier batch's).
  auto insert = [&](int64_t from, int64_t count, int64_t again) {
    auto rows = [](int64_t begin, int64_t end) {
      return "SELECT i, TIMESTAMP '2026-01-01 00:00:00' + to_seconds(i), (i % 7)::INTEGER FROM range(" +
             std::to_string(begin) + ", " + std::to_string(end) + ") t(i)";
    };
    ASSERT_OK(session_
                  ->Execute("INSERT INTO events " + rows(from, from + count) + " UNION ALL " +
                            rows(again, again + count))
                  .status());
  };
  auto state = [&](int64_t batch_id) {
    Result<std::string> text = checkpoint_->Get("state/" + std::to_string(batch_id) + ".json");
    EXPECT_TRUE(text.ok()) << text.status().ToString();
    return text.ok() ? nlohmann::json::parse(*text) : nlohmann::json();
  };
  const int64_t first = BatchStateFiles::kMinRowsForChanges + 10'000;
  insert(0, first, 0);
  EXPECT_EQ(RunOneBatch(statement), 0);
  EXPECT_FALSE(state(0).contains("base"));
  EXPECT_EQ(state(0)["rows"], first);
  // Batches 1 and 2 in one runner (the state stays in memory), 3 and 4 each in a new one;
  // each repeats the ids the batch before added.
  ASSERT_OK_AND_ASSIGN(auto runner, StreamRunner::Open(*session_, checkpoint_, statement, SystemClock()));
  int64_t next = first;
  for (int64_t batch = 1; batch <= 4; batch++) {
    insert(next, 5'000, next - 5'000);
    next += 5'000;
    if (batch <= 2) {
      ASSERT_OK_AND_ASSIGN(std::optional<BatchCommit> commit, runner->RunBatch());
      ASSERT_TRUE(commit.has_value());
      EXPECT_EQ(commit->rows_out, 5'000);
    } else {
      runner.reset();
      EXPECT_EQ(RunOneBatch(statement), 0);
    }
    const nlohmann::json written = state(batch);
    EXPECT_EQ(written["base"], 0) << written.dump();
    EXPECT_EQ(written["rows"], 5'000) << written.dump();  // what it added, not all it holds
    EXPECT_EQ(written["changedRows"], 5'000 * batch) << written.dump();
  }
  EXPECT_EQ(state(4)["changed"], nlohmann::json({1, 2, 3, 4}));
  // The changes would outweigh the full state: batch 5 writes one; from batch 6 on, the
  // states before it are deleted.
  insert(next, 45'000, first);  // batch 1's ids again
  next += 45'000;
  EXPECT_EQ(RunOneBatch(statement), 0);
  EXPECT_FALSE(state(5).contains("base"));
  insert(next, 5'000, first + 10'000);  // batch 3's
  next += 5'000;
  EXPECT_EQ(RunOneBatch(statement), 0);
  EXPECT_EQ(state(6)["base"], 5);
  EXPECT_EQ(StateObjects(),
            (std::vector<std::string>{"state/5.json", "state/5.parquet", "state/6.json", "state/6.parquet"}));
  // Each id once, as the batch query over everything gives.
  EXPECT_EQ(Compare("deduped", "SELECT DISTINCT ON (id) id, ts, amount FROM events"),
            std::make_pair(next, int64_t{0}));
}

TEST_F(StatefulStreamTest, TumblingWindowsAreWrittenOnceWhenTheWatermarkClosesThem) {
  ASSERT_OK(
      session_->Execute("CREATE TABLE per_minute (window_start TIMESTAMP, n BIGINT, total BIGINT)").status());
  const std::string query =
      "SELECT window(ts, '1 minute')['start'] AS window_start, count(*) AS n, "
      "sum(amount) AS total FROM ";
  const std::string statement = "INSERT INTO per_minute " + query +
                                "STREAM(events) WATERMARK ts DELAY OF INTERVAL 10 SECONDS "
                                "GROUP BY window(ts, '1 minute')";
  int64_t late = 0;
  int64_t written_before = 0;
  for (int64_t round = 0; round < 8; round++) {
    std::vector<std::tuple<int64_t, int64_t, int64_t>> events;
    for (int64_t i = 0; i < 5; i++) events.emplace_back(round * 5 + i, round * 25 + i * 5, round + i);
    if (round == 5) events.emplace_back(999, 30, 100);  // its minute closed rounds ago
    Insert(events);
    late += RunOneBatch(statement);
    // A window is never written twice.
    const auto [rows, windows] =
        basin::testing::TwoCounts(*session_, "SELECT count(*), count(DISTINCT window_start) FROM per_minute");
    EXPECT_EQ(rows, windows);
    EXPECT_GE(rows, written_before);
    written_before = rows;
  }
  EXPECT_EQ(late, 1);
  // The last event is at 195 s: the watermark is at 185 s, so minutes 0 to 2 are closed.
  EXPECT_EQ(Compare("per_minute",
                    query + "events WHERE id <> 999 GROUP BY window(ts, '1 minute') "
                            "HAVING window(ts, '1 minute')['end'] <= TIMESTAMP '2026-01-01 00:03:05'"),
            std::make_pair(int64_t{3}, int64_t{0}));
}

// Windows a month long (months vary in length) close as the watermark reaches their end,
// each written once, in a runner kept across batches and in new ones.
TEST_F(StatefulStreamTest, MonthlyWindowsCloseWhenTheWatermarkReachesTheirEnd) {
  ASSERT_OK(
      session_->Execute("CREATE TABLE per_month (window_start TIMESTAMP, n BIGINT, total BIGINT)").status());
  const std::string query =
      "SELECT window(ts, '1 month')['start'] AS window_start, count(*) AS n, sum(amount) AS total FROM ";
  const std::string statement =
      "INSERT INTO per_month " + query +
      "STREAM(events) WATERMARK ts DELAY OF INTERVAL 1 DAY GROUP BY window(ts, '1 month')";
  constexpr int64_t kDay = 86'400;
  ASSERT_OK_AND_ASSIGN(auto runner, StreamRunner::Open(*session_, checkpoint_, statement, SystemClock()));
  // Jan 5 and 20; Feb 3 (the watermark at Feb 2 closes January); Feb 27 and Mar 10 (at Mar
  // 9, February); Apr 2 (at Apr 1, the end of March, which closes it).
  const std::vector<std::vector<std::tuple<int64_t, int64_t, int64_t>>> batches = {
      {{1, 4 * kDay, 10}, {2, 19 * kDay, 20}},
      {{3, 33 * kDay, 30}},
      {{4, 57 * kDay, 40}, {5, 68 * kDay, 50}},
      {{6, 91 * kDay, 60}}};
  const std::vector<int64_t> written = {0, 1, 2, 3};
  for (size_t batch = 0; batch < batches.size(); batch++) {
    Insert(batches[batch]);
    if (batch < 2) {
      ASSERT_OK_AND_ASSIGN(std::optional<BatchCommit> commit, runner->RunBatch());
      EXPECT_TRUE(commit.has_value());
    } else {
      runner.reset();
      EXPECT_EQ(RunOneBatch(statement), 0);
    }
    EXPECT_EQ(basin::testing::TwoCounts(*session_, "SELECT count(*), 0 FROM per_month").first, written[batch])
        << "after batch " << batch;
  }
  EXPECT_EQ(Compare("per_month", query + "events GROUP BY window(ts, '1 month') "
                                         "HAVING window(ts, '1 month')['end'] <= TIMESTAMP '2026-04-01'"),
            std::make_pair(int64_t{3}, int64_t{0}));
}

TEST_F(StatefulStreamTest, HoppingWindowsAreEachWrittenOnceWithEveryRowTheyHold) {
  ASSERT_OK(session_
                ->Execute("CREATE TABLE sliding (window_start TIMESTAMP, window_end TIMESTAMP, n BIGINT, "
                          "total BIGINT)")
                .status());
  const std::string statement =
      "INSERT INTO sliding SELECT window(ts, '1 minute', '20 seconds')['start'], "
      "window(ts, '1 minute', '20 seconds')['end'], count(*), sum(amount) FROM STREAM(events) "
      "WATERMARK ts DELAY OF INTERVAL 5 SECONDS GROUP BY window(ts, '1 minute', '20 seconds')";
  int64_t late = 0;
  for (int64_t round = 0; round < 8; round++) {
    std::vector<std::tuple<int64_t, int64_t, int64_t>> events;
    for (int64_t i = 0; i < 4; i++) events.emplace_back(round * 4 + i, round * 17 + i * 4, round * 10 + i);
    if (round == 6) events.emplace_back(999, 20, 1000);  // its windows all closed by now
    Insert(events);
    late += RunOneBatch(statement);
  }
  EXPECT_EQ(late, 1);
  const auto [rows, windows] =
      basin::testing::TwoCounts(*session_, "SELECT count(*), count(DISTINCT window_start) FROM sliding");
  EXPECT_EQ(rows, windows);
  // The batch query: each row in the three 1-minute windows starting every 20 s that hold
  // it, the windows the last watermark (131 s - 5 s) closed.
  EXPECT_EQ(Compare("sliding",
                    "SELECT w, w + INTERVAL 1 MINUTE, count(*), sum(amount) FROM events, "
                    "unnest(generate_series(time_bucket(INTERVAL 20 SECOND, ts - INTERVAL 1 MINUTE, "
                    "TIMESTAMP '1970-01-01'), ts, INTERVAL 20 SECOND)) AS hop(w) "
                    "WHERE id <> 999 AND w + INTERVAL 1 MINUTE > ts "
                    "AND w + INTERVAL 1 MINUTE <= TIMESTAMP '2026-01-01 00:02:06' GROUP BY w"),
            std::make_pair(int64_t{6}, int64_t{0}));
}

TEST_F(StatefulStreamTest, LateRowsAreDeadLetteredOnceWithTheirEventTime) {
  const std::string name = "stateful-files-" + std::to_string(reinterpret_cast<uintptr_t>(this));
  std::shared_ptr<ObjectStore> folder = NamedMemoryStore(name);
  ASSERT_OK(session_->Execute("CREATE TABLE landed (id BIGINT, ts TIMESTAMP)").status());
  const std::string statement = "INSERT INTO landed SELECT id, ts FROM STREAM read_files('memory://" + name +
                                "', format => 'json', schema => 'id BIGINT, ts TIMESTAMP', "
                                "deadLetterTable => 'late_letters') WATERMARK ts DELAY OF INTERVAL 5 SECONDS";
  ASSERT_OK(folder->Put(
      "a.json",
      "{\"id\": 1, \"ts\": \"2026-01-01 00:01:40\"}\n{\"id\": 2, \"ts\": \"2026-01-01 00:01:42\"}\n"));
  EXPECT_EQ(RunOneBatch(statement), 0);
  ASSERT_OK(folder->Put(
      "b.json",
      "{\"id\": 3, \"ts\": \"2026-01-01 00:00:10\"}\n{\"id\": 4, \"ts\": \"2026-01-01 00:01:50\"}\n"
      "{\"id\": 5}\n"));
  EXPECT_EQ(RunOneBatch(statement), 2);
  EXPECT_EQ(basin::testing::FirstColumn(*session_, "SELECT id FROM landed ORDER BY id"),
            (std::vector<std::string>{"1", "2", "4"}));
  EXPECT_EQ(basin::testing::FirstColumn(*session_,
                                        "SELECT error || ' / ' || decode(value) FROM late_letters "
                                        "ORDER BY error"),
            (std::vector<std::string>{
                "late: event time 2026-01-01 00:00:10+00 is behind the watermark 2026-01-01 00:01:37 / "
                "{\"id\":3,\"ts\":\"2026-01-01 00:00:10+00\"}",
                "late: no event time in \"ts\" / {\"id\":5,\"ts\":null}"}));
  ForgetNamedMemoryStore(name);
}

TEST_F(StatefulStreamTest, ACompleteSinkOverFilesRewritesTheAggregateOfEveryRowAcrossRestarts) {
  const std::string name = "stateful-complete-" + std::to_string(reinterpret_cast<uintptr_t>(this));
  std::shared_ptr<ObjectStore> folder = NamedMemoryStore(name);
  ASSERT_OK(session_->Execute("CREATE TABLE per_region (region VARCHAR, n BIGINT, ids BIGINT)").status());
  const std::string files =
      "read_files('memory://" + name + "', format => 'json', schema => 'id BIGINT, region VARCHAR')";
  const std::string query = "SELECT region, count(*) AS n, count(DISTINCT id) AS ids FROM ";
  const std::string statement =
      "INSERT OVERWRITE per_region " + query + "STREAM " + files + " GROUP BY region";
  for (int round = 0; round < 4; round++) {
    std::string lines;
    for (int i = 0; i < 5; i++) {
      const int id = round * 5 + i;
      lines +=
          "{\"id\": " + std::to_string(id % 7) + ", \"region\": \"" + (id % 3 == 0 ? "eu" : "us") + "\"}\n";
    }
    ASSERT_OK(folder->Put("part-" + std::to_string(round) + ".json", lines));
    EXPECT_EQ(RunOneBatch(statement), 0);
    // Every batch rewrites the sink from everything read so far: as the batch query over the folder.
    EXPECT_EQ(Compare("per_region", query + files + " GROUP BY region"),
              std::make_pair(int64_t{2}, int64_t{0}))
        << "round " << round;
  }
  EXPECT_EQ(basin::testing::FirstColumn(*session_, "SELECT sum(n) FROM per_region"),
            std::vector<std::string>{"20"});
  ForgetNamedMemoryStore(name);
}

TEST_F(StatefulStreamTest, QueriesAWatermarkCannotBoundAreRefusedNamingWhy) {
  ASSERT_OK(session_->Execute("CREATE TABLE sink (id BIGINT)").status());
  const std::string source = " FROM STREAM(events) WATERMARK ts DELAY OF INTERVAL 10 SECONDS";
  Status distinct = OpenError("INSERT INTO sink SELECT DISTINCT id" + source);
  EXPECT_EQ(distinct.code(), ErrorCode::kInvalidArgument) << distinct.ToString();
  EXPECT_NE(distinct.message().find("DISTINCT ON"), std::string::npos) << distinct.ToString();
  Status grouped = OpenError("INSERT INTO sink SELECT count(*)" + source + " GROUP BY id");
  EXPECT_EQ(grouped.code(), ErrorCode::kInvalidArgument) << grouped.ToString();
  EXPECT_NE(grouped.message().find("window(ts, 'size')"), std::string::npos) << grouped.ToString();
  Status other_column =
      OpenError("INSERT INTO sink SELECT count(*)" + source + " GROUP BY window(id, '1 minute')");
  EXPECT_EQ(other_column.code(), ErrorCode::kInvalidArgument) << other_column.ToString();
  Status bad_size = OpenError("INSERT INTO sink SELECT count(*)" + source + " GROUP BY window(ts, id)");
  EXPECT_EQ(bad_size.code(), ErrorCode::kInvalidArgument) << bad_size.ToString();
  // A hopping window is for streams: a batch query says so.
  Status batch_hopping =
      session_->Execute("SELECT window(TIMESTAMP '2026-01-01 00:00:00', '1 minute', '10 seconds')").status();
  EXPECT_NE(batch_hopping.message().find("WATERMARK"), std::string::npos) << batch_hopping.ToString();
  // A complete sink over a table reads its whole snapshot each batch: no watermark to keep.
  Status overwrite = OpenError("INSERT OVERWRITE sink SELECT id" + source);
  EXPECT_EQ(overwrite.code(), ErrorCode::kNotImplemented) << overwrite.ToString();
  // Outside a stream it is refused as any STREAM source is: it runs as a stream.
  Status outside = session_->Execute("INSERT INTO sink SELECT id" + source).status();
  EXPECT_EQ(outside.code(), ErrorCode::kInvalidArgument) << outside.ToString();
  EXPECT_NE(outside.message().find("basin stream run"), std::string::npos) << outside.ToString();
}

// The seed story's payments from Kafka, with duplicates, late and malformed records.
class KafkaStatefulTest : public kafka::testing::KafkaStreamTest {
 protected:
  void SetUp() override {
    SetUpSession("CREATE TABLE paid (id BIGINT NOT NULL, amount DECIMAL(12,2), ts TIMESTAMP)");
  }

  // `count` events, half a second of event time apart, spread over the partitions.
  void Produce(kafka::PaymentEventGenerator& generator, ManualClock& clock, int count) {
    for (int i = 0; i < count; i++) {
      clock.AdvanceMs(500);
      kafka::PaymentEvent event = generator.Next();
      if (event.kind == kafka::PaymentEventKind::kGood) good_.insert(event.id);
      if (event.kind == kafka::PaymentEventKind::kLate) late_.insert(event.id);
      kafka::ProducerRecord record;
      record.partition = static_cast<int32_t>(event.id % 3);
      record.key = event.key;
      record.value = event.value;
      ASSERT_OK(producer_->Produce("payments", record));
    }
    ASSERT_OK(producer_->Flush(10'000));
  }

  // The ids `query` returns.
  std::set<int64_t> Ids(const std::string& query) {
    std::set<int64_t> ids;
    for (const std::string& id : basin::testing::FirstColumn(*session_, query)) ids.insert(std::stoll(id));
    return ids;
  }

  std::set<int64_t> good_, late_;  // ids of good records and of late ones (duplicates repeat either)
};

TEST_F(KafkaStatefulTest, EachPaymentOnceAndLateOnesDeadLetteredAcrossRestarts) {
  const std::string statement =
      "INSERT INTO paid SELECT DISTINCT ON (id) id, amount, ts FROM STREAM read_kafka(bootstrapServers => '" +
      cluster_->bootstrap_servers() +
      "', subscribe => 'payments', startingOffsets => 'earliest', valueFormat => 'json', "
      "schema => 'id BIGINT NOT NULL, amount DECIMAL(12,2), ts TIMESTAMP', deadLetterTable => 'dlq') "
      "WATERMARK ts DELAY OF INTERVAL 1 MINUTE";
  auto clock = std::make_shared<ManualClock>(1'780'000'000'000);
  ASSERT_OK_AND_ASSIGN(
      kafka::PaymentEventGenerator generator,
      kafka::PaymentEventGenerator::Make(
          {.malformed_fraction = 0.05, .duplicate_fraction = 0.15, .late_fraction = 0.05, .seed = 11},
          clock));
  int64_t late = 0;
  for (int round = 0; round < 4; round++) {
    Produce(generator, *clock, 300);
    late += LateRowsOfOneBatch(*session_, checkpoint_, statement);
  }
  // Each payment once: duplicates were dropped within the watermark, or were late.
  const auto [rows, ids] =
      basin::testing::TwoCounts(*session_, "SELECT count(*), count(DISTINCT id) FROM paid");
  EXPECT_EQ(rows, ids);
  const std::set<int64_t> paid = Ids("SELECT id FROM paid");
  for (int64_t id : good_) EXPECT_TRUE(paid.contains(id)) << "payment " << id << " is missing";
  // A late payment is written (in the first batch, which has no watermark yet) or
  // dead-lettered (a repeat of it may be too, once the watermark passed it).
  const std::set<int64_t> dead_late =
      Ids("SELECT DISTINCT json_extract(decode(value), '$.id')::BIGINT FROM dlq WHERE error LIKE 'late:%'");
  for (int64_t id : late_) EXPECT_TRUE(paid.contains(id) || dead_late.contains(id)) << "late payment " << id;
  for (int64_t id : paid) EXPECT_TRUE(good_.contains(id) || late_.contains(id)) << id;
  EXPECT_GT(late, 0);
  EXPECT_EQ(
      basin::testing::TwoCounts(*session_, "SELECT count(*) FILTER (WHERE error LIKE 'late:%'), 0 FROM dlq")
          .first,
      late);
}

// The checkpoint store, where the state lives, fails one call in six at random (half the
// time after the write took effect), and the runner is reopened at times, as a restarted
// process would be: every payment lands once, duplicates dropped, as without failures.
TEST_F(KafkaStatefulTest, CheckpointStoreFailuresNeitherLoseNorRepeatAPayment) {
  auto faulty = std::make_shared<FaultyObjectStore>(NewMemoryObjectStore(), FaultOptions{});
  checkpoint_ = faulty;
  const std::string statement =
      "INSERT INTO paid SELECT DISTINCT ON (id) id, amount, ts FROM STREAM read_kafka(bootstrapServers => '" +
      cluster_->bootstrap_servers() +
      "', subscribe => 'payments', startingOffsets => 'earliest', maxOffsetsPerTrigger => 40, "
      "valueFormat => 'json', schema => 'id BIGINT NOT NULL, amount DECIMAL(12,2), ts TIMESTAMP') "
      "WATERMARK ts DELAY OF INTERVAL 1 MINUTE";
  auto clock = std::make_shared<ManualClock>(1'780'000'000'000);
  ASSERT_OK_AND_ASSIGN(kafka::PaymentEventGenerator generator,
                       kafka::PaymentEventGenerator::Make({.duplicate_fraction = 0.2, .seed = 5}, clock));
  int produced = 0;
  const int failures = basin::testing::RunThroughCheckpointFaults(
      *faulty, [&] { return StreamRunner::Open(*session_, checkpoint_, statement, SystemClock()); },
      [&](uint64_t attempt) {
        if (attempt % 20 == 1 && produced < 400) {
          Produce(generator, *clock, 50);
          produced += 50;
        }
        return produced < 400;
      });
  EXPECT_GT(failures, 5);
  const auto [rows, ids] =
      basin::testing::TwoCounts(*session_, "SELECT count(*), count(DISTINCT id) FROM paid");
  EXPECT_EQ(rows, ids);
  EXPECT_EQ(Ids("SELECT id FROM paid"), good_);
}

}  // namespace
}  // namespace basin::stream
