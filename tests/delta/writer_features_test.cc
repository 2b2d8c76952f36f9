// Which tables Basin may commit to (CheckWritable), and that Transaction::Commit refuses
// the others before writing anything.
#include <filesystem>

#include "delta/log_segment.h"
#include "delta/protocol.h"
#include "delta/transaction.h"
#include "transaction_test_util.h"

namespace basin::delta {
namespace {

namespace fs = std::filesystem;

StructType Schema(const std::string& json) {
  auto schema = ParseSchema(json);
  EXPECT_OK(schema.status());
  return schema.ok() ? *schema : StructType{};
}

const char* kPlainSchema =
    R"({"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]})";
// A legacy invariant on a nested field: s.x > 0.
const char* kInvariantSchema =
    R"({"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},)"
    R"({"name":"s","type":{"type":"struct","fields":[{"name":"x","type":"integer","nullable":true,)"
    R"("metadata":{"delta.invariants":"{\"expression\":{\"expression\":\"s.x > 0\"}}"}}]},)"
    R"("nullable":true,"metadata":{}}]})";

Protocol Features(std::vector<std::string> writer_features) {
  return Protocol{3, 7, std::vector<std::string>{}, std::move(writer_features)};
}

void ExpectMessageHas(const Status& status, const std::vector<std::string>& parts) {
  for (const auto& part : parts) {
    EXPECT_NE(status.message().find(part), std::string::npos)
        << "missing '" << part << "' in " << status.ToString();
  }
}

TEST(CheckWritableTest, LegacyWriterVersions) {
  const StructType plain = Schema(kPlainSchema);
  for (int32_t version : {1, 2, 3, 4, 5}) {
    SCOPED_TRACE(version);
    EXPECT_OK(CheckWritable(Protocol{1, version, std::nullopt, std::nullopt}, plain, "t"));
  }
  Status v6 = CheckWritable(Protocol{1, 6, std::nullopt, std::nullopt}, plain, "t version 3");
  ASSERT_ERROR_CODE(v6, kUnsupported);
  ExpectMessageHas(v6, {"t version 3", "writer version 6", "identity"});
  ASSERT_ERROR_CODE(CheckWritable(Protocol{1, 8, std::nullopt, std::nullopt}, plain, "t"), kUnsupported);
  ASSERT_ERROR_CODE(CheckWritable(Protocol{1, 0, std::nullopt, std::nullopt}, plain, "t"), kUnsupported);
  ASSERT_ERROR_CODE(CheckWritable(Protocol{1, 7, std::nullopt, std::nullopt}, plain, "t"), kCorruption);
}

TEST(CheckWritableTest, InvariantsOnlyWhileNoColumnHasOne) {
  const StructType invariants = Schema(kInvariantSchema);
  // Writer version 1 predates invariants: the metadata is not a writer requirement there.
  EXPECT_OK(CheckWritable(Protocol{1, 1, std::nullopt, std::nullopt}, invariants, "t"));
  Status legacy = CheckWritable(Protocol{1, 2, std::nullopt, std::nullopt}, invariants, "t");
  ASSERT_ERROR_CODE(legacy, kUnsupported);
  ExpectMessageHas(legacy, {"column 's.x'", "delta.invariants"});
  ASSERT_ERROR_CODE(CheckWritable(Features({"invariants"}), invariants, "t"), kUnsupported);
  EXPECT_OK(CheckWritable(Features({"invariants", "appendOnly"}), Schema(kPlainSchema), "t"));
  EXPECT_OK(CheckWritable(Features({"deletionVectors"}), invariants, "t"));
}

TEST(CheckWritableTest, TableFeatures) {
  const StructType plain = Schema(kPlainSchema);
  EXPECT_OK(CheckWritable(Features(SupportedWriterFeatures()), plain, "t"));
  EXPECT_OK(CheckWritable(Features({}), plain, "t"));
  Status refused = CheckWritable(Features({"appendOnly", "identityColumns", "rowTracking", "clustering",
                                           "variantType", "deletionVectors", "someFutureFeature"}),
                                 plain, "tbl version 9");
  ASSERT_ERROR_CODE(refused, kUnsupported);
  ExpectMessageHas(refused, {"tbl version 9", "'identityColumns'", "'rowTracking'", "'clustering'",
                             "'variantType'", "'someFutureFeature'"});
  EXPECT_EQ(refused.message().find("'appendOnly'"), std::string::npos) << refused.ToString();
  EXPECT_EQ(refused.message().find("'deletionVectors'"), std::string::npos) << refused.ToString();
  for (const char* feature : {"variantType-preview", "icebergCompatV2", "materializePartitionColumns",
                              "catalogManaged", "identityColumns"}) {
    SCOPED_TRACE(feature);
    ASSERT_ERROR_CODE(CheckWritable(Features({feature}), plain, "t"), kUnsupported);
  }
}

// Copies a shared table's _delta_log into `dir` (the data files are not needed to commit).
Result<std::shared_ptr<ObjectStore>> CopyLog(const fs::path& table, const fs::path& dir) {
  std::error_code ec;
  fs::copy(table / "_delta_log", dir / "_delta_log", fs::copy_options::recursive, ec);
  if (ec) return Status::IOError("copying " + table.string() + ": " + ec.message());
  return OpenLocalObjectStore(dir.string());
}

TEST(WriterFeaturesTestdataTest, RefusesCommitsToATableWithRowTrackingAndClustering) {
  SKIP_WITHOUT_SHARED_TESTDATA(testdata);
  const fs::path source = testdata / "delta" / "delta-rs" / "table_with_liquid_clustering";
  basin::testing::TempDir dir;
  ASSERT_OK_AND_ASSIGN(auto store, CopyLog(source, dir.path()));
  testing::TableFixture fixture(store);
  ASSERT_OK_AND_ASSIGN(auto snapshot, fixture.Load());  // readable: DVs only
  ASSERT_EQ(snapshot->version, 0);

  Transaction txn(snapshot, testing::TableFixture::Options());
  AddFile add = testing::TestAdd("new.parquet");
  add.partition_values.clear();
  txn.Add(add);
  auto result = txn.Commit();
  ASSERT_ERROR_CODE(result, kUnsupported);
  ExpectMessageHas(result.status(), {"version 0", "'rowTracking'", "'liquid'"});
  EXPECT_EQ(result.status().message().find("'domainMetadata'"), std::string::npos)
      << result.status().ToString();
  EXPECT_EQ(result.status().message().find("'deletionVectors'"), std::string::npos)
      << result.status().ToString();
  ASSERT_ERROR_CODE(store->Get(CommitKey(1)), kNotFound);
}

TEST(WriterFeaturesTestdataTest, CommitsToTablesWithSupportedFeatures) {
  SKIP_WITHOUT_SHARED_TESTDATA(testdata);
  // cdc_ict_table: writer features inCommitTimestamp, changeDataFeed, invariants, appendOnly;
  // table_with_column_mapping: writer version 5.
  for (const char* name : {"cdc_ict_table", "table_with_column_mapping"}) {
    SCOPED_TRACE(name);
    basin::testing::TempDir dir;
    ASSERT_OK_AND_ASSIGN(auto store, CopyLog(testdata / "delta" / "delta-rs" / name, dir.path()));
    testing::TableFixture fixture(store);
    ASSERT_OK_AND_ASSIGN(auto snapshot, fixture.Load());
    EXPECT_OK(CheckWritable(snapshot->protocol, snapshot->schema, name));
    Transaction txn(snapshot, testing::TableFixture::Options());
    txn.SetOperation("SET TBLPROPERTIES");
    Metadata metadata = snapshot->metadata;
    metadata.configuration["basin.test"] = "1";
    txn.UpdateMetadata(metadata);
    ASSERT_OK_AND_ASSIGN(CommitResult committed, txn.Commit());
    EXPECT_EQ(committed.version, snapshot->version + 1);
  }
}

}  // namespace
}  // namespace basin::delta
