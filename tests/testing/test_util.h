// Test helpers: status assertions, temporary folders, and where the shared test data is.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <string>

#include "basin/status.h"

#define ASSERT_OK(expr)                                              \
  do {                                                               \
    ::basin::Status _st = ::basin::internal::ToStatus((expr));       \
    ASSERT_TRUE(_st.ok()) << #expr << " failed: " << _st.ToString(); \
  } while (0)

#define EXPECT_OK(expr)                                              \
  do {                                                               \
    ::basin::Status _st = ::basin::internal::ToStatus((expr));       \
    EXPECT_TRUE(_st.ok()) << #expr << " failed: " << _st.ToString(); \
  } while (0)

#define ASSERT_OK_AND_ASSIGN(lhs, rexpr)                                             \
  auto BASIN_CONCAT(_res_, __LINE__) = (rexpr);                                      \
  ASSERT_TRUE(BASIN_CONCAT(_res_, __LINE__).ok())                                    \
      << #rexpr << " failed: " << BASIN_CONCAT(_res_, __LINE__).status().ToString(); \
  lhs = std::move(BASIN_CONCAT(_res_, __LINE__)).value()

// Asserts that `expr` fails with `code` (an ErrorCode enumerator name such as kCorruption).
#define ASSERT_ERROR_CODE(expr, expected_code)                                  \
  do {                                                                          \
    ::basin::Status _st = ::basin::internal::ToStatus((expr));                  \
    ASSERT_EQ(_st.code(), ::basin::ErrorCode::expected_code) << _st.ToString(); \
  } while (0)

// Checks that `expr` (a Result or Status) fails with `code` and a message containing `text`:
// the ASSERT_ form ends the test on a wrong code, the EXPECT_ form goes on.
#define ASSERT_ERROR_WITH(expr, expected_code, text) \
  BASIN_CHECK_ERROR_WITH(ASSERT_EQ, expr, expected_code, text)
#define EXPECT_ERROR_WITH(expr, expected_code, text) \
  BASIN_CHECK_ERROR_WITH(EXPECT_EQ, expr, expected_code, text)
#define BASIN_CHECK_ERROR_WITH(check_code, expr, expected_code, text)            \
  do {                                                                           \
    ::basin::Status _st = ::basin::internal::ToStatus((expr));                   \
    check_code(_st.code(), ::basin::ErrorCode::expected_code) << _st.ToString(); \
    EXPECT_NE(_st.message().find(text), std::string::npos) << _st.ToString();    \
  } while (0)

namespace basin::testing {

// A fresh empty folder, removed when the object goes away.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string str() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

// The repository's root folder (where tests find their scripts and data files).
std::filesystem::path SourceDir();

// The folder ../shared/testdata relative to the source tree (or $BASIN_TESTDATA), when it
// exists.
std::optional<std::filesystem::path> SharedTestDataDir();

// Skips the current test, printing why, when the shared test data is absent.
#define SKIP_WITHOUT_SHARED_TESTDATA(var)                                                      \
  auto var##_opt = ::basin::testing::SharedTestDataDir();                                      \
  if (!var##_opt) {                                                                            \
    GTEST_SKIP() << "../shared/testdata not found (set BASIN_TESTDATA to its path); skipping"; \
  }                                                                                            \
  const std::filesystem::path var = *var##_opt

}  // namespace basin::testing
