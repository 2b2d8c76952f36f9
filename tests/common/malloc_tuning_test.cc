#include "basin/malloc_tuning.h"

#include <gtest/gtest.h>
#include <malloc.h>

#include <cstdlib>
#include <cstring>

namespace basin {
namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kGlibcMalloc = false;  // the sanitizer's allocator replaces glibc's
#else
constexpr bool kGlibcMalloc = true;
#endif

// The number of allocations malloc serves from mappings of their own.
size_t MappedBlocks() { return mallinfo2().hblks; }

// A block of `bytes` allocated, written through and freed: whether it had a mapping of its own.
bool MappedOnItsOwn(size_t bytes) {
  const size_t before = MappedBlocks();
  void* block = std::malloc(bytes);
  EXPECT_NE(block, nullptr);
  std::memset(block, 1, bytes);
  const bool mapped = MappedBlocks() > before;
  std::free(block);
  return mapped;
}

TEST(MallocTuningTest, LargeBuffersComeFromTheHeapOnceTuned) {
  if (!kGlibcMalloc) GTEST_SKIP() << "built with AddressSanitizer, whose allocator replaces glibc's";
  if (const char* tunables = std::getenv("GLIBC_TUNABLES");
      tunables != nullptr && std::strstr(tunables, "glibc.malloc.") != nullptr) {
    GTEST_SKIP() << "GLIBC_TUNABLES sets malloc's tunables, which TuneMalloc leaves in force";
  }
  // glibc's default maps a first large block of its own (its threshold adapts only once one
  // is freed).
  constexpr size_t kFetchSized = 8 << 20;
  ASSERT_TRUE(MappedOnItsOwn(kFetchSized));
  TuneMalloc();
  EXPECT_FALSE(MappedOnItsOwn(kFetchSized));
  EXPECT_FALSE(MappedOnItsOwn(kMmapThresholdBytes - (1 << 20)));
  // Beyond the threshold a block is mapped on its own, as before.
  EXPECT_TRUE(MappedOnItsOwn(static_cast<size_t>(kMmapThresholdBytes) * 2));
}

}  // namespace
}  // namespace basin
