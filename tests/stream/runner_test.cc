// StreamRunner: micro-batches from read_kafka into a warehouse table, exactly once across
// batches, restarts and the crashes the checkpoint format names (planned but not committed,
// committed but not marked), and the statements it refuses.
#include "stream/runner.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "common/cancellation.h"
#include "kafka_test_util.h"
#include "runner_test_util.h"
#include "sql/session_context.h"
#include "storage/faulty_object_store.h"
#include "stream/kafka/read_kafka.h"

namespace basin::stream {
namespace {

class StreamRunnerTest : public kafka::testing::KafkaStreamTest {
 protected:
  void SetUp() override { SetUpSession("CREATE TABLE bronze (v VARCHAR, p INTEGER, o BIGINT)"); }

  std::string Statement(int64_t max_offsets = 100) const {
    return "INSERT INTO bronze SELECT decode(value) AS v, partition AS p, \"offset\" AS o\n"
           "FROM STREAM read_kafka(bootstrapServers => '" +
           cluster_->bootstrap_servers() +
           "', subscribe => 'payments',\n"
           "  startingOffsets => 'earliest', maxOffsetsPerTrigger => " +
           std::to_string(max_offsets) + ")";
  }

  // A stream of every record of `subscription` ("subscribe => '...'" or "subscribePattern =>
  // '...'") from the start, listing partitions again every `refresh_ms`.
  std::string Reading(const std::string& subscription, const std::string& refresh_ms) const {
    return "INSERT INTO bronze SELECT decode(value) AS v, partition AS p, \"offset\" AS o\n"
           "FROM STREAM read_kafka(bootstrapServers => '" +
           cluster_->bootstrap_servers() + "', " + subscription +
           ", startingOffsets => 'earliest', kafkaOptions => MAP {'topic.metadata.refresh.interval.ms': '" +
           refresh_ms + "'})";
  }

  // A checkpoint store that fails on demand (faultless for now), and a runner on it whose
  // first batch (10 records) committed and is marked.
  void OpenAfterOneBatch(std::shared_ptr<FaultyObjectStore>& faulty, std::unique_ptr<StreamRunner>& runner) {
    faulty = std::make_shared<FaultyObjectStore>(NewMemoryObjectStore(), FaultOptions{});
    checkpoint_ = faulty;
    Produce("payments", 0, 0, 10);
    ASSERT_OK_AND_ASSIGN(runner, OpenRunner(Statement()));
    RunOptions once;
    once.trigger = Trigger::kOnce;
    ASSERT_OK(runner->Run(once));  // returns once the batch's marker is written too
    ASSERT_EQ(Counts(), std::make_pair(int64_t{10}, int64_t{10}));
  }

  // Rows in bronze, and distinct (partition, offset) pairs among them.
  std::pair<int64_t, int64_t> Counts() {
    return basin::testing::TwoCounts(*session_, "SELECT count(*), count(DISTINCT (p, o)) FROM bronze");
  }
};

TEST_F(StreamRunnerTest, BatchesAreBoundedAndRestartsResumeExactly) {
  Produce("payments", 0, 0, 120);
  Produce("payments", 1, 120, 80);
  Produce("payments", 2, 200, 50);
  ASSERT_OK_AND_ASSIGN(auto runner, OpenRunner(Statement()));
  for (int64_t batch = 0; batch < 3; batch++) {
    ASSERT_OK_AND_ASSIGN(std::optional<BatchCommit> commit, runner->RunBatch());
    ASSERT_TRUE(commit);
    EXPECT_EQ(commit->batch_id, batch);
    EXPECT_EQ(commit->rows_in, batch < 2 ? 100 : 50);
    EXPECT_EQ(commit->rows_out, commit->rows_in);
    EXPECT_EQ(commit->table_version, batch + 1);  // version 0 created bronze
  }
  // Nothing to read: no batch, no empty commit, and no offsets recorded (the run plans its
  // next batch while that batch's statement starts, which then stops before it writes).
  ASSERT_OK_AND_ASSIGN(std::optional<BatchCommit> idle, runner->RunBatch());
  EXPECT_FALSE(idle);
  EXPECT_EQ(Counts(), std::make_pair(int64_t{250}, int64_t{250}));
  EXPECT_TRUE(checkpoint_->Head(StreamCheckpoint::OffsetsKey(3)).status().IsNotFound());
  ASSERT_OK_AND_ASSIGN(auto idle_snapshot,
                       session_->context().LoadTable(session_->context().GetTable({"bronze"})->location));
  EXPECT_EQ(idle_snapshot->version, 3);

  // A new run of the same stream (another process, after a stop) resumes at batch 3.
  runner.reset();
  Produce("payments", 2, 250, 30);
  ASSERT_OK_AND_ASSIGN(auto again, OpenRunner(Statement()));
  ASSERT_OK_AND_ASSIGN(std::optional<BatchCommit> next, again->RunBatch());
  ASSERT_TRUE(next);
  EXPECT_EQ(next->batch_id, 3);
  EXPECT_EQ(next->rows_out, 30);
  EXPECT_EQ(Counts(), std::make_pair(int64_t{280}, int64_t{280}));
  // The table's last commit carries the stream's txn at the last batch's id.
  ASSERT_OK_AND_ASSIGN(catalog::TableEntry bronze, session_->context().GetTable({"bronze"}));
  ASSERT_OK_AND_ASSIGN(auto snapshot, session_->context().LoadTable(bronze.location));
  ASSERT_EQ(snapshot->set_transactions.count(again->metadata().stream_id), 1u);
  EXPECT_EQ(snapshot->set_transactions.at(again->metadata().stream_id).version, 3);
}

// A batch's data files are laid out as kBatchFileLayout says: row groups of at most
// kBatchRowGroupRows rows (each encoded as the rows arrive), no bloom filters; a write of
// the session's own after the batch has DuckDB's row groups and bloom filters again.
TEST_F(StreamRunnerTest, ABatchWritesItsFilesInTheBatchLayout) {
  constexpr int kRecords = 40'000;
  Produce("payments", 0, 0, kRecords);
  ASSERT_OK_AND_ASSIGN(auto runner, OpenRunner(Statement(kRecords)));
  ASSERT_OK_AND_ASSIGN(std::optional<BatchCommit> commit, runner->RunBatch());
  ASSERT_TRUE(commit);
  EXPECT_EQ(commit->rows_out, kRecords);
  ASSERT_OK(session_
                ->Execute("INSERT INTO bronze SELECT 'x', 9, i FROM range(" + std::to_string(kRecords) +
                          ") AS t(i)")
                .status());
  ASSERT_OK_AND_ASSIGN(catalog::TableEntry bronze, session_->context().GetTable({"bronze"}));
  ASSERT_OK_AND_ASSIGN(auto snapshot, session_->context().LoadTable(bronze.location));
  ASSERT_EQ(snapshot->files.size(), 2u);
  for (const delta::AddFile& add : snapshot->files) {
    ASSERT_OK_AND_ASSIGN(auto groups, session_->connection().Query(
                                          "SELECT count(DISTINCT row_group_id), max(row_group_num_rows), "
                                          "sum(row_group_num_rows) FILTER (WHERE path_in_schema = 'o'), "
                                          "count(bloom_filter_length) FROM parquet_metadata('" +
                                          bronze.location + "/" + add.path + "')"));
    EXPECT_EQ(groups.at(0, 2), std::to_string(kRecords)) << add.path;
    const bool streamed = add.stats && add.stats->find("\"p\":9") == std::string::npos;
    if (streamed) {
      EXPECT_EQ(groups.at(0, 0), std::to_string((kRecords + kBatchRowGroupRows - 1) / kBatchRowGroupRows));
      EXPECT_EQ(groups.at(0, 1), std::to_string(kBatchRowGroupRows));
      EXPECT_EQ(groups.at(0, 3), "0") << "a batch's file has no bloom filters";
    } else {
      EXPECT_EQ(groups.at(0, 0), "1") << "the INSERT after the batch: DuckDB's row group size";
      EXPECT_NE(groups.at(0, 3), "0") << "the INSERT after the batch: bloom filters";
    }
  }
}

// A batch knows the newest record time it read: its end-to-end latency runs from there.
TEST_F(StreamRunnerTest, ABatchKnowsTheNewestRecordTimeItRead) {
  const int64_t now_ms = SystemClock()->NowMs();
  for (int64_t age_ms : {9'000, 4'000, 7'000}) {
    kafka::ProducerRecord record;
    record.partition = 0;
    record.value = "v";
    record.timestamp_ms = now_ms - age_ms;
    ASSERT_OK(producer_->Produce("payments", record));
  }
  ASSERT_OK(producer_->Flush(10'000));
  ASSERT_OK_AND_ASSIGN(auto runner, OpenRunner(Statement()));
  ASSERT_OK_AND_ASSIGN(std::optional<BatchCommit> commit, runner->RunBatch());
  ASSERT_TRUE(commit);
  EXPECT_EQ(commit->rows_out, 3);
  EXPECT_EQ(commit->source_time_ms, now_ms - 4'000);
  ASSERT_TRUE(EndToEndMs(*commit));
  EXPECT_GE(*EndToEndMs(*commit), 4'000);
  EXPECT_LT(*EndToEndMs(*commit), 60'000);
  // A producer's clock ahead of ours counts as no latency rather than a negative one.
  BatchCommit ahead = *commit;
  ahead.source_time_ms = ahead.committed_time_ms + 5'000;
  EXPECT_EQ(EndToEndMs(ahead), 0);
}

TEST_F(StreamRunnerTest, APlannedBatchIsRunAgainOverExactlyItsRecordedRanges) {
  Produce("payments", 0, 0, 40);
  ASSERT_OK_AND_ASSIGN(auto runner, OpenRunner(Statement()));
  ASSERT_OK(runner->RunBatch().status());  // batch 0: offsets 0..40 of partition 0
  // A crash after batch 1 was planned (its offsets recorded: 10 more records of partition
  // 0) and before it committed. More records arrive before the restart.
  Produce("payments", 0, 40, 10);
  ASSERT_OK_AND_ASSIGN(auto folder, StreamCheckpoint::Open(checkpoint_, runner->metadata()));
  ASSERT_OK(folder->WriteOffsets(
      1,
      {{"batchId", 1},
       {"plannedTime", 0},
       {"sources", nlohmann::json::array(
                       {{{"index", 0},
                         {"kind", "kafka"},
                         {"ranges", {{"payments", {{"0", {40, 50}}, {"1", {0, 0}}, {"2", {0, 0}}}}}}}})}}));
  Produce("payments", 0, 50, 25);
  runner.reset();
  ASSERT_OK_AND_ASSIGN(auto restarted, OpenRunner(Statement()));
  ASSERT_OK_AND_ASSIGN(std::optional<BatchCommit> rerun, restarted->RunBatch());
  ASSERT_TRUE(rerun);
  EXPECT_EQ(rerun->batch_id, 1);
  EXPECT_EQ(rerun->rows_out, 10);  // the recorded range, not what the topic holds now
  ASSERT_OK_AND_ASSIGN(std::optional<BatchCommit> next, restarted->RunBatch());
  ASSERT_TRUE(next);
  EXPECT_EQ(next->batch_id, 2);
  EXPECT_EQ(next->rows_out, 25);
  EXPECT_EQ(Counts(), std::make_pair(int64_t{75}, int64_t{75}));
}

TEST_F(StreamRunnerTest, ABatchCommittedButNotMarkedIsNotRunAgain) {
  Produce("payments", 1, 0, 30);
  ASSERT_OK_AND_ASSIGN(auto runner, OpenRunner(Statement()));
  ASSERT_OK(runner->RunBatch().status());
  // A crash between the Delta commit and the commit marker (which the run writes when it
  // ends: taken away after).
  runner.reset();
  ASSERT_OK(checkpoint_->Delete(StreamCheckpoint::CommitKey(0)));
  Produce("payments", 1, 30, 5);
  ASSERT_OK_AND_ASSIGN(auto restarted, OpenRunner(Statement()));
  ASSERT_OK_AND_ASSIGN(std::optional<BatchCommit> next, restarted->RunBatch());
  ASSERT_TRUE(next);
  EXPECT_EQ(next->batch_id, 1);
  EXPECT_EQ(next->rows_out, 5);
  EXPECT_EQ(Counts(), std::make_pair(int64_t{35}, int64_t{35}));
  ASSERT_OK_AND_ASSIGN(std::optional<BatchCommit> marker,
                       StreamCheckpoint::Open(checkpoint_, restarted->metadata()).value()->ReadCommit(0));
  EXPECT_TRUE(marker);
}

// Batches committed one after the other write no marker: each one's offsets record the
// commit of the batch before, which is what the folder says committed last, until the run
// ends and marks its last batch.
TEST_F(StreamRunnerTest, BatchesOneAfterAnotherRecordTheirCommitsInTheNextOffsets) {
  ASSERT_OK_AND_ASSIGN(auto runner, OpenRunner(Statement()));
  for (int64_t batch = 0; batch < 3; batch++) {
    Produce("payments", 0, 10 * batch, 4 + batch);
    ASSERT_OK_AND_ASSIGN(std::optional<BatchCommit> commit, runner->RunBatch());
    ASSERT_TRUE(commit);
    ASSERT_EQ(commit->batch_id, batch);
  }
  ASSERT_OK_AND_ASSIGN(auto commits, checkpoint_->List("commits/"));
  EXPECT_TRUE(commits.empty());
  ASSERT_OK_AND_ASSIGN(auto folder, StreamCheckpoint::OpenExisting(checkpoint_));
  ASSERT_OK_AND_ASSIGN(nlohmann::json offsets, folder->ReadOffsets(2));
  ASSERT_TRUE(offsets.contains(kPreviousCommitField)) << offsets.dump();
  ASSERT_OK_AND_ASSIGN(std::optional<BatchCommit> newest, folder->NewestCommit());
  ASSERT_TRUE(newest);
  EXPECT_EQ(newest->batch_id, 1);
  EXPECT_EQ(newest->rows_out, 5);
  EXPECT_GE(newest->table_version, 0);
  runner.reset();
  ASSERT_OK_AND_ASSIGN(newest, folder->NewestCommit());
  ASSERT_TRUE(newest);
  EXPECT_EQ(newest->batch_id, 2);
  EXPECT_EQ(newest->rows_out, 6);
  ASSERT_OK_AND_ASSIGN(commits, checkpoint_->List("commits/"));
  ASSERT_EQ(commits.size(), 1u);
  EXPECT_EQ(commits[0].key, StreamCheckpoint::CommitKey(2));
  EXPECT_EQ(Counts(), std::make_pair(int64_t{15}, int64_t{15}));
}

TEST_F(StreamRunnerTest, AvailableNowStopsAtTheEndItFoundAtStart) {
  Produce("payments", 0, 0, 250);
  ASSERT_OK_AND_ASSIGN(auto runner, OpenRunner(Statement()));
  // Records that arrive while the run goes on are left for the next run.
  EXPECT_EQ(basin::testing::RunAvailableNow(*runner, [&] { Produce("payments", 0, 250, 100); }),
            (std::vector<int64_t>{100, 100, 50}));
  EXPECT_EQ(Counts().first, 250);
}

// A run with a backlog reads each batch's successor while the batch ends and commits
// (BatchSource::ReadNextEarly); runs failing at random (the checkpoint's store, or the run
// abandoned), its early read then dropped or taken by a batch planned otherwise, still land
// every record once. Records produced meanwhile go to later batches.
TEST_F(StreamRunnerTest, ARunReadingItsNextBatchEarlyLandsEveryRecordOnceThroughFailures) {
  auto faulty = std::make_shared<FaultyObjectStore>(NewMemoryObjectStore(), FaultOptions{});
  checkpoint_ = faulty;
  int produced = 0;
  for (int p = 0; p < 3; p++, produced += 200) Produce("payments", p, produced, 200);
  int failures = 0, runs = 0;
  for (uint64_t attempt = 1; attempt < 200 && runs < 3; attempt++) {
    if (attempt % 5 == 0 && produced < 900) {
      Produce("payments", static_cast<int32_t>(attempt % 3), produced, 30);
      produced += 30;
    }
    faulty->SetOptions(
        {.failure_probability = 1.0 / 12, .seed = attempt, .fail_after_write = attempt % 2 == 0});
    Result<std::unique_ptr<StreamRunner>> runner = OpenRunner(Statement(40));
    Status ran = runner.ok() ? Status::OK() : runner.status();
    if (runner.ok()) {
      RunOptions options;
      options.trigger = Trigger::kAvailableNow;
      CancellationToken abandon;
      options.abandon = &abandon;
      int batches = 0;
      options.on_batch = [&](const std::optional<BatchCommit>& commit) {
        // Now and then abandon a batch while its early read of the next one goes on.
        if (commit && ++batches == 3 && attempt % 4 == 0) abandon.Cancel();
      };
      ran = (*runner)->Run(options);
    }
    if (ran.ok()) {
      runs++;
      continue;
    }
    EXPECT_TRUE(ran.message().find("injected fault") != std::string::npos ||
                ran.code() == ErrorCode::kCancelled)
        << ran.ToString();
    failures++;
  }
  faulty->SetOptions({});
  ASSERT_OK_AND_ASSIGN(auto last, OpenRunner(Statement(40)));
  basin::testing::RunAvailableNow(*last, [] {});
  EXPECT_GT(failures, 3);
  EXPECT_EQ(Counts(), std::make_pair(int64_t{produced}, int64_t{produced}));
}

// Partitions that appear while a stream runs (here a new topic matching the pattern, as the
// dev cluster cannot add partitions to a topic) are read from their start by the next batch.
TEST_F(StreamRunnerTest, PartitionsAppearingWhileRunningAreReadFromTheirStart) {
  Produce("payments", 0, 0, 20);
  ASSERT_OK_AND_ASSIGN(auto runner, OpenRunner(Reading("subscribePattern => 'pay.*'", "0")));
  ASSERT_OK_AND_ASSIGN(std::optional<BatchCommit> first, runner->RunBatch());
  ASSERT_TRUE(first);
  EXPECT_EQ(first->rows_out, 20);
  ASSERT_OK(cluster_->CreateTopic({"payouts", 2}));
  Produce("payouts", 1, 100, 7);
  Produce("payments", 0, 20, 3);
  ASSERT_OK_AND_ASSIGN(std::optional<BatchCommit> second, runner->RunBatch());
  ASSERT_TRUE(second);
  EXPECT_EQ(second->rows_out, 10);
  // payouts/1 is the only partition 1 with records.
  auto from_new = session_->Execute("SELECT count(*), min(o) FROM bronze WHERE p = 1");
  ASSERT_OK(from_new.status());
  EXPECT_EQ(from_new->back().result.at(0, 0), "7");
  EXPECT_EQ(from_new->back().result.at(0, 1), "0");  // from the new partition's start
  EXPECT_EQ(Counts().first, 30);
}

// Between listings, a batch asks the cluster only for its partitions' watermarks: a topic
// matching the pattern waits for the next listing, one interval later.
TEST_F(StreamRunnerTest, PartitionsAreListedAgainOncePerDiscoveryInterval) {
  Produce("payments", 0, 0, 5);
  ASSERT_OK_AND_ASSIGN(auto runner, OpenRunner(Reading("subscribePattern => 'pay.*'", "1500")));
  ASSERT_OK_AND_ASSIGN(std::optional<BatchCommit> first, runner->RunBatch());
  ASSERT_TRUE(first);
  ASSERT_OK(cluster_->CreateTopic({"payouts", 1}));
  Produce("payouts", 0, 100, 4);
  Produce("payments", 0, 5, 1);
  ASSERT_OK_AND_ASSIGN(std::optional<BatchCommit> second, runner->RunBatch());
  ASSERT_TRUE(second);
  EXPECT_EQ(second->rows_out, 1);  // payouts is not listed yet
  std::this_thread::sleep_for(std::chrono::milliseconds(1600));
  ASSERT_OK_AND_ASSIGN(std::optional<BatchCommit> third, runner->RunBatch());
  ASSERT_TRUE(third);
  EXPECT_EQ(third->rows_out, 4);  // from payouts' start
  EXPECT_EQ(Counts().first, 10);
}

// A topic subscribed by name that did not exist when the stream began is read by the first
// batch after it appears, whatever the discovery interval.
TEST_F(StreamRunnerTest, ANamedTopicCreatedLaterIsReadByTheNextBatch) {
  Produce("payments", 0, 0, 3);
  ASSERT_OK_AND_ASSIGN(auto runner, OpenRunner(Reading("subscribe => 'payments,refunds'", "60000")));
  ASSERT_OK_AND_ASSIGN(std::optional<BatchCommit> first, runner->RunBatch());
  ASSERT_TRUE(first);
  EXPECT_EQ(first->rows_out, 3);
  ASSERT_OK(cluster_->CreateTopic({"refunds", 1}));
  Produce("refunds", 0, 50, 2);
  ASSERT_OK_AND_ASSIGN(std::optional<BatchCommit> second, runner->RunBatch());
  ASSERT_TRUE(second);
  EXPECT_EQ(second->rows_out, 2);
}

// A stream describes its query once when only its sources could change its columns; one
// that joins a table describes it every batch, so a column the table gains reaches the sink.
TEST_F(StreamRunnerTest, AQueryJoiningATableSeesTheColumnsTheTableGains) {
  ASSERT_OK(session_
                ->Execute("CREATE TABLE dim (tag VARCHAR); INSERT INTO dim VALUES ('a'); "
                          "CREATE TABLE tagged (v VARCHAR, tag VARCHAR, extra VARCHAR)")
                .status());
  const std::string statement =
      "INSERT INTO tagged BY NAME SELECT decode(k.value) AS v, d.* FROM STREAM read_kafka(bootstrapServers "
      "=> '" +
      cluster_->bootstrap_servers() +
      "', subscribe => 'payments', startingOffsets => 'earliest') k CROSS JOIN dim d";
  ASSERT_OK_AND_ASSIGN(auto runner, OpenRunner(statement));
  Produce("payments", 0, 0, 1);
  ASSERT_OK_AND_ASSIGN(std::optional<BatchCommit> first, runner->RunBatch());
  ASSERT_TRUE(first);
  ASSERT_OK(
      session_->Execute("ALTER TABLE dim ADD COLUMN extra VARCHAR; UPDATE dim SET extra = 'x'").status());
  Produce("payments", 0, 1, 1);
  ASSERT_OK_AND_ASSIGN(std::optional<BatchCommit> second, runner->RunBatch());
  ASSERT_TRUE(second);
  EXPECT_EQ(basin::testing::FirstColumn(*session_,
                                        "SELECT v || '/' || tag || '/' || coalesce(extra, '-') "
                                        "FROM tagged ORDER BY v"),
            (std::vector<std::string>{"v0/a/-", "v1/a/x"}));
}

TEST_F(StreamRunnerTest, RefusesWhatItCannotRunExactlyOnce) {
  EXPECT_EQ(OpenRunner("SELECT 1").status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(OpenRunner("INSERT INTO bronze VALUES ('a', 1, 2)").status().code(), ErrorCode::kInvalidArgument);
  Status not_a_source = OpenRunner("INSERT INTO bronze SELECT 'x', 1, range FROM STREAM range(10)").status();
  EXPECT_EQ(not_a_source.code(), ErrorCode::kNotImplemented) << not_a_source.ToString();
  EXPECT_NE(not_a_source.message().find("range(10)"), std::string::npos) << not_a_source.ToString();
  // A refused statement left no stream behind; the checkpoint now belongs to this one, and
  // another statement is a new stream.
  ASSERT_OK(OpenRunner(Statement()).status());
  auto changed = OpenRunner(Statement(7));
  ASSERT_EQ(changed.status().code(), ErrorCode::kInvalidArgument) << changed.status().ToString();
  // Outside a stream, a STREAM source is refused, saying how to run it.
  Status plain = session_->Execute(Statement()).status();
  EXPECT_EQ(plain.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(plain.message().find("basin stream run"), std::string::npos) << plain.ToString();
}

// A batch waiting for records that do not come (a planned range beyond what the topic
// holds) is abandoned at once when asked, instead of after the reader's stall timeout; the
// next run runs it again.
TEST_F(StreamRunnerTest, AnAbandonedBatchEndsAtOnceAndRunsAgainLater) {
  Produce("payments", 0, 0, 10);
  ASSERT_OK_AND_ASSIGN(auto runner, OpenRunner(Statement()));
  ASSERT_OK_AND_ASSIGN(auto folder, StreamCheckpoint::Open(checkpoint_, runner->metadata()));
  ASSERT_OK(folder->WriteOffsets(
      0,
      {{"batchId", 0},
       {"plannedTime", 0},
       {"sources", nlohmann::json::array(
                       {{{"index", 0}, {"kind", "kafka"}, {"ranges", {{"payments", {{"0", {0, 20}}}}}}}})}}));
  CancellationToken stop, abandon;
  std::thread abandoning([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    stop.Cancel();
    abandon.Cancel();
  });
  const auto started = std::chrono::steady_clock::now();
  RunOptions options;
  options.cancellation = &stop;
  options.abandon = &abandon;
  Status abandoned = runner->Run(options);
  abandoning.join();
  EXPECT_EQ(abandoned.code(), ErrorCode::kCancelled) << abandoned.ToString();
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));
  EXPECT_EQ(Counts(), std::make_pair(int64_t{0}, int64_t{0}));
  // The records arrive; the next run runs the same batch, over its recorded range.
  Produce("payments", 0, 10, 15);
  ASSERT_OK_AND_ASSIGN(std::optional<BatchCommit> rerun, runner->RunBatch());
  ASSERT_TRUE(rerun);
  EXPECT_EQ(rerun->batch_id, 0);
  EXPECT_EQ(rerun->rows_out, 20);
}

// One table, two writers: while a continuous stream appends batches to bronze, another
// session INSERTs into it and compacts it with OPTIMIZE. Every commit lands (the
// transaction layer retries what does not conflict): nothing lost, nothing twice.
TEST_F(StreamRunnerTest, ABatchWriterAndOptimizeBesideARunningStreamLoseNothing) {
  ASSERT_OK_AND_ASSIGN(auto runner, OpenRunner(Statement(20)));
  ASSERT_OK_AND_ASSIGN(auto other, sql::Session::Open({.warehouse_dir = warehouse_.str()}));
  CancellationToken stop;
  Status streamed;
  std::thread stream([&] {
    RunOptions options;
    options.interval_ms = 5;
    options.cancellation = &stop;
    streamed = runner->Run(options);
  });
  int produced = 0;
  int inserted = 0;
  for (int round = 0; round < 8; round++) {
    Produce("payments", round % 3, produced, 30);
    produced += 30;
    Status insert = other
                        ->Execute("INSERT INTO bronze VALUES ('batch', -1, " + std::to_string(round) +
                                  "), "
                                  "('batch', -1, " +
                                  std::to_string(round + 100) + ")")
                        .status();
    EXPECT_OK(insert);
    inserted += 2;
    if (round % 3 == 2) EXPECT_OK(other->Execute("OPTIMIZE bronze").status());
  }
  // Let the stream catch up, then stop it and drain what is left.
  // (The runner's session is the stream thread's while it runs: count on the other one.)
  auto rows_now = [&] {
    return basin::testing::TwoCounts(*other, "SELECT count(*), count(DISTINCT (p, o)) FROM bronze").first;
  };
  for (int wait = 0; wait < 200 && rows_now() < produced + inserted; wait++) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  stop.Cancel();
  stream.join();
  ASSERT_OK(streamed);
  basin::testing::RunAvailableNow(*runner, [] {});
  EXPECT_EQ(Counts(), std::make_pair(int64_t{produced + inserted}, int64_t{produced + inserted}));
  // The compactions committed too.
  ASSERT_OK_AND_ASSIGN(auto history, session_->Execute("DESCRIBE HISTORY bronze"));
  const engine::QueryResult& commits = history.back().result;
  int optimized = 0;
  for (size_t c = 0; c < commits.column_count(); c++) {
    if (commits.column_names[c] != "operation") continue;
    for (size_t r = 0; r < commits.row_count(); r++) optimized += commits.at(r, c) == "OPTIMIZE" ? 1 : 0;
  }
  EXPECT_EQ(optimized, 2);
}

// The checkpoint folder's store fails one call in six at random, half the time after the
// write took effect (a lost reply); the runner is reopened after some failures, as a
// restarted process would be. Every record lands once.
TEST_F(StreamRunnerTest, CheckpointStoreFailuresNeitherLoseNorRepeatARecord) {
  auto faulty = std::make_shared<FaultyObjectStore>(NewMemoryObjectStore(), FaultOptions{});
  checkpoint_ = faulty;
  int produced = 0;
  const int failures = basin::testing::RunThroughCheckpointFaults(
      *faulty, [&] { return OpenRunner(Statement(20)); },
      [&](uint64_t attempt) {
        if (attempt % 50 == 1 && produced < 400) {
          Produce("payments", static_cast<int32_t>(attempt % 3), produced, 50);
          produced += 50;
        }
        return produced < 400;
      },
      /*max_batches=*/40);
  ASSERT_OK_AND_ASSIGN(auto last, OpenRunner(Statement(20)));
  basin::testing::RunAvailableNow(*last, [] {});
  EXPECT_GT(failures, 5);
  EXPECT_EQ(produced, 400);
  EXPECT_EQ(Counts(), std::make_pair(int64_t{400}, int64_t{400}));
}

// A batch's offsets are written while it reads and writes, and its commit waits for them:
// when the (slow) write fails, the batch commits nothing, and the next run lands its
// records once.
TEST_F(StreamRunnerTest, ABatchWhoseOffsetsFailToBeRecordedCommitsNothing) {
  std::shared_ptr<FaultyObjectStore> faulty;
  std::unique_ptr<StreamRunner> runner;
  ASSERT_NO_FATAL_FAILURE(OpenAfterOneBatch(faulty, runner));
  Produce("payments", 1, 10, 5);
  // The next batch is planned from what the runner holds: its offsets are the store's next call.
  faulty->SetOptions({.fail_nth_call = 1, .latency_ms = 300});
  Result<std::optional<BatchCommit>> failed = runner->RunBatch();
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().message().find("injected fault"), std::string::npos)
      << failed.status().ToString();
  EXPECT_EQ(Counts(), std::make_pair(int64_t{10}, int64_t{10}));
  faulty->SetOptions({});
  ASSERT_OK_AND_ASSIGN(std::optional<BatchCommit> next, runner->RunBatch());
  ASSERT_TRUE(next);
  EXPECT_EQ(next->batch_id, 1);
  EXPECT_EQ(Counts(), std::make_pair(int64_t{15}, int64_t{15}));
}

// An idle stream's polls plan from what the run holds: none reads or writes the checkpoint
// folder (here failing every call meanwhile), and the batch after them is the next one.
TEST_F(StreamRunnerTest, IdlePollsPlanFromWhatTheRunHolds) {
  std::shared_ptr<FaultyObjectStore> faulty;
  std::unique_ptr<StreamRunner> runner;
  ASSERT_NO_FATAL_FAILURE(OpenAfterOneBatch(faulty, runner));
  faulty->SetOptions({.failure_probability = 1.0});
  for (int poll = 0; poll < 3; poll++) {
    ASSERT_OK_AND_ASSIGN(std::optional<BatchCommit> idle, runner->RunBatch());
    EXPECT_FALSE(idle) << "poll " << poll;
  }
  faulty->SetOptions({});
  Produce("payments", 1, 10, 5);
  ASSERT_OK_AND_ASSIGN(std::optional<BatchCommit> next, runner->RunBatch());
  ASSERT_TRUE(next);
  EXPECT_EQ(next->batch_id, 1);
  EXPECT_EQ(Counts(), std::make_pair(int64_t{15}, int64_t{15}));
}

// A run that plans from what it holds still loses to another run of the stream that
// planned that batch meanwhile: Conflict, and nothing committed twice.
TEST_F(StreamRunnerTest, ARunPlanningFromWhatItHoldsLosesToAnotherRun) {
  Produce("payments", 0, 0, 10);
  ASSERT_OK_AND_ASSIGN(auto first, OpenRunner(Statement()));
  ASSERT_OK_AND_ASSIGN(std::optional<BatchCommit> zero, first->RunBatch());
  ASSERT_TRUE(zero);
  Produce("payments", 1, 10, 5);
  ASSERT_OK_AND_ASSIGN(auto second, OpenRunner(Statement()));
  ASSERT_OK_AND_ASSIGN(std::optional<BatchCommit> one, second->RunBatch());
  ASSERT_TRUE(one);
  EXPECT_EQ(one->batch_id, 1);
  Produce("payments", 2, 15, 5);
  Result<std::optional<BatchCommit>> lost = first->RunBatch();  // plans batch 1 again
  ASSERT_FALSE(lost.ok());
  EXPECT_EQ(lost.status().code(), ErrorCode::kConflict) << lost.status().ToString();
  EXPECT_EQ(Counts(), std::make_pair(int64_t{15}, int64_t{15}));
  ASSERT_OK_AND_ASSIGN(std::optional<BatchCommit> two, first->RunBatch());  // from the folder now
  ASSERT_TRUE(two);
  EXPECT_EQ(two->batch_id, 2);
  EXPECT_EQ(Counts(), std::make_pair(int64_t{20}, int64_t{20}));
}

// The warehouse's store (the catalog, the sink's log and data files, which DuckDB reads
// through it) fails one call in eight at random, half the time after the write took effect;
// the runner, and at times the session, are reopened after failures, as a restarted process
// would be. Every failure is an injected one, and every record lands once.
TEST_F(StreamRunnerTest, WarehouseStoreFailuresNeitherLoseNorRepeatARecord) {
  const std::string name = "faulty-warehouse-" + std::to_string(reinterpret_cast<uintptr_t>(this));
  auto faulty = std::make_shared<FaultyObjectStore>(NewMemoryObjectStore(), FaultOptions{});
  SetNamedMemoryStore(name, faulty);
  auto open_session = [&]() -> Status {
    ASSIGN_OR_RETURN(session_, sql::Session::Open({.warehouse_dir = "memory://" + name}));
    return kafka::RegisterReadKafka(session_->connection().raw());
  };
  ASSERT_OK(open_session());
  ASSERT_OK(session_->Execute("CREATE TABLE bronze (v VARCHAR, p INTEGER, o BIGINT)").status());
  int produced = 0;
  std::unique_ptr<StreamRunner> runner;
  int failures = 0;
  for (uint64_t attempt = 1; attempt < 2'000; attempt++) {
    if (attempt % 40 == 1 && produced < 400) {
      Produce("payments", static_cast<int32_t>(attempt % 3), produced, 50);
      produced += 50;
    }
    faulty->SetOptions(
        {.failure_probability = 1.0 / 8, .seed = attempt, .fail_after_write = attempt % 2 == 0});
    Result<std::optional<BatchCommit>> ran = std::optional<BatchCommit>();
    if (!runner) {
      Result<std::unique_ptr<StreamRunner>> opened = OpenRunner(Statement(20));
      if (opened.ok()) runner = std::move(opened).value();
      if (!opened.ok()) ran = opened.status();
    }
    if (runner) ran = runner->RunBatch();
    if (!ran.ok()) {
      EXPECT_NE(ran.status().message().find("injected fault"), std::string::npos) << ran.status().ToString();
      failures++;
      runner.reset();
      if (attempt % 4 == 0) {
        faulty->SetOptions({});
        ASSERT_OK(open_session());
      }
      continue;
    }
    if (!*ran && produced >= 400) break;
  }
  faulty->SetOptions({});
  runner.reset();
  ASSERT_OK(open_session());
  ASSERT_OK_AND_ASSIGN(auto last, OpenRunner(Statement(20)));
  basin::testing::RunAvailableNow(*last, [] {});
  EXPECT_GT(failures, 5);
  EXPECT_EQ(produced, 400);
  EXPECT_EQ(Counts(), std::make_pair(int64_t{400}, int64_t{400}));
  last.reset();
  session_.reset();
  ForgetNamedMemoryStore(name);
}

}  // namespace
}  // namespace basin::stream
