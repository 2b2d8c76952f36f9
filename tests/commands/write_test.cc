#include "commands/write.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "commands/table_changes.h"
#include "commands/write_fixture.h"
#include "testing/interop.h"

namespace basin::commands {
namespace {

using nlohmann::json;
using testing::Field;

class WriteTest : public testing::WriteFixture {
 protected:
  // A table partitioned by `p` with files in p = 'a' (ids 1, 2) and p = 'b' (id 3).
  void CreatePartitioned(std::map<std::string, std::string> properties = {}) {
    Create({Field("id", "long"), Field("v", "string"), Field("p", "string")}, {"p"}, std::move(properties));
    ASSERT_OK(Insert("VALUES (1, 'x', 'a'), (2, 'y', 'a'), (3, 'z', 'b')"));
  }
};

TEST_F(WriteTest, AppendCommitsWriteWithMetrics) {
  Create({Field("id", "long"), Field("name", "string")});
  ASSERT_OK_AND_ASSIGN(CommandResult first, Insert("VALUES (1, 'a'), (2, 'b')"));
  EXPECT_EQ(first.commit.version, 1);
  EXPECT_EQ(first.metrics["numOutputRows"], 2);
  EXPECT_EQ(first.metrics["numFiles"], 1);
  EXPECT_GT(first.metrics["numOutputBytes"].get<int64_t>(), 0);
  delta::CommitSummary commit = LastCommit();
  EXPECT_EQ(commit.operation, "WRITE");
  EXPECT_EQ(commit.operation_parameters["mode"], "Append");
  EXPECT_EQ(commit.operation_parameters["partitionBy"], "[]");
  EXPECT_EQ(commit.operation_metrics["numOutputRows"], "2");
  EXPECT_EQ(commit.is_blind_append, true);
  ASSERT_OK(Insert("SELECT 3, 'c'"));
  // An empty insert commits no files.
  ASSERT_OK_AND_ASSIGN(CommandResult empty, Insert("SELECT 4, 'd' WHERE false"));
  EXPECT_EQ(empty.metrics["numFiles"], 0);
  EXPECT_EQ(Lines("SELECT * FROM t ORDER BY id"), (std::vector<std::string>{"1|a", "2|b", "3|c"}));
  ASSERT_INTEROP(Root(), 3);
}

TEST_F(WriteTest, OverwriteReplacesEveryRow) {
  CreatePartitioned();
  ASSERT_OK_AND_ASSIGN(CommandResult result, Insert("VALUES (9, 'n', 'c')", WriteMode::kOverwrite));
  EXPECT_EQ(result.metrics["numRemovedFiles"], 2);
  EXPECT_EQ(result.metrics["numDeletedRows"], 3);
  EXPECT_EQ(LastCommit().operation_parameters["mode"], "Overwrite");
  EXPECT_EQ(LastCommit().operation_parameters["partitionBy"], "[\"p\"]");
  EXPECT_EQ(Lines("SELECT * FROM t"), std::vector<std::string>{"9|n|c"});
  ASSERT_INTEROP(Root(), 1);
}

TEST_F(WriteTest, DynamicPartitionOverwriteReplacesOnlyWrittenPartitions) {
  CreatePartitioned();
  ASSERT_OK_AND_ASSIGN(CommandResult result, Insert("VALUES (10, 'new', 'a'), (11, 'new', 'c')",
                                                    WriteMode::kDynamicPartitionOverwrite));
  EXPECT_EQ(result.metrics["numRemovedFiles"], 1);
  EXPECT_EQ(LastCommit().operation_parameters["dynamicPartitionOverwrite"], "true");
  EXPECT_EQ(Lines("SELECT id, p FROM t ORDER BY id"), (std::vector<std::string>{"3|b", "10|a", "11|c"}));
  ASSERT_INTEROP(Root(), 3);
}

TEST_F(WriteTest, ReplaceWhereOnPartitionsRemovesWholeFiles) {
  CreatePartitioned();
  ASSERT_OK_AND_ASSIGN(CommandResult result,
                       Insert("VALUES (20, 'r', 'a')", WriteMode::kReplaceWhere, {}, "p = 'a'"));
  EXPECT_EQ(result.metrics["numRemovedFiles"], 1);
  EXPECT_EQ(result.metrics["numCopiedRows"], 0);
  EXPECT_EQ(result.metrics["numDeletedRows"], 2);
  EXPECT_EQ(LastCommit().operation_parameters["predicate"], "[\"p = 'a'\"]");
  EXPECT_EQ(Lines("SELECT id, p FROM t ORDER BY id"), (std::vector<std::string>{"3|b", "20|a"}));
  // A new row outside the predicate fails, naming it; nothing is committed.
  int64_t version = Load()->version;
  EXPECT_ERROR_WITH(Insert("VALUES (21, 'r', 'b')", WriteMode::kReplaceWhere, {}, "p = 'a'"),
                    kInvalidArgument, "the condition (p = 'a') violated by row with values: p => b");
  EXPECT_EQ(Load()->version, version);
  ASSERT_INTEROP(Root(), 2);
}

TEST_F(WriteTest, ReplaceWhereOnDataColumnsRewritesPartlyMatchingFiles) {
  Create({Field("id", "long"), Field("v", "string")});
  ASSERT_OK(Insert("SELECT range, 'old' FROM range(1, 11)"));   // file 1: 1..10
  ASSERT_OK(Insert("SELECT range, 'old' FROM range(20, 25)"));  // file 2: 20..24, untouched
  ASSERT_OK(Insert("SELECT range, 'old' FROM range(5, 7)"));    // file 3: 5, 6, wholly replaced
  ASSERT_OK_AND_ASSIGN(CommandResult result, Insert("SELECT range, 'new' FROM range(5, 8)",
                                                    WriteMode::kReplaceWhere, {}, "id BETWEEN 5 AND 7"));
  EXPECT_EQ(result.metrics["numRemovedFiles"], 2);
  EXPECT_EQ(result.metrics["numDeletedRows"], 5);
  EXPECT_EQ(result.metrics["numCopiedRows"], 7);
  EXPECT_EQ(result.metrics["numOutputRows"], 3);
  EXPECT_EQ(Lines("SELECT v, count(*), sum(id) FROM t GROUP BY v ORDER BY v"),
            (std::vector<std::string>{"new|3|18", "old|12|147"}));
  ASSERT_INTEROP(Root(), 15);
}

TEST_F(WriteTest, ReplaceWhereOnAChangeFeedTableRecordsOnlyTheReplacedRows) {
  Create({Field("id", "long"), Field("v", "string")}, {}, {{"delta.enableChangeDataFeed", "true"}});
  ASSERT_OK(Insert("SELECT range, 'old' FROM range(1, 6)"));
  ASSERT_OK_AND_ASSIGN(CommandResult result,
                       Insert("VALUES (2, 'new')", WriteMode::kReplaceWhere, {}, "id IN (2, 3)"));
  ASSERT_OK_AND_ASSIGN(ChangesScan changes, TableChangesSql(*conn_, Store(), Root(), result.commit.version,
                                                            result.commit.version));
  ASSERT_OK_AND_ASSIGN(auto rows, conn_->Query("SELECT _change_type, id, v FROM (" + changes.sql +
                                               ") ORDER BY _change_type, id"));
  std::vector<std::string> lines;
  for (const auto& row : rows.rows) lines.push_back(*row[0] + "|" + *row[1] + "|" + *row[2]);
  EXPECT_EQ(lines, (std::vector<std::string>{"delete|2|old", "delete|3|old", "insert|2|new"}));
  EXPECT_EQ(Lines("SELECT id, v FROM t ORDER BY id"),
            (std::vector<std::string>{"1|old", "2|new", "4|old", "5|old"}));
  ASSERT_INTEROP(Root(), 4);
}

TEST_F(WriteTest, AppendOnlyTablesRefuseOverwrites) {
  CreatePartitioned({{"delta.appendOnly", "true"}});
  EXPECT_ERROR_WITH(Insert("VALUES (1, 'x', 'a')", WriteMode::kOverwrite), kInvalidArgument, "append-only");
  EXPECT_ERROR_WITH(Insert("VALUES (1, 'x', 'a')", WriteMode::kReplaceWhere, {}, "p = 'a'"), kInvalidArgument,
                    "delta.appendOnly");
  ASSERT_OK(Insert("VALUES (4, 'w', 'b')"));
  EXPECT_EQ(Lines("SELECT count(*) FROM t"), std::vector<std::string>{"4"});
}

TEST_F(WriteTest, TxnIdMakesRetriesIdempotent) {
  Create({Field("id", "long")});
  ctx_.txn_id = delta::SetTransaction{"loader", 1, std::nullopt};
  ASSERT_OK_AND_ASSIGN(CommandResult first, Insert("VALUES (1)"));
  EXPECT_FALSE(first.commit.skipped);
  EXPECT_TRUE(first.notices.empty());
  ASSERT_OK_AND_ASSIGN(CommandResult again, Insert("VALUES (1)"));
  EXPECT_TRUE(again.commit.skipped);
  EXPECT_EQ(again.commit.version, 1);
  ASSERT_EQ(again.notices.size(), 1u);
  EXPECT_NE(again.notices[0].find("skipped: "), std::string::npos);
  EXPECT_NE(again.notices[0].find("already has version 1"), std::string::npos) << again.notices[0];
  ctx_.txn_id->version = 2;
  ASSERT_OK(Insert("VALUES (2)"));
  EXPECT_EQ(Load()->set_transactions.at("loader").version, 2);
  EXPECT_EQ(Lines("SELECT id FROM t ORDER BY id"), (std::vector<std::string>{"1", "2"}));
}

TEST_F(WriteTest, BlindAppendsDoNotConflictButOverwritesDo) {
  Create({Field("id", "long")});
  ctx_.txn_options.seed = 0;  // distinct commitInfo.txnIds: a fixed seed would make them one writer
  auto base = Load();
  WriteRequest append;
  append.source_sql = "VALUES (1)";
  ASSERT_OK(Write(ctx_, base, append));
  append.source_sql = "VALUES (2)";
  ASSERT_OK(Write(ctx_, base, append));  // from the same stale snapshot: still fine
  WriteRequest overwrite;
  overwrite.source_sql = "VALUES (3)";
  overwrite.mode = WriteMode::kOverwrite;
  ctx_.txn_options.max_attempts = 2;
  // Blind appends are serialized after the overwrite's read: it still commits...
  ASSERT_OK(Write(ctx_, base, overwrite));
  EXPECT_EQ(Lines("SELECT id FROM t ORDER BY id"), (std::vector<std::string>{"1", "2", "3"}));
  // ... but an overwrite whose files were removed by a concurrent overwrite conflicts.
  auto stale = Load();
  ASSERT_OK(Write(ctx_, stale, overwrite));
  EXPECT_ERROR_WITH(Write(ctx_, stale, overwrite), kConflict, "");
  EXPECT_EQ(Lines("SELECT id FROM t ORDER BY id"), (std::vector<std::string>{"3"}));
}

TEST_F(WriteTest, ReadsBackSparkWrittenTableAfterAppend) {
  SKIP_WITHOUT_SHARED_TESTDATA(testdata);
  const auto source = testdata / "delta" / "dat" / "basic_append" / "delta";
  if (!std::filesystem::exists(source)) GTEST_SKIP() << source << " not found";
  std::filesystem::copy(source, Root(), std::filesystem::copy_options::recursive);
  const int64_t before = std::stoll(*Query("SELECT count(*) FROM t")[0][0]);
  auto snapshot = Load();
  std::string values = "SELECT ";
  for (size_t i = 0; i < snapshot->schema.fields.size(); i++) {
    values += std::string(i > 0 ? ", " : "") + "NULL";
  }
  ASSERT_OK(Insert(values));
  EXPECT_EQ(std::stoll(*Query("SELECT count(*) FROM t")[0][0]), before + 1);
}

}  // namespace
}  // namespace basin::commands
