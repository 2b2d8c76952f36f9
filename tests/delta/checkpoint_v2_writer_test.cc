// V2 checkpoints (delta.checkpointPolicy=v2): UUID-named top-level files with sidecars,
// written by transactions and directly; the table read back through them equals the
// table replayed from JSON; _last_checkpoint's v2Checkpoint; plain DuckDB reads the files;
// a Spark-written table with deletion vectors, partitions and tombstones round-trips.
#include <chrono>
#include <filesystem>
#include <set>

#include "checkpoint_test_util.h"
#include "delta/checkpoint_writer.h"
#include "delta/log_segment.h"

namespace basin::delta {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using testing::CommitRichHistory;
using testing::ExpectSameAsJsonReplay;
using testing::ExpectSameTable;
using testing::JsonOnlyCopy;
using testing::RichAdd;
using testing::Rows;
using testing::TableFixture;
using testing::TestMetadata;

constexpr int64_t kDayMs = 86'400'000;

int64_t WallClockMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Protocol V2Protocol() {
  std::vector<std::string> features = {"deletionVectors", "v2Checkpoint"};
  return Protocol{3, 7, features, features};
}

Status CreateV2Table(TableFixture& table, std::map<std::string, std::string> configuration,
                     TransactionOptions options = TableFixture::Options()) {
  Transaction txn = Transaction::CreateTable(table.store(), "table", std::move(options));
  txn.UpdateProtocol(V2Protocol());
  txn.UpdateMetadata(TestMetadata(std::move(configuration)));
  return txn.Commit().status();
}

// CommitRichHistory whose metadata change at version 12 keeps the V2 checkpoint policy.
void CommitHistory(TableFixture& table, int last, int64_t now_ms, const TransactionOptions& options,
                   std::vector<CommitResult>* results = nullptr) {
  CommitRichHistory(
      table, last, now_ms, options,
      [](Transaction& txn) {
        txn.UpdateMetadata(TestMetadata({{"delta.checkpointPolicy", "v2"}, {"owner", "it's me"}}));
      },
      results);
}

// A V2-policy table with versions 0..9 committed at `now_ms` and no checkpoint, for tests
// that write checkpoints themselves.
void CreateTableOfTenVersions(TableFixture& table, int64_t now_ms) {
  ASSERT_OK(CreateV2Table(table, {{"delta.checkpointPolicy", "v2"}}));
  TransactionOptions options = TableFixture::Options();
  options.clock_ms = [now_ms] { return now_ms; };
  CommitHistory(table, 9, now_ms, options);
}

std::string FileName(const std::string& key) { return key.substr(key.rfind('/') + 1); }

class V2CheckpointTest : public ::testing::TestWithParam<bool> {
 protected:
  // A local folder when the parameter is true, else memory.
  std::shared_ptr<ObjectStore> NewStore() {
    if (!GetParam()) return NewMemoryObjectStore();
    auto store = OpenLocalObjectStore(dir_.str());
    EXPECT_OK(store.status());
    return *store;
  }

  basin::testing::TempDir dir_;
};

TEST_P(V2CheckpointTest, TransactionsWriteV2CheckpointsThatReadBackLikeTheJsonLog) {
  auto store = NewStore();
  TableFixture table(store);
  const int64_t now_ms = WallClockMs();
  TransactionOptions options = TableFixture::Options();
  options.checkpoint_io = &table.log_io();
  options.clock_ms = [now_ms] { return now_ms; };
  ASSERT_OK(CreateV2Table(table, {{"delta.checkpointPolicy", "v2"}}, options));
  std::vector<CommitResult> results;
  CommitHistory(table, 24, now_ms, options, &results);
  if (HasFatalFailure()) return;
  EXPECT_EQ(results[9].checkpoint_version, 10);
  EXPECT_EQ(results[19].checkpoint_version, 20);
  EXPECT_FALSE(results[10].checkpoint_version.has_value());

  ASSERT_OK_AND_ASSIGN(LogListing listing, ListLog(*store));
  ASSERT_EQ(listing.checkpoints.size(), 2u);
  for (const auto& checkpoint : listing.checkpoints) {
    EXPECT_EQ(checkpoint.type, LogFileType::kV2Checkpoint) << checkpoint.files.front().key;
  }
  EXPECT_TRUE(
      store->Head(std::string(kLogFolder) + "00000000000000000010.checkpoint.parquet").status().IsNotFound());
  ASSERT_OK_AND_ASSIGN(auto sidecars, store->List(kSidecarFolder));
  EXPECT_EQ(sidecars.size(), 2u);  // one per checkpoint at the default sidecar size

  // _last_checkpoint names the V2 file and carries what a reader needs to skip it.
  const ObjectInfo& top = listing.checkpoints.back().files.front();
  ASSERT_OK_AND_ASSIGN(std::string last_text, store->Get(std::string(kLogFolder) + "_last_checkpoint"));
  EXPECT_EQ(last_text.rfind("{\"version\":20,\"size\":", 0), 0u) << last_text;
  json last = json::parse(last_text, nullptr, false);
  ASSERT_TRUE(last.is_object()) << last_text;
  const json& v2 = last["v2Checkpoint"];
  EXPECT_EQ(v2["path"], FileName(top.key));
  EXPECT_EQ(v2["sizeInBytes"], top.size_bytes);
  EXPECT_EQ(v2["modificationTime"], top.modification_time_ms);
  ASSERT_EQ(v2["sidecarFiles"].size(), 1u);
  const json& sidecar = v2["sidecarFiles"][0];
  ASSERT_OK_AND_ASSIGN(ObjectInfo sidecar_info,
                       store->Head(kSidecarFolder + sidecar["path"].get<std::string>()));
  EXPECT_EQ(sidecar["sizeInBytes"], sidecar_info.size_bytes);
  EXPECT_EQ(last["sizeInBytes"], top.size_bytes + sidecar_info.size_bytes);
  std::set<std::string> non_file_kinds;
  for (const auto& action : v2["nonFileActions"]) non_file_kinds.insert(action.begin().key());
  EXPECT_EQ(non_file_kinds, (std::set<std::string>{"checkpointMetadata", "metaData", "protocol", "txn"}));
  EXPECT_EQ(v2["nonFileActions"][0]["checkpointMetadata"]["version"], 20);

  SnapshotOptions at20;
  at20.version = 20;
  at20.keep_tombstones = true;
  ASSERT_OK_AND_ASSIGN(auto snapshot20, table.Load(at20));
  EXPECT_EQ(last["numOfAddFiles"], snapshot20->files.size());

  TableFixture replayed(JsonOnlyCopy(*store));
  for (int64_t version : {10, 15, 20, 24}) {
    ASSERT_OK_AND_ASSIGN(LogSegment segment, BuildLogSegment(listing, version, "table"));
    ASSERT_TRUE(segment.checkpoint.has_value());
    EXPECT_EQ(segment.checkpoint->type, LogFileType::kV2Checkpoint);
    size_t dropped = 0;
    ExpectSameAsJsonReplay(table, replayed, version, version / 10 * 10, now_ms, 7 * kDayMs, &dropped);
    EXPECT_GT(dropped, 0u) << "some tombstones are past retention and left out";
  }
  // The latest version, found through the _last_checkpoint hint, is the same table too.
  ASSERT_OK_AND_ASSIGN(auto latest, table.Load());
  ASSERT_OK_AND_ASSIGN(auto latest_json, replayed.Load());
  EXPECT_EQ(testing::Serialized(latest->files), testing::Serialized(latest_json->files));
}

// Every action kind, several sidecars, and both top-level formats, written directly.
class V2FormatTest : public ::testing::TestWithParam<CheckpointFileFormat> {};

TEST_P(V2FormatTest, EveryActionKindRoundTripsThroughSidecars) {
  auto store = NewMemoryObjectStore();
  TableFixture table(store);
  const int64_t now_ms = WallClockMs();
  CreateTableOfTenVersions(table, now_ms);
  if (HasFatalFailure()) return;

  SnapshotOptions at9;
  at9.version = 9;
  at9.keep_tombstones = true;
  ASSERT_OK_AND_ASSIGN(auto loaded, table.Load(at9));
  Snapshot expected = *loaded;
  // Transactions do not write domain metadata yet; a checkpoint must still carry it.
  expected.domain_metadata["delta.rowTracking"] =
      DomainMetadata{"delta.rowTracking", "{\"rowIdHighWaterMark\":7}"};
  expected.domain_metadata["user.notes"] = DomainMetadata{"user.notes", "{\"k\":\"it's\"}"};
  // Only tombstones within retention are written; keep the expectation to those.
  std::vector<RemoveFile> recent = expected.tombstones.ToVector();
  std::erase_if(recent, [&](const RemoveFile& r) { return r.deletion_timestamp.value_or(0) <= now_ms - 7 * kDayMs; });
  expected.tombstones = std::move(recent);
  ASSERT_FALSE(expected.tombstones.empty());

  CheckpointOptions checkpoint_options;
  checkpoint_options.v2_top_level_format = GetParam();
  checkpoint_options.actions_per_sidecar = 3;
  ASSERT_OK_AND_ASSIGN(CheckpointInfo info,
                       WriteCheckpoint(*store, table.log_io(), expected, now_ms, checkpoint_options));
  EXPECT_EQ(info.policy, CheckpointPolicy::kV2);
  const std::string extension = GetParam() == CheckpointFileFormat::kJson ? ".json" : ".parquet";
  EXPECT_EQ(info.key.rfind("_delta_log/00000000000000000009.checkpoint.", 0), 0u) << info.key;
  EXPECT_EQ(info.key.substr(info.key.size() - extension.size()), extension);
  const size_t file_actions = expected.files.size() + expected.tombstones.size();
  EXPECT_EQ(info.sidecar_keys.size(), (file_actions + 2) / 3);
  for (const auto& key : info.sidecar_keys) {
    EXPECT_EQ(key.rfind(kSidecarFolder, 0), 0u);
    EXPECT_OK(store->Head(key).status());
  }
  const size_t top_level =
      1 + 2 + expected.set_transactions.size() + expected.domain_metadata.size() + info.sidecar_keys.size();
  EXPECT_EQ(info.num_actions, static_cast<int64_t>(top_level + file_actions));

  ASSERT_OK_AND_ASSIGN(LogListing listing, ListLog(*store));
  ASSERT_EQ(listing.checkpoints.size(), 1u);
  EXPECT_EQ(listing.checkpoints[0].type, LogFileType::kV2Checkpoint);
  ASSERT_OK_AND_ASSIGN(auto read_back, table.Load(at9));
  ExpectSameTable(*read_back, expected);
}

INSTANTIATE_TEST_SUITE_P(TopLevelFormats, V2FormatTest,
                         ::testing::Values(CheckpointFileFormat::kParquet, CheckpointFileFormat::kJson),
                         [](const auto& info) {
                           return info.param == CheckpointFileFormat::kJson ? "Json" : "Parquet";
                         });

TEST(V2CheckpointPeerTest, PlainDuckDbReadsTheTopLevelFileAndSidecars) {
  basin::testing::TempDir dir;
  ASSERT_OK_AND_ASSIGN(auto store, OpenLocalObjectStore(dir.str()));
  TableFixture table(store);
  const int64_t now_ms = WallClockMs();
  CreateTableOfTenVersions(table, now_ms);
  if (HasFatalFailure()) return;
  CheckpointOptions checkpoint_options;
  checkpoint_options.actions_per_sidecar = 4;
  ASSERT_OK_AND_ASSIGN(CheckpointInfo info,
                       CheckpointVersion(store, "table", table.log_io(), 9, now_ms, checkpoint_options));
  SnapshotOptions at9;
  at9.version = 9;
  at9.keep_tombstones = true;
  ASSERT_OK_AND_ASSIGN(auto snapshot, table.Load(at9));

  // A separate DuckDB, knowing nothing of Basin's reader.
  ASSERT_OK_AND_ASSIGN(auto peer_db, engine::Database::Open());
  ASSERT_OK_AND_ASSIGN(auto peer, engine::Connection::Open(peer_db));
  const std::string top = engine::QuoteLiteral(*store->LocalPath(info.key));
  ASSERT_OK_AND_ASSIGN(auto columns, peer->DescribeQuery("SELECT * FROM read_parquet(" + top + ")"));
  std::set<std::string> names;
  for (const auto& c : columns) names.insert(c.name);
  EXPECT_EQ(names, (std::set<std::string>{"checkpointMetadata", "txn", "add", "remove", "metaData",
                                          "protocol", "domainMetadata", "sidecar"}));
  ASSERT_OK_AND_ASSIGN(
      auto meta, peer->Query("SELECT checkpointMetadata.version, "
                             "(SELECT count(add) FROM read_parquet(" +
                             top + ")) FROM read_parquet(" + top + ") WHERE checkpointMetadata IS NOT NULL"));
  ASSERT_EQ(meta.row_count(), 1u);
  EXPECT_EQ(meta.at(0, 0), "9");
  EXPECT_EQ(meta.at(0, 1), "0");  // file actions live in the sidecars only
  ASSERT_OK_AND_ASSIGN(auto features,
                       peer->Query("SELECT list_contains(protocol.readerFeatures, 'v2Checkpoint') FROM "
                                   "read_parquet(" +
                                   top + ") WHERE protocol IS NOT NULL"));
  ASSERT_EQ(features.row_count(), 1u);
  EXPECT_EQ(features.at(0, 0), "true");

  ASSERT_OK_AND_ASSIGN(auto named, peer->Query("SELECT sidecar.path, sidecar.sizeInBytes FROM read_parquet(" +
                                               top + ") WHERE sidecar IS NOT NULL ORDER BY 1"));
  ASSERT_EQ(named.row_count(), info.sidecar_keys.size());
  ASSERT_GE(named.row_count(), 2u);
  std::string sidecar_list;
  for (size_t i = 0; i < named.row_count(); i++) {
    const std::string key = kSidecarFolder + *named.at(i, 0);
    ASSERT_OK_AND_ASSIGN(ObjectInfo object, store->Head(key));
    EXPECT_EQ(named.at(i, 1), std::to_string(object.size_bytes));
    sidecar_list += (sidecar_list.empty() ? "" : ", ") + engine::QuoteLiteral(*store->LocalPath(key));
  }
  size_t with_dv = 0;
  for (const auto& f : snapshot->files) with_dv += f.deletion_vector ? 1 : 0;
  ASSERT_OK_AND_ASSIGN(auto counts,
                       peer->Query("SELECT count(add), count(remove), count(add.deletionVector), "
                                   "count(*) FILTER (WHERE add.partitionValues['day'] IS NOT NULL) "
                                   "FROM read_parquet([" +
                                   sidecar_list + "])"));
  EXPECT_EQ(counts.at(0, 0), std::to_string(snapshot->files.size()));
  EXPECT_EQ(counts.at(0, 1), std::to_string(snapshot->tombstones.size()));
  EXPECT_EQ(counts.at(0, 2), std::to_string(with_dv));
  size_t with_day = 0;
  for (const auto& f : snapshot->files) with_day += f.partition_values.at("day").has_value() ? 1 : 0;
  EXPECT_EQ(counts.at(0, 3), std::to_string(with_day));
}

TEST(V2CheckpointPolicyTest, PolicyComesFromTheTableAndTheProtocol) {
  EXPECT_EQ(*CheckpointPolicyOf(TestMetadata()), CheckpointPolicy::kClassic);
  EXPECT_EQ(*CheckpointPolicyOf(TestMetadata({{"delta.checkpointPolicy", "V2"}})), CheckpointPolicy::kV2);
  EXPECT_EQ(*CheckpointPolicyOf(TestMetadata({{"delta.checkpointPolicy", "classic"}})),
            CheckpointPolicy::kClassic);
  auto bad = CheckpointPolicyOf(TestMetadata({{"delta.checkpointPolicy", "fast"}}));
  ASSERT_ERROR_CODE(bad, kInvalidArgument);
  EXPECT_NE(bad.status().message().find("delta.checkpointPolicy"), std::string::npos);

  // Asking for v2 without the v2Checkpoint feature gets a classic checkpoint.
  auto store = NewMemoryObjectStore();
  TableFixture table(store);
  ASSERT_OK(table.Create({{"delta.checkpointPolicy", "v2"}}));
  ASSERT_OK_AND_ASSIGN(CheckpointInfo info, CheckpointVersion(store, "table", table.log_io(), 0, 0));
  EXPECT_EQ(info.policy, CheckpointPolicy::kClassic);
  EXPECT_EQ(info.key, "_delta_log/00000000000000000000.checkpoint.parquet");
  CheckpointOptions forced;
  forced.policy = CheckpointPolicy::kV2;
  ASSERT_ERROR_CODE(CheckpointVersion(store, "table", table.log_io(), 0, 0, forced), kInvalidArgument);

  // A V2 table can still be given a classic checkpoint.
  auto v2_store = NewMemoryObjectStore();
  TableFixture v2_table(v2_store);
  ASSERT_OK(CreateV2Table(v2_table, {{"delta.checkpointPolicy", "v2"}}));
  forced.policy = CheckpointPolicy::kClassic;
  ASSERT_OK_AND_ASSIGN(CheckpointInfo classic,
                       CheckpointVersion(v2_store, "table", v2_table.log_io(), 0, 0, forced));
  EXPECT_EQ(classic.key, "_delta_log/00000000000000000000.checkpoint.parquet");
  EXPECT_TRUE(classic.sidecar_keys.empty());

  // A bad policy is reported with the commit, which succeeds.
  auto bad_store = NewMemoryObjectStore();
  TableFixture bad_table(bad_store);
  ASSERT_OK(
      CreateV2Table(bad_table, {{"delta.checkpointPolicy", "sometimes"}, {"delta.checkpointInterval", "1"}}));
  TransactionOptions options = TableFixture::Options();
  options.checkpoint_io = &bad_table.log_io();
  ASSERT_OK_AND_ASSIGN(auto txn, bad_table.Begin(options));
  txn->Add(RichAdd(1));
  ASSERT_OK_AND_ASSIGN(CommitResult result, txn->Commit());
  EXPECT_EQ(result.version, 1);
  EXPECT_EQ(result.checkpoint_status.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(result.checkpoint_status.message().find("delta.checkpointPolicy"), std::string::npos);
}

TEST(V2CheckpointTestdataTest, SparkTableWithDeletionVectorsRoundTrips) {
  SKIP_WITHOUT_SHARED_TESTDATA(testdata);
  const fs::path source = testdata / "delta/delta-kernel-rs-golden/dv-partitioned-with-checkpoint/delta";
  ASSERT_TRUE(fs::exists(source)) << source;
  basin::testing::TempDir dir;
  fs::copy(source, dir.path(), fs::copy_options::recursive);
  for (const auto& entry : fs::recursive_directory_iterator(dir.path())) {
    fs::permissions(entry.path(), fs::perms::owner_write, fs::perm_options::add);
  }
  ASSERT_OK_AND_ASSIGN(auto store, OpenLocalObjectStore(dir.str()));
  TableFixture table(store);
  ASSERT_OK_AND_ASSIGN(auto before, table.Load());
  const std::vector<std::string> rows_before = Rows(*before, table.conn());
  EXPECT_EQ(rows_before.size(), 35u);

  // Turn on V2 checkpoints as ALTER TABLE would: the feature and the property.
  Protocol protocol = before->protocol;
  protocol.reader_features->push_back("v2Checkpoint");
  protocol.writer_features->push_back("v2Checkpoint");
  Metadata metadata = before->metadata;
  metadata.configuration["delta.checkpointPolicy"] = "v2";
  Transaction alter(before, TableFixture::Options());
  alter.UpdateProtocol(protocol);
  alter.UpdateMetadata(metadata);
  alter.SetOperation("SET TBLPROPERTIES");
  ASSERT_OK_AND_ASSIGN(CommitResult altered, alter.Commit());

  // The table before its V2 checkpoint, read through Spark's classic checkpoint and JSON.
  SnapshotOptions at;
  at.version = altered.version;
  at.keep_tombstones = true;
  ASSERT_OK_AND_ASSIGN(auto expected, table.Load(at));
  ASSERT_FALSE(expected->tombstones.empty());
  int64_t newest_removal = 0;
  for (const auto& r : expected->tombstones) {
    newest_removal = std::max(newest_removal, r.deletion_timestamp.value_or(0));
  }
  // A clock just after the removals, so the checkpoint keeps every tombstone.
  const int64_t now_ms = newest_removal + 1;
  ASSERT_OK_AND_ASSIGN(CheckpointInfo info,
                       CheckpointVersion(store, "table", table.log_io(), altered.version, now_ms));
  EXPECT_EQ(info.policy, CheckpointPolicy::kV2);
  ASSERT_EQ(info.sidecar_keys.size(), 1u);
  ASSERT_OK_AND_ASSIGN(auto read_back, table.Load(at));
  ExpectSameTable(*read_back, *expected);

  ASSERT_OK_AND_ASSIGN(auto after, table.Load());
  ASSERT_OK_AND_ASSIGN(LogListing listing, ListLog(*store));
  ASSERT_OK_AND_ASSIGN(LogSegment segment, BuildLogSegment(listing, std::nullopt, "table"));
  ASSERT_TRUE(segment.checkpoint.has_value());
  EXPECT_EQ(segment.checkpoint->type, LogFileType::kV2Checkpoint);
  size_t with_dv = 0;
  for (const auto& f : after->files) with_dv += f.deletion_vector ? 1 : 0;
  EXPECT_GT(with_dv, 0u);
  EXPECT_EQ(Rows(*after, table.conn()), rows_before);
}

INSTANTIATE_TEST_SUITE_P(Stores, V2CheckpointTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Local" : "Memory"; });

}  // namespace
}  // namespace basin::delta
