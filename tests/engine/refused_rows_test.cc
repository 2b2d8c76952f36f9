// basin_refuse and RefusedRows: a filter that keeps the rows it refuses aside as the rows are
// read, every one once and in order, only under the token of a RefusedRows alive.
#include "engine/refused_rows.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/duckdb.h"
#include "testing/test_util.h"

namespace basin::engine {
namespace {

class RefusedRowsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(db_, Database::Open());
    ASSERT_OK_AND_ASSIGN(conn_, Connection::Open(db_));
  }

  // The rows of range(`rows`) that are not multiples of 3, the multiples refused to `refused`.
  Result<QueryResult> Filter(const RefusedRows& refused, int rows) {
    return conn_->Query("SELECT i FROM range(" + std::to_string(rows) +
                        ") t(i) WHERE CASE WHEN i % 3 = 0 THEN basin_refuse(" +
                        std::to_string(refused.token()) +
                        ", 'row ' || i, 'a multiple of 3') ELSE TRUE END ORDER BY i");
  }

  std::shared_ptr<Database> db_;
  std::unique_ptr<Connection> conn_;
};

TEST_F(RefusedRowsTest, TheRefusedRowsAreKeptAsideAndTheRestGoOn) {
  RefusedRows refused;
  ASSERT_OK_AND_ASSIGN(QueryResult kept, Filter(refused, 10));
  ASSERT_EQ(kept.row_count(), 6u);
  EXPECT_EQ(kept.at(0, 0), "1");
  EXPECT_EQ(kept.at(5, 0), "8");
  EXPECT_EQ(refused.Take(), (std::vector<std::pair<std::string, std::string>>{{"row 0", "a multiple of 3"},
                                                                              {"row 3", "a multiple of 3"},
                                                                              {"row 6", "a multiple of 3"},
                                                                              {"row 9", "a multiple of 3"}}));
  EXPECT_TRUE(refused.Take().empty());  // taken
}

// Over many chunks, each refused row is kept once, and two RefusedRows keep their own.
TEST_F(RefusedRowsTest, EachRefusedRowIsKeptOnceByItsOwnRefusedRows) {
  constexpr int kRows = 100'000;
  RefusedRows first;
  RefusedRows second;
  ASSERT_OK_AND_ASSIGN(QueryResult kept, Filter(first, kRows));
  EXPECT_EQ(kept.row_count(), static_cast<size_t>(kRows - (kRows + 2) / 3));
  std::vector<std::pair<std::string, std::string>> rows = first.Take();
  ASSERT_EQ(rows.size(), static_cast<size_t>((kRows + 2) / 3));
  std::vector<std::string> values;
  for (const auto& [value, error] : rows) values.push_back(value);
  std::sort(values.begin(), values.end());
  EXPECT_EQ(std::unique(values.begin(), values.end()), values.end());
  EXPECT_TRUE(second.Take().empty());
}

TEST_F(RefusedRowsTest, ATokenOfNoRefusedRowsFailsTheQuery) {
  int64_t gone = 0;
  {
    RefusedRows refused;
    gone = refused.token();
  }
  auto failed = conn_->Query("SELECT i FROM range(3) t(i) WHERE CASE WHEN i = 1 THEN basin_refuse(" +
                             std::to_string(gone) + ", 'x', 'y') ELSE TRUE END");
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().message().find("basin_refuse"), std::string::npos) << failed.status().ToString();
}

}  // namespace
}  // namespace basin::engine
