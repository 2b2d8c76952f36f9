// Damaged tables give errors that name the file and the version, and the damage is the only
// thing that fails: the same table reads again once repaired.
#include <filesystem>
#include <fstream>

#include "sql/session.h"
#include "testing/test_util.h"

namespace basin::sql {
namespace {

namespace fs = std::filesystem;

class BadInputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto testdata = testing::SharedTestDataDir();
    if (!testdata) GTEST_SKIP() << "../shared/testdata not found (set BASIN_TESTDATA); skipping";
    table_ = dir_.path() / "t";
    // Two 5-row files; one has an on-disk deletion vector deleting 3 rows.
    fs::copy(*testdata / "delta/delta-kernel-rs/with-short-dv", table_, fs::copy_options::recursive);
    for (const auto& entry : fs::recursive_directory_iterator(table_)) {
      fs::permissions(entry.path(), fs::perms::owner_write, fs::perm_options::add);
    }
    ASSERT_OK_AND_ASSIGN(session_, Session::Open({}));
  }

  // Counts the rows by reading them: a bare count(*) is answered from the log's statistics.
  Status Count() {
    auto result =
        session_->Execute("SELECT count(*) FROM (SELECT * FROM delta_scan('" + table_.string() + "') LIMIT 100)");
    if (result.ok()) {
      EXPECT_EQ(result->back().result.at(0, 0), "7");
    }
    return result.status();
  }

  fs::path FileEndingWith(const std::string& suffix) {
    for (const auto& entry : fs::directory_iterator(table_)) {
      if (entry.path().string().ends_with(suffix)) return entry.path();
    }
    ADD_FAILURE() << "no file ending with " << suffix;
    return {};
  }

  static std::string Read(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  static void Write(const fs::path& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  }

  testing::TempDir dir_;
  fs::path table_;
  std::unique_ptr<Session> session_;
};

TEST_F(BadInputTest, CorruptCommitLineNamesFileVersionAndLine) {
  ASSERT_OK(Count());
  fs::path commit = table_ / "_delta_log/00000000000000000000.json";
  std::string original = Read(commit);
  Write(commit, original + "{\"add\": {\"path\": broken\n");
  Status st = Count();
  ASSERT_EQ(st.code(), ErrorCode::kCorruption) << st.ToString();
  EXPECT_NE(st.message().find("00000000000000000000.json (version 0) line"), std::string::npos)
      << st.message();
  Write(commit, original);
  ASSERT_OK(Count());
}

TEST_F(BadInputTest, MissingDataFileNamesFileAndVersion) {
  fs::path data = FileEndingWith("24db34ab-bdfe-4814-aba8-c1f34d6d8923-c000.snappy.parquet");
  fs::rename(data, dir_.path() / "aside.parquet");
  Status st = Count();
  ASSERT_EQ(st.code(), ErrorCode::kNotFound) << st.ToString();
  EXPECT_NE(st.message().find("version 0: data file part-00001-24db34ab"), std::string::npos) << st.message();
  fs::rename(dir_.path() / "aside.parquet", data);
  ASSERT_OK(Count());
}

TEST_F(BadInputTest, DamagedDeletionVectorNamesFileAndVersion) {
  fs::path dv = FileEndingWith(".bin");
  std::string original = Read(dv);
  std::string flipped = original;
  flipped[10] = static_cast<char>(flipped[10] ^ 0x5a);
  for (const std::string& damaged : {flipped, original.substr(0, 20)}) {
    Write(dv, damaged);
    Status st = Count();
    ASSERT_EQ(st.code(), ErrorCode::kCorruption) << st.ToString();
    EXPECT_NE(st.message().find("version 0"), std::string::npos) << st.message();
    EXPECT_NE(st.message().find(dv.filename().string()), std::string::npos) << st.message();
  }
  Write(dv, original);
  ASSERT_OK(Count());
}

TEST_F(BadInputTest, UnreadableCheckpointNamesItAndTheVersion) {
  auto testdata = testing::SharedTestDataDir();
  fs::path table = dir_.path() / "ckpt";
  fs::copy(*testdata / "delta/delta-kernel-rs/app-txn-checkpoint", table, fs::copy_options::recursive);
  fs::path checkpoint = table / "_delta_log/00000000000000000001.checkpoint.parquet";
  fs::permissions(checkpoint, fs::perms::owner_write, fs::perm_options::add);
  Write(checkpoint, "PAR1 this is not a parquet file PAR1");
  auto result = session_->Execute("SELECT count(*) FROM delta_scan('" + table.string() + "')");
  ASSERT_EQ(result.status().code(), ErrorCode::kCorruption) << result.status().ToString();
  EXPECT_NE(result.status().message().find("00000000000000000001.checkpoint.parquet"), std::string::npos)
      << result.status().message();
  EXPECT_NE(result.status().message().find("version 1"), std::string::npos) << result.status().message();
}

}  // namespace
}  // namespace basin::sql
