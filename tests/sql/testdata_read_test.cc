// Reads tables written by Spark and delta-rs (../shared/testdata) through the Session.
#include <gtest/gtest.h>

#include <filesystem>

#include "sql/session.h"
#include "testing/test_util.h"
#include "testing/testdata_catalogue.h"

namespace basin::sql {
namespace {

class TestdataReadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = testing::SharedTestDataDir();
    if (!dir) GTEST_SKIP() << "../shared/testdata not found (set BASIN_TESTDATA); skipping";
    SessionOptions options;
    options.warehouse_dir = (*dir / "delta").string();
    ASSERT_OK_AND_ASSIGN(session_, Session::Open(options));
  }

  Result<engine::QueryResult> Query(const std::string& sql) {
    ASSIGN_OR_RETURN(auto results, session_->Execute(sql));
    return results.back().result;
  }

  std::string Count(const std::string& table, const std::string& args = "") {
    auto r = Query("SELECT count(*) FROM delta_scan('" + table + "'" + args + ")");
    EXPECT_TRUE(r.ok()) << table << ": " << r.status().ToString();
    return r.ok() ? r->at(0, 0).value_or("NULL") : "error";
  }

  std::unique_ptr<Session> session_;
};

TEST_F(TestdataReadTest, RowCountsMatchTheCatalogue) {
  // A sample read through the Session's delta_scan; the conformance suite reads them all.
  const std::filesystem::path warehouse = session_->options().warehouse_dir;
  for (const char* name :
       {"delta-kernel-rs-golden/dv-with-columnmapping", "delta-kernel-rs-golden/basic-decimal-table",
        "delta-kernel-rs-golden/kernel-timestamp-int96", "delta-kernel-rs-golden/data-reader-escaped-chars",
        "delta-kernel-rs/cdf-table-with-dv", "delta-kernel-rs/partitioned_with_materialize_feature",
        "delta-io-delta/table-with-icebegCompatV2Enabled", "delta-rs/table_with_column_mapping"}) {
    const testing::DeltaTableExpectation& expected = testing::DeltaTestTables().at(name);
    const std::string root = testing::DeltaTableRoot(warehouse / name).lexically_relative(warehouse).string();
    EXPECT_EQ(Count(root), std::to_string(expected.rows)) << name;
  }
}

TEST_F(TestdataReadTest, TimeTravel) {
  EXPECT_EQ(Count("delta-kernel-rs-golden/time-travel-start-start20-start40/delta", ", version => 0"), "10");
  EXPECT_EQ(Count("delta-kernel-rs-golden/time-travel-start-start20-start40/delta", ", version => 1"), "20");
}

TEST_F(TestdataReadTest, TypeWideningUpcastsOldFiles) {
  // The row with id 1 comes from a file written before the columns were widened.
  ASSERT_OK_AND_ASSIGN(auto r,
                       Query("SELECT byte_long, typeof(byte_long), float_double, typeof(float_double), "
                             "date_timestamp_ntz, typeof(int_decimal) "
                             "FROM delta_scan('delta-io-delta/type-widening') WHERE byte_long = 1"));
  ASSERT_EQ(r.row_count(), 1u);
  EXPECT_EQ(r.at(0, 1), "BIGINT");
  EXPECT_EQ(r.at(0, 2), "3.4000000953674316");
  EXPECT_EQ(r.at(0, 3), "DOUBLE");
  EXPECT_EQ(r.at(0, 4), "2024-09-09 00:00:00");
  EXPECT_EQ(r.at(0, 5).value_or("").rfind("DECIMAL", 0), 0u);
}

TEST_F(TestdataReadTest, ColumnMappingShowsLogicalNamesAndSkipsOnPhysicalStats) {
  auto results = session_->Execute(
      "SELECT \"Company Very Short\", count(*) FROM delta_scan('delta-rs/table_with_column_mapping') "
      "GROUP BY ALL ORDER BY ALL");
  ASSERT_OK(results.status());
  EXPECT_GT((*results)[0].result.row_count(), 0u);
}

TEST_F(TestdataReadTest, SkippingMatchesAFullScanOnPartitionedTables) {
  const std::string query =
      "SELECT * FROM delta_scan('delta-rs/partition-type-primitives') WHERE is_active = 'true' OR year = "
      "'2024'"
      " ORDER BY ALL";
  ASSERT_OK_AND_ASSIGN(auto with, session_->Execute(query));
  SessionOptions options = session_->options();
  options.data_skipping = false;
  ASSERT_OK_AND_ASSIGN(auto off, Session::Open(options));
  ASSERT_OK_AND_ASSIGN(auto without, off->Execute(query));
  EXPECT_EQ(with[0].result.rows, without[0].result.rows);
}

TEST_F(TestdataReadTest, VariantColumnsReadAsJson) {
  // More in tests/engine/variant_test.cc.
  ASSERT_OK_AND_ASSIGN(
      auto r, Query("SELECT v FROM delta_scan('delta-io-delta/spark-variant-checkpoint') WHERE id = 7"));
  ASSERT_EQ(r.row_count(), 1u);
  EXPECT_EQ(r.at(0, 0), "{\"key\":7}");
}

TEST_F(TestdataReadTest, DescribeHistoryOfASparkTable) {
  ASSERT_OK_AND_ASSIGN(auto r, Query("DESCRIBE HISTORY delta_scan('delta-rs/cdc_ict_table')"));
  ASSERT_GT(r.row_count(), 0u);
  EXPECT_TRUE(r.at(0, 2).has_value());  // operation
}

}  // namespace
}  // namespace basin::sql
