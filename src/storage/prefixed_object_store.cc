#include "storage/prefixed_object_store.h"

#include <cassert>

namespace basin {

namespace {

class PrefixedObjectStore final : public ObjectStore {
 public:
  PrefixedObjectStore(std::shared_ptr<ObjectStore> base, std::string folder)
      : base_(std::move(base)), prefix_(std::move(folder) + "/") {}

  Result<std::unique_ptr<ReadableObject>> OpenRead(const std::string& key,
                                                   const ObjectReadOptions& options = {}) override {
    return base_->OpenRead(prefix_ + key, options);
  }
  Result<std::unique_ptr<WritableObject>> OpenWrite(const std::string& key,
                                                    const ObjectWriteOptions& options = {}) override {
    return base_->OpenWrite(prefix_ + key, options);
  }
  Result<std::string> Get(const std::string& key) override { return base_->Get(prefix_ + key); }
  Result<std::string> GetRange(const std::string& key, uint64_t offset, uint64_t length) override {
    return base_->GetRange(prefix_ + key, offset, length);
  }
  Result<ObjectInfo> Head(const std::string& key) override {
    ASSIGN_OR_RETURN(ObjectInfo info, base_->Head(prefix_ + key));
    info.key = key;
    return info;
  }
  Status Put(const std::string& key, const std::string& data) override {
    return base_->Put(prefix_ + key, data);
  }
  Status PutIfAbsent(const std::string& key, const std::string& data) override {
    return base_->PutIfAbsent(prefix_ + key, data);
  }
  Status Delete(const std::string& key) override { return base_->Delete(prefix_ + key); }
  Result<std::vector<ObjectInfo>> List(const std::string& prefix) override {
    ASSIGN_OR_RETURN(std::vector<ObjectInfo> listed, base_->List(prefix_ + prefix));
    for (ObjectInfo& info : listed) info.key = info.key.substr(prefix_.size());
    return listed;
  }
  Result<bool> HasObjectsWithPrefix(const std::string& prefix) override {
    return base_->HasObjectsWithPrefix(prefix_ + prefix);
  }
  bool CheapRandomReads() const override { return base_->CheapRandomReads(); }
  std::optional<std::string> LocalPath(const std::string& key) const override {
    // LocalPath("") names the folder itself, without a trailing separator.
    return base_->LocalPath(key.empty() ? prefix_.substr(0, prefix_.size() - 1) : prefix_ + key);
  }
  std::string Describe() const override {
    return base_->Describe() + "/" + prefix_.substr(0, prefix_.size() - 1);
  }

 private:
  std::shared_ptr<ObjectStore> base_;
  std::string prefix_;
};

}  // namespace

std::shared_ptr<ObjectStore> NewPrefixedObjectStore(std::shared_ptr<ObjectStore> base, std::string folder) {
  assert(!folder.empty() && folder.front() != '/' && folder.back() != '/');
  return std::make_shared<PrefixedObjectStore>(std::move(base), std::move(folder));
}

}  // namespace basin
