#include "commands/table_features.h"

#include <gtest/gtest.h>

#include <set>

#include "delta/protocol.h"
#include "testing/test_util.h"

namespace basin::commands {
namespace {

using Strings = std::vector<std::string>;

delta::DataTypePtr Primitive(const std::string& name) {
  auto type = std::make_shared<delta::DataType>();
  type->primitive = name;
  return type;
}

delta::StructField Field(const std::string& name, delta::DataTypePtr type) {
  delta::StructField field;
  field.name = name;
  field.type = std::move(type);
  return field;
}

delta::StructType PlainSchema() {
  delta::StructType schema;
  schema.fields.push_back(Field("id", Primitive("long")));
  schema.fields.push_back(Field("name", Primitive("string")));
  return schema;
}

delta::Metadata WithConfig(std::map<std::string, std::string> configuration) {
  delta::Metadata metadata;
  metadata.configuration = std::move(configuration);
  return metadata;
}

delta::Protocol Legacy(int reader, int writer) {
  delta::Protocol protocol;
  protocol.min_reader_version = reader;
  protocol.min_writer_version = writer;
  return protocol;
}

std::set<std::string> AsSet(const std::optional<Strings>& list) {
  return list ? std::set<std::string>(list->begin(), list->end()) : std::set<std::string>{};
}

TEST(ValidateTablePropertiesTest, AcceptsKnownPropertiesAndUserKeys) {
  EXPECT_OK(ValidateTableProperties({
      {"delta.enableDeletionVectors", "TRUE"},
      {"delta.enableChangeDataFeed", "false"},
      {"delta.columnMapping.mode", "name"},
      {"delta.appendOnly", "true"},
      {"delta.checkpointInterval", "5"},
      {"delta.logRetentionDuration", "interval 30 days"},
      {"delta.deletedFileRetentionDuration", "interval 1 week"},
      {"delta.checkpointPolicy", "v2"},
      {"delta.dataSkippingNumIndexedCols", "-1"},
      {"delta.dataSkippingStatsColumns", "id, `a.b`.c"},
      {"delta.targetFileSize", "1048576"},
      {"delta.enableTypeWidening", "false"},
      {"delta.isolationLevel", "Serializable"},
      {"delta.constraints.positive", "id > 0"},
      {"delta.feature.deletionVectors", "supported"},
      {"owner", "team-a"},
      {"anything.at.all", "x"},
  }));
  EXPECT_OK(ValidateTableProperties({{"delta.targetFileSize", "128mb"}}));
  EXPECT_OK(ValidateTableProperties({{"delta.isolationLevel", "WriteSerializable"}}));
}

TEST(TablePropertyParsersTest, TargetFileSizeTakesBytesOrUnits) {
  auto bytes = [](const std::string& value) {
    delta::Metadata metadata;
    metadata.configuration["delta.targetFileSize"] = value;
    return TargetFileSizeBytes(metadata);
  };
  EXPECT_EQ(*TargetFileSizeBytes(delta::Metadata{}), int64_t{128} << 20);
  EXPECT_EQ(*bytes("134217728"), 134217728);
  EXPECT_EQ(*bytes("100b"), 100);
  EXPECT_EQ(*bytes("512k"), 512 << 10);
  EXPECT_EQ(*bytes("64MB"), int64_t{64} << 20);
  EXPECT_EQ(*bytes(" 64 mb "), int64_t{64} << 20);
  EXPECT_EQ(*bytes("1g"), int64_t{1} << 30);
  EXPECT_EQ(*bytes("2GB"), int64_t{2} << 30);
  EXPECT_EQ(*bytes("1t"), int64_t{1} << 40);
  for (const char* bad :
       {"", "0", "-1g", "1.5g", "g", "1 gigabyte", "1gbb", "99999999999999999999", "9999999t"}) {
    auto got = bytes(bad);
    ASSERT_FALSE(got.ok()) << bad;
    EXPECT_EQ(got.status().code(), ErrorCode::kInvalidArgument) << bad;
    EXPECT_NE(got.status().message().find("delta.targetFileSize"), std::string::npos)
        << got.status().message();
    EXPECT_EQ(ValidateTableProperties({{"delta.targetFileSize", bad}}).code(), ErrorCode::kInvalidArgument)
        << bad;
  }
}

TEST(ValidateTablePropertiesTest, IsolationLevelNamesTheAllowedValues) {
  // Other spellings would be read back as Serializable whatever they meant.
  for (const char* value : {"serializable", "writeSerializable", "SnapshotIsolation", ""}) {
    Status status = ValidateTableProperties({{"delta.isolationLevel", value}});
    ASSERT_EQ(status.code(), ErrorCode::kInvalidArgument) << value;
    EXPECT_NE(status.message().find("delta.isolationLevel"), std::string::npos) << status.message();
    EXPECT_NE(status.message().find("'Serializable' or 'WriteSerializable'"), std::string::npos)
        << status.message();
  }
}

TEST(ValidateTablePropertiesTest, RejectsBadValuesNamingTheProperty) {
  const std::pair<const char*, const char*> kBad[] = {
      {"delta.enableDeletionVectors", "maybe"},
      {"delta.columnMapping.mode", "foo"},
      {"delta.checkpointInterval", "0"},
      {"delta.checkpointInterval", "ten"},
      {"delta.logRetentionDuration", "forever"},
      {"delta.checkpointPolicy", "v3"},
      {"delta.dataSkippingNumIndexedCols", "-2"},
      {"delta.dataSkippingStatsColumns", " , "},
      {"delta.targetFileSize", "0"},
      {"delta.targetFileSize", "big"},
      {"delta.constraints.c", "  "},
      {"delta.constraints.", "a > 0"},
      {"delta.feature.deletionVectors", "on"},
      {"delta.feature.rowTracking", "supported"},
      {"delta.feature.noSuchThing", "supported"},
      {"delta.columnMapping.maxColumnId", "7"},
      {"delta.noSuchProperty", "1"},
  };
  for (const auto& [key, value] : kBad) {
    Status status = ValidateTableProperties({{key, value}});
    ASSERT_EQ(status.code(), ErrorCode::kInvalidArgument) << key << "=" << value;
    EXPECT_NE(status.message().find(key), std::string::npos) << status.message();
  }
}

TEST(RequiredProtocolTest, PlainTableIsOneTwo) {
  ASSERT_OK_AND_ASSIGN(auto protocol, RequiredProtocol(WithConfig({}), PlainSchema()));
  EXPECT_EQ(protocol.min_reader_version, 1);
  EXPECT_EQ(protocol.min_writer_version, 2);
  EXPECT_FALSE(protocol.reader_features);
  EXPECT_FALSE(protocol.writer_features);
}

TEST(RequiredProtocolTest, LegacyFeaturesUseLegacyVersions) {
  struct Case {
    std::map<std::string, std::string> config;
    int reader, writer;
  };
  const Case kCases[] = {
      {{{"delta.appendOnly", "true"}}, 1, 2},
      {{{"delta.constraints.c", "id > 0"}}, 1, 3},
      {{{"delta.enableChangeDataFeed", "true"}}, 1, 4},
      {{{"delta.enableChangeDataFeed", "false"}}, 1, 2},
      {{{"delta.columnMapping.mode", "name"}}, 2, 5},
      {{{"delta.columnMapping.mode", "none"}}, 1, 2},
      {{{"delta.constraints.c", "id > 0"}, {"delta.columnMapping.mode", "id"}}, 2, 5},
  };
  for (const auto& c : kCases) {
    ASSERT_OK_AND_ASSIGN(auto protocol, RequiredProtocol(WithConfig(c.config), PlainSchema()));
    EXPECT_EQ(protocol.min_reader_version, c.reader) << c.config.begin()->first;
    EXPECT_EQ(protocol.min_writer_version, c.writer) << c.config.begin()->first;
    EXPECT_FALSE(protocol.writer_features);
  }
}

TEST(RequiredProtocolTest, GeneratedColumnNeedsWriterFour) {
  delta::StructType schema = PlainSchema();
  schema.fields[1].metadata["delta.generationExpression"] = "CAST(id AS VARCHAR)";
  ASSERT_OK_AND_ASSIGN(auto protocol, RequiredProtocol(WithConfig({}), schema));
  EXPECT_EQ(protocol.min_reader_version, 1);
  EXPECT_EQ(protocol.min_writer_version, 4);
}

TEST(RequiredProtocolTest, DeletionVectorsNeedReaderAndWriterFeatures) {
  ASSERT_OK_AND_ASSIGN(auto protocol, RequiredProtocol(WithConfig({{"delta.enableDeletionVectors", "true"},
                                                                   {"delta.constraints.c", "id > 0"}}),
                                                       PlainSchema()));
  EXPECT_EQ(protocol.min_reader_version, 3);
  EXPECT_EQ(protocol.min_writer_version, 7);
  EXPECT_EQ(AsSet(protocol.reader_features), (std::set<std::string>{"deletionVectors"}));
  EXPECT_EQ(AsSet(protocol.writer_features), (std::set<std::string>{"checkConstraints", "deletionVectors"}));
  EXPECT_OK(delta::CheckWritable(protocol, PlainSchema(), "t"));
}

TEST(RequiredProtocolTest, NestedTimestampNtzNeedsTheFeature) {
  delta::StructType schema = PlainSchema();
  auto element = std::make_shared<delta::DataType>();
  element->kind = delta::DataType::Kind::kStruct;
  element->struct_type.fields.push_back(Field("at", Primitive("timestamp_ntz")));
  auto array = std::make_shared<delta::DataType>();
  array->kind = delta::DataType::Kind::kArray;
  array->element_type = element;
  schema.fields.push_back(Field("events", array));
  ASSERT_OK_AND_ASSIGN(auto protocol, RequiredProtocol(WithConfig({}), schema));
  EXPECT_EQ(protocol.min_reader_version, 3);
  EXPECT_EQ(AsSet(protocol.reader_features), (std::set<std::string>{"timestampNtz"}));
  EXPECT_EQ(AsSet(protocol.writer_features), (std::set<std::string>{"timestampNtz"}));
}

TEST(RequiredProtocolTest, WriterOnlyFeatureKeepsReaderVersion) {
  ASSERT_OK_AND_ASSIGN(
      auto protocol,
      RequiredProtocol(WithConfig({{"delta.enableInCommitTimestamps", "true"}}), PlainSchema()));
  EXPECT_EQ(protocol.min_reader_version, 1);
  EXPECT_EQ(protocol.min_writer_version, 7);
  EXPECT_FALSE(protocol.reader_features);
  EXPECT_EQ(AsSet(protocol.writer_features), (std::set<std::string>{"inCommitTimestamp"}));

  // Column mapping alongside: reader version 2 covers it without a reader feature list.
  ASSERT_OK_AND_ASSIGN(protocol, RequiredProtocol(WithConfig({{"delta.enableInCommitTimestamps", "true"},
                                                              {"delta.columnMapping.mode", "name"}}),
                                                  PlainSchema()));
  EXPECT_EQ(protocol.min_reader_version, 2);
  EXPECT_FALSE(protocol.reader_features);
  EXPECT_EQ(AsSet(protocol.writer_features), (std::set<std::string>{"columnMapping", "inCommitTimestamp"}));
}

TEST(RequiredProtocolTest, ExplicitFeaturePropertyListsTheFeature) {
  ASSERT_OK_AND_ASSIGN(
      auto protocol,
      RequiredProtocol(WithConfig({{"delta.feature.appendOnly", "supported"}}), PlainSchema()));
  EXPECT_EQ(protocol.min_writer_version, 7);
  EXPECT_EQ(AsSet(protocol.writer_features), (std::set<std::string>{"appendOnly"}));
  ASSERT_OK_AND_ASSIGN(
      protocol,
      RequiredProtocol(WithConfig({{"delta.feature.vacuumProtocolCheck", "supported"}}), PlainSchema()));
  EXPECT_EQ(protocol.min_reader_version, 3);
  EXPECT_EQ(AsSet(protocol.reader_features), (std::set<std::string>{"vacuumProtocolCheck"}));
}

TEST(RequiredProtocolTest, NeverLowerThanCurrent) {
  ASSERT_OK_AND_ASSIGN(auto protocol, RequiredProtocol(WithConfig({}), PlainSchema(), Legacy(1, 4)));
  EXPECT_EQ(protocol.min_reader_version, 1);
  EXPECT_EQ(protocol.min_writer_version, 4);

  delta::Protocol current;
  current.min_reader_version = 3;
  current.min_writer_version = 7;
  current.reader_features = Strings{"deletionVectors"};
  current.writer_features = Strings{"deletionVectors", "domainMetadata"};
  ASSERT_OK_AND_ASSIGN(protocol, RequiredProtocol(WithConfig({}), PlainSchema(), current));
  EXPECT_EQ(AsSet(protocol.reader_features), AsSet(current.reader_features));
  EXPECT_EQ(AsSet(protocol.writer_features), AsSet(current.writer_features));
}

TEST(RequiredProtocolTest, UpgradeFromLegacyListsImpliedFeatures) {
  // (2,5) implies appendOnly..columnMapping: all of them stay supported after the upgrade.
  ASSERT_OK_AND_ASSIGN(auto protocol, RequiredProtocol(WithConfig({{"delta.columnMapping.mode", "name"},
                                                                   {"delta.enableDeletionVectors", "true"}}),
                                                       PlainSchema(), Legacy(2, 5)));
  EXPECT_EQ(protocol.min_reader_version, 3);
  EXPECT_EQ(protocol.min_writer_version, 7);
  EXPECT_EQ(AsSet(protocol.writer_features),
            (std::set<std::string>{"appendOnly", "invariants", "checkConstraints", "changeDataFeed",
                                   "generatedColumns", "columnMapping", "deletionVectors"}));
  EXPECT_EQ(AsSet(protocol.reader_features), (std::set<std::string>{"columnMapping", "deletionVectors"}));

  // Adding a reader feature to a (1,7) table raises only the reader side.
  delta::Protocol current;
  current.min_reader_version = 1;
  current.min_writer_version = 7;
  current.writer_features = Strings{"appendOnly"};
  ASSERT_OK_AND_ASSIGN(protocol, RequiredProtocol(WithConfig({{"delta.enableDeletionVectors", "true"}}),
                                                  PlainSchema(), current));
  EXPECT_EQ(protocol.min_reader_version, 3);
  EXPECT_EQ(AsSet(protocol.writer_features), (std::set<std::string>{"appendOnly", "deletionVectors"}));
  EXPECT_EQ(AsSet(protocol.reader_features), (std::set<std::string>{"deletionVectors"}));
}

TEST(AssignColumnMappingTest, AssignsIdsAndPhysicalNamesAtEveryDepth) {
  delta::StructType schema = PlainSchema();
  auto inner = std::make_shared<delta::DataType>();
  inner->kind = delta::DataType::Kind::kStruct;
  inner->struct_type.fields.push_back(Field("x", Primitive("integer")));
  schema.fields.push_back(Field("s", inner));
  std::map<std::string, std::string> config = {{"delta.columnMapping.mode", "name"}};
  AssignColumnMapping(schema, config);
  EXPECT_EQ(config["delta.columnMapping.maxColumnId"], "4");
  std::set<int64_t> ids;
  std::set<std::string> names;
  auto record = [&](const delta::StructField& f) {
    ASSERT_TRUE(f.ColumnMappingId());
    ids.insert(*f.ColumnMappingId());
    names.insert(f.PhysicalName());
    EXPECT_EQ(f.PhysicalName().rfind("col-", 0), 0u) << f.PhysicalName();
  };
  for (const auto& f : schema.fields) record(f);
  record(schema.fields[2].type->struct_type.fields[0]);
  EXPECT_EQ(ids, (std::set<int64_t>{1, 2, 3, 4}));
  EXPECT_EQ(names.size(), 4u);

  // A new column later gets the next id; existing ones keep theirs.
  const std::string id_physical = schema.fields[0].PhysicalName();
  schema.fields.push_back(Field("added", Primitive("string")));
  AssignColumnMapping(schema, config);
  EXPECT_EQ(schema.fields[3].ColumnMappingId(), 5);
  EXPECT_EQ(schema.fields[0].PhysicalName(), id_physical);
  EXPECT_EQ(config["delta.columnMapping.maxColumnId"], "5");
}

TEST(AssignColumnMappingTest, NoChangeWithoutMode) {
  delta::StructType schema = PlainSchema();
  std::map<std::string, std::string> config = {{"delta.columnMapping.mode", "none"}};
  AssignColumnMapping(schema, config);
  EXPECT_FALSE(schema.fields[0].ColumnMappingId());
  EXPECT_EQ(config.count("delta.columnMapping.maxColumnId"), 0u);
}

TEST(AssignColumnMappingTest, ExistingTableKeepsNamesAsPhysicalNames) {
  delta::StructType schema = PlainSchema();
  std::map<std::string, std::string> config = {{"delta.columnMapping.mode", "name"}};
  AssignColumnMapping(schema, config, PhysicalNames::kSameAsName);
  EXPECT_EQ(schema.fields[0].PhysicalName(), "id");
  EXPECT_EQ(schema.fields[1].PhysicalName(), "name");
  EXPECT_EQ(schema.fields[1].ColumnMappingId(), 2);
}

TEST(TablePropertyIsTrueTest, CaseInsensitiveWithFallback) {
  auto metadata = WithConfig({{"delta.appendOnly", "TRUE"}, {"delta.enableChangeDataFeed", "no"}});
  EXPECT_TRUE(TablePropertyIsTrue(metadata, "delta.appendOnly"));
  EXPECT_FALSE(TablePropertyIsTrue(metadata, "delta.enableChangeDataFeed", true));
  EXPECT_TRUE(TablePropertyIsTrue(metadata, "delta.enableDeletionVectors", true));
  EXPECT_FALSE(TablePropertyIsTrue(metadata, "delta.enableDeletionVectors"));
}

}  // namespace
}  // namespace basin::commands
