#include "basin/malloc_tuning.h"

#include <cstdlib>
#include <cstring>

#ifdef __GLIBC__
#include <malloc.h>
#endif

namespace basin {

void TuneMalloc() {
#ifdef __GLIBC__
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables != nullptr && std::strstr(tunables, "glibc.malloc.") != nullptr) return;
  // Setting either threshold turns off glibc's own adjustment of both: both are set.
  (void)mallopt(M_MMAP_THRESHOLD, kMmapThresholdBytes);
  (void)mallopt(M_TRIM_THRESHOLD, kTrimThresholdBytes);
#endif
}

}  // namespace basin
