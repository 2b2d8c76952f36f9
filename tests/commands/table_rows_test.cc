#include "commands/table_rows.h"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "commands/table_features.h"
#include "commands/write_fixture.h"
#include "engine/parquet_writer.h"
#include "testing/interop.h"

namespace basin::commands {
namespace {

using nlohmann::json;
using testing::Field;
using testing::Primitive;
using testing::Struct;

class TableRowsTest : public testing::WriteFixture {
 protected:
  WriteTarget Target() {
    auto snapshot = Load();
    return WriteTarget{snapshot->store,    snapshot->table_root, snapshot->protocol,
                       snapshot->metadata, snapshot->schema,     std::nullopt};
  }

  // The AddFiles of the latest snapshot.
  std::vector<delta::AddFile> Files() { return Load()->files.ToVector(); }
};

TEST_F(TableRowsTest, ValuesLiteralsWidenIntoTableTypes) {
  Create({Field("id", "long"), Field("x", "double"), Field("d", Primitive("decimal", 10, 2)),
          Field("s", "string"), Field("day", "date"), Field("ts", "timestamp"), Field("b", "byte")});
  // Integer literals are INTEGER, decimals DECIMAL, strings VARCHAR, NULLs INTEGER to DuckDB.
  ASSERT_OK(
      Insert("VALUES (1, 2.5, 3, 'a', '2024-02-29', '2024-01-02 03:04:05', 7), "
             "(2, 3, 4.125, NULL, NULL, '2024-01-02 00:00:00+01', NULL)"));
  EXPECT_EQ(Lines("SELECT * FROM t ORDER BY id"),
            (std::vector<std::string>{"1|2.5|3.00|a|2024-02-29|2024-01-02 03:04:05+00|7",
                                      "2|3.0|4.13|NULL|NULL|2024-01-01 23:00:00+00|NULL"}));
  ASSERT_INTEROP(Root(), 2);
}

TEST_F(TableRowsTest, LossyOrMeaninglessConversionsAreRefusedNamingTheColumn) {
  Create({Field("id", "long"), Field("n", "integer"), Field("s", "string"), Field("day", "date")});
  EXPECT_ERROR_WITH(Insert("SELECT 'x', 1, 'a', DATE '2024-01-01'"), kInvalidArgument,
                    "column id: cannot write VARCHAR into BIGINT");
  EXPECT_ERROR_WITH(Insert("SELECT 1, 2.5::DOUBLE, 'a', NULL"), kInvalidArgument,
                    "column n: cannot write DOUBLE into INTEGER");
  EXPECT_ERROR_WITH(Insert("SELECT 1, 2, 'a', TIMESTAMP '2024-01-01 10:00:00'"), kInvalidArgument,
                    "column day: cannot write TIMESTAMP into DATE");
  // An INTEGER column may be all NULLs (DuckDB's type for NULL literals): only a value fails.
  EXPECT_ERROR_WITH(Insert("VALUES (1, 2, 3, NULL)"), kInvalidArgument,
                    "column s: cannot write INTEGER into VARCHAR");
  // Values out of range, and strings that are not dates, fail naming the value.
  EXPECT_ERROR_WITH(Insert("SELECT 1, 3000000000, 'a', NULL"), kInvalidArgument,
                    "column n: value 3000000000 cannot be written as INTEGER");
  EXPECT_ERROR_WITH(Insert("SELECT 1, 2, 'a', 'yesterday'"), kInvalidArgument,
                    "column day: value yesterday cannot be written as DATE");
  EXPECT_ERROR_WITH(Insert("SELECT 1, 2"), kInvalidArgument,
                    "the table has 4 column(s) but the query gives 2");
  EXPECT_EQ(Load()->version, 0);  // nothing was committed
  ASSERT_OK(Insert("VALUES (1, 2, NULL, NULL)"));
  EXPECT_EQ(Lines("SELECT * FROM t"), std::vector<std::string>{"1|2|NULL|NULL"});
}

TEST_F(TableRowsTest, NotNullAndCheckConstraintsNameTheColumnAndValues) {
  auto inner = Struct({Field("x", "long", false), Field("y", "long")});
  Create({Field("id", "long", false), Field("amount", "integer"), Field("s", inner)}, {},
         {{"delta.constraints.positive", "amount > 0"}});
  EXPECT_ERROR_WITH(Insert("VALUES (NULL, 5, NULL)"), kInvalidArgument,
                    "NOT NULL constraint violated for column: id");
  EXPECT_ERROR_WITH(Insert("VALUES (1, -3, NULL)"), kInvalidArgument,
                    "CHECK constraint positive (amount > 0) violated by row with values: amount => -3");
  // As Delta: a NULL result violates the constraint too.
  EXPECT_ERROR_WITH(Insert("VALUES (1, NULL, NULL)"), kInvalidArgument, "amount => NULL");
  EXPECT_ERROR_WITH(Insert("SELECT 1, 5, {'x': NULL, 'y': 2}"), kInvalidArgument,
                    "NOT NULL constraint violated for column: s.x");
  EXPECT_EQ(Load()->version, 0);
  ASSERT_OK(Insert("SELECT 1, 5, NULL UNION ALL SELECT 2, 6, {'x': 1, 'y': NULL}"));
  EXPECT_EQ(Lines("SELECT id, amount, s.x FROM t ORDER BY id"),
            (std::vector<std::string>{"1|5|NULL", "2|6|1"}));
}

TEST_F(TableRowsTest, GeneratedColumnsAreComputedOrChecked) {
  auto generated = Field("doubled", "long");
  generated.metadata["delta.generationExpression"] = "id * 2";
  Create({Field("id", "long"), generated, Field("name", "string")});
  // By position without the generated column, or with it (then it must match).
  ASSERT_OK(Insert("VALUES (1, 'a')"));
  ASSERT_OK(Insert("VALUES (2, 4, 'b')"));
  EXPECT_ERROR_WITH(Insert("VALUES (3, 7, 'c')"), kInvalidArgument,
                    "column doubled is generated as (id * 2)");
  RowShape listed;
  listed.columns = std::vector<std::string>{"name", "id"};
  ASSERT_OK(Insert("VALUES ('c', 3)", WriteMode::kAppend, listed));
  EXPECT_EQ(Lines("SELECT * FROM t ORDER BY id"), (std::vector<std::string>{"1|2|a", "2|4|b", "3|6|c"}));
}

TEST_F(TableRowsTest, ColumnListsAndByNameFillTheRestWithNull) {
  Create({Field("a", "long"), Field("b", "string"), Field("c", "double")});
  RowShape listed;
  listed.columns = std::vector<std::string>{"C", "a"};
  ASSERT_OK(Insert("VALUES (1.5, 1)", WriteMode::kAppend, listed));
  RowShape by_name;
  by_name.by_name = true;
  ASSERT_OK(Insert("SELECT 'x' AS b, 2 AS a", WriteMode::kAppend, by_name));
  EXPECT_ERROR_WITH(Insert("SELECT 3 AS a, 4 AS zzz", WriteMode::kAppend, by_name), kInvalidArgument,
                    "column zzz is not in the table");
  listed.columns = std::vector<std::string>{"a", "A"};
  EXPECT_ERROR_WITH(Insert("VALUES (1, 2)", WriteMode::kAppend, listed), kInvalidArgument,
                    "column a is given twice");
  EXPECT_EQ(Lines("SELECT * FROM t ORDER BY a"), (std::vector<std::string>{"1|NULL|1.5", "2|x|NULL"}));
}

TEST_F(TableRowsTest, SchemaEvolutionAddsColumnsAndNestedFields) {
  Create({Field("id", "long"), Field("s", Struct({Field("x", "long")}))});
  ASSERT_OK(Insert("SELECT 1, {'x': 1}"));
  RowShape shape;
  shape.by_name = true;
  shape.schema_evolution = true;
  ASSERT_OK_AND_ASSIGN(
      PlannedRows planned,
      PlanRows(*conn_, Target(), "SELECT 2 AS id, {'x': 2, 'z': 'new'} AS s, 'extra' AS note", shape));
  ASSERT_TRUE(planned.new_metadata.has_value());
  EXPECT_FALSE(planned.new_protocol.has_value());  // no feature is needed for new columns
  ASSERT_OK(Insert("SELECT 2 AS id, {'x': 2, 'z': 'new'} AS s, 'extra' AS note", WriteMode::kAppend, shape));
  auto snapshot = Load();
  ASSERT_EQ(snapshot->schema.fields.size(), 3u);
  EXPECT_EQ(snapshot->schema.fields[2].name, "note");
  EXPECT_EQ(snapshot->schema.fields[1].type->struct_type.fields.size(), 2u);
  EXPECT_EQ(Lines("SELECT id, s.x, s.z, note FROM t ORDER BY id"),
            (std::vector<std::string>{"1|1|NULL|NULL", "2|2|new|extra"}));
  ASSERT_INTEROP(Root(), 2);
}

TEST_F(TableRowsTest, TypeWideningEvolvesNarrowColumnsWhenEnabled) {
  Create({Field("id", "short"), Field("f", "float")}, {}, {{"delta.enableTypeWidening", "true"}});
  RowShape shape;
  shape.schema_evolution = true;
  ASSERT_OK(Insert("SELECT 100000::BIGINT, 1.5::DOUBLE", WriteMode::kAppend, shape));
  auto snapshot = Load();
  EXPECT_EQ(snapshot->schema.fields[0].type->primitive, "long");
  EXPECT_EQ(snapshot->schema.fields[1].type->primitive, "double");
  EXPECT_EQ(snapshot->schema.fields[0].metadata["delta.typeChanges"],
            json::parse(R"([{"fromType": "short", "toType": "long"}])"));
  EXPECT_TRUE(snapshot->protocol.HasReaderFeature("typeWidening")) << snapshot->metadata.schema_string;
  EXPECT_EQ(Lines("SELECT * FROM t"), std::vector<std::string>{"100000|1.5"});

  // Without evolution a wider type is narrowed value by value.
  Create({Field("id", "short")}, {}, {}, "plain");
  EXPECT_ERROR_WITH(Insert("SELECT 100000::BIGINT", WriteMode::kAppend, {}, "", "plain"), kInvalidArgument,
                    "value 100000 cannot be written as SMALLINT");
  ASSERT_OK(Insert("SELECT 7::BIGINT", WriteMode::kAppend, {}, "", "plain"));
  EXPECT_EQ(Load("plain")->schema.fields[0].type->primitive, "short");
}

TEST_F(TableRowsTest, ColumnMappingWritesPhysicalNames) {
  Create({Field("id", "long"), Field("s", Struct({Field("inner", "string")})), Field("part", "string")},
         {"part"}, {{"delta.columnMapping.mode", "name"}});
  ASSERT_OK(Insert("SELECT 1, {'inner': 'v'}, 'p1'"));
  auto snapshot = Load();
  const delta::StructField& id = snapshot->schema.fields[0];
  ASSERT_NE(id.PhysicalName(), "id");
  ASSERT_EQ(snapshot->files.size(), 1u);
  const delta::AddFile& file = snapshot->files[0];
  EXPECT_EQ(file.partition_values.count(snapshot->schema.fields[2].PhysicalName()), 1u);
  EXPECT_NE(file.stats->find(id.PhysicalName()), std::string::npos) << *file.stats;
  // The file itself has only physical names, nested ones too.
  std::string data_file;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(Root())) {
    if (entry.path().extension() == ".parquet") data_file = entry.path().string();
  }
  ASSERT_OK_AND_ASSIGN(auto described, conn_->DescribeQuery("SELECT * FROM read_parquet('" + data_file +
                                                            "', hive_partitioning = false)"));
  ASSERT_EQ(described.size(), 2u);
  EXPECT_EQ(described[0].name, id.PhysicalName());
  EXPECT_EQ(described[1].children[0].name,
            snapshot->schema.fields[1].type->struct_type.fields[0].PhysicalName());
  // LogicalColumnsSql reads them back under logical names.
  ASSERT_OK_AND_ASSIGN(
      auto rows, conn_->Query("SELECT " + LogicalColumnsSql(snapshot->schema) + " FROM (SELECT *, 'p1' AS " +
                              engine::QuoteIdentifier(snapshot->schema.fields[2].PhysicalName()) +
                              " FROM read_parquet('" + data_file + "', hive_partitioning = false))"));
  EXPECT_EQ(rows.column_names, (std::vector<std::string>{"id", "s", "part"}));
  EXPECT_EQ(rows.at(0, 1), "{'inner': v}");
  EXPECT_EQ(Lines("SELECT id, s.inner, part FROM t"), std::vector<std::string>{"1|v|p1"});

  // Evolution gives new columns a mapping id and physical name.
  RowShape shape;
  shape.by_name = true;
  shape.schema_evolution = true;
  ASSERT_OK(Insert("SELECT 2 AS id, 'p2' AS part, 10 AS added", WriteMode::kAppend, shape));
  snapshot = Load();
  ASSERT_EQ(snapshot->schema.fields.size(), 4u);
  EXPECT_TRUE(snapshot->schema.fields[3].ColumnMappingId().has_value());
  EXPECT_NE(snapshot->schema.fields[3].PhysicalName(), "added");
  EXPECT_EQ(Lines("SELECT id, added FROM t ORDER BY id"), (std::vector<std::string>{"1|NULL", "2|10"}));
  ASSERT_INTEROP(Root(), 2);
}

// Leaf names, kinds, DECIMAL widths and scalar type names as DuckDB describes them.
void ExpectSameColumnType(const engine::ColumnType& given, const engine::ColumnType& described,
                          const std::string& where) {
  SCOPED_TRACE(where);
  EXPECT_EQ(given.name, described.name);
  ASSERT_EQ(given.kind, described.kind);
  if (given.kind == engine::ColumnType::Kind::kScalar) {
    EXPECT_EQ(given.type_name, described.type_name);
  }
  EXPECT_EQ(given.width, described.width);
  EXPECT_EQ(given.scale, described.scale);
  ASSERT_EQ(given.children.size(), described.children.size());
  for (size_t i = 0; i < given.children.size(); i++) {
    ExpectSameColumnType(given.children[i], described.children[i], where + "." + given.children[i].name);
  }
}

TEST_F(TableRowsTest, StoredColumnTypesAreWhatDuckDBDescribesOfStoredRows) {
  auto list = std::make_shared<delta::DataType>();
  list->kind = delta::DataType::Kind::kArray;
  list->element_type = Struct({Field("e", "integer")});
  auto map = std::make_shared<delta::DataType>();
  map->kind = delta::DataType::Kind::kMap;
  map->key_type = Primitive("string");
  map->value_type = Primitive("decimal", 20, 4);
  std::vector<delta::StructField> fields = {
      Field("l", "long"),
      Field("i", "integer"),
      Field("sh", "short"),
      Field("b", "byte"),
      Field("f", "float"),
      Field("d", "double"),
      Field("dec", Primitive("decimal", 12, 3)),
      Field("s", "string"),
      Field("bin", "binary"),
      Field("ok", "boolean"),
      Field("day", "date"),
      Field("ts", "timestamp"),
      Field("ntz", "timestamp_ntz"),
      Field("nested", Struct({Field("x", "long"), Field("deeper", Struct({Field("y", "date")}))})),
      Field("list", list),
      Field("map", map)};
  for (const char* mode : {"none", "name"}) {
    SCOPED_TRACE(std::string("column mapping ") + mode);
    Create(fields, {}, {{"delta.columnMapping.mode", mode}});
    WriteTarget target = Target();
    std::string logical;
    for (const delta::StructField& f : target.schema.fields) {
      logical += (logical.empty() ? "SELECT " : ", ") + std::string("CAST(NULL AS ") +
                 f.type->ToDuckDBType() + ") AS " + engine::QuoteIdentifier(f.name);
    }
    ASSERT_OK_AND_ASSIGN(std::string stored, StoredRowsSql(target, logical));
    ASSERT_OK_AND_ASSIGN(std::vector<engine::ColumnType> described, conn_->DescribeQuery(stored));
    const std::vector<engine::ColumnType> given =
        engine::StoredColumnTypes(target.schema, delta::ColumnMappingEnabled(target.metadata));
    ASSERT_EQ(given.size(), described.size());
    for (size_t i = 0; i < given.size(); i++) ExpectSameColumnType(given[i], described[i], given[i].name);
    std::filesystem::remove_all(Root());
  }
}

TEST_F(TableRowsTest, PartitionValuesAreSerializedAsTheProtocolSays) {
  Create({Field("id", "long"), Field("day", "date"), Field("ts", "timestamp"), Field("ntz", "timestamp_ntz"),
          Field("s", "string")},
         {"day", "ts", "ntz", "s"});
  ASSERT_OK(
      Insert("VALUES (1, DATE '2024-01-02', TIMESTAMPTZ '2024-01-02 03:04:05.5+02', "
             "TIMESTAMP '2024-01-02 03:04:05', 'a/b=c d%'), (2, NULL, NULL, NULL, NULL), "
             "(3, NULL, NULL, NULL, 'NULL')"));
  std::map<std::string, delta::PartitionValues> by_id;
  for (const delta::AddFile& file : Files()) {
    json stats = json::parse(*file.stats);
    by_id[std::to_string(stats["minValues"]["id"].get<int64_t>())] = file.partition_values;
  }
  ASSERT_EQ(by_id.size(), 3u);
  EXPECT_EQ(by_id["1"].at("day"), "2024-01-02");
  EXPECT_EQ(by_id["1"].at("ts"), "2024-01-02 01:04:05.500000");
  EXPECT_EQ(by_id["1"].at("ntz"), "2024-01-02 03:04:05.000000");
  EXPECT_EQ(by_id["1"].at("s"), "a/b=c d%");
  EXPECT_EQ(by_id["2"].at("s"), std::nullopt);
  EXPECT_EQ(by_id["2"].at("day"), std::nullopt);
  EXPECT_EQ(by_id["3"].at("s"), "NULL");
  EXPECT_EQ(Lines("SELECT id, day, ts, ntz, s FROM t ORDER BY id"),
            (std::vector<std::string>{"1|2024-01-02|2024-01-02 01:04:05.5+00|2024-01-02 03:04:05|a/b=c d%",
                                      "2|NULL|NULL|NULL|NULL", "3|NULL|NULL|NULL|NULL"}));
  ASSERT_INTEROP(Root(), 3);
}

TEST_F(TableRowsTest, StringStatsAreTruncatedToBoundsAsDeltaWrites) {
  Create({Field("s", "string"), Field("n", Struct({Field("x", "long")}))});
  const std::string long_a(40, 'a');
  ASSERT_OK(Insert("VALUES ('" + long_a + "', {'x': 5}), ('" + std::string(31, 'b') + "é" +
                   std::string(5, 'z') + "', {'x': 9}), ('" + std::string(32, 'c') + "', NULL)"));
  ASSERT_EQ(Files().size(), 1u);
  json stats = json::parse(*Files()[0].stats);
  EXPECT_EQ(stats["minValues"]["s"], std::string(32, 'a'));
  EXPECT_EQ(stats["maxValues"]["s"], std::string(32, 'c'));  // exactly 32 characters: kept whole
  EXPECT_EQ(stats["minValues"]["n"]["x"], 5);
  EXPECT_EQ(stats["maxValues"]["n"]["x"], 9);
  EXPECT_EQ(stats["nullCount"]["n"]["x"], 1);

  ASSERT_OK(Insert("VALUES ('" + std::string(31, 'b') + "é" + std::string(5, 'z') + "', NULL)"));
  for (const delta::AddFile& file : Files()) {
    json s = json::parse(*file.stats);
    if (s["numRecords"] != 1) continue;
    // 31 b's and é make the 32-character prefix; the next character 'z' < DEL.
    EXPECT_EQ(s["maxValues"]["s"], std::string(31, 'b') + "é\x7F");
    EXPECT_EQ(s["minValues"]["s"], std::string(31, 'b') + "é");
  }
  ASSERT_INTEROP(Root(), 4);
}

TEST_F(TableRowsTest, TablePropertiesSizeFilesAndStats) {
  constexpr int64_t kTarget = 256 * 1024;
  Create({Field("a", "long"), Field("b", "long"), Field("c", "string"), Field("p", "long")}, {"p"},
         {{"delta.targetFileSize", "256kb"}, {"delta.dataSkippingNumIndexedCols", "1"}});
  // About 3 MiB of barely compressible text in each of 3 partitions: DuckDB writes one file
  // a partition, which Basin splits toward the target.
  ASSERT_OK(Insert("SELECT range, range * 2, md5(range::VARCHAR), range % 3 FROM range(300000)"));
  auto files = Files();
  std::map<std::string, int> files_per_partition;
  int64_t total = 0;
  for (const delta::AddFile& file : files) {
    files_per_partition[*file.partition_values.at("p")]++;
    EXPECT_LE(file.size, 2 * kTarget) << file.path;
    json stats = json::parse(*file.stats);
    total += stats["numRecords"].get<int64_t>();
    EXPECT_TRUE(stats["minValues"].contains("a"));
    EXPECT_FALSE(stats["minValues"].contains("b")) << *file.stats;
  }
  EXPECT_EQ(total, 300000);
  ASSERT_EQ(files_per_partition.size(), 3u);
  for (const auto& [partition, count] : files_per_partition) EXPECT_GE(count, 4) << "p=" << partition;
  EXPECT_EQ(Lines("SELECT count(*), sum(b) FROM t"), std::vector<std::string>{"300000|89999700000"});
  ASSERT_INTEROP(Root(), 300000);
}

// A value ValidateTableProperties accepts is one the writer reads (it used to refuse "1g"
// as "not a number" after ALTER TABLE had accepted it).
TEST_F(TableRowsTest, EveryAcceptedTargetFileSizeSpellingWrites) {
  int i = 0;
  for (const char* size : {"1g", "1G", "2gb", "64m", "64 MB", "100mb", "512k", "1048576", "1048576b", "1t"}) {
    SCOPED_TRACE(size);
    ASSERT_OK(ValidateTableProperties({{"delta.targetFileSize", size}}));
    const std::string name = "sized" + std::to_string(i++);
    Create({Field("id", "long")}, {}, {{"delta.targetFileSize", size}}, name);
    ASSERT_OK(Insert("SELECT range FROM range(10)", WriteMode::kAppend, {}, "", name));
    EXPECT_EQ(Query("SELECT count(*) FROM t", name), (testing::Rows{{"10"}}));
  }
}

TEST_F(TableRowsTest, StatsColumnsPropertyNamesLogicalColumnsUnderColumnMapping) {
  Create({Field("id", "long"), Field("s", Struct({Field("inner", "string"), Field("n", "long")})),
          Field("other", "long")},
         {},
         {{"delta.columnMapping.mode", "name"}, {"delta.dataSkippingStatsColumns", "S.inner, other, gone"}});
  ASSERT_OK(Insert("SELECT 1, {'inner': 'v', 'n': 5}, 7"));
  auto snapshot = Load();
  ASSERT_EQ(snapshot->files.size(), 1u);
  json stats = json::parse(*snapshot->files[0].stats);
  const auto& fields = snapshot->schema.fields;
  const std::string s = fields[1].PhysicalName();
  EXPECT_FALSE(stats["minValues"].contains(fields[0].PhysicalName())) << stats.dump();
  EXPECT_EQ(stats["minValues"][s][fields[1].type->struct_type.fields[0].PhysicalName()], "v") << stats.dump();
  EXPECT_FALSE(stats["minValues"][s].contains(fields[1].type->struct_type.fields[1].PhysicalName()));
  EXPECT_EQ(stats["maxValues"][fields[2].PhysicalName()], 7) << stats.dump();
  ASSERT_INTEROP(Root(), 1);
}

TEST_F(TableRowsTest, StoredRowsSqlRecomputesGeneratedColumnsAndChecks) {
  auto generated = Field("g", "long");
  generated.metadata["delta.generationExpression"] = "a + 100";
  Create({Field("a", "long", false), generated}, {}, {{"delta.constraints.small", "a < 10"}});
  WriteTarget target = Target();
  ASSERT_OK_AND_ASSIGN(std::string stored, StoredRowsSql(target, "SELECT 999 AS g, 5 AS a"));
  ASSERT_OK_AND_ASSIGN(auto rows, conn_->Query(stored));
  EXPECT_EQ(rows.at(0, 0), "5");
  EXPECT_EQ(rows.at(0, 1), "105");
  ASSERT_OK_AND_ASSIGN(stored, StoredRowsSql(target, "SELECT 0 AS g, 50 AS a"));
  EXPECT_ERROR_WITH(WriteRows(*conn_, target, stored), kInvalidArgument, "CHECK constraint small (a < 10)");
  ASSERT_OK_AND_ASSIGN(stored, StoredRowsSql(target, "SELECT 0 AS g, NULL AS a"));
  EXPECT_ERROR_WITH(WriteRows(*conn_, target, stored), kInvalidArgument,
                    "NOT NULL constraint violated for column: a");
}

}  // namespace
}  // namespace basin::commands
