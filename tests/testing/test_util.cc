#include "testing/test_util.h"

#include <cstdlib>
#include <random>

namespace basin::testing {

TempDir::TempDir() {
  std::random_device rd;
  auto base = std::filesystem::temp_directory_path();
  for (int attempt = 0; attempt < 100; attempt++) {
    auto candidate = base / ("basin-test-" + std::to_string(rd()));
    if (std::filesystem::create_directory(candidate)) {
      path_ = candidate;
      return;
    }
  }
  std::abort();
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::filesystem::path SourceDir() { return BASIN_SOURCE_DIR_FOR_TESTS; }

std::optional<std::filesystem::path> SharedTestDataDir() {
  if (const char* env = std::getenv("BASIN_TESTDATA"); env != nullptr && *env != '\0') {
    if (std::filesystem::is_directory(env)) return std::filesystem::path(env);
    return std::nullopt;
  }
  auto candidate = SourceDir().parent_path() / "shared" / "testdata";
  if (std::filesystem::is_directory(candidate)) return candidate;
  return std::nullopt;
}

}  // namespace basin::testing
