// STREAM(table): a Delta table as a stream's source. The first batch reads the table's
// snapshot, later batches the rows later commits appended, exactly once across restarts and
// a batch planned before a crash; commits that change no data add nothing, and one that
// removed rows stops the stream, naming it, unless skipChangeCommits; the starting options,
// maxFilesPerTrigger and maxBytesPerTrigger, and STREAM table_changes(...).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "delta/history.h"
#include "runner_test_util.h"
#include "sql/session_context.h"
#include "stream/runner.h"
#include "testing/test_util.h"

namespace basin::stream {
namespace {

class TableSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(session_, sql::Session::Open({.warehouse_dir = warehouse_.str()}));
    ASSERT_OK(session_
                  ->Execute("CREATE TABLE bronze (id BIGINT, v VARCHAR); "
                            "CREATE TABLE silver (id BIGINT, v VARCHAR, n INTEGER)")
                  .status());
    checkpoint_ = NewMemoryObjectStore();
  }

  // Unaliased, the source keeps the table's name as its qualifier.
  static constexpr char kStatement[] =
      "INSERT INTO silver SELECT id, upper(v), 1 FROM STREAM(bronze) WHERE bronze.id % 10 <> 0";

  Result<std::unique_ptr<StreamRunner>> OpenRunner(const std::string& statement = kStatement) {
    return StreamRunner::Open(*session_, checkpoint_, statement, SystemClock());
  }

  void Insert(int64_t from, int64_t count) {
    ASSERT_OK(session_
                  ->Execute("INSERT INTO bronze SELECT range, 'v' || range FROM range(" +
                            std::to_string(from) + ", " + std::to_string(from + count) + ")")
                  .status());
  }

  // Rows in silver, and distinct ids among them.
  std::pair<int64_t, int64_t> Counts() {
    return basin::testing::TwoCounts(*session_, "SELECT count(*), count(DISTINCT id) FROM silver");
  }

  int64_t RowsOut(StreamRunner& runner) {
    auto commit = runner.RunBatch();
    EXPECT_TRUE(commit.ok()) << commit.status().ToString();
    if (!commit.ok() || !*commit) return -1;
    return (*commit)->rows_out;
  }

  testing::TempDir warehouse_;
  std::unique_ptr<sql::Session> session_;
  std::shared_ptr<ObjectStore> checkpoint_;
};

TEST_F(TableSourceTest, SnapshotFirstThenAppendsExactlyOnceAcrossRestarts) {
  Insert(0, 50);
  Insert(50, 50);
  ASSERT_OK_AND_ASSIGN(auto runner, OpenRunner());
  EXPECT_EQ(RowsOut(*runner), 90);  // the snapshot: 100 rows, ids divisible by 10 filtered
  ASSERT_OK_AND_ASSIGN(std::optional<BatchCommit> idle, runner->RunBatch());
  EXPECT_FALSE(idle);  // no new commit: no batch

  Insert(100, 20);
  Insert(120, 10);
  EXPECT_EQ(RowsOut(*runner), 27);  // both commits in one batch
  // A commit that changes no data (compaction) adds no row.
  ASSERT_OK(session_->Execute("OPTIMIZE bronze").status());
  EXPECT_EQ(RowsOut(*runner), 0);

  // Another run of the stream resumes after the last batch.
  runner.reset();
  Insert(130, 10);
  ASSERT_OK_AND_ASSIGN(auto again, OpenRunner());
  EXPECT_EQ(RowsOut(*again), 9);
  EXPECT_EQ(Counts(), std::make_pair(int64_t{126}, int64_t{126}));
  auto upper = session_->Execute("SELECT count(*) FROM silver WHERE v = 'V' || id");
  ASSERT_OK(upper.status());
  EXPECT_EQ(upper->back().result.at(0, 0), "126");
}

TEST_F(TableSourceTest, APlannedBatchIsRunAgainOverExactlyItsRecordedVersions) {
  Insert(0, 5);  // version 1
  ASSERT_OK_AND_ASSIGN(auto runner, OpenRunner());
  EXPECT_EQ(RowsOut(*runner), 4);
  Insert(5, 6);  // version 2
  // A crash after batch 1 was planned over version 2 only, before it committed; more
  // commits arrive before the restart.
  ASSERT_OK_AND_ASSIGN(catalog::TableEntry bronze, session_->context().GetTable({"bronze"}));
  ASSERT_OK_AND_ASSIGN(auto folder, StreamCheckpoint::Open(checkpoint_, runner->metadata()));
  ASSERT_OK(folder->WriteOffsets(1, {{"batchId", 1},
                                     {"plannedTime", 0},
                                     {"sources", nlohmann::json::array({{{"index", 0},
                                                                         {"kind", "table"},
                                                                         {"table", "default.bronze"},
                                                                         {"location", bronze.location},
                                                                         {"startVersion", 2},
                                                                         {"endVersion", 2}}})}}));
  Insert(11, 30);  // version 3
  runner.reset();
  ASSERT_OK_AND_ASSIGN(auto restarted, OpenRunner());
  EXPECT_EQ(RowsOut(*restarted), 5);   // ids 5..10 but 10
  EXPECT_EQ(RowsOut(*restarted), 27);  // ids 11..40 but 20, 30 and 40
  EXPECT_EQ(Counts(), std::make_pair(int64_t{36}, int64_t{36}));
}

TEST_F(TableSourceTest, ACommitThatRemovedRowsStopsTheStreamNamingIt) {
  Insert(0, 20);
  ASSERT_OK_AND_ASSIGN(auto runner, OpenRunner());
  EXPECT_EQ(RowsOut(*runner), 18);
  ASSERT_OK(session_->Execute("DELETE FROM bronze WHERE id < 3").status());  // version 2
  Insert(20, 5);
  Status stopped = runner->RunBatch().status();
  EXPECT_EQ(stopped.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(stopped.message().find("version 2 (DELETE)"), std::string::npos) << stopped.ToString();
  EXPECT_EQ(Counts().first, 18);  // the failed batch wrote nothing
}

// startingVersion: the first batch reads the rows from that commit on instead of the
// snapshot; skipChangeCommits: a commit that removed rows is passed over, its appends too.
TEST_F(TableSourceTest, StartingVersionAndSkipChangeCommits) {
  Insert(0, 20);   // version 1
  Insert(20, 20);  // version 2
  ASSERT_OK_AND_ASSIGN(
      auto runner, OpenRunner("INSERT INTO silver SELECT id, v, 1 FROM STREAM(bronze, startingVersion => 2, "
                              "skipChangeCommits => true)"));
  EXPECT_EQ(RowsOut(*runner), 20);  // version 2's rows only
  ASSERT_OK(session_->Execute("UPDATE bronze SET v = 'changed' WHERE id < 5").status());  // version 3
  Insert(40, 10);                                                                         // version 4
  EXPECT_EQ(RowsOut(*runner), 10);                                                        // version 3 skipped
  EXPECT_EQ(Counts(), std::make_pair(int64_t{30}, int64_t{30}));
  auto changed = session_->Execute("SELECT count(*) FROM silver WHERE v = 'changed' OR id < 20");
  ASSERT_OK(changed.status());
  EXPECT_EQ(changed->back().result.at(0, 0), "0");
}

TEST_F(TableSourceTest, StartingLatestWaitsForTheNextCommit) {
  Insert(0, 20);
  ASSERT_OK_AND_ASSIGN(
      auto runner,
      OpenRunner("INSERT INTO silver SELECT id, v, 1 FROM STREAM(bronze, startingVersion => 'latest')"));
  ASSERT_OK_AND_ASSIGN(std::optional<BatchCommit> idle, runner->RunBatch());
  EXPECT_FALSE(idle);
  Insert(20, 7);
  EXPECT_EQ(RowsOut(*runner), 7);
}

TEST_F(TableSourceTest, StartingTimestampReadsFromTheFirstCommitAtOrAfterIt) {
  Insert(0, 20);  // version 1
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  std::string between = delta::FormatTimestampMs(std::chrono::duration_cast<std::chrono::milliseconds>(
                                                     std::chrono::system_clock::now().time_since_epoch())
                                                     .count());
  between = between.substr(0, between.find(" UTC"));
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  Insert(20, 5);  // version 2
  ASSERT_OK_AND_ASSIGN(auto runner, OpenRunner("INSERT INTO silver SELECT id, v, 1 FROM STREAM(bronze, "
                                               "startingTimestamp => '" +
                                               between + "')"));
  EXPECT_EQ(RowsOut(*runner), 5);
  EXPECT_EQ(basin::testing::TwoCounts(*session_, "SELECT min(id), max(id) FROM silver"),
            std::make_pair(int64_t{20}, int64_t{24}));

  checkpoint_ = NewMemoryObjectStore();  // a new stream from before the first commit
  ASSERT_OK_AND_ASSIGN(runner, OpenRunner("INSERT INTO silver SELECT id, v, 2 FROM STREAM(bronze, "
                                          "startingTimestamp => '2000-01-01')"));
  EXPECT_EQ(RowsOut(*runner), 25);
}

TEST_F(TableSourceTest, MaxFilesPerTriggerBoundsABatchByWholeCommits) {
  Insert(0, 10);   // version 1, one file each
  Insert(10, 10);  // version 2
  Insert(20, 10);  // version 3
  ASSERT_OK_AND_ASSIGN(auto runner, OpenRunner("INSERT INTO silver SELECT id, v, 1 FROM STREAM(bronze, "
                                               "startingVersion => 1, maxFilesPerTrigger => 2)"));
  EXPECT_EQ(RowsOut(*runner), 20);
  EXPECT_EQ(RowsOut(*runner), 10);
  ASSERT_OK_AND_ASSIGN(std::optional<BatchCommit> idle, runner->RunBatch());
  EXPECT_FALSE(idle);
  // With a bound of one file, each commit is a batch of its own.
  ASSERT_OK(session_
                ->Execute("INSERT INTO bronze SELECT 30, 'a' UNION ALL SELECT 31, 'b'; "
                          "INSERT INTO bronze SELECT 32, 'c'")
                .status());
  ASSERT_OK(session_->Execute("INSERT INTO bronze SELECT range, 'x' FROM range(40, 43)").status());
  checkpoint_ = NewMemoryObjectStore();
  ASSERT_OK_AND_ASSIGN(runner, OpenRunner("INSERT INTO silver SELECT id, v, 1 FROM STREAM(bronze, "
                                          "startingVersion => 4, maxFilesPerTrigger => 1)"));
  for (int64_t expected : {2, 1, 3}) EXPECT_EQ(RowsOut(*runner), expected);
  EXPECT_EQ(Counts(), std::make_pair(int64_t{36}, int64_t{36}));
}

// maxBytesPerTrigger is a soft bound: a commit is never split, so a bound below one commit's
// files still moves the stream a commit a batch; with maxFilesPerTrigger the first reached
// ends the batch.
TEST_F(TableSourceTest, MaxBytesPerTriggerBoundsABatchByWholeCommits) {
  Insert(0, 10);   // version 1, one file of a few hundred bytes each
  Insert(10, 10);  // version 2
  Insert(20, 10);  // version 3
  ASSERT_OK_AND_ASSIGN(auto runner, OpenRunner("INSERT INTO silver SELECT id, v, 1 FROM STREAM(bronze, "
                                               "startingVersion => 1, maxBytesPerTrigger => 1)"));
  for (int64_t expected : {10, 10, 10}) EXPECT_EQ(RowsOut(*runner), expected);
  ASSERT_OK_AND_ASSIGN(std::optional<BatchCommit> idle, runner->RunBatch());
  EXPECT_FALSE(idle);

  // A byte short of the three files: the first two commits, then the third.
  auto detail = session_->Execute("DESCRIBE DETAIL bronze");
  ASSERT_OK(detail.status());
  const engine::QueryResult& table = detail->back().result;
  const auto size = std::find(table.column_names.begin(), table.column_names.end(), "sizeInBytes");
  ASSERT_NE(size, table.column_names.end());
  const std::string bound =
      std::to_string(std::stoll(*table.at(0, static_cast<size_t>(size - table.column_names.begin()))) - 1);
  checkpoint_ = NewMemoryObjectStore();
  ASSERT_OK_AND_ASSIGN(runner, OpenRunner("INSERT INTO silver SELECT id, v, 2 FROM STREAM(bronze, "
                                          "startingVersion => 1, maxBytesPerTrigger => " +
                                          bound + ")"));
  EXPECT_EQ(RowsOut(*runner), 20);
  EXPECT_EQ(RowsOut(*runner), 10);
  checkpoint_ = NewMemoryObjectStore();
  ASSERT_OK_AND_ASSIGN(runner, OpenRunner("INSERT INTO silver SELECT id, v, 3 FROM STREAM(bronze, "
                                          "startingVersion => 1, maxBytesPerTrigger => '1g', "
                                          "maxFilesPerTrigger => 2)"));
  EXPECT_EQ(RowsOut(*runner), 20);  // the file bound is reached first
  EXPECT_EQ(RowsOut(*runner), 10);
  checkpoint_ = NewMemoryObjectStore();
  ASSERT_OK_AND_ASSIGN(runner, OpenRunner("INSERT INTO silver SELECT id, v, 4 FROM STREAM(bronze, "
                                          "startingVersion => 1, maxBytesPerTrigger => '1g')"));
  EXPECT_EQ(RowsOut(*runner), 30);
  EXPECT_EQ(Counts(), std::make_pair(int64_t{30 * 4}, int64_t{30}));
}

// STREAM table_changes(t, start): every change from `start` on, once each across restarts.
TEST_F(TableSourceTest, TheChangeFeedAsASource) {
  ASSERT_OK(session_
                ->Execute("CREATE TABLE cdf (id BIGINT, v VARCHAR) "
                          "TBLPROPERTIES ('delta.enableChangeDataFeed' = 'true'); "
                          "INSERT INTO cdf VALUES (1, 'a'), (2, 'b'), (3, 'c'); "  // version 1
                          "CREATE TABLE changes (id BIGINT, kind VARCHAR, version BIGINT)")
                .status());
  const std::string statement =
      "INSERT INTO changes SELECT id, _change_type, _commit_version FROM STREAM table_changes('cdf', 1) "
      "WHERE table_changes.id > 0";
  ASSERT_OK_AND_ASSIGN(auto runner, OpenRunner(statement));
  EXPECT_EQ(RowsOut(*runner), 3);
  ASSERT_OK(session_->Execute("UPDATE cdf SET v = 'B' WHERE id = 2; DELETE FROM cdf WHERE id = 3").status());
  ASSERT_OK_AND_ASSIGN(runner, OpenRunner(statement));  // a restart resumes after version 1
  EXPECT_EQ(RowsOut(*runner), 3);
  ASSERT_OK_AND_ASSIGN(std::optional<BatchCommit> idle, runner->RunBatch());
  EXPECT_FALSE(idle);
  auto rows = session_->Execute(
      "SELECT string_agg(id || kind || version, ',' ORDER BY version, kind, id) FROM changes");
  ASSERT_OK(rows.status());
  EXPECT_EQ(rows->back().result.at(0, 0),
            "1insert1,2insert1,3insert1,2update_postimage2,2update_preimage2,3delete3");

  // Without the feed enabled, the error says how to enable it.
  checkpoint_ = NewMemoryObjectStore();
  ASSERT_OK_AND_ASSIGN(auto plain, OpenRunner("INSERT INTO changes SELECT id, _change_type, _commit_version "
                                              "FROM STREAM table_changes('bronze', 0)"));
  Status status = plain->RunBatch().status();
  EXPECT_NE(status.message().find("delta.enableChangeDataFeed"), std::string::npos) << status.ToString();
  checkpoint_ = NewMemoryObjectStore();
  auto wrong = OpenRunner(
      "INSERT INTO changes SELECT id, _change_type, _commit_version "
      "FROM STREAM table_changes('cdf')");
  status = wrong.ok() ? (*wrong)->RunBatch().status() : wrong.status();
  EXPECT_NE(status.message().find("takes two arguments"), std::string::npos) << status.ToString();
}

// Refused when the stream opens, before its checkpoint is written: the corrected statement
// then runs on the same checkpoint folder.
TEST_F(TableSourceTest, BadOptionsAreRefusedNamingThem) {
  Insert(0, 5);
  for (const auto& [options, expected] : std::vector<std::pair<std::string, std::string>>{
           {"startingVersion => -1", "startingVersion takes a table version"},
           {"startingVersion => 'soon'", "startingVersion takes a table version"},
           {"skipChangeCommits => 1", "skipChangeCommits takes true or false"},
           {"startingTimestamp => 'yesterday'", "startingTimestamp takes a timestamp"},
           {"startingVersion => 1, startingTimestamp => '2026-01-01'", "not both"},
           {"maxFilesPerTrigger => 0", "maxFilesPerTrigger takes a number of files"},
           {"maxBytesPerTrigger => 'lots'", "maxBytesPerTrigger takes a size in bytes"},
           {"maxBytesPerTrigger => 0", "maxBytesPerTrigger takes a size in bytes"},
           {"maxRecordsPerTrigger => 10", "no option maxRecordsPerTrigger"}}) {
    SCOPED_TRACE(options);
    auto runner = OpenRunner("INSERT INTO silver SELECT id, v, 1 FROM STREAM(bronze, " + options + ")");
    ASSERT_FALSE(runner.ok());
    EXPECT_EQ(runner.status().code(), ErrorCode::kInvalidArgument) << runner.status().ToString();
    EXPECT_NE(runner.status().message().find(expected), std::string::npos) << runner.status().ToString();
  }
  ASSERT_OK_AND_ASSIGN(
      auto corrected,
      OpenRunner("INSERT INTO silver SELECT id, v, 1 FROM STREAM(bronze, startingVersion => 1)"));
  EXPECT_EQ(RowsOut(*corrected), 5);

  // A version past the latest is found when the stream first plans.
  checkpoint_ = NewMemoryObjectStore();
  ASSERT_OK_AND_ASSIGN(auto late, OpenRunner("INSERT INTO silver SELECT id, v, 1 FROM STREAM(bronze, "
                                             "startingVersion => 9)"));
  EXPECT_ERROR_WITH(late->RunBatch().status(), kInvalidArgument, "whose latest version is 1");

  checkpoint_ = NewMemoryObjectStore();
  ASSERT_OK(session_->Execute("CREATE TABLE gold (n BIGINT)").status());
  auto complete =
      OpenRunner("INSERT OVERWRITE gold SELECT count(*) FROM STREAM(bronze, startingVersion => 1)");
  ASSERT_FALSE(complete.ok());
  EXPECT_NE(complete.status().message().find("do not apply"), std::string::npos)
      << complete.status().ToString();
}

TEST_F(TableSourceTest, AvailableNowStopsAtTheVersionItFoundAtStart) {
  Insert(0, 10);
  ASSERT_OK_AND_ASSIGN(auto runner, OpenRunner());
  // The commit made during the run is left for the next run.
  EXPECT_EQ(basin::testing::RunAvailableNow(*runner, [&] { Insert(10, 10); }), (std::vector<int64_t>{9}));
  EXPECT_EQ(basin::testing::RunAvailableNow(*runner, [] {}), (std::vector<int64_t>{9}));
}

// A MERGE sink upserts each batch, exactly once: after a crash between a batch's commit and
// its marker, the table's txn says the batch is done, and it is not merged twice.
TEST_F(TableSourceTest, AMergeSinkUpsertsEachBatchExactlyOnce) {
  ASSERT_OK(session_->Execute("CREATE TABLE latest (id BIGINT, v VARCHAR, updates INTEGER)").status());
  const std::string merge =
      "MERGE INTO latest t USING (SELECT id % 5 AS id, max(v) AS v FROM STREAM(bronze) GROUP BY id % 5) s\n"
      "ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = s.v, updates = t.updates + 1\n"
      "WHEN NOT MATCHED THEN INSERT (id, v, updates) VALUES (s.id, s.v, 0)";
  Insert(0, 3);  // ids 0, 1, 2
  ASSERT_OK_AND_ASSIGN(auto runner, OpenRunner(merge));
  EXPECT_EQ(RowsOut(*runner), 3);
  Insert(3, 4);  // ids 3..6: keys 3, 4, 0, 1
  EXPECT_EQ(RowsOut(*runner), 4);
  // A crash between the Delta commit and the marker.
  ASSERT_OK(checkpoint_->Delete(StreamCheckpoint::CommitKey(1)));
  runner.reset();
  Insert(7, 1);  // id 7: key 2
  ASSERT_OK_AND_ASSIGN(auto restarted, OpenRunner(merge));
  EXPECT_EQ(RowsOut(*restarted), 1);
  auto rows =
      session_->Execute("SELECT string_agg(id || ':' || v || ':' || updates, ' ' ORDER BY id) FROM latest");
  ASSERT_OK(rows.status());
  EXPECT_EQ(rows->back().result.at(0, 0), "0:v5:1 1:v6:1 2:v7:1 3:v3:0 4:v4:0");
}

// The checkpoint keeps the newest kRetainedBatches batches: its folder, and the listing a
// batch's recovery reads, stay bounded however long the stream runs.
TEST_F(TableSourceTest, TheCheckpointKeepsOnlyTheNewestBatches) {
  const int64_t batches = kRetainedBatches + 20;
  ASSERT_OK(session_->Execute("INSERT INTO bronze VALUES (1, 'a')").status());
  ASSERT_OK_AND_ASSIGN(auto runner, OpenRunner());
  for (int64_t b = 0; b < batches; b++) {
    if (b > 0)
      ASSERT_OK(
          session_->Execute("INSERT INTO bronze VALUES (" + std::to_string(b * 10 + 1) + ", 'b')").status());
    ASSERT_OK_AND_ASSIGN(std::optional<BatchCommit> commit, runner->RunBatch());
    ASSERT_TRUE(commit);
    ASSERT_EQ(commit->batch_id, b);
  }
  runner.reset();  // the last batch's marker is written by then
  ASSERT_OK_AND_ASSIGN(auto offsets, checkpoint_->List("offsets/"));
  ASSERT_OK_AND_ASSIGN(auto commits, checkpoint_->List("commits/"));
  EXPECT_EQ(offsets.size(), static_cast<size_t>(kRetainedBatches));
  // Batches committed one after the other have their commits in the next offsets: only
  // the last one has a marker.
  ASSERT_EQ(commits.size(), 1u);
  EXPECT_EQ(commits.front().key, StreamCheckpoint::CommitKey(batches - 1));
  EXPECT_EQ(offsets.front().key, StreamCheckpoint::OffsetsKey(batches - kRetainedBatches));
  EXPECT_EQ(Counts().first, batches);

  // Objects a crash left behind (here: put back by hand) go when a run starts; the stream
  // goes on where it was.
  ASSERT_OK(checkpoint_->PutIfAbsent(StreamCheckpoint::OffsetsKey(3), "{}"));
  ASSERT_OK_AND_ASSIGN(auto again, OpenRunner());
  ASSERT_OK_AND_ASSIGN(auto swept, checkpoint_->List("offsets/"));
  EXPECT_EQ(swept.size(), static_cast<size_t>(kRetainedBatches));
  ASSERT_OK(session_->Execute("INSERT INTO bronze VALUES (7, 'c')").status());
  ASSERT_OK_AND_ASSIGN(std::optional<BatchCommit> next, again->RunBatch());
  ASSERT_TRUE(next);
  EXPECT_EQ(next->batch_id, batches);
  EXPECT_EQ(Counts().first, batches + 1);
}

// INSERT OVERWRITE is a complete sink: each batch rewrites gold from bronze's whole snapshot
// at the batch's end, so the aggregate stays exact through appends, deletes and updates, a
// re-run batch commits once (over Kafka or files, the state gives it every row:
// stateful_test.cc).
TEST_F(TableSourceTest, ACompleteSinkRewritesTheAggregateFromTheWholeSnapshot) {
  ASSERT_OK(session_->Execute("CREATE TABLE gold (k BIGINT, n BIGINT)").status());
  const std::string statement =
      "INSERT OVERWRITE gold SELECT id % 3 AS k, count(*) AS n FROM STREAM(bronze) GROUP BY ALL";
  const std::string wrong =
      "SELECT count(*), count(*) FROM gold FULL JOIN (SELECT id % 3 AS k, count(*) AS n FROM bronze GROUP BY "
      "ALL) "
      "b USING (k) WHERE gold.n IS DISTINCT FROM b.n";
  ASSERT_OK_AND_ASSIGN(auto runner, OpenRunner(statement));
  Insert(0, 30);
  EXPECT_EQ(RowsOut(*runner), 3);
  Insert(30, 7);
  ASSERT_OK(
      session_->Execute("DELETE FROM bronze WHERE id < 4").status());  // an append stream would stop here
  EXPECT_EQ(RowsOut(*runner), 3);
  EXPECT_EQ(basin::testing::TwoCounts(*session_, wrong), std::make_pair(int64_t{0}, int64_t{0}));
  ASSERT_OK_AND_ASSIGN(auto idle, runner->RunBatch());
  EXPECT_FALSE(idle);  // nothing new: no rewrite
  // Each batch is one overwrite of gold: the aggregate is never appended twice.
  EXPECT_EQ(basin::testing::TwoCounts(*session_, "SELECT count(*), sum(n) FROM gold"),
            std::make_pair(int64_t{3}, int64_t{33}));
}

// Every kCompactEveryBatches batches the sink is compacted (its small files merged) while
// the next batches run, unless its delta.autoOptimize.autoCompact property says false; a
// later batch's notice tells of it; the rows stay exactly once.
TEST_F(TableSourceTest, TheSinkIsCompactedEveryFiftyBatchesOffTheBatchesPath) {
  auto files_of = [&](const std::string& table) {
    auto snapshot = session_->context().LoadTable(session_->context().GetTable({table})->location);
    EXPECT_TRUE(snapshot.ok()) << snapshot.status().ToString();
    return snapshot.ok() ? (*snapshot)->files.size() : 0;
  };
  ASSERT_OK_AND_ASSIGN(auto runner, OpenRunner());
  std::vector<std::string> notices;
  int64_t batches = 0;
  auto run_batch = [&] {
    Insert(batches * 10 + 1, 1);
    ASSERT_OK_AND_ASSIGN(std::optional<BatchCommit> commit, runner->RunBatch());
    ASSERT_TRUE(commit);
    batches++;
    if (!commit->notice.empty()) notices.push_back(commit->notice);
  };
  for (int64_t batch = 0; batch < kCompactEveryBatches; batch++) run_batch();
  EXPECT_EQ(notices, std::vector<std::string>{}) << "the first compaction starts after batch 49 commits";
  // The compaction runs beside the batches that follow; one of them, after it ended, tells.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (notices.empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    run_batch();
  }
  // "compacted default.silver: 52 files into 1": the files of the batches committed before
  // the compaction read the table.
  ASSERT_EQ(notices.size(), 1u);
  const std::string prefix = "compacted default.silver: ", suffix = " files into 1";
  ASSERT_TRUE(notices[0].starts_with(prefix) && notices[0].ends_with(suffix)) << notices[0];
  const int64_t merged = std::stoll(notices[0].substr(prefix.size()));
  EXPECT_GE(merged, kCompactEveryBatches);
  EXPECT_LE(merged, batches);
  // The first 50 batches' files are one, with the files of the batches that committed
  // before the compaction read the table.
  EXPECT_LE(files_of("silver"), static_cast<size_t>(1 + batches - kCompactEveryBatches));
  EXPECT_EQ(Counts(), std::make_pair(batches, batches));
  // Turned off by the table's property.
  ASSERT_OK(session_
                ->Execute("CREATE TABLE quiet (id BIGINT, v VARCHAR, n INTEGER) "
                          "TBLPROPERTIES ('delta.autoOptimize.autoCompact' = 'false')")
                .status());
  checkpoint_ = NewMemoryObjectStore();
  ASSERT_OK_AND_ASSIGN(auto quiet, OpenRunner("INSERT INTO quiet SELECT id, v, 1 FROM STREAM(bronze)"));
  for (int64_t batch = 0; batch < kCompactEveryBatches + 1; batch++) {
    Insert(1'000 + batch, 1);
    ASSERT_OK_AND_ASSIGN(std::optional<BatchCommit> commit, quiet->RunBatch());
    ASSERT_TRUE(commit);
    EXPECT_EQ(commit->notice, "");
  }
  quiet.reset();  // waits for the compaction it asked for, which does nothing
  EXPECT_EQ(files_of("quiet"), static_cast<size_t>(kCompactEveryBatches + 1));
}

TEST_F(TableSourceTest, RefusesWhatItCannotStream) {
  Insert(0, 3);
  // Into itself: it would read its own rows again and again.
  ASSERT_OK_AND_ASSIGN(auto itself, OpenRunner("INSERT INTO bronze SELECT * FROM STREAM(bronze)"));
  Status loop = itself->RunBatch().status();
  EXPECT_EQ(loop.code(), ErrorCode::kInvalidArgument) << loop.ToString();
  // Outside a stream, STREAM(table) is refused as any STREAM source is.
  EXPECT_EQ(session_->Execute(kStatement).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(session_->Execute("SELECT * FROM STREAM(bronze)").status().code(), ErrorCode::kInvalidArgument);
  // A damaged entry in the checkpoint is Corruption naming the object, not a crash.
  checkpoint_ = NewMemoryObjectStore();
  ASSERT_OK_AND_ASSIGN(auto damaged, OpenRunner());
  ASSERT_OK_AND_ASSIGN(auto folder, StreamCheckpoint::Open(checkpoint_, damaged->metadata()));
  ASSERT_OK(folder->WriteOffsets(0, {{"batchId", 0},
                                     {"sources", nlohmann::json::array({{{"index", 0},
                                                                         {"kind", "table"},
                                                                         {"location", "default/bronze"},
                                                                         {"startVersion", "two"},
                                                                         {"endVersion", 3}}})}}));
  Status corrupt = damaged->RunBatch().status();
  EXPECT_EQ(corrupt.code(), ErrorCode::kCorruption) << corrupt.ToString();
  EXPECT_NE(corrupt.message().find("offsets"), std::string::npos) << corrupt.ToString();
  // A table the warehouse does not have.
  checkpoint_ = NewMemoryObjectStore();
  ASSERT_OK_AND_ASSIGN(auto missing, OpenRunner("INSERT INTO silver SELECT *, 1 FROM STREAM(nowhere)"));
  EXPECT_EQ(missing->RunBatch().status().code(), ErrorCode::kNotFound);
}

}  // namespace
}  // namespace basin::stream
