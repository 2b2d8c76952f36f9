// Checkpoint writing: the table read back from Basin's checkpoints equals the table
// replayed from JSON commits alone; tombstone retention; a failed checkpoint never fails
// its commit.
#include "delta/checkpoint_writer.h"

#include <algorithm>
#include <filesystem>
#include <future>
#include <mutex>

#include "checkpoint_test_util.h"
#include "delta/checkpoint_worker.h"
#include "delta/log_segment.h"
#include "testing/forwarding_store.h"

namespace basin::delta {
namespace {

namespace fs = std::filesystem;
using testing::CommitRichHistory;
using testing::ExpectSameAsJsonReplay;
using testing::JsonOnlyCopy;
using testing::TableFixture;
using testing::TestAdd;
using testing::TestMetadata;

constexpr int64_t kDayMs = 86'400'000;

// 25 commits: adds, removes (recent and expired tombstones), txns, a protocol and metadata
// change.
void Build25Commits(TableFixture& table, int64_t now_ms, std::vector<CommitResult>* results) {
  ASSERT_OK(table.Create({{"delta.appendOnly", "false"}}));
  TransactionOptions options = TableFixture::Options();
  options.checkpoint_io = &table.log_io();
  options.clock_ms = [now_ms] { return now_ms; };
  CommitRichHistory(
      table, 24, now_ms, options,
      [](Transaction& txn) {
        txn.UpdateProtocol(Protocol{1, 2, std::nullopt, std::nullopt});
        txn.UpdateMetadata(TestMetadata({{"delta.appendOnly", "false"}, {"owner", "it's me"}}));
      },
      results);
}

// `read_tombstones`: each commit's transaction read its snapshot with tombstones, so the
// checkpoints are written from that snapshot brought forward rather than from a replay.
void CompareWithAndWithoutCheckpoints(std::shared_ptr<ObjectStore> store, bool read_tombstones = false) {
  TableFixture table(store);
  table.set_read_tombstones(read_tombstones);
  const int64_t now_ms = 1'750'000'000'000;
  std::vector<CommitResult> results;
  Build25Commits(table, now_ms, &results);
  if (::testing::Test::HasFatalFailure()) return;
  EXPECT_EQ(results[9].checkpoint_version, 10);
  EXPECT_EQ(results[19].checkpoint_version, 20);
  EXPECT_FALSE(results[10].checkpoint_version.has_value());
  EXPECT_OK(store->Head(std::string(kLogFolder) + "00000000000000000010.checkpoint.parquet").status());
  EXPECT_OK(store->Head(std::string(kLogFolder) + "00000000000000000020.checkpoint.parquet").status());
  ASSERT_OK_AND_ASSIGN(std::string last, store->Get(std::string(kLogFolder) + "_last_checkpoint"));
  auto last_json = nlohmann::json::parse(last, nullptr, false);
  EXPECT_EQ(last_json["version"], 20);

  TableFixture replayed(JsonOnlyCopy(*store));
  for (int64_t version : {10, 15, 20, 24}) {
    SCOPED_TRACE("version " + std::to_string(version));
    ASSERT_OK_AND_ASSIGN(auto listing, ListLog(*store));
    ASSERT_OK_AND_ASSIGN(LogSegment segment, BuildLogSegment(listing, version, "table"));
    ASSERT_TRUE(segment.checkpoint.has_value());
    EXPECT_EQ(segment.checkpoint->version, version / 10 * 10);
    EXPECT_EQ(segment.checkpoint->type, LogFileType::kClassicCheckpoint);
    size_t dropped = 0;
    ExpectSameAsJsonReplay(table, replayed, version, version / 10 * 10, now_ms, 7 * kDayMs, &dropped);
    EXPECT_GT(dropped, 0u);
  }
}

TEST(CheckpointWriterTest, LocalTableReadsBackIdenticallyFromCheckpoints) {
  basin::testing::TempDir dir;
  ASSERT_OK_AND_ASSIGN(auto store, OpenLocalObjectStore(dir.str()));
  CompareWithAndWithoutCheckpoints(store);

  // The file has the protocol's checkpoint schema.
  TableFixture table(store);
  auto path = store->LocalPath(std::string(kLogFolder) + "00000000000000000020.checkpoint.parquet");
  ASSERT_TRUE(path.has_value());
  ASSERT_OK_AND_ASSIGN(auto columns, table.conn().DescribeQuery("SELECT * FROM read_parquet(" +
                                                                engine::QuoteLiteral(*path) + ")"));
  std::map<std::string, const engine::ColumnType*> by_name;
  for (const auto& c : columns) by_name[c.name] = &c;
  for (const char* name : {"txn", "add", "remove", "metaData", "protocol", "domainMetadata"}) {
    ASSERT_TRUE(by_name.count(name)) << name;
  }
  std::map<std::string, std::string> add_fields;
  for (const auto& f : by_name["add"]->children) add_fields[f.name] = f.type_name;
  EXPECT_EQ(add_fields["stats"], "VARCHAR");
  EXPECT_EQ(add_fields["partitionValues"], "MAP(VARCHAR, VARCHAR)");
  EXPECT_EQ(add_fields["size"], "BIGINT");
  EXPECT_EQ(add_fields["deletionVector"].rfind("STRUCT(", 0), 0u) << add_fields["deletionVector"];
  ASSERT_OK_AND_ASSIGN(auto counts,
                       table.conn().Query("SELECT count(\"add\"), count(remove), count(txn), "
                                          "count(\"metaData\"), count(protocol) FROM read_parquet(" +
                                          engine::QuoteLiteral(*path) + ")"));
  SnapshotOptions at20;
  at20.version = 20;
  ASSERT_OK_AND_ASSIGN(auto snapshot20, table.Load(at20));
  EXPECT_EQ(counts.at(0, 0), std::to_string(snapshot20->files.size()));
  EXPECT_NE(counts.at(0, 1), "0");
  EXPECT_EQ(counts.at(0, 2), std::to_string(snapshot20->set_transactions.size()));
  EXPECT_EQ(counts.at(0, 3), "1");
  EXPECT_EQ(counts.at(0, 4), "1");
}

TEST(CheckpointWriterTest, MemoryTableReadsBackIdenticallyFromCheckpoints) {
  CompareWithAndWithoutCheckpoints(NewMemoryObjectStore());
}

TEST(CheckpointWriterTest, CheckpointsWrittenFromTheReadSnapshotReadBackIdentically) {
  CompareWithAndWithoutCheckpoints(NewMemoryObjectStore(), /*read_tombstones=*/true);
}

TEST(CheckpointWriterTest, RewritingACheckpointGivesTheSameTable) {
  auto store = NewMemoryObjectStore();
  TableFixture table(store);
  ASSERT_OK(table.Create());
  for (int i = 0; i < 3; i++) {
    ASSERT_OK_AND_ASSIGN(auto txn, table.Begin());
    txn->Add(TestAdd("f" + std::to_string(i) + ".parquet"));
    ASSERT_OK(txn->Commit());
  }
  ASSERT_OK_AND_ASSIGN(CheckpointInfo first, CheckpointVersion(store, "table", table.log_io(), 3, 0));
  EXPECT_EQ(first.version, 3);
  EXPECT_EQ(first.num_add_files, 3);
  EXPECT_EQ(first.num_actions, 5);  // protocol, metaData, 3 adds
  ASSERT_OK_AND_ASSIGN(CheckpointInfo again, CheckpointVersion(store, "table", table.log_io(), 3, 0));
  EXPECT_EQ(again.num_actions, first.num_actions);
  // An older checkpoint written late does not move _last_checkpoint back.
  ASSERT_OK(CheckpointVersion(store, "table", table.log_io(), 1, 0));
  ASSERT_OK_AND_ASSIGN(std::string last, store->Get(std::string(kLogFolder) + "_last_checkpoint"));
  EXPECT_EQ(nlohmann::json::parse(last, nullptr, false)["version"], 3);
  ASSERT_OK_AND_ASSIGN(auto snapshot, table.Load());
  EXPECT_EQ(snapshot->files.size(), 3u);
}

// Fails every Put of a checkpoint file; everything else passes through.
class NoCheckpointStore final : public ::basin::testing::ForwardingStore {
 public:
  using ForwardingStore::ForwardingStore;

  Result<std::unique_ptr<WritableObject>> OpenWrite(const std::string& key,
                                                    const ObjectWriteOptions& options = {}) override {
    if (key.find(".checkpoint.") != std::string::npos) return Status::IOError("disk full writing " + key);
    return ForwardingStore::OpenWrite(key, options);
  }
  Status Put(const std::string& key, const std::string& data) override {
    if (key.find(".checkpoint.") != std::string::npos) return Status::IOError("disk full writing " + key);
    return ForwardingStore::Put(key, data);
  }
};

TEST(CheckpointWriterTest, FailedCheckpointDoesNotFailTheCommit) {
  auto store = std::make_shared<NoCheckpointStore>(NewMemoryObjectStore());
  TableFixture table(store);
  ASSERT_OK(table.Create({{"delta.checkpointInterval", "2"}}));
  TransactionOptions options = TableFixture::Options();
  options.checkpoint_io = &table.log_io();
  ASSERT_OK_AND_ASSIGN(auto first, table.Begin(options));
  first->Add(TestAdd("a.parquet"));
  ASSERT_OK_AND_ASSIGN(CommitResult r1, first->Commit());
  EXPECT_OK(r1.checkpoint_status);
  ASSERT_OK_AND_ASSIGN(auto second, table.Begin(options));
  second->Add(TestAdd("b.parquet"));
  ASSERT_OK_AND_ASSIGN(CommitResult r2, second->Commit());
  EXPECT_EQ(r2.version, 2);
  EXPECT_FALSE(r2.checkpoint_version.has_value());
  EXPECT_EQ(r2.checkpoint_status.code(), ErrorCode::kIOError);
  EXPECT_NE(r2.checkpoint_status.message().find("disk full"), std::string::npos);
  ASSERT_OK_AND_ASSIGN(auto snapshot, table.Load());
  EXPECT_EQ(snapshot->version, 2);
  EXPECT_EQ(snapshot->files.size(), 2u);
}

// With a CheckpointWorker the commit returns before its checkpoint is written; the
// checkpoints it writes read back as the JSON replay does.
TEST(CheckpointWriterTest, CheckpointsWrittenByTheWorkerReadBackIdentically) {
  auto store = NewMemoryObjectStore();
  TableFixture table(store);
  table.set_read_tombstones(true);
  const int64_t now_ms = 1'750'000'000'000;
  ASSERT_OK(table.Create({{"delta.appendOnly", "false"}}));
  TransactionOptions options = TableFixture::Options();
  options.checkpoint_io = &table.log_io();
  options.clock_ms = [now_ms] { return now_ms; };
  CheckpointWorker worker;
  options.checkpoint_worker = &worker;
  std::vector<CommitResult> results;
  // Version 10's checkpoint is waited for before the 12th commit: a job still queued when
  // version 20's is submitted would be replaced by it.
  CommitRichHistory(
      table, 24, now_ms, options, [&worker](Transaction&) { worker.Drain(); }, &results);
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  EXPECT_TRUE(results[9].checkpoint_queued);
  EXPECT_FALSE(results[9].checkpoint_version.has_value());
  EXPECT_FALSE(results[10].checkpoint_queued);
  worker.Drain();
  EXPECT_TRUE(worker.TakeFailures().empty());
  ASSERT_OK_AND_ASSIGN(std::string last, store->Get(std::string(kLogFolder) + "_last_checkpoint"));
  EXPECT_EQ(nlohmann::json::parse(last, nullptr, false)["version"], 20);
  TableFixture replayed(JsonOnlyCopy(*store));
  for (int64_t version : {10, 20}) {
    SCOPED_TRACE("version " + std::to_string(version));
    ExpectSameAsJsonReplay(table, replayed, version, version, now_ms, 7 * kDayMs, nullptr);
  }
}

TEST(CheckpointWriterTest, FailedCheckpointOfTheWorkerIsItsFailure) {
  auto store = std::make_shared<NoCheckpointStore>(NewMemoryObjectStore());
  TableFixture table(store);
  ASSERT_OK(table.Create({{"delta.checkpointInterval", "2"}}));
  TransactionOptions options = TableFixture::Options();
  options.checkpoint_io = &table.log_io();
  CheckpointWorker worker;
  options.checkpoint_worker = &worker;
  for (const char* file : {"a.parquet", "b.parquet"}) {
    ASSERT_OK_AND_ASSIGN(auto txn, table.Begin(options));
    txn->Add(TestAdd(file));
    ASSERT_OK_AND_ASSIGN(CommitResult result, txn->Commit());
    EXPECT_OK(result.checkpoint_status);
  }
  worker.Drain();
  std::vector<std::string> failures = worker.TakeFailures();
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_NE(failures[0].find("version 2 is committed, but its checkpoint was not written"), std::string::npos)
      << failures[0];
  EXPECT_NE(failures[0].find("disk full"), std::string::npos) << failures[0];
  EXPECT_TRUE(worker.TakeFailures().empty());
  ASSERT_OK_AND_ASSIGN(auto snapshot, table.Load());
  EXPECT_EQ(snapshot->version, 2);
}

// Jobs run in order, one at a time; a table's job not started yet gives way to its newer
// one; the destructor waits for what is queued.
TEST(CheckpointWorkerTest, RunsInOrderAndReplacesAQueuedJobOfTheSameTable) {
  std::vector<std::string> ran;
  std::mutex ran_mutex;
  auto job = [&](std::string name, Status status = Status::OK()) {
    return [&ran, &ran_mutex, name, status] {
      std::lock_guard<std::mutex> lock(ran_mutex);
      ran.push_back(name);
      return status;
    };
  };
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::vector<std::string> failures;
  {
    CheckpointWorker worker;
    worker.Submit("a", [released] {
      released.wait();
      return Status::OK();
    });
    worker.Submit("b", job("b 10"));
    worker.Submit("c", job("c 10", Status::IOError("c: version 10 failed")));
    worker.Submit("b", job("b 20"));
    release.set_value();
    worker.Drain();
    failures = worker.TakeFailures();
    worker.Submit("d", job("d 10"));
  }
  EXPECT_EQ(ran, (std::vector<std::string>{"b 20", "c 10", "d 10"}));
  EXPECT_EQ(failures, (std::vector<std::string>{"c: version 10 failed"}));
}

TEST(CheckpointWriterTest, BadCheckpointIntervalIsReportedNotFatal) {
  TableFixture table(NewMemoryObjectStore());
  ASSERT_OK(table.Create({{"delta.checkpointInterval", "often"}}));
  TransactionOptions options = TableFixture::Options();
  options.checkpoint_io = &table.log_io();
  ASSERT_OK_AND_ASSIGN(auto txn, table.Begin(options));
  txn->Add(TestAdd("a.parquet"));
  ASSERT_OK_AND_ASSIGN(CommitResult result, txn->Commit());
  EXPECT_EQ(result.checkpoint_status.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(result.checkpoint_status.message().find("delta.checkpointInterval"), std::string::npos);
}

TEST(CheckpointWriterTest, TableProperties) {
  EXPECT_EQ(*CheckpointInterval(TestMetadata()), 10);
  EXPECT_EQ(*CheckpointInterval(TestMetadata({{"delta.checkpointInterval", "25"}})), 25);
  ASSERT_ERROR_CODE(CheckpointInterval(TestMetadata({{"delta.checkpointInterval", "0"}})), kInvalidArgument);
  EXPECT_EQ(*DeletedFileRetentionMs(TestMetadata()), 7 * kDayMs);
  EXPECT_EQ(
      *DeletedFileRetentionMs(TestMetadata({{"delta.deletedFileRetentionDuration", "interval 2 days"}})),
      2 * kDayMs);
  EXPECT_EQ(
      *DeletedFileRetentionMs(TestMetadata({{"delta.deletedFileRetentionDuration", "INTERVAL 1 HOUR"}})),
      3'600'000);
  EXPECT_EQ(
      *DeletedFileRetentionMs(TestMetadata({{"delta.deletedFileRetentionDuration", "interval 1 week"}})),
      7 * kDayMs);
  ASSERT_ERROR_CODE(DeletedFileRetentionMs(TestMetadata({{"delta.deletedFileRetentionDuration", "soon"}})),
                    kInvalidArgument);
  ASSERT_ERROR_CODE(
      DeletedFileRetentionMs(TestMetadata({{"delta.deletedFileRetentionDuration", "interval 2 fortnights"}})),
      kInvalidArgument);
}

}  // namespace
}  // namespace basin::delta
