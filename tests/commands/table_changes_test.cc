#include "commands/table_changes.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "delta/commit_writer.h"
#include "maintenance_fixture.h"

namespace basin::commands {
namespace {

using testing::TableFixture;

// "version|change_type|count|" per (version, change type) of the feed, sorted.
Result<std::vector<std::string>> Summary(TableFixture& table, const std::string& root, int64_t start,
                                         std::optional<int64_t> end = std::nullopt) {
  std::shared_ptr<ObjectStore> store = table.store();
  if (root != table.root()) {
    ASSIGN_OR_RETURN(store, OpenLocalObjectStore(root));
  }
  ASSIGN_OR_RETURN(ChangesScan scan, TableChangesSql(table.conn(), store, root, start, end));
  auto rows =
      table.SortedRows("SELECT _commit_version, _change_type, count(*) FROM (" + scan.sql + ") GROUP BY ALL");
  return rows;
}

TEST(TableChangesTest, DerivesInsertsAndDeletesFromAddsAndRemoves) {
  TableFixture table;
  ASSERT_OK(table.Create({{"id", "long"}, {"name", "string"}}, {}, {{"delta.enableChangeDataFeed", "true"}},
                         delta::Protocol{1, 4, std::nullopt, std::nullopt}));
  ASSERT_OK(table.Append("SELECT i AS id, 'a' AS name FROM range(3) t(i)").status());     // v1
  ASSERT_OK(table.Append("SELECT i AS id, 'b' AS name FROM range(3, 5) t(i)").status());  // v2
  ASSERT_OK_AND_ASSIGN(auto v1, table.LoadVersion(1));
  ASSERT_OK_AND_ASSIGN(auto v2, table.Load());
  delta::Transaction txn(v2, table.Options());  // v3 deletes the rows of v1
  txn.Remove(delta::RemoveOf(v1->files[0]));
  ASSERT_OK(txn.Commit().status());

  ASSERT_OK_AND_ASSIGN(auto summary, Summary(table, table.root(), 0));
  EXPECT_EQ(summary, (std::vector<std::string>{"1|insert|3|", "2|insert|2|", "3|delete|3|"}));
  ASSERT_OK_AND_ASSIGN(summary, Summary(table, table.root(), 2, 2));
  EXPECT_EQ(summary, (std::vector<std::string>{"2|insert|2|"}));

  ASSERT_OK_AND_ASSIGN(ChangesScan scan, TableChangesSql(table.conn(), table.store(), table.root(), 3, 3));
  ASSERT_OK_AND_ASSIGN(auto result, table.conn().Query("SELECT * FROM (" + scan.sql + ") ORDER BY id"));
  EXPECT_EQ(result.column_names,
            (std::vector<std::string>{"id", "name", "_change_type", "_commit_version", "_commit_timestamp"}));
  EXPECT_EQ(result.column_types[3], "BIGINT");
  EXPECT_EQ(result.column_types[4], "TIMESTAMP WITH TIME ZONE");
  ASSERT_OK_AND_ASSIGN(
      auto stamps, table.SortedRows("SELECT DISTINCT epoch_ms(_commit_timestamp) FROM (" + scan.sql + ")"));
  // Without in-commit timestamps, a commit's time is its file's modification time.
  ASSERT_OK_AND_ASSIGN(ObjectInfo commit_file, table.store()->Head("_delta_log/00000000000000000003.json"));
  EXPECT_EQ(stamps, std::vector<std::string>{std::to_string(commit_file.modification_time_ms) + "|"});
  EXPECT_EQ(result.at(0, 1), "a");
}

TEST(TableChangesTest, ReadsChangeDataFilesWhenACommitHasThem) {
  TableFixture table;
  ASSERT_OK(table.Create({{"id", "long"}, {"day", "string"}}, {"day"},
                         {{"delta.enableChangeDataFeed", "true"}},
                         delta::Protocol{1, 4, std::nullopt, std::nullopt}));
  ASSERT_OK(table.Append("SELECT 1::BIGINT AS id, 'd1' AS day").status());  // v1
  // v2: an update of id 1 recorded as change data (pre- and post-image), in partition d1.
  const std::string cdc_key = "_change_data/day=d1/cdc-00000.parquet";
  std::filesystem::create_directories(std::filesystem::path(table.root()) / "_change_data" / "day=d1");
  ASSERT_OK(table.conn().Execute(
      "COPY (SELECT * FROM (VALUES (1::BIGINT, 'update_preimage'), (10::BIGINT, 'update_postimage')) "
      "t(id, _change_type)) TO " +
      engine::QuoteLiteral(*table.store()->LocalPath(cdc_key)) + " (FORMAT parquet)"));
  ASSERT_OK_AND_ASSIGN(auto cdc_info, table.store()->Head(cdc_key));
  std::vector<delta::Action> actions;
  actions.emplace_back(delta::MakeCommitInfo(table.clock(), "UPDATE", nlohmann::json::object()));
  actions.emplace_back(
      delta::CdcFile{cdc_key, {{"day", "d1"}}, static_cast<int64_t>(cdc_info.size_bytes), false});
  ASSERT_OK(delta::WriteCommit(*table.store(), 2, actions));

  ASSERT_OK_AND_ASSIGN(ChangesScan scan, TableChangesSql(table.conn(), table.store(), table.root(), 2, 2));
  ASSERT_OK_AND_ASSIGN(auto rows, table.SortedRows("SELECT id, day, _change_type FROM (" + scan.sql + ")"));
  EXPECT_EQ(rows, (std::vector<std::string>{"10|d1|update_postimage|", "1|d1|update_preimage|"}));
}

TEST(TableChangesTest, RefusesVersionsWithoutTheFeedAndBadRanges) {
  TableFixture table;
  ASSERT_OK(table.Create({{"id", "long"}, {"name", "string"}}));
  ASSERT_OK(table.Append("SELECT 1::BIGINT AS id, 'a' AS name").status());
  ASSERT_OK_AND_ASSIGN(auto v1, table.Load());
  delta::Transaction enable(v1, table.Options());  // v2 turns the feed on
  delta::Metadata metadata = v1->metadata;
  metadata.configuration["delta.enableChangeDataFeed"] = "true";
  enable.UpdateMetadata(metadata);
  enable.UpdateProtocol(delta::Protocol{1, 4, std::nullopt, std::nullopt});
  ASSERT_OK(enable.Commit().status());
  ASSERT_OK(table.Append("SELECT 2::BIGINT AS id, 'b' AS name").status());  // v3

  auto refused = TableChangesSql(table.conn(), table.store(), table.root(), 1, std::nullopt);
  ASSERT_ERROR_CODE(refused, kInvalidArgument);
  EXPECT_NE(refused.status().message().find("version 1"), std::string::npos) << refused.status().ToString();
  ASSERT_OK_AND_ASSIGN(auto summary, Summary(table, table.root(), 2));
  EXPECT_EQ(summary, (std::vector<std::string>{"3|insert|1|"}));
  ASSERT_ERROR_CODE(TableChangesSql(table.conn(), table.store(), table.root(), 3, 2), kInvalidArgument);
  ASSERT_ERROR_CODE(TableChangesSql(table.conn(), table.store(), table.root(), 2, 7), kNotFound);
}

TEST(TableChangesTest, SharedTableWithDeletionVectorChanges) {
  SKIP_WITHOUT_SHARED_TESTDATA(testdata);
  const std::string root = (testdata / "delta" / "delta-kernel-rs" / "cdf-table-with-dv").string();
  TableFixture table;
  // Every commit re-adds the same 10-row file with another DV: 8, 10, 6, 8, 9, 10 rows live.
  // v5's DV is not a subset of v4's: one row is deleted and two come back.
  ASSERT_OK_AND_ASSIGN(auto summary, Summary(table, root, 0));
  EXPECT_EQ(summary, (std::vector<std::string>{"0|insert|10|", "1|delete|2|", "2|insert|2|", "3|delete|4|",
                                               "4|insert|2|", "5|delete|1|", "5|insert|2|", "6|insert|1|"}));
}

TEST(TableChangesTest, SharedTableWithChangeDataFilesAndInCommitTimestamps) {
  SKIP_WITHOUT_SHARED_TESTDATA(testdata);
  const std::string root = (testdata / "delta" / "delta-rs" / "cdc_ict_table").string();
  TableFixture table;
  ASSERT_OK_AND_ASSIGN(auto summary, Summary(table, root, 0));
  EXPECT_EQ(summary, (std::vector<std::string>{"1|insert|4|", "2|delete|2|", "3|update_postimage|2|",
                                               "3|update_preimage|2|"}));
  ASSERT_OK_AND_ASSIGN(auto store, OpenLocalObjectStore(root));
  ASSERT_OK_AND_ASSIGN(ChangesScan scan, TableChangesSql(table.conn(), store, root, 1, 3));
  ASSERT_OK_AND_ASSIGN(auto rows,
                       table.SortedRows("SELECT _commit_version, epoch_ms(_commit_timestamp), name, "
                                        "birthyear, age, _change_type FROM (" +
                                        scan.sql + ") WHERE _commit_version <> 1"));
  EXPECT_EQ(rows, (std::vector<std::string>{"2|1783874212175|Dan|1995|14|delete|",
                                            "2|1783874212175|Dave|1995|22|delete|",
                                            "3|1783874213881|Kate|1995|36|update_preimage|",
                                            "3|1783874213881|Kate|1995|37|update_postimage|",
                                            "3|1783874213881|Steve|1986|40|update_preimage|",
                                            "3|1783874213881|Steve|1986|41|update_postimage|"}));
  ASSERT_OK_AND_ASSIGN(auto v1_stamp, table.SortedRows("SELECT DISTINCT epoch_ms(_commit_timestamp) FROM (" +
                                                       scan.sql + ") WHERE _commit_version = 1"));
  EXPECT_EQ(v1_stamp, std::vector<std::string>{"1683874206883|"});
}

}  // namespace
}  // namespace basin::commands
