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

}  // namespace
}  // namespace basin::engine
