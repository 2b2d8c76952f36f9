// The Variant decoder on hand-built bytes, basin_variant_to_json on unshredded and shredded
// groups, the parquet-testing shredded_variant files against their expected variants, and
// Spark's variant tables read through the Session.
#include "engine/variant.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "engine/duckdb.h"
#include "engine/functions.h"
#include "engine/scan.h"
#include "sql/session.h"
#include "testing/test_util.h"

namespace basin::engine {
namespace {

std::string Bytes(std::initializer_list<int> bytes) {
  std::string out;
  for (int b : bytes) out.push_back(static_cast<char>(b));
  return out;
}

template <typename T>
std::string LittleEndian(T value, size_t width = sizeof(T)) {
  std::string out;
  for (size_t i = 0; i < width; i++)
    out.push_back(static_cast<char>(static_cast<uint64_t>(value) >> (8 * i)));
  return out;
}

// Metadata with 1-byte offsets holding `keys` in order.
std::string Metadata(const std::vector<std::string>& keys, bool sorted = true) {
  std::string out = Bytes({sorted ? 0x11 : 0x01, static_cast<int>(keys.size()), 0});
  std::string strings;
  for (const auto& key : keys) {
    strings += key;
    out.push_back(static_cast<char>(strings.size()));
  }
  return out + strings;
}
const std::string kEmptyMetadata = Bytes({0x01, 0x00, 0x00});

std::string Primitive(int type_id, const std::string& payload = "") {
  return static_cast<char>(type_id << 2) + payload;
}
std::string ShortString(const std::string& s) { return static_cast<char>(s.size() << 2 | 1) + s; }
std::string LongString(const std::string& s) { return Primitive(16, LittleEndian<uint32_t>(s.size()) + s); }

// An array with 1-byte offsets (or 4-byte count when `large`).
std::string Array(const std::vector<std::string>& elements, bool large = false) {
  std::string out = Bytes({(large ? 0x4 : 0) << 2 | 3});
  out += LittleEndian<uint32_t>(elements.size(), large ? 4 : 1);
  size_t offset = 0;
  out.push_back(0);
  for (const auto& e : elements) out.push_back(static_cast<char>(offset += e.size()));
  for (const auto& e : elements) out += e;
  return out;
}

// An object with 1-byte ids and offsets; `values` are stored in the order given by `layout`
// (indexes into fields), to test values stored out of key order.
std::string Object(const std::vector<std::pair<int, std::string>>& fields, std::vector<size_t> layout = {}) {
  if (layout.empty()) {
    for (size_t i = 0; i < fields.size(); i++) layout.push_back(i);
  }
  std::vector<size_t> offsets(fields.size());
  std::string values;
  for (size_t i : layout) {
    offsets[i] = values.size();
    values += fields[i].second;
  }
  std::string out = Bytes({0x02, static_cast<int>(fields.size())});
  for (const auto& field : fields) out.push_back(static_cast<char>(field.first));
  for (size_t offset : offsets) out.push_back(static_cast<char>(offset));
  out.push_back(static_cast<char>(values.size()));
  return out + values;
}

std::string Json(const std::string& metadata, const std::string& value) {
  auto json = VariantToJson(metadata, value);
  return json.ok() ? *json : "error: " + json.status().ToString();
}
std::string Json(const std::string& value) { return Json(kEmptyMetadata, value); }

TEST(VariantDecodeTest, Primitives) {
  EXPECT_EQ(Json(Primitive(0)), "null");
  EXPECT_EQ(Json(Primitive(1)), "true");
  EXPECT_EQ(Json(Primitive(2)), "false");
  EXPECT_EQ(Json(Primitive(3, Bytes({0xFB}))), "-5");
  EXPECT_EQ(Json(Primitive(4, LittleEndian<int16_t>(-300))), "-300");
  EXPECT_EQ(Json(Primitive(5, LittleEndian<int32_t>(123456789))), "123456789");
  EXPECT_EQ(Json(Primitive(6, LittleEndian<int64_t>(INT64_MIN))), "-9223372036854775808");
  double d = 1.5;
  uint64_t dbits;
  std::memcpy(&dbits, &d, 8);
  EXPECT_EQ(Json(Primitive(7, LittleEndian(dbits))), "1.5");
  float f = 0.1f;
  uint32_t fbits;
  std::memcpy(&fbits, &f, 4);
  EXPECT_EQ(Json(Primitive(14, LittleEndian(fbits))), "0.1");
  double nan = std::nan("");
  std::memcpy(&dbits, &nan, 8);
  EXPECT_EQ(Json(Primitive(7, LittleEndian(dbits))), "\"NaN\"");
}

TEST(VariantDecodeTest, Decimals) {
  EXPECT_EQ(Json(Primitive(8, Bytes({2}) + LittleEndian<int32_t>(12345))), "123.45");
  EXPECT_EQ(Json(Primitive(8, Bytes({0}) + LittleEndian<int32_t>(-7))), "-7");
  EXPECT_EQ(Json(Primitive(9, Bytes({3}) + LittleEndian<int64_t>(-5))), "-0.005");
  // 10^20 + 1 with scale 10 in 16 bytes (high half 5, low half 0x6BC75E2D63100001).
  std::string wide = LittleEndian<uint64_t>(0x6BC75E2D63100001ULL) + LittleEndian<uint64_t>(5);
  EXPECT_EQ(Json(Primitive(10, Bytes({10}) + wide)), "10000000000.0000000001");
  std::string minus_one(16, '\xFF');
  EXPECT_EQ(Json(Primitive(10, Bytes({1}) + minus_one)), "-0.1");
  EXPECT_TRUE(VariantToJson(kEmptyMetadata, Primitive(8, Bytes({39}) + LittleEndian<int32_t>(1)))
                  .status()
                  .IsCorruption());
}

TEST(VariantDecodeTest, DatesTimesAndTimestamps) {
  EXPECT_EQ(Json(Primitive(11, LittleEndian<int32_t>(19723))), "\"2024-01-01\"");
  EXPECT_EQ(Json(Primitive(11, LittleEndian<int32_t>(-1))), "\"1969-12-31\"");
  EXPECT_EQ(Json(Primitive(11, LittleEndian<int32_t>(11016))), "\"2000-02-29\"");
  EXPECT_EQ(Json(Primitive(12, LittleEndian<int64_t>(1704067200123456))),
            "\"2024-01-01 00:00:00.123456+00:00\"");
  EXPECT_EQ(Json(Primitive(13, LittleEndian<int64_t>(1704110400500000))), "\"2024-01-01 12:00:00.5\"");
  EXPECT_EQ(Json(Primitive(13, LittleEndian<int64_t>(-1))), "\"1969-12-31 23:59:59.999999\"");
  EXPECT_EQ(Json(Primitive(18, LittleEndian<int64_t>(1704067200000000001))),
            "\"2024-01-01 00:00:00.000000001+00:00\"");
  EXPECT_EQ(Json(Primitive(19, LittleEndian<int64_t>(0))), "\"1970-01-01 00:00:00\"");
  EXPECT_EQ(Json(Primitive(17, LittleEndian<int64_t>(45296000001))), "\"12:34:56.000001\"");
  EXPECT_TRUE(
      VariantToJson(kEmptyMetadata, Primitive(17, LittleEndian<int64_t>(-1))).status().IsCorruption());
}

TEST(VariantDecodeTest, StringsBinaryAndUuid) {
  EXPECT_EQ(Json(ShortString("")), "\"\"");
  EXPECT_EQ(Json(ShortString("a\"b\\c\n\x01")), "\"a\\\"b\\\\c\\n\\u0001\"");
  EXPECT_EQ(Json(ShortString("h\xC3\xA9llo \xF0\x9F\x98\x80")), "\"h\xC3\xA9llo \xF0\x9F\x98\x80\"");
  std::string long_text(100, 'x');
  EXPECT_EQ(Json(LongString(long_text)), "\"" + long_text + "\"");
  EXPECT_EQ(Json(Primitive(15, LittleEndian<uint32_t>(5) + "hello")), "\"aGVsbG8=\"");
  EXPECT_EQ(Json(Primitive(15, LittleEndian<uint32_t>(4) + "hell")), "\"aGVsbA==\"");
  EXPECT_EQ(Json(Primitive(15, LittleEndian<uint32_t>(0))), "\"\"");
  std::string uuid =
      Bytes({0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef});
  EXPECT_EQ(Json(Primitive(20, uuid)), "\"12345678-9abc-def0-0123-456789abcdef\"");
}

TEST(VariantDecodeTest, ObjectsAndArrays) {
  std::string metadata = Metadata({"a", "b", "c"});
  EXPECT_EQ(Json(metadata, Object({})), "{}");
  EXPECT_EQ(Json(Array({})), "[]");
  std::string inner = Array({Primitive(1), Primitive(0), ShortString("x")});
  EXPECT_EQ(Json(metadata, Object({{0, Primitive(3, Bytes({1}))}, {1, inner}})),
            "{\"a\":1,\"b\":[true,null,\"x\"]}");
  // Values stored in reverse order; keys are still listed in field-id order.
  EXPECT_EQ(Json(metadata, Object({{0, ShortString("first")}, {2, Primitive(2)}}, {1, 0})),
            "{\"a\":\"first\",\"c\":false}");
  EXPECT_EQ(Json(metadata, Array({Object({{2, Array({})}})}, true)), "[{\"c\":[]}]");
  // 2-byte field ids and offsets, large count: header (is_large, id size 2, offset size 2).
  std::string wide = Bytes({(0x10 | 0x4 | 0x1) << 2 | 2}) + LittleEndian<uint32_t>(1) +
                     LittleEndian<uint16_t>(1) + LittleEndian<uint16_t>(0) + LittleEndian<uint16_t>(1) +
                     Primitive(0);
  EXPECT_EQ(Json(metadata, wide), "{\"b\":null}");
  // Metadata with 2-byte offsets.
  std::string metadata16 = Bytes({0x41}) + LittleEndian<uint16_t>(1) + LittleEndian<uint16_t>(0) +
                           LittleEndian<uint16_t>(3) + "key";
  EXPECT_EQ(Json(metadata16, Object({{0, Primitive(1)}})), "{\"key\":true}");
}

TEST(VariantDecodeTest, MetadataSize) {
  std::string metadata = Metadata({"ab", "c"});
  ASSERT_OK_AND_ASSIGN(size_t size, VariantMetadata::EncodedSize(metadata + Primitive(0)));
  EXPECT_EQ(size, metadata.size());
  ASSERT_OK_AND_ASSIGN(VariantMetadata parsed, VariantMetadata::Parse(metadata));
  EXPECT_EQ(parsed.dictionary_size(), 2u);
  ASSERT_OK_AND_ASSIGN(std::string_view key, parsed.Key(1));
  EXPECT_EQ(key, "c");
  ASSERT_ERROR_CODE(parsed.Key(2), kCorruption);
}

TEST(VariantDecodeTest, MalformedInputIsCorruption) {
  std::string metadata = Metadata({"a", "b"});
  std::vector<std::pair<std::string, std::string>> cases = {
      {"", Primitive(0)},                                                     // no metadata
      {Bytes({0x02, 0x00, 0x00}), Primitive(0)},                              // version 2
      {Bytes({0x01, 0x05, 0x00}), Primitive(0)},                              // dictionary offsets truncated
      {Bytes({0x01, 0x01, 0x00, 0x05, 'a'}), Primitive(0)},                   // string bytes truncated
      {Bytes({0x01, 0x02, 0x00, 0x02, 0x01, 'a', 'b'}), Primitive(0)},        // offsets out of order
      {kEmptyMetadata + "x", Primitive(0)},                                   // bytes after the metadata
      {kEmptyMetadata, ""},                                                   // empty value
      {kEmptyMetadata, Primitive(5, "ab")},                                   // int32 truncated
      {kEmptyMetadata, Primitive(0, "x")},                                    // bytes after null
      {kEmptyMetadata, Primitive(21)},                                        // unknown type id
      {kEmptyMetadata, Primitive(16, LittleEndian<uint32_t>(1000) + "abc")},  // long string truncated
      {kEmptyMetadata, ShortString("abc").substr(0, 3)},                      // short string truncated
      {kEmptyMetadata, ShortString("\xC0\x80")},                              // overlong UTF-8
      {kEmptyMetadata, ShortString("\xED\xA0\x80")},                          // UTF-16 surrogate
      {kEmptyMetadata, Bytes({0x03, 0x05, 0x00})},                            // array count beyond the bytes
      {kEmptyMetadata, Bytes({0x03, 0x02, 0x00, 0x01, 0x01, 0x00})},          // empty array element
      {kEmptyMetadata, Bytes({0x03, 0x01, 0x00, 0x05, 0x00})},                // offsets beyond the bytes
      // An offset past the end that a later, smaller offset hides (found by fuzzing).
      {kEmptyMetadata, Bytes({0x03, 0x04, 0x00, 0x01, 0xd7, 0xe3, 0x02, 0x00, 0x01})},
      {kEmptyMetadata, Array({Primitive(5, "ab")})},                        // element shorter than its type
      {metadata, Object({{7, Primitive(0)}})},                              // field id not in the dictionary
      {metadata, Object({{0, Primitive(0)}, {0, Primitive(1)}})},           // duplicate key
      {metadata, Bytes({0x02, 0x02, 0x00, 0x01, 0x00, 0x00, 0x01, 0x00})},  // fields share bytes
      {kEmptyMetadata, Array({Primitive(0)}) + "x"},                        // bytes after the value
  };
  for (size_t i = 0; i < cases.size(); i++) {
    auto json = VariantToJson(cases[i].first, cases[i].second);
    EXPECT_TRUE(json.status().IsCorruption()) << "case " << i << ": " << json.status().ToString();
  }
}

TEST(VariantDecodeTest, DeepNestingIsRefused) {
  // Arrays of one element with 4-byte counts and offsets, `levels` deep.
  auto nested = [](int levels) {
    std::string v = Primitive(0);
    for (int i = 0; i < levels; i++) {
      v = Bytes({(0x4 | 0x3) << 2 | 3}) + LittleEndian<uint32_t>(1) + LittleEndian<uint32_t>(0) +
          LittleEndian<uint32_t>(v.size()) + v;
    }
    return v;
  };
  EXPECT_TRUE(VariantToJson(kEmptyMetadata, nested(kMaxVariantDepth)).ok());
  EXPECT_TRUE(VariantToJson(kEmptyMetadata, nested(kMaxVariantDepth + 1)).status().IsCorruption());
}

class VariantFunctionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(db_, Database::Open());
    ASSERT_OK_AND_ASSIGN(conn_, Connection::Open(db_));
  }

  // The JSON of one SQL expression, or "NULL" / "error: ...".
  std::string Eval(const std::string& expr) {
    auto r = conn_->Query("SELECT basin_variant_to_json(" + expr + ")");
    if (!r.ok()) return "error: " + r.status().message();
    return r->at(0, 0).value_or("NULL");
  }

  std::shared_ptr<Database> db_;
  std::unique_ptr<Connection> conn_;
};

// A SQL BLOB literal for raw bytes.
std::string Blob(const std::string& bytes) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out = "'";
  for (unsigned char c : bytes) {
    out += "\\x";
    out += kHex[c >> 4];
    out += kHex[c & 0xF];
  }
  return out + "'::BLOB";
}

TEST_F(VariantFunctionTest, EveryConnectionOfADatabaseCanCallIt) {
  ASSERT_OK_AND_ASSIGN(auto second, Connection::Open(db_));
  ASSERT_OK_AND_ASSIGN(auto r, second->Query("SELECT basin_variant_to_json({'value': " + Blob(Primitive(1)) +
                                             ", 'metadata': " + Blob(kEmptyMetadata) + "})"));
  EXPECT_EQ(r.at(0, 0), "true");
}

TEST_F(VariantFunctionTest, Unshredded) {
  std::string metadata = Blob(Metadata({"k"}));
  EXPECT_EQ(Eval("{'metadata': " + metadata + ", 'value': " + Blob(Object({{0, ShortString("v")}})) + "}"),
            "{\"k\":\"v\"}");
  EXPECT_EQ(Eval("NULL::STRUCT(metadata BLOB, value BLOB)"), "NULL");
  // Present, but with neither value nor typed_value: Variant null.
  EXPECT_EQ(Eval("{'metadata': " + metadata + ", 'value': NULL::BLOB}"), "null");
  EXPECT_NE(
      Eval("{'metadata': " + metadata + ", 'value': " + Blob(Bytes({0x02, 0x09})) + "}").find("Corruption"),
      std::string::npos);
  EXPECT_EQ(Eval("42").rfind("error:", 0), 0u);
  EXPECT_EQ(Eval("{'metadata': " + metadata + ", 'other': 1}").rfind("error:", 0), 0u);
}

TEST_F(VariantFunctionTest, ShreddedPrimitives) {
  std::string m = "'metadata': " + Blob(kEmptyMetadata);
  EXPECT_EQ(Eval("{" + m + ", 'value': NULL::BLOB, 'typed_value': 9876543210::BIGINT}"), "9876543210");
  EXPECT_EQ(Eval("{" + m + ", 'value': " + Blob(ShortString("n/a")) + ", 'typed_value': NULL::BIGINT}"),
            "\"n/a\"");
  EXPECT_EQ(Eval("{" + m + ", 'value': NULL::BLOB, 'typed_value': 'a\"b'}"), "\"a\\\"b\"");
  EXPECT_EQ(Eval("{" + m + ", 'value': NULL::BLOB, 'typed_value': 123.45::DECIMAL(9,2)}"), "123.45");
  EXPECT_EQ(Eval("{" + m + ", 'value': NULL::BLOB, 'typed_value': -1.5::DECIMAL(38,10)}"), "-1.5000000000");
  EXPECT_EQ(Eval("{" + m + ", 'value': NULL::BLOB, 'typed_value': DATE '2024-01-01'}"), "\"2024-01-01\"");
  EXPECT_EQ(Eval("{" + m + ", 'value': NULL::BLOB, 'typed_value': TIMESTAMPTZ '2024-01-01 00:00:00.5+00'}"),
            "\"2024-01-01 00:00:00.5+00:00\"");
  EXPECT_EQ(Eval("{" + m + ", 'value': NULL::BLOB, 'typed_value': TIMESTAMP '2024-01-01 01:02:03'}"),
            "\"2024-01-01 01:02:03\"");
  EXPECT_EQ(Eval("{" + m + ", 'value': NULL::BLOB, 'typed_value': TIME '12:34:56'}"), "\"12:34:56\"");
  EXPECT_EQ(Eval("{" + m + ", 'value': NULL::BLOB, 'typed_value': 'hello'::BLOB}"), "\"aGVsbG8=\"");
  EXPECT_EQ(
      Eval("{" + m + ", 'value': NULL::BLOB, 'typed_value': UUID '12345678-9abc-def0-0123-456789abcdef'}"),
      "\"12345678-9abc-def0-0123-456789abcdef\"");
  EXPECT_EQ(Eval("{" + m + ", 'value': NULL::BLOB, 'typed_value': true}"), "true");
  EXPECT_EQ(Eval("{" + m + ", 'value': NULL::BLOB, 'typed_value': 2.5::FLOAT}"), "2.5");
  EXPECT_EQ(Eval("{" + m + ", 'value': NULL::BLOB, 'typed_value': (-3)::TINYINT}"), "-3");
  // The same value encoded and shredded reads the same.
  EXPECT_EQ(
      Eval("{" + m + ", 'value': " + Blob(Primitive(9, Bytes({2}) + LittleEndian<int64_t>(12345))) + "}"),
      Eval("{" + m + ", 'value': NULL::BLOB, 'typed_value': 123.45::DECIMAL(18,2)}"));
  EXPECT_NE(Eval("{" + m + ", 'value': " + Blob(Primitive(0)) + ", 'typed_value': 1}").find("conflicting"),
            std::string::npos);
  EXPECT_EQ(Eval("{" + m + ", 'value': NULL::BLOB, 'typed_value': 1::UBIGINT}").rfind("error:", 0), 0u);
}

TEST_F(VariantFunctionTest, ShreddedObjectsAndArrays) {
  std::string metadata = Metadata({"a", "b", "email"});
  std::string m = "'metadata': " + Blob(metadata);
  std::string fields =
      "{'a': {'value': NULL::BLOB, 'typed_value': 1}, 'b': {'value': NULL::BLOB, 'typed_value': "
      "NULL::VARCHAR}}";
  // Fully shredded; field b missing.
  EXPECT_EQ(Eval("{" + m + ", 'value': NULL::BLOB, 'typed_value': " + fields + "}"), "{\"a\":1}");
  // Partially shredded: the rest of the object is in value; keys come out sorted.
  std::string rest = Blob(Object({{2, ShortString("u@x")}}));
  EXPECT_EQ(Eval("{" + m + ", 'value': " + rest + ", 'typed_value': " + fields + "}"),
            "{\"a\":1,\"email\":\"u@x\"}");
  // A field present with a null value.
  std::string null_b =
      "{'a': {'value': NULL::BLOB, 'typed_value': NULL::INTEGER}, 'b': {'value': " + Blob(Primitive(0)) +
      ", 'typed_value': NULL::VARCHAR}}";
  EXPECT_EQ(Eval("{" + m + ", 'value': NULL::BLOB, 'typed_value': " + null_b + "}"), "{\"b\":null}");
  // Not an object: typed_value is null and value holds the variant.
  EXPECT_EQ(Eval("{" + m + ", 'value': " + Blob(ShortString("s")) +
                 ", 'typed_value': NULL::STRUCT(a STRUCT(value BLOB, typed_value INTEGER))}"),
            "\"s\"");
  // A shredded field also present in value.
  std::string dup = Blob(Object({{0, Primitive(1)}}));
  EXPECT_NE(Eval("{" + m + ", 'value': " + dup + ", 'typed_value': " + fields + "}")
                .find("both shredded and in value"),
            std::string::npos);
  // value beside a shredded object that is not an object.
  EXPECT_NE(Eval("{" + m + ", 'value': " + Blob(ShortString("s")) + ", 'typed_value': " + fields + "}")
                .find("expected an object"),
            std::string::npos);

  std::string elements = "[{'value': NULL::BLOB, 'typed_value': 'comedy'}, {'value': " + Blob(Primitive(0)) +
                         ", 'typed_value': NULL::VARCHAR}]";
  EXPECT_EQ(Eval("{" + m + ", 'value': NULL::BLOB, 'typed_value': " + elements + "}"), "[\"comedy\",null]");
  EXPECT_NE(Eval("{" + m + ", 'value': " + Blob(Array({})) + ", 'typed_value': " + elements + "}")
                .find("conflicting"),
            std::string::npos);
  std::string missing = "[{'value': NULL::BLOB, 'typed_value': NULL::VARCHAR}]";
  EXPECT_NE(Eval("{" + m + ", 'value': NULL::BLOB, 'typed_value': " + missing + "}").find("neither"),
            std::string::npos);
}

TEST_F(VariantFunctionTest, ManyRowsAcrossChunks) {
  // Rows alternate between shredded and encoded values, over more than one 2048-row chunk.
  ASSERT_OK_AND_ASSIGN(
      auto r,
      conn_->Query(
          "SELECT count(*) FILTER (WHERE j = CASE WHEN i % 2 = 0 THEN CAST(i AS VARCHAR) ELSE '7' END), "
          "count(*) FROM (SELECT i, "
          "basin_variant_to_json({'metadata': " +
          Blob(kEmptyMetadata) + ", 'value': CASE WHEN i % 2 = 0 THEN NULL ELSE " +
          Blob(Primitive(3, Bytes({7}))) +
          " END, 'typed_value': CASE WHEN i % 2 = 0 THEN i ELSE NULL END}) AS j FROM range(5000) t(i))"));
  EXPECT_EQ(r.at(0, 0), "5000");
  EXPECT_EQ(r.at(0, 1), "5000");
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// DuckDB 1.4.4 decodes groups that the file marks VARIANT itself (to JSON, without the
// checks below: case-042 reads as 34 and case-047 as SQL NULL). Spark's files carry no such
// mark. To run Basin's reconstruction over the very bytes of these files, the copy's footer
// gets the VARIANT annotation's union field id (16, zigzag 0x20) changed to an unknown one
// (63, 0x7e) of the same length, which Thrift readers skip.
std::string WithoutVariantAnnotation(std::string file) {
  const std::string annotation = Bytes({0x1c, 0x0c, 0x20, 0x13, 0x01, 0x00, 0x00});
  uint32_t footer_size;
  std::memcpy(&footer_size, file.data() + file.size() - 8, 4);
  size_t at = file.find(annotation, file.size() - 8 - footer_size);
  if (at != std::string::npos) file[at + 2] = 0x7e;
  return file;
}

class ShreddedVariantFilesTest : public VariantFunctionTest {
 protected:
  // Each row's JSON, in file order, from a de-annotated copy of `name`.
  Result<std::vector<std::string>> ReadRows(const std::filesystem::path& dir, const std::string& name) {
    auto copy = tmp_.path() / name;
    std::ofstream(copy, std::ios::binary) << WithoutVariantAnnotation(ReadFile(dir / name));
    std::string source = "read_parquet(" + QuoteLiteral(copy.string()) + ", file_row_number = true)";
    ASSIGN_OR_RETURN(auto types, conn_->DescribeQuery("SELECT var FROM " + source));
    if (types[0].kind != ColumnType::Kind::kStruct)
      return Status::Internal("still decoded by DuckDB: " + name);
    ASSIGN_OR_RETURN(auto r, conn_->Query("SELECT basin_variant_to_json(var) FROM " + source +
                                          " ORDER BY file_row_number"));
    std::vector<std::string> out;
    for (const auto& row : r.rows) out.push_back(row[0].value_or("NULL"));
    return out;
  }
  testing::TempDir tmp_;
};

TEST_F(ShreddedVariantFilesTest, MatchExpectedVariants) {
  SKIP_WITHOUT_SHARED_TESTDATA(testdata);
  const auto dir = testdata / "parquet" / "parquet-testing" / "shredded_variant";
  const std::vector<std::pair<std::string, int>> cases = {{"case-001", 1}, {"case-012", 1}, {"case-031", 1},
                                                          {"case-045", 4}, {"case-046", 1}, {"case-047", 1}};
  for (const auto& [name, rows] : cases) {
    SCOPED_TRACE(name);
    ASSERT_OK_AND_ASSIGN(std::vector<std::string> actual, ReadRows(dir, name + ".parquet"));
    ASSERT_EQ(actual.size(), static_cast<size_t>(rows));
    for (int k = 0; k < rows; k++) {
      std::string expected_bytes = ReadFile(dir / (name + "_row-" + std::to_string(k) + ".variant.bin"));
      ASSERT_OK_AND_ASSIGN(size_t metadata_size, VariantMetadata::EncodedSize(expected_bytes));
      ASSERT_OK_AND_ASSIGN(std::string expected, VariantToJson(expected_bytes.substr(0, metadata_size),
                                                               expected_bytes.substr(metadata_size)));
      EXPECT_EQ(actual[k], expected) << "row " << k;
    }
  }
  // Spot checks that the expected side decodes to what cases.json describes.
  ASSERT_OK_AND_ASSIGN(auto c045, ReadRows(dir, "case-045.parquet"));
  EXPECT_EQ(c045[0], "[\"comedy\",\"drama\"]");
  EXPECT_EQ(c045[1], "34");
  EXPECT_EQ(c045[2], "{\"a\":null,\"d\":\"iceberg\"}");
  ASSERT_OK_AND_ASSIGN(auto c046, ReadRows(dir, "case-046.parquet"));
  EXPECT_EQ(c046[0], "{\"a\":null,\"b\":\"\"}");
  ASSERT_OK_AND_ASSIGN(auto c047, ReadRows(dir, "case-047.parquet"));
  EXPECT_EQ(c047[0], "null");
}

TEST_F(ShreddedVariantFilesTest, ConflictingValueAndTypedValueFail) {
  SKIP_WITHOUT_SHARED_TESTDATA(testdata);
  auto rows = ReadRows(testdata / "parquet" / "parquet-testing" / "shredded_variant", "case-042.parquet");
  ASSERT_FALSE(rows.ok());
  EXPECT_NE(rows.status().message().find("conflicting value and typed_value"), std::string::npos)
      << rows.status().ToString();
}

// Through BuildScanSql: a file that marks its variant column VARIANT (which DuckDB decodes
// itself) and the same file without the mark (decoded by basin_variant_to_json) give the
// same JSON.
TEST_F(ShreddedVariantFilesTest, ScanReadsMarkedAndUnmarkedFilesAlike) {
  SKIP_WITHOUT_SHARED_TESTDATA(testdata);
  const std::string original =
      ReadFile(testdata / "parquet" / "parquet-testing" / "shredded_variant" / "case-046.parquet");
  std::vector<std::string> results;
  for (const std::string& bytes : {original, WithoutVariantAnnotation(original)}) {
    testing::TempDir table;
    std::ofstream(table.path() / "part-0.parquet", std::ios::binary) << bytes;
    delta::Snapshot snapshot;
    ASSERT_OK_AND_ASSIGN(snapshot.store, OpenLocalObjectStore(table.str()));
    snapshot.table_root = table.str();
    ASSERT_OK_AND_ASSIGN(snapshot.schema, delta::ParseSchema(R"({"type":"struct","fields":[
        {"name":"id","type":"integer","nullable":false,"metadata":{}},
        {"name":"var","type":"variant","nullable":true,"metadata":{}}]})"));
    delta::AddFile add;
    add.path = "part-0.parquet";
    add.size = static_cast<int64_t>(bytes.size());
    snapshot.files.push_back(add);
    ASSERT_OK_AND_ASSIGN(ScanPlan plan, BuildScanSql(snapshot, *conn_));
    ASSERT_OK_AND_ASSIGN(QueryResult r, conn_->Query("SELECT var FROM (" + plan.sql + ")"));
    ASSERT_EQ(r.row_count(), 1u);
    results.push_back(r.at(0, 0).value_or("NULL"));
  }
  EXPECT_EQ(results[0], "{\"a\":null,\"b\":\"\"}");
  EXPECT_EQ(results[1], results[0]);
}

class VariantTablesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = testing::SharedTestDataDir();
    if (!dir) GTEST_SKIP() << "../shared/testdata not found (set BASIN_TESTDATA); skipping";
    sql::SessionOptions options;
    options.warehouse_dir = (*dir / "delta" / "delta-io-delta").string();
    ASSERT_OK_AND_ASSIGN(session_, sql::Session::Open(options));
  }
  Result<QueryResult> Query(const std::string& sql) {
    ASSIGN_OR_RETURN(auto results, session_->Execute(sql));
    return results.back().result;
  }
  std::unique_ptr<sql::Session> session_;
};

constexpr char kUnshredded[] = "delta_scan('spark-variant-checkpoint')";
constexpr char kShredded[] = "delta_scan('spark-shredded-variant-preview-delta')";

TEST_F(VariantTablesTest, ReadAsJson) {
  for (const char* table : {kUnshredded, kShredded}) {
    SCOPED_TRACE(table);
    ASSERT_OK_AND_ASSIGN(auto all, Query(std::string("SELECT * FROM ") + table + " ORDER BY id"));
    ASSERT_EQ(all.row_count(), 102u);
    ASSERT_EQ(all.column_count(), 7u);
    EXPECT_EQ(all.column_types[1], "VARCHAR");
    EXPECT_EQ(all.column_types[2], "VARCHAR[]");
    EXPECT_EQ(all.column_types[4], "MAP(VARCHAR, VARCHAR)");
    ASSERT_OK_AND_ASSIGN(auto valid, Query(std::string("SELECT count(*) FILTER (WHERE json_valid(v)), "
                                                       "count(*) FILTER (WHERE v IS NOT NULL) FROM ") +
                                           table));
    EXPECT_EQ(valid.at(0, 0), valid.at(0, 1));
    EXPECT_NE(valid.at(0, 0), "0");
    ASSERT_OK_AND_ASSIGN(auto row, Query(std::string("SELECT v, array_of_variants, map_of_variants['2'], "
                                                     "struct_of_array_of_variants FROM ") +
                                         table + " WHERE id = 2"));
    ASSERT_EQ(row.row_count(), 1u);
    EXPECT_EQ(row.at(0, 0), "{\"key\":2}");
    EXPECT_EQ(row.at(0, 1), "[{\"key\":2}, NULL, {\"key\":2}, NULL, {\"key\":2}]");
    EXPECT_EQ(row.at(0, 2), "{\"key\":2}");
    EXPECT_EQ(row.at(0, 3), "{'v': [NULL, {\"key\":2}]}");
  }
}

TEST_F(VariantTablesTest, BothTablesHoldTheSameJson) {
  // ids 0 and 1 occur twice in each table, so rows pair up on (id, rank of the row's text).
  auto ranked = [](const char* table) {
    return std::string(
               "SELECT id, CAST(t AS VARCHAR) AS row_text, row_number() OVER (PARTITION BY id ORDER BY "
               "CAST(t AS VARCHAR)) AS k FROM ") +
           table + " t";
  };
  ASSERT_OK_AND_ASSIGN(auto r, Query("WITH a AS (" + ranked(kUnshredded) + "), b AS (" + ranked(kShredded) +
                                     ") SELECT count(*), count(*) FILTER (WHERE a.row_text = b.row_text) "
                                     "FROM a FULL OUTER JOIN b ON a.id = b.id AND a.k = b.k"));
  EXPECT_EQ(r.at(0, 0), "102");
  EXPECT_EQ(r.at(0, 1), "102");
}

}  // namespace
}  // namespace basin::engine
