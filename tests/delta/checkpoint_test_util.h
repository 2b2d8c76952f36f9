// Helpers shared by the checkpoint writer and log cleanup tests: file actions with every
// optional field, table comparison (by actions or by rows), and the same table replayed from
// its JSON commits alone (no checkpoints) to compare checkpoint reads against.
#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "delta/log_segment.h"
#include "engine/scan.h"
#include "transaction_test_util.h"

namespace basin::delta::testing {

// The actions of `files` (a vector or a list of adds or removes) as sorted JSON lines.
template <typename Files>
std::vector<std::string> Serialized(const Files& files) {
  std::vector<std::string> out;
  for (const auto& f : files) out.push_back(SerializeAction(f));
  std::sort(out.begin(), out.end());
  return out;
}

// Same version, protocol, metadata, files, tombstones, txns and domain metadata.
inline void ExpectSameTable(const Snapshot& a, const Snapshot& b) {
  EXPECT_EQ(a.version, b.version);
  EXPECT_EQ(SerializeAction(a.protocol), SerializeAction(b.protocol));
  EXPECT_EQ(SerializeAction(a.metadata), SerializeAction(b.metadata));
  EXPECT_EQ(Serialized(a.files), Serialized(b.files));
  EXPECT_EQ(Serialized(a.tombstones), Serialized(b.tombstones));
  ASSERT_EQ(a.set_transactions.size(), b.set_transactions.size());
  for (const auto& [app, txn] : a.set_transactions) {
    ASSERT_TRUE(b.set_transactions.count(app)) << app;
    EXPECT_EQ(SerializeAction(txn), SerializeAction(b.set_transactions.at(app)));
  }
  ASSERT_EQ(a.domain_metadata.size(), b.domain_metadata.size());
  for (const auto& [domain, dm] : a.domain_metadata) {
    ASSERT_TRUE(b.domain_metadata.count(domain)) << domain;
    EXPECT_EQ(SerializeAction(dm), SerializeAction(b.domain_metadata.at(domain)));
  }
}

// The rows of `snapshot`, sorted, as DuckDB renders them.
inline std::vector<std::string> Rows(const Snapshot& snapshot, engine::Connection& conn) {
  auto plan = engine::BuildScanSql(snapshot, conn);
  EXPECT_OK(plan.status());
  if (!plan.ok()) return {};
  auto rows = conn.Query("SELECT t::VARCHAR FROM (" + plan->sql + ") t ORDER BY ALL");
  EXPECT_OK(rows.status());
  std::vector<std::string> out;
  if (rows.ok()) {
    for (const auto& row : rows->rows) out.push_back(row[0].value_or("NULL"));
  }
  return out;
}

// An add with every optional field the checkpoint schema carries.
inline AddFile RichAdd(int i) {
  AddFile a = TestAdd("day=2024-01-0" + std::to_string(i % 3) + "/part%20" + std::to_string(i) + ".parquet");
  if (i % 4 == 0) a.partition_values = {{"day", std::nullopt}};
  a.tags = {{"INSERTION_TIME", std::to_string(1700000000000 + i)}};
  if (i % 5 == 0) {
    DeletionVectorDescriptor dv;
    dv.storage_type = 'u';
    dv.path_or_inline_dv = "ab^-aqEH.-t@S}K{vb[*k^";
    dv.offset = 4;
    dv.size_in_bytes = 40;
    dv.cardinality = 2;
    a.deletion_vector = dv;
  }
  if (i % 7 == 0) a.stats.reset();
  return a;
}

// Commits versions 1..`last`: an add each; every third, a remove of the add before it
// whose tombstone is older than the 7-day default retention at `now_ms` on even versions
// and newer on odd ones; every fourth, a txn; and at version 12 whatever `at_v12` changes
// (metadata, protocol). Every commit, checkpoint and log clean-up must succeed.
inline void CommitRichHistory(TableFixture& table, int last, int64_t now_ms,
                              const TransactionOptions& options,
                              const std::function<void(Transaction&)>& at_v12,
                              std::vector<CommitResult>* results = nullptr) {
  constexpr int64_t kDayMs = 86'400'000;
  for (int v = 1; v <= last; v++) {
    ASSERT_OK_AND_ASSIGN(auto txn, table.Begin(options));
    txn->Add(RichAdd(v));
    if (v % 3 == 0) {
      RemoveFile old = TestRemove(RichAdd(v - 1).path);
      old.deletion_vector = RichAdd(v - 1).deletion_vector;
      old.deletion_timestamp = v % 2 == 0 ? now_ms - 8 * kDayMs : now_ms - kDayMs;
      txn->Remove(old);
    }
    if (v % 4 == 0) txn->SetTransactionId("app-" + std::to_string(v % 8), v);
    if (v == 12) at_v12(*txn);
    ASSERT_OK_AND_ASSIGN(CommitResult result, txn->Commit());
    ASSERT_EQ(result.version, v);
    ASSERT_OK(result.checkpoint_status);
    ASSERT_OK(result.log_cleanup_status);
    if (results != nullptr) results->push_back(result);
  }
}

// A memory copy of `store`'s log without checkpoints or sidecars: the table as JSON replay
// alone gives it.
inline std::shared_ptr<ObjectStore> JsonOnlyCopy(ObjectStore& store) {
  auto copy = NewMemoryObjectStore();
  auto listed = store.List(kLogFolder);
  EXPECT_OK(listed.status());
  if (!listed.ok()) return copy;
  for (const auto& object : *listed) {
    if (object.key.find(".checkpoint.") != std::string::npos) continue;
    if (object.key.find("/_sidecars/") != std::string::npos) continue;
    auto data = store.Get(object.key);
    EXPECT_OK(data.status());
    if (data.ok()) EXPECT_OK(copy->Put(object.key, *data));
  }
  return copy;
}

// Loads `version` (with tombstones) through the checkpoint at `checkpoint_version` and by
// JSON replay alone, and expects the same table but for the tombstones the checkpoint
// dropped as older than `retention_ms` at `now_ms` (those removed after the checkpoint are
// all replayed). `dropped`, when given, receives how many tombstones that was.
inline void ExpectSameAsJsonReplay(TableFixture& with_checkpoints, TableFixture& json_only, int64_t version,
                                   int64_t checkpoint_version, int64_t now_ms, int64_t retention_ms,
                                   size_t* dropped = nullptr) {
  SCOPED_TRACE("version " + std::to_string(version));
  SnapshotOptions options;
  options.version = version;
  options.keep_tombstones = true;
  ASSERT_OK_AND_ASSIGN(auto from_checkpoint, with_checkpoints.Load(options));
  ASSERT_OK_AND_ASSIGN(auto from_json, json_only.Load(options));
  SnapshotOptions at_checkpoint = options;
  at_checkpoint.version = checkpoint_version;
  ASSERT_OK_AND_ASSIGN(auto json_at_checkpoint, json_only.Load(at_checkpoint));
  std::vector<std::string> in_checkpoint = Serialized(json_at_checkpoint->tombstones);
  Snapshot expected = *from_json;
  expected.tombstones.clear();
  for (const auto& r : from_json->tombstones) {
    bool recent = r.deletion_timestamp.value_or(0) > now_ms - retention_ms;
    bool after_checkpoint =
        !std::binary_search(in_checkpoint.begin(), in_checkpoint.end(), SerializeAction(r));
    if (recent || after_checkpoint) expected.tombstones.push_back(r);
  }
  if (dropped != nullptr) *dropped = from_json->tombstones.size() - expected.tombstones.size();
  ExpectSameTable(*from_checkpoint, expected);
}

}  // namespace basin::delta::testing
