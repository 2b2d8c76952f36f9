#include "delta/deletion_vector.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <sstream>

#include "basin/object_store.h"
#include "testing/test_util.h"

namespace basin::delta {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The descriptor as the log's JSON holds it, parsed by hand so these tests do not depend on
// the action parser.
DeletionVectorDescriptor DescriptorFromJson(const json& j) {
  DeletionVectorDescriptor dv;
  dv.storage_type = j.at("storageType").get<std::string>().at(0);
  dv.path_or_inline_dv = j.at("pathOrInlineDv").get<std::string>();
  if (j.contains("offset") && !j["offset"].is_null()) dv.offset = j["offset"].get<int32_t>();
  dv.size_in_bytes = j.at("sizeInBytes").get<int32_t>();
  dv.cardinality = j.at("cardinality").get<int64_t>();
  return dv;
}

struct LoggedDv {
  std::string where;  // commit file and action, for failure messages
  DeletionVectorDescriptor dv;
};

// Every deletionVector of add and remove actions in the table's JSON commits.
std::vector<LoggedDv> DvsInJsonLog(const fs::path& table) {
  std::vector<LoggedDv> out;
  std::vector<fs::path> commits;
  for (const auto& entry : fs::directory_iterator(table / "_delta_log")) {
    if (entry.path().extension() == ".json" && entry.path().filename().string()[0] != '.') {
      commits.push_back(entry.path());
    }
  }
  std::sort(commits.begin(), commits.end());
  for (const auto& commit : commits) {
    std::istringstream lines(ReadFile(commit));
    std::string line;
    while (std::getline(lines, line)) {
      json action = json::parse(line, nullptr, false);
      if (action.is_discarded()) continue;
      for (const char* kind : {"add", "remove"}) {
        if (action.contains(kind) && action[kind].contains("deletionVector") &&
            !action[kind]["deletionVector"].is_null()) {
          out.push_back({commit.filename().string() + " " + kind + " " + action[kind].value("path", ""),
                         DescriptorFromJson(action[kind]["deletionVector"])});
        }
      }
    }
  }
  return out;
}

std::shared_ptr<ObjectStore> OpenTable(const fs::path& table) {
  auto store = OpenLocalObjectStore(table.string());
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  return *store;
}

// --- Z85 ---

TEST(Z85, RfcTestVector) {
  const std::string bytes("\x86\x4F\xD2\x6F\xB5\x59\xF7\x5B", 8);
  EXPECT_EQ(Z85Encode(bytes), "HelloWorld");
  ASSERT_OK_AND_ASSIGN(std::string decoded, Z85Decode("HelloWorld"));
  EXPECT_EQ(decoded, bytes);
}

TEST(Z85, RoundTripsEveryByteValue) {
  std::string bytes(256, '\0');
  std::iota(bytes.begin(), bytes.end(), 0);
  std::mt19937 rng(7);
  std::shuffle(bytes.begin(), bytes.end(), rng);
  bytes += std::string(4, '\xff');
  std::string text = Z85Encode(bytes);
  EXPECT_EQ(text.size(), bytes.size() / 4 * 5);
  ASSERT_OK_AND_ASSIGN(std::string back, Z85Decode(text));
  EXPECT_EQ(back, bytes);
  EXPECT_EQ(Z85Encode(""), "");
}

TEST(Z85, RejectsBadInput) {
  ASSERT_ERROR_CODE(Z85Decode("HelloWorl"), kInvalidArgument);  // 9 characters
  ASSERT_ERROR_CODE(Z85Decode("Hello World"), kInvalidArgument);
  ASSERT_ERROR_CODE(Z85Decode("Hell\"World"), kInvalidArgument);  // '"' is not in the alphabet
  ASSERT_ERROR_CODE(Z85Decode(std::string("Hell\0", 5)), kInvalidArgument);
  ASSERT_ERROR_CODE(Z85Decode("#####"), kInvalidArgument);    // 85^5 - 1 > 2^32 - 1
  ASSERT_OK_AND_ASSIGN(std::string max, Z85Decode("%nSc0"));  // 2^32 - 1 is fine
  EXPECT_EQ(max, std::string(4, '\xff'));
}

// --- descriptors and keys ---

TEST(DeletionVectorKey, ProtocolExampleWithRandomPrefix) {
  DeletionVectorDescriptor dv{'u', "ab^-aqEH.-t@S}K{vb[*k^", 4, 40, 6};
  ASSERT_OK_AND_ASSIGN(std::string key, DeletionVectorKey(dv));
  EXPECT_EQ(key, "ab/deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin");
}

TEST(DeletionVectorKey, EncodedPathRoundTrips) {
  std::string uuid("\xd2\xc6\x39\xaa\x88\x16\x43\x1a\xaa\xf6\xd3\xfe\x25\x12\xff\x61", 16);
  EXPECT_EQ(EncodeDeletionVectorPath("ab", uuid), "ab^-aqEH.-t@S}K{vb[*k^");
  DeletionVectorDescriptor dv{'u', EncodeDeletionVectorPath("", uuid), 1, 0, 0};
  ASSERT_OK_AND_ASSIGN(std::string key, DeletionVectorKey(dv));
  EXPECT_EQ(key, "deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin");
}

TEST(DeletionVectorKey, AbsolutePathsAndBadDescriptors) {
  ASSERT_OK_AND_ASSIGN(std::string path,
                       DeletionVectorKey({'p', "file:/data/t/deletion%20vector.bin", 1, 0, 0}));
  EXPECT_EQ(path, "/data/t/deletion vector.bin");
  ASSERT_ERROR_CODE(DeletionVectorKey({'i', "0000000000", std::nullopt, 4, 0}), kInvalidArgument);
  ASSERT_ERROR_CODE(DeletionVectorKey({'u', "short", 1, 0, 0}), kCorruption);
  ASSERT_ERROR_CODE(DeletionVectorKey({'u', "ab\"-aqEH.-t@S}K{vb[*k^", 1, 0, 0}), kCorruption);
  ASSERT_ERROR_CODE(DeletionVectorKey({'x', "ab^-aqEH.-t@S}K{vb[*k^", 1, 0, 0}), kCorruption);
}

// PROTOCOL.md's inline example (rows 3, 4, 7, 11, 18, 29) is serialized in the "native"
// RoaringBitmapArray layout, big-endian, not the portable one the protocol specifies; Delta
// Spark's reader refuses it too.
TEST(LoadDeletionVector, ProtocolInlineExampleIsRefused) {
  auto store = NewMemoryObjectStore();
  DeletionVectorDescriptor dv{'i', "wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L", std::nullopt, 40, 6};
  ASSERT_OK_AND_ASSIGN(std::string raw, Z85Decode(dv.path_or_inline_dv));
  EXPECT_EQ(raw.substr(0, 4), std::string("\x64\x39\xd3\xd0", 4));  // 1681511376 big-endian
  auto result = LoadDeletionVector(*store, dv, "protocol example");
  ASSERT_ERROR_CODE(result, kCorruption);
  EXPECT_NE(result.status().message().find("native"), std::string::npos) << result.status().ToString();
}

TEST(Z85, ReadsTheZ85CratesPaddedTail) {
  // delta-kernel-rs's cdf-table-with-dv v5: 34 bytes, the last two ("03 00") as "##093".
  ASSERT_OK_AND_ASSIGN(std::string tail, Z85Decode("HelloWorld##093"));
  EXPECT_EQ(tail, std::string("\x86\x4F\xD2\x6F\xB5\x59\xF7\x5B\x03\x00", 10));
  ASSERT_OK_AND_ASSIGN(std::string one, Z85Decode("###2z"));  // 2*85 + 35 = 205
  EXPECT_EQ(one, "\xcd");
  ASSERT_ERROR_CODE(Z85Decode("####0"), kInvalidArgument);
  ASSERT_ERROR_CODE(Z85Decode("###50"), kInvalidArgument);            // 425 does not fit one byte
  ASSERT_ERROR_CODE(Z85Decode("##093HelloWorld"), kInvalidArgument);  // only the last group
}

// --- real tables ---

TEST(LoadDeletionVector, WithShortDvTable) {
  SKIP_WITHOUT_SHARED_TESTDATA(testdata);
  fs::path table = testdata / "delta" / "delta-kernel-rs" / "with-short-dv";
  auto dvs = DvsInJsonLog(table);
  ASSERT_EQ(dvs.size(), 1u);
  const DeletionVectorDescriptor& dv = dvs[0].dv;
  EXPECT_EQ(dv.storage_type, 'u');
  ASSERT_OK_AND_ASSIGN(std::string key, DeletionVectorKey(dv));
  EXPECT_EQ(key, "deletion_vector_ae7177f2-6d17-4ea8-819b-8d62fa2c5469.bin");
  EXPECT_TRUE(fs::exists(table / key));
  auto store = OpenTable(table);
  ASSERT_OK_AND_ASSIGN(auto positions, LoadDeletionVector(*store, dv, dvs[0].where));
  EXPECT_EQ(positions, (std::vector<uint64_t>{0, 1, 2}));
}

TEST(LoadDeletionVector, CdfTableInlineAndOnDiskDvs) {
  SKIP_WITHOUT_SHARED_TESTDATA(testdata);
  fs::path table = testdata / "delta" / "delta-kernel-rs" / "cdf-table-with-dv";
  auto store = OpenTable(table);
  auto dvs = DvsInJsonLog(table);
  // Rows deleted by each commit's add, per delta-kernel-rs's description of the table:
  // v1 deletes 0 and 9, v2 restores them, v3 deletes 0, 1, 4, 5, v4 restores 1 and 4,
  // v5 restores 0 and 5 and deletes 3.
  std::map<std::string, std::vector<uint64_t>> expected_adds = {
      {"00000000000000000001.json", {0, 9}},
      {"00000000000000000003.json", {0, 1, 4, 5}},
      {"00000000000000000004.json", {0, 5}},
      {"00000000000000000005.json", {3}},
  };
  int inline_dvs = 0;
  int file_dvs = 0;
  int checked_adds = 0;
  for (const auto& [where, dv] : dvs) {
    ASSERT_OK_AND_ASSIGN(auto positions, LoadDeletionVector(*store, dv, where));
    std::string commit = where.substr(0, where.find(' '));
    if (where.find(" add ") != std::string::npos && expected_adds.count(commit)) {
      EXPECT_EQ(positions, expected_adds[commit]) << where;
      checked_adds++;
    }
    EXPECT_EQ(positions.size(), static_cast<size_t>(dv.cardinality)) << where;
    EXPECT_TRUE(std::is_sorted(positions.begin(), positions.end())) << where;
    for (uint64_t p : positions) EXPECT_LT(p, 10u) << where;  // the data file has 10 rows
    if (dv.storage_type == 'i') {
      inline_dvs++;
      // And our encoder's bitmap decodes to the same rows.
      std::string ours = SerializeRoaringBitmapArray(positions);
      DeletionVectorDescriptor again{'i', EncodeInlineDeletionVector(ours), std::nullopt,
                                     static_cast<int32_t>(ours.size()), dv.cardinality};
      ASSERT_OK_AND_ASSIGN(auto round_trip, LoadDeletionVector(*store, again, where));
      EXPECT_EQ(round_trip, positions);
    } else {
      file_dvs++;
    }
  }
  EXPECT_EQ(checked_adds, 4);
  EXPECT_EQ(inline_dvs, 6);  // an add and a remove in each of three commits
  EXPECT_GE(file_dvs, 1);
}

// Every DV in the JSON logs of every shared table decodes to its logged cardinality.
TEST(LoadDeletionVector, AllDvsInSharedTables) {
  SKIP_WITHOUT_SHARED_TESTDATA(testdata);
  size_t tables_with_dvs = 0;
  size_t total_dvs = 0;
  for (const auto& source : fs::directory_iterator(testdata / "delta")) {
    if (!source.is_directory()) continue;
    for (const auto& test_case : fs::directory_iterator(source.path())) {
      fs::path table = fs::exists(test_case.path() / "delta" / "_delta_log") ? test_case.path() / "delta"
                                                                             : test_case.path();
      if (!fs::is_directory(table / "_delta_log")) continue;
      auto dvs = DvsInJsonLog(table);
      if (dvs.empty()) continue;
      tables_with_dvs++;
      auto store = OpenTable(table);
      for (const auto& [where, dv] : dvs) {
        SCOPED_TRACE(table.string() + " " + where);
        ASSERT_OK_AND_ASSIGN(auto positions, LoadDeletionVector(*store, dv, where));
        EXPECT_EQ(positions.size(), static_cast<size_t>(dv.cardinality));
        EXPECT_TRUE(std::adjacent_find(positions.begin(), positions.end(), std::greater_equal<>()) ==
                    positions.end());
        total_dvs++;
      }
    }
  }
  // dv-partitioned-with-checkpoint, dv-with-columnmapping, log-replay-dv-key-cases,
  // basic-dv-with-checkpoint, compacted-log-files-table, with-short-dv, cdf-table-with-dv.
  EXPECT_GE(tables_with_dvs, 7u);
  EXPECT_GE(total_dvs, 50u);
}

// --- encoder round trips ---

TEST(SerializeRoaringBitmapArray, RoundTripsAcrossBucketsAndContainerKinds) {
  std::vector<uint64_t> positions = {5, 0, 5, 65535, 65536};
  for (uint64_t i = 100000; i < 170000; i++) positions.push_back(i);                    // a run
  for (uint64_t i = 200000; i < 220000; i += 2) positions.push_back(i);                 // a bitset
  for (uint64_t i = 0; i < 100; i++) positions.push_back((uint64_t{1} << 32) + i * 7);  // second bucket
  positions.push_back((uint64_t{1} << 62) + 1);
  std::string bytes = SerializeRoaringBitmapArray(positions);
  std::vector<uint64_t> expected = positions;
  std::sort(expected.begin(), expected.end());
  expected.erase(std::unique(expected.begin(), expected.end()), expected.end());
  ASSERT_OK_AND_ASSIGN(auto decoded, DecodeRoaringBitmapArray(bytes));
  EXPECT_EQ(decoded, expected);
  // The run makes the whole thing small.
  EXPECT_LT(bytes.size(), 30000u);
}

TEST(SerializeRoaringBitmapArray, EmptyBitmap) {
  std::string bytes = SerializeRoaringBitmapArray({});
  EXPECT_EQ(bytes.size(), 12u);  // magic and a zero bucket count
  ASSERT_OK_AND_ASSIGN(auto decoded, DecodeRoaringBitmapArray(bytes));
  EXPECT_TRUE(decoded.empty());
}

// --- DV files and their corruption ---

class DvFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    bitmap_ = SerializeRoaringBitmapArray({1, 4, 9, 16});
    dv_ = {'u', EncodeDeletionVectorPath("xy", std::string(16, '\x42')), 1,
           static_cast<int32_t>(bitmap_.size()), 4};
    ASSERT_OK_AND_ASSIGN(key_, DeletionVectorKey(dv_));
    EXPECT_EQ(key_, "xy/deletion_vector_42424242-4242-4242-4242-424242424242.bin");
  }

  void PutFile(const std::string& body) { ASSERT_OK(store_->Put(key_, body)); }

  // Asserts a Corruption whose message names the DV file and the context.
  void ExpectCorruption(const DeletionVectorDescriptor& dv, const std::string& why) {
    auto result = LoadDeletionVector(*store_, dv, "data file part-0.parquet, version 7");
    ASSERT_ERROR_CODE(result, kCorruption);
    std::string message = result.status().message();
    EXPECT_NE(message.find(key_), std::string::npos) << message;
    EXPECT_NE(message.find("part-0.parquet, version 7"), std::string::npos) << message;
    EXPECT_NE(message.find(why), std::string::npos) << message;
  }

  std::shared_ptr<ObjectStore> store_ = NewMemoryObjectStore();
  std::string bitmap_;
  DeletionVectorDescriptor dv_;
  std::string key_;
};

TEST_F(DvFileTest, ReadsAWellFormedFile) {
  PutFile(EncodeDeletionVectorFile(bitmap_));
  ASSERT_OK_AND_ASSIGN(auto positions, LoadDeletionVector(*store_, dv_, "ctx"));
  EXPECT_EQ(positions, (std::vector<uint64_t>{1, 4, 9, 16}));
}

TEST_F(DvFileTest, ReadsADvAtAnOffsetInAFileWithSeveral) {
  std::string other = SerializeRoaringBitmapArray({100, 200});
  std::string second = EncodeDeletionVectorFile(bitmap_).substr(1);
  std::string body = EncodeDeletionVectorFile(other) + second;
  PutFile(body);
  dv_.offset = static_cast<int32_t>(body.size() - second.size());
  ASSERT_OK_AND_ASSIGN(auto positions, LoadDeletionVector(*store_, dv_, "ctx"));
  EXPECT_EQ(positions, (std::vector<uint64_t>{1, 4, 9, 16}));
}

TEST_F(DvFileTest, TruncatedFile) {
  std::string body = EncodeDeletionVectorFile(bitmap_);
  PutFile(body.substr(0, body.size() - 3));
  ExpectCorruption(dv_, "bytes");
  PutFile("");
  ExpectCorruption(dv_, "bytes");
}

TEST_F(DvFileTest, WrongCrc) {
  std::string body = EncodeDeletionVectorFile(bitmap_);
  body.back() ^= 0x01;
  PutFile(body);
  ExpectCorruption(dv_, "CRC-32");
  // A flipped bitmap byte is caught by the same check.
  body = EncodeDeletionVectorFile(bitmap_);
  body[10] ^= 0x20;
  PutFile(body);
  ExpectCorruption(dv_, "CRC-32");
}

TEST_F(DvFileTest, WrongSize) {
  PutFile(EncodeDeletionVectorFile(bitmap_) + std::string(16, '\0'));
  DeletionVectorDescriptor dv = dv_;
  dv.size_in_bytes += 4;
  ExpectCorruption(dv, "sizeInBytes");
}

TEST_F(DvFileTest, WrongCardinality) {
  PutFile(EncodeDeletionVectorFile(bitmap_));
  DeletionVectorDescriptor dv = dv_;
  dv.cardinality = 5;
  ExpectCorruption(dv, "cardinality");
}

TEST_F(DvFileTest, WrongVersionAndBadOffset) {
  std::string body = EncodeDeletionVectorFile(bitmap_);
  body[0] = 2;
  PutFile(body);
  ExpectCorruption(dv_, "version");
  PutFile(EncodeDeletionVectorFile(bitmap_));
  DeletionVectorDescriptor dv = dv_;
  dv.offset = 0;
  ExpectCorruption(dv, "offset");
  dv.offset = 2;  // lands inside the size field
  ExpectCorruption(dv, "");
}

TEST_F(DvFileTest, MissingFileIsNotFound) {
  auto result = LoadDeletionVector(*store_, dv_, "ctx");
  ASSERT_ERROR_CODE(result, kNotFound);
  EXPECT_NE(result.status().message().find(key_), std::string::npos);
}

TEST_F(DvFileTest, InlineCorruption) {
  DeletionVectorDescriptor dv{'i', EncodeInlineDeletionVector(bitmap_), std::nullopt,
                              static_cast<int32_t>(bitmap_.size()), 4};
  ASSERT_OK_AND_ASSIGN(auto positions, LoadDeletionVector(*store_, dv, "ctx"));
  EXPECT_EQ(positions.size(), 4u);
  for (auto [size_delta, cardinality] : std::vector<std::pair<int, int64_t>>{{8, 4}, {0, 3}, {-1, 4}}) {
    DeletionVectorDescriptor bad = dv;
    bad.size_in_bytes += size_delta;
    bad.cardinality = cardinality;
    auto result = LoadDeletionVector(*store_, bad, "file f.parquet");
    ASSERT_ERROR_CODE(result, kCorruption);
    EXPECT_NE(result.status().message().find("inline deletion vector"), std::string::npos);
    EXPECT_NE(result.status().message().find("f.parquet"), std::string::npos);
  }
  dv.path_or_inline_dv[0] = '"';
  ASSERT_ERROR_CODE(LoadDeletionVector(*store_, dv, "ctx"), kCorruption);
}

// --- absolute-path DVs ---

TEST(LoadDeletionVector, AbsolutePathInsideAndOutsideTheTable) {
  basin::testing::TempDir table_dir;
  basin::testing::TempDir elsewhere;
  ASSERT_OK_AND_ASSIGN(auto store, OpenLocalObjectStore(table_dir.str()));
  std::string bitmap = SerializeRoaringBitmapArray({2, 3});
  std::string body = EncodeDeletionVectorFile(bitmap);
  ASSERT_OK(store->Put("dvs/inside dv.bin", body));
  ASSERT_OK_AND_ASSIGN(auto outside_store, OpenLocalObjectStore(elsewhere.str()));
  ASSERT_OK(outside_store->Put("outside.bin", body));

  DeletionVectorDescriptor inside{'p', "file://" + table_dir.str() + "/dvs/inside%20dv.bin", 1,
                                  static_cast<int32_t>(bitmap.size()), 2};
  ASSERT_OK_AND_ASSIGN(auto a, LoadDeletionVector(*store, inside, "ctx"));
  EXPECT_EQ(a, (std::vector<uint64_t>{2, 3}));

  DeletionVectorDescriptor outside = inside;
  outside.path_or_inline_dv = elsewhere.str() + "/outside.bin";
  ASSERT_OK_AND_ASSIGN(auto b, LoadDeletionVector(*store, outside, "ctx"));
  EXPECT_EQ(b, (std::vector<uint64_t>{2, 3}));

  outside.path_or_inline_dv = elsewhere.str() + "/no-such-folder/outside.bin";
  ASSERT_ERROR_CODE(LoadDeletionVector(*store, outside, "ctx"), kNotFound);
  EXPECT_FALSE(fs::exists(elsewhere.path() / "no-such-folder"));

  outside.path_or_inline_dv = "s3://bucket/t/dv.bin";
  ASSERT_ERROR_CODE(LoadDeletionVector(*store, outside, "ctx"), kNotImplemented);
  // An absolute local path names a local file whatever store the table is in.
  auto memory = NewMemoryObjectStore();
  ASSERT_OK_AND_ASSIGN(auto c, LoadDeletionVector(*memory, inside, "ctx"));
  EXPECT_EQ(c, (std::vector<uint64_t>{2, 3}));
}

// --- malformed bitmaps: clean errors, no crashes ---

std::string WithMagic(const std::string& rest) {
  std::string out("\xd1\xd3\x39\x64", 4);
  return out + rest;
}

std::string LE64(uint64_t v) {
  std::string out;
  for (int i = 0; i < 8; i++) out += static_cast<char>((v >> (8 * i)) & 0xff);
  return out;
}

TEST(DecodeRoaringBitmapArray, RejectsMalformedHeaders) {
  ASSERT_ERROR_CODE(DecodeRoaringBitmapArray(""), kCorruption);
  ASSERT_ERROR_CODE(DecodeRoaringBitmapArray("abc"), kCorruption);
  std::string good = SerializeRoaringBitmapArray({1, 2, (uint64_t{5} << 32) + 3});
  std::string native = good;
  native[0] = '\xd0';  // 1681511376, the non-portable format
  auto st = DecodeRoaringBitmapArray(native).status();
  ASSERT_ERROR_CODE(st, kCorruption);
  EXPECT_NE(st.message().find("native"), std::string::npos);
  ASSERT_ERROR_CODE(DecodeRoaringBitmapArray(good.substr(0, 10)), kCorruption);           // count cut short
  ASSERT_ERROR_CODE(DecodeRoaringBitmapArray(WithMagic(LE64(UINT64_MAX))), kCorruption);  // absurd count
  ASSERT_ERROR_CODE(DecodeRoaringBitmapArray(good + "x"), kCorruption);                   // trailing byte
  for (size_t cut = 0; cut < good.size(); cut++) {
    SCOPED_TRACE(cut);
    ASSERT_ERROR_CODE(DecodeRoaringBitmapArray(good.substr(0, cut)), kCorruption);
  }
  // A bucket key with its sign bit set.
  std::string negative = SerializeRoaringBitmapArray({uint64_t{0x7fffffff} << 32});
  negative[15] = '\xff';
  ASSERT_ERROR_CODE(DecodeRoaringBitmapArray(negative), kCorruption);
}

TEST(DecodeRoaringBitmapArray, RejectsBucketsOutOfOrder) {
  std::string first = SerializeRoaringBitmapArray({(uint64_t{2} << 32) + 1}).substr(12);
  std::string second = SerializeRoaringBitmapArray({(uint64_t{1} << 32) + 1}).substr(12);
  ASSERT_ERROR_CODE(DecodeRoaringBitmapArray(WithMagic(LE64(2) + first + second)), kCorruption);
  ASSERT_OK_AND_ASSIGN(auto ok, DecodeRoaringBitmapArray(WithMagic(LE64(2) + second + first)));
  EXPECT_EQ(ok.size(), 2u);
}

// Container contents libroaring would take on trust.
TEST(DecodeRoaringBitmapArray, RejectsInconsistentContainers) {
  // A bitset container (5000 values) whose header claims a different cardinality.
  std::vector<uint64_t> evens;
  for (uint64_t i = 0; i < 10000; i += 2) evens.push_back(i);
  std::string bitset = SerializeRoaringBitmapArray(evens);
  ASSERT_OK(DecodeRoaringBitmapArray(bitset));
  // Layout: magic(4) count(8) key(4) cookie(4) containers(4) key(2) card-1(2) ...
  std::string lying = bitset;
  lying[26] = static_cast<char>(0x70);  // card-1 = 0x1370 + ... : anything but 4999
  lying[27] = static_cast<char>(0x17);
  ASSERT_ERROR_CODE(DecodeRoaringBitmapArray(lying), kCorruption);

  // An array container whose values are not ascending.
  std::string array = SerializeRoaringBitmapArray({1, 2, 3 + 100, 7 + 200});
  ASSERT_OK(DecodeRoaringBitmapArray(array));
  std::string unsorted = array;
  std::swap(unsorted[array.size() - 2], unsorted[array.size() - 4]);
  std::swap(unsorted[array.size() - 1], unsorted[array.size() - 3]);
  ASSERT_ERROR_CODE(DecodeRoaringBitmapArray(unsorted), kCorruption);

  // A run container whose run passes the end of its 16-bit range.
  std::vector<uint64_t> run;
  for (uint64_t i = 60000; i < 65536; i++) run.push_back(i);
  std::string runs = SerializeRoaringBitmapArray(run);
  ASSERT_OK_AND_ASSIGN(auto decoded, DecodeRoaringBitmapArray(runs));
  EXPECT_EQ(decoded.size(), run.size());
  std::string past_end = runs;
  past_end[past_end.size() - 4] = static_cast<char>(0x70);  // start 60000 -> 60016, same length
  ASSERT_ERROR_CODE(DecodeRoaringBitmapArray(past_end), kCorruption);
}

TEST(DecodeRoaringBitmapArray, LimitsCardinalityBeforeAllocating) {
  std::vector<uint64_t> many;
  for (uint64_t i = 0; i < 200000; i++) many.push_back(i);
  std::string bytes = SerializeRoaringBitmapArray(many);
  EXPECT_LT(bytes.size(), 100u);  // runs
  ASSERT_ERROR_CODE(DecodeRoaringBitmapArray(bytes, 1000), kCorruption);
  ASSERT_OK_AND_ASSIGN(auto all, DecodeRoaringBitmapArray(bytes, 200000));
  EXPECT_EQ(all.size(), 200000u);
}

TEST(DecodeRoaringBitmapArray, SurvivesRandomMutations) {
  std::string good = SerializeRoaringBitmapArray({1, 2, 3, 1000, 70000, (uint64_t{3} << 32) + 9});
  std::mt19937 rng(1234);
  int accepted = 0;
  for (int i = 0; i < 20000; i++) {
    std::string mutated = good;
    int flips = 1 + static_cast<int>(rng() % 3);
    for (int f = 0; f < flips; f++) mutated[rng() % mutated.size()] = static_cast<char>(rng());
    auto result = DecodeRoaringBitmapArray(mutated, 1 << 20);
    if (result.ok()) {
      accepted++;
      EXPECT_TRUE(std::adjacent_find(result->begin(), result->end(), std::greater_equal<>()) ==
                  result->end());
    } else {
      EXPECT_EQ(result.status().code(), ErrorCode::kCorruption);
    }
  }
  EXPECT_LT(accepted, 20000);
}

}  // namespace
}  // namespace basin::delta
