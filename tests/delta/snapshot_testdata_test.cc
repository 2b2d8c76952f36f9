// LoadSnapshot against every Delta table in ../shared/testdata/delta, checking the active
// file set through the row counts the testdata README gives: "(log)" counts against the
// snapshot's stats, "(footers)" counts against the Parquet footers of the active files.
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "delta/paths.h"
#include "delta/snapshot.h"
#include "engine/duckdb.h"
#include "engine/parquet_log_io.h"
#include "testing/test_util.h"
#include "testing/testdata_catalogue.h"

namespace basin::delta {
namespace {

namespace fs = std::filesystem;

using testing::DeltaTableRoot;
using testing::DeltaTestTables;
using testing::RowCountSource;

class TestdataSnapshots : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(db_, engine::Database::Open());
    ASSERT_OK_AND_ASSIGN(conn_, engine::Connection::Open(db_));
  }

  Result<std::shared_ptr<Snapshot>> Load(const fs::path& root, const SnapshotOptions& options = {}) {
    auto store = OpenLocalObjectStore(root.string());
    if (!store.ok()) return store.status();
    engine::DuckDBParquetLogIO log_io;
    return LoadSnapshot(*store, root.string(), log_io, options);
  }

  // Rows in the active files by their Parquet footers, minus deletion-vector cardinalities.
  Result<int64_t> FooterRows(const fs::path& root, const Snapshot& snapshot) {
    if (snapshot.files.empty()) return int64_t{0};
    std::string list;
    int64_t deleted = 0;
    for (const auto& f : snapshot.files) {
      std::string path = DecodeDataPath(f.path);
      if (!IsAbsoluteDataPath(path)) path = (root / path).string();
      list += (list.empty() ? "" : ", ") + engine::QuoteLiteral(path);
      if (f.deletion_vector) deleted += f.deletion_vector->cardinality;
    }
    auto result = conn_->Query("SELECT sum(num_rows)::BIGINT FROM parquet_file_metadata([" + list + "])");
    if (!result.ok()) return result.status();
    return std::stoll(*result->at(0, 0)) - deleted;
  }

  std::shared_ptr<engine::Database> db_;
  std::unique_ptr<engine::Connection> conn_;
};

TEST_F(TestdataSnapshots, EveryTableLoadsWithTheExpectedRowCount) {
  SKIP_WITHOUT_SHARED_TESTDATA(testdata);
  std::set<std::string> seen;
  for (const auto& source : fs::directory_iterator(testdata / "delta")) {
    if (!source.is_directory()) continue;
    for (const auto& case_dir : fs::directory_iterator(source.path())) {
      if (!case_dir.is_directory()) continue;
      std::string name = source.path().filename().string() + "/" + case_dir.path().filename().string();
      seen.insert(name);
      SCOPED_TRACE(name);
      auto it = DeltaTestTables().find(name);
      if (it == DeltaTestTables().end()) {
        ADD_FAILURE() << "no expectation for testdata table " << name;
        continue;
      }
      const testing::DeltaTableExpectation& expected = it->second;
      fs::path root = DeltaTableRoot(case_dir.path());
      auto snapshot = Load(root);
      if (expected.error) {
        EXPECT_EQ(snapshot.status().code(), *expected.error) << snapshot.status().ToString();
        continue;
      }
      ASSERT_TRUE(snapshot.ok()) << snapshot.status().ToString();
      const Snapshot& s = **snapshot;
      EXPECT_GE(s.version, 0);
      if (expected.rows_from == RowCountSource::kLog) {
        EXPECT_EQ(s.num_records(), expected.rows);
      } else {
        auto rows = FooterRows(root, s);
        ASSERT_TRUE(rows.ok()) << rows.status().ToString();
        EXPECT_EQ(*rows, expected.rows);
      }
    }
  }
  EXPECT_EQ(seen.size(), DeltaTestTables().size());
}

TEST_F(TestdataSnapshots, RefusalsNameWhatIsWrong) {
  SKIP_WITHOUT_SHARED_TESTDATA(testdata);
  auto message = [&](const std::string& table) {
    return Load(DeltaTableRoot(testdata / "delta" / table)).status().message();
  };
  EXPECT_NE(message("delta-kernel-rs-golden/deltalog-invalid-protocol-version").find("99"),
            std::string::npos);
  EXPECT_NE(message("delta-kernel-rs-golden/versions-not-contiguous").find("missing version 1"),
            std::string::npos);
  EXPECT_NE(message("delta-rs/simple_table_features").find("reader version 5"), std::string::npos);
  EXPECT_NE(message("delta-io-delta/catalog-owned-preview").find("catalogManaged"), std::string::npos);
}

TEST_F(TestdataSnapshots, AppTransactionsSurviveTheCheckpoint) {
  SKIP_WITHOUT_SHARED_TESTDATA(testdata);
  ASSERT_OK_AND_ASSIGN(auto s, Load(testdata / "delta/delta-kernel-rs/app-txn-checkpoint"));
  ASSERT_EQ(s->set_transactions.size(), 2u);
  EXPECT_EQ(s->set_transactions.at("my-app").version, 3);
  EXPECT_EQ(s->set_transactions.at("my-app2").version, 2);
  EXPECT_EQ(s->metadata.partition_columns, std::vector<std::string>{"modified"});
}

TEST_F(TestdataSnapshots, TimeTravelByVersion) {
  SKIP_WITHOUT_SHARED_TESTDATA(testdata);
  fs::path root = testdata / "delta/delta-kernel-rs-golden/time-travel-start-start20-start40/delta";
  for (int64_t v = 0; v <= 2; v++) {
    SCOPED_TRACE(v);
    SnapshotOptions options;
    options.version = v;
    ASSERT_OK_AND_ASSIGN(auto s, Load(root, options));
    EXPECT_EQ(s->version, v);
    EXPECT_EQ(s->files.size(), static_cast<size_t>(2 * (v + 1)));
    ASSERT_OK_AND_ASSIGN(int64_t rows, FooterRows(root, *s));
    EXPECT_EQ(rows, 10 * (v + 1));
  }
  SnapshotOptions too_new;
  too_new.version = 3;
  Status st = Load(root, too_new).status();
  ASSERT_EQ(st.code(), ErrorCode::kNotFound);
  EXPECT_NE(st.message().find("version 3 is not available: the log holds versions 0..2"), std::string::npos)
      << st.message();
}

TEST_F(TestdataSnapshots, TimeTravelAcrossCheckpointsAndCompactions) {
  SKIP_WITHOUT_SHARED_TESTDATA(testdata);
  SnapshotOptions v15;
  v15.version = 15;
  ASSERT_OK_AND_ASSIGN(auto compacted,
                       Load(testdata / "delta/delta-kernel-rs/compacted-log-files-table", v15));
  EXPECT_EQ(compacted->num_records(), 8);

  fs::path dv = testdata / "delta/delta-io-delta/basic-dv-with-checkpoint";
  ASSERT_OK_AND_ASSIGN(auto latest, Load(dv));
  EXPECT_EQ(latest->files.size(), 2u);
  // Each version deletes rows, so the count strictly falls from one version to the next.
  int64_t previous = -1;
  for (int64_t v = latest->version; v >= 8; v--) {
    SnapshotOptions options;
    options.version = v;
    ASSERT_OK_AND_ASSIGN(auto s, Load(dv, options));
    EXPECT_GT(s->num_records(), previous) << "version " << v;
    previous = s->num_records();
  }
}

// Each DAT case has the expected rows for every version it lists.
TEST_F(TestdataSnapshots, DatCasesMatchEveryExpectedVersion) {
  SKIP_WITHOUT_SHARED_TESTDATA(testdata);
  for (const auto& case_dir : fs::directory_iterator(testdata / "delta" / "dat")) {
    for (const auto& expected : fs::directory_iterator(case_dir.path() / "expected")) {
      SCOPED_TRACE(expected.path().string());
      std::ifstream in(expected.path() / "table_version_metadata.json");
      auto meta = nlohmann::json::parse(in, nullptr, false);
      ASSERT_TRUE(meta.is_object());
      SnapshotOptions options;
      if (expected.path().filename() != "latest") options.version = meta["version"].get<int64_t>();
      ASSERT_OK_AND_ASSIGN(auto s, Load(case_dir.path() / "delta", options));
      EXPECT_EQ(s->version, meta["version"].get<int64_t>());
      EXPECT_EQ(s->protocol.min_reader_version, meta["min_reader_version"].get<int>());
      EXPECT_EQ(s->protocol.min_writer_version, meta["min_writer_version"].get<int>());
      auto rows =
          conn_->Query("SELECT count(*) FROM read_parquet(" +
                       engine::QuoteLiteral((expected.path() / "table_content.parquet").string()) + ")");
      ASSERT_OK(rows);
      EXPECT_EQ(s->num_records(), std::stoll(*rows->at(0, 0)));
    }
  }
}

TEST_F(TestdataSnapshots, InCommitTimestampsAreTheCommitTime) {
  SKIP_WITHOUT_SHARED_TESTDATA(testdata);
  fs::path root = testdata / "delta/delta-rs/cdc_ict_table";
  ASSERT_OK_AND_ASSIGN(auto latest, Load(root));
  EXPECT_EQ(latest->version, 3);
  EXPECT_EQ(latest->timestamp_ms, 1783874213881);
  SnapshotOptions v1;
  v1.version = 1;
  ASSERT_OK_AND_ASSIGN(auto s1, Load(root, v1));
  EXPECT_EQ(s1->timestamp_ms, 1683874206883);

  ASSERT_OK_AND_ASSIGN(auto store, OpenLocalObjectStore(root.string()));
  ASSERT_OK_AND_ASSIGN(auto history, ReadHistory(store));
  ASSERT_EQ(history.size(), 4u);
  EXPECT_EQ(history[0].version, 3);
  EXPECT_EQ(history[0].timestamp_ms, 1783874213881);
  EXPECT_EQ(history[2].timestamp_ms, 1683874206883);
  EXPECT_EQ(history[2].operation, "WRITE");
  EXPECT_EQ(history[2].engine_info, "Apache-Spark/4.1.2 Delta-Lake/4.3.1");
  EXPECT_EQ(history[2].is_blind_append, true);
  EXPECT_EQ(history[2].operation_metrics["numFiles"], "4");
  EXPECT_EQ(history[2].operation_parameters["mode"], "Append");
  ASSERT_OK_AND_ASSIGN(auto two, ReadHistory(store, 2));
  EXPECT_EQ(two.size(), 2u);
}

TEST_F(TestdataSnapshots, CheckpointDetailsSurviveReplay) {
  SKIP_WITHOUT_SHARED_TESTDATA(testdata);
  // Stats only as a struct in the checkpoint: kept typed, and rendered as JSON text on request.
  ASSERT_OK_AND_ASSIGN(auto struct_stats,
                       Load(testdata / "delta/delta-kernel-rs/v1-multi-part-partitioned-struct-stats-only"));
  for (const auto& f : struct_stats->files) {
    EXPECT_FALSE(f.stats) << f.path;
    ASSERT_TRUE(f.parsed_stats) << f.path;
    const std::optional<std::string> text = StatsJson(f);
    ASSERT_TRUE(text) << f.path;
    EXPECT_NE(text->find("numRecords"), std::string::npos);
    EXPECT_EQ(f.partition_values.count("part"), 1u);
  }
  ASSERT_OK_AND_ASSIGN(
      auto dv,
      Load(DeltaTableRoot(testdata / "delta/delta-kernel-rs-golden/dv-partitioned-with-checkpoint")));
  EXPECT_EQ(dv->files.size(), 15u);
  size_t with_dv = 0;
  for (const auto& f : dv->files) with_dv += f.deletion_vector ? 1 : 0;
  EXPECT_EQ(with_dv, 2u);
  ASSERT_OK_AND_ASSIGN(auto liquid, Load(testdata / "delta/delta-rs/table_with_liquid_clustering"));
  EXPECT_FALSE(liquid->domain_metadata.empty());
  ASSERT_OK_AND_ASSIGN(auto v2,
                       Load(DeltaTableRoot(testdata / "delta/delta-kernel-rs-golden/v2-checkpoint-parquet")));
  EXPECT_TRUE(v2->protocol.HasReaderFeature("v2Checkpoint"));
  EXPECT_EQ(v2->schema.fields.size(), 1u);
}

}  // namespace
}  // namespace basin::delta
