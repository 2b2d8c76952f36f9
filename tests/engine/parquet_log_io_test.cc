// DuckDBParquetLogIO: checkpoint Parquet files written and read back action for action,
// struct-only stats and partition values, files of other writers, and errors.
#include "engine/parquet_log_io.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "testing/test_util.h"

namespace basin::engine {
namespace {

using delta::Action;
using delta::CheckpointColumns;
using nlohmann::json;

std::vector<Action> EveryKindOfAction() {
  std::vector<Action> out;
  out.emplace_back(delta::CheckpointMetadata{12, {{"k", "v"}}});
  out.emplace_back(delta::Protocol{3, 7, std::vector<std::string>{"deletionVectors"},
                                   std::vector<std::string>{"deletionVectors", "domainMetadata"}});
  delta::Metadata metadata;
  metadata.id = "id-1";
  metadata.name = "events";
  metadata.format_options = {{"compression", "zstd"}};
  metadata.schema_string = R"({"type":"struct","fields":[]})";
  metadata.partition_columns = {"day", "kind"};
  metadata.configuration = {{"delta.enableDeletionVectors", "true"}};
  metadata.created_time = 1700000000000;
  out.emplace_back(metadata);
  out.emplace_back(delta::SetTransaction{"app", 7, 1700000000001});
  out.emplace_back(delta::SetTransaction{"other", 1, std::nullopt});
  out.emplace_back(delta::DomainMetadata{"delta.clustering", R"({"c":1})", false});
  delta::AddFile add;
  add.path = "day=2024-01-31/part%20one.parquet";
  add.partition_values = {{"day", "2024-01-31"}, {"kind", std::nullopt}};
  add.size = 1234;
  add.modification_time = 1700000000002;
  add.data_change = true;
  add.stats = R"({"numRecords":3,"minValues":{"id":1},"maxValues":{"id":3},"nullCount":{"id":0}})";
  add.tags = {{"INSERTION_TIME", "1"}};
  add.deletion_vector = delta::DeletionVectorDescriptor{'u', "ab^-aqEH.-t@S}K{vb[*k^", 1, 36, 2};
  add.base_row_id = 10;
  add.default_row_commit_version = 3;
  out.emplace_back(add);
  delta::AddFile plain;
  plain.path = "plain.parquet";
  plain.size = 5;
  plain.data_change = false;
  out.emplace_back(plain);
  delta::RemoveFile remove = delta::RemoveOf(add);
  remove.deletion_timestamp = 1700000000003;
  out.emplace_back(remove);
  delta::RemoveFile bare;
  bare.path = "bare.parquet";
  out.emplace_back(bare);
  out.emplace_back(delta::Sidecar{"abc.parquet", 99, 1700000000004});
  return out;
}

bool Holds(CheckpointColumns columns, const Action& action) {
  const std::string name = delta::ActionName(action);
  for (const char* column : delta::CheckpointColumnNames(columns)) {
    if (name == column) return true;
  }
  return false;
}

std::vector<std::string> Lines(const std::vector<Action>& actions) {
  std::vector<std::string> out;
  for (const Action& a : actions) out.push_back(delta::SerializeAction(a));
  return out;
}

class ParquetLogIOTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(db_, Database::Open());
    ASSERT_OK_AND_ASSIGN(conn_, Connection::Open(db_));
    io_ = std::make_unique<DuckDBParquetLogIO>();
  }

  // Has DuckDB write `select` as Parquet into `store` at `key`, as another writer would.
  void WriteWithDuckDB(ObjectStore& store, const std::string& key, const std::string& select) {
    testing::TempDir dir;
    const std::string path = (dir.path() / "file.parquet").string();
    ASSERT_OK(conn_->Execute("COPY (" + select + ") TO " + QuoteLiteral(path) + " (FORMAT parquet)"));
    ASSERT_OK_AND_ASSIGN(auto folder, OpenLocalObjectStore(dir.path().string()));
    ASSERT_OK_AND_ASSIGN(std::string bytes, folder->Get("file.parquet"));
    ASSERT_OK(store.Put(key, bytes));
  }

  std::shared_ptr<Database> db_;
  std::unique_ptr<Connection> conn_;
  std::unique_ptr<DuckDBParquetLogIO> io_;
};

TEST_F(ParquetLogIOTest, WritesAndReadsBackEveryActionOfEachFileKind) {
  const std::vector<Action> all = EveryKindOfAction();
  testing::TempDir dir;
  ASSERT_OK_AND_ASSIGN(auto local, OpenLocalObjectStore(dir.path().string()));
  for (const std::shared_ptr<ObjectStore>& store : {NewMemoryObjectStore(), local}) {
    for (CheckpointColumns columns :
         {CheckpointColumns::kClassic, CheckpointColumns::kSidecar, CheckpointColumns::kV2TopLevel}) {
      std::vector<Action> held;
      for (const Action& a : all) {
        if (Holds(columns, a)) held.push_back(a);
      }
      const std::string key = "_delta_log/" + std::to_string(static_cast<int>(columns)) + ".parquet";
      ASSERT_OK(io_->WriteActions(*store, key, held, columns));
      std::vector<Action> read;
      ASSERT_OK(io_->ReadActions(*store, key, &read));
      EXPECT_EQ(Lines(read), Lines(held)) << store->Describe() << " " << key;
    }
  }
}

TEST_F(ParquetLogIOTest, StructStatsAndPartitionValuesBecomeText) {
  auto store = NewMemoryObjectStore();
  WriteWithDuckDB(*store, "c.parquet", R"(
      SELECT struct_pack(
          path := 'p' || i || '.parquet',
          partitionValues_parsed := struct_pack(day := DATE '2024-01-31' + i::INTEGER, n := i::INTEGER,
                                                ts := TIMESTAMP '2024-01-01 10:00:00.5', s := NULL::VARCHAR),
          size := 10::BIGINT, modificationTime := 20::BIGINT, dataChange := true,
          stats_parsed := struct_pack(
              numRecords := 3::BIGINT,
              minValues := struct_pack(d := 1.25::DECIMAL(8,5), f := 0.5::DOUBLE, t := TIMESTAMPTZ '2024-01-01 00:00:00+00',
                                       day := DATE '2024-02-01', name := 'a"b', nested := struct_pack(x := 1::INTEGER),
                                       missing := NULL::INTEGER),
              nullCount := struct_pack(d := 0::BIGINT, nested := struct_pack(x := 2::BIGINT))),
          tags := NULL::MAP(VARCHAR, VARCHAR)) AS "add",
        NULL::STRUCT(appId VARCHAR, version BIGINT) AS txn,
        NULL::BOOLEAN AS unknown_column
      FROM range(2) t(i))");
  std::vector<Action> read;
  ASSERT_OK(io_->ReadActions(*store, "c.parquet", &read));
  ASSERT_EQ(read.size(), 2u);
  const auto& add = std::get<delta::AddFile>(read[1]);
  EXPECT_EQ(add.path, "p1.parquet");
  EXPECT_EQ(add.partition_values,
            (delta::PartitionValues{
                {"day", "2024-02-01"}, {"n", "1"}, {"ts", "2024-01-01 10:00:00.5"}, {"s", std::nullopt}}));
  // Kept typed, one ParsedStats for the file, with JSON text only on request.
  EXPECT_FALSE(add.stats);
  ASSERT_TRUE(add.parsed_stats);
  EXPECT_EQ(add.parsed_stats, std::get<delta::AddFile>(read[0]).parsed_stats);
  EXPECT_EQ(add.parsed_stats_row, 1u);
  const std::string text = delta::StatsJson(add).value_or("");
  const json stats = json::parse(text);
  EXPECT_EQ(stats["numRecords"], 3);
  EXPECT_NE(text.find(R"("d":1.25000)"), std::string::npos) << text;
  EXPECT_EQ(stats["minValues"]["f"], 0.5);
  EXPECT_EQ(stats["minValues"]["t"], "2024-01-01T00:00:00Z");
  EXPECT_EQ(stats["minValues"]["day"], "2024-02-01");
  EXPECT_EQ(stats["minValues"]["name"], "a\"b");
  EXPECT_EQ(stats["minValues"]["nested"]["x"], 1);
  EXPECT_FALSE(stats["minValues"].contains("missing"));
  EXPECT_EQ(stats["nullCount"]["nested"]["x"], 2);
  EXPECT_EQ(delta::StatsNumRecords(add), 3);
}

TEST_F(ParquetLogIOTest, ReadsTheStructOnlyCheckpointOfAnotherWriter) {
  SKIP_WITHOUT_SHARED_TESTDATA(testdata);
  const auto root = testdata / "delta/delta-rs/delta-1.2.1-only-struct-stats";
  ASSERT_OK_AND_ASSIGN(auto store, OpenLocalObjectStore(root.string()));
  std::vector<Action> read;
  ASSERT_OK(io_->ReadActions(*store, "_delta_log/00000000000000000010.checkpoint.parquet", &read));
  int adds = 0;
  for (const Action& a : read) {
    const auto* add = std::get_if<delta::AddFile>(&a);
    if (add == nullptr) continue;
    adds++;
    const std::optional<std::string> text = delta::StatsJson(*add);
    ASSERT_TRUE(text) << add->path;
    const json stats = json::parse(*text);
    EXPECT_TRUE(stats["numRecords"].is_number_integer()) << *text;
    EXPECT_TRUE(stats["minValues"]["integer"].is_number_integer()) << *text;
    EXPECT_TRUE(stats["minValues"]["date"].is_string()) << *text;
  }
  EXPECT_GT(adds, 0);
}

// A checkpoint of many chunks (DuckDB hands out 2,048 rows at a time, fetched on a thread
// of their own while they are converted): every add keeps its own typed stats, with rows
// of other actions, NULL structs and NULL values in between; an error in a late row names
// it and stops the reading.
TEST_F(ParquetLogIOTest, ManyChunksKeepEachRowsStatsAndStopAtALateError) {
  constexpr int kRows = 20'000;
  auto store = NewMemoryObjectStore();
  const std::string rows = R"(
      SELECT CASE WHEN i % 10 = 3 THEN NULL ELSE struct_pack(
          path := CASE WHEN i = {bad} THEN NULL ELSE 'p' || i || '.parquet' END,
          partitionValues := MAP {}::MAP(VARCHAR, VARCHAR),
          size := i::BIGINT, modificationTime := 20::BIGINT, dataChange := true,
          stats_parsed := struct_pack(
              numRecords := i::BIGINT,
              minValues := CASE WHEN i % 7 = 0 THEN NULL
                           ELSE struct_pack(a := i::INTEGER, s := 'v' || i, f := CASE WHEN i % 5 = 0 THEN NULL ELSE i / 4 END) END,
              maxValues := struct_pack(ts := TIMESTAMP '2024-01-01' + to_seconds(i)))) END AS "add",
        CASE WHEN i % 10 = 3 THEN struct_pack(appId := 'app' || i, version := i::BIGINT) END AS txn
      FROM range({rows}) t(i))";
  auto with = [&](int bad) {
    std::string sql = rows;
    sql.replace(sql.find("{bad}"), 5, std::to_string(bad));
    sql.replace(sql.find("{rows}"), 6, std::to_string(kRows));
    return sql;
  };
  WriteWithDuckDB(*store, "many.parquet", with(-1));
  std::vector<Action> read;
  ASSERT_OK(io_->ReadActions(*store, "many.parquet", &read));
  ASSERT_EQ(read.size(), static_cast<size_t>(kRows));
  for (int i = 0; i < kRows; i++) {
    if (i % 10 == 3) {
      ASSERT_EQ(std::get<delta::SetTransaction>(read[i]).version, i);
      continue;
    }
    const auto& add = std::get<delta::AddFile>(read[i]);
    ASSERT_EQ(add.path, "p" + std::to_string(i) + ".parquet");
    const json stats = json::parse(delta::StatsJson(add).value_or("null"));
    ASSERT_EQ(stats["numRecords"], i) << i;
    ASSERT_EQ(stats.contains("minValues"), i % 7 != 0) << stats.dump();
    if (i % 7 != 0) {
      ASSERT_EQ(stats["minValues"]["a"], i);
      ASSERT_EQ(stats["minValues"]["s"], "v" + std::to_string(i));
      ASSERT_EQ(stats["minValues"].contains("f"), i % 5 != 0) << stats.dump();
      if (i % 5 != 0) {
        ASSERT_EQ(stats["minValues"]["f"], i / 4.0);
      }
    }
    ASSERT_EQ(stats["maxValues"]["ts"].get<std::string>().substr(0, 10), "2024-01-01") << stats.dump();
  }

  WriteWithDuckDB(*store, "late.parquet", with(17'001));
  read.clear();
  Status late = io_->ReadActions(*store, "late.parquet", &read);
  ASSERT_ERROR_CODE(late, kCorruption);
  EXPECT_NE(late.message().find("late.parquet row 17002"), std::string::npos) << late.ToString();
  EXPECT_NE(late.message().find("'add.path'"), std::string::npos) << late.ToString();
}

TEST_F(ParquetLogIOTest, Errors) {
  auto store = NewMemoryObjectStore();
  std::vector<Action> read;
  ASSERT_ERROR_CODE(io_->ReadActions(*store, "missing.parquet", &read), kCorruption);
  ASSERT_OK(store->Put("junk.parquet", "not parquet"));
  ASSERT_ERROR_CODE(io_->ReadActions(*store, "junk.parquet", &read), kCorruption);
  WriteWithDuckDB(*store, "other.parquet", "SELECT 1 AS x");
  auto no_actions = io_->ReadActions(*store, "other.parquet", &read);
  ASSERT_ERROR_CODE(no_actions, kCorruption);
  EXPECT_NE(no_actions.message().find("no action columns"), std::string::npos);
  WriteWithDuckDB(
      *store, "nulls.parquet",
      "SELECT struct_pack(path := NULL::VARCHAR, size := 1::BIGINT, modificationTime := 1::BIGINT, "
      "dataChange := true, partitionValues := MAP {}::MAP(VARCHAR, VARCHAR)) AS \"add\"");
  auto missing_path = io_->ReadActions(*store, "nulls.parquet", &read);
  ASSERT_ERROR_CODE(missing_path, kCorruption);
  EXPECT_NE(missing_path.message().find("'add.path'"), std::string::npos) << missing_path.ToString();
  WriteWithDuckDB(*store, "two.parquet",
                  "SELECT struct_pack(appId := 'a', version := 1::BIGINT) AS txn, "
                  "struct_pack(domain := 'd', configuration := '', removed := false) AS \"domainMetadata\"");
  ASSERT_ERROR_CODE(io_->ReadActions(*store, "two.parquet", &read), kCorruption);
  EXPECT_TRUE(read.empty());
}

}  // namespace
}  // namespace basin::engine
