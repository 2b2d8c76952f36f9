// A Spark-shaped classic checkpoint with 10,000 files (MAP partition values, JSON stats plus
// stats_parsed and partitionValues_parsed structs) must load quickly.
#include <chrono>

#include "delta/log_segment.h"
#include "delta/snapshot.h"
#include "engine/duckdb.h"
#include "engine/parquet_log_io.h"
#include "testing/test_util.h"

namespace basin::delta {
namespace {

constexpr int kFiles = 10000;

TEST(CheckpointScaleTest, TenThousandFileCheckpointLoadsQuickly) {
  testing::TempDir dir;
  ASSERT_OK_AND_ASSIGN(auto store, OpenLocalObjectStore(dir.str()));
  ASSERT_OK_AND_ASSIGN(auto db, engine::Database::Open());
  ASSERT_OK_AND_ASSIGN(auto conn, engine::Connection::Open(db));
  std::string schema =
      R"({"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},)"
      R"({"name":"value","type":"string","nullable":true,"metadata":{}},{"name":"part","type":"integer","nullable":true,"metadata":{}}]})";
  std::string checkpoint = (dir.path() / "_delta_log" / "00000000000000000000.checkpoint.parquet").string();
  ASSERT_OK(store->Put(CommitKey(0), "{}\n"));
  ASSERT_OK(conn->Execute(
      "COPY (SELECT {'path': 'part=' || (i % 100) || '/part-' || lpad(i::VARCHAR, 5, '0') || "
      "'-6b1b4a4e-1e5e-4e47-a1c8-c000.snappy.parquet', 'partitionValues': MAP {'part': (i % 100)::VARCHAR}, "
      "'size': 1000 + i, 'modificationTime': 1700000000000 + i, 'dataChange': false, "
      "'stats': '{\"numRecords\":10,\"minValues\":{\"id\":' || i || "
      "',\"value\":\"a\"},\"maxValues\":{\"id\":' || "
      "(i + 9) || ',\"value\":\"z\"},\"nullCount\":{\"id\":0,\"value\":0}}', 'tags': NULL::MAP(VARCHAR, "
      "VARCHAR), "
      "'deletionVector': NULL::STRUCT(storageType VARCHAR, pathOrInlineDv VARCHAR, \"offset\" INTEGER, "
      "sizeInBytes INTEGER, cardinality BIGINT), "
      "'stats_parsed': {'numRecords': 10::BIGINT, 'minValues': {'id': i, 'value': 'a'}, "
      "'maxValues': {'id': i + 9, 'value': 'z'}, 'nullCount': {'id': 0::BIGINT, 'value': 0::BIGINT}}, "
      "'partitionValues_parsed': {'part': (i % 100)::INTEGER}} AS add, "
      "NULL::STRUCT(path VARCHAR, deletionTimestamp BIGINT, dataChange BOOLEAN) AS remove, "
      "NULL::STRUCT(minReaderVersion INTEGER, minWriterVersion INTEGER) AS protocol, "
      "NULL::STRUCT(id VARCHAR, schemaString VARCHAR, partitionColumns VARCHAR[], "
      "format STRUCT(provider VARCHAR, options MAP(VARCHAR, VARCHAR)), configuration MAP(VARCHAR, VARCHAR)) "
      "AS metaData "
      "FROM range(" +
      std::to_string(kFiles) +
      ") t(i) "
      "UNION ALL SELECT NULL, NULL, {'minReaderVersion': 1, 'minWriterVersion': 2}, NULL "
      "UNION ALL SELECT NULL, NULL, NULL, {'id': 'x', 'schemaString': " +
      engine::QuoteLiteral(schema) +
      ", 'partitionColumns': ['part'], 'format': {'provider': 'parquet', 'options': MAP {}}, "
      "'configuration': MAP {}}"
      ") TO " +
      engine::QuoteLiteral(checkpoint) + " (FORMAT parquet)"));

  auto start = std::chrono::steady_clock::now();
  engine::DuckDBParquetLogIO log_io;
  ASSERT_OK_AND_ASSIGN(auto snapshot, LoadSnapshot(store, dir.str(), log_io));
  auto elapsed_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
  std::printf("loaded a %d-file checkpoint in %lld ms\n", kFiles, static_cast<long long>(elapsed_ms));
  EXPECT_EQ(snapshot->files.size(), static_cast<size_t>(kFiles));
  EXPECT_EQ(snapshot->num_records(), 10 * kFiles);
  EXPECT_EQ(snapshot->files[0].partition_values.size(), 1u);
  // Speed is measured against a peer in bench/snapshot_bench.cc, not asserted here.
}

}  // namespace
}  // namespace basin::delta
