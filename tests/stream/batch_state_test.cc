// BatchStateFiles (stream/batch_state.h): a state of changes read back with its base and the
// changes since, and a damaged state object refused as Corruption naming the object.
#include "stream/batch_state.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runner_test_util.h"
#include "sql/session.h"
#include "testing/test_util.h"

namespace basin::stream {
namespace {

class BatchStateFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(session_, sql::Session::Open({.warehouse_dir = warehouse_.str()}));
    store_ = NewMemoryObjectStore();
    ASSERT_OK(Execute("CREATE TEMP TABLE changes (k BIGINT)"));
    ASSERT_OK(Execute("CREATE TEMP TABLE loaded (k BIGINT)"));
  }

  Status Execute(const std::string& sql) { return session_->connection().Execute(sql); }

  // The rows of the changes table.
  int64_t Changes() {
    return std::stoll(basin::testing::FirstColumn(*session_, "SELECT count(*) FROM changes").at(0));
  }

  // The keys `files` loads for batch `batch_id`, sorted; empty when the load fails.
  std::vector<std::string> Loaded(BatchStateFiles& files, int64_t batch_id) {
    EXPECT_OK(Execute("DELETE FROM loaded"));
    Result<std::optional<nlohmann::json>> state = files.Load(batch_id, "loaded");
    EXPECT_TRUE(state.ok()) << state.status().ToString();
    if (!state.ok()) return {};
    return basin::testing::FirstColumn(*session_, "SELECT k FROM loaded ORDER BY k");
  }

  testing::TempDir warehouse_;
  std::unique_ptr<sql::Session> session_;
  std::shared_ptr<ObjectStore> store_;
};

TEST_F(BatchStateFilesTest, AStateOfChangesReadsBackItsBaseAndEveryChangeSince) {
  const int64_t base_rows = BatchStateFiles::kMinRowsForChanges;
  const std::string full = "SELECT range AS k FROM range(" + std::to_string(base_rows) + ")";
  {
    BatchStateFiles files(session_->connection(), store_, "test");
    ASSERT_OK(files.Save(0, nlohmann::json::object(), full));
    // Batch 1 adds two keys, batch 2 none, batch 3 one: each writes its changes alone.
    const std::vector<std::string> added = {"(-1), (-2)", "", "(-3)"};
    for (int64_t batch = 1; batch <= 3; batch++) {
      ASSERT_OK(Execute("DELETE FROM changes"));
      if (!added[batch - 1].empty()) ASSERT_OK(Execute("INSERT INTO changes VALUES " + added[batch - 1]));
      ASSERT_OK(files.SaveChanges(batch, nlohmann::json::object(), Changes(), "SELECT * FROM changes", full));
    }
    ASSERT_OK_AND_ASSIGN(std::string text, store_->Get("3.json"));
    EXPECT_EQ(
        nlohmann::json::parse(text),
        nlohmann::json(
            {{"rows", 1}, {"base", 0}, {"baseRows", base_rows}, {"changedRows", 3}, {"changed", {1, 3}}}));
    EXPECT_TRUE(store_->Head("2.parquet").status().IsNotFound());  // no rows, no file
    // Batch 3 written again (a batch run again after a failure) is still a change of state 0.
    ASSERT_OK(Execute("DELETE FROM changes; INSERT INTO changes VALUES (-4)"));
    ASSERT_OK(files.SaveChanges(3, nlohmann::json::object(), Changes(), "SELECT * FROM changes", full));
  }
  // Read back by a new run: state 0's keys and the changes of batches 1 and 3.
  BatchStateFiles files(session_->connection(), store_, "test");
  const std::vector<std::string> loaded = Loaded(files, 3);
  ASSERT_EQ(loaded.size(), static_cast<size_t>(base_rows + 3));
  EXPECT_EQ(std::vector<std::string>(loaded.begin(), loaded.begin() + 4),
            (std::vector<std::string>{"-4", "-2", "-1", "0"}));
  // A full state then, and a change of it: the states before it are deleted.
  ASSERT_OK(files.Save(4, nlohmann::json::object(), full));
  ASSERT_OK(Execute("DELETE FROM changes; INSERT INTO changes VALUES (-5)"));
  ASSERT_OK(files.SaveChanges(5, nlohmann::json::object(), Changes(), "SELECT * FROM changes", full));
  ASSERT_OK_AND_ASSIGN(std::vector<ObjectInfo> objects, store_->List(""));
  std::vector<std::string> keys;
  for (const ObjectInfo& object : objects) keys.push_back(object.key);
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(keys, (std::vector<std::string>{"4.json", "4.parquet", "5.json", "5.parquet"}));
}

TEST_F(BatchStateFilesTest, ADamagedStateOfChangesIsCorruptionNamingIt) {
  BatchStateFiles files(session_->connection(), store_, "stream s");
  for (const char* damaged :
       {R"({"rows": 1, "base": 3})",  // not before it
        R"({"rows": 1, "base": 0})",  // no baseRows, changedRows, changed
        R"({"rows": 1, "base": 0, "baseRows": 5, "changedRows": 1, "changed": [4]})",
        R"({"rows": 1, "base": 0, "baseRows": 5, "changedRows": 2, "changed": [3, 2]})",
        R"({"rows": 1, "base": 0, "baseRows": 5, "changedRows": 1, "changed": ["3"]})"}) {
    SCOPED_TRACE(damaged);
    ASSERT_OK(store_->Put("3.json", damaged));
    Result<std::optional<nlohmann::json>> loaded = files.Load(3, "loaded");
    EXPECT_TRUE(loaded.status().IsCorruption()) << loaded.status().ToString();
    EXPECT_NE(loaded.status().message().find("stream s: state 3.json"), std::string::npos)
        << loaded.status().ToString();
  }
}

}  // namespace
}  // namespace basin::stream
