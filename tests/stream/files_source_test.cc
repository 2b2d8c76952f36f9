// STREAM read_files(...): a folder's files as a stream's source. Each file is read once
// across restarts, rewrites and hidden files aside; batches are bounded by
// maxFilesPerTrigger and maxBytesPerTrigger; the first batch's inferred schema is kept in
// the offsets; the paths read are compacted every 100 batches.
#include <gtest/gtest.h>

#include <string>

#include "runner_test_util.h"
#include "stream/runner.h"
#include "testing/test_util.h"

namespace basin::stream {
namespace {

class FilesSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(session_, sql::Session::Open({.warehouse_dir = warehouse_.str()}));
    ASSERT_OK(session_->Execute("CREATE TABLE bronze (id BIGINT, v VARCHAR)").status());
    checkpoint_ = NewMemoryObjectStore();
    folder_ = NamedMemoryStore(name_);
  }
  void TearDown() override { ForgetNamedMemoryStore(name_); }

  std::string Statement(const std::string& options = "") {
    return "INSERT INTO bronze SELECT id, v FROM STREAM read_files('memory://" + name_ +
           "', format => 'json'" + options + ")";
  }

  Result<std::unique_ptr<StreamRunner>> OpenRunner(const std::string& statement) {
    return StreamRunner::Open(*session_, checkpoint_, statement, SystemClock());
  }

  // A JSON file of `rows` rows from `first` on.
  void Write(const std::string& key, int64_t first, int64_t rows) {
    std::string text;
    for (int64_t id = first; id < first + rows; id++) {
      text += "{\"id\": " + std::to_string(id) + ", \"v\": \"v" + std::to_string(id) + "\"}\n";
    }
    ASSERT_OK(folder_->Put(key, text));
  }

  int64_t RowsOut(StreamRunner& runner) {
    auto commit = runner.RunBatch();
    EXPECT_TRUE(commit.ok()) << commit.status().ToString();
    if (!commit.ok() || !*commit) return -1;
    return (*commit)->rows_out;
  }

  bool Idle(StreamRunner& runner) {
    auto commit = runner.RunBatch();
    EXPECT_TRUE(commit.ok()) << commit.status().ToString();
    return commit.ok() && !*commit;
  }

  std::pair<int64_t, int64_t> Counts() {
    return basin::testing::TwoCounts(*session_, "SELECT count(*), count(DISTINCT id) FROM bronze");
  }

  testing::TempDir warehouse_;
  const std::string name_ = "files-source-" + std::to_string(reinterpret_cast<uintptr_t>(this));
  std::unique_ptr<sql::Session> session_;
  std::shared_ptr<ObjectStore> checkpoint_;
  std::shared_ptr<ObjectStore> folder_;
};

TEST_F(FilesSourceTest, EachFileOnceAcrossRestartsAndRewrites) {
  Write("a.json", 0, 2);
  Write("day=2/b.json", 2, 1);
  Write("_SUCCESS", 0, 0);
  Write("_temporary/part.json", 100, 5);  // a writer's unfinished output: hidden
  ASSERT_OK_AND_ASSIGN(auto runner, OpenRunner(Statement()));
  EXPECT_EQ(RowsOut(*runner), 3);
  EXPECT_TRUE(Idle(*runner));

  Write("a.json", 0, 2);  // rewritten: already read
  Write("c.json", 3, 4);
  EXPECT_EQ(RowsOut(*runner), 4);

  runner.reset();  // a restart resumes after the files read
  Write("d.json", 7, 1);
  ASSERT_OK_AND_ASSIGN(runner, OpenRunner(Statement()));
  EXPECT_EQ(RowsOut(*runner), 1);
  EXPECT_TRUE(Idle(*runner));
  EXPECT_EQ(Counts(), std::make_pair(int64_t{8}, int64_t{8}));
}

TEST_F(FilesSourceTest, BatchesAreBoundedAndKeepTheFirstSchema) {
  for (int i = 0; i < 5; i++) Write("f" + std::to_string(i) + ".json", i * 10, 10);
  ASSERT_OK_AND_ASSIGN(auto runner, OpenRunner(Statement(", maxFilesPerTrigger => 2")));
  for (int64_t expected : {20, 20, 10}) EXPECT_EQ(RowsOut(*runner), expected);
  EXPECT_TRUE(Idle(*runner));
  // The offsets record the files and the schema inferred from the first batch's.
  ASSERT_OK_AND_ASSIGN(std::string offsets, checkpoint_->Get("offsets/00000000000000000002.json"));
  EXPECT_NE(offsets.find("\"path\":\"f4.json\""), std::string::npos) << offsets;
  EXPECT_NE(offsets.find("{\"name\":\"id\",\"type\":\"BIGINT\"}"), std::string::npos) << offsets;

  // A later file with another field and a quoted number is read with the kept columns.
  ASSERT_OK(folder_->Put("g.json", "{\"id\": \"60\", \"v\": \"x\", \"extra\": true}\n"));
  EXPECT_EQ(RowsOut(*runner), 1);

  // maxBytesPerTrigger: a byte bound below one file still reads a file a batch.
  checkpoint_ = NewMemoryObjectStore();
  ASSERT_OK_AND_ASSIGN(runner, OpenRunner(Statement(", maxBytesPerTrigger => 1")));
  for (int i = 0; i < 6; i++) EXPECT_GT(RowsOut(*runner), 0);
  EXPECT_TRUE(Idle(*runner));
  EXPECT_EQ(Counts(), std::make_pair(int64_t{51 * 2}, int64_t{51}));
}

// available-now reads the files there when it starts, in bounded batches, and ends; files
// landing meanwhile wait for the next run.
TEST_F(FilesSourceTest, AvailableNowEndsAtTheFilesThereWhenItStarted) {
  for (int i = 0; i < 3; i++) Write("f" + std::to_string(i) + ".json", i * 10, 10);
  ASSERT_OK_AND_ASSIGN(auto runner, OpenRunner(Statement(", maxFilesPerTrigger => 2")));
  EXPECT_EQ(basin::testing::RunAvailableNow(*runner, [&] { Write("late.json", 100, 5); }),
            (std::vector<int64_t>{20, 10}));
  EXPECT_EQ(basin::testing::RunAvailableNow(*runner, [] {}), (std::vector<int64_t>{5}));
}

// After 100 batches the paths are one compacted object; a restart reads it, not the lists.
TEST_F(FilesSourceTest, PathsAreCompactedEveryHundredBatches) {
  const std::string statement = Statement(", maxFilesPerTrigger => 1");
  ASSERT_OK_AND_ASSIGN(auto runner, OpenRunner(statement));
  for (int i = 0; i < 103; i++) {
    Write("f" + std::to_string(1000 + i) + ".json", i, 1);
    ASSERT_EQ(RowsOut(*runner), 1) << "batch " << i;
  }
  EXPECT_TRUE(Idle(*runner));
  ASSERT_OK_AND_ASSIGN(std::vector<ObjectInfo> seen, checkpoint_->List("sources/0/seen/"));
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].key, "sources/0/seen/00000000000000000099.json");
  ASSERT_OK_AND_ASSIGN(std::vector<ObjectInfo> lists, checkpoint_->List("sources/0/files/"));
  EXPECT_EQ(lists.size(), 3u);  // batches 100 to 102
  runner.reset();
  Write("last.json", 500, 1);
  ASSERT_OK_AND_ASSIGN(runner, OpenRunner(statement));
  EXPECT_EQ(RowsOut(*runner), 1);
  EXPECT_TRUE(Idle(*runner));
  EXPECT_EQ(Counts(), std::make_pair(int64_t{104}, int64_t{104}));
}

TEST_F(FilesSourceTest, BadOptionsAreRefusedNamingThem) {
  Write("a.json", 0, 1);
  for (const auto& [statement, expected] : std::vector<std::pair<std::string, std::string>>{
           {"INSERT INTO bronze SELECT * FROM STREAM read_files('memory://" + name_ + "')", "format"},
           {Statement(", maxFilesPerTrigger => 0"), "maxFilesPerTrigger must be 1 or more"},
           {Statement(", maxBytesPerTrigger => 'lots'"), "maxBytesPerTrigger takes a size"}}) {
    SCOPED_TRACE(statement);
    checkpoint_ = NewMemoryObjectStore();
    auto runner = OpenRunner(statement);
    Status status = runner.ok() ? (*runner)->RunBatch().status() : runner.status();
    EXPECT_EQ(status.code(), ErrorCode::kInvalidArgument) << status.ToString();
    EXPECT_NE(status.message().find(expected), std::string::npos) << status.ToString();
  }
}

}  // namespace
}  // namespace basin::stream
