// STREAM read_files(...): a folder's files as a stream's source. Each file is read once
// across restarts, rewrites and hidden files aside; batches are bounded by
// maxFilesPerTrigger and maxBytesPerTrigger; the first batch's inferred schema is kept in
// the offsets; the paths read are compacted every 100 batches; schemaEvolutionMode decides
// what columns later files add do.
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

  // Runs one batch, which must write `rows` rows and set `dead` records aside.
  void ExpectBatch(StreamRunner& runner, int64_t rows, int64_t dead) {
    auto commit = runner.RunBatch();
    ASSERT_OK(commit.status());
    ASSERT_TRUE(*commit);
    EXPECT_EQ((*commit)->rows_out, rows);
    EXPECT_EQ((*commit)->dead_letters, dead);
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
  const std::string statement = Statement(", maxFilesPerTrigger => 2, schemaEvolutionMode => 'none'");
  ASSERT_OK_AND_ASSIGN(auto runner, OpenRunner(statement));
  for (int64_t expected : {20, 20, 10}) EXPECT_EQ(RowsOut(*runner), expected);
  EXPECT_TRUE(Idle(*runner));
  // The offsets record the files and the schema inferred from the first batch's.
  ASSERT_OK_AND_ASSIGN(std::string offsets, checkpoint_->Get("offsets/00000000000000000002.json"));
  EXPECT_NE(offsets.find("\"path\":\"f4.json\""), std::string::npos) << offsets;
  EXPECT_NE(offsets.find("{\"name\":\"id\",\"type\":\"BIGINT\"}"), std::string::npos) << offsets;

  // With schemaEvolutionMode 'none', a later file with another field and a quoted number is
  // read with the kept columns.
  ASSERT_OK(folder_->Put("g.json", "{\"id\": \"60\", \"v\": \"x\", \"extra\": true}\n"));
  EXPECT_EQ(RowsOut(*runner), 1);

  // maxBytesPerTrigger: a byte bound below one file still reads a file a batch.
  checkpoint_ = NewMemoryObjectStore();
  ASSERT_OK_AND_ASSIGN(runner,
                       OpenRunner(Statement(", maxBytesPerTrigger => 1, schemaEvolutionMode => 'none'")));
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

// addNewColumns (the default without a declared schema): a file with a new field stops the
// stream, naming it, before the batch is planned; run again, the stream reads with the wider
// schema, and INSERT WITH SCHEMA EVOLUTION adds the column to the sink.
TEST_F(FilesSourceTest, AddNewColumnsStopsNamingThemThenReadsThem) {
  const std::string statement =
      "INSERT WITH SCHEMA EVOLUTION INTO bronze BY NAME SELECT * FROM STREAM read_files('memory://" + name_ +
      "', format => 'json')";
  Write("a.json", 0, 2);
  ASSERT_OK_AND_ASSIGN(auto runner, OpenRunner(statement));
  EXPECT_EQ(RowsOut(*runner), 2);
  ASSERT_OK(folder_->Put("b.json", "{\"id\": 2, \"v\": \"v2\", \"flag\": true, \"score\": 1.5}\n"));
  Status stopped = runner->RunBatch().status();
  EXPECT_EQ(stopped.code(), ErrorCode::kInvalidArgument) << stopped.ToString();
  for (const char* expected : {"flag BOOLEAN, score DOUBLE", "b.json", "addNewColumns", "run it again"}) {
    EXPECT_NE(stopped.message().find(expected), std::string::npos) << stopped.ToString();
  }
  EXPECT_EQ(Counts(), std::make_pair(int64_t{2}, int64_t{2}));

  runner.reset();
  ASSERT_OK_AND_ASSIGN(runner, OpenRunner(statement));
  EXPECT_EQ(RowsOut(*runner), 1);
  EXPECT_EQ(basin::testing::TwoCounts(*session_,
                                      "SELECT count(*) FILTER (flag), (sum(score) * 2)::BIGINT FROM bronze"),
            std::make_pair(int64_t{1}, int64_t{3}));
  Write("c.json", 3, 1);  // without the new fields: NULL in them
  EXPECT_EQ(RowsOut(*runner), 1);
  EXPECT_EQ(Counts(), std::make_pair(int64_t{4}, int64_t{4}));
}

// failOnNewColumns stops the stream at such a file on every run, committing nothing.
TEST_F(FilesSourceTest, FailOnNewColumnsStopsEveryRun) {
  const std::string statement =
      Statement(", schema => 'id BIGINT, v STRING', schemaEvolutionMode => 'failOnNewColumns'");
  ASSERT_OK(folder_->Put("a.json", "{\"id\": 1, \"v\": \"a\", \"region\": \"eu\"}\n"));
  for (int run = 0; run < 2; run++) {
    ASSERT_OK_AND_ASSIGN(auto runner, OpenRunner(statement));
    Status stopped = runner->RunBatch().status();
    EXPECT_EQ(stopped.code(), ErrorCode::kInvalidArgument) << stopped.ToString();
    for (const char* expected : {"region VARCHAR", "failOnNewColumns"}) {
      EXPECT_NE(stopped.message().find(expected), std::string::npos) << stopped.ToString();
    }
  }
  EXPECT_EQ(Counts(), std::make_pair(int64_t{0}, int64_t{0}));
}

// rescue keeps the declared schema; unknown fields and values that are not of their
// column's type go to _rescued_data as JSON, so nothing is lost.
TEST_F(FilesSourceTest, RescueKeepsUnknownFieldsAndMisfitValues) {
  ASSERT_OK(session_->Execute("CREATE TABLE rescued (id BIGINT, v VARCHAR, _rescued_data VARCHAR)").status());
  ASSERT_OK(folder_->Put("a.json",
                         "{\"id\": 1, \"v\": \"a\"}\n"
                         "{\"id\": \"x\", \"v\": \"b\", \"tags\": [1, 2]}\n"
                         "{\"id\": 3, \"v\": \"c\", \"gone\": null}\n"));
  ASSERT_OK_AND_ASSIGN(
      auto runner, OpenRunner("INSERT INTO rescued SELECT * FROM STREAM read_files('memory://" + name_ +
                              "', format => 'json', schema => 'id BIGINT, v STRING', schemaEvolutionMode => "
                              "'rescue')"));
  EXPECT_EQ(RowsOut(*runner), 3);
  EXPECT_EQ(basin::testing::FirstColumn(*session_,
                                        "SELECT coalesce(id::VARCHAR, '-') || '|' || v || '|' || "
                                        "coalesce(_rescued_data, '-') FROM rescued ORDER BY v"),
            (std::vector<std::string>{"1|a|-", "-|b|{\"tags\":[1,2],\"id\":\"x\"}", "3|c|-"}));
}

// deadLetterTable: lines that are not JSON objects or do not fit the schema go to the
// dead-letter table with their file, line and text; the others reach the sink; a batch with
// more of them than maxDeadLetterFraction allows stops, committing nothing.
TEST_F(FilesSourceTest, MalformedLinesAreDeadLettered) {
  ASSERT_OK(folder_->Put("a.json",
                         "{\"id\": 1, \"v\": \"a\"}\n"
                         "not json\n"
                         "\n"
                         "[1, 2]\r\n"
                         "{\"id\": \"abc\", \"v\": \"b\"}\n"
                         "{\"id\": 2, \"v\": \"c\", \"extra\": 1}"));
  const std::string options = ", schema => 'id BIGINT, v STRING', deadLetterTable => 'files_dlq'";
  ASSERT_OK_AND_ASSIGN(auto runner, OpenRunner(Statement(options)));
  ExpectBatch(*runner, 2, 3);
  EXPECT_EQ(Counts(), std::make_pair(int64_t{2}, int64_t{2}));
  EXPECT_EQ(basin::testing::FirstColumn(
                *session_,
                "SELECT file || ':' || line || ':' || decode(value) || ':' || error || ':' || "
                "coalesce(topic, '-') || ':' || batch_id FROM files_dlq ORDER BY line"),
            (std::vector<std::string>{"a.json:2:not json:file a.json line 2: not valid JSON:-:0",
                                      "a.json:4:[1, 2]:file a.json line 4: not a JSON object:-:0",
                                      "a.json:5:{\"id\": \"abc\", \"v\": \"b\"}:file a.json line 5: column "
                                      "id: \"abc\" is not a BIGINT:-:0"}));

  // A new stream over both files: four bad lines of seven are more than 0.4 allows, so the
  // batch stops and commits nothing.
  runner.reset();
  checkpoint_ = NewMemoryObjectStore();
  ASSERT_OK(folder_->Put("b.json", "{\"id\": 3, \"v\": \"d\"}\n{\"id\": [3], \"v\": \"e\"}\n"));
  ASSERT_OK_AND_ASSIGN(runner, OpenRunner(Statement(options + ", maxDeadLetterFraction => 0.4")));
  Status stopped = runner->RunBatch().status();
  EXPECT_EQ(stopped.code(), ErrorCode::kInvalidArgument) << stopped.ToString();
  EXPECT_NE(stopped.message().find("4 of 7 records"), std::string::npos) << stopped.ToString();
  EXPECT_EQ(Counts(), std::make_pair(int64_t{2}, int64_t{2}));
  EXPECT_EQ(basin::testing::FirstColumn(*session_, "SELECT count(*) FROM files_dlq"),
            (std::vector<std::string>{"3"}));
}

// CSV files: the lines DuckDB's CSV reader cannot read with the schema go to the dead-letter
// table with their file, line and text; the batch reads the others.
TEST_F(FilesSourceTest, CsvLinesThatDoNotReadAreDeadLettered) {
  ASSERT_OK(folder_->Put("a.csv", "id,v\n1,a\nx,b\n3,c,extra\n4,d\n"));
  ASSERT_OK_AND_ASSIGN(
      auto runner, OpenRunner("INSERT INTO bronze SELECT id, v FROM STREAM read_files('memory://" + name_ +
                              "', format => 'csv', header => true, schema => 'id BIGINT, v "
                              "STRING', deadLetterTable => 'files_dlq')"));
  ExpectBatch(*runner, 2, 2);
  EXPECT_EQ(Counts(), std::make_pair(int64_t{2}, int64_t{2}));
  EXPECT_EQ(basin::testing::FirstColumn(
                *session_, "SELECT file || ':' || line || ':' || decode(value) FROM files_dlq ORDER BY line"),
            (std::vector<std::string>{"a.csv:3:x,b", "a.csv:4:3,c,extra"}));
  EXPECT_EQ(basin::testing::FirstColumn(
                *session_, "SELECT count(*) FROM files_dlq WHERE error LIKE '%Could not convert%'"),
            (std::vector<std::string>{"1"}));

  // A statement that reads one column skips the lines whose other columns do not convert,
  // as the dead letters have them, so no line is both written and dead-lettered.
  runner.reset();
  checkpoint_ = NewMemoryObjectStore();
  ASSERT_OK(session_->Execute("DELETE FROM bronze").status());
  ASSERT_OK(folder_->Put("a.csv", "id,n\n1,5\n2,x\n"));
  ASSERT_OK_AND_ASSIGN(
      runner, OpenRunner("INSERT INTO bronze (id) SELECT id FROM STREAM read_files('memory://" + name_ +
                         "', format => 'csv', header => true, schema => 'id BIGINT, n BIGINT', "
                         "deadLetterTable => 'numbers_dlq')"));
  EXPECT_EQ(RowsOut(*runner), 1);
  EXPECT_EQ(Counts(), std::make_pair(int64_t{1}, int64_t{1}));
  EXPECT_EQ(basin::testing::FirstColumn(*session_, "SELECT line FROM numbers_dlq"),
            (std::vector<std::string>{"3"}));
}

// Parquet files (with a declared schema): a file DuckDB cannot read goes to the dead-letter
// table whole (its path and the error); the batch reads the others.
TEST_F(FilesSourceTest, ParquetFilesThatDoNotReadAreDeadLettered) {
  testing::TempDir scratch;
  ASSERT_OK(session_
                ->Execute("COPY (SELECT range AS id, 'v' || range AS v FROM range(3)) TO '" + scratch.str() +
                          "/good.parquet'")
                .status());
  ASSERT_OK_AND_ASSIGN(auto local, OpenStoreAt(scratch.str()));
  ASSERT_OK_AND_ASSIGN(std::string good, local->Get("good.parquet"));
  ASSERT_OK(folder_->Put("a.parquet", good));
  ASSERT_OK(folder_->Put("b.parquet", "PAR1 this is not a Parquet file PAR1"));
  ASSERT_OK(folder_->Put("c.parquet", good));
  ASSERT_OK_AND_ASSIGN(
      auto runner, OpenRunner("INSERT INTO bronze SELECT id, v FROM STREAM read_files('memory://" + name_ +
                              "', format => 'parquet', schema => 'id BIGINT, v STRING', "
                              "deadLetterTable => 'files_dlq')"));
  ExpectBatch(*runner, 6, 1);
  EXPECT_EQ(basin::testing::FirstColumn(*session_,
                                        "SELECT file || ':' || coalesce(line::VARCHAR, '-') || ':' || "
                                        "coalesce(decode(value), '-') FROM files_dlq"),
            (std::vector<std::string>{"b.parquet:-:-"}));
}

TEST_F(FilesSourceTest, BadOptionsAreRefusedNamingThem) {
  Write("a.json", 0, 1);
  for (const auto& [statement, expected] : std::vector<std::pair<std::string, std::string>>{
           {"INSERT INTO bronze SELECT * FROM STREAM read_files('memory://" + name_ + "')", "format"},
           {Statement(", maxFilesPerTrigger => 0"), "maxFilesPerTrigger must be 1 or more"},
           {Statement(", maxBytesPerTrigger => 'lots'"), "maxBytesPerTrigger takes a size"},
           {Statement(", schemaEvolutionMode => 'merge'"), "schemaEvolutionMode must be"},
           {Statement(", maxDeadLetterFraction => 0.5"), "needs a deadLetterTable"},
           {"INSERT INTO bronze SELECT * FROM STREAM read_files('memory://" + name_ +
                "', format => 'csv', schema => 'id BIGINT', deadLetterTable => 'dlq', schemaEvolutionMode => "
                "'rescue')",
            "not both yet"},
           {"INSERT INTO bronze SELECT * FROM STREAM read_files('memory://" + name_ +
                "', format => 'parquet', deadLetterTable => 'dlq')",
            "needs schema"}}) {
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
