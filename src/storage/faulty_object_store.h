// FaultyObjectStore: wraps a store and injects failures for crash and retry tests.
// Failures are reproducible from a seed.
//
// Thread safety: as ObjectStore; the fault settings may be changed concurrently.
#pragma once

#include <cstdint>
#include <memory>

#include "storage/object_store.h"

namespace basin {

struct FaultOptions {
  // Fail the Nth call counted from now (1-based) with a retryable IOError; 0 = never.
  uint64_t fail_nth_call = 0;
  // Fail each call with this probability (0..1), drawn from `seed`.
  double failure_probability = 0.0;
  uint64_t seed = 1;
  // Sleep this long before each call.
  uint32_t latency_ms = 0;
  // Writes (Put/PutIfAbsent/Delete) are kept in an unsynced buffer until Sync();
  // DropUnsynced() forgets them, as a machine crash would.
  bool buffer_writes = false;
};

class FaultyObjectStore;
std::shared_ptr<FaultyObjectStore> NewFaultyObjectStore(std::shared_ptr<ObjectStore> base, FaultOptions options);

}  // namespace basin
