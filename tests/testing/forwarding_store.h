// ForwardingStore: an ObjectStore that passes every call to another, for tests that count,
// record or change a few calls (they override those and call the base for the rest); and
// RecordingStore, one that records the keys read and counts the listings.
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "basin/object_store.h"

namespace basin::testing {

class ForwardingStore : public ObjectStore {
 public:
  explicit ForwardingStore(std::shared_ptr<ObjectStore> base) : base_(std::move(base)) {}

  Result<std::unique_ptr<ReadableObject>> OpenRead(const std::string& key,
                                                   const ObjectReadOptions& options = {}) override {
    return base_->OpenRead(key, options);
  }
  Result<std::unique_ptr<WritableObject>> OpenWrite(const std::string& key,
                                                    const ObjectWriteOptions& options = {}) override {
    return base_->OpenWrite(key, options);
  }
  Result<std::string> Get(const std::string& key) override { return base_->Get(key); }
  Result<std::string> GetRange(const std::string& key, uint64_t offset, uint64_t length) override {
    return base_->GetRange(key, offset, length);
  }
  Result<ObjectInfo> Head(const std::string& key) override { return base_->Head(key); }
  Status Put(const std::string& key, const std::string& data) override { return base_->Put(key, data); }
  Status PutIfAbsent(const std::string& key, const std::string& data) override {
    return base_->PutIfAbsent(key, data);
  }
  Status Delete(const std::string& key) override { return base_->Delete(key); }
  Result<std::vector<ObjectInfo>> List(const std::string& prefix) override { return base_->List(prefix); }
  Result<std::vector<ObjectInfo>> ListAfter(const std::string& prefix,
                                            const std::string& start_after) override {
    return base_->ListAfter(prefix, start_after);
  }
  Result<bool> HasObjectsWithPrefix(const std::string& prefix) override {
    return base_->HasObjectsWithPrefix(prefix);
  }
  bool CheapRandomReads() const override { return base_->CheapRandomReads(); }
  std::optional<std::string> LocalPath(const std::string& key) const override {
    return base_->LocalPath(key);
  }
  std::string Describe() const override { return "forwarding to " + base_->Describe(); }

 protected:
  ObjectStore& base() { return *base_; }

 private:
  std::shared_ptr<ObjectStore> base_;
};

// A store that records which keys were read and counts its listings (one thread at a time).
class RecordingStore final : public ForwardingStore {
 public:
  using ForwardingStore::ForwardingStore;

  Result<std::unique_ptr<ReadableObject>> OpenRead(const std::string& key,
                                                   const ObjectReadOptions& options = {}) override {
    reads.insert(key);
    return ForwardingStore::OpenRead(key, options);
  }
  Result<std::string> Get(const std::string& key) override {
    reads.insert(key);
    return ForwardingStore::Get(key);
  }
  Result<std::string> GetRange(const std::string& key, uint64_t offset, uint64_t length) override {
    reads.insert(key);
    return ForwardingStore::GetRange(key, offset, length);
  }
  Result<std::vector<ObjectInfo>> List(const std::string& prefix) override {
    listings++;
    return ForwardingStore::List(prefix);
  }
  Result<std::vector<ObjectInfo>> ListAfter(const std::string& prefix,
                                            const std::string& start_after) override {
    listings++;
    return ForwardingStore::ListAfter(prefix, start_after);
  }

  void Reset() {
    reads.clear();
    listings = 0;
  }

  std::set<std::string> reads;
  int listings = 0;
};

}  // namespace basin::testing
