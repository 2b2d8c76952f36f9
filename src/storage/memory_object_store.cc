// MemoryObjectStore: objects in a sorted map under one mutex; for tests and fuzzing.
//
// An object's bytes are immutable and shared: a reader keeps the bytes it opened while a
// writer replaces them, and a writer buffers its bytes until Close() swaps them in.
#include <map>
#include <mutex>

#include "basin/object_store.h"
#include "storage/object_key.h"
#include "storage/shared_bytes.h"

namespace basin {

namespace {

struct Object {
  std::shared_ptr<const std::string> data;
  int64_t modification_time_ms = 0;
  uint64_t write = 0;  // which write of the store made these bytes: the version tag
};

Status NotFound(const std::string& key) {
  return Status::NotFound("object '" + key + "' not found in memory store");
}

// The map, shared with open writers so that they may outlive the store object.
struct Objects {
  explicit Objects(std::shared_ptr<const Clock> clock_p) : clock(std::move(clock_p)) {}

  const std::shared_ptr<const Clock> clock;  // modification times
  std::mutex mu;
  std::map<std::string, Object> by_key;  // guarded by mu; std::string orders bytewise
  uint64_t writes = 0;                   // guarded by mu

  // REQUIRES: mu held.
  Object Make(std::shared_ptr<const std::string> data) {
    return Object{std::move(data), clock->NowMs(), ++writes};
  }
};

ObjectInfo InfoOf(const std::string& key, const Object& object) {
  return ObjectInfo{key, object.data->size(), object.modification_time_ms,
                    "w" + std::to_string(object.write)};
}

class MemoryWritable final : public WritableObject {
 public:
  MemoryWritable(std::shared_ptr<Objects> objects, std::string key)
      : objects_(std::move(objects)), key_(std::move(key)) {}
  ~MemoryWritable() override = default;  // not closed: the buffer just goes away

  Status Append(std::string_view data) override {
    if (done_) return Closed();
    buffer_.append(data);
    return Status::OK();
  }

  Status Close() override {
    if (done_) return Closed();
    done_ = true;
    auto data = std::make_shared<const std::string>(std::move(buffer_));
    std::lock_guard lock(objects_->mu);
    objects_->by_key[key_] = objects_->Make(std::move(data));
    return Status::OK();
  }

  void Abort() override {
    done_ = true;
    buffer_.clear();
  }

  uint64_t size_bytes() const override { return buffer_.size(); }

 private:
  Status Closed() const { return FinishedWriterError(key_, "memory store"); }

  const std::shared_ptr<Objects> objects_;
  const std::string key_;
  std::string buffer_;
  bool done_ = false;
};

class MemoryObjectStore final : public ObjectStore {
 public:
  explicit MemoryObjectStore(std::shared_ptr<const Clock> clock)
      : objects_(std::make_shared<Objects>(std::move(clock))) {}

  Result<std::unique_ptr<ReadableObject>> OpenRead(const std::string& key,
                                                   const ObjectReadOptions& /*options*/ = {}) override {
    RETURN_IF_ERROR(ValidateObjectKey(key));
    std::lock_guard lock(objects_->mu);
    auto it = objects_->by_key.find(key);
    if (it == objects_->by_key.end()) return NotFound(key);
    return NewSharedBytesReader(InfoOf(key, it->second), "memory store", it->second.data);
  }

  Result<std::unique_ptr<WritableObject>> OpenWrite(const std::string& key,
                                                    const ObjectWriteOptions& options = {}) override {
    RETURN_IF_ERROR(ValidateObjectKey(key));
    if (options.mode == WriteMode::kFreshKey) {
      std::lock_guard lock(objects_->mu);
      if (objects_->by_key.count(key) != 0) return AlreadyExists(key);
    }
    return std::unique_ptr<WritableObject>(std::make_unique<MemoryWritable>(objects_, key));
  }

  Result<ObjectInfo> Head(const std::string& key) override {
    RETURN_IF_ERROR(ValidateObjectKey(key));
    std::lock_guard lock(objects_->mu);
    auto it = objects_->by_key.find(key);
    if (it == objects_->by_key.end()) return NotFound(key);
    return InfoOf(key, it->second);
  }

  Status PutIfAbsent(const std::string& key, const std::string& data) override {
    RETURN_IF_ERROR(ValidateObjectKey(key));
    auto bytes = std::make_shared<const std::string>(data);
    std::lock_guard lock(objects_->mu);
    if (objects_->by_key.count(key) != 0) return AlreadyExists(key);
    objects_->by_key.emplace(key, objects_->Make(std::move(bytes)));
    return Status::OK();
  }

  Status Delete(const std::string& key) override {
    RETURN_IF_ERROR(ValidateObjectKey(key));
    std::lock_guard lock(objects_->mu);
    objects_->by_key.erase(key);
    return Status::OK();
  }

  Result<std::vector<ObjectInfo>> List(const std::string& prefix) override {
    RETURN_IF_ERROR(ValidateListPrefix(prefix));
    std::lock_guard lock(objects_->mu);
    std::vector<ObjectInfo> out;
    for (auto it = objects_->by_key.lower_bound(prefix);
         it != objects_->by_key.end() && it->first.starts_with(prefix); ++it) {
      out.push_back(InfoOf(it->first, it->second));
    }
    return out;
  }

  Result<bool> HasObjectsWithPrefix(const std::string& prefix) override {
    RETURN_IF_ERROR(ValidateListPrefix(prefix));
    std::lock_guard lock(objects_->mu);
    auto it = objects_->by_key.lower_bound(prefix);
    return it != objects_->by_key.end() && it->first.starts_with(prefix);
  }

  bool CheapRandomReads() const override { return true; }

  std::optional<std::string> LocalPath(const std::string&) const override { return std::nullopt; }

  std::string Describe() const override { return "memory"; }

 private:
  static Status AlreadyExists(const std::string& key) {
    return Status::AlreadyExists("object '" + key + "' already exists in memory store");
  }

  const std::shared_ptr<Objects> objects_;
};

}  // namespace

std::shared_ptr<ObjectStore> NewMemoryObjectStore(std::shared_ptr<const Clock> clock) {
  return std::make_shared<MemoryObjectStore>(std::move(clock));
}

}  // namespace basin
