#include "storage/object_store.h"

#include <algorithm>

namespace basin {

Result<std::vector<ObjectInfo>> ObjectStore::ListAfter(const std::string& prefix,
                                                       const std::string& start_after) {
  ASSIGN_OR_RETURN(std::vector<ObjectInfo> listed, List(prefix));
  // List() is sorted, so everything after the first key past `start_after` stays.
  auto first =
      std::upper_bound(listed.begin(), listed.end(), start_after,
                       [](const std::string& key, const ObjectInfo& info) { return key < info.key; });
  listed.erase(listed.begin(), first);
  return listed;
}

}  // namespace basin
