#include "delta/log_segment.h"

#include "testing/test_util.h"

namespace basin::delta {
namespace {

ObjectInfo Obj(const std::string& name) { return ObjectInfo{std::string(kLogFolder) + name, 1, 0}; }

std::string V(int64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%020lld", static_cast<long long>(v));
  return buf;
}

TEST(LogFileTest, ClassifiesLogFileNames) {
  auto commit = ParseLogFile(Obj(V(7) + ".json"));
  ASSERT_TRUE(commit);
  EXPECT_EQ(commit->type, LogFileType::kCommit);
  EXPECT_EQ(commit->version, 7);
  EXPECT_EQ(CommitKey(7), std::string(kLogFolder) + V(7) + ".json");

  auto classic = ParseLogFile(Obj(V(10) + ".checkpoint.parquet"));
  ASSERT_TRUE(classic);
  EXPECT_EQ(classic->type, LogFileType::kClassicCheckpoint);

  auto part = ParseLogFile(Obj(V(10) + ".checkpoint.0000000002.0000000003.parquet"));
  ASSERT_TRUE(part);
  EXPECT_EQ(part->type, LogFileType::kMultiPartCheckpoint);
  EXPECT_EQ(part->part, 2);
  EXPECT_EQ(part->num_parts, 3);

  auto v2 = ParseLogFile(Obj(V(2) + ".checkpoint.6374b053-df23-479b-b2cf-c9c550132b49.json"));
  ASSERT_TRUE(v2);
  EXPECT_EQ(v2->type, LogFileType::kV2Checkpoint);
  EXPECT_TRUE(ParseLogFile(Obj(V(2) + ".checkpoint.80a083e8-7026-4e79-81be-64bd76c43a11.parquet")));

  auto compaction = ParseLogFile(Obj(V(4) + "." + V(6) + ".compacted.json"));
  ASSERT_TRUE(compaction);
  EXPECT_EQ(compaction->type, LogFileType::kCompaction);
  EXPECT_EQ(compaction->version, 4);
  EXPECT_EQ(compaction->end_version, 6);

  for (const std::string& junk : std::vector<std::string>{
           "_last_checkpoint", "." + V(1) + ".json.crc", V(1) + ".crc", ".tmp/" + V(5) + ".json",
           "_staged_commits/" + V(1) + ".3a0d65cd-4056-49b8-937b-95f9e3ee90e5.json",
           "_sidecars/" + V(2) + ".checkpoint.0000000001.0000000002.bd18.parquet", ".s3-optimization-0",
           "123.json", V(1) + ".json.tmp", V(6) + "." + V(4) + ".compacted.json",
           V(1) + ".checkpoint.0000000004.0000000003.parquet", V(1) + ".checkpoint..parquet",
           "99999999999999999999.json"}) {
    EXPECT_FALSE(ParseLogFile(Obj(junk))) << junk;
  }
  EXPECT_FALSE(ParseLogFile(ObjectInfo{"other/" + V(1) + ".json", 1, 0}));
}

class LogSegmentTest : public ::testing::Test {
 protected:
  void Add(const std::string& name) { ASSERT_OK(store_->Put(std::string(kLogFolder) + name, "x")); }
  void Commits(int64_t from, int64_t to) {
    for (int64_t v = from; v <= to; v++) Add(V(v) + ".json");
  }
  Result<LogSegment> Segment(std::optional<int64_t> version = std::nullopt) {
    auto listing = ListLog(*store_);
    if (!listing.ok()) return listing.status();
    return BuildLogSegment(*listing, version, "tbl");
  }

  std::shared_ptr<ObjectStore> store_ = NewMemoryObjectStore();
};

TEST_F(LogSegmentTest, EmptyLogIsNotFound) { ASSERT_ERROR_CODE(Segment(), kNotFound); }

TEST_F(LogSegmentTest, CommitsFromZeroWithoutCheckpoint) {
  Commits(0, 3);
  Add("_last_checkpoint");
  ASSERT_OK_AND_ASSIGN(auto segment, Segment());
  EXPECT_EQ(segment.version, 3);
  EXPECT_FALSE(segment.checkpoint);
  ASSERT_EQ(segment.deltas.size(), 4u);
  EXPECT_EQ(segment.deltas[0].version, 0);
  ASSERT_TRUE(segment.last_commit);
  EXPECT_EQ(segment.last_commit->key, CommitKey(3));
}

TEST_F(LogSegmentTest, GapIsCorruptionNamingTheMissingVersion) {
  Commits(0, 0);
  Commits(2, 2);
  Status st = Segment().status();
  ASSERT_EQ(st.code(), ErrorCode::kCorruption);
  EXPECT_NE(st.message().find("missing version 1"), std::string::npos) << st.message();
  // Version 0 alone is still readable.
  ASSERT_OK_AND_ASSIGN(auto v0, Segment(0));
  EXPECT_EQ(v0.deltas.size(), 1u);
}

TEST_F(LogSegmentTest, WithoutCheckpointVersionsMustStartAtZero) {
  Commits(3, 5);
  Status st = Segment().status();
  ASSERT_EQ(st.code(), ErrorCode::kCorruption);
  EXPECT_NE(st.message().find("missing version 0"), std::string::npos) << st.message();
}

TEST_F(LogSegmentTest, PicksNewestCheckpointAtOrBelowTarget) {
  Commits(5, 12);
  Add(V(5) + ".checkpoint.parquet");
  Add(V(10) + ".checkpoint.parquet");
  ASSERT_OK_AND_ASSIGN(auto latest, Segment());
  ASSERT_TRUE(latest.checkpoint);
  EXPECT_EQ(latest.checkpoint->version, 10);
  ASSERT_EQ(latest.deltas.size(), 2u);
  EXPECT_EQ(latest.deltas[0].version, 11);

  ASSERT_OK_AND_ASSIGN(auto v7, Segment(7));
  EXPECT_EQ(v7.checkpoint->version, 5);
  EXPECT_EQ(v7.deltas.size(), 2u);

  ASSERT_OK_AND_ASSIGN(auto v10, Segment(10));
  EXPECT_EQ(v10.checkpoint->version, 10);
  EXPECT_TRUE(v10.deltas.empty());
  EXPECT_TRUE(v10.last_commit);

  Status before = Segment(4).status();
  ASSERT_EQ(before.code(), ErrorCode::kNotFound);
  EXPECT_NE(before.message().find("version 4 is not available: the log holds versions 5..12"),
            std::string::npos)
      << before.message();
  ASSERT_ERROR_CODE(Segment(13), kNotFound);
}

TEST_F(LogSegmentTest, IncompleteMultiPartCheckpointIsIgnored) {
  Commits(0, 4);
  Add(V(2) + ".checkpoint.0000000001.0000000002.parquet");
  Add(V(2) + ".checkpoint.0000000002.0000000002.parquet");
  Add(V(4) + ".checkpoint.0000000001.0000000003.parquet");
  Add(V(4) + ".checkpoint.0000000003.0000000003.parquet");
  ASSERT_OK_AND_ASSIGN(auto segment, Segment());
  ASSERT_TRUE(segment.checkpoint);
  EXPECT_EQ(segment.checkpoint->version, 2);
  EXPECT_EQ(segment.checkpoint->type, LogFileType::kMultiPartCheckpoint);
  ASSERT_EQ(segment.checkpoint->files.size(), 2u);
  EXPECT_NE(segment.checkpoint->files[0].key.find(".0000000001."), std::string::npos);
  EXPECT_EQ(segment.deltas.size(), 2u);
}

TEST_F(LogSegmentTest, PrefersSingleFileCheckpointAtOneVersion) {
  Commits(0, 3);
  Add(V(3) + ".checkpoint.0000000001.0000000002.parquet");
  Add(V(3) + ".checkpoint.0000000002.0000000002.parquet");
  Add(V(3) + ".checkpoint.parquet");
  ASSERT_OK_AND_ASSIGN(auto segment, Segment());
  EXPECT_EQ(segment.checkpoint->type, LogFileType::kClassicCheckpoint);
}

TEST_F(LogSegmentTest, CheckpointOnlyVersionIsTheLatest) {
  Commits(0, 1);
  Add(V(2) + ".checkpoint.parquet");
  ASSERT_OK_AND_ASSIGN(auto segment, Segment());
  EXPECT_EQ(segment.version, 2);
  EXPECT_TRUE(segment.deltas.empty());
  EXPECT_FALSE(segment.last_commit);
}

TEST_F(LogSegmentTest, UsesCompactionsThatFitAfterTheCheckpoint) {
  Commits(0, 16);
  Add(V(0) + "." + V(5) + ".compacted.json");
  Add(V(6) + "." + V(10) + ".compacted.json");
  Add(V(6) + "." + V(15) + ".compacted.json");
  ASSERT_OK_AND_ASSIGN(auto latest, Segment());
  ASSERT_EQ(latest.deltas.size(), 3u);
  EXPECT_EQ(latest.deltas[0].type, LogFileType::kCompaction);
  EXPECT_EQ(latest.deltas[1].end_version, 15);
  EXPECT_EQ(latest.deltas[2].type, LogFileType::kCommit);
  EXPECT_EQ(latest.deltas[2].version, 16);

  ASSERT_OK_AND_ASSIGN(auto v12, Segment(12));
  ASSERT_EQ(v12.deltas.size(), 4u);  // 0..5, 6..10, 11, 12
  EXPECT_EQ(v12.deltas[1].end_version, 10);

  Add(V(3) + ".checkpoint.parquet");
  ASSERT_OK_AND_ASSIGN(auto after_checkpoint, Segment(8));
  // 0..5 straddles the checkpoint at 3, so commits 4 and 5 are read one by one.
  ASSERT_EQ(after_checkpoint.deltas.size(), 5u);
  EXPECT_EQ(after_checkpoint.deltas[0].version, 4);
  EXPECT_EQ(after_checkpoint.deltas[0].type, LogFileType::kCommit);
}

TEST_F(LogSegmentTest, CompactionCoversCommitsThatWereCleanedUp) {
  Add(V(0) + "." + V(3) + ".compacted.json");
  Commits(4, 4);
  ASSERT_OK_AND_ASSIGN(auto segment, Segment());
  EXPECT_EQ(segment.version, 4);
  ASSERT_EQ(segment.deltas.size(), 2u);
}

}  // namespace
}  // namespace basin::delta
