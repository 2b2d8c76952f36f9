// Record formats: the declared schema's grammar, JSON records into typed cells with exact
// conversions, the reasons given for records that do not parse or fit, and the record
// options' checks.
#include "stream/record_format.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include "testing/test_util.h"

namespace basin::stream {
namespace {

using Kind = RecordColumn::Kind;

RecordSchema Schema(const std::string& text) {
  Result<RecordSchema> schema = ParseRecordSchema(text);
  EXPECT_TRUE(schema.ok()) << schema.status().ToString();
  return schema.ok() ? *schema : RecordSchema{};
}

TEST(RecordSchemaTest, ColumnsAsCreateTableSpellsThem) {
  RecordSchema schema =
      Schema("id BIGINT NOT NULL, amount DECIMAL(12,2), ts TIMESTAMP, \"Note\" STRING, ok BOOLEAN, d DATE");
  ASSERT_EQ(schema.size(), 6u);
  EXPECT_EQ(schema[0].name, "id");
  EXPECT_EQ(schema[0].kind, Kind::kInt64);
  EXPECT_FALSE(schema[0].nullable);
  EXPECT_EQ(schema[1].kind, Kind::kDecimal);
  EXPECT_EQ(schema[1].precision, 12);
  EXPECT_EQ(schema[1].scale, 2);
  EXPECT_EQ(schema[1].type_name, "decimal(12,2)");
  EXPECT_EQ(schema[2].kind, Kind::kTimestamp);
  EXPECT_EQ(schema[3].name, "Note");
  EXPECT_TRUE(schema[3].nullable);
}

TEST(RecordSchemaTest, BadSchemasAreRefusedNamingWhatAndWhere) {
  Result<RecordSchema> syntax = ParseRecordSchema("id BIGINT,\n amount DECIMAL(12,");
  ASSERT_FALSE(syntax.ok());
  EXPECT_NE(syntax.status().message().find("line 2"), std::string::npos) << syntax.status().ToString();
  EXPECT_NE(syntax.status().message().find("schema"), std::string::npos);
  Result<RecordSchema> twice = ParseRecordSchema("id BIGINT, ID INT");
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.status().message().find("declared twice"), std::string::npos);
  Result<RecordSchema> nested = ParseRecordSchema("id BIGINT, tags ARRAY<STRING>");
  ASSERT_FALSE(nested.ok());
  EXPECT_TRUE(nested.status().code() == ErrorCode::kNotImplemented) << nested.status().ToString();
  EXPECT_NE(nested.status().message().find("tags"), std::string::npos);
  EXPECT_FALSE(ParseRecordSchema("id BIGINT GENERATED ALWAYS AS (1)").ok());
  EXPECT_FALSE(ParseRecordSchema("").ok());
  EXPECT_FALSE(ParseRecordSchema("id BIGINT) ; DROP TABLE x; (").ok());
}

class JsonRecordParserTest : public ::testing::Test {
 protected:
  JsonRecordParserTest()
      : parser_(Schema("id BIGINT NOT NULL, small TINYINT, amount DECIMAL(12,2), big DECIMAL(30,4), "
                       "ratio DOUBLE, f FLOAT, ok BOOLEAN, name STRING, raw BINARY, d DATE, ts TIMESTAMP, "
                       "local TIMESTAMP_NTZ")) {}

  std::vector<RecordCell> Parse(const std::string& json) {
    std::vector<RecordCell> cells;
    Status parsed = parser_.Parse(json, &cells);
    EXPECT_TRUE(parsed.ok()) << json << ": " << parsed.ToString();
    return cells;
  }

  // The reason `json` is refused ("" when it is not).
  std::string Refusal(const std::string& json) {
    std::vector<RecordCell> cells;
    Status parsed = parser_.Parse(json, &cells);
    if (parsed.ok()) return "";
    EXPECT_EQ(parsed.code(), ErrorCode::kInvalidArgument) << parsed.ToString();
    return parsed.message();
  }

  JsonRecordParser parser_;
};

TEST_F(JsonRecordParserTest, EveryTypeConvertsExactly) {
  std::vector<RecordCell> cells = Parse(
      R"({"id": 9007199254740993, "small": -128, "amount": 12.5, "big": "-12345678901234567890.1234",)"
      R"( "ratio": 0.25, "f": 1, "ok": true, "name": "caf\u00e9", "raw": "AB", "d": "2024-02-29",)"
      R"( "ts": "2024-01-01T10:00:00+02:00", "local": "2024-01-01 10:00:00.5", "unknown": [1, {"x": 2}]})");
  EXPECT_EQ(std::get<int64_t>(cells[0]), 9007199254740993);  // beyond a double's exact integers
  EXPECT_EQ(std::get<int64_t>(cells[1]), -128);
  EXPECT_TRUE(std::get<__int128>(cells[2]) == 1250);
  const __int128 big = -(static_cast<__int128>(1234567890123456789) * 10 * 10000 + 1234);
  EXPECT_TRUE(std::get<__int128>(cells[3]) == big);
  EXPECT_EQ(std::get<double>(cells[4]), 0.25);
  EXPECT_EQ(std::get<double>(cells[5]), 1.0);
  EXPECT_TRUE(std::get<bool>(cells[6]));
  EXPECT_EQ(std::get<std::string>(cells[7]), "caf\xc3\xa9");
  EXPECT_EQ(std::get<std::string>(cells[8]), "AB");
  EXPECT_EQ(std::get<int64_t>(cells[9]), 19782);              // days since 1970-01-01
  EXPECT_EQ(std::get<int64_t>(cells[10]), 1704096000000000);  // 08:00 UTC
  EXPECT_EQ(std::get<int64_t>(cells[11]), 1704103200500000);
}

TEST_F(JsonRecordParserTest, MissingAndNullFieldsAreNullAndNamesMatchIgnoringCase) {
  std::vector<RecordCell> cells = Parse(R"({"ID": 1, "name": null, "Amount": "3"})");
  EXPECT_EQ(std::get<int64_t>(cells[0]), 1);
  EXPECT_TRUE(std::holds_alternative<std::monostate>(cells[7]));
  EXPECT_TRUE(std::get<__int128>(cells[2]) == 300);
  EXPECT_TRUE(std::holds_alternative<std::monostate>(cells[9]));
  // A string column takes any JSON value as its text.
  EXPECT_EQ(std::get<std::string>(Parse(R"({"id": 1, "name": {"a": [1, 2]}})")[7]), R"({"a": [1, 2]})");
  EXPECT_EQ(std::get<std::string>(Parse(R"({"id": 1, "name": 12.50})")[7]), "12.50");
  // Keys are matched unescaped, in any order.
  cells = Parse(R"({"n\u0061me": "x", "\u0069d": 4, "AMOUNT": 1})");
  EXPECT_EQ(std::get<int64_t>(cells[0]), 4);
  EXPECT_EQ(std::get<std::string>(cells[7]), "x");
  EXPECT_TRUE(std::get<__int128>(cells[2]) == 100);
}

TEST_F(JsonRecordParserTest, RecordsThatDoNotFitAreRefusedWithTheReason) {
  EXPECT_EQ(Refusal("not json"), "not a JSON object");
  EXPECT_EQ(Refusal(""), "not valid JSON");
  EXPECT_EQ(Refusal(R"({"id": 1)"), "not valid JSON");
  EXPECT_EQ(Refusal(R"([1, 2])"), "not a JSON object");
  EXPECT_EQ(Refusal(R"({"id": 1} {"id": 2})"), "not valid JSON (text after the object)");
  EXPECT_EQ(Refusal(R"({"amount": 1})"), "column id is NOT NULL but the record has no id");
  EXPECT_EQ(Refusal(R"({"id": null})"), "column id is NOT NULL but the record has null");
  EXPECT_EQ(Refusal(R"({"id": 1, "name": nul})"), "not valid JSON");
  EXPECT_EQ(Refusal(R"({"id": 1, "name": nullx})"), "not valid JSON");
  EXPECT_EQ(Refusal(R"({"id": "7"})"), "column id: \"7\" is not a bigint");
  EXPECT_EQ(Refusal(R"({"id": 1.5})"), "column id: 1.5 is not a bigint");
  EXPECT_EQ(Refusal(R"({"id": 1, "small": 128})"), "column small: 128 is not a tinyint");
  EXPECT_EQ(Refusal(R"({"id": 1, "amount": 1.005})"), "column amount: 1.005 is not a decimal(12,2)");
  EXPECT_EQ(Refusal(R"({"id": 1, "amount": 12345678901})"),
            "column amount: 12345678901 is not a decimal(12,2)");
  EXPECT_EQ(Refusal(R"({"id": 1, "amount": "abc"})"), "column amount: \"abc\" is not a decimal(12,2)");
  EXPECT_EQ(Refusal(R"({"id": 1, "ok": "yes"})"), "column ok: \"yes\" is not a boolean");
  EXPECT_EQ(Refusal(R"({"id": 1, "d": "2024-13-01"})"), "column d: \"2024-13-01\" is not a date");
  EXPECT_EQ(Refusal(R"({"id": 1, "ts": 1704096000})"), "column ts: 1704096000 is not a timestamp");
  EXPECT_EQ(Refusal(R"({"id": 1, "f": 1e39})"), "column f: 1e39 is not a float");
  EXPECT_EQ(Refusal(R"({"id": 1, "raw": 5})"), "column raw: 5 is not a binary");
  EXPECT_EQ(Refusal("{\"id\": 1, \"name\": \"\xff\"}"), "not valid JSON");  // not UTF-8
  // A long value is cut in the message, never inside a character.
  const std::string refusal = Refusal(R"({"id": ")" + std::string(200, 'x') + R"("})");
  EXPECT_LT(refusal.size(), 120u) << refusal;
  std::string accents;
  for (int i = 0; i < 40; i++) accents += "\xc3\xa9";
  const std::string cut = Refusal(R"({"id": ")" + accents + R"("})");
  EXPECT_TRUE(simdjson::validate_utf8(cut.data(), cut.size())) << cut;
  // The parser goes on after a refusal.
  EXPECT_EQ(std::get<int64_t>(Parse(R"({"id": 2})")[0]), 2);
}

TEST(CsvRecordParserTest, FieldsFillTheColumnsInOrder) {
  CsvRecordParser parser(
      Schema("id BIGINT NOT NULL, amount DECIMAL(12,2), note STRING, ok BOOLEAN, ts TIMESTAMP"));
  std::vector<RecordCell> cells;
  ASSERT_OK(parser.Parse("7,12.50,\"a, \"\"quoted\"\"\nnote\",TRUE,2024-01-01 08:00:00\r\n", &cells));
  EXPECT_EQ(std::get<int64_t>(cells[0]), 7);
  EXPECT_TRUE(std::get<__int128>(cells[1]) == 1250);
  EXPECT_EQ(std::get<std::string>(cells[2]), "a, \"quoted\"\nnote");
  EXPECT_TRUE(std::get<bool>(cells[3]));
  EXPECT_EQ(std::get<int64_t>(cells[4]), 1704096000000000);
  // Empty fields are NULL; a quoted empty one is an empty string.
  ASSERT_OK(parser.Parse("8,,\"\",,", &cells));
  EXPECT_TRUE(std::holds_alternative<std::monostate>(cells[1]));
  EXPECT_EQ(std::get<std::string>(cells[2]), "");
  EXPECT_TRUE(std::holds_alternative<std::monostate>(cells[4]));
}

TEST(CsvRecordParserTest, LinesThatDoNotFitAreRefusedWithTheReason) {
  CsvRecordParser parser(Schema("id BIGINT NOT NULL, amount DECIMAL(12,2)"));
  auto refusal = [&](const std::string& line) {
    std::vector<RecordCell> cells;
    Status parsed = parser.Parse(line, &cells);
    return parsed.ok() ? std::string() : parsed.message();
  };
  EXPECT_EQ(refusal("1,2,3"), "the record has 3 fields, the schema 2 columns");
  EXPECT_EQ(refusal("1"), "the record has 1 fields, the schema 2 columns");
  EXPECT_EQ(refusal(",5"), "column id is NOT NULL but the record has no id");
  EXPECT_EQ(refusal("x,5"), "column id: x is not a bigint");
  EXPECT_EQ(refusal("1, 5"), "column amount:  5 is not a decimal(12,2)");
  EXPECT_EQ(refusal("1,\"5"), "not valid CSV (a quoted field is not closed)");
  EXPECT_EQ(refusal("1,\"5\"x"), "not valid CSV (text after a quoted field)");
  EXPECT_EQ(refusal("1,\xff"), "not valid UTF-8");
  EXPECT_EQ(refusal("1,5"), "");
}

TEST(InferJsonSchemaTest, FieldsInTheOrderSeenWithTheWidestType) {
  ASSERT_OK_AND_ASSIGN(std::string schema,
                       InferJsonSchema({R"({"id": 1, "amount": 2, "ok": null, "tags": [1], "note": "a"})",
                                        "not json", "[1, 2]",
                                        R"({"id": 2, "amount": 2.5, "ok": true, "tags": {"a": 1}, "note": 3,)"
                                        R"( "Last Field": null})"}));
  EXPECT_EQ(schema,
            "\"id\" BIGINT, \"amount\" DOUBLE, \"ok\" BOOLEAN, \"tags\" VARCHAR, \"note\" VARCHAR, "
            "\"Last Field\" VARCHAR");
  // The text reads back as a schema option.
  ASSERT_OK_AND_ASSIGN(RecordSchema parsed, ParseRecordSchema(schema));
  EXPECT_EQ(parsed.size(), 6u);
  EXPECT_EQ(parsed[5].name, "Last Field");

  for (const std::vector<std::string_view>& none :
       {std::vector<std::string_view>{}, std::vector<std::string_view>{"1", "oops"}}) {
    Result<std::string> refused = InferJsonSchema(none);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.status().message().find("give schema"), std::string::npos)
        << refused.status().ToString();
  }
  EXPECT_FALSE(InferJsonSchema({"{}"}).ok());
  // Names that differ in case only are one column (the fuzzer's find: "id" and "Id" made a
  // schema that does not parse); a field named "" is none.
  ASSERT_OK_AND_ASSIGN(std::string merged, InferJsonSchema({R"({"id": 1, "": 2})", R"({"Id": 2.5})"}));
  EXPECT_EQ(merged, "\"id\" DOUBLE");
}

TEST(InferCsvSchemaTest, ColumnsByPositionWithTheWidestType) {
  ASSERT_OK_AND_ASSIGN(std::string schema, InferCsvSchema({"1,2,true,,\"a,b\",7\n", "\"open", "1,2",
                                                           "2,2.5,FALSE,,3,\"\"\r\n", "-3,1e3,true,,x,8"}));
  EXPECT_EQ(
      schema,
      "\"_c0\" BIGINT, \"_c1\" DOUBLE, \"_c2\" BOOLEAN, \"_c3\" VARCHAR, \"_c4\" VARCHAR, \"_c5\" VARCHAR");
  // What it infers, the parser reads.
  ASSERT_OK_AND_ASSIGN(RecordSchema parsed, ParseRecordSchema(schema));
  CsvRecordParser parser(parsed);
  std::vector<RecordCell> cells;
  EXPECT_OK(parser.Parse("-3,1e3,true,,x,8", &cells));
  EXPECT_EQ(std::get<int64_t>(cells[0]), -3);
  EXPECT_EQ(std::get<double>(cells[1]), 1000.0);
  Result<std::string> refused = InferCsvSchema({"\"open"});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("give schema"), std::string::npos) << refused.status().ToString();
}

TEST(RecordOptionsTest, OptionsAreCheckedTogether) {
  ASSERT_OK_AND_ASSIGN(RecordOptions raw, ParseRecordOptions({}));
  EXPECT_EQ(raw.format, ValueFormat::kRaw);
  ASSERT_OK_AND_ASSIGN(RecordOptions json, ParseRecordOptions({{"valueformat", "JSON"},
                                                               {"schema", "id BIGINT"},
                                                               {"deadLetterTable", "ops.\"Payments DLQ\""},
                                                               {"maxDeadLetterFraction", "0.25"}}));
  EXPECT_EQ(json.format, ValueFormat::kJson);
  EXPECT_EQ(json.schema.size(), 1u);
  EXPECT_EQ(json.dead_letter_table, "ops.\"Payments DLQ\"");
  EXPECT_EQ(json.max_dead_letter_fraction, 0.25);
  auto refusal = [](const std::vector<std::pair<std::string, std::string>>& given) {
    Result<RecordOptions> options = ParseRecordOptions(given);
    EXPECT_FALSE(options.ok());
    return options.ok() ? std::string() : options.status().message();
  };
  EXPECT_NE(refusal({{"valueFormat", "avro"}}).find("'avro'"), std::string::npos);
  ASSERT_OK_AND_ASSIGN(RecordOptions inferred, ParseRecordOptions({{"valueFormat", "json"}}));
  EXPECT_TRUE(inferred.InfersSchema());  // inferred from the records (InferRecordSchema)
  ASSERT_OK_AND_ASSIGN(RecordOptions csv_inferred, ParseRecordOptions({{"valueFormat", "csv"}}));
  EXPECT_TRUE(csv_inferred.InfersSchema());
  EXPECT_FALSE(raw.InfersSchema());
  ASSERT_OK_AND_ASSIGN(RecordOptions csv, ParseRecordOptions({{"valueFormat", "csv"}, {"schema", "id INT"}}));
  EXPECT_EQ(csv.format, ValueFormat::kCsv);
  EXPECT_NE(refusal({{"schema", "id BIGINT"}}).find("valueFormat"), std::string::npos);
  EXPECT_NE(refusal({{"deadLetterTable", "dlq"}}).find("raw records"), std::string::npos);
  EXPECT_NE(refusal({{"valueFormat", "json"}, {"schema", "id BIGINT"}, {"deadLetterTable", "a.b.c.d"}})
                .find("not a table name"),
            std::string::npos);
  EXPECT_NE(refusal({{"valueFormat", "json"}, {"schema", "id BIGINT"}, {"maxDeadLetterFraction", "0.1"}})
                .find("needs deadLetterTable"),
            std::string::npos);
  EXPECT_NE(refusal({{"valueFormat", "json"},
                     {"schema", "id BIGINT"},
                     {"deadLetterTable", "dlq"},
                     {"maxDeadLetterFraction", "1.5"}})
                .find("from 0 to 1"),
            std::string::npos);
}

}  // namespace
}  // namespace basin::stream
