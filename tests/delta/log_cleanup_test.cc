// Log cleanup: with an injected clock (no sleeping), expired commits, checkpoints,
// checksum and compaction files and unreferenced sidecars go; every version inside the
// retention window still loads with the same rows, time travel inside it still resolves,
// older versions are NotFound; a cleanup interrupted at any deletion leaves no version
// Corrupt.
#include "delta/log_cleanup.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>

#include "checkpoint_test_util.h"
#include "delta/checkpoint.h"
#include "delta/checkpoint_writer.h"
#include "delta/history.h"
#include "delta/log_segment.h"

namespace basin::delta {
namespace {

namespace fs = std::filesystem;
using testing::Rows;
using testing::Serialized;
using testing::TableFixture;
using testing::TestAdd;
using testing::TestMetadata;
using testing::TestRemove;

constexpr int64_t kHourMs = 3'600'000;
constexpr int64_t kDayMs = 24 * kHourMs;
// 2024-03-01 06:00:00 UTC
constexpr int64_t kStartMs = 1'709'272'800'000;

// Wraps a store so that objects' modification times come from a test clock (`*now_ms` when
// written), and so that deletes can be made to fail after a budget (a crash mid-cleanup).
class ClockedStore final : public ObjectStore {
 public:
  ClockedStore(std::shared_ptr<ObjectStore> base, const int64_t* now_ms)
      : base_(std::move(base)), now_ms_(now_ms) {}

  Result<std::unique_ptr<ReadableObject>> OpenRead(const std::string& key,
                                                   const ObjectReadOptions& options = {}) override {
    return base_->OpenRead(key, options);
  }
  // Objects written this way (checkpoint Parquet files) take the test clock's time when
  // they are opened.
  Result<std::unique_ptr<WritableObject>> OpenWrite(const std::string& key,
                                                    const ObjectWriteOptions& options = {}) override {
    ASSIGN_OR_RETURN(auto writer, base_->OpenWrite(key, options));
    SetModificationTime(key, *now_ms_);
    return writer;
  }
  Result<std::string> Get(const std::string& key) override { return base_->Get(key); }
  Result<std::string> GetRange(const std::string& key, uint64_t offset, uint64_t length) override {
    return base_->GetRange(key, offset, length);
  }
  Result<ObjectInfo> Head(const std::string& key) override {
    ASSIGN_OR_RETURN(ObjectInfo info, base_->Head(key));
    return WithClockTime(std::move(info));
  }
  Status Put(const std::string& key, const std::string& data) override {
    RETURN_IF_ERROR(base_->Put(key, data));
    SetModificationTime(key, *now_ms_);
    return Status::OK();
  }
  Status PutIfAbsent(const std::string& key, const std::string& data) override {
    RETURN_IF_ERROR(base_->PutIfAbsent(key, data));
    SetModificationTime(key, *now_ms_);
    return Status::OK();
  }
  Status Delete(const std::string& key) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (deletes_left_ && (*deletes_left_)-- <= 0) return Status::IOError("injected crash deleting " + key);
      mtimes_.erase(key);
    }
    return base_->Delete(key);
  }
  Result<std::vector<ObjectInfo>> List(const std::string& prefix) override {
    ASSIGN_OR_RETURN(auto listed, base_->List(prefix));
    for (auto& info : listed) info = WithClockTime(std::move(info));
    return listed;
  }
  bool CheapRandomReads() const override { return base_->CheapRandomReads(); }
  std::optional<std::string> LocalPath(const std::string& key) const override {
    return base_->LocalPath(key);
  }
  std::string Describe() const override { return "clocked(" + base_->Describe() + ")"; }

  void SetModificationTime(const std::string& key, int64_t ms) {
    std::lock_guard<std::mutex> lock(mu_);
    mtimes_[key] = ms;
  }
  // Deletes after the next `n` fail.
  void FailDeletesAfter(int n) {
    std::lock_guard<std::mutex> lock(mu_);
    deletes_left_ = n;
  }

 private:
  ObjectInfo WithClockTime(ObjectInfo info) {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = mtimes_.find(info.key); it != mtimes_.end()) info.modification_time_ms = it->second;
    return info;
  }

  std::shared_ptr<ObjectStore> base_;
  const int64_t* now_ms_;
  std::mutex mu_;
  std::map<std::string, int64_t> mtimes_;
  std::optional<int> deletes_left_;
};

// "2024-03-05 00:00:00.000" for time travel.
std::string TimestampText(int64_t ms) {
  std::string text = FormatTimestampMs(ms);
  return text.substr(0, text.size() - std::string(" UTC").size());
}

int64_t StartOfUtcDay(int64_t ms) { return ms / kDayMs * kDayMs; }

Result<std::shared_ptr<Snapshot>> LoadVersion(TableFixture& table, int64_t version) {
  SnapshotOptions options;
  options.version = version;
  return table.Load(options);
}

Status CreateTable(const std::shared_ptr<ObjectStore>& store, Protocol protocol,
                   std::map<std::string, std::string> configuration, TransactionOptions options) {
  Transaction txn = Transaction::CreateTable(store, "table", std::move(options));
  txn.UpdateProtocol(std::move(protocol));
  txn.UpdateMetadata(TestMetadata(std::move(configuration)));
  return txn.Commit().status();
}

// A table committed every 8 hours from kStartMs, 20 commits, a checkpoint every 3, with
// real Parquet data files (3 rows each) and some removes, in a local folder. Cleanup is
// off in the table so that tests run it themselves.
class MtimeRetentionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(auto local, OpenLocalObjectStore(dir_.str()));
    store_ = std::make_shared<ClockedStore>(local, &now_ms_);
    table_ = std::make_unique<TableFixture>(store_);
    TransactionOptions options = Options();
    ASSERT_OK(CreateTable(store_, Protocol{1, 2, std::nullopt, std::nullopt}, TableConfig(false), options));
    commit_times_.push_back(now_ms_);
    for (int v = 1; v <= 20; v++) {
      now_ms_ += 8 * kHourMs;
      const std::string path = "part-" + std::to_string(v) + ".parquet";
      ASSERT_OK(table_->conn().Execute("COPY (SELECT range AS id FROM range(" + std::to_string(v * 10) +
                                       ", " + std::to_string(v * 10 + 3) + ")) TO " +
                                       engine::QuoteLiteral(*local->LocalPath(path)) + " (FORMAT parquet)"));
      AddFile add = TestAdd(path);
      ASSERT_OK_AND_ASSIGN(ObjectInfo written, local->Head(path));
      add.size = static_cast<int64_t>(written.size_bytes);
      add.stats = R"({"numRecords":3})";
      ASSERT_OK_AND_ASSIGN(auto txn, table_->Begin(options));
      txn->Add(add);
      if (v % 4 == 0) txn->Remove(TestRemove("part-" + std::to_string(v - 2) + ".parquet"));
      ASSERT_OK_AND_ASSIGN(CommitResult result, txn->Commit());
      ASSERT_EQ(result.version, v);
      ASSERT_OK(result.checkpoint_status);
      EXPECT_EQ(result.checkpoint_version.has_value(), v % 3 == 0);
      EXPECT_EQ(result.log_files_deleted, 0);
      commit_times_.push_back(now_ms_);
    }
    // Other files cleanup deals with: a version checksum and its Hadoop companion, a
    // compaction of versions 1..2, and a file Basin does not know.
    ASSERT_OK(store_->Put("_delta_log/00000000000000000001.crc", "{}"));
    ASSERT_OK(store_->Put("_delta_log/.00000000000000000001.json.crc", "crc"));
    ASSERT_OK(store_->Put("_delta_log/notes.txt", "keep me"));
    std::string compaction;
    for (int64_t v : {2, 1}) {
      ASSERT_OK_AND_ASSIGN(std::string content, store_->Get(CommitKey(v)));
      for (size_t start = 0; start < content.size();) {
        size_t end = content.find('\n', start);
        std::string line = content.substr(start, end - start);
        if (line.find("\"commitInfo\"") == std::string::npos) compaction += line + "\n";
        start = end == std::string::npos ? content.size() : end + 1;
      }
    }
    ASSERT_OK(store_->Put("_delta_log/00000000000000000001.00000000000000000002.compacted.json", compaction));
    for (int64_t v = 0; v <= 20; v++) {
      ASSERT_OK_AND_ASSIGN(auto snapshot, LoadVersion(*table_, v));
      files_.push_back(Serialized(snapshot->files));
      rows_.push_back(Rows(*snapshot, table_->conn()));
    }
  }

  TransactionOptions Options() {
    TransactionOptions options = TableFixture::Options();
    options.clock_ms = [this] { return now_ms_; };
    options.checkpoint_io = &table_->log_io();
    return options;
  }

  static std::map<std::string, std::string> TableConfig(bool cleanup) {
    return {{"delta.checkpointInterval", "3"},
            {"delta.logRetentionDuration", "interval 2 days"},
            {"delta.enableExpiredLogCleanup", cleanup ? "true" : "false"}};
  }

  // The oldest version cleanup must keep, derived from the commit times.
  int64_t ExpectedOldestKept() const {
    const int64_t cutoff = StartOfUtcDay(now_ms_ - 2 * kDayMs);
    int64_t cutoff_commit = 0;
    for (size_t v = 0; v < commit_times_.size(); v++) {
      if (commit_times_[v] <= cutoff) cutoff_commit = static_cast<int64_t>(v);
    }
    return cutoff_commit / 3 * 3;
  }

  // Versions from `oldest` on load with the rows and files they had before cleanup.
  void ExpectVersionsIntact(TableFixture& table, int64_t oldest) {
    for (int64_t v = oldest; v <= 20; v++) {
      SCOPED_TRACE("version " + std::to_string(v));
      ASSERT_OK_AND_ASSIGN(auto snapshot, LoadVersion(table, v));
      EXPECT_EQ(Serialized(snapshot->files), files_[v]);
      EXPECT_EQ(Rows(*snapshot, table.conn()), rows_[v]);
    }
  }

  basin::testing::TempDir dir_;
  int64_t now_ms_ = kStartMs;
  std::shared_ptr<ClockedStore> store_;
  std::unique_ptr<TableFixture> table_;
  std::vector<int64_t> commit_times_;            // by version
  std::vector<std::vector<std::string>> files_;  // by version, before cleanup
  std::vector<std::vector<std::string>> rows_;   // by version, before cleanup
};

TEST_F(MtimeRetentionTest, KeepsEveryVersionInsideTheWindowAndNothingOlder) {
  // 2024-03-07 22:00: the cutoff is 2024-03-05 00:00; version 11 (03-04 22:00) is the
  // newest commit at or before it, and the checkpoint at 9 the newest at or below that.
  ASSERT_EQ(ExpectedOldestKept(), 9);
  ASSERT_OK_AND_ASSIGN(LogCleanupResult result, CleanUpExpiredLogs(*store_, TestMetadata(TableConfig(true)),
                                                                   now_ms_, table_->log_io(), "table"));
  EXPECT_TRUE(result.enabled);
  EXPECT_EQ(result.cutoff_ms, ParseTimestampMs("2024-03-05").ValueOr(-1));
  ASSERT_EQ(result.oldest_kept_version, 9);

  std::set<std::string> deleted(result.deleted_keys.begin(), result.deleted_keys.end());
  std::set<std::string> expected_deleted = {
      "_delta_log/00000000000000000003.checkpoint.parquet",
      "_delta_log/00000000000000000006.checkpoint.parquet",
      "_delta_log/00000000000000000001.00000000000000000002.compacted.json",
      "_delta_log/00000000000000000001.crc",
      "_delta_log/.00000000000000000001.json.crc",
  };
  for (int64_t v = 0; v < 9; v++) expected_deleted.insert(CommitKey(v));
  EXPECT_EQ(deleted, expected_deleted);
  EXPECT_EQ(deleted.size(), result.deleted_keys.size());
  EXPECT_OK(store_->Head(CommitKey(9)).status());
  EXPECT_OK(store_->Head("_delta_log/00000000000000000009.checkpoint.parquet").status());
  EXPECT_OK(store_->Head("_delta_log/notes.txt").status());
  EXPECT_OK(store_->Head("_delta_log/_last_checkpoint").status());

  ExpectVersionsIntact(*table_, 9);
  ASSERT_OK_AND_ASSIGN(auto latest, table_->Load());
  EXPECT_EQ(latest->version, 20);
  EXPECT_EQ(Rows(*latest, table_->conn()), rows_[20]);
  for (int64_t v = 0; v < 9; v++) {
    auto gone = LoadVersion(*table_, v);
    ASSERT_ERROR_CODE(gone, kNotFound);
    EXPECT_NE(gone.status().message().find("version " + std::to_string(v) + " is not available"),
              std::string::npos)
        << gone.status().ToString();
    EXPECT_NE(gone.status().message().find("9..20"), std::string::npos) << gone.status().ToString();
  }

  // Time travel inside the window resolves as before; before the oldest kept commit it
  // is NotFound.
  SnapshotOptions at_cutoff;
  at_cutoff.timestamp = TimestampText(result.cutoff_ms);
  ASSERT_OK_AND_ASSIGN(auto cutoff_snapshot, table_->Load(at_cutoff));
  EXPECT_EQ(cutoff_snapshot->version, 11);
  EXPECT_EQ(Rows(*cutoff_snapshot, table_->conn()), rows_[11]);
  SnapshotOptions at_nine;
  at_nine.timestamp = TimestampText(commit_times_[9]);
  ASSERT_OK_AND_ASSIGN(auto nine, table_->Load(at_nine));
  EXPECT_EQ(nine->version, 9);
  SnapshotOptions before_nine;
  before_nine.timestamp = TimestampText(commit_times_[9] - 1);
  ASSERT_ERROR_CODE(table_->Load(before_nine), kNotFound);

  // Nothing more to do until time moves on.
  ASSERT_OK_AND_ASSIGN(LogCleanupResult again, CleanUpExpiredLogs(*store_, TestMetadata(TableConfig(true)),
                                                                  now_ms_, table_->log_io(), "table"));
  EXPECT_EQ(again.oldest_kept_version, 9);
  EXPECT_TRUE(again.deleted_keys.empty());
}

TEST_F(MtimeRetentionTest, RemovesTemporaryFilesOfInterruptedWritesOnceTheyAreOld) {
  // What a process killed between writing and moving a commit leaves in the log folder.
  const std::string old_temp = "_delta_log/.basin-tmp-4242-7";
  const std::string fresh_temp = "_delta_log/.basin-tmp-4243-0";
  ASSERT_OK(store_->Put(old_temp, "{\"add\":"));
  ASSERT_OK(store_->Put(fresh_temp, "{\"add\":"));
  store_->SetModificationTime(old_temp, now_ms_ - 2 * kDayMs);
  store_->SetModificationTime(fresh_temp, now_ms_ - kHourMs);
  ASSERT_OK_AND_ASSIGN(LogCleanupResult result, CleanUpExpiredLogs(*store_, TestMetadata(TableConfig(true)),
                                                                   now_ms_, table_->log_io(), "table"));
  EXPECT_NE(std::find(result.deleted_keys.begin(), result.deleted_keys.end(), old_temp),
            result.deleted_keys.end());
  ASSERT_ERROR_CODE(store_->Head(old_temp), kNotFound);
  // A write in progress may own the young one.
  EXPECT_OK(store_->Head(fresh_temp).status());
  ExpectVersionsIntact(*table_, 9);
}

TEST_F(MtimeRetentionTest, AnInterruptedCleanupNeverLeavesACorruptVersion) {
  // 2 checkpoints, 1 compaction, 9 commits with one Hadoop .crc companion, 1 checksum file.
  constexpr int kDeletions = 14;
  for (int budget = 0; budget <= kDeletions; budget++) {
    SCOPED_TRACE("deletes allowed: " + std::to_string(budget));
    basin::testing::TempDir copy_dir;
    fs::copy(dir_.path(), copy_dir.path(), fs::copy_options::recursive);
    ASSERT_OK_AND_ASSIGN(auto local, OpenLocalObjectStore(copy_dir.str()));
    auto store = std::make_shared<ClockedStore>(local, &now_ms_);
    ASSERT_OK_AND_ASSIGN(auto log, store_->List(kLogFolder));
    for (const auto& object : log) store->SetModificationTime(object.key, object.modification_time_ms);
    TableFixture table(store);

    store->FailDeletesAfter(budget);
    auto result =
        CleanUpExpiredLogs(*store, TestMetadata(TableConfig(true)), now_ms_, table.log_io(), "table");
    if (budget < kDeletions) {
      ASSERT_ERROR_CODE(result, kIOError);
      EXPECT_NE(result.status().message().find("injected crash"), std::string::npos);
    } else {
      ASSERT_OK(result.status());
      EXPECT_EQ(result->deleted_keys.size(), static_cast<size_t>(kDeletions));
    }
    // Retained versions load as before; older ones do too, or are NotFound.
    auto expect_readable = [&](bool finished) {
      for (int64_t v = 0; v <= 20; v++) {
        SCOPED_TRACE("version " + std::to_string(v));
        auto snapshot = LoadVersion(table, v);
        if (v >= 9) ASSERT_OK(snapshot.status());
        if (v < 9 && finished) ASSERT_ERROR_CODE(snapshot, kNotFound);
        if (!snapshot.ok()) {
          ASSERT_ERROR_CODE(snapshot, kNotFound);
          continue;
        }
        EXPECT_EQ(Serialized((*snapshot)->files), files_[v]);
      }
    };
    expect_readable(budget == kDeletions);
    // A later cleanup picks up where the interrupted one stopped.
    store->FailDeletesAfter(1'000);
    ASSERT_OK_AND_ASSIGN(LogCleanupResult rerun, CleanUpExpiredLogs(*store, TestMetadata(TableConfig(true)),
                                                                    now_ms_, table.log_io(), "table"));
    EXPECT_EQ(rerun.deleted_keys.size(), static_cast<size_t>(kDeletions - budget));
    expect_readable(true);
  }
}

TEST_F(MtimeRetentionTest, NothingIsDeletedWithoutACheckpointBeforeTheCutoffOrWhenDisabled) {
  // Three days in, the cutoff (the first day's midnight) precedes every commit.
  ASSERT_OK_AND_ASSIGN(LogCleanupResult early,
                       CleanUpExpiredLogs(*store_, TestMetadata(TableConfig(true)), kStartMs + 2 * kDayMs,
                                          table_->log_io(), "table"));
  EXPECT_FALSE(early.oldest_kept_version.has_value());
  EXPECT_TRUE(early.deleted_keys.empty());

  ASSERT_OK_AND_ASSIGN(LogCleanupResult disabled,
                       CleanUpExpiredLogs(*store_, TestMetadata(TableConfig(false)), now_ms_ + 100 * kDayMs,
                                          table_->log_io(), "table"));
  EXPECT_FALSE(disabled.enabled);
  EXPECT_TRUE(disabled.deleted_keys.empty());
  ExpectVersionsIntact(*table_, 0);

  // A long retention keeps everything.
  auto config = TableConfig(true);
  config["delta.logRetentionDuration"] = "interval 4 weeks";
  ASSERT_OK_AND_ASSIGN(LogCleanupResult long_retention,
                       CleanUpExpiredLogs(*store_, TestMetadata(config), now_ms_, table_->log_io(), "table"));
  EXPECT_TRUE(long_retention.deleted_keys.empty());
}

TEST(LogCleanupTest, TableProperties) {
  EXPECT_EQ(*LogRetentionMs(TestMetadata()), 30 * kDayMs);
  EXPECT_EQ(*LogRetentionMs(TestMetadata({{"delta.logRetentionDuration", "interval 12 hours"}})),
            12 * kHourMs);
  auto bad = LogRetentionMs(TestMetadata({{"delta.logRetentionDuration", "forever"}}));
  ASSERT_ERROR_CODE(bad, kInvalidArgument);
  EXPECT_NE(bad.status().message().find("delta.logRetentionDuration"), std::string::npos);
  EXPECT_TRUE(*ExpiredLogCleanupEnabled(TestMetadata()));
  EXPECT_FALSE(*ExpiredLogCleanupEnabled(TestMetadata({{"delta.enableExpiredLogCleanup", "FALSE"}})));
  ASSERT_ERROR_CODE(ExpiredLogCleanupEnabled(TestMetadata({{"delta.enableExpiredLogCleanup", "no"}})),
                    kInvalidArgument);
}

TEST(LogCleanupTest, ABadRetentionIsAWarningNotACommitFailure) {
  auto store = NewMemoryObjectStore();
  TableFixture table(store);
  TransactionOptions options = TableFixture::Options();
  options.checkpoint_io = &table.log_io();
  ASSERT_OK(CreateTable(store, Protocol{1, 2, std::nullopt, std::nullopt},
                        {{"delta.checkpointInterval", "1"}, {"delta.logRetentionDuration", "a while"}},
                        options));
  ASSERT_OK_AND_ASSIGN(auto txn, table.Begin(options));
  txn->Add(TestAdd("a.parquet"));
  ASSERT_OK_AND_ASSIGN(CommitResult result, txn->Commit());
  EXPECT_EQ(result.version, 1);
  EXPECT_EQ(result.checkpoint_version, 1);
  EXPECT_EQ(result.log_cleanup_status.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(result.log_cleanup_status.message().find("delta.logRetentionDuration"), std::string::npos);
  ASSERT_OK_AND_ASSIGN(auto snapshot, table.Load());
  EXPECT_EQ(snapshot->files.size(), 1u);
}

// In-commit timestamps decide, not file times: here every file is written "now" by the
// system clock, while commits are days apart by their in-commit timestamps.
TEST(LogCleanupTest, InCommitTimestampsDecideWhatExpires) {
  auto store = NewMemoryObjectStore();
  TableFixture table(store);
  int64_t now_ms = kStartMs;
  TransactionOptions options = TableFixture::Options();
  options.clock_ms = [&now_ms] { return now_ms; };
  options.checkpoint_io = &table.log_io();
  ASSERT_OK(CreateTable(store, Protocol{1, 7, std::nullopt, std::vector<std::string>{"inCommitTimestamp"}},
                        {{"delta.enableInCommitTimestamps", "true"},
                         {"delta.checkpointInterval", "2"},
                         {"delta.logRetentionDuration", "interval 3 days"}},
                        options));
  int64_t deleted = 0;
  for (int v = 1; v <= 8; v++) {
    now_ms += kDayMs;
    ASSERT_OK_AND_ASSIGN(auto txn, table.Begin(options));
    txn->Add(TestAdd("f" + std::to_string(v) + ".parquet"));
    ASSERT_OK_AND_ASSIGN(CommitResult result, txn->Commit());
    ASSERT_OK(result.log_cleanup_status);
    deleted += result.log_files_deleted;
  }
  // At 03-09 06:00 the cutoff is 03-06 00:00: version 4 (03-05 06:00) is the newest commit
  // before it and has a checkpoint.
  EXPECT_GT(deleted, 0);
  ASSERT_OK_AND_ASSIGN(LogListing listing, ListLog(*store));
  EXPECT_EQ(listing.earliest_version(), 4);
  EXPECT_EQ(listing.commits.begin()->first, 4);
  for (int64_t v = 4; v <= 8; v++) {
    ASSERT_OK_AND_ASSIGN(auto snapshot, LoadVersion(table, v));
    EXPECT_EQ(snapshot->files.size(), static_cast<size_t>(v));
    EXPECT_EQ(snapshot->timestamp_ms, kStartMs + v * kDayMs);
  }
  ASSERT_ERROR_CODE(LoadVersion(table, 3), kNotFound);
}

// Through transactions on a V2 table: expired UUID-named checkpoints go with their
// sidecars, referenced and young sidecars stay.
TEST(LogCleanupTest, TransactionsCleanUpV2CheckpointsAndTheirSidecars) {
  int64_t now_ms = kStartMs;
  auto store = std::make_shared<ClockedStore>(NewMemoryObjectStore(), &now_ms);
  TableFixture table(store);
  TransactionOptions options = TableFixture::Options();
  options.clock_ms = [&now_ms] { return now_ms; };
  options.checkpoint_io = &table.log_io();
  std::vector<std::string> features = {"v2Checkpoint"};
  ASSERT_OK(CreateTable(store, Protocol{3, 7, features, features},
                        {{"delta.checkpointPolicy", "v2"},
                         {"delta.checkpointInterval", "4"},
                         {"delta.logRetentionDuration", "interval 1 day"}},
                        options));
  // An orphan from a crashed checkpoint long ago; it must go.
  ASSERT_OK(store->Put(std::string(kSidecarFolder) + "orphan-old.parquet", "x"));
  std::vector<std::vector<std::string>> files(1);
  int64_t deleted = 0;
  for (int v = 1; v <= 24; v++) {
    now_ms += 10 * kHourMs;
    // An orphan written within the last day: a checkpoint may be writing it now.
    if (v == 24) ASSERT_OK(store->Put(std::string(kSidecarFolder) + "orphan-young.parquet", "x"));
    ASSERT_OK_AND_ASSIGN(auto txn, table.Begin(options));
    txn->Add(TestAdd("f" + std::to_string(v) + ".parquet"));
    if (v % 5 == 0) txn->Remove(TestRemove("f" + std::to_string(v - 1) + ".parquet"));
    ASSERT_OK_AND_ASSIGN(CommitResult result, txn->Commit());
    ASSERT_OK(result.checkpoint_status);
    ASSERT_OK(result.log_cleanup_status);
    deleted += result.log_files_deleted;
    ASSERT_OK_AND_ASSIGN(auto snapshot, table.Load());
    files.push_back(Serialized(snapshot->files));
  }
  EXPECT_GT(deleted, 0);
  // Day 10 06:00; cutoff day 9 00:00 (+210 h): version 21 is the newest commit before it,
  // and the checkpoint at 20 the newest at or below that.
  ASSERT_OK_AND_ASSIGN(LogListing listing, ListLog(*store));
  ASSERT_EQ(listing.checkpoints.size(), 2u);
  EXPECT_EQ(listing.checkpoints[0].version, 20);
  EXPECT_EQ(listing.checkpoints[1].version, 24);
  EXPECT_EQ(listing.checkpoints[0].type, LogFileType::kV2Checkpoint);
  EXPECT_EQ(listing.commits.begin()->first, 20);
  for (int64_t v = 20; v <= 24; v++) {
    ASSERT_OK_AND_ASSIGN(auto snapshot, LoadVersion(table, v));
    EXPECT_EQ(Serialized(snapshot->files), files[v]);
  }
  ASSERT_ERROR_CODE(LoadVersion(table, 19), kNotFound);

  // The sidecars left are those the remaining checkpoints name, plus the young orphan.
  std::set<std::string> referenced = {"orphan-young.parquet"};
  for (const auto& checkpoint : listing.checkpoints) {
    ASSERT_OK_AND_ASSIGN(auto actions, ReadCheckpointFiles(*store, table.log_io(), checkpoint));
    for (const auto& action : actions) {
      if (const auto* sidecar = std::get_if<Sidecar>(&action)) referenced.insert(sidecar->path);
    }
  }
  ASSERT_OK_AND_ASSIGN(auto sidecars, store->List(kSidecarFolder));
  std::set<std::string> present;
  for (const auto& object : sidecars) present.insert(object.key.substr(std::string(kSidecarFolder).size()));
  EXPECT_EQ(present, referenced);
  EXPECT_EQ(present.size(), 3u);
}

}  // namespace
}  // namespace basin::delta
