// QueryColumns: a stream's write query is described once while only its STREAM sources could
// change its columns and their keys stay the same, and every time otherwise.
#include "stream/query_columns.h"

#include <gtest/gtest.h>

#include "engine/table_refs.h"
#include "testing/test_util.h"

namespace basin::stream {
namespace {

constexpr char kKafka[] = "read_kafka(bootstrapServers => 'x', subscribe => 't', basin_stream_source => 0)";
constexpr char kFiles[] = "read_files('in', format => 'json', basin_stream_source => 1)";

std::string Reading(const std::string& rest) { return std::string("SELECT ") + rest; }

TEST(ReadsOnlyStreamSourcesTest, TellsQueriesReadingNothingButTheirSources) {
  for (const std::string& query :
       {Reading("decode(value) AS v FROM " + std::string(kKafka)),
        Reading("* FROM " + std::string(kKafka) + " UNION ALL SELECT * FROM " + kFiles),
        "WITH s AS (SELECT * FROM " + std::string(kKafka) + ") SELECT s.*, v.x FROM s, (VALUES (1)) v(x)",
        Reading("* FROM (SELECT value FROM " + std::string(kKafka) + ") WHERE value IS NOT NULL")}) {
    ASSERT_OK_AND_ASSIGN(bool only, engine::ReadsOnlyStreamSources(query));
    EXPECT_TRUE(only) << query;
  }
  for (const std::string& query :
       {Reading("* FROM " + std::string(kKafka) + " CROSS JOIN dim"),
        Reading("* FROM " + std::string(kKafka) + " WHERE key IN (SELECT k FROM s.keys)"),
        Reading("* FROM " + std::string(kKafka) + " UNION ALL SELECT * FROM read_parquet('x.parquet')"),
        Reading("* FROM " + std::string(kKafka) + ", my_table_macro()"),
        Reading("* FROM basin_stream_table('bronze') ")}) {
    ASSERT_OK_AND_ASSIGN(bool only, engine::ReadsOnlyStreamSources(query));
    EXPECT_FALSE(only) << query;
  }
  EXPECT_EQ(engine::ReadsOnlyStreamSources("SELECT FROM WHERE").status().code(), ErrorCode::kInvalidArgument);
}

class QueryColumnsTest : public ::testing::Test {
 protected:
  QueryColumns columns_{[this](const std::string& query) -> Result<std::vector<engine::ColumnType>> {
    described_.push_back(query);
    if (fail_) return Status::IOError("describing failed");
    engine::ColumnType column;
    column.name = "v" + std::to_string(described_.size());
    column.type_name = "VARCHAR";
    return std::vector<engine::ColumnType>{column};
  }};
  std::vector<std::string> described_;
  bool fail_ = false;
};

TEST_F(QueryColumnsTest, DescribesAStreamOnlyQueryOncePerSourcesKey) {
  const std::string query = Reading("decode(value) AS v FROM " + std::string(kKafka));
  const std::vector<std::string> raw = {""};
  for (int batch = 0; batch < 3; batch++) {
    ASSERT_OK_AND_ASSIGN(auto columns, columns_.Of(query, raw));
    EXPECT_EQ(columns.at(0).name, "v1");
  }
  EXPECT_EQ(described_.size(), 1u);
  // A source whose columns changed (a schema inferred) gives another key: described again.
  ASSERT_OK_AND_ASSIGN(auto inferred, columns_.Of(query, std::vector<std::string>{"id BIGINT"}));
  EXPECT_EQ(inferred.at(0).name, "v2");
  // A source that cannot tell: described every time.
  ASSERT_OK(columns_.Of(query, std::nullopt).status());
  ASSERT_OK(columns_.Of(query, std::nullopt).status());
  EXPECT_EQ(described_.size(), 4u);
}

TEST_F(QueryColumnsTest, DescribesEveryTimeAQueryReadingMoreThanItsSources) {
  const std::string query = Reading("* FROM " + std::string(kKafka) + " CROSS JOIN dim");
  for (int batch = 0; batch < 3; batch++)
    ASSERT_OK(columns_.Of(query, std::vector<std::string>{""}).status());
  EXPECT_EQ(described_.size(), 3u);
}

TEST_F(QueryColumnsTest, KeepsNothingWhenDescribingFails) {
  const std::string query = Reading("decode(value) AS v FROM " + std::string(kKafka));
  fail_ = true;
  EXPECT_EQ(columns_.Of(query, std::vector<std::string>{""}).status().code(), ErrorCode::kIOError);
  fail_ = false;
  ASSERT_OK(columns_.Of(query, std::vector<std::string>{""}).status());
  ASSERT_OK(columns_.Of(query, std::vector<std::string>{""}).status());
  EXPECT_EQ(described_.size(), 2u);
}

}  // namespace
}  // namespace basin::stream
