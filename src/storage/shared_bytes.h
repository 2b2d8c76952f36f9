// Readers over bytes held in memory, shared with whoever else holds them: the memory store's
// objects and the fault-injecting store's unsynced writes.
//
// Thread safety: as ReadableObject.
#pragma once

#include <memory>
#include <string>

#include "basin/object_store.h"

namespace basin {

// Reads `data`, the object `info` describes in the store `store_description` names.
// REQUIRES: data is non-null.
std::unique_ptr<ReadableObject> NewSharedBytesReader(ObjectInfo info, std::string store_description,
                                                     std::shared_ptr<const std::string> data);

}  // namespace basin
