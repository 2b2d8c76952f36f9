// Log replay, checkpoints, time travel, history and commits on small logs built in memory
// or in a temporary folder.
#include "delta/snapshot.h"

#include <chrono>
#include <filesystem>
#include <fstream>

#include "delta/commit_writer.h"
#include "delta/history.h"
#include "delta/log_segment.h"
#include "engine/duckdb.h"
#include "engine/parquet_log_io.h"
#include "testing/test_util.h"

namespace basin::delta {
namespace {

namespace fs = std::filesystem;

const char* kSchema =
    R"({"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]})";

Metadata TableMetadata(std::map<std::string, std::string> configuration = {}) {
  Metadata m;
  m.id = "3d0e7d9a-0000-4000-8000-000000000001";
  m.schema_string = kSchema;
  m.configuration = std::move(configuration);
  return m;
}

AddFile Add(const std::string& path, int64_t rows) {
  AddFile a;
  a.path = path;
  a.size = 100;
  a.stats = "{\"numRecords\":" + std::to_string(rows) + "}";
  return a;
}

RemoveFile Remove(const std::string& path) {
  RemoveFile r;
  r.path = path;
  return r;
}

CommitInfo Ict(int64_t ms) {
  CommitInfo info = MakeCommitInfo(ms, "WRITE");
  info.in_commit_timestamp = ms;
  return info;
}

class SnapshotTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(db_, engine::Database::Open());
    ASSERT_OK_AND_ASSIGN(conn_, engine::Connection::Open(db_));
  }

  Result<std::shared_ptr<Snapshot>> Load(const SnapshotOptions& options = {}) {
    engine::DuckDBParquetLogIO log_io;
    return LoadSnapshot(store_, "memtable", log_io, options);
  }
  Result<std::shared_ptr<Snapshot>> LoadVersion(int64_t v) {
    SnapshotOptions options;
    options.version = v;
    return Load(options);
  }
  Result<std::shared_ptr<Snapshot>> LoadAt(const std::string& timestamp) {
    SnapshotOptions options;
    options.timestamp = timestamp;
    return Load(options);
  }

  // A Parquet checkpoint with the given action lines, written by DuckDB as a Delta writer would.
  std::string CheckpointBytes(const std::vector<Action>& actions) {
    testing::TempDir dir;
    fs::path json = dir.path() / "actions.json";
    fs::path parquet = dir.path() / "checkpoint.parquet";
    {
      std::ofstream out(json);
      for (const auto& a : actions) out << SerializeAction(a) << "\n";
    }
    Status st = conn_->Execute("COPY (SELECT * FROM read_json_auto(" + engine::QuoteLiteral(json.string()) +
                               ", sample_size=-1)) TO " + engine::QuoteLiteral(parquet.string()) +
                               " (FORMAT parquet)");
    EXPECT_TRUE(st.ok()) << st.ToString();
    std::ifstream in(parquet, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  std::shared_ptr<engine::Database> db_;
  std::unique_ptr<engine::Connection> conn_;
  std::shared_ptr<ObjectStore> store_ = NewMemoryObjectStore();
};

TEST_F(SnapshotTest, ReplayReconcilesFilesTransactionsAndDomains) {
  ASSERT_OK(WriteCommit(*store_, 0,
                        {MakeCommitInfo(1, "CREATE TABLE"), Protocol{1, 2, std::nullopt, std::nullopt},
                         TableMetadata(), Add("a.parquet", 1), Add("b%20c.parquet", 2)}));
  ASSERT_OK(WriteCommit(
      *store_, 1,
      {Remove("a.parquet"), Add("d.parquet", 4), SetTransaction{"app", 1, std::nullopt},
       DomainMetadata{"delta.clustering", "{}", false}, DomainMetadata{"other", "{\"x\":1}", false}}));
  AddFile with_dv = Add("b c.parquet", 2);
  with_dv.deletion_vector = DeletionVectorDescriptor{
      'i', "wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L", std::nullopt, 40, 1};
  // The remove spells the path decoded; reconciliation still matches it.
  ASSERT_OK(WriteCommit(*store_, 2,
                        {Remove("b c.parquet"), with_dv, SetTransaction{"app", 2, std::nullopt},
                         SetTransaction{"other-app", 7, std::nullopt}, DomainMetadata{"other", "", true},
                         UnknownAction{"futureAction", nlohmann::json::object()}}));

  ASSERT_OK_AND_ASSIGN(auto s, Load());
  EXPECT_EQ(s->version, 2);
  ASSERT_EQ(s->files.size(), 2u);
  EXPECT_EQ(s->num_records(), 4 + 2 - 1);
  EXPECT_EQ(s->size_bytes(), 200);
  EXPECT_EQ(s->set_transactions.at("app").version, 2);
  EXPECT_EQ(s->set_transactions.at("other-app").version, 7);
  EXPECT_EQ(s->domain_metadata.size(), 1u);
  EXPECT_EQ(s->domain_metadata.count("delta.clustering"), 1u);
  EXPECT_EQ(s->schema.fields.at(0).name, "id");
  EXPECT_EQ(s->table_root, "memtable");

  ASSERT_OK_AND_ASSIGN(auto v0, LoadVersion(0));
  EXPECT_EQ(v0->files.size(), 2u);
  EXPECT_EQ(v0->num_records(), 3);
  EXPECT_TRUE(v0->set_transactions.empty());
}

TEST_F(SnapshotTest, NumRecordsIsUnknownWithoutStats) {
  AddFile no_stats = Add("a.parquet", 1);
  no_stats.stats.reset();
  ASSERT_OK(WriteCommit(*store_, 0, {Protocol{1, 2, std::nullopt, std::nullopt}, TableMetadata(), no_stats}));
  ASSERT_OK_AND_ASSIGN(auto s, Load());
  EXPECT_EQ(s->num_records(), -1);
}

TEST_F(SnapshotTest, CommitsArePutIfAbsent) {
  ASSERT_OK(WriteCommit(*store_, 0, {Protocol{1, 2, std::nullopt, std::nullopt}, TableMetadata()}));
  Status st = WriteCommit(*store_, 0, {Add("x.parquet", 1)});
  ASSERT_EQ(st.code(), ErrorCode::kConflict);
  EXPECT_NE(st.message().find("version 0"), std::string::npos);
  ASSERT_OK_AND_ASSIGN(std::string content, store_->Get(CommitKey(0)));
  EXPECT_EQ(content.find("x.parquet"), std::string::npos);
  EXPECT_EQ(content.back(), '\n');

  CommitInfo info = MakeCommitInfo(123, "WRITE", {{"mode", "Append"}});
  EXPECT_EQ(info.raw["engineInfo"], "Basin/0.1.0");
  EXPECT_EQ(info.raw["operationParameters"]["mode"], "Append");
  EXPECT_EQ(info.raw["timestamp"], 123);
}

TEST_F(SnapshotTest, CorruptCommitLineNamesFileAndLine) {
  ASSERT_OK(WriteCommit(*store_, 0, {Protocol{1, 2, std::nullopt, std::nullopt}, TableMetadata()}));
  ASSERT_OK(store_->Put(CommitKey(1), "{\"commitInfo\":{}}\n{\"add\":{\"path\":\"x\",\"size\":}\n"));
  Status st = Load().status();
  ASSERT_EQ(st.code(), ErrorCode::kCorruption);
  EXPECT_NE(st.message().find("_delta_log/00000000000000000001.json (version 1) line 2"), std::string::npos)
      << st.message();
  ASSERT_OK(LoadVersion(0));
}

TEST_F(SnapshotTest, LogWithoutProtocolOrMetadataIsCorruption) {
  ASSERT_OK(WriteCommit(*store_, 0, {TableMetadata()}));
  ASSERT_ERROR_CODE(Load(), kCorruption);
  store_ = NewMemoryObjectStore();
  ASSERT_OK(WriteCommit(*store_, 0, {Protocol{1, 2, std::nullopt, std::nullopt}}));
  ASSERT_ERROR_CODE(Load(), kCorruption);
}

// Commits above 8 MiB are read in pieces: lines cut at a piece's end, line numbers in
// errors, and a protocol behind a malformed line all behave as with a whole read.
TEST_F(SnapshotTest, LargeCommitsAreReadInPieces) {
  ASSERT_OK(WriteCommit(*store_, 0, {Protocol{1, 2, std::nullopt, std::nullopt}, TableMetadata()}));
  std::string commit;
  constexpr int kFiles = 20'000;  // about 12 MB
  for (int i = 0; i < kFiles; i++) {
    AddFile add = Add("part-" + std::to_string(i) + ".parquet", i);
    add.stats = R"({"numRecords":)" + std::to_string(i) + R"(,"minValues":{"id":")" + std::string(480, 'x') + R"("}})";
    commit += SerializeAction(add) + "\n";
  }
  ASSERT_GT(commit.size(), size_t{9} << 20);
  ASSERT_OK(store_->Put(CommitKey(1), commit));
  ASSERT_OK_AND_ASSIGN(auto snapshot, Load());
  ASSERT_EQ(snapshot->files.size(), static_cast<size_t>(kFiles));
  EXPECT_EQ(snapshot->num_records(), int64_t{kFiles} * (kFiles - 1) / 2);

  // A malformed line in the third piece is named by its line number.
  const size_t line_start = commit.find("part-19000.parquet");
  const size_t cut = commit.rfind('\n', line_start) + 1;
  std::string broken = commit.substr(0, cut) + "{not json\n" + commit.substr(cut);
  ASSERT_OK(store_->Put(CommitKey(1), broken));
  Status st = Load().status();
  ASSERT_EQ(st.code(), ErrorCode::kCorruption) << st.ToString();
  EXPECT_NE(st.message().find("line 19001"), std::string::npos) << st.message();
  // ...unless a newer protocol says the table cannot be read at all.
  ASSERT_OK(WriteCommit(*store_, 2, {Protocol{3, 7, std::vector<std::string>{"someFutureFeature"}, std::vector<std::string>{}}}));
  EXPECT_EQ(Load().status().code(), ErrorCode::kUnsupported);
}

// A commit above 1 MiB is parsed in parts on several threads (one per core): actions still
// apply in log order across the parts, and the first malformed line is the one reported.
TEST_F(SnapshotTest, LargeCommitsParsedInPartsKeepLogOrderAndLineNumbers) {
  ASSERT_OK(WriteCommit(*store_, 0, {Protocol{1, 2, std::nullopt, std::nullopt}, TableMetadata()}));
  constexpr int kFiles = 6'000;  // about 3.5 MB
  std::vector<std::string> lines;
  for (int i = 0; i < kFiles; i++) {
    AddFile add = Add("part-" + std::to_string(i) + ".parquet", 1);
    add.stats = R"({"numRecords":1,"minValues":{"id":")" + std::string(520, 'x') + R"("}})";
    lines.push_back(SerializeAction(add));
  }
  // The last lines remove a file added on the first line and add it back with other stats:
  // only log order across the parts decides which add holds.
  lines.push_back(SerializeAction(Remove("part-0.parquet")));
  lines.push_back(SerializeAction(Add("part-0.parquet", 7)));
  lines.push_back(SerializeAction(Remove("part-1.parquet")));
  auto joined = [](const std::vector<std::string>& all) {
    std::string out;
    for (const std::string& line : all) out += line + "\n";
    return out;
  };
  ASSERT_GT(joined(lines).size(), size_t{3} << 20);
  ASSERT_OK(store_->Put(CommitKey(1), joined(lines)));
  ASSERT_OK_AND_ASSIGN(auto snapshot, Load());
  ASSERT_EQ(snapshot->files.size(), static_cast<size_t>(kFiles - 1));
  EXPECT_EQ(snapshot->num_records(), int64_t{kFiles} - 2 + 7);

  // Malformed lines near the end and near the start: the earlier one is reported, by the
  // number it has in the file.
  std::vector<std::string> broken = lines;
  broken[kFiles - 10] = "{not json";
  ASSERT_OK(store_->Put(CommitKey(1), joined(broken)));
  Status late = Load().status();
  ASSERT_EQ(late.code(), ErrorCode::kCorruption) << late.ToString();
  EXPECT_NE(late.message().find("line " + std::to_string(kFiles - 9)), std::string::npos) << late.message();
  broken[3] = "[1, 2]";
  ASSERT_OK(store_->Put(CommitKey(1), joined(broken)));
  Status early = Load().status();
  ASSERT_EQ(early.code(), ErrorCode::kCorruption) << early.ToString();
  EXPECT_NE(early.message().find("line 4:"), std::string::npos) << early.message();
}

TEST_F(SnapshotTest, NewestProtocolDecidesAndIsCheckedFirst) {
  ASSERT_OK(WriteCommit(*store_, 0,
                        {Protocol{1, 2, std::nullopt, std::nullopt}, TableMetadata(), Add("a.parquet", 1)}));
  // A future protocol along with a malformed schema: the protocol is what gets reported.
  Metadata unreadable = TableMetadata();
  unreadable.schema_string = "{\"type\":\"struct\",\"fields\":[{\"name\":\"g\",\"type\":\"geography\"}]}";
  ASSERT_OK(
      WriteCommit(*store_, 1,
                  {Protocol{3, 7, std::vector<std::string>{"someFutureFeature"}, std::vector<std::string>{}},
                   unreadable}));
  Status st = Load().status();
  ASSERT_EQ(st.code(), ErrorCode::kUnsupported);
  EXPECT_NE(st.message().find("someFutureFeature"), std::string::npos) << st.message();
  ASSERT_OK_AND_ASSIGN(auto v0, LoadVersion(0));
  EXPECT_EQ(v0->protocol.min_reader_version, 1);
}

TEST_F(SnapshotTest, ReadsParquetCheckpointFromAStoreWithoutLocalFiles) {
  ASSERT_OK(WriteCommit(*store_, 0, {Protocol{1, 2, std::nullopt, std::nullopt}, TableMetadata()}));
  ASSERT_OK(WriteCommit(*store_, 1, {Add("a.parquet", 1), Add("b.parquet", 2)}));
  ASSERT_OK(WriteCommit(*store_, 2, {Remove("b.parquet"), Add("c.parquet", 3), SetTransaction{"app", 5, 1}}));
  RemoveFile tombstone = Remove("b.parquet");
  tombstone.deletion_timestamp = 10;
  std::string checkpoint =
      CheckpointBytes({Protocol{1, 2, std::nullopt, std::nullopt}, TableMetadata(), Add("a.parquet", 1),
                       Add("c.parquet", 3), tombstone, SetTransaction{"app", 5, 1}});
  ASSERT_OK(store_->Put(std::string(kLogFolder) + "00000000000000000002.checkpoint.parquet", checkpoint));
  // Later commits re-add the tombstoned file; the checkpoint's tombstone must not hide it.
  ASSERT_OK(WriteCommit(*store_, 3, {Add("b.parquet", 2), Remove("a.parquet")}));
  // Commits before the checkpoint are no longer needed.
  ASSERT_OK(store_->Delete(CommitKey(0)));
  ASSERT_OK(store_->Delete(CommitKey(1)));

  ASSERT_OK_AND_ASSIGN(auto s, Load());
  EXPECT_EQ(s->version, 3);
  EXPECT_EQ(s->files.size(), 2u);
  EXPECT_EQ(s->num_records(), 5);
  EXPECT_EQ(s->set_transactions.at("app").version, 5);
  ASSERT_OK_AND_ASSIGN(auto v2, LoadVersion(2));
  EXPECT_EQ(v2->num_records(), 4);
  Status st = LoadVersion(1).status();
  EXPECT_EQ(st.code(), ErrorCode::kNotFound);
  EXPECT_NE(st.message().find("the log holds versions 2..3"), std::string::npos) << st.message();
}

TEST_F(SnapshotTest, LastCheckpointHintIsNotTrusted) {
  ASSERT_OK(WriteCommit(*store_, 0,
                        {Protocol{1, 2, std::nullopt, std::nullopt}, TableMetadata(), Add("a.parquet", 1)}));
  ASSERT_OK(store_->Put(std::string(kLogFolder) + "_last_checkpoint", "{\"version\":99,\"size\":"));
  ASSERT_OK_AND_ASSIGN(auto corrupt, Load());
  EXPECT_EQ(corrupt->version, 0);
  ASSERT_OK(store_->Put(std::string(kLogFolder) + "_last_checkpoint", "{\"size_in_bytes\":5,\"version\":7}"));
  ASSERT_OK_AND_ASSIGN(auto stale, Load());
  EXPECT_EQ(stale->files.size(), 1u);
}

TEST_F(SnapshotTest, LastCheckpointHintStartsTheListingForTheLatestVersion) {
  ASSERT_OK(WriteCommit(*store_, 0,
                        {Protocol{1, 2, std::nullopt, std::nullopt}, TableMetadata(), Add("a.parquet", 1)}));
  ASSERT_OK(WriteCommit(*store_, 1, {Add("b.parquet", 2)}));
  ASSERT_OK(store_->Put(std::string(kLogFolder) + "00000000000000000001.checkpoint.parquet",
                        CheckpointBytes({Protocol{1, 2, std::nullopt, std::nullopt}, TableMetadata(),
                                         Add("a.parquet", 1), Add("b.parquet", 2)})));
  ASSERT_OK(WriteCommit(*store_, 2, {Add("c.parquet", 3)}));
  const std::string hint_key = std::string(kLogFolder) + "_last_checkpoint";

  ASSERT_OK(store_->Put(hint_key, "{\"version\":1,\"size\":4}"));
  ASSERT_OK_AND_ASSIGN(LogListing from_hint, ListLogForLatest(*store_));
  EXPECT_EQ(from_hint.commits.count(0), 0u) << "the listing should start at the hinted checkpoint";
  EXPECT_EQ(from_hint.commits.count(2), 1u);
  ASSERT_OK_AND_ASSIGN(auto latest, Load());
  EXPECT_EQ(latest->version, 2);
  EXPECT_EQ(latest->num_records(), 6);
  // Time travel lists everything: version 0 is still reachable.
  ASSERT_OK_AND_ASSIGN(auto v0, LoadVersion(0));
  EXPECT_EQ(v0->num_records(), 1);

  // A hint naming a checkpoint that is not there falls back to the whole log.
  ASSERT_OK(store_->Put(hint_key, "{\"version\":2,\"size\":4}"));
  ASSERT_OK_AND_ASSIGN(LogListing stale, ListLogForLatest(*store_));
  EXPECT_EQ(stale.commits.count(0), 1u);
  ASSERT_OK_AND_ASSIGN(auto again, Load());
  EXPECT_EQ(again->num_records(), 6);
}

TEST_F(SnapshotTest, ProtocolFromTheCheckpointIsValidated) {
  Protocol future{3, 7, std::vector<std::string>{"catalogManaged"},
                  std::vector<std::string>{"catalogManaged"}};
  ASSERT_OK(WriteCommit(*store_, 0, {future, TableMetadata()}));
  ASSERT_OK(WriteCommit(*store_, 1, {Add("a.parquet", 1)}));
  ASSERT_OK(store_->Put(std::string(kLogFolder) + "00000000000000000001.checkpoint.parquet",
                        CheckpointBytes({future, TableMetadata(), Add("a.parquet", 1)})));
  ASSERT_OK(WriteCommit(*store_, 2, {Add("b.parquet", 1)}));
  ASSERT_OK(store_->Delete(CommitKey(0)));
  Status st = Load().status();
  ASSERT_EQ(st.code(), ErrorCode::kUnsupported);
  EXPECT_NE(st.message().find("catalogManaged"), std::string::npos) << st.message();
}

TEST_F(SnapshotTest, UnreadableCheckpointIsCorruptionNamingIt) {
  ASSERT_OK(WriteCommit(*store_, 0, {Protocol{1, 2, std::nullopt, std::nullopt}, TableMetadata()}));
  ASSERT_OK(WriteCommit(*store_, 1, {Add("a.parquet", 1)}));
  std::string key = std::string(kLogFolder) + "00000000000000000001.checkpoint.parquet";
  ASSERT_OK(store_->Put(key, "PAR1 this is not parquet"));
  Status st = Load().status();
  ASSERT_EQ(st.code(), ErrorCode::kCorruption);
  EXPECT_NE(st.message().find(key), std::string::npos) << st.message();
  // The version before the checkpoint does not need it.
  ASSERT_OK(LoadVersion(0));
}

TEST_F(SnapshotTest, V2CheckpointWithSidecars) {
  Protocol v2{3, 7, std::vector<std::string>{"v2Checkpoint"}, std::vector<std::string>{"v2Checkpoint"}};
  ASSERT_OK(WriteCommit(*store_, 0, {v2, TableMetadata(), Add("a.parquet", 1), Add("b.parquet", 2)}));
  ASSERT_OK(WriteCommit(*store_, 1, {Add("c.parquet", 3)}));
  std::string sidecar = CheckpointBytes({Add("a.parquet", 1), Add("b.parquet", 2), Add("c.parquet", 3)});
  ASSERT_OK(store_->Put(std::string(kLogFolder) + "_sidecars/s1.parquet", sidecar));
  std::string top;
  for (const Action& a :
       std::vector<Action>{CheckpointMetadata{1, {}}, v2, TableMetadata(),
                           Sidecar{"s1.parquet", static_cast<int64_t>(sidecar.size()), 1}}) {
    top += SerializeAction(a) + "\n";
  }
  ASSERT_OK(store_->Put(
      std::string(kLogFolder) + "00000000000000000001.checkpoint.1b0e7c6e-0000-4000-8000-00000000000a.json",
      top));
  ASSERT_OK(store_->Delete(CommitKey(0)));
  ASSERT_OK_AND_ASSIGN(auto s, Load());
  EXPECT_EQ(s->files.size(), 3u);
  EXPECT_EQ(s->num_records(), 6);

  ASSERT_OK(store_->Delete(std::string(kLogFolder) + "_sidecars/s1.parquet"));
  ASSERT_ERROR_CODE(Load(), kCorruption);
}

TEST_F(SnapshotTest, TimeTravelByInCommitTimestamp) {
  std::map<std::string, std::string> ict = {{"delta.enableInCommitTimestamps", "true"}};
  ASSERT_OK(
      WriteCommit(*store_, 0,
                  {Ict(1000), Protocol{1, 7, std::nullopt, std::vector<std::string>{"inCommitTimestamp"}},
                   TableMetadata(ict), Add("a.parquet", 1)}));
  ASSERT_OK(WriteCommit(*store_, 1, {Ict(2000), Add("b.parquet", 1)}));
  ASSERT_OK(WriteCommit(*store_, 2, {Ict(3000), Add("c.parquet", 1)}));

  ASSERT_OK_AND_ASSIGN(auto latest, Load());
  EXPECT_EQ(latest->timestamp_ms, 3000);
  ASSERT_OK_AND_ASSIGN(auto at_2s, LoadAt("1970-01-01 00:00:02"));
  EXPECT_EQ(at_2s->version, 1);
  EXPECT_EQ(at_2s->timestamp_ms, 2000);
  ASSERT_OK_AND_ASSIGN(auto between, LoadAt("1970-01-01T00:00:02.999Z"));
  EXPECT_EQ(between->version, 1);
  ASSERT_OK_AND_ASSIGN(auto after, LoadAt("2030-01-01"));
  EXPECT_EQ(after->version, 2);
  Status st = LoadAt("1970-01-01 00:00:00.5").status();
  ASSERT_EQ(st.code(), ErrorCode::kNotFound);
  EXPECT_NE(st.message().find("version 0"), std::string::npos) << st.message();
  ASSERT_ERROR_CODE(LoadAt("yesterday"), kInvalidArgument);
  SnapshotOptions both;
  both.version = 1;
  both.timestamp = "2030-01-01";
  ASSERT_ERROR_CODE(Load(both), kInvalidArgument);

  ASSERT_OK_AND_ASSIGN(auto history, ReadHistory(store_));
  ASSERT_EQ(history.size(), 3u);
  EXPECT_EQ(history[0].version, 2);
  EXPECT_EQ(history[0].timestamp_ms, 3000);
  EXPECT_EQ(history[0].engine_info, "Basin/0.1.0");
  EXPECT_EQ(history[2].operation, "WRITE");
}

TEST(TimeTravelTest, ByFileModificationTimeOnLocalStore) {
  testing::TempDir dir;
  ASSERT_OK_AND_ASSIGN(auto store, OpenLocalObjectStore(dir.str()));
  ASSERT_OK(WriteCommit(*store, 0,
                        {Protocol{1, 2, std::nullopt, std::nullopt}, TableMetadata(), Add("a.parquet", 1)}));
  ASSERT_OK(WriteCommit(*store, 1, {Add("b.parquet", 1)}));
  ASSERT_OK(WriteCommit(*store, 2, {Add("c.parquet", 1)}));
  // 2024-01-01, -02 and -03 at midnight UTC.
  const int64_t kDay = 86400;
  for (int v = 0; v <= 2; v++) {
    auto when = std::chrono::system_clock::from_time_t(1704067200 + v * kDay);
    fs::last_write_time(dir.path() / CommitKey(v), fs::file_time_type::clock::from_sys(when));
  }
  ASSERT_OK_AND_ASSIGN(auto db, engine::Database::Open());
  ASSERT_OK_AND_ASSIGN(auto conn, engine::Connection::Open(db));
  auto at = [&](const std::string& ts) {
    SnapshotOptions options;
    options.timestamp = ts;
    engine::DuckDBParquetLogIO log_io;
    return LoadSnapshot(store, dir.str(), log_io, options);
  };
  ASSERT_OK_AND_ASSIGN(auto jan2, at("2024-01-02"));
  EXPECT_EQ(jan2->version, 1);
  EXPECT_EQ(jan2->timestamp_ms, (1704067200 + kDay) * 1000);
  ASSERT_OK_AND_ASSIGN(auto jan2_noon, at("2024-01-02 12:00:00"));
  EXPECT_EQ(jan2_noon->version, 1);
  ASSERT_OK_AND_ASSIGN(auto jan1_offset, at("2024-01-02T00:30:00+01:00"));
  EXPECT_EQ(jan1_offset->version, 0);
  ASSERT_ERROR_CODE(at("2023-12-31 23:59:59.999999"), kNotFound);

  ASSERT_OK_AND_ASSIGN(auto history, ReadHistory(store));
  EXPECT_EQ(history.back().timestamp_ms, 1704067200000);
}

TEST(TimestampTest, ParsesTheAcceptedForms) {
  EXPECT_EQ(*ParseTimestampMs("1970-01-01"), 0);
  EXPECT_EQ(*ParseTimestampMs("2024-02-29 01:02:03"), 1709168523000);
  EXPECT_EQ(*ParseTimestampMs("2024-02-29 01:02:03.456789"), 1709168523456);
  EXPECT_EQ(*ParseTimestampMs("2024-02-29T01:02:03.4Z"), 1709168523400);
  EXPECT_EQ(*ParseTimestampMs("2024-02-29T03:02:03+02:00"), 1709168523000);
  EXPECT_EQ(*ParseTimestampMs("1969-12-31 23:59:59"), -1000);
  for (const char* bad :
       {"", "2024", "2024-13-01", "2024-01-01 25:00:00", "2024-01-01X", "2024-01-01 10:00:00 junk"}) {
    EXPECT_EQ(ParseTimestampMs(bad).status().code(), ErrorCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(FormatTimestampMs(1709168523456), "2024-02-29 01:02:03.456 UTC");
  EXPECT_EQ(FormatTimestampMs(-1000), "1969-12-31 23:59:59.000 UTC");
}

}  // namespace
}  // namespace basin::delta
