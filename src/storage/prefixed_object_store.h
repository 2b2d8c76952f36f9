// A view of another ObjectStore below a folder: key "k" is "<prefix>/k" in the base store.
// Writers that put files under a table's subfolder (change data files in _change_data/)
// hand it to code that writes at a store's root.
//
// Thread safety: as the base store.
#pragma once

#include <memory>
#include <string>

#include "basin/object_store.h"

namespace basin {

// REQUIRES: `folder` is non-empty and has no leading or trailing '/'.
std::shared_ptr<ObjectStore> NewPrefixedObjectStore(std::shared_ptr<ObjectStore> base, std::string folder);

}  // namespace basin
