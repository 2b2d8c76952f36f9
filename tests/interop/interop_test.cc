// Tables written by Basin's writer (engine::WriteDataFiles + delta::Transaction) are read
// by an implementation that shares no code with Basin (tests/interop/check_table.mjs:
// hyparquet and DuckDB's node bindings): row counts, stats, checkpoints, deletion vectors,
// column mapping. The checker itself is validated on Spark/delta-rs tables and shown to
// catch a corrupted stat, row count and missing file.
#include "testing/interop.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "delta/checkpoint_writer.h"
#include "delta/deletion_vector.h"
#include "delta/transaction.h"
#include "engine/parquet_log_io.h"
#include "engine/parquet_writer.h"
#include "testing/test_util.h"

namespace basin {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct TableSpec {
  engine::WriteOptions write;
  std::map<std::string, std::string> configuration;
  delta::Protocol protocol;
  // The table schema when it is not the one the first SELECT produces (column mapping).
  std::optional<std::string> schema_json;
};

// A Delta table in a local folder, written commit by commit with Basin's writer.
class TestTable {
 public:
  TestTable(engine::Connection& conn, fs::path dir, TableSpec spec)
      : conn_(conn), dir_(std::move(dir)), spec_(std::move(spec)) {}

  // Version 0: protocol, metadata and the rows of `select_sql`.
  Status Create(const std::string& select_sql) {
    ASSIGN_OR_RETURN(store_, OpenLocalObjectStore(dir_.string()));
    ASSIGN_OR_RETURN(std::vector<delta::AddFile> files, WriteFiles(select_sql));
    delta::Metadata metadata;
    metadata.id = "0f3c2a9e-1d2b-4c5d-8e7f-112233445566";
    if (spec_.schema_json) {
      metadata.schema_string = *spec_.schema_json;
    } else {
      ASSIGN_OR_RETURN(delta::StructType schema, engine::InferDeltaSchema(conn_, select_sql));
      metadata.schema_string = delta::SchemaToJson(schema).dump();
    }
    metadata.partition_columns = spec_.write.partition_columns;
    metadata.configuration = spec_.configuration;
    metadata.created_time = 1'700'000'000'000;
    delta::Transaction txn = delta::Transaction::CreateTable(store_, dir_.string(), Options());
    txn.UpdateProtocol(spec_.protocol);
    txn.UpdateMetadata(std::move(metadata));
    for (delta::AddFile& file : files) txn.Add(std::move(file));
    txn.SetOperation("CREATE TABLE AS SELECT");
    return txn.Commit().status();
  }

  // A blind append of the rows of `select_sql`.
  Result<delta::CommitResult> Append(const std::string& select_sql) {
    ASSIGN_OR_RETURN(std::vector<delta::AddFile> files, WriteFiles(select_sql));
    return Commit([&](delta::Transaction& txn) {
      for (delta::AddFile& file : files) txn.Add(std::move(file));
    });
  }

  // A commit on the latest version holding what `fill` adds to it.
  Result<delta::CommitResult> Commit(const std::function<void(delta::Transaction&)>& fill) {
    ASSIGN_OR_RETURN(auto snapshot, delta::LoadSnapshot(store_, dir_.string(), log_io_));
    delta::Transaction txn(snapshot, Options());
    fill(txn);
    return txn.Commit();
  }

  Result<std::vector<delta::AddFile>> ActiveFiles() {
    ASSIGN_OR_RETURN(auto snapshot, delta::LoadSnapshot(store_, dir_.string(), log_io_));
    return snapshot->files.ToVector();
  }

  ObjectStore& store() { return *store_; }
  std::string dir() const { return dir_.string(); }

 private:
  Result<std::vector<delta::AddFile>> WriteFiles(const std::string& select_sql) {
    return engine::WriteDataFiles(conn_, select_sql, *store_, spec_.write);
  }

  delta::TransactionOptions Options() {
    delta::TransactionOptions options;
    options.checkpoint_io = &log_io_;
    return options;
  }

  engine::Connection& conn_;
  engine::DuckDBParquetLogIO log_io_;
  fs::path dir_;
  TableSpec spec_;
  std::shared_ptr<ObjectStore> store_;
};

class InteropTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SKIP_OR_FAIL_WITHOUT_INTEROP();
    ASSERT_OK_AND_ASSIGN(db_, engine::Database::Open());
    ASSERT_OK_AND_ASSIGN(conn_, engine::Connection::Open(db_));
  }

  TestTable NewTable(const std::string& name, TableSpec spec = {}) {
    return TestTable(*conn_, tmp_.path() / name, std::move(spec));
  }

  // The checker's summary for a table Basin wrote, asserting it passed.
  json Summary(const std::string& dir, std::optional<int64_t> expected_live_rows = {}) {
    testing::InteropOptions options;
    options.expected_live_rows = expected_live_rows;
    auto summary = testing::RunInteropChecker(dir, options);
    EXPECT_TRUE(summary.ok()) << summary.status().ToString();
    return summary.ok() ? *summary : json::object();
  }

  testing::TempDir tmp_;
  std::shared_ptr<engine::Database> db_;
  std::unique_ptr<engine::Connection> conn_;
};

// Every stats-eligible primitive type, nulls, negative numbers, sub-millisecond timestamps.
std::string PrimitiveRows(int64_t from, int64_t to) {
  return fmt::format(
      "SELECT (i - 1200)::BIGINT AS id, "
      "CASE WHEN i % 5 = 0 THEN NULL ELSE 'name-' || i END AS name, "
      "(i * 1.25 - 300)::DOUBLE AS score, (i / 3.0)::FLOAT AS ratio, "
      "(i * 1.01)::DECIMAL(10, 2) AS price, (i % 100 - 50)::SMALLINT AS small, "
      "(i % 120 - 60)::TINYINT AS tiny, (i * 7)::INTEGER AS medium, (i % 7 = 0) AS flag, "
      "DATE '1969-12-01' + i::INTEGER AS day, "
      "TIMESTAMPTZ '1969-12-31 23:00:00+00' + to_microseconds(i * 1000123) AS ts, "
      "TIMESTAMP '2024-01-01 00:00:00' + to_microseconds(i * 999999) AS ts_ntz, "
      "CASE WHEN i % 3 = 0 THEN NULL ELSE ('blob' || i)::BLOB END AS raw "
      "FROM range({}, {}) t(i)",
      from, to);
}

TEST_F(InteropTest, PlainTableOverSeveralCommits) {
  TestTable table = NewTable("plain");
  ASSERT_OK(table.Create(PrimitiveRows(0, 1000)));
  ASSERT_OK(table.Append(PrimitiveRows(1000, 2500)).status());
  json summary = Summary(table.dir(), 2500);
  EXPECT_EQ(summary["files"], 2);
  EXPECT_EQ(summary["duckdbRows"], 2500);
  // 11 columns with min, max and nullCount; booleans and binary have nullCount only.
  EXPECT_EQ(summary["statsValuesChecked"], 2 * (11 * 3 + 2));
}

TEST_F(InteropTest, PartitionedByTypesNullsAndEscapedStrings) {
  TableSpec spec;
  spec.write.partition_columns = {"s", "n", "d"};
  TestTable table = NewTable("partitioned", spec);
  const std::string rows =
      "SELECT i AS id, "
      "CASE i % 6 WHEN 0 THEN NULL WHEN 1 THEN 'a b' WHEN 2 THEN 'x/y%z=w' WHEN 3 THEN 'ünï😀' "
      "WHEN 4 THEN 'q#?&+:' ELSE '' END AS s, "
      "CASE WHEN i % 7 = 0 THEN NULL ELSE (i % 3)::INTEGER END AS n, "
      "DATE '2024-03-01' + (i % 2)::INTEGER AS d, 'v' || i AS payload "
      "FROM range(0, 420) t(i)";
  ASSERT_OK(table.Create(rows));
  json summary = Summary(table.dir(), 420);
  // One file per (s, n, d): i % 6 fixes s, d and n when n is not null.
  EXPECT_EQ(summary["files"], 12);
}

TEST_F(InteropTest, ManyColumnsKeepStatsForTheFirst32) {
  std::string select = "SELECT ";
  for (int c = 0; c < 40; c++) {
    select += fmt::format("{}{} AS c{}", c > 0 ? ", " : "",
                          c % 2 == 0 ? fmt::format("i + {}", c) : fmt::format("'s' || (i * {})", c), c);
  }
  select += " FROM range(0, 300) t(i)";
  TestTable table = NewTable("wide");
  ASSERT_OK(table.Create(select));
  json summary = Summary(table.dir(), 300);
  EXPECT_EQ(summary["statsValuesChecked"], 32 * 3);
}

TEST_F(InteropTest, LongStringsHaveTruncatedStats) {
  TestTable table = NewTable("long-strings");
  ASSERT_OK(
      table.Create("SELECT i AS id, repeat('abcdefghij', 5) || lpad(i::VARCHAR, 4, '0') AS long_ascii, "
                   "repeat('ü', 40) || i AS long_unicode, repeat('😀', 35) || i AS long_emoji, "
                   "repeat('z', 31) || (i % 10) AS at_limit, "
                   "CASE WHEN i % 2 = 0 THEN repeat('m', 100) ELSE 'short' END AS mixed "
                   "FROM range(0, 500) t(i)"));
  ASSERT_OK_AND_ASSIGN(auto files, table.ActiveFiles());
  ASSERT_EQ(files.size(), 1u);
  // The writer truncated the minimum (a maximum is a truncated upper bound, or absent).
  json stats = json::parse(*files[0].stats);
  EXPECT_EQ(stats["minValues"]["long_ascii"], "abcdefghijabcdefghijabcdefghijab");
  json summary = Summary(table.dir(), 500);
  EXPECT_GT(summary["statsValuesChecked"].get<int>(), 10);
}

TEST_F(InteropTest, NestedStructsListsAndMaps) {
  TestTable table = NewTable("nested");
  ASSERT_OK(
      table.Create("SELECT i AS id, "
                   "{'a': i, 'b': {'c': 'c' || i, 'd': DATE '2024-01-01' + i::INTEGER}, "
                   " 'e': CASE WHEN i % 4 = 0 THEN NULL ELSE (i * 0.5)::DOUBLE END} AS s, "
                   "CASE WHEN i % 3 = 0 THEN NULL ELSE {'x': i, 'y': 'y' || i} END AS maybe, "
                   "[i, i + 1] AS arr, MAP {'k': i} AS m "
                   "FROM range(0, 200) t(i)"));
  ASSERT_OK_AND_ASSIGN(auto files, table.ActiveFiles());
  ASSERT_EQ(files.size(), 1u);
  json stats = json::parse(*files[0].stats);
  ASSERT_TRUE(stats["maxValues"]["s"]["b"].contains("c")) << *files[0].stats;
  json summary = Summary(table.dir(), 200);
  // id, s.a, s.b.c, s.b.d, s.e, maybe.x, maybe.y: min, max and nullCount each.
  EXPECT_EQ(summary["statsValuesChecked"], 7 * 3);
}

TEST_F(InteropTest, CheckpointAgreesWithTheJsonCommits) {
  TableSpec spec;
  spec.configuration = {{"delta.checkpointInterval", "2"}};
  spec.write.partition_columns = {"part"};
  TestTable table = NewTable("checkpointed", spec);
  auto rows = [](int from, int to) {
    return fmt::format("SELECT i AS id, (i % 3)::INTEGER AS part, 'r' || i AS v FROM range({}, {}) t(i)",
                       from, to);
  };
  ASSERT_OK(table.Create(rows(0, 30)));
  ASSERT_OK(table.Append(rows(30, 60)).status());
  ASSERT_OK_AND_ASSIGN(delta::CommitResult second, table.Append(rows(60, 90)));
  EXPECT_EQ(second.checkpoint_version, 2);
  // Delete partition 0 (30 rows) by removing its files.
  ASSERT_OK_AND_ASSIGN(auto files, table.ActiveFiles());
  ASSERT_OK_AND_ASSIGN(delta::CommitResult removal, table.Commit([&](delta::Transaction& txn) {
    txn.ReadFiles(files);
    for (const delta::AddFile& file : files) {
      if (file.partition_values.at("part") != "0") continue;
      delta::RemoveFile remove;
      remove.path = file.path;
      remove.deletion_timestamp = 1'700'000'000'000;
      remove.partition_values = file.partition_values;
      remove.size = file.size;
      remove.extended_file_metadata = true;
      txn.Remove(remove);
    }
    txn.SetOperation("DELETE");
  }));
  ASSERT_OK(removal.checkpoint_status);
  EXPECT_FALSE(removal.checkpoint_version.has_value());
  ASSERT_OK_AND_ASSIGN(delta::CommitResult last, table.Append(rows(90, 99)));
  ASSERT_EQ(last.checkpoint_version, 4);
  ASSERT_OK(table.Append(rows(99, 120)).status());

  json summary = Summary(table.dir(), 120 - 30);
  EXPECT_EQ(summary["checkpoint"], 4);
  EXPECT_EQ(summary["checkpointComparedWithJson"], true);
  EXPECT_EQ(summary["version"], 5);
}

TEST_F(InteropTest, DeletionVectorsReduceTheLiveRows) {
  TableSpec spec;
  spec.protocol = delta::Protocol{3, 7, std::vector<std::string>{"deletionVectors"},
                                  std::vector<std::string>{"deletionVectors"}};
  spec.configuration = {{"delta.enableDeletionVectors", "true"}};
  TestTable table = NewTable("dv", spec);
  ASSERT_OK(table.Create("SELECT i AS id, 'v' || i AS v FROM range(0, 10) t(i)"));
  ASSERT_OK(table.Append("SELECT i AS id, 'w' || i AS v FROM range(10, 25) t(i)").status());
  ASSERT_OK_AND_ASSIGN(auto files, table.ActiveFiles());
  ASSERT_EQ(files.size(), 2u);

  // An inline DV on the first file, an on-disk one on the second.
  std::string inline_bitmap = delta::SerializeRoaringBitmapArray({1, 4, 7});
  delta::DeletionVectorDescriptor inline_dv;
  inline_dv.storage_type = 'i';
  inline_dv.path_or_inline_dv = delta::EncodeInlineDeletionVector(inline_bitmap);
  inline_dv.size_in_bytes = static_cast<int32_t>(inline_bitmap.size());
  inline_dv.cardinality = 3;

  std::string disk_bitmap = delta::SerializeRoaringBitmapArray({0, 2, 3, 14});
  const std::string uuid_bytes = "0123456789abcdef";
  delta::DeletionVectorDescriptor disk_dv;
  disk_dv.storage_type = 'u';
  disk_dv.path_or_inline_dv = delta::EncodeDeletionVectorPath("", uuid_bytes);
  disk_dv.offset = 1;
  disk_dv.size_in_bytes = static_cast<int32_t>(disk_bitmap.size());
  disk_dv.cardinality = 4;
  ASSERT_OK_AND_ASSIGN(std::string dv_key, delta::DeletionVectorKey(disk_dv));
  ASSERT_OK(table.store().Put(dv_key, delta::EncodeDeletionVectorFile(disk_bitmap)));

  ASSERT_OK(table
                .Commit([&](delta::Transaction& txn) {
                  txn.ReadFiles(files);
                  for (size_t i = 0; i < files.size(); i++) {
                    delta::RemoveFile remove;
                    remove.path = files[i].path;
                    remove.deletion_timestamp = 1'700'000'000'000;
                    remove.size = files[i].size;
                    remove.extended_file_metadata = true;
                    txn.Remove(remove);
                    delta::AddFile with_dv = files[i];
                    with_dv.data_change = true;
                    with_dv.deletion_vector = i == 0 ? inline_dv : disk_dv;
                    txn.Add(with_dv);
                  }
                  txn.SetOperation("DELETE");
                })
                .status());

  json summary = Summary(table.dir(), 25 - 3 - 4);
  EXPECT_EQ(summary["filesWithDeletionVectors"], 2);
  EXPECT_EQ(summary["numRecords"], 25);
  EXPECT_EQ(summary["duckdbRows"], 25);
  // A wrong expectation is reported.
  Status wrong = testing::CheckInterop(table.dir(), 25);
  EXPECT_TRUE(wrong.IsCorruption()) << wrong.ToString();
  EXPECT_NE(wrong.message().find("18 live rows, expected 25"), std::string::npos) << wrong.ToString();
}

// Gives every field (nested ones too) a column-mapping id and physical name "col-<name>".
void AddColumnMapping(json& fields, int& next_id) {
  for (json& field : fields) {
    field["metadata"]["delta.columnMapping.id"] = ++next_id;
    field["metadata"]["delta.columnMapping.physicalName"] = "col-" + field["name"].get<std::string>();
    if (field["type"].is_object() && field["type"]["type"] == "struct")
      AddColumnMapping(field["type"]["fields"], next_id);
  }
}

TEST_F(InteropTest, ColumnMappingUsesPhysicalNamesInFilesAndStats) {
  engine::Connection& conn = *conn_;
  const std::string logical =
      "SELECT i AS id, 'n' || i AS name, {'inner': i * 2} AS st FROM range(0, 50) t(i)";
  ASSERT_OK_AND_ASSIGN(delta::StructType schema, engine::InferDeltaSchema(conn, logical));
  json schema_json = delta::SchemaToJson(schema);
  int max_id = 0;
  AddColumnMapping(schema_json["fields"], max_id);

  TableSpec spec;
  spec.protocol = delta::Protocol{2, 5, std::nullopt, std::nullopt};
  spec.configuration = {{"delta.columnMapping.mode", "name"},
                        {"delta.columnMapping.maxColumnId", std::to_string(max_id)}};
  spec.schema_json = schema_json.dump();
  TestTable table = NewTable("column-mapping", spec);
  ASSERT_OK(
      table.Create("SELECT i AS \"col-id\", 'n' || i AS \"col-name\", {'col-inner': i * 2} AS \"col-st\" "
                   "FROM range(0, 50) t(i)"));
  json summary = Summary(table.dir(), 50);
  EXPECT_EQ(summary["statsValuesChecked"], 3 * 3);
}

// ---- the checker catches what it should ----

std::string ReadText(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Rewrites the add actions of commit 0 with `edit` applied to their parsed stats.
void EditStats(const fs::path& table, const std::function<void(json&)>& edit) {
  fs::path commit = table / "_delta_log" / "00000000000000000000.json";
  std::istringstream lines(ReadText(commit));
  std::string out, line;
  while (std::getline(lines, line)) {
    json action = json::parse(line);
    if (action.contains("add")) {
      json stats = json::parse(action["add"]["stats"].get<std::string>());
      edit(stats);
      action["add"]["stats"] = stats.dump();
    }
    out += action.dump() + "\n";
  }
  std::ofstream(commit, std::ios::binary | std::ios::trunc) << out;
}

TEST_F(InteropTest, CorruptedTablesAreReported) {
  TestTable table = NewTable("original");
  ASSERT_OK(table.Create(PrimitiveRows(0, 100)));
  ASSERT_OK(testing::CheckInterop(table.dir(), 100));
  ASSERT_OK_AND_ASSIGN(auto files, table.ActiveFiles());
  ASSERT_EQ(files.size(), 1u);
  const std::string data_file = files[0].path;

  struct Corruption {
    std::string name;
    std::function<void(const fs::path&)> corrupt;
    std::vector<std::string> reported;  // fragments the report must hold
  };
  const std::vector<Corruption> corruptions = {
      {"max",
       [](const fs::path& t) {
         EditStats(t, [](json& s) { s["maxValues"]["id"] = s["maxValues"]["id"].get<int64_t>() + 1; });
       },
       {data_file, "column id", "maxValues is -1100 but the data's max is -1101"}},
      {"min-timestamp",
       [](const fs::path& t) {
         EditStats(t, [](json& s) { s["minValues"]["ts"] = "1969-12-31T23:00:00.001Z"; });
       },
       {data_file, "column ts", "minValues"}},
      {"null-count",
       [](const fs::path& t) { EditStats(t, [](json& s) { s["nullCount"]["name"] = 0; }); },
       {data_file, "column name", "nullCount is 0 but the file has 20 nulls"}},
      {"num-records",
       [](const fs::path& t) { EditStats(t, [](json& s) { s["numRecords"] = 101; }); },
       {data_file, "numRecords is 101", "100 rows"}},
      {"string-min-not-a-prefix",
       [](const fs::path& t) { EditStats(t, [](json& s) { s["minValues"]["name"] = "name-0"; }); },
       {data_file, "column name"}},
      {"string-max-below-the-data",
       [](const fs::path& t) { EditStats(t, [](json& s) { s["maxValues"]["name"] = "name-98"; }); },
       {data_file, "column name", "maxValues \"name-98\""}},
      {"missing-file", [&](const fs::path& t) { fs::remove(t / data_file); }, {data_file, "cannot be read"}},
      {"missing-commit",
       [](const fs::path& t) {
         fs::rename(t / "_delta_log" / "00000000000000000000.json", t / "moved.json");
       },
       {"no commits or checkpoints"}},
  };
  for (const Corruption& c : corruptions) {
    SCOPED_TRACE(c.name);
    fs::path copy = tmp_.path() / ("corrupt-" + c.name);
    fs::copy(table.dir(), copy, fs::copy_options::recursive);
    c.corrupt(copy);
    Status status = testing::CheckInterop(copy.string(), 100);
    ASSERT_TRUE(status.IsCorruption()) << status.ToString();
    for (const std::string& fragment : c.reported) {
      EXPECT_NE(status.message().find(fragment), std::string::npos)
          << fragment << " not in " << status.message();
    }
  }
}

// ---- the checker agrees with other writers' tables ----

struct SharedTable {
  const char* path;  // under delta/ of the shared test data
  int64_t live_rows;
  int change_data_files = 0;
};

TEST_F(InteropTest, SharedTablesFromSparkAndDeltaRsPass) {
  SKIP_WITHOUT_SHARED_TESTDATA(testdata);
  const SharedTable tables[] = {
      {"delta-kernel-rs-golden/dv-with-columnmapping/delta", 35},  // DVs, column mapping, checkpoint
      {"delta-kernel-rs-golden/multi-part-checkpoint/delta", 31},  // multi-part checkpoint
      {"delta-kernel-rs-golden/v2-checkpoint-json/delta", 10},     // V2 checkpoint, sidecars
      {"delta-kernel-rs-golden/kernel-timestamp-int96/delta", 5},  // INT96 timestamps
      {"delta-io-delta/basic-dv-with-checkpoint", 454},            // on-disk DVs
      {"delta-kernel-rs/stats-writing-all-types/delta", 4},        // every stats type
      {"delta-rs/delta-1.2.1-only-struct-stats", 12},              // stats_parsed, nested
      {"delta-rs/table_with_column_mapping", 5},                   // zstd, spaces in names
      {"delta-rs/cdc_ict_table", 2, 4},                            // change-data files
  };
  int checked = 0;
  for (const SharedTable& t : tables) {
    fs::path dir = testdata / "delta" / t.path;
    if (!fs::is_directory(dir / "_delta_log")) continue;
    SCOPED_TRACE(t.path);
    testing::InteropOptions options;
    options.expected_live_rows = t.live_rows;
    ASSERT_OK_AND_ASSIGN(json summary, testing::RunInteropChecker(dir.string(), options));
    EXPECT_GT(summary["statsValuesChecked"].get<int>(), 0);
    EXPECT_EQ(summary["changeDataFiles"], t.change_data_files);
    checked++;
  }
  EXPECT_GT(checked, 0);

  fs::path gap = testdata / "delta" / "delta-kernel-rs-golden" / "versions-not-contiguous" / "delta";
  if (fs::is_directory(gap)) {
    Status status = testing::CheckInterop(gap.string());
    EXPECT_TRUE(status.IsCorruption()) << status.ToString();
    EXPECT_NE(status.message().find("commit 1 is missing"), std::string::npos) << status.ToString();
  }
}

}  // namespace
}  // namespace basin
