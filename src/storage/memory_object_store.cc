// MemoryObjectStore: objects in a sorted map under one mutex; for tests and fuzzing.
#include <chrono>
#include <map>
#include <mutex>

#include "storage/object_key.h"
#include "storage/object_store.h"

namespace basin {

namespace {

class MemoryObjectStore final : public ObjectStore {
 public:
  Result<std::string> Get(const std::string& key) override {
    RETURN_IF_ERROR(ValidateObjectKey(key));
    std::lock_guard lock(mu_);
    auto it = objects_.find(key);
    if (it == objects_.end()) return NotFound(key);
    return it->second.data;
  }

  Result<std::string> GetRange(const std::string& key, uint64_t offset, uint64_t length) override {
    RETURN_IF_ERROR(ValidateObjectKey(key));
    std::lock_guard lock(mu_);
    auto it = objects_.find(key);
    if (it == objects_.end()) return NotFound(key);
    const std::string& data = it->second.data;
    if (offset > data.size() || length > data.size() - offset) {
      return Status::Corruption("object '" + key + "' in memory store has " + std::to_string(data.size()) +
                                " bytes; cannot read " + std::to_string(length) + " bytes at offset " +
                                std::to_string(offset));
    }
    return data.substr(static_cast<size_t>(offset), static_cast<size_t>(length));
  }

  Result<ObjectInfo> Head(const std::string& key) override {
    RETURN_IF_ERROR(ValidateObjectKey(key));
    std::lock_guard lock(mu_);
    auto it = objects_.find(key);
    if (it == objects_.end()) return NotFound(key);
    return ObjectInfo{key, it->second.data.size(), it->second.modification_time_ms};
  }

  Status Put(const std::string& key, const std::string& data) override {
    RETURN_IF_ERROR(ValidateObjectKey(key));
    std::lock_guard lock(mu_);
    objects_[key] = Object{data, NowMs()};
    return Status::OK();
  }

  Status PutIfAbsent(const std::string& key, const std::string& data) override {
    RETURN_IF_ERROR(ValidateObjectKey(key));
    std::lock_guard lock(mu_);
    if (!objects_.emplace(key, Object{data, NowMs()}).second) {
      return Status::AlreadyExists("object '" + key + "' already exists in memory store");
    }
    return Status::OK();
  }

  Status Delete(const std::string& key) override {
    RETURN_IF_ERROR(ValidateObjectKey(key));
    std::lock_guard lock(mu_);
    objects_.erase(key);
    return Status::OK();
  }

  Result<std::vector<ObjectInfo>> List(const std::string& prefix) override {
    RETURN_IF_ERROR(ValidateListPrefix(prefix));
    std::lock_guard lock(mu_);
    std::vector<ObjectInfo> out;
    for (auto it = objects_.lower_bound(prefix); it != objects_.end() && it->first.starts_with(prefix);
         ++it) {
      out.push_back(ObjectInfo{it->first, it->second.data.size(), it->second.modification_time_ms});
    }
    return out;
  }

  std::optional<std::string> LocalPath(const std::string&) const override { return std::nullopt; }

  std::string Describe() const override { return "memory"; }

 private:
  struct Object {
    std::string data;
    int64_t modification_time_ms = 0;
  };

  static Status NotFound(const std::string& key) {
    return Status::NotFound("object '" + key + "' not found in memory store");
  }

  static int64_t NowMs() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }

  std::mutex mu_;
  std::map<std::string, Object> objects_;  // guarded by mu_; std::string orders bytewise
};

}  // namespace

std::shared_ptr<ObjectStore> NewMemoryObjectStore() { return std::make_shared<MemoryObjectStore>(); }

}  // namespace basin
