// basin::TableCache (include/basin/session.h) is the engine's snapshot cache under the name
// the public API gives it: the public header declares it without its members, and code
// below the API (a server's SQL-layer sessions) takes it as the engine cache it is.
//
// Thread safety: engine::SnapshotCache's (any thread).
#pragma once

#include "basin/session.h"
#include "engine/snapshot_cache.h"

namespace basin {

class TableCache final : public engine::SnapshotCache {
 public:
  using engine::SnapshotCache::SnapshotCache;
};

}  // namespace basin
