#include "delta/schema.h"

#include "delta/protocol.h"
#include "testing/test_util.h"

namespace basin::delta {
namespace {

const char* kNested = R"json({"type":"struct","fields":[
  {"name":"id","type":"long","nullable":false,"metadata":{"delta.columnMapping.id":1,"delta.columnMapping.physicalName":"col-1a"}},
  {"name":"amount","type":"decimal(10, 2)","nullable":true,"metadata":{}},
  {"name":"ts","type":"timestamp","nullable":true,"metadata":{}},
  {"name":"ntz","type":"timestamp_ntz","nullable":true,"metadata":{}},
  {"name":"nothing","type":"void","nullable":true,"metadata":{}},
  {"name":"v","type":"variant","nullable":true,"metadata":{}},
  {"name":"s","type":{"type":"struct","fields":[{"name":"a b","type":"integer","nullable":true,"metadata":{}},
                                                {"name":"q\"","type":"binary","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}},
  {"name":"arr","type":{"type":"array","elementType":{"type":"array","elementType":"short","containsNull":true},"containsNull":false},"nullable":true,"metadata":{}},
  {"name":"m","type":{"type":"map","keyType":"string","valueType":{"type":"struct","fields":[{"name":"x","type":"byte","nullable":true,"metadata":{}}]},"valueContainsNull":true},"nullable":true,"metadata":{}},
  {"name":"misc","type":{"type":"struct","fields":[{"name":"f","type":"float","nullable":true,"metadata":{}},{"name":"d","type":"double","nullable":true,"metadata":{}},{"name":"b","type":"boolean","nullable":true,"metadata":{}},{"name":"dt","type":"date","nullable":true,"metadata":{}},{"name":"str","type":"string","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}}
]})json";

TEST(SchemaTest, ParsesNestedTypesAndMapsThemToDuckDB) {
  ASSERT_OK_AND_ASSIGN(StructType schema, ParseSchema(kNested));
  ASSERT_EQ(schema.fields.size(), 10u);
  const auto& id = schema.fields[0];
  EXPECT_FALSE(id.nullable);
  EXPECT_EQ(id.PhysicalName(), "col-1a");
  EXPECT_EQ(id.ColumnMappingId(), 1);
  EXPECT_EQ(schema.fields[1].PhysicalName(), "amount");
  EXPECT_FALSE(schema.fields[1].ColumnMappingId());
  EXPECT_EQ(schema.fields[1].type->precision, 10);
  EXPECT_EQ(schema.fields[1].type->scale, 2);

  std::vector<std::string> duck;
  for (const auto& f : schema.fields) duck.push_back(f.type->ToDuckDBType());
  EXPECT_EQ(duck[0], "BIGINT");
  EXPECT_EQ(duck[1], "DECIMAL(10,2)");
  EXPECT_EQ(duck[2], "TIMESTAMP WITH TIME ZONE");
  EXPECT_EQ(duck[3], "TIMESTAMP");
  EXPECT_EQ(duck[4], "INTEGER");
  EXPECT_EQ(duck[5], "VARCHAR");
  EXPECT_EQ(duck[6], "STRUCT(\"a b\" INTEGER, \"q\"\"\" BLOB)");
  EXPECT_EQ(duck[7], "SMALLINT[][]");
  EXPECT_EQ(duck[8], "MAP(VARCHAR, STRUCT(\"x\" TINYINT))");
  EXPECT_EQ(duck[9], "STRUCT(\"f\" FLOAT, \"d\" DOUBLE, \"b\" BOOLEAN, \"dt\" DATE, \"str\" VARCHAR)");
  EXPECT_FALSE(schema.fields[7].type->contains_null);
  EXPECT_TRUE(schema.fields[8].type->value_contains_null);
}

TEST(SchemaTest, RoundTripsThroughJson) {
  ASSERT_OK_AND_ASSIGN(StructType schema, ParseSchema(kNested));
  std::string text = SchemaToJson(schema).dump();
  ASSERT_OK_AND_ASSIGN(StructType again, ParseSchema(text));
  EXPECT_EQ(SchemaToJson(again), SchemaToJson(schema));
  EXPECT_EQ(schema.fields[1].type->ToJson(), "decimal(10,2)");
  EXPECT_EQ(SchemaToJson(schema)["fields"][0]["metadata"]["delta.columnMapping.physicalName"], "col-1a");
}

TEST(SchemaTest, FindIsCaseInsensitive) {
  ASSERT_OK_AND_ASSIGN(StructType schema, ParseSchema(kNested));
  ASSERT_NE(schema.Find("AMOUNT"), nullptr);
  EXPECT_EQ(schema.Find("AMOUNT")->name, "amount");
  EXPECT_EQ(schema.Find("missing"), nullptr);
}

TEST(SchemaTest, MalformedSchemasAreCorruptionNamingTheColumn) {
  ASSERT_ERROR_CODE(ParseSchema("not json"), kCorruption);
  ASSERT_ERROR_CODE(ParseSchema(R"({"type":"array"})"), kCorruption);
  ASSERT_ERROR_CODE(ParseSchema(R"({"type":"struct"})"), kCorruption);
  Status st =
      ParseSchema(
          R"({"type":"struct","fields":[{"name":"s","type":{"type":"struct","fields":[{"name":"x"}]}}]})")
          .status();
  ASSERT_EQ(st.code(), ErrorCode::kCorruption);
  EXPECT_NE(st.message().find("s.x"), std::string::npos) << st.message();
  ASSERT_ERROR_CODE(ParseSchema(R"j({"type":"struct","fields":[{"name":"d","type":"decimal(50,2)"}]})j"),
                    kCorruption);
  ASSERT_ERROR_CODE(ParseSchema(R"j({"type":"struct","fields":[{"name":"d","type":"decimal(5,7)"}]})j"),
                    kCorruption);
  ASSERT_ERROR_CODE(ParseSchema(R"({"type":"struct","fields":[{"name":"a","type":{"type":"array"}}]})"),
                    kCorruption);
  ASSERT_ERROR_CODE(
      ParseSchema(R"({"type":"struct","fields":[{"name":"n","type":"long","nullable":"yes"}]})"),
      kCorruption);
}

TEST(SchemaTest, UnknownTypesAreUnsupported) {
  Status st = ParseSchema(R"({"type":"struct","fields":[{"name":"g","type":"geometry"}]})").status();
  ASSERT_EQ(st.code(), ErrorCode::kUnsupported);
  EXPECT_NE(st.message().find("'g'"), std::string::npos) << st.message();
}

TEST(SchemaTest, DeepNestingIsRefusedNotOverflowed) {
  std::string type = "\"long\"";
  for (int i = 0; i < 5000; i++) type = R"({"type":"array","elementType":)" + type + "}";
  ASSERT_ERROR_CODE(ParseSchema(R"({"type":"struct","fields":[{"name":"deep","type":)" + type + "}]}"),
                    kCorruption);
}

TEST(ProtocolTest, AcceptsReadableProtocols) {
  EXPECT_OK(ValidateReadProtocol(Protocol{1, 2, std::nullopt, std::nullopt}, "t"));
  EXPECT_OK(ValidateReadProtocol(Protocol{2, 5, std::nullopt, std::nullopt}, "t"));
  for (const auto& feature : SupportedReaderFeatures()) {
    EXPECT_OK(ValidateReadProtocol(
        Protocol{3, 7, std::vector<std::string>{feature}, std::vector<std::string>{}}, "t"));
  }
  EXPECT_OK(
      ValidateReadProtocol(Protocol{3, 7, std::vector<std::string>{}, std::vector<std::string>{}}, "t"));
}

TEST(ProtocolTest, RefusesWhatBasinCannotRead) {
  Status st = ValidateReadProtocol(Protocol{99, 7, std::nullopt, std::nullopt}, "tbl version 0");
  ASSERT_EQ(st.code(), ErrorCode::kUnsupported);
  EXPECT_NE(st.message().find("99"), std::string::npos);
  EXPECT_NE(st.message().find("tbl version 0"), std::string::npos);
  st = ValidateReadProtocol(
      Protocol{3, 7, std::vector<std::string>{"deletionVectors", "blahabl"}, std::nullopt}, "t");
  ASSERT_EQ(st.code(), ErrorCode::kUnsupported);
  EXPECT_NE(st.message().find("blahabl"), std::string::npos);
  st = ValidateReadProtocol(Protocol{3, 7, std::vector<std::string>{"catalogManaged"}, std::nullopt}, "t");
  ASSERT_EQ(st.code(), ErrorCode::kUnsupported);
  EXPECT_NE(st.message().find("catalogManaged"), std::string::npos);
  ASSERT_ERROR_CODE(ValidateReadProtocol(Protocol{3, 7, std::nullopt, std::nullopt}, "t"), kCorruption);
  ASSERT_ERROR_CODE(ValidateReadProtocol(Protocol{0, 2, std::nullopt, std::nullopt}, "t"), kUnsupported);
}

}  // namespace
}  // namespace basin::delta
