#include "delta/actions.h"

#include "delta/paths.h"
#include "testing/test_util.h"

namespace basin::delta {
namespace {

const std::string kWhere = "_delta_log/00000000000000000003.json line 2";

template <typename T>
T ParseOne(const std::string& line) {
  auto parsed = ParseAction(line, kWhere);
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  if (!parsed.ok() || !*parsed) return T{};
  EXPECT_TRUE(std::holds_alternative<T>(**parsed)) << line;
  if (!std::holds_alternative<T>(**parsed)) return T{};
  return std::get<T>(**parsed);
}

TEST(ActionsTest, ParsesAddWithEveryField) {
  auto add = ParseOne<AddFile>(
      R"({"add":{"path":"p=1/a%20b.parquet","partitionValues":{"p":"1","q":null},"size":10,)"
      R"("modificationTime":5,"dataChange":false,"stats":"{\"numRecords\":3}","tags":{"t":"v"},)"
      R"("deletionVector":{"storageType":"u","pathOrInlineDv":"ab^-aqEH.-t@S}K{vb[*k^","offset":4,)"
      R"("sizeInBytes":40,"cardinality":6},"baseRowId":7,"defaultRowCommitVersion":2,)"
      R"("clusteringProvider":"liquid","someFutureField":[1,2]}})");
  EXPECT_EQ(add.path, "p=1/a%20b.parquet");
  ASSERT_EQ(add.partition_values.size(), 2u);
  EXPECT_EQ(add.partition_values.at("p"), "1");
  EXPECT_FALSE(add.partition_values.at("q").has_value());
  EXPECT_EQ(add.size, 10);
  EXPECT_EQ(add.modification_time, 5);
  EXPECT_FALSE(add.data_change);
  EXPECT_EQ(add.stats, "{\"numRecords\":3}");
  EXPECT_EQ(add.tags.at("t"), "v");
  ASSERT_TRUE(add.deletion_vector);
  EXPECT_EQ(add.deletion_vector->storage_type, 'u');
  EXPECT_EQ(add.deletion_vector->offset, 4);
  EXPECT_EQ(add.deletion_vector->size_in_bytes, 40);
  EXPECT_EQ(add.deletion_vector->cardinality, 6);
  EXPECT_EQ(add.deletion_vector->UniqueId(), "uab^-aqEH.-t@S}K{vb[*k^@4");
  EXPECT_EQ(add.base_row_id, 7);
  EXPECT_EQ(add.default_row_commit_version, 2);
  EXPECT_EQ(add.clustering_provider, "liquid");
}

TEST(ActionsTest, ReplayKeyIsDecodedPathPlusDeletionVector) {
  AddFile a;
  a.path = "a%20b.parquet";
  RemoveFile r;
  r.path = "a b.parquet";
  EXPECT_EQ(a.ReplayKey(), r.ReplayKey());
  a.deletion_vector = DeletionVectorDescriptor{'i', "wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L",
                                               std::nullopt, 40, 1};
  EXPECT_NE(a.ReplayKey(), r.ReplayKey());
  r.deletion_vector = a.deletion_vector;
  EXPECT_EQ(a.ReplayKey(), r.ReplayKey());
  EXPECT_EQ(a.deletion_vector->UniqueId(), "iwi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L");
}

TEST(ActionsTest, CheckpointRowsTakeTheOneNonNullAction) {
  auto txn = ParseOne<SetTransaction>(
      R"({"add":null,"remove":null,"txn":{"appId":"my-app","version":3},"metaData":null})");
  EXPECT_EQ(txn.app_id, "my-app");
  EXPECT_EQ(txn.version, 3);
  auto none = ParseAction(R"({"add":null,"txn":null})", kWhere);
  ASSERT_OK(none);
  EXPECT_FALSE(none->has_value());
  ASSERT_ERROR_CODE(ParseAction(R"({"add":{"path":"a"},"txn":{"appId":"x","version":1}})", kWhere),
                    kCorruption);
}

TEST(ActionsTest, CheckpointStatsParsedAndKeyValueMaps) {
  auto add = ParseOne<AddFile>(
      R"({"add":{"path":"a","partitionValues":[{"key":"p","value":"1"},{"key":"q","value":null}],"size":1,)"
      R"("modificationTime":1,"dataChange":true,"stats":null,"stats_parsed":{"numRecords":4,"minValues":{"x":1}},)"
      R"("partitionValues_parsed":{"p":1}}})");
  EXPECT_EQ(add.partition_values.at("p"), "1");
  EXPECT_FALSE(add.partition_values.at("q").has_value());
  ASSERT_TRUE(add.stats);
  auto stats = nlohmann::json::parse(*add.stats);
  EXPECT_EQ(stats["numRecords"], 4);
  EXPECT_EQ(stats["minValues"]["x"], 1);
}

TEST(ActionsTest, MissingOrMistypedFieldsAreCorruptionNamingWhereAndField) {
  Status st =
      ParseAction(R"({"add":{"partitionValues":{},"size":1,"modificationTime":1,"dataChange":true}})", kWhere)
          .status();
  ASSERT_EQ(st.code(), ErrorCode::kCorruption);
  EXPECT_NE(st.message().find(kWhere), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("add.path"), std::string::npos) << st.message();

  st = ParseAction(
           R"({"add":{"path":"a","partitionValues":{},"size":"big","modificationTime":1,"dataChange":true}})",
           kWhere)
           .status();
  ASSERT_EQ(st.code(), ErrorCode::kCorruption);
  EXPECT_NE(st.message().find("add.size"), std::string::npos) << st.message();

  st = ParseAction(R"({"protocol":{"minReaderVersion":1}})", kWhere).status();
  ASSERT_EQ(st.code(), ErrorCode::kCorruption);
  EXPECT_NE(st.message().find("protocol.minWriterVersion"), std::string::npos) << st.message();

  st = ParseAction(R"({"protocol":{"minReaderVersion":99999999999,"minWriterVersion":2}})", kWhere).status();
  EXPECT_EQ(st.code(), ErrorCode::kCorruption);
  st = ParseAction(
           R"({"add":{"path":"a","partitionValues":{},"size":1,"modificationTime":1,"dataChange":true,)"
           R"("deletionVector":{"storageType":"x","pathOrInlineDv":"","sizeInBytes":1,"cardinality":1}}})",
           kWhere)
           .status();
  EXPECT_EQ(st.code(), ErrorCode::kCorruption);
  ASSERT_ERROR_CODE(ParseAction("[1,2]", kWhere), kCorruption);
  ASSERT_ERROR_CODE(ParseAction(R"({"add":"text"})", kWhere), kCorruption);
  ASSERT_ERROR_CODE(
      ParseAction(R"({"metaData":{"id":"x","format":{"provider":"parquet"},"schemaString":"{}"}})", kWhere),
      kCorruption);
}

TEST(ActionsTest, UnknownActionsAreKeptByName) {
  auto unknown = ParseOne<UnknownAction>(R"({"some_new_action":{"a":1}})");
  EXPECT_EQ(unknown.name, "some_new_action");
  EXPECT_EQ(unknown.raw["a"], 1);
  EXPECT_EQ(SerializeAction(unknown), R"({"some_new_action":{"a":1}})");
}

TEST(ActionsTest, CommitFileErrorsNameTheLine) {
  std::string content = "{\"commitInfo\":{\"timestamp\":1,\"operation\":\"WRITE\"}}\n{\"add\":{\"path\":\n";
  Status st = ParseCommitFile(content, "_delta_log/00000000000000000003.json").status();
  ASSERT_EQ(st.code(), ErrorCode::kCorruption);
  EXPECT_NE(st.message().find("_delta_log/00000000000000000003.json line 2"), std::string::npos)
      << st.message();

  ASSERT_OK_AND_ASSIGN(auto actions,
                       ParseCommitFile("\n{\"txn\":{\"appId\":\"a\",\"version\":1}}\r\n\n", "x"));
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<SetTransaction>(actions[0]));
}

TEST(ActionsTest, CommitInfoKeepsTheWholeObject) {
  auto info = ParseOne<CommitInfo>(
      R"({"commitInfo":{"timestamp":10,"inCommitTimestamp":12,"operation":"MERGE","operationParameters":{"p":"x"},"engineInfo":"e"}})");
  EXPECT_EQ(info.timestamp, 10);
  EXPECT_EQ(info.in_commit_timestamp, 12);
  EXPECT_EQ(info.operation, "MERGE");
  EXPECT_EQ(info.raw["engineInfo"], "e");
  // Free-form provenance with odd types does not fail the commit.
  auto odd = ParseOne<CommitInfo>(R"({"commitInfo":{"timestamp":"yesterday","operation":5}})");
  EXPECT_FALSE(odd.timestamp);
  ASSERT_ERROR_CODE(ParseAction(R"({"commitInfo":{"inCommitTimestamp":"x"}})", kWhere), kCorruption);
}

TEST(ActionsTest, ProtocolFeatures) {
  auto p = ParseOne<Protocol>(
      R"({"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["deletionVectors"],"writerFeatures":["appendOnly"]}})");
  EXPECT_TRUE(p.HasReaderFeature("deletionVectors"));
  EXPECT_FALSE(p.HasReaderFeature("columnMapping"));
  EXPECT_TRUE(p.HasWriterFeature("appendOnly"));
  Protocol legacy;
  EXPECT_FALSE(legacy.HasReaderFeature("deletionVectors"));
}

TEST(ActionsTest, SerializeRoundTripsEveryActionType) {
  AddFile add;
  add.path = "x=1/f.parquet";
  add.partition_values = {{"x", "1"}, {"y", std::nullopt}};
  add.size = 3;
  add.modification_time = 4;
  add.stats = "{\"numRecords\":1}";
  add.deletion_vector = DeletionVectorDescriptor{'u', "abc", 1, 10, 2};
  RemoveFile remove;
  remove.path = "f.parquet";
  remove.deletion_timestamp = 9;
  remove.size = 3;
  Metadata md;
  md.id = "id";
  md.schema_string = R"({"type":"struct","fields":[]})";
  md.partition_columns = {"x"};
  md.configuration = {{"k", "v"}};
  Protocol protocol{3, 7, std::vector<std::string>{"deletionVectors"},
                    std::vector<std::string>{"deletionVectors"}};
  std::vector<Action> actions = {add,
                                 remove,
                                 md,
                                 protocol,
                                 SetTransaction{"app", 5, 6},
                                 DomainMetadata{"d", "{}", true},
                                 CheckpointMetadata{3, {}},
                                 Sidecar{"s.parquet", 1, 2},
                                 CdcFile{"_change_data/c.parquet", {}, 8, false}};
  for (const auto& action : actions) {
    std::string line = SerializeAction(action);
    ASSERT_OK_AND_ASSIGN(auto parsed, ParseAction(line, "roundtrip"));
    ASSERT_TRUE(parsed.has_value());
    EXPECT_EQ(parsed->index(), action.index()) << line;
    EXPECT_EQ(SerializeAction(*parsed), line);
  }
  auto back = ParseOne<AddFile>(SerializeAction(add));
  EXPECT_EQ(back.partition_values, add.partition_values);
  EXPECT_EQ(back.deletion_vector->UniqueId(), "uabc@1");
  EXPECT_EQ(ActionName(actions[2]), "metaData");
}

TEST(PathsTest, DecodesLogPaths) {
  EXPECT_EQ(DecodeDataPath("letter=%252F%252520%2525f/part-0.parquet"), "letter=%2F%2520%25f/part-0.parquet");
  EXPECT_EQ(DecodeDataPath("a%20b/c%3Ad.parquet"), "a b/c:d.parquet");
  EXPECT_EQ(DecodeDataPath("bad%zzescape%4"), "bad%zzescape%4");
  EXPECT_EQ(DecodeDataPath("file:/tmp/t/a%20b.parquet"), "/tmp/t/a b.parquet");
  EXPECT_EQ(DecodeDataPath("file:///tmp/t/x.parquet"), "/tmp/t/x.parquet");
  EXPECT_EQ(DecodeDataPath("s3://bucket/t/a%3Db.parquet"), "s3://bucket/t/a=b.parquet");
  EXPECT_TRUE(IsAbsoluteDataPath("/tmp/x"));
  EXPECT_TRUE(IsAbsoluteDataPath("s3://b/x"));
  EXPECT_FALSE(IsAbsoluteDataPath("p=1/x.parquet"));
  EXPECT_FALSE(IsAbsoluteDataPath("date=2024-01-01 10:00:00/x.parquet"));
}

}  // namespace
}  // namespace basin::delta
