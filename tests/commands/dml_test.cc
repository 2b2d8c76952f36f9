#include "commands/dml.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <set>

#include "commands/dml_test_util.h"
#include "commands/table_changes.h"
#include "delta/deletion_vector.h"
#include "testing/interop.h"

namespace basin::commands {
namespace {

using testing::Column;
using testing::DmlFixture;
using Rows = std::vector<std::vector<std::optional<std::string>>>;

const std::vector<Column> kColumns = {{"id", "long"}, {"name", "string"}, {"p", "integer"}};

using K = MergeClause::Kind;

MergeClause Clause(K kind, std::string condition = "") {
  MergeClause c;
  c.kind = kind;
  c.condition = std::move(condition);
  return c;
}

MergeClause StarClause(K kind) {
  MergeClause c = Clause(kind);
  c.star = true;
  return c;
}

MergeClause UpdateClause(std::vector<Assignment> assignments, std::string condition = "") {
  MergeClause c = Clause(K::kMatchedUpdate, std::move(condition));
  c.assignments = std::move(assignments);
  return c;
}

MergeClause InsertClause(std::vector<std::string> columns, std::vector<std::string> values) {
  MergeClause c = Clause(K::kNotMatchedInsert);
  c.insert_columns = std::move(columns);
  c.insert_values = std::move(values);
  return c;
}

// MERGE INTO the table AS t USING (`source_sql`) AS s ON `on`.
MergeRequest MergeFrom(std::string source_sql, std::vector<MergeClause> clauses,
                       std::string on = "t.id = s.id") {
  MergeRequest request;
  request.source_sql = std::move(source_sql);
  request.source_alias = "s";
  request.target_alias = "t";
  request.on = std::move(on);
  request.clauses = std::move(clauses);
  return request;
}

UpdateRequest UpdateWhere(std::vector<Assignment> assignments, std::string where = "") {
  UpdateRequest request;
  request.assignments = std::move(assignments);
  request.where = std::move(where);
  return request;
}

DeleteRequest DeleteWhere(std::string where) {
  DeleteRequest request;
  request.where = std::move(where);
  return request;
}

// The actions of commit `version` of the table at `root`, one JSON object each.
std::vector<nlohmann::json> CommitActions(const std::string& root, int64_t version) {
  std::string name = std::to_string(version);
  name = std::string(20 - name.size(), '0') + name + ".json";
  std::ifstream in(std::filesystem::path(root) / "_delta_log" / name);
  std::vector<nlohmann::json> actions;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) actions.push_back(nlohmann::json::parse(line, nullptr, false));
  }
  return actions;
}

// How many of the commit's actions are of `kind` ("add", "remove", "cdc", ...).
int CountActions(const std::vector<nlohmann::json>& actions, const std::string& kind) {
  int n = 0;
  for (const auto& action : actions) n += action.contains(kind) ? 1 : 0;
  return n;
}

// Runs each test on a deletion-vector table and on a copy-on-write one.
class DmlModeTest : public ::testing::TestWithParam<bool> {
 protected:
  bool dv() const { return GetParam(); }
  std::map<std::string, std::string> Properties(std::map<std::string, std::string> extra = {}) const {
    extra["delta.enableDeletionVectors"] = dv() ? "true" : "false";
    return extra;
  }
  // Table `name` with ids 0..29 in three files (p = id / 10).
  void CreateThreeFiles(const std::string& name, std::map<std::string, std::string> extra = {},
                        std::vector<std::string> partitions = {}) {
    ASSERT_OK(f.Create(name, kColumns, partitions, Properties(std::move(extra))));
    for (int i = 0; i < 3; i++) {
      ASSERT_OK(f.Append(
          name, "SELECT range AS id, 'n' || range AS name, CAST(range // 10 AS INTEGER) AS p FROM range(" +
                    std::to_string(i * 10) + ", " + std::to_string(i * 10 + 10) + ")"));
    }
  }
  // Table `name` with ids 0..4 and doubled GENERATED ALWAYS AS (id * 2).
  void CreateGenerated(const std::string& name) {
    std::vector<Column> columns = {{"id", "long", false}, {"doubled", "long"}};
    columns[1].metadata = {{"delta.generationExpression", "id * 2"}};
    ASSERT_OK(f.Create(name, columns, {}, Properties()));
    ASSERT_OK(f.Append(name, "SELECT range AS id, range * 2 AS doubled FROM range(5)"));
  }
  Rows Expect(const std::string& sql) {
    auto r = f.conn().Query(sql + " ORDER BY ALL");
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r->rows : Rows{};
  }
  int CountWithDv(const delta::Snapshot& s) {
    int n = 0;
    for (const auto& add : s.files) n += add.deletion_vector.has_value() ? 1 : 0;
    return n;
  }

  DmlFixture f;
};

TEST_P(DmlModeTest, DeleteRemovesMatchingRows) {
  CreateThreeFiles("t");
  ASSERT_OK_AND_ASSIGN(auto snapshot, f.Load("t"));
  ASSERT_OK_AND_ASSIGN(CommandResult result, Delete(f.Context(), snapshot, DeleteWhere("id % 3 = 0")));
  EXPECT_EQ(result.commit.version, 4);
  EXPECT_EQ(result.metrics["numDeletedRows"], 10);
  ASSERT_OK_AND_ASSIGN(Rows rows, f.Rows("t"));
  EXPECT_EQ(
      rows,
      Expect("SELECT range, 'n' || range, CAST(range // 10 AS INTEGER) FROM range(30) WHERE range % 3 <> 0"));

  ASSERT_OK_AND_ASSIGN(auto after, f.Load("t"));
  if (dv()) {
    ASSERT_EQ(after->files.size(), 3u);
    EXPECT_EQ(CountWithDv(*after), 3);
    EXPECT_EQ(result.metrics["numDeletionVectorsAdded"], 3);
    EXPECT_EQ(result.metrics["numCopiedRows"], 0);
    for (const auto& add : after->files) {
      ASSERT_TRUE(add.stats.has_value());
      EXPECT_NE(add.stats->find("\"tightBounds\":false"), std::string::npos) << *add.stats;
      EXPECT_NE(add.stats->find("\"numRecords\":10"), std::string::npos) << *add.stats;
    }
  } else {
    EXPECT_EQ(CountWithDv(*after), 0);
    EXPECT_EQ(after->files.size(), 1u);  // the kept rows of all three, written together
    EXPECT_EQ(result.metrics["numRemovedFiles"], 3);
    EXPECT_EQ(result.metrics["numCopiedRows"], 20);
  }
  EXPECT_EQ(after->num_records(), 20);
  ASSERT_INTEROP(f.Root("t"), 20);
}

TEST_P(DmlModeTest, DeleteWithoutWhereEmptiesTable) {
  CreateThreeFiles("t");
  ASSERT_OK_AND_ASSIGN(auto snapshot, f.Load("t"));
  ASSERT_OK_AND_ASSIGN(CommandResult result, Delete(f.Context(), snapshot, DeleteRequest{}));
  EXPECT_EQ(result.metrics["numDeletedRows"], 30);
  EXPECT_EQ(result.metrics["numRemovedFiles"], 3);
  EXPECT_EQ(result.metrics["numAddedFiles"], 0);
  ASSERT_OK_AND_ASSIGN(auto after, f.Load("t"));
  EXPECT_TRUE(after->files.empty());
}

TEST_P(DmlModeTest, DeleteMatchingNothingCommitsNoFileChange) {
  CreateThreeFiles("t");
  ASSERT_OK_AND_ASSIGN(auto snapshot, f.Load("t"));
  ASSERT_OK_AND_ASSIGN(CommandResult result, Delete(f.Context(), snapshot, DeleteWhere("id > 100")));
  EXPECT_EQ(result.metrics["numDeletedRows"], 0);
  ASSERT_OK_AND_ASSIGN(auto after, f.Load("t"));
  EXPECT_EQ(after->version, 4);
  EXPECT_EQ(after->files.size(), 3u);
  EXPECT_EQ(CountWithDv(*after), 0);
}

TEST_P(DmlModeTest, DeleteReadsOnlyFilesThatMayMatch) {
  CreateThreeFiles("t", {}, {"p"});
  ASSERT_OK_AND_ASSIGN(auto snapshot, f.Load("t"));
  DeleteRequest request;
  request.where = "t.p = 1 AND t.id % 2 = 0";
  request.target_alias = "t";
  ASSERT_OK_AND_ASSIGN(CommandResult result, Delete(f.Context(), snapshot, request));
  EXPECT_EQ(result.metrics["numDeletedRows"], 5);
  ASSERT_OK_AND_ASSIGN(auto after, f.Load("t"));
  // The files of partitions 0 and 2 are untouched: same actions, same replay keys.
  std::set<std::string> before_keys, after_keys;
  for (const auto& add : snapshot->files) before_keys.insert(add.ReplayKey());
  for (const auto& add : after->files) after_keys.insert(add.ReplayKey());
  int kept = 0;
  for (const auto& key : before_keys) kept += after_keys.count(key);
  EXPECT_EQ(kept, 2);
  ASSERT_OK_AND_ASSIGN(Rows rows, f.Rows("t"));
  EXPECT_EQ(rows.size(), 25u);
}

TEST_P(DmlModeTest, UpdateChangesMatchingRows) {
  CreateThreeFiles("t");
  ASSERT_OK_AND_ASSIGN(auto snapshot, f.Load("t"));
  UpdateRequest request =
      UpdateWhere({{"name", "upper(name) || id"}, {"p", "p + 100"}}, "id % 2 = 1 AND id < 15");
  ASSERT_OK_AND_ASSIGN(CommandResult result, Update(f.Context(), snapshot, request));
  EXPECT_EQ(result.metrics["numUpdatedRows"], 7);
  ASSERT_OK_AND_ASSIGN(Rows rows, f.Rows("t"));
  EXPECT_EQ(
      rows,
      Expect("SELECT range, CASE WHEN range % 2 = 1 AND range < 15 THEN 'N' || range || range ELSE 'n' || "
             "range END, CAST(range // 10 AS INTEGER) + CASE WHEN range % 2 = 1 AND range < 15 THEN 100 "
             "ELSE 0 END FROM range(30)"));
  ASSERT_OK_AND_ASSIGN(auto after, f.Load("t"));
  if (dv()) {
    EXPECT_EQ(CountWithDv(*after), 2);   // files 0 and 1 were touched
    EXPECT_EQ(after->files.size(), 4u);  // plus one file of updated rows
  } else {
    EXPECT_EQ(CountWithDv(*after), 0);
    EXPECT_EQ(result.metrics["numCopiedRows"], 13);
  }
  ASSERT_INTEROP(f.Root("t"), 30);
}

TEST_P(DmlModeTest, UpdateMovesRowsBetweenPartitions) {
  CreateThreeFiles("t", {}, {"p"});
  ASSERT_OK_AND_ASSIGN(auto snapshot, f.Load("t"));
  UpdateRequest request = UpdateWhere({{"p", "7"}}, "id >= 25");
  ASSERT_OK(Update(f.Context(), snapshot, request).status());
  ASSERT_OK_AND_ASSIGN(auto after, f.Load("t"));
  bool has_partition_7 = false;
  for (const auto& add : after->files) has_partition_7 |= add.partition_values.at("p") == "7";
  EXPECT_TRUE(has_partition_7);
  ASSERT_OK_AND_ASSIGN(std::string scan, f.ScanSql("t"));
  ASSERT_OK_AND_ASSIGN(auto counted,
                       f.conn().Query("SELECT p, count(*) FROM " + scan + " GROUP BY p ORDER BY p"));
  ASSERT_EQ(counted.row_count(), 4u);
  EXPECT_EQ(counted.at(3, 0), "7");
  EXPECT_EQ(counted.at(3, 1), "5");
}

TEST_P(DmlModeTest, UpdateOfUnknownColumnIsInvalid) {
  CreateThreeFiles("t");
  ASSERT_OK_AND_ASSIGN(auto snapshot, f.Load("t"));
  UpdateRequest request = UpdateWhere({{"nope", "1"}});
  ASSERT_ERROR_CODE(Update(f.Context(), snapshot, request).status(), kInvalidArgument);
}

TEST_P(DmlModeTest, UpdateRecomputesGeneratedColumnsAndChecksNotNull) {
  CreateGenerated("g");
  ASSERT_OK_AND_ASSIGN(auto snapshot, f.Load("g"));
  UpdateRequest request = UpdateWhere({{"id", "id + 10"}}, "id < 2");
  ASSERT_OK(Update(f.Context(), snapshot, request).status());
  ASSERT_OK_AND_ASSIGN(Rows rows, f.Rows("g"));
  EXPECT_EQ(rows, Expect("SELECT x, x * 2 FROM (VALUES (2), (3), (4), (10), (11)) v(x)"));

  ASSERT_OK_AND_ASSIGN(snapshot, f.Load("g"));
  request.assignments = {{"id", "NULL"}};
  request.where = "id = 3";
  ASSERT_ERROR_CODE(Update(f.Context(), snapshot, request).status(), kInvalidArgument);
  ASSERT_OK_AND_ASSIGN(Rows unchanged, f.Rows("g"));
  EXPECT_EQ(unchanged, rows);
}

// Delta's rule for generated columns: an assigned value must equal the column's expression
// over the row's new values, else the command fails naming the table and column and
// commits nothing. Unassigned, the column is recomputed.
TEST_P(DmlModeTest, AssignedGeneratedColumnsMustEqualTheirExpression) {
  CreateGenerated("g");
  using Run = std::function<Result<CommandResult>(std::shared_ptr<const delta::Snapshot>)>;
  auto update = [this](std::vector<Assignment> assignments, std::string where) -> Run {
    return [this, request = UpdateWhere(std::move(assignments), std::move(where))](auto snapshot) {
      return Update(f.Context(), std::move(snapshot), request);
    };
  };
  auto merge = [this](std::string source, std::vector<MergeClause> clauses) -> Run {
    return [this, source, clauses](auto snapshot) {
      return Merge(f.Context(), std::move(snapshot), MergeFrom(source, clauses));
    };
  };
  struct Case {
    const char* what;
    Run run;
    bool accepted;
  };
  const std::vector<Case> cases = {
      {"UPDATE to the expression's value", update({{"doubled", "id * 2"}}, "id = 1"), true},
      {"UPDATE of the column and its input",
       update({{"id", "id + 10"}, {"doubled", "(id + 10) * 2"}}, "id = 0"), true},
      {"UPDATE to another value", update({{"doubled", "7"}}, "id = 3"), false},
      {"UPDATE keeping a stale value", update({{"id", "id + 100"}, {"doubled", "doubled"}}, "id = 2"), false},
      {"MERGE UPDATE SET another value", merge("SELECT 4 AS id", {UpdateClause({{"doubled", "0"}})}), false},
      {"MERGE INSERT of another value",
       merge("SELECT 50 AS id", {InsertClause({"id", "doubled"}, {"s.id", "s.id"})}), false},
      {"MERGE INSERT * of another value",
       merge("SELECT 50 AS id, 1 AS doubled", {StarClause(K::kNotMatchedInsert)}), false},
      // Rows of the UPDATE clause, which does not assign it, have it recomputed.
      {"MERGE INSERT of the expression's value beside an UPDATE",
       merge("SELECT 4 AS id UNION ALL SELECT 60",
             {UpdateClause({{"id", "s.id + 1000"}}), InsertClause({"id", "doubled"}, {"s.id", "s.id * 2"})}),
       true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    ASSERT_OK_AND_ASSIGN(auto snapshot, f.Load("g"));
    auto result = c.run(snapshot);
    ASSERT_OK_AND_ASSIGN(auto after, f.Load("g"));
    if (c.accepted) {
      ASSERT_OK(result.status());
      EXPECT_EQ(after->version, snapshot->version + 1);
      continue;
    }
    ASSERT_ERROR_CODE(result.status(), kInvalidArgument);
    EXPECT_NE(result.status().message().find("column doubled is generated as (id * 2)"), std::string::npos)
        << result.status().ToString();
    EXPECT_NE(result.status().message().find(f.Root("g")), std::string::npos) << result.status().ToString();
    EXPECT_EQ(after->version, snapshot->version);
  }
  ASSERT_OK_AND_ASSIGN(Rows rows, f.Rows("g"));
  EXPECT_EQ(rows, Expect("SELECT x, x * 2 FROM (VALUES (1), (2), (3), (10), (1004), (60)) v(x)"));
  ASSERT_INTEROP(f.Root("g"), 6);
}

// commitInfo.operationMetrics as Delta writes them: every value a string.
TEST_P(DmlModeTest, CommitMetricsAreStrings) {
  CreateThreeFiles("t");
  ASSERT_OK_AND_ASSIGN(auto snapshot, f.Load("t"));
  ASSERT_OK(Delete(f.Context(), snapshot, DeleteWhere("id % 3 = 0")).status());
  ASSERT_OK_AND_ASSIGN(snapshot, f.Load("t"));
  UpdateRequest update = UpdateWhere({{"name", "'u'"}}, "id < 5");
  ASSERT_OK(Update(f.Context(), snapshot, update).status());
  ASSERT_OK_AND_ASSIGN(snapshot, f.Load("t"));
  ASSERT_OK(Merge(f.Context(), snapshot,
                  MergeFrom("SELECT range AS id, 'm' AS name, 0 AS p FROM range(25, 35)",
                            {StarClause(K::kMatchedUpdate), StarClause(K::kNotMatchedInsert)}))
                .status());
  const std::map<int64_t, std::pair<std::string, std::string>> expected = {
      {4, {"numDeletedRows", "10"}}, {5, {"numUpdatedRows", "3"}}, {6, {"numTargetRowsInserted", "6"}}};
  for (const auto& [version, metric] : expected) {
    SCOPED_TRACE("version " + std::to_string(version));
    nlohmann::json metrics;
    for (const auto& action : CommitActions(f.Root("t"), version)) {
      if (action.contains("commitInfo")) metrics = action["commitInfo"]["operationMetrics"];
    }
    ASSERT_TRUE(metrics.is_object() && !metrics.empty()) << metrics;
    for (const auto& [key, value] : metrics.items()) EXPECT_TRUE(value.is_string()) << key << ": " << value;
    EXPECT_EQ(metrics[metric.first], metric.second);
  }
}

// A DELETE true for every row of a file (no WHERE, or one over partition columns its
// partition values satisfy) removes the file in metadata only: no read, no DV, no rewrite.
TEST_P(DmlModeTest, DeleteOfWholeFilesIsMetadataOnly) {
  CreateThreeFiles("t", {}, {"p"});
  ASSERT_OK_AND_ASSIGN(auto snapshot, f.Load("t"));
  // Partition 1's data file is gone from disk: only a metadata delete can succeed.
  for (const auto& add : snapshot->files) {
    if (add.partition_values.at("p") == "1") {
      ASSERT_TRUE(std::filesystem::remove(f.Root("t") + "/" + add.path));
    }
  }
  DeleteRequest request = DeleteWhere("t.p = 1 OR t.p IS NULL");
  request.target_alias = "t";
  ASSERT_OK_AND_ASSIGN(CommandResult result, Delete(f.Context(), snapshot, request));
  EXPECT_EQ(result.metrics["numDeletedRows"], 10);
  EXPECT_EQ(result.metrics["numRemovedFiles"], 1);
  EXPECT_EQ(result.metrics["numAddedFiles"], 0);
  EXPECT_EQ(result.metrics["numDeletionVectorsAdded"], 0);
  auto actions = CommitActions(f.Root("t"), result.commit.version);
  EXPECT_EQ(CountActions(actions, "add"), 0);
  ASSERT_EQ(CountActions(actions, "remove"), 1);
  for (const auto& action : actions) {
    if (action.contains("remove")) {
      EXPECT_EQ(action["remove"]["dataChange"], true);
    }
  }
  ASSERT_OK_AND_ASSIGN(Rows rows, f.Rows("t"));
  EXPECT_EQ(rows.size(), 20u);

  // Without WHERE every file goes whole, counting only the live rows of one with a DV.
  ASSERT_OK_AND_ASSIGN(snapshot, f.Load("t"));
  ASSERT_OK(Delete(f.Context(), snapshot, DeleteWhere("id = 5")).status());
  ASSERT_OK_AND_ASSIGN(snapshot, f.Load("t"));
  ASSERT_OK_AND_ASSIGN(result, Delete(f.Context(), snapshot, DeleteRequest{}));
  EXPECT_EQ(result.metrics["numDeletedRows"], 19);
  EXPECT_EQ(result.metrics["numRemovedFiles"], 2);
  EXPECT_EQ(CountActions(CommitActions(f.Root("t"), result.commit.version), "add"), 0);
  ASSERT_OK_AND_ASSIGN(auto after, f.Load("t"));
  EXPECT_TRUE(after->files.empty());
  ASSERT_INTEROP(f.Root("t"), 0);
}

// With the change feed, a commit removing only whole files writes no change data (readers
// derive its deletes from the removes); one that also reads a file (here one without
// stats, so its rows must be counted) writes every deleted row as change data, since a
// commit with cdc files is read from them alone.
TEST_P(DmlModeTest, ChangeDataFeedOfWholeFileDeletes) {
  CreateThreeFiles("t", {{"delta.enableChangeDataFeed", "true"}}, {"p"});
  ASSERT_OK(f.Append("t", "SELECT 100 AS id, 'x' AS name, 2 AS p", /*with_stats=*/false));
  ASSERT_OK_AND_ASSIGN(auto snapshot, f.Load("t"));
  ASSERT_OK_AND_ASSIGN(CommandResult pure, Delete(f.Context(), snapshot, DeleteWhere("p = 0")));
  auto actions = CommitActions(f.Root("t"), pure.commit.version);
  EXPECT_EQ(CountActions(actions, "cdc"), 0);
  EXPECT_EQ(CountActions(actions, "add"), 0);

  ASSERT_OK_AND_ASSIGN(snapshot, f.Load("t"));
  ASSERT_OK_AND_ASSIGN(CommandResult mixed, Delete(f.Context(), snapshot, DeleteWhere("p = 2")));
  EXPECT_EQ(mixed.metrics["numDeletedRows"], 11);
  EXPECT_EQ(mixed.metrics["numRemovedFiles"], 2);
  actions = CommitActions(f.Root("t"), mixed.commit.version);
  EXPECT_GE(CountActions(actions, "cdc"), 1);
  EXPECT_EQ(CountActions(actions, "add"), 0);

  ASSERT_OK_AND_ASSIGN(auto store, f.Store("t"));
  ASSERT_OK_AND_ASSIGN(ChangesScan changes,
                       TableChangesSql(f.conn(), store, f.Root("t"), pure.commit.version, std::nullopt));
  ASSERT_OK_AND_ASSIGN(auto feed, f.conn().Query("SELECT _commit_version, _change_type, id FROM (" +
                                                 changes.sql + ") ORDER BY ALL"));
  EXPECT_EQ(feed.rows, Expect("SELECT " + std::to_string(pure.commit.version) +
                              ", 'delete', range FROM range(10) UNION ALL SELECT " +
                              std::to_string(mixed.commit.version) +
                              ", 'delete', range FROM range(20, 30) UNION ALL SELECT " +
                              std::to_string(mixed.commit.version) + ", 'delete', 100"));
}

// MERGE with every clause kind, several of a kind, against DuckDB's own MERGE INTO on the
// same rows.
TEST_P(DmlModeTest, MergeMatchesDuckDb) {
  CreateThreeFiles("t");
  const std::string source =
      "SELECT range AS id, 's' || range AS name, CAST(range % 4 AS INTEGER) AS p, "
      "CASE WHEN range % 3 = 0 THEN 'd' WHEN range % 3 = 1 THEN 'u' ELSE 'x' END AS op FROM range(20, 40)";
  MergeClause listed = InsertClause({"id", "name"}, {"s.id", "'new' || s.id"});
  listed.condition = "s.id < 35";
  MergeClause orphan_update = Clause(K::kNotMatchedBySourceUpdate, "t.id < 15");
  orphan_update.assignments = {{"name", "'orphan'"}};
  MergeRequest request = MergeFrom(
      source,
      {Clause(K::kMatchedDelete, "s.op = 'd'"), UpdateClause({{"name", "s.name"}}, "s.op = 'u'"),
       UpdateClause({{"name", "'other'"}, {"p", "t.p + 10"}}), listed, StarClause(K::kNotMatchedInsert),
       Clause(K::kNotMatchedBySourceDelete, "t.id < 5"), orphan_update});

  ASSERT_OK_AND_ASSIGN(auto snapshot, f.Load("t"));
  ASSERT_OK_AND_ASSIGN(CommandResult result, Merge(f.Context(), snapshot, request));

  ASSERT_OK(
      f.conn().Execute("CREATE TABLE duck AS SELECT range AS id, 'n' || range AS name, CAST(range // 10 AS "
                       "INTEGER) AS p FROM range(30);"
                       "MERGE INTO duck AS t USING (" +
                       source +
                       ") AS s ON t.id = s.id "
                       "WHEN MATCHED AND s.op = 'd' THEN DELETE "
                       "WHEN MATCHED AND s.op = 'u' THEN UPDATE SET name = s.name "
                       "WHEN MATCHED THEN UPDATE SET name = 'other', p = t.p + 10 "
                       "WHEN NOT MATCHED AND s.id < 35 THEN INSERT (id, name) VALUES (s.id, 'new' || s.id) "
                       "WHEN NOT MATCHED THEN INSERT (id, name, p) VALUES (s.id, s.name, s.p) "
                       "WHEN NOT MATCHED BY SOURCE AND t.id < 5 THEN DELETE "
                       "WHEN NOT MATCHED BY SOURCE AND t.id < 15 THEN UPDATE SET name = 'orphan'"));
  ASSERT_OK_AND_ASSIGN(std::string scan, f.ScanSql("t"));
  ASSERT_OK_AND_ASSIGN(int64_t difference, f.Difference(scan, "duck"));
  EXPECT_EQ(difference, 0);
  ASSERT_OK_AND_ASSIGN(Rows rows, f.Rows("t"));
  EXPECT_EQ(rows, Expect("SELECT * FROM duck"));

  EXPECT_EQ(result.metrics["numSourceRows"], 20);
  EXPECT_EQ(result.metrics["numTargetRowsMatchedDeleted"], 3);  // 21 24 27
  EXPECT_EQ(result.metrics["numTargetRowsMatchedUpdated"], 7);  // the other ids of 20..29
  EXPECT_EQ(result.metrics["numTargetRowsInserted"], 10);
  EXPECT_EQ(result.metrics["numTargetRowsNotMatchedBySourceDeleted"], 5);
  EXPECT_EQ(result.metrics["numTargetRowsNotMatchedBySourceUpdated"], 10);
  ASSERT_INTEROP(f.Root("t"));
}

TEST_P(DmlModeTest, MergeTargetRowMatchedTwiceIsInvalid) {
  CreateThreeFiles("t");
  ASSERT_OK_AND_ASSIGN(auto snapshot, f.Load("t"));
  MergeRequest request =
      MergeFrom("SELECT 5 AS id UNION ALL SELECT 5", {UpdateClause({{"name", "'twice'"}})});
  auto result = Merge(f.Context(), snapshot, request);
  ASSERT_ERROR_CODE(result.status(), kInvalidArgument);
  EXPECT_NE(result.status().message().find("more than once"), std::string::npos)
      << result.status().ToString();

  // A lone unconditional DELETE is unambiguous: the row goes once.
  request.clauses = {Clause(K::kMatchedDelete)};
  ASSERT_OK_AND_ASSIGN(CommandResult deleted, Merge(f.Context(), snapshot, request));
  EXPECT_EQ(deleted.metrics["numTargetRowsDeleted"], 1);
  ASSERT_OK_AND_ASSIGN(Rows rows, f.Rows("t"));
  EXPECT_EQ(rows.size(), 29u);
}

TEST_P(DmlModeTest, MergePrunesTargetFilesBySourceKeys) {
  CreateThreeFiles("t");
  ASSERT_OK_AND_ASSIGN(auto snapshot, f.Load("t"));
  MergeRequest request = MergeFrom("SELECT 12 AS id, 'x' AS name, 1 AS p UNION ALL SELECT 14, 'y', 1",
                                   {StarClause(K::kMatchedUpdate)});
  ASSERT_OK_AND_ASSIGN(CommandResult result, Merge(f.Context(), snapshot, request));
  EXPECT_EQ(result.metrics["numTargetFilesBeforeSkipping"], 3);
  EXPECT_EQ(result.metrics["numTargetFilesAfterSkipping"], 1);
  EXPECT_EQ(result.metrics["numTargetRowsUpdated"], 2);

  // A source whose keys are all NULL can match nothing: no file is read.
  ASSERT_OK_AND_ASSIGN(snapshot, f.Load("t"));
  request.source_sql = "SELECT CAST(NULL AS BIGINT) AS id, 'x' AS name, 1 AS p";
  ASSERT_OK_AND_ASSIGN(result, Merge(f.Context(), snapshot, request));
  EXPECT_EQ(result.metrics["numTargetFilesAfterSkipping"], 0);
  EXPECT_EQ(result.metrics["numTargetRowsUpdated"], 0);
}

TEST_P(DmlModeTest, MergeWithSchemaEvolutionAddsSourceColumns) {
  CreateThreeFiles("t");
  ASSERT_OK_AND_ASSIGN(auto snapshot, f.Load("t"));
  MergeRequest request =
      MergeFrom("SELECT range AS id, 'e' || range AS name, 9 AS p, range * 1.5 AS score FROM range(28, 32)",
                {StarClause(K::kMatchedUpdate), StarClause(K::kNotMatchedInsert)});
  request.schema_evolution = true;
  ASSERT_OK(Merge(f.Context(), snapshot, request).status());
  ASSERT_OK_AND_ASSIGN(auto after, f.Load("t"));
  ASSERT_EQ(after->schema.fields.size(), 4u);
  EXPECT_EQ(after->schema.fields[3].name, "score");
  ASSERT_OK_AND_ASSIGN(std::string scan, f.ScanSql("t"));
  ASSERT_OK_AND_ASSIGN(
      auto scored, f.conn().Query("SELECT id, score FROM " + scan + " WHERE score IS NOT NULL ORDER BY id"));
  ASSERT_EQ(scored.row_count(), 4u);
  EXPECT_EQ(scored.at(0, 0), "28");
  EXPECT_EQ(scored.at(0, 1), "42.0");
  ASSERT_OK_AND_ASSIGN(auto total, f.conn().Query("SELECT count(*), count(score) FROM " + scan));
  EXPECT_EQ(total.at(0, 0), "32");
  EXPECT_EQ(total.at(0, 1), "4");
}

TEST_P(DmlModeTest, AppendOnlyTablesRefuseChangesButAcceptInserts) {
  CreateThreeFiles("t", {{"delta.appendOnly", "true"}});
  ASSERT_OK_AND_ASSIGN(auto snapshot, f.Load("t"));
  ASSERT_ERROR_CODE(Delete(f.Context(), snapshot, DeleteWhere("id = 1")).status(), kInvalidArgument);
  UpdateRequest update = UpdateWhere({{"name", "'x'"}});
  ASSERT_ERROR_CODE(Update(f.Context(), snapshot, update).status(), kInvalidArgument);

  MergeRequest merge = MergeFrom("SELECT range AS id, 'm' AS name, 5 AS p FROM range(28, 33)",
                                 {StarClause(K::kNotMatchedInsert)});
  ASSERT_OK_AND_ASSIGN(CommandResult result, Merge(f.Context(), snapshot, merge));
  EXPECT_EQ(result.metrics["numTargetRowsInserted"], 3);
  merge.clauses = {Clause(K::kMatchedDelete)};
  ASSERT_OK_AND_ASSIGN(snapshot, f.Load("t"));
  ASSERT_ERROR_CODE(Merge(f.Context(), snapshot, merge).status(), kInvalidArgument);
}

TEST_P(DmlModeTest, ChangeDataFeedRecordsEveryChange) {
  CreateThreeFiles("t", {{"delta.enableChangeDataFeed", "true"}}, {"p"});
  ASSERT_OK_AND_ASSIGN(auto snapshot, f.Load("t"));
  UpdateRequest update = UpdateWhere({{"name", "'updated'"}}, "id IN (1, 12)");
  ASSERT_OK_AND_ASSIGN(CommandResult updated, Update(f.Context(), snapshot, update));
  EXPECT_EQ(updated.metrics["numAddedChangeFiles"], 2);  // one per partition
  ASSERT_OK_AND_ASSIGN(snapshot, f.Load("t"));
  ASSERT_OK(Delete(f.Context(), snapshot, DeleteWhere("id = 25")).status());
  ASSERT_OK_AND_ASSIGN(snapshot, f.Load("t"));
  MergeRequest merge =
      MergeFrom("SELECT 2 AS id, 'merged' AS name, 0 AS p UNION ALL SELECT 40, 'inserted', 4",
                {StarClause(K::kMatchedUpdate), StarClause(K::kNotMatchedInsert)});
  ASSERT_OK(Merge(f.Context(), snapshot, merge).status());
  EXPECT_TRUE(std::filesystem::exists(f.Root("t") + "/_change_data"));

  ASSERT_OK_AND_ASSIGN(auto store, f.Store("t"));
  ASSERT_OK_AND_ASSIGN(ChangesScan changes, TableChangesSql(f.conn(), store, f.Root("t"), 4, std::nullopt));
  ASSERT_OK_AND_ASSIGN(auto feed, f.conn().Query("SELECT _commit_version, _change_type, id, name FROM (" +
                                                 changes.sql + ") ORDER BY ALL"));
  Rows expected = Expect(
      "SELECT * FROM (VALUES (4, 'update_postimage', 1, 'updated'), (4, 'update_postimage', 12, 'updated'), "
      "(4, 'update_preimage', 1, 'n1'), (4, 'update_preimage', 12, 'n12'), (5, 'delete', 25, 'n25'), "
      "(6, 'insert', 40, 'inserted'), (6, 'update_postimage', 2, 'merged'), (6, 'update_preimage', 2, 'n2')) "
      "v(a, b, c, d)");
  EXPECT_EQ(feed.rows, expected);
}

TEST_P(DmlModeTest, MergeCommitsDespiteConcurrentChangesElsewhere) {
  CreateThreeFiles("t", {}, {"p"});
  ASSERT_OK_AND_ASSIGN(auto snapshot, f.Load("t"));
  // Other writers append to partition 5 and delete from partition 2 after this MERGE read
  // the table: neither touches the rows of partition 0 it reads.
  ASSERT_OK(f.Append("t", "SELECT 50 AS id, 'late' AS name, 5 AS p"));
  {
    ASSERT_OK_AND_ASSIGN(auto latest, f.Load("t"));
    ASSERT_OK(Delete(f.Context(), latest, DeleteWhere("p = 2 AND id = 25")).status());
  }
  MergeRequest request = MergeFrom("SELECT 3 AS id, 'merged' AS name, 0 AS p",
                                   {StarClause(K::kMatchedUpdate)}, "t.p = 0 AND t.id = s.id");
  ASSERT_OK_AND_ASSIGN(CommandResult result, Merge(f.Context(), snapshot, request));
  EXPECT_EQ(result.commit.version, 6);
  ASSERT_OK_AND_ASSIGN(Rows rows, f.Rows("t"));
  EXPECT_EQ(rows.size(), 30u);
}

TEST_P(DmlModeTest, MergeConflictsWithConcurrentDeleteOfItsRows) {
  CreateThreeFiles("t", {}, {"p"});
  ASSERT_OK_AND_ASSIGN(auto snapshot, f.Load("t"));
  ASSERT_OK(Delete(f.Context(), snapshot, DeleteWhere("id = 4")).status());
  MergeRequest request =
      MergeFrom("SELECT 3 AS id, 'merged' AS name, 0 AS p", {StarClause(K::kMatchedUpdate)});
  ASSERT_ERROR_CODE(Merge(f.Context(), snapshot, request).status(), kConflict);
}

INSTANTIATE_TEST_SUITE_P(Modes, DmlModeTest, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "DeletionVectors" : "CopyOnWrite"; });

// Deletion-vector specifics.
class DeletionVectorTest : public ::testing::Test {
 protected:
  DmlFixture f;
};

TEST_F(DeletionVectorTest, SecondDeleteExtendsTheFilesDeletionVector) {
  ASSERT_OK(f.Create("t", kColumns, {}, {{"delta.enableDeletionVectors", "true"}}));
  ASSERT_OK(f.Append("t", "SELECT range AS id, 'n' AS name, 0 AS p FROM range(100)"));
  for (const char* where : {"id < 3", "id >= 90", "id = 50"}) {
    ASSERT_OK_AND_ASSIGN(auto snapshot, f.Load("t"));
    ASSERT_OK(Delete(f.Context(), snapshot, DeleteWhere(where)).status());
  }
  ASSERT_OK_AND_ASSIGN(auto snapshot, f.Load("t"));
  ASSERT_EQ(snapshot->files.size(), 1u);
  const auto& dv = snapshot->files[0].deletion_vector;
  ASSERT_TRUE(dv.has_value());
  EXPECT_EQ(dv->cardinality, 14);
  ASSERT_OK_AND_ASSIGN(auto positions, delta::LoadDeletionVector(*snapshot->store, *dv, "test"));
  EXPECT_EQ(positions.front(), 0u);
  EXPECT_EQ(positions[3], 50u);
  EXPECT_EQ(positions.back(), 99u);
  ASSERT_INTEROP(f.Root("t"), 86);
}

TEST_F(DeletionVectorTest, DeletingEveryRowRemovesTheFile) {
  ASSERT_OK(f.Create("t", kColumns, {}, {{"delta.enableDeletionVectors", "true"}}));
  ASSERT_OK(f.Append("t", "SELECT range AS id, 'a' AS name, 0 AS p FROM range(5)"));
  ASSERT_OK(f.Append("t", "SELECT range AS id, 'b' AS name, 0 AS p FROM range(5, 10)"));
  ASSERT_OK_AND_ASSIGN(auto snapshot, f.Load("t"));
  ASSERT_OK_AND_ASSIGN(CommandResult result, Delete(f.Context(), snapshot, DeleteWhere("id < 7")));
  EXPECT_EQ(result.metrics["numRemovedFiles"], 1);
  EXPECT_EQ(result.metrics["numDeletionVectorsAdded"], 1);
  ASSERT_OK_AND_ASSIGN(auto after, f.Load("t"));
  ASSERT_EQ(after->files.size(), 1u);
  EXPECT_EQ(after->files[0].deletion_vector->cardinality, 2);
}

TEST_F(DeletionVectorTest, ForcedDeletionVectorsNeedTheFeature) {
  ASSERT_OK(f.Create("t", kColumns));
  ASSERT_OK(f.Append("t", "SELECT 1 AS id, 'a' AS name, 0 AS p"));
  ASSERT_OK_AND_ASSIGN(auto snapshot, f.Load("t"));
  DeleteRequest request;
  request.where = "id = 1";
  request.mode = DmlMode::kDeletionVectors;
  ASSERT_ERROR_CODE(Delete(f.Context(), snapshot, request).status(), kInvalidArgument);
  request.mode = DmlMode::kCopyOnWrite;
  ASSERT_OK(Delete(f.Context(), snapshot, request).status());
}

TEST_F(DeletionVectorTest, ColumnMappedTableKeepsPhysicalNames) {
  ASSERT_OK(f.Create("t", kColumns, {"p"},
                     {{"delta.enableDeletionVectors", "true"}, {"delta.columnMapping.mode", "name"}}));
  ASSERT_OK_AND_ASSIGN(auto snapshot, f.Load("t"));
  std::string physical_id = snapshot->schema.fields[0].PhysicalName();
  std::string physical_name = snapshot->schema.fields[1].PhysicalName();
  ASSERT_NE(physical_id, "id");
  ASSERT_OK(f.Append("t", "SELECT range AS \"" + physical_id + "\", 'n' || range AS \"" + physical_name +
                              "\", 0 AS \"" + snapshot->schema.fields[2].PhysicalName() +
                              "\" FROM range(10)"));
  ASSERT_OK_AND_ASSIGN(snapshot, f.Load("t"));
  UpdateRequest request = UpdateWhere({{"name", "'changed'"}}, "id > 6");
  ASSERT_OK(Update(f.Context(), snapshot, request).status());
  ASSERT_OK_AND_ASSIGN(std::string scan, f.ScanSql("t"));
  ASSERT_OK_AND_ASSIGN(auto changed,
                       f.conn().Query("SELECT count(*) FROM " + scan + " WHERE name = 'changed'"));
  EXPECT_EQ(changed.at(0, 0), "3");
  ASSERT_INTEROP(f.Root("t"), 10);
}

}  // namespace
}  // namespace basin::commands
