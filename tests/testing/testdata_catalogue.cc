#include "testing/testdata_catalogue.h"

namespace basin::testing {

namespace {

DeltaTableExpectation Log(int64_t rows) { return {rows, RowCountSource::kLog, std::nullopt}; }
DeltaTableExpectation Footers(int64_t rows) { return {rows, RowCountSource::kFooters, std::nullopt}; }
DeltaTableExpectation Fails(ErrorCode code) { return {0, RowCountSource::kLog, code}; }

}  // namespace

const std::map<std::string, DeltaTableExpectation>& DeltaTestTables() {
  static const auto* tables = new std::map<std::string, DeltaTableExpectation>{
      // delta-kernel-rs-golden
      {"delta-kernel-rs-golden/data-reader-primitives", Footers(11)},
      {"delta-kernel-rs-golden/data-reader-partition-values", Footers(3)},
      {"delta-kernel-rs-golden/data-reader-nested-struct", Footers(10)},
      {"delta-kernel-rs-golden/data-reader-array-complex-objects", Footers(10)},
      {"delta-kernel-rs-golden/data-reader-map", Footers(10)},
      {"delta-kernel-rs-golden/data-reader-escaped-chars", Footers(3)},
      {"delta-kernel-rs-golden/data-reader-timestamp_ntz", Log(9)},
      {"delta-kernel-rs-golden/basic-decimal-table", Log(4)},
      {"delta-kernel-rs-golden/decimal-various-scale-precision", Log(3)},
      {"delta-kernel-rs-golden/basic-with-inserts-deletes-checkpoint", Log(41)},
      {"delta-kernel-rs-golden/multi-part-checkpoint", Log(31)},
      {"delta-kernel-rs-golden/only-checkpoint-files", Log(25)},
      {"delta-kernel-rs-golden/corrupted-last-checkpoint-kernel", Log(100)},
      {"delta-kernel-rs-golden/v2-checkpoint-json", Log(10)},
      {"delta-kernel-rs-golden/v2-checkpoint-parquet", Log(10)},
      {"delta-kernel-rs-golden/dv-partitioned-with-checkpoint", Log(35)},
      {"delta-kernel-rs-golden/dv-with-columnmapping", Log(35)},
      {"delta-kernel-rs-golden/log-replay-dv-key-cases", Log(47)},
      {"delta-kernel-rs-golden/log-replay-latest-metadata-protocol", Log(40)},
      {"delta-kernel-rs-golden/table-with-columnmapping-mode-name", Log(6)},
      {"delta-kernel-rs-golden/parquet-all-types", Log(200)},
      {"delta-kernel-rs-golden/parquet-all-types-legacy-format", Log(200)},
      {"delta-kernel-rs-golden/kernel-timestamp-int96", Log(5)},
      {"delta-kernel-rs-golden/time-travel-start-start20-start40", Footers(30)},
      {"delta-kernel-rs-golden/basic-with-vacuum-protocol-check-feature", Log(100)},
      {"delta-kernel-rs-golden/deltalog-invalid-protocol-version", Fails(ErrorCode::kUnsupported)},
      {"delta-kernel-rs-golden/versions-not-contiguous", Fails(ErrorCode::kCorruption)},
      // dat
      {"dat/basic_append", Log(5)},
      {"dat/basic_partitioned", Log(6)},
      {"dat/multi_partitioned", Log(2)},
      {"dat/with_schema_change", Log(3)},
      // delta-io-delta
      {"delta-io-delta/type-widening", Log(2)},
      {"delta-io-delta/spark-variant-checkpoint", Log(102)},
      {"delta-io-delta/table-with-icebegCompatV2Enabled", Log(6)},
      {"delta-io-delta/kernel-timestamp-partition-col-ISO8601", Log(2)},
      {"delta-io-delta/parquet-decimal-dictionaries", Log(1000000)},
      {"delta-io-delta/basic-dv-with-checkpoint", Log(454)},
      {"delta-io-delta/spark-shredded-variant-preview-delta", Log(102)},
      // Basin does not implement catalogManaged, so it must refuse rather than show v0.
      {"delta-io-delta/catalog-owned-preview", Fails(ErrorCode::kUnsupported)},
      {"delta-io-delta/delta-0.1.0", Footers(3)},
      {"delta-io-delta/transaction_log_schema_evolvability", Log(18)},
      // delta-kernel-rs
      {"delta-kernel-rs/compacted-log-files-table", Log(5)},
      {"delta-kernel-rs/crc-full", Log(0)},
      {"delta-kernel-rs/cdf-table-with-dv", Log(10)},
      {"delta-kernel-rs/void-column", Log(3)},
      {"delta-kernel-rs/mixed-nulls", Log(15)},
      {"delta-kernel-rs/app-txn-checkpoint", Log(22)},
      {"delta-kernel-rs/v1-multi-part-partitioned-struct-stats-only", Log(5)},
      {"delta-kernel-rs/v2-classic-checkpoint-parquet", Log(20)},
      {"delta-kernel-rs/partitioned_with_materialize_feature", Log(6)},
      {"delta-kernel-rs/with-short-dv", Log(7)},
      {"delta-kernel-rs/stats-writing-all-types", Log(4)},
      // delta-rs
      {"delta-rs/simple_table", Footers(3)},
      {"delta-rs/delta-0.8.0-partitioned", Footers(7)},
      {"delta-rs/partition-type-primitives", Log(16)},
      {"delta-rs/python-0.25.5-checkpoint", Log(6)},
      {"delta-rs/http_requests", Log(1581)},
      {"delta-rs/table_with_edge_timestamps", Log(2)},
      {"delta-rs/table_with_liquid_clustering", Log(10)},
      {"delta-rs/table_with_column_mapping", Log(5)},
      {"delta-rs/delta-1.2.1-only-struct-stats", Log(12)},
      {"delta-rs/simple_table_features", Fails(ErrorCode::kUnsupported)},
      {"delta-rs/cdc_ict_table", Log(2)},
  };
  return *tables;
}

std::filesystem::path DeltaTableRoot(const std::filesystem::path& case_dir) {
  if (std::filesystem::is_directory(case_dir / "delta" / "_delta_log")) return case_dir / "delta";
  return case_dir;
}

}  // namespace basin::testing
