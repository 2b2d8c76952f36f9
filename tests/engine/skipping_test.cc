#include "engine/skipping.h"

#include <gtest/gtest.h>

#include "testing/test_util.h"

namespace basin::engine {
namespace {

using Files = std::vector<size_t>;

class SkippingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(db_, Database::Open());
    ASSERT_OK_AND_ASSIGN(conn_, Connection::Open(db_));
    auto schema = delta::ParseSchema(R"({"type":"struct","fields":[
      {"name":"id","type":"long","nullable":true,"metadata":{}},
      {"name":"name","type":"string","nullable":true,"metadata":{}},
      {"name":"score","type":"double","nullable":true,"metadata":{}},
      {"name":"day","type":"date","nullable":true,"metadata":{}},
      {"name":"ts","type":"timestamp","nullable":true,"metadata":{}},
      {"name":"s","type":{"type":"struct","fields":[{"name":"x","type":"integer","nullable":true,"metadata":{}}]},
       "nullable":true,"metadata":{}},
      {"name":"part","type":"integer","nullable":true,"metadata":{}}]})");
    ASSERT_TRUE(schema.ok()) << schema.status().ToString();
    snapshot_.schema = *schema;
    snapshot_.metadata.partition_columns = {"part"};
    // File 0: ids 0..9; file 1: ids 10..19 with some nulls; file 2: no stats; file 3: all
    // ids null and no stats for other columns.
    Add(R"({"numRecords":10,"minValues":{"id":0,"name":"apple","score":1.5,"day":"2024-01-01",
            "ts":"2024-01-01T00:00:00.000Z","s":{"x":1}},
            "maxValues":{"id":9,"name":"banana","score":2.5,"day":"2024-01-31",
            "ts":"2024-01-01T10:00:00.123Z","s":{"x":5}},
            "nullCount":{"id":0,"name":0,"score":0,"day":0,"ts":0,"s":{"x":0}}})",
        "1");
    Add(R"({"numRecords":10,"minValues":{"id":10,"name":"cherry","score":3.0,"day":"2024-02-01",
            "ts":"2024-02-01T00:00:00.000Z","s":{"x":6}},
            "maxValues":{"id":19,"name":"zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz","score":4.0,"day":"2024-02-28",
            "ts":"2024-02-01T00:00:00.000Z","s":{"x":9}},
            "nullCount":{"id":2,"name":0,"score":0,"day":0,"ts":0,"s":{"x":0}}})",
        "2");
    Add(std::nullopt, std::nullopt);
    Add(R"({"numRecords":5,"minValues":{},"maxValues":{},"nullCount":{"id":5}})", "2");
  }

  void Add(std::optional<std::string> stats, std::optional<std::string> part) {
    delta::AddFile add;
    add.path = "f" + std::to_string(snapshot_.files.size()) + ".parquet";
    add.stats = std::move(stats);
    add.partition_values["part"] = std::move(part);
    snapshot_.files.push_back(add);
  }

  Files Match(const std::string& where) {
    auto r = FilesMatchingWhere(*conn_, snapshot_, where);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : Files{};
  }

  std::shared_ptr<Database> db_;
  std::unique_ptr<Connection> conn_;
  delta::Snapshot snapshot_;
};

TEST_F(SkippingTest, Comparisons) {
  EXPECT_EQ(Match("id = 5"), (Files{0, 2}));
  EXPECT_EQ(Match("5 = id"), (Files{0, 2}));
  EXPECT_EQ(Match("id < 10"), (Files{0, 2}));
  EXPECT_EQ(Match("10 > id"), (Files{0, 2}));
  EXPECT_EQ(Match("id <= 10"), (Files{0, 1, 2}));
  EXPECT_EQ(Match("id > 9"), (Files{1, 2}));
  EXPECT_EQ(Match("id >= 19"), (Files{1, 2}));
  EXPECT_EQ(Match("id > 100"), (Files{2}));
  EXPECT_EQ(Match("score = 2.5"), (Files{0, 2, 3}));
  EXPECT_EQ(Match("score > 2.5"), (Files{1, 2, 3}));
  EXPECT_EQ(Match("s.x = 7"), (Files{1, 2, 3}));
}

TEST_F(SkippingTest, NotEqualSkipsOnlySingleValueFiles) {
  Add(R"({"numRecords":3,"minValues":{"id":42},"maxValues":{"id":42},"nullCount":{"id":0}})", "3");
  EXPECT_EQ(Match("id <> 42"), (Files{0, 1, 2}));
}

TEST_F(SkippingTest, BetweenAndIn) {
  EXPECT_EQ(Match("id BETWEEN 3 AND 4"), (Files{0, 2}));
  EXPECT_EQ(Match("id BETWEEN 12 AND 100"), (Files{1, 2}));
  EXPECT_EQ(Match("id IN (15, 100)"), (Files{1, 2}));
  EXPECT_EQ(Match("id IN (-1, 100)"), (Files{2}));
}

TEST_F(SkippingTest, NullTests) {
  EXPECT_EQ(Match("id IS NULL"), (Files{1, 2, 3}));
  EXPECT_EQ(Match("id IS NOT NULL"), (Files{0, 1, 2}));
}

TEST_F(SkippingTest, AndOr) {
  EXPECT_EQ(Match("id = 5 AND name = 'cherry'"), (Files{2}));
  EXPECT_EQ(Match("id = 5 OR id = 15"), (Files{0, 1, 2}));
  EXPECT_EQ(Match("id = 5 OR id = 1000"), (Files{0, 2}));
  // Something skipping does not understand keeps every file in its OR branch.
  EXPECT_EQ(Match("id = 1000 OR lower(name) = 'x'"), (Files{0, 1, 2, 3}));
  EXPECT_EQ(Match("id = 1000 AND lower(name) = 'x'"), (Files{2}));
}

TEST_F(SkippingTest, PartitionValues) {
  EXPECT_EQ(Match("part = 1"), (Files{0}));
  EXPECT_EQ(Match("part IS NULL"), (Files{2}));
  EXPECT_EQ(Match("part > 1"), (Files{1, 3}));
  EXPECT_EQ(Match("part = 2 AND id < 12"), (Files{1}));
}

TEST_F(SkippingTest, StringsDatesTimestamps) {
  EXPECT_EQ(Match("name = 'avocado'"), (Files{0, 2, 3}));
  // The max of file 1 has 32 characters: it may be a truncated prefix, so it bounds nothing.
  EXPECT_EQ(Match("name > 'zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz'"), (Files{1, 2, 3}));
  EXPECT_EQ(Match("day = DATE '2024-02-10'"), (Files{1, 2, 3}));
  EXPECT_EQ(Match("day = '2024-01-10'"), (Files{0, 2, 3}));
  EXPECT_EQ(Match("day < DATE '2024-01-01'"), (Files{2, 3}));
  // Timestamp stats are truncated to milliseconds, so the max is widened by 1 ms.
  EXPECT_EQ(Match("ts = TIMESTAMP '2024-01-01 10:00:00.123900'"), (Files{0, 2, 3}));
  EXPECT_EQ(Match("ts > TIMESTAMPTZ '2024-01-01 10:00:00.125+00'"), (Files{1, 2, 3}));
  EXPECT_EQ(Match("ts > TIMESTAMPTZ '2024-01-01 12:00:00.125+02'"), (Files{1, 2, 3}));
}

TEST_F(SkippingTest, ConservativeCases) {
  // A literal of another type than the column, NaN, and functions keep every file.
  EXPECT_EQ(Match("id = '5'"), (Files{0, 1, 2, 3}));
  EXPECT_EQ(Match("score = 'NaN'::DOUBLE"), (Files{0, 1, 2, 3}));
  EXPECT_EQ(Match("id + 1 = 5"), (Files{0, 1, 2, 3}));
  // DuckDB's parser folds NOT (id = 5) into id <> 5; file 3 holds only NULL ids.
  EXPECT_EQ(Match("NOT (id = 5)"), (Files{0, 1, 2}));
  EXPECT_EQ(Match("NOT (id IN (1, 2))"), (Files{0, 1, 2, 3}));
  EXPECT_EQ(Match("unknown_col = 5"), (Files{0, 1, 2, 3}));
}

TEST_F(SkippingTest, QualifiedColumnsUseTheScope) {
  auto tree = conn_->Query("SELECT json_serialize_sql('SELECT 1 WHERE t.id = 5 AND u.id = 15')");
  ASSERT_OK(tree.status());
  auto where = nlohmann::json::parse(*tree->at(0, 0))["statements"][0]["node"]["where_clause"];
  SkippingScope scope;
  scope.qualifiers = {"t"};
  scope.other_qualifiers = {"u"};
  EXPECT_EQ(FilesMatching(snapshot_, where, scope), (Files{0, 2}));
}

TEST_F(SkippingTest, ColumnMappingUsesPhysicalNamesInStats) {
  auto schema = delta::ParseSchema(R"({"type":"struct","fields":[{"name":"id","type":"long","nullable":true,
      "metadata":{"delta.columnMapping.physicalName":"col-abc"}}]})");
  ASSERT_TRUE(schema.ok());
  delta::Snapshot mapped;
  mapped.schema = *schema;
  mapped.metadata.configuration["delta.columnMapping.mode"] = "name";
  delta::AddFile add;
  add.stats =
      R"({"numRecords":1,"minValues":{"col-abc":1},"maxValues":{"col-abc":2},"nullCount":{"col-abc":0}})";
  mapped.files = {add};
  ASSERT_OK_AND_ASSIGN(auto hit, FilesMatchingWhere(*conn_, mapped, "id = 2"));
  EXPECT_EQ(hit, (Files{0}));
  ASSERT_OK_AND_ASSIGN(auto miss, FilesMatchingWhere(*conn_, mapped, "id = 3"));
  EXPECT_TRUE(miss.empty());
}

TEST_F(SkippingTest, UnparsablePredicateIsInvalidArgument) {
  ASSERT_ERROR_CODE(FilesMatchingWhere(*conn_, snapshot_, "id = = 3"), kInvalidArgument);
}

}  // namespace
}  // namespace basin::engine
