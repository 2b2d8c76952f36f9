#include "engine/scan.h"

#include <gtest/gtest.h>

#include "engine/parquet_log_io.h"
#include "engine/parquet_writer.h"
#include "testing/test_util.h"

namespace basin::engine {
namespace {

class ScanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(db_, Database::Open());
    ASSERT_OK_AND_ASSIGN(conn_, Connection::Open(db_));
    ASSERT_OK_AND_ASSIGN(store_, OpenLocalObjectStore(dir_.str()));
    snapshot_.store = store_;
    snapshot_.table_root = dir_.str();
    snapshot_.version = 0;
  }

  void SetSchema(const std::string& schema_json, std::vector<std::string> partition_columns = {}) {
    auto schema = delta::ParseSchema(schema_json);
    ASSERT_TRUE(schema.ok()) << schema.status().ToString();
    snapshot_.schema = *schema;
    snapshot_.metadata.schema_string = schema_json;
    snapshot_.metadata.partition_columns = std::move(partition_columns);
  }

  void AddFiles(const std::string& select_sql, const WriteOptions& options = {}) {
    auto adds = WriteDataFiles(*conn_, select_sql, *store_, options);
    ASSERT_TRUE(adds.ok()) << adds.status().ToString();
    for (auto& add : *adds) snapshot_.files.push_back(std::move(add));
  }

  QueryResult Scan(const std::string& outer = "SELECT * FROM ({}) ORDER BY ALL",
                   const ScanOptions& options = {}) {
    auto plan = BuildScanSql(snapshot_, *conn_, options);
    EXPECT_TRUE(plan.ok()) << plan.status().ToString();
    if (!plan.ok()) return {};
    std::string sql = outer;
    sql.replace(sql.find("{}"), 2, plan->sql);
    auto r = conn_->Query(sql);
    EXPECT_TRUE(r.ok()) << r.status().ToString() << "\n" << sql;
    return r.ok() ? *r : QueryResult{};
  }

  static std::string Field(const std::string& name, const std::string& type,
                           const std::string& physical = "") {
    std::string metadata =
        physical.empty() ? "{}" : R"({"delta.columnMapping.physicalName":")" + physical + "\"}";
    return R"({"name":")" + name + R"(","type":)" + type + R"(,"nullable":true,"metadata":)" + metadata + "}";
  }
  static std::string Struct(const std::vector<std::string>& fields) {
    std::string out = R"({"type":"struct","fields":[)";
    for (size_t i = 0; i < fields.size(); i++) out += (i > 0 ? "," : "") + fields[i];
    return out + "]}";
  }

  testing::TempDir dir_;
  std::shared_ptr<Database> db_;
  std::unique_ptr<Connection> conn_;
  std::shared_ptr<ObjectStore> store_;
  delta::Snapshot snapshot_;
};

TEST_F(ScanTest, ScanSqlNamesNoFiles) {
  SetSchema(Struct({Field("id", "\"long\""), Field("name", "\"string\"")}));
  AddFiles("SELECT i AS id, 'n' || i AS name FROM range(3) t(i)");
  AddFiles("SELECT i + 3 AS id, 'n' || i AS name FROM range(2) t(i)");
  ASSERT_OK_AND_ASSIGN(ScanPlan plan, BuildScanSql(snapshot_, *conn_));
  // The snapshot is registered with the connection: its files never appear in SQL text.
  EXPECT_EQ(plan.sql.find(".parquet"), std::string::npos) << plan.sql;
  EXPECT_EQ(plan.files_total, 2u);
  QueryResult r = Scan("SELECT count(*), sum(id) FROM ({})");
  EXPECT_EQ(r.at(0, 0), "5");
  EXPECT_EQ(r.at(0, 1), "10");
}

TEST_F(ScanTest, PartitionValuesIncludingNullBecomeTypedConstants) {
  SetSchema(Struct({Field("v", "\"integer\""), Field("p", "\"string\""), Field("d", "\"date\""),
                    Field("ts", "\"timestamp\"")}),
            {"p", "d", "ts"});
  WriteOptions options;
  options.partition_columns = {"p", "d", "ts"};
  AddFiles(
      "SELECT i::INT AS v, CASE WHEN i = 0 THEN NULL ELSE 'x' || i END AS p, DATE '2024-01-02' AS d, "
      "TIMESTAMPTZ '2024-01-02 03:04:05.5' AS ts FROM range(3) t(i)",
      options);
  QueryResult r = Scan("SELECT v, p, d, ts, typeof(d), typeof(ts) FROM ({}) ORDER BY v");
  ASSERT_EQ(r.row_count(), 3u);
  EXPECT_EQ(r.at(0, 1), std::nullopt);
  EXPECT_EQ(r.at(1, 1), "x1");
  EXPECT_EQ(r.at(2, 2), "2024-01-02");
  EXPECT_EQ(r.at(2, 3), "2024-01-02 03:04:05.5+00");
  EXPECT_EQ(r.at(0, 4), "DATE");
  EXPECT_EQ(r.at(0, 5), "TIMESTAMP WITH TIME ZONE");
  // Only one partition group is read when the scan is restricted to one file.
  ScanOptions one;
  one.file_indexes = std::vector<size_t>{0};
  EXPECT_EQ(Scan("SELECT count(*) FROM ({})", one).at(0, 0), "1");
}

TEST_F(ScanTest, IsoPartitionTimestampsAndEmptyStringsForNonStrings) {
  SetSchema(Struct({Field("v", "\"integer\""), Field("ts", "\"timestamp\""), Field("n", "\"long\"")}),
            {"ts", "n"});
  AddFiles("SELECT 1::INT AS v");
  std::vector<delta::AddFile> files = snapshot_.files.ToVector();
  files[0].partition_values = {{"ts", "2024-01-01T10:00:00.000000Z"}, {"n", ""}};
  snapshot_.files = std::move(files);
  QueryResult r = Scan();
  EXPECT_EQ(r.at(0, 1), "2024-01-01 10:00:00+00");
  EXPECT_EQ(r.at(0, 2), std::nullopt);
}

TEST_F(ScanTest, ColumnsMissingFromFilesAreNullAndOldTypesWiden) {
  SetSchema(Struct({Field("id", "\"long\""), Field("added", "\"string\""), Field("void_col", "\"void\""),
                    Field("s", Struct({Field("a", "\"long\""), Field("b", "\"string\"")}))}));
  // An older file: id was an INTEGER and the struct had only `a`.
  AddFiles("SELECT 1::INT AS id, {'a': 10::INT} AS s");
  AddFiles("SELECT 2::BIGINT AS id, 'new' AS added, {'a': 20::BIGINT, 'b': 'x'} AS s");
  QueryResult r = Scan("SELECT id, added, void_col, s, typeof(id), typeof(s) FROM ({}) ORDER BY id");
  ASSERT_EQ(r.row_count(), 2u);
  EXPECT_EQ(r.at(0, 1), std::nullopt);
  EXPECT_EQ(r.at(0, 2), std::nullopt);
  EXPECT_EQ(r.at(0, 3), "{'a': 10, 'b': NULL}");
  EXPECT_EQ(r.at(1, 1), "new");
  EXPECT_EQ(r.at(1, 3), "{'a': 20, 'b': x}");
  EXPECT_EQ(r.at(0, 4), "BIGINT");
  EXPECT_EQ(r.at(0, 5), "STRUCT(a BIGINT, b VARCHAR)");
}

TEST_F(ScanTest, ColumnMappingRenamesNestedFields) {
  SetSchema(Struct({Field("id", "\"long\"", "col-1"),
                    Field("info", Struct({Field("city", "\"string\"", "col-3")}), "col-2"),
                    Field("tags",
                          R"({"type":"array","elementType":)" + Struct({Field("k", "\"string\"", "col-5")}) +
                              R"(,"containsNull":true})",
                          "col-4"),
                    Field("m",
                          R"({"type":"map","keyType":"string","valueType":)" +
                              Struct({Field("x", "\"integer\"", "col-7")}) + R"(,"valueContainsNull":true})",
                          "col-6")}));
  snapshot_.metadata.configuration["delta.columnMapping.mode"] = "name";
  AddFiles(R"(SELECT 1::BIGINT AS "col-1", {'col-3': 'Oslo'} AS "col-2", [{'col-5': 'a'}, NULL] AS "col-4",
              MAP {'q': {'col-7': 7}} AS "col-6"
              UNION ALL SELECT 2, NULL, NULL, NULL)");
  QueryResult r = Scan("SELECT id, info.city, tags[1].k, m['q'].x, info, tags FROM ({}) ORDER BY id");
  ASSERT_EQ(r.row_count(), 2u);
  EXPECT_EQ(r.column_names[0], "id");
  EXPECT_EQ(r.at(0, 1), "Oslo");
  EXPECT_EQ(r.at(0, 2), "a");
  EXPECT_EQ(r.at(0, 3), "7");
  EXPECT_EQ(r.at(0, 5), "[{'k': a}, NULL]");
  EXPECT_EQ(r.at(1, 4), std::nullopt);  // a NULL struct stays NULL, not a struct of NULLs
  EXPECT_EQ(r.at(1, 5), std::nullopt);
}

TEST_F(ScanTest, EmptySnapshotHasSchemaAndNoRows) {
  SetSchema(Struct({Field("id", "\"long\""), Field("d", "\"decimal(10,2)\"")}));
  ASSERT_OK_AND_ASSIGN(auto columns, conn_->DescribeQuery(BuildScanSql(snapshot_, *conn_)->sql));
  ASSERT_EQ(columns.size(), 2u);
  EXPECT_EQ(columns[1].type_name, "DECIMAL(10,2)");
  EXPECT_EQ(Scan("SELECT count(*) FROM ({})").at(0, 0), "0");
}

TEST_F(ScanTest, VariantColumnsAreJsonText) {
  SetSchema(Struct({Field("v", "\"variant\"")}));
  ASSERT_OK_AND_ASSIGN(ScanPlan plan, BuildScanSql(snapshot_, *conn_));
  ASSERT_OK_AND_ASSIGN(auto columns, conn_->DescribeQuery(plan.sql));
  EXPECT_EQ(columns[0].type_name, "VARCHAR");
}

TEST_F(ScanTest, DeletionVectorsRemoveRowsInsideTheScan) {
  SKIP_WITHOUT_SHARED_TESTDATA(testdata);
  std::string root = (testdata / "delta/delta-kernel-rs/with-short-dv").string();
  ASSERT_OK_AND_ASSIGN(auto store, OpenLocalObjectStore(root));
  DuckDBParquetLogIO log_io;
  ASSERT_OK_AND_ASSIGN(auto snapshot, delta::LoadSnapshot(store, root, log_io));
  ScanOptions options;
  options.row_positions = true;
  ASSERT_OK_AND_ASSIGN(ScanPlan plan, BuildScanSql(*snapshot, *conn_, options));
  // Read the rows (a bare count(*) is answered from the log's statistics).
  ASSERT_OK_AND_ASSIGN(QueryResult r, conn_->Query("SELECT count(*) FROM (" + plan.sql + ") WHERE " +
                                                   kScanRowIndexColumn + " >= 0"));
  EXPECT_EQ(r.at(0, 0), "7");
  ASSERT_OK_AND_ASSIGN(QueryResult temps,
                       conn_->Query("SELECT count(*) FROM duckdb_tables() WHERE temporary"));
  EXPECT_EQ(temps.at(0, 0), "0");
}

TEST_F(ScanTest, RowPositionsNameTheFileAndRow) {
  SetSchema(Struct({Field("id", "\"long\"")}));
  AddFiles("SELECT i AS id FROM range(3) t(i)");
  AddFiles("SELECT i + 3 AS id FROM range(2) t(i)");
  ScanOptions options;
  options.row_positions = true;
  ASSERT_OK_AND_ASSIGN(ScanPlan plan, BuildScanSql(snapshot_, *conn_, options));
  ASSERT_OK_AND_ASSIGN(QueryResult r, conn_->Query("SELECT id, " + std::string(kScanFileColumn) + ", " +
                                                   kScanRowIndexColumn + " FROM (" + plan.sql + ") ORDER BY id"));
  ASSERT_EQ(r.row_count(), 5u);
  for (size_t row = 0; row < r.row_count(); row++) {
    auto file = plan.file_index_by_path.find(r.at(row, 1).value_or(""));
    ASSERT_NE(file, plan.file_index_by_path.end());
    EXPECT_EQ(file->second, row < 3 ? 0u : 1u);
    EXPECT_EQ(r.at(row, 2), std::to_string(row < 3 ? row : row - 3));
  }
}

}  // namespace
}  // namespace basin::engine
