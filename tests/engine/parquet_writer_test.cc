#include "engine/parquet_writer.h"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "delta/paths.h"
#include "engine/store_registry.h"
#include "storage/faulty_object_store.h"
#include "testing/test_util.h"

namespace basin::engine {
namespace {

using nlohmann::json;

// Every case runs on a memory and a local store: DuckDB writes through the store
// (basin:// URLs), whichever it is.
class ParquetWriterTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(db_, Database::Open());
    ASSERT_OK_AND_ASSIGN(conn_, Connection::Open(db_));
    if (GetParam() == "memory") {
      store_ = NewMemoryObjectStore();
    } else {
      ASSERT_OK_AND_ASSIGN(store_, OpenLocalObjectStore(dir_.str()));
    }
    handle_ = RegisterStore(store_);
  }

  int64_t CountFileRows(const delta::AddFile& add) {
    const std::string url = StoreUrl(handle_, delta::DecodeDataPath(add.path));
    auto r = conn_->Query("SELECT count(*) FROM read_parquet(" + QuoteLiteral(url) + ")");
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? std::stoll(*r->at(0, 0)) : -1;
  }

  testing::TempDir dir_;
  std::shared_ptr<Database> db_;
  std::unique_ptr<Connection> conn_;
  std::shared_ptr<ObjectStore> store_;
  StoreHandle handle_;
};

TEST_P(ParquetWriterTest, UnpartitionedFileHasTypedStats) {
  ASSERT_OK_AND_ASSIGN(
      auto adds,
      WriteDataFiles(
          *conn_,
          "SELECT i AS id, 'name' || i AS name, i * 0.5::DOUBLE AS score, DATE '2024-01-01' + i::INT AS day, "
          "TIMESTAMPTZ '2024-01-01 00:00:00.123456' + to_seconds(i) AS ts, "
          "CASE WHEN i % 2 = 0 THEN NULL ELSE i END AS odd, {'x': i, 'y': 'q'} AS s, [i] AS l, "
          "repeat('z', 40) AS long_text FROM range(10) t(i)",
          *store_));
  ASSERT_EQ(adds.size(), 1u);
  const delta::AddFile& add = adds[0];
  EXPECT_TRUE(add.partition_values.empty());
  EXPECT_GT(add.size, 0);
  EXPECT_GT(add.modification_time, 0);
  EXPECT_EQ(CountFileRows(add), 10);
  ASSERT_TRUE(add.stats.has_value());
  json stats = json::parse(*add.stats);
  EXPECT_EQ(stats["numRecords"], 10);
  EXPECT_EQ(stats["minValues"]["id"], 0);
  EXPECT_EQ(stats["maxValues"]["id"], 9);
  EXPECT_EQ(stats["minValues"]["name"], "name0");
  EXPECT_EQ(stats["maxValues"]["name"], "name9");
  EXPECT_DOUBLE_EQ(stats["maxValues"]["score"].get<double>(), 4.5);
  EXPECT_EQ(stats["minValues"]["day"], "2024-01-01");
  EXPECT_EQ(stats["maxValues"]["day"], "2024-01-10");
  EXPECT_EQ(stats["minValues"]["ts"], "2024-01-01T00:00:00.123Z");
  EXPECT_EQ(stats["maxValues"]["ts"], "2024-01-01T00:00:09.123Z");
  EXPECT_EQ(stats["nullCount"]["odd"], 5);
  EXPECT_EQ(stats["minValues"]["odd"], 1);
  EXPECT_EQ(stats["maxValues"]["s"]["x"], 9);
  EXPECT_EQ(stats["nullCount"]["s"]["y"], 0);
  EXPECT_FALSE(stats["minValues"].contains("l"));
  EXPECT_EQ(stats["minValues"]["long_text"], std::string(32, 'z'));
  // A cut maximum gets a tie-breaker (DEL, above 'z') so it stays an upper bound.
  EXPECT_EQ(stats["maxValues"]["long_text"], std::string(32, 'z') + "\x7F");
}

TEST_P(ParquetWriterTest, PartitionedWriteSerializesValuesAndEscapesPaths) {
  WriteOptions options;
  options.partition_columns = {"p", "d"};
  ASSERT_OK_AND_ASSIGN(auto adds,
                       WriteDataFiles(*conn_,
                                      "SELECT i AS v, CASE WHEN i = 0 THEN NULL WHEN i = 1 THEN 'a/b c%' "
                                      "ELSE 'x' END AS p, DATE '2024-03-01' AS d FROM range(4) t(i)",
                                      *store_, options));
  ASSERT_EQ(adds.size(), 3u);
  int64_t total = 0;
  bool saw_null = false, saw_escaped = false;
  for (const auto& add : adds) {
    EXPECT_EQ(add.partition_values.at("d"), "2024-03-01");
    const auto& p = add.partition_values.at("p");
    if (!p) saw_null = true;
    if (p == "a/b c%") {
      saw_escaped = true;
      // DuckDB escapes the folder name; the log escapes that again.
      EXPECT_NE(add.path.find("p=a%252Fb%2520c%2525/"), std::string::npos) << add.path;
    }
    json stats = json::parse(*add.stats);
    EXPECT_FALSE(stats["minValues"].contains("p"));
    total += CountFileRows(add);
  }
  EXPECT_TRUE(saw_null);
  EXPECT_TRUE(saw_escaped);
  EXPECT_EQ(total, 4);
}

TEST_P(ParquetWriterTest, TargetFileSizeSplitsFiles) {
  WriteOptions options;
  options.target_file_size_bytes = 50000;
  options.layout.row_group_rows = 5000;
  ASSERT_OK_AND_ASSIGN(auto adds,
                       WriteDataFiles(*conn_, "SELECT i AS v FROM range(200000) t(i)", *store_, options));
  EXPECT_GT(adds.size(), 1u);
  int64_t total = 0;
  for (const auto& add : adds) total += json::parse(*add.stats)["numRecords"].get<int64_t>();
  EXPECT_EQ(total, 200000);
}

TEST_P(ParquetWriterTest, FilesOverTheTargetAreSplitInEveryPartition) {
  constexpr int64_t kTarget = 512 * 1024;
  WriteOptions options;
  options.partition_columns = {"p"};
  options.target_file_size_bytes = kTarget;
  // md5 text barely compresses: about 10 MiB in all, 3.3 MiB a partition.
  ASSERT_OK_AND_ASSIGN(auto adds, WriteDataFiles(*conn_,
                                                 "SELECT i AS id, md5(i::VARCHAR) AS h, i % 3 AS p "
                                                 "FROM range(300000) t(i)",
                                                 *store_, options));
  std::map<std::string, int> files_per_partition;
  int64_t total = 0;
  for (const auto& add : adds) {
    files_per_partition[*add.partition_values.at("p")]++;
    EXPECT_LE(add.size, 2 * kTarget) << add.path;
    const int64_t rows = json::parse(*add.stats)["numRecords"].get<int64_t>();
    EXPECT_EQ(rows, CountFileRows(add)) << add.path;
    total += rows;
  }
  EXPECT_EQ(total, 300000);
  ASSERT_EQ(files_per_partition.size(), 3u);
  for (const auto& [partition, files] : files_per_partition) EXPECT_GE(files, 4) << "p=" << partition;
  // The files that were split are gone: the folder holds exactly the added files.
  ASSERT_OK_AND_ASSIGN(auto listed, store_->List(""));
  std::set<std::string> on_disk, added;
  for (const auto& object : listed) on_disk.insert(object.key);
  for (const auto& add : adds) added.insert(delta::DecodeDataPath(add.path));
  EXPECT_EQ(on_disk, added);
}

TEST_P(ParquetWriterTest, RowGroupsLargerThanTheTargetAreSplitToo) {
  constexpr int64_t kTarget = 256 * 1024;
  WriteOptions options;
  options.target_file_size_bytes = kTarget;
  // DuckDB rolls over only after a row group of 122880 rows, about 4 MiB here.
  ASSERT_OK_AND_ASSIGN(
      auto adds,
      WriteDataFiles(*conn_, "SELECT md5(i::VARCHAR) AS h FROM range(200000) t(i)", *store_, options));
  EXPECT_GE(adds.size(), 10u);
  int64_t total = 0;
  for (const auto& add : adds) {
    EXPECT_LE(add.size, 2 * kTarget) << add.path;
    total += CountFileRows(add);
  }
  EXPECT_EQ(total, 200000);
}

TEST_P(ParquetWriterTest, StatsColumnsChooseWhichColumnsGetStats) {
  WriteOptions options;
  options.stats_columns = std::vector<std::vector<std::string>>{{"c"}, {"s"}};
  ASSERT_OK_AND_ASSIGN(auto adds, WriteDataFiles(*conn_,
                                                 "SELECT i AS a, i AS b, i AS c, {'x': i, 'y': i} AS s "
                                                 "FROM range(5) t(i)",
                                                 *store_, options));
  ASSERT_EQ(adds.size(), 1u);
  json stats = json::parse(*adds[0].stats);
  EXPECT_FALSE(stats["minValues"].contains("a"));
  EXPECT_FALSE(stats["nullCount"].contains("b"));
  EXPECT_EQ(stats["maxValues"]["c"], 4);
  // A struct named stands for all its leaves.
  EXPECT_EQ(stats["maxValues"]["s"]["x"], 4);
  EXPECT_EQ(stats["minValues"]["s"]["y"], 0);
  EXPECT_EQ(stats["numRecords"], 5);
}

TEST_P(ParquetWriterTest, EmptyResultWritesNoFile) {
  ASSERT_OK_AND_ASSIGN(auto adds, WriteDataFiles(*conn_, "SELECT 1 AS v WHERE false", *store_));
  EXPECT_TRUE(adds.empty());
  ASSERT_OK_AND_ASSIGN(auto listed, store_->List(""));
  EXPECT_TRUE(listed.empty());
}

TEST_P(ParquetWriterTest, AddsDescribeTheStoredObjects) {
  WriteOptions options;
  options.partition_columns = {"p"};
  ASSERT_OK_AND_ASSIGN(
      auto adds, WriteDataFiles(*conn_, "SELECT i AS v, i % 2 AS p FROM range(10) t(i)", *store_, options));
  ASSERT_EQ(adds.size(), 2u);
  for (const auto& add : adds) {
    ASSERT_OK_AND_ASSIGN(auto info, store_->Head(delta::DecodeDataPath(add.path)));
    EXPECT_EQ(static_cast<int64_t>(info.size_bytes), add.size);
    EXPECT_EQ(info.modification_time_ms, add.modification_time);
  }
  // Nothing else was written: no temporary or staged copies.
  ASSERT_OK_AND_ASSIGN(auto listed, store_->List(""));
  EXPECT_EQ(listed.size(), 2u);
}

TEST_P(ParquetWriterTest, AFailedWriteLeavesNoFiles) {
  auto faulty = NewFaultyObjectStore(store_, {});
  FaultOptions fail_closing;
  // Call 1 checks the name is free, call 2 opens the file, call 3 closes it.
  fail_closing.fail_nth_call = 3;
  faulty->SetOptions(fail_closing);
  auto written = WriteDataFiles(*conn_, "SELECT i AS v FROM range(1000) t(i)", *faulty);
  ASSERT_ERROR_CODE(written, kIOError);
  EXPECT_NE(written.status().message().find("injected fault"), std::string::npos)
      << written.status().ToString();
  EXPECT_NE(written.status().message().find(faulty->Describe()), std::string::npos)
      << written.status().ToString();
  ASSERT_OK_AND_ASSIGN(auto listed, store_->List(""));
  EXPECT_TRUE(listed.empty());
}

TEST_P(ParquetWriterTest, MissingPartitionColumnIsInvalidArgument) {
  WriteOptions options;
  options.partition_columns = {"nope"};
  ASSERT_ERROR_CODE(WriteDataFiles(*conn_, "SELECT 1 AS v", *store_, options), kInvalidArgument);
}

TEST_P(ParquetWriterTest, InferDeltaSchemaMapsTypes) {
  ASSERT_OK_AND_ASSIGN(
      auto schema,
      InferDeltaSchema(*conn_,
                       "SELECT 1::BIGINT a, 'x' b, 1.5::DECIMAL(10,2) c, TIMESTAMPTZ '2024-01-01' d, "
                       "TIMESTAMP '2024-01-01' e, {'f': [1]} g"));
  ASSERT_EQ(schema.fields.size(), 6u);
  EXPECT_EQ(schema.fields[0].type->primitive, "long");
  EXPECT_EQ(schema.fields[1].type->primitive, "string");
  EXPECT_EQ(schema.fields[2].type->precision, 10);
  EXPECT_EQ(schema.fields[3].type->primitive, "timestamp");
  EXPECT_EQ(schema.fields[4].type->primitive, "timestamp_ntz");
  EXPECT_EQ(schema.fields[5].type->kind, delta::DataType::Kind::kStruct);
  ASSERT_ERROR_CODE(InferDeltaSchema(*conn_, "SELECT 1::UBIGINT u"), kUnsupported);
}

INSTANTIATE_TEST_SUITE_P(Stores, ParquetWriterTest, ::testing::Values("memory", "local"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace basin::engine
