#include "basin/object_store.h"

#include <algorithm>

#include "storage/object_key.h"

namespace basin {

Result<std::string> ObjectStore::Get(const std::string& key) {
  ASSIGN_OR_RETURN(std::unique_ptr<ReadableObject> object, OpenRead(key, {}));
  std::string data(static_cast<size_t>(object->size_bytes()), '\0');
  RETURN_IF_ERROR(object->ReadAt(0, data.size(), data.data()));
  return data;
}

Result<std::string> ObjectStore::GetRange(const std::string& key, uint64_t offset, uint64_t length) {
  ASSIGN_OR_RETURN(std::unique_ptr<ReadableObject> object, OpenRead(key, {}));
  // Checked before allocating, so that an absurd length is an error, not an allocation.
  const uint64_t size = object->size_bytes();
  if (!RangeFits(offset, length, size)) return ShortObjectError(key, Describe(), offset, length, size);
  std::string data(static_cast<size_t>(length), '\0');
  RETURN_IF_ERROR(object->ReadAt(offset, length, data.data()));
  return data;
}

Status ObjectStore::Put(const std::string& key, const std::string& data) {
  ASSIGN_OR_RETURN(std::unique_ptr<WritableObject> object,
                   OpenWrite(key, ObjectWriteOptions{WriteMode::kAtomicReplace}));
  RETURN_IF_ERROR(object->Append(data));
  return object->Close();
}

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

Result<bool> ObjectStore::HasObjectsWithPrefix(const std::string& prefix) {
  ASSIGN_OR_RETURN(std::vector<ObjectInfo> listed, List(prefix));
  return !listed.empty();
}

}  // namespace basin
