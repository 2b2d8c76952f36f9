// SnapshotCache: the latest snapshot of a table is brought forward commit by commit (the
// log is not listed again), with its tombstones up to the cache's limit and without them
// past it, never loaded again for having too many; a table written all the time keeps only
// its newest versions in the cache.
#include "engine/snapshot_cache.h"

#include <gtest/gtest.h>

#include "../delta/transaction_test_util.h"
#include "testing/forwarding_store.h"

namespace basin::engine {
namespace {

using delta::TombstoneState;
using delta::testing::TestAdd;
using delta::testing::TestRemove;

TEST(SnapshotCacheTest, KeepsTheLatestSnapshotsTombstonesUpToItsLimitAndUpdatesItPastThem) {
  auto store = std::make_shared<::basin::testing::RecordingStore>(NewMemoryObjectStore());
  delta::testing::TableFixture table(store);
  ASSERT_OK(table.Create());
  auto commit = [&](const std::function<void(delta::Transaction&)>& fill) {
    ASSERT_OK_AND_ASSIGN(auto txn, table.Begin());
    fill(*txn);
    ASSERT_OK(txn->Commit().status());
  };
  commit([](delta::Transaction& txn) {
    for (const char* path : {"a.parquet", "b.parquet", "c.parquet"}) txn.Add(TestAdd(path));
  });
  commit([](delta::Transaction& txn) { txn.Remove(TestRemove("a.parquet")); });

  SnapshotCache cache(/*capacity=*/4, /*tombstone_limit=*/2);
  ASSERT_OK_AND_ASSIGN(auto latest, cache.Get(store, "table"));
  EXPECT_EQ(latest->tombstone_state, TombstoneState::kKept);
  EXPECT_EQ(latest->tombstones.size(), 1u);

  commit([](delta::Transaction& txn) { txn.Remove(TestRemove("b.parquet")); });
  commit([](delta::Transaction& txn) { txn.Remove(TestRemove("c.parquet")); });
  ASSERT_OK_AND_ASSIGN(latest, cache.Get(store, "table"));
  EXPECT_EQ(latest->version, 4);
  EXPECT_EQ(latest->tombstone_state, TombstoneState::kOverLimit);
  EXPECT_TRUE(latest->tombstones.empty());

  // Past the limit the cached snapshot is still brought forward, not loaded again.
  commit([](delta::Transaction& txn) { txn.Add(TestAdd("d.parquet")); });
  store->Reset();  // the commits' own loads list the log
  ASSERT_OK_AND_ASSIGN(latest, cache.Get(store, "table"));
  EXPECT_EQ(latest->version, 5);
  EXPECT_EQ(latest->tombstone_state, TombstoneState::kOverLimit);
  EXPECT_EQ(latest->files.size(), 1u);
  EXPECT_EQ(store->listings, 0);
}

TEST(SnapshotCacheTest, KeepsTheNewestVersionsOfATableWrittenAllTheTime) {
  auto store = std::make_shared<::basin::testing::RecordingStore>(NewMemoryObjectStore());
  delta::testing::TableFixture table(store);
  ASSERT_OK(table.Create());
  SnapshotCache cache(/*capacity=*/32);
  const int64_t commits = SnapshotCache::kVersionsPerTable + 3;
  for (int64_t i = 1; i <= commits; i++) {
    ASSERT_OK_AND_ASSIGN(auto txn, table.Begin());
    txn->Add(TestAdd("f" + std::to_string(i) + ".parquet"));
    ASSERT_OK(txn->Commit().status());
    ASSERT_OK_AND_ASSIGN(auto latest, cache.Get(store, "table"));  // a reader keeping up
    ASSERT_EQ(latest->version, i);
  }
  // The newest versions are served from the cache (a look at their commit, no listing)...
  const int64_t oldest_kept = commits - static_cast<int64_t>(SnapshotCache::kVersionsPerTable) + 1;
  store->Reset();
  for (int64_t version = commits; version >= oldest_kept; version--) {
    ASSERT_OK_AND_ASSIGN(auto cached, cache.Get(store, "table", {.version = version}));
    EXPECT_EQ(cached->version, version);
  }
  EXPECT_EQ(store->listings, 0);
  // ... and the ones before them were let go: read from the log again.
  ASSERT_OK_AND_ASSIGN(auto loaded, cache.Get(store, "table", {.version = oldest_kept - 1}));
  EXPECT_EQ(loaded->version, oldest_kept - 1);
  EXPECT_GT(store->listings, 0);
}

}  // namespace
}  // namespace basin::engine
