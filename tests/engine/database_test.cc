#include <gtest/gtest.h>

#include "engine/duckdb.h"
#include "testing/test_util.h"

namespace basin::engine {
namespace {

std::string Setting(Connection& conn, const std::string& name) {
  auto values = conn.QueryValues("SELECT current_setting('" + name + "')::VARCHAR");
  EXPECT_TRUE(values.ok()) << values.status().ToString();
  if (!values.ok() || values->rows.size() != 1) return "";
  return values->rows[0][0].text;
}

// DuckDB's allocator hands back what a long-running stream's batches freed only with these
// settings (Database::Open says what they changed in stream_memory_bench).
TEST(DatabaseTest, OpensWithAnAllocatorThatHandsFreedMemoryBack) {
  ASSERT_OK_AND_ASSIGN(auto db, Database::Open());
  ASSERT_OK_AND_ASSIGN(auto conn, Connection::Open(db));
  EXPECT_EQ(Setting(*conn, "allocator_background_threads"), "true");
  // kAllocatorFlushThreshold, as DuckDB shows it.
  EXPECT_EQ(Setting(*conn, "allocator_flush_threshold"), "4.0 MiB");
  EXPECT_EQ(Setting(*conn, "enable_external_file_cache"), "false");
}

// What the file cache holds of the files read, as rows of duckdb_external_file_cache().
int64_t CachedFiles(Connection& conn) {
  auto values = conn.QueryValues("SELECT count(DISTINCT path) FROM duckdb_external_file_cache()");
  EXPECT_TRUE(values.ok()) << values.status().ToString();
  return values.ok() && values->rows.size() == 1 ? std::stoll(values->rows[0][0].text) : -1;
}

// DuckDB keeps an entry for every file its readers opened until the cache is turned off,
// which ForgetOpenedFiles does again: shown with the cache on, where its entries hold the
// bytes read and its table function lists them.
TEST(DatabaseTest, ForgetOpenedFilesEmptiesTheFileCache) {
  ASSERT_OK_AND_ASSIGN(auto db, Database::Open());
  ASSERT_OK_AND_ASSIGN(auto conn, Connection::Open(db));
  basin::testing::TempDir dir;
  const std::string file = (dir.path() / "t.parquet").string();
  ASSERT_OK(conn->Execute("COPY (SELECT range AS i FROM range(1000)) TO '" + file + "' (FORMAT parquet)"));
  ASSERT_OK(conn->Execute("SET GLOBAL enable_external_file_cache = true"));
  ASSERT_OK_AND_ASSIGN(auto sum, conn->QueryValues("SELECT sum(i) FROM read_parquet('" + file + "')"));
  ASSERT_EQ(sum.rows[0][0].text, "499500");
  EXPECT_EQ(CachedFiles(*conn), 1);
  ASSERT_OK(conn->ForgetOpenedFiles());
  EXPECT_EQ(CachedFiles(*conn), 0);
  EXPECT_EQ(Setting(*conn, "enable_external_file_cache"), "false");
}

}  // namespace
}  // namespace basin::engine
