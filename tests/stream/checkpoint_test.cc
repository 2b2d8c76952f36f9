// StreamCheckpoint (stream/checkpoint.h): the folder of docs/stream-checkpoints.md, and the
// recovery rule that makes a batch count once: a planned batch is re-run over its recorded
// range until the sink table's txn says it committed.
#include "stream/checkpoint.h"

#include <gtest/gtest.h>

#include "testing/test_util.h"

namespace basin::stream {
namespace {

StreamMetadata Proposed(const std::string& statement = "INSERT INTO bronze SELECT * FROM STREAM(src)") {
  StreamMetadata m;
  m.stream_id = "0f1e2d3c-0000-4000-8000-000000000001";
  m.created_time_ms = 1'764'600'000'000;
  m.statement = statement;
  m.sink_table = "default.bronze";
  m.sink_location = "default/bronze";
  return m;
}

nlohmann::json Range(int64_t start, int64_t end) {
  return {{"sources", {{{"index", 0}, {"kind", "kafka"}, {"ranges", {{"t", {{"0", {start, end}}}}}}}}}};
}

class StreamCheckpointTest : public ::testing::Test {
 protected:
  std::shared_ptr<ObjectStore> store_ = NewMemoryObjectStore();
};

TEST_F(StreamCheckpointTest, FirstOpenCreatesTheStreamAndLaterOpensReadIt) {
  ASSERT_OK_AND_ASSIGN(auto first, StreamCheckpoint::Open(store_, Proposed()));
  EXPECT_EQ(first->metadata().stream_id, Proposed().stream_id);
  StreamMetadata other = Proposed("INSERT INTO bronze\n  SELECT *   FROM STREAM(src)");
  other.stream_id = "another id";  // ignored: the folder's stream wins
  ASSERT_OK_AND_ASSIGN(auto again, StreamCheckpoint::Open(store_, other));
  EXPECT_EQ(again->metadata().stream_id, Proposed().stream_id);
  EXPECT_EQ(again->metadata().sink_table, "default.bronze");
  EXPECT_EQ(again->metadata().created_time_ms, Proposed().created_time_ms);
}

TEST_F(StreamCheckpointTest, ADifferentStatementIsRefused) {
  ASSERT_OK(StreamCheckpoint::Open(store_, Proposed()).status());
  auto changed = StreamCheckpoint::Open(store_, Proposed("INSERT INTO silver SELECT * FROM STREAM(src)"));
  ASSERT_FALSE(changed.ok());
  EXPECT_EQ(changed.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(changed.status().message().find("new checkpoint folder"), std::string::npos);
}

TEST_F(StreamCheckpointTest, MalformedOrNewerMetadataIsRefusedNamingIt) {
  ASSERT_OK(store_->Put("metadata.json", "{\"format\":1,\"streamId\":7}"));
  auto bad = StreamCheckpoint::Open(store_, Proposed());
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), ErrorCode::kCorruption);
  EXPECT_NE(bad.status().message().find("metadata.json"), std::string::npos);
  ASSERT_OK(store_->Put("metadata.json", "{\"format\":2}"));
  EXPECT_EQ(StreamCheckpoint::Open(store_, Proposed()).status().code(), ErrorCode::kUnsupported);
}

TEST_F(StreamCheckpointTest, RecoveryFollowsTheOffsetsCommitsAndTheTablesTxn) {
  ASSERT_OK_AND_ASSIGN(auto cp, StreamCheckpoint::Open(store_, Proposed()));
  // Nothing planned: batch 0.
  ASSERT_OK_AND_ASSIGN(Recovery r, cp->Recover(std::nullopt));
  EXPECT_EQ(r.action, Recovery::Action::kPlan);
  EXPECT_EQ(r.batch_id, 0);
  EXPECT_FALSE(r.previous);

  // Batch 0 planned, and the run died before its Delta commit: re-run exactly its range.
  ASSERT_OK(cp->WriteOffsets(0, Range(0, 10)));
  ASSERT_OK_AND_ASSIGN(r, cp->Recover(std::nullopt));
  EXPECT_EQ(r.action, Recovery::Action::kRerun);
  EXPECT_EQ(r.batch_id, 0);
  EXPECT_EQ(*r.planned, Range(0, 10));

  // Its commit landed (the table's txn is at 0) but the marker did not: record it.
  ASSERT_OK_AND_ASSIGN(r, cp->Recover(0));
  EXPECT_EQ(r.action, Recovery::Action::kRecordCommit);
  EXPECT_EQ(r.batch_id, 0);

  // Marked: plan batch 1 after batch 0's range.
  BatchCommit done;
  done.batch_id = 0;
  done.table_version = 5;
  done.rows_in = 10;
  ASSERT_OK(cp->WriteCommit(done));
  ASSERT_OK(cp->WriteCommit(done));  // a second marker of the same batch is no error
  ASSERT_OK_AND_ASSIGN(r, cp->Recover(0));
  EXPECT_EQ(r.action, Recovery::Action::kPlan);
  EXPECT_EQ(r.batch_id, 1);
  EXPECT_EQ(*r.previous, Range(0, 10));
  ASSERT_OK_AND_ASSIGN(std::optional<BatchCommit> read, cp->ReadCommit(0));
  ASSERT_TRUE(read);
  EXPECT_EQ(read->table_version, 5);
  EXPECT_EQ(read->rows_in, 10);
  ASSERT_OK_AND_ASSIGN(read, cp->ReadCommit(1));
  EXPECT_FALSE(read);
}

TEST_F(StreamCheckpointTest, BatchesCommittedOneAfterAnotherRecordEachCommitInTheNextOffsets) {
  ASSERT_OK_AND_ASSIGN(auto cp, StreamCheckpoint::Open(store_, Proposed()));
  // A run committed batches 0 to 2 one after the other and wrote no marker: each batch's
  // offsets hold the commit of the one before.
  ASSERT_OK(cp->WriteOffsets(0, Range(0, 10)));
  for (int64_t batch = 1; batch <= 3; batch++) {
    BatchCommit before;
    before.batch_id = batch - 1;
    before.table_version = 40 + batch;
    before.rows_out = 10 * batch;
    nlohmann::json offsets = Range(10 * batch, 10 * batch + 10);
    offsets[kPreviousCommitField] = CommitJson(before);
    ASSERT_OK(cp->WriteOffsets(batch, offsets));
  }
  ASSERT_OK_AND_ASSIGN(std::optional<int64_t> marked, cp->LatestCommitted());
  EXPECT_FALSE(marked);
  // The run died in batch 3: run it again; or after its commit: record it.
  ASSERT_OK_AND_ASSIGN(Recovery r, cp->Recover(2));
  EXPECT_EQ(r.action, Recovery::Action::kRerun);
  EXPECT_EQ(r.batch_id, 3);
  EXPECT_EQ((*r.planned)["sources"], Range(30, 40)["sources"]);
  ASSERT_OK_AND_ASSIGN(r, cp->Recover(3));
  EXPECT_EQ(r.action, Recovery::Action::kRecordCommit);
  EXPECT_EQ(r.batch_id, 3);
  // What the folder says committed last: batch 2, from batch 3's offsets.
  ASSERT_OK_AND_ASSIGN(std::optional<BatchCommit> newest, cp->NewestCommit());
  ASSERT_TRUE(newest);
  EXPECT_EQ(newest->batch_id, 2);
  EXPECT_EQ(newest->table_version, 43);
  EXPECT_EQ(newest->rows_out, 30);
  // Once batch 3's marker is there, it is the newest, and the next plan follows it.
  BatchCommit three;
  three.batch_id = 3;
  three.table_version = 44;
  ASSERT_OK(cp->WriteCommit(three));
  ASSERT_OK_AND_ASSIGN(newest, cp->NewestCommit());
  ASSERT_TRUE(newest);
  EXPECT_EQ(newest->batch_id, 3);
  EXPECT_EQ(newest->table_version, 44);
  ASSERT_OK_AND_ASSIGN(r, cp->Recover(3));
  EXPECT_EQ(r.action, Recovery::Action::kPlan);
  EXPECT_EQ(r.batch_id, 4);
}

TEST_F(StreamCheckpointTest, AFolderWithAMarkerForEveryBatchReadsItsNewestMarker) {
  // As an earlier Basin wrote it: offsets without the commit before, a marker each.
  ASSERT_OK_AND_ASSIGN(auto cp, StreamCheckpoint::Open(store_, Proposed()));
  ASSERT_OK_AND_ASSIGN(std::optional<BatchCommit> newest, cp->NewestCommit());
  EXPECT_FALSE(newest);
  for (int64_t batch = 0; batch <= 1; batch++) {
    ASSERT_OK(cp->WriteOffsets(batch, Range(10 * batch, 10 * batch + 10)));
    BatchCommit done;
    done.batch_id = batch;
    done.rows_in = 10;
    ASSERT_OK(cp->WriteCommit(done));
  }
  ASSERT_OK(cp->WriteOffsets(2, Range(20, 30)));
  ASSERT_OK_AND_ASSIGN(newest, cp->NewestCommit());
  ASSERT_TRUE(newest);
  EXPECT_EQ(newest->batch_id, 1);
  EXPECT_EQ(newest->rows_in, 10);
}

TEST_F(StreamCheckpointTest, ADamagedCommitInTheOffsetsIsCorruptionNamingIt) {
  ASSERT_OK_AND_ASSIGN(auto cp, StreamCheckpoint::Open(store_, Proposed()));
  BatchCommit wrong;
  wrong.batch_id = 7;  // not batch 4's
  nlohmann::json offsets = Range(0, 10);
  offsets[kPreviousCommitField] = CommitJson(wrong);
  ASSERT_OK(cp->WriteOffsets(5, offsets));
  Result<std::optional<BatchCommit>> newest = cp->NewestCommit();
  ASSERT_EQ(newest.status().code(), ErrorCode::kCorruption);
  EXPECT_NE(newest.status().message().find(StreamCheckpoint::OffsetsKey(5)), std::string::npos)
      << newest.status().ToString();
  offsets[kPreviousCommitField] = "batch 4";
  ASSERT_OK(cp->WriteOffsets(6, offsets));
  EXPECT_EQ(cp->NewestCommit().status().code(), ErrorCode::kCorruption);
}

TEST_F(StreamCheckpointTest, TwoRunsCannotPlanTheSameBatch) {
  ASSERT_OK_AND_ASSIGN(auto one, StreamCheckpoint::Open(store_, Proposed()));
  ASSERT_OK_AND_ASSIGN(auto two, StreamCheckpoint::Open(store_, Proposed()));
  ASSERT_OK(one->WriteOffsets(0, Range(0, 10)));
  Status lost = two->WriteOffsets(0, Range(0, 12));
  EXPECT_EQ(lost.code(), ErrorCode::kConflict);
  ASSERT_OK_AND_ASSIGN(nlohmann::json kept, two->ReadOffsets(0));
  EXPECT_EQ(kept, Range(0, 10));  // the winner's range, untouched
}

TEST_F(StreamCheckpointTest, AFolderThatContradictsItselfOrTheTableIsCorruption) {
  ASSERT_OK_AND_ASSIGN(auto cp, StreamCheckpoint::Open(store_, Proposed()));
  // The table holds a batch this folder never planned (a replaced folder).
  EXPECT_EQ(cp->Recover(3).status().code(), ErrorCode::kCorruption);
  ASSERT_OK(cp->WriteOffsets(0, Range(0, 10)));
  EXPECT_EQ(cp->Recover(1).status().code(), ErrorCode::kCorruption);
  // A marker of a batch never planned.
  BatchCommit two;
  two.batch_id = 2;
  ASSERT_OK(cp->WriteCommit(two));
  auto ahead = cp->Recover(std::nullopt);
  ASSERT_FALSE(ahead.ok());
  EXPECT_EQ(ahead.status().code(), ErrorCode::kCorruption);
  EXPECT_NE(ahead.status().message().find(StreamCheckpoint::CommitKey(2)), std::string::npos)
      << ahead.status().ToString();
}

TEST_F(StreamCheckpointTest, ObjectsThatAreNotBatchesAreIgnored) {
  ASSERT_OK_AND_ASSIGN(auto cp, StreamCheckpoint::Open(store_, Proposed()));
  ASSERT_OK(store_->Put("offsets/notes.txt", "x"));
  ASSERT_OK(store_->Put("offsets/.00000000000000000009.json.tmp", "x"));
  ASSERT_OK_AND_ASSIGN(std::optional<int64_t> planned, cp->LatestPlanned());
  EXPECT_FALSE(planned);
  ASSERT_OK(cp->WriteOffsets(12, Range(0, 1)));
  EXPECT_EQ(StreamCheckpoint::OffsetsKey(12), "offsets/00000000000000000012.json");
  ASSERT_OK_AND_ASSIGN(planned, cp->LatestPlanned());
  EXPECT_EQ(planned, 12);
}

}  // namespace
}  // namespace basin::stream
