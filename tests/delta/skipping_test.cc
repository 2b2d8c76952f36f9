// Data skipping (delta/skipping.h) over partition values and stats: predicates written as
// SQL (through engine::ParsePredicate) and built directly, the conservative cases, typed
// stats (decimals, floats, timestamps), and the snapshot's stats index.
#include "delta/skipping.h"

#include <gtest/gtest.h>

#include <thread>

#include "delta/file_stats.h"
#include "delta/temporal.h"
#include "engine/predicate_parser.h"
#include "testing/test_util.h"

namespace basin::delta {
namespace {

using Files = std::vector<size_t>;

Result<StructType> Schema(const std::string& fields) {
  return ParseSchema(R"({"type":"struct","fields":[)" + fields + "]}");
}

std::string Field(const std::string& name, const std::string& type, const std::string& metadata = "{}") {
  return R"({"name":")" + name + R"(","type":)" + type + R"(,"nullable":true,"metadata":)" + metadata + "}";
}

Predicate Compare(CompareOp op, const std::string& column, Literal value) {
  return Predicate::Compare(op, ColumnPath{column}, std::move(value));
}

class SkippingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto schema = Schema(Field("id", R"("long")") + "," + Field("name", R"("string")") + "," +
                         Field("score", R"("double")") + "," + Field("day", R"("date")") + "," +
                         Field("ts", R"("timestamp")") + "," +
                         Field("s", R"({"type":"struct","fields":[)" + Field("x", R"("integer")") + "]}") +
                         "," + Field("part", R"("integer")"));
    ASSERT_OK(schema.status());
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
    AddFile add;
    add.path = "f" + std::to_string(snapshot_.files.size()) + ".parquet";
    add.stats = std::move(stats);
    add.partition_values["part"] = std::move(part);
    snapshot_.files.push_back(add);
  }

  Files Match(const std::string& where, const engine::PredicateScope& scope = {}) {
    auto predicate = engine::ParsePredicate(where, snapshot_.schema, scope);
    EXPECT_OK(predicate.status());
    return predicate.ok() ? FilesMatching(snapshot_, *predicate) : Files{};
  }

  Snapshot snapshot_;
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

TEST_F(SkippingTest, NotIsPushedDownToTheComparisons) {
  // NOT (id < 10) holds where id >= 10: only file 0 (ids 0..9) is out, and file 3, whose
  // ids are all NULL, for which the comparison is never true.
  EXPECT_EQ(Match("NOT (id < 10)"), (Files{1, 2}));
  // De Morgan: NOT (a AND b) is NOT a OR NOT b.
  EXPECT_EQ(Match("NOT (id >= 0 AND id <= 9)"), (Files{1, 2}));
  EXPECT_EQ(Match("NOT (id < 10 OR id > 15)"), (Files{1, 2}));
  EXPECT_EQ(Match("NOT (id IS NULL)"), (Files{0, 1, 2}));
  EXPECT_EQ(Match("NOT NOT (id = 5)"), (Files{0, 2}));
  // An unknown term says nothing, negated or not.
  EXPECT_EQ(Match("NOT (lower(name) = 'x')"), (Files{0, 1, 2, 3}));
}

TEST_F(SkippingTest, NotInDropsFilesHoldingOnlyListedValues) {
  Add(R"({"numRecords":3,"minValues":{"id":7},"maxValues":{"id":7},"nullCount":{"id":0}})", "3");
  EXPECT_EQ(Match("id NOT IN (7, 8)"), (Files{0, 1, 2}));
  EXPECT_EQ(Match("NOT (id IN (7, 8))"), (Files{0, 1, 2}));
  EXPECT_EQ(Match("id NOT IN (8, 9)"), (Files{0, 1, 2, 4}));
}

TEST_F(SkippingTest, BooleanConstants) {
  EXPECT_EQ(Match("false"), Files{});
  EXPECT_EQ(Match("true AND id = 5"), (Files{0, 2}));
  EXPECT_EQ(Match("NOT false AND id = 5"), (Files{0, 2}));
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
  // A date compared with a timestamp column is that day's midnight.
  EXPECT_EQ(Match("ts < DATE '2024-01-01'"), (Files{2, 3}));
}

TEST_F(SkippingTest, ConservativeCases) {
  // A string literal is cast to the column's type, as DuckDB does with it.
  EXPECT_EQ(Match("id = '5'"), (Files{0, 2}));
  // NaN, functions, columns compared with columns and unknown columns keep every file.
  EXPECT_EQ(Match("score = 'NaN'::DOUBLE"), (Files{0, 1, 2, 3}));
  EXPECT_EQ(Match("id + 1 = 5"), (Files{0, 1, 2, 3}));
  EXPECT_EQ(Match("id = s.x"), (Files{0, 1, 2, 3}));
  EXPECT_EQ(Match("unknown_col = 5"), (Files{0, 1, 2, 3}));
  // A constant that does not convert exactly to the column's type.
  EXPECT_EQ(Match("id = 5.5"), (Files{0, 1, 2, 3}));
  // Literals built directly with another type than the column's.
  EXPECT_EQ(FilesMatching(snapshot_, Compare(CompareOp::kEqual, "id", Literal::String("5"))),
            (Files{0, 1, 2, 3}));
  EXPECT_EQ(FilesMatching(snapshot_, Compare(CompareOp::kEqual, "ts", Literal::TimestampNtz(0))),
            (Files{0, 1, 2, 3}));
  // Any integer type compares with an integer column.
  EXPECT_EQ(FilesMatching(snapshot_, Compare(CompareOp::kEqual, "id", Literal::Byte(5))), (Files{0, 2}));
  EXPECT_EQ(FilesMatching(snapshot_, Predicate()), (Files{0, 1, 2, 3}));
}

TEST_F(SkippingTest, QualifiedColumnsUseTheScope) {
  engine::PredicateScope scope;
  scope.qualifiers = {"t"};
  scope.other_qualifiers = {"u"};
  EXPECT_EQ(Match("t.id = 5 AND u.id = 15", scope), (Files{0, 2}));
  EXPECT_EQ(Match("T.id = 15", scope), (Files{1, 2}));
}

TEST_F(SkippingTest, MalformedStatsKeepTheFile) {
  Add(R"({"numRecords":3,"minValues":{"id":100},"maxValues":{"id":1)", "3");  // cut short
  Add(R"({"numRecords":3,"minValues":{"id":"100"},"maxValues":{"id":[1]}})", "3");
  EXPECT_EQ(Match("id = 50"), (Files{2, 4, 5}));
}

TEST_F(SkippingTest, FileMayMatchJudgesFilesOutsideTheSnapshot) {
  AddFile outside;
  outside.path = "new.parquet";
  outside.partition_values["part"] = "7";
  outside.stats = R"({"numRecords":2,"minValues":{"id":100},"maxValues":{"id":200},"nullCount":{"id":0}})";
  EXPECT_TRUE(FileMayMatch(snapshot_, outside, Compare(CompareOp::kEqual, "id", Literal::Long(150))));
  EXPECT_FALSE(FileMayMatch(snapshot_, outside, Compare(CompareOp::kEqual, "id", Literal::Long(5))));
  EXPECT_FALSE(FileMayMatch(snapshot_, outside, Compare(CompareOp::kEqual, "part", Literal::Int(1))));
  EXPECT_TRUE(FileMayMatch(snapshot_, 0, Compare(CompareOp::kEqual, "id", Literal::Long(5))));
  EXPECT_FALSE(FileMayMatch(snapshot_, 1, Compare(CompareOp::kEqual, "id", Literal::Long(5))));
}

TEST_F(SkippingTest, NumRecordsComesFromTheIndex) {
  EXPECT_EQ(snapshot_.stats_index().NumRecords(0), 10);
  EXPECT_EQ(snapshot_.stats_index().NumRecords(2), std::nullopt);
  EXPECT_EQ(snapshot_.num_records(), -1);  // file 2 has no stats
}

TEST(SkippingColumnMappingTest, StatsAreKeyedByPhysicalNames) {
  auto schema = Schema(Field("id", R"("long")", R"({"delta.columnMapping.physicalName":"col-abc"})"));
  ASSERT_OK(schema.status());
  Snapshot mapped;
  mapped.schema = *schema;
  mapped.metadata.configuration["delta.columnMapping.mode"] = "name";
  AddFile add;
  add.stats =
      R"({"numRecords":1,"minValues":{"col-abc":1},"maxValues":{"col-abc":2},"nullCount":{"col-abc":0}})";
  mapped.files = {add};
  EXPECT_EQ(FilesMatching(mapped, Compare(CompareOp::kEqual, "id", Literal::Long(2))), (Files{0}));
  EXPECT_EQ(FilesMatching(mapped, Compare(CompareOp::kEqual, "ID", Literal::Long(3))), Files{});
}

TEST(SkippingTypesTest, DecimalsCompareExactly) {
  auto schema = Schema(Field("d", R"x("decimal(38,2)")x") + "," + Field("small", R"x("decimal(5,2)")x"));
  ASSERT_OK(schema.status());
  Snapshot snapshot;
  snapshot.schema = *schema;
  AddFile add;
  // 36 digits before the point: beyond what a double tells apart.
  add.stats = R"({"numRecords":2,"minValues":{"d":123456789012345678901234567890123456.01,"small":1.5},
                  "maxValues":{"d":123456789012345678901234567890123456.02,"small":2.25E0},
                  "nullCount":{"d":0,"small":0}})";
  snapshot.files = {add};
  const Int128 base = static_cast<Int128>(1234567890123456789LL) * static_cast<Int128>(100000000000000000LL) +
                      static_cast<Int128>(1234567890123456LL);
  ASSERT_EQ(Int128ToString(base), "123456789012345678901234567890123456");
  auto decimal = [&](Int128 unscaled) { return Literal::Decimal(unscaled, 38, 2); };
  EXPECT_EQ(FilesMatching(snapshot, Compare(CompareOp::kEqual, "d", decimal(base * 100 + 2))), (Files{0}));
  EXPECT_EQ(FilesMatching(snapshot, Compare(CompareOp::kEqual, "d", decimal(base * 100 + 3))), Files{});
  EXPECT_EQ(FilesMatching(snapshot, Compare(CompareOp::kLess, "d", decimal(base * 100 + 1))), Files{});
  // Literals of another scale are rescaled when that is exact.
  EXPECT_EQ(FilesMatching(snapshot, Compare(CompareOp::kGreater, "small", Literal::Decimal(225, 3, 2))),
            Files{});
  EXPECT_EQ(FilesMatching(snapshot, Compare(CompareOp::kGreater, "small", Literal::Decimal(22500, 6, 4))),
            Files{});
  EXPECT_EQ(FilesMatching(snapshot, Compare(CompareOp::kEqual, "small", Literal::Int(3))), Files{});
  EXPECT_EQ(FilesMatching(snapshot, Compare(CompareOp::kEqual, "small", Literal::Int(2))), (Files{0}));
  // 2.245 has no exact decimal(5,2) form: the file is kept.
  EXPECT_EQ(FilesMatching(snapshot, Compare(CompareOp::kGreater, "small", Literal::Decimal(2245, 4, 3))),
            (Files{0}));
}

TEST(SkippingTypesTest, FloatStatsAreFloats) {
  auto schema = Schema(Field("f", R"("float")"));
  ASSERT_OK(schema.status());
  Snapshot snapshot;
  snapshot.schema = *schema;
  AddFile add;
  // A writer prints the float 1.1f as 1.1, which as a double is below it.
  add.stats = R"({"numRecords":1,"minValues":{"f":1.1},"maxValues":{"f":1.1},"nullCount":{"f":0}})";
  snapshot.files = {add};
  EXPECT_EQ(FilesMatching(snapshot, Compare(CompareOp::kEqual, "f", Literal::Float(1.1f))), (Files{0}));
  EXPECT_EQ(FilesMatching(snapshot, Compare(CompareOp::kGreater, "f", Literal::Float(1.1f))), Files{});
}

TEST(SkippingTypesTest, TimestampNtzAndBooleans) {
  auto schema = Schema(Field("t", R"("timestamp_ntz")") + "," + Field("b", R"("boolean")"));
  ASSERT_OK(schema.status());
  Snapshot snapshot;
  snapshot.schema = *schema;
  AddFile add;
  add.stats = R"({"numRecords":1,"minValues":{"t":"2024-03-01T08:00:00.000","b":true},
                  "maxValues":{"t":"2024-03-01T09:00:00.000","b":true},"nullCount":{"t":0,"b":0}})";
  snapshot.files = {add};
  const int64_t eight = (DaysFromCivil(2024, 3, 1) * 24 + 8) * 3600 * int64_t{1'000'000};
  EXPECT_EQ(FilesMatching(snapshot, Compare(CompareOp::kLess, "t", Literal::TimestampNtz(eight))), Files{});
  EXPECT_EQ(FilesMatching(snapshot, Compare(CompareOp::kLessOrEqual, "t", Literal::TimestampNtz(eight))),
            (Files{0}));
  EXPECT_EQ(FilesMatching(snapshot, Predicate::Column({"b"})), (Files{0}));
  EXPECT_EQ(FilesMatching(snapshot, Predicate::Not(Predicate::Column({"b"}))), Files{});
}

// The index of a large snapshot is built once, from any thread, and stays compact.
TEST(FileStatsIndexTest, BuiltOnceAcrossThreadsAndCompact) {
  std::string fields;
  std::string min, max, nulls;
  constexpr int kColumns = 10;
  for (int c = 0; c < kColumns; c++) {
    const std::string name = "c" + std::to_string(c);
    fields += (c ? "," : "") + Field(name, c % 2 ? R"("long")" : R"("string")");
  }
  auto schema = Schema(fields);
  ASSERT_OK(schema.status());
  Snapshot snapshot;
  snapshot.schema = *schema;
  constexpr int kFiles = 20'000;
  for (int i = 0; i < kFiles; i++) {
    std::string stats = R"({"numRecords":100,"minValues":{)";
    std::string maxs = R"(,"maxValues":{)";
    std::string counts = R"(,"nullCount":{)";
    for (int c = 0; c < kColumns; c++) {
      const std::string sep = c ? "," : "";
      const std::string name = "\"c" + std::to_string(c) + "\":";
      stats += sep + name + (c % 2 ? std::to_string(i * 10) : "\"a" + std::to_string(i) + "\"");
      maxs += sep + name + (c % 2 ? std::to_string(i * 10 + 9) : "\"b" + std::to_string(i) + "\"");
      counts += sep + name + "0";
    }
    AddFile add;
    add.path = "f" + std::to_string(i);
    add.stats = stats + "}" + maxs + "}" + counts + "}}";
    snapshot.files.push_back(std::move(add));
  }
  std::vector<Files> results(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < results.size(); t++) {
    threads.emplace_back([&, t] {
      results[t] = FilesMatching(snapshot, Compare(CompareOp::kEqual, "c1", Literal::Long(12'345)));
    });
  }
  for (auto& thread : threads) thread.join();
  for (const Files& r : results) EXPECT_EQ(r, (Files{1234}));
  const FileStatsIndex& index = snapshot.stats_index();
  EXPECT_EQ(&index, &snapshot.stats_index());
  // 25 bytes per file and column plus short strings; far below the stats JSON itself.
  EXPECT_LT(index.MemoryBytes(), size_t{kFiles} * kColumns * 40);
}

}  // namespace
}  // namespace basin::delta
