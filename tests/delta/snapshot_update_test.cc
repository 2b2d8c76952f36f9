// UpdateSnapshot: applying only new commits to a loaded snapshot gives the table
// LoadSnapshot gives, reading nothing but the listing and the new commits; and falling back
// to a full load when the log it extended is gone.
#include <set>

#include "checkpoint_test_util.h"
#include "delta/commit_writer.h"
#include "delta/file_stats.h"
#include "delta/protocol.h"
#include "delta/snapshot.h"
#include "testing/forwarding_store.h"

namespace basin::delta {
namespace {

using testing::ExpectSameTable;
using testing::TestAdd;
using testing::TestRemove;

using ::basin::testing::RecordingStore;

class SnapshotUpdateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = std::make_shared<RecordingStore>(NewMemoryObjectStore());
    table_ = std::make_unique<testing::TableFixture>(store_);
    // Checkpoints every 3 commits, so updates start from snapshots read from checkpoints.
    ASSERT_OK(table_->Create({{"delta.checkpointInterval", "3"}}));
  }

  // Commits `fill`'s actions on the latest version, writing checkpoints when due.
  void Commit(const std::function<void(Transaction&)>& fill) {
    ASSERT_OK_AND_ASSIGN(auto snapshot, table_->Load());
    TransactionOptions options = testing::TableFixture::Options();
    options.checkpoint_io = &table_->log_io();
    Transaction txn(snapshot, options);
    fill(txn);
    ASSERT_OK(txn.Commit());
  }

  std::shared_ptr<const Snapshot> Update(std::shared_ptr<const Snapshot> snapshot) {
    auto updated = UpdateSnapshot(std::move(snapshot), table_->log_io());
    EXPECT_OK(updated.status());
    return updated.ok() ? *updated : nullptr;
  }

  std::shared_ptr<Snapshot> Load(bool keep_tombstones = false) {
    SnapshotOptions options;
    options.keep_tombstones = keep_tombstones;
    auto snapshot = table_->Load(options);
    EXPECT_OK(snapshot.status());
    return snapshot.ok() ? *snapshot : nullptr;
  }

  std::shared_ptr<RecordingStore> store_;
  std::unique_ptr<testing::TableFixture> table_;
};

TEST_F(SnapshotUpdateTest, NothingNewReturnsTheSameSnapshot) {
  Commit([](Transaction& txn) { txn.Add(TestAdd("a.parquet")); });
  std::shared_ptr<const Snapshot> snapshot = Load();
  store_->Reset();
  EXPECT_EQ(Update(snapshot), snapshot);
  // Asks for the next commit (and the newest checkpoint's version) rather than listing.
  EXPECT_EQ(store_->listings, 0);
  EXPECT_EQ(store_->reads, (std::set<std::string>{"_delta_log/_last_checkpoint"}));
}

TEST_F(SnapshotUpdateTest, AppliesOnlyTheNewCommits) {
  Commit([](Transaction& txn) { txn.Add(TestAdd("a.parquet")); });
  Commit([](Transaction& txn) { txn.Add(TestAdd("b%20c.parquet")); });
  Commit([](Transaction& txn) { txn.Add(TestAdd("gone.parquet")); });  // version 3: a checkpoint
  std::shared_ptr<const Snapshot> old = Load();
  ASSERT_EQ(old->version, 3);
  const int64_t old_files = static_cast<int64_t>(old->files.size());

  // Removes (one spelled decoded), re-adds with a deletion vector, app and domain changes.
  Commit([](Transaction& txn) {
    txn.Remove(TestRemove("b c.parquet"));
    txn.Remove(TestRemove("gone.parquet"));
    txn.SetTransactionId("app", 4);
  });
  Commit([](Transaction& txn) {
    AddFile with_dv = TestAdd("a.parquet");
    with_dv.deletion_vector = DeletionVectorDescriptor{
        'i', "wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L", std::nullopt, 40, 1};
    txn.Remove(TestRemove("a.parquet"));
    txn.Add(with_dv);
    txn.Add(TestAdd("d.parquet"));
  });
  Commit([](Transaction& txn) {  // version 6: a checkpoint the update must not read
    txn.Add(TestAdd("e.parquet"));
    Metadata metadata = testing::TestMetadata({{"delta.checkpointInterval", "3"}, {"owner", "me"}});
    txn.UpdateMetadata(metadata);
  });

  store_->Reset();
  std::shared_ptr<const Snapshot> updated = Update(old);
  ASSERT_NE(updated, old);
  EXPECT_EQ(store_->listings, 0);
  EXPECT_EQ(store_->reads, (std::set<std::string>{CommitKey(4), CommitKey(5), CommitKey(6)}));
  std::shared_ptr<Snapshot> loaded = Load();
  ExpectSameTable(*updated, *loaded);
  EXPECT_EQ(updated->metadata.configuration.at("owner"), "me");
  EXPECT_EQ(updated->timestamp_ms, loaded->timestamp_ms);
  EXPECT_EQ(static_cast<int64_t>(updated->files.size()), old_files);  // -2, -1 +1 (dv), +1, +1
  // The old snapshot is untouched.
  EXPECT_EQ(old->version, 3);
  EXPECT_EQ(static_cast<int64_t>(old->files.size()), old_files);
  // The new snapshot parses its own stats.
  EXPECT_EQ(updated->num_records(), loaded->num_records());
}

TEST_F(SnapshotUpdateTest, CarriesTombstones) {
  Commit([](Transaction& txn) {
    txn.Add(TestAdd("a.parquet"));
    txn.Add(TestAdd("b.parquet"));
  });
  std::shared_ptr<const Snapshot> old = Load(/*keep_tombstones=*/true);
  Commit([](Transaction& txn) { txn.Remove(TestRemove("a.parquet")); });
  Commit([](Transaction& txn) {
    txn.Remove(TestRemove("b.parquet"));
    txn.Add(TestAdd("a.parquet"));  // re-added: no longer a tombstone
  });
  std::shared_ptr<const Snapshot> updated = Update(old);
  ExpectSameTable(*updated, *Load(/*keep_tombstones=*/true));
  ASSERT_EQ(updated->tombstones.size(), 1u);
  EXPECT_EQ(updated->tombstones[0].path, "b.parquet");
}

TEST_F(SnapshotUpdateTest, TombstonesPastTheLimitAreDroppedAndTheSnapshotStillUpdates) {
  Commit([](Transaction& txn) {
    for (const char* path : {"a.parquet", "b.parquet", "c.parquet", "d.parquet"}) txn.Add(TestAdd(path));
  });
  Commit([](Transaction& txn) { txn.Remove(TestRemove("a.parquet")); });
  SnapshotOptions limited;
  limited.keep_tombstones = true;
  limited.tombstone_limit = 2;
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<const Snapshot> old, table_->Load(limited));
  EXPECT_EQ(old->tombstone_state, TombstoneState::kKept);
  EXPECT_EQ(old->tombstones.size(), 1u);

  Commit([](Transaction& txn) { txn.Remove(TestRemove("b.parquet")); });
  std::shared_ptr<const Snapshot> two = Update(old);
  EXPECT_EQ(two->tombstone_state, TombstoneState::kKept);
  EXPECT_EQ(two->tombstones.size(), 2u);

  Commit([](Transaction& txn) { txn.Remove(TestRemove("c.parquet")); });
  std::shared_ptr<const Snapshot> three = Update(two);
  EXPECT_EQ(three->tombstone_state, TombstoneState::kOverLimit);
  EXPECT_TRUE(three->tombstones.empty());

  // Brought forward without tombstones, reading only the new commit.
  Commit([](Transaction& txn) { txn.Add(TestAdd("e.parquet")); });
  store_->Reset();
  std::shared_ptr<const Snapshot> four = Update(three);
  EXPECT_EQ(store_->reads, (std::set<std::string>{CommitKey(5)}));
  EXPECT_EQ(four->tombstone_state, TombstoneState::kOverLimit);
  EXPECT_TRUE(four->tombstones.empty());
  ExpectSameTable(*four, *Load());

  // A load past the limit holds none either; within it, all.
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<const Snapshot> loaded, table_->Load(limited));
  EXPECT_EQ(loaded->tombstone_state, TombstoneState::kOverLimit);
  EXPECT_TRUE(loaded->tombstones.empty());
  limited.tombstone_limit = 3;
  ASSERT_OK_AND_ASSIGN(loaded, table_->Load(limited));
  EXPECT_EQ(loaded->tombstone_state, TombstoneState::kKept);
  EXPECT_EQ(loaded->tombstones.size(), 3u);
}

TEST_F(SnapshotUpdateTest, ACommitOnASnapshotPastItsTombstoneLimitCheckpointsEveryTombstone) {
  Commit([](Transaction& txn) {
    for (const char* path : {"a.parquet", "b.parquet", "c.parquet"}) txn.Add(TestAdd(path));
  });  // version 1
  Commit([](Transaction& txn) {
    txn.Remove(TestRemove("a.parquet"));
    txn.Remove(TestRemove("b.parquet"));
  });  // version 2
  SnapshotOptions limited;
  limited.keep_tombstones = true;
  limited.tombstone_limit = 1;
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<const Snapshot> read, table_->Load(limited));
  ASSERT_EQ(read->tombstone_state, TombstoneState::kOverLimit);

  // Version 3 is due a checkpoint (every 3 commits): written from its version loaded again.
  TransactionOptions options = testing::TableFixture::Options();
  options.checkpoint_io = &table_->log_io();
  Transaction txn(read, options);
  txn.Remove(TestRemove("c.parquet"));
  ASSERT_OK_AND_ASSIGN(CommitResult result, txn.Commit());
  ASSERT_EQ(result.version, 3);
  ASSERT_OK(result.checkpoint_status);
  ASSERT_EQ(result.checkpoint_version, std::optional<int64_t>(3));

  // A load of version 3 starts from that checkpoint and reads every tombstone from it.
  store_->Reset();
  std::shared_ptr<const Snapshot> loaded = Load(/*keep_tombstones=*/true);
  EXPECT_EQ(store_->reads.count(CommitKey(2)), 0u);
  std::set<std::string> paths;
  for (const RemoveFile& remove : loaded->tombstones) paths.insert(remove.path);
  EXPECT_EQ(paths, (std::set<std::string>{"a.parquet", "b.parquet", "c.parquet"}));
}

TEST_F(SnapshotUpdateTest, ReloadsWhenTheLogWasReplaced) {
  Commit([](Transaction& txn) { txn.Add(TestAdd("a.parquet")); });
  std::shared_ptr<const Snapshot> old = Load();
  // The table is deleted and written again: version 1 now holds another commit.
  ASSERT_OK_AND_ASSIGN(std::vector<ObjectInfo> log, store_->List("_delta_log/"));
  for (const auto& object : log) ASSERT_OK(store_->Delete(object.key));
  ASSERT_OK(WriteCommit(*store_, 0,
                        {MakeCommitInfo(1, "CREATE TABLE"), Protocol{1, 2, std::nullopt, std::nullopt},
                         testing::TestMetadata()}));
  ASSERT_OK(
      WriteCommit(*store_, 1, {MakeCommitInfo(2, "WRITE"), TestAdd("other.parquet"), TestAdd("x.parquet")}));
  ASSERT_OK(WriteCommit(*store_, 2, {MakeCommitInfo(3, "WRITE"), TestAdd("y.parquet")}));
  std::shared_ptr<const Snapshot> updated = Update(old);
  ExpectSameTable(*updated, *Load());
  EXPECT_EQ(updated->files.size(), 3u);
}

TEST_F(SnapshotUpdateTest, ReloadsWhenCommitsWereCleanedUp) {
  Commit([](Transaction& txn) { txn.Add(TestAdd("a.parquet")); });
  std::shared_ptr<const Snapshot> old = Load();
  Commit([](Transaction& txn) { txn.Add(TestAdd("b.parquet")); });
  Commit([](Transaction& txn) { txn.Add(TestAdd("c.parquet")); });  // version 3: checkpoint
  Commit([](Transaction& txn) { txn.Add(TestAdd("d.parquet")); });
  // As a log cleanup that deletes out of order would, once a checkpoint covers it: the
  // snapshot's own commit is still there, the next one is not.
  ASSERT_OK(store_->Delete(CommitKey(2)));
  std::shared_ptr<const Snapshot> updated = Update(old);
  ExpectSameTable(*updated, *Load());
  EXPECT_EQ(updated->version, 4);
}

TEST_F(SnapshotUpdateTest, RefusesAProtocolItCannotRead) {
  std::shared_ptr<const Snapshot> old = Load();
  ASSERT_OK(
      WriteCommit(*store_, 1,
                  {MakeCommitInfo(2, "UPGRADE"), Protocol{3, 7, std::vector<std::string>{"madeUpFeature"},
                                                          std::vector<std::string>{"madeUpFeature"}}}));
  auto updated = UpdateSnapshot(old, table_->log_io());
  ASSERT_ERROR_CODE(updated, kUnsupported);
  EXPECT_NE(updated.status().message().find("madeUpFeature"), std::string::npos);
}

}  // namespace

// Parsed statistics carry over: the updated snapshot's index is built from the old one
// plus the new files, and says what a fresh parse of its files says.
TEST_F(SnapshotUpdateTest, ParsedStatisticsCarryOverToTheUpdatedSnapshot) {
  auto add = [](int i) {
    AddFile a = TestAdd("f" + std::to_string(i) + ".parquet");
    a.partition_values = {{"day", "2024-01-" + std::to_string(10 + i % 20)}};
    a.stats = "{\"numRecords\":" + std::to_string(i + 1) +
              ",\"minValues\":{\"id\":" + std::to_string(i * 10) +
              "},\"maxValues\":{\"id\":" + std::to_string(i * 10 + 9) + "},\"nullCount\":{\"id\":0}}";
    return a;
  };
  // From a table without files.
  std::shared_ptr<const Snapshot> empty = Load();
  EXPECT_EQ(empty->stats_index().num_files(), 0u);
  Commit([&](Transaction& txn) {
    for (int i = 0; i < 6; i++) txn.Add(add(i));
  });
  std::shared_ptr<const Snapshot> first = Update(empty);
  ASSERT_NE(first, nullptr);
  ASSERT_NE(first->stats_cache.IfBuilt(), nullptr);
  int64_t records = 0;
  for (size_t f = 0; f < first->files.size(); f++) records += first->stats_index().NumRecords(f).value_or(0);
  EXPECT_EQ(records, 1 + 2 + 3 + 4 + 5 + 6);
  std::shared_ptr<const Snapshot> old = Load();
  EXPECT_EQ(old->stats_cache.IfBuilt(), nullptr);
  const FileStatsIndex& old_index = old->stats_index();
  EXPECT_EQ(old->stats_cache.IfBuilt(), &old_index);

  Commit([&](Transaction& txn) {
    txn.Remove(TestRemove("f1.parquet"));
    txn.Remove(TestRemove("f4.parquet"));
    txn.Add(add(7));
    txn.Add(add(8));
  });
  std::shared_ptr<const Snapshot> updated = Update(old);
  ASSERT_NE(updated, nullptr);
  ASSERT_EQ(updated->files.size(), 6u);
  const FileStatsIndex* carried = updated->stats_cache.IfBuilt();
  ASSERT_NE(carried, nullptr);
  auto fresh =
      FileStatsIndex::Build(FileStatsIndex::MakeLayout(updated->schema, updated->metadata), updated->files);
  for (const ColumnPath& path : {ColumnPath{"id"}, ColumnPath{"day"}}) {
    std::optional<size_t> column = carried->FindColumn(path);
    ASSERT_TRUE(column.has_value());
    for (size_t f = 0; f < updated->files.size(); f++) {
      SCOPED_TRACE(updated->files[f].path + " " + path[0]);
      EXPECT_EQ(carried->NumRecords(f), fresh->NumRecords(f));
      std::optional<ColumnSummary> a = carried->Summary(f, *column), b = fresh->Summary(f, *column);
      ASSERT_EQ(a.has_value(), b.has_value());
      if (!a) continue;
      EXPECT_EQ(a->family, b->family);
      EXPECT_EQ(a->null_count, b->null_count);
      EXPECT_EQ(a->num_records, b->num_records);
      for (auto [x, y] : {std::pair{a->min, b->min}, std::pair{a->max, b->max}}) {
        ASSERT_EQ(x.has_value(), y.has_value());
        if (!x) continue;
        EXPECT_TRUE(x->integer == y->integer);
        EXPECT_EQ(x->real, y->real);
        EXPECT_EQ(x->bytes, y->bytes);
      }
    }
  }
  // A metadata change parses again, lazily.
  Commit([&](Transaction& txn) {
    txn.UpdateMetadata(testing::TestMetadata({{"delta.appendOnly", "false"}}));
  });
  std::shared_ptr<const Snapshot> altered = Update(updated);
  ASSERT_NE(altered, nullptr);
  EXPECT_EQ(altered->stats_cache.IfBuilt(), nullptr);
  EXPECT_EQ(altered->stats_index().NumRecords(0), carried->NumRecords(0));
}

}  // namespace basin::delta
