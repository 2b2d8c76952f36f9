#include "storage/faulty_object_store.h"

#include <chrono>
#include <thread>

#include "storage/object_key.h"
#include "storage/shared_bytes.h"

namespace basin {

namespace {

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

// Each ReadAt is a call that may fail.
class FaultyReadable final : public ReadableObject {
 public:
  FaultyReadable(std::shared_ptr<FaultyObjectStore> store, std::string key,
                 std::unique_ptr<ReadableObject> base)
      : store_(std::move(store)), key_(std::move(key)), base_(std::move(base)) {}

  uint64_t size_bytes() const override { return base_->size_bytes(); }
  std::optional<int64_t> modification_time_ms() const override { return base_->modification_time_ms(); }
  std::string version_tag() const override { return base_->version_tag(); }
  Status ReadAt(uint64_t offset, uint64_t length, char* out) override {
    if (store_->BeginCall() != FaultyObjectStore::Fault::kNone) return store_->InjectedFault("ReadAt", key_);
    return base_->ReadAt(offset, length, out);
  }

 private:
  const std::shared_ptr<FaultyObjectStore> store_;
  const std::string key_;
  const std::unique_ptr<ReadableObject> base_;
};

// Appends go to the base store's writer, or (buffered) to memory until Close() buffers
// the object as an unsynced write. Close is a call that may fail.
class FaultyWritable final : public WritableObject {
 public:
  // `base` is null for a buffered write.
  FaultyWritable(std::shared_ptr<FaultyObjectStore> store, std::string key,
                 std::unique_ptr<WritableObject> base)
      : store_(std::move(store)), key_(std::move(key)), base_(std::move(base)) {}
  ~FaultyWritable() override {
    if (!done_) Abort();
  }

  Status Append(std::string_view data) override {
    if (done_) return Finished();
    size_ += data.size();
    if (!base_) {
      buffer_.append(data);
      return Status::OK();
    }
    Status st = base_->Append(data);
    if (!st.ok()) done_ = true;  // the base writer aborted itself
    return st;
  }

  Status Close() override {
    if (done_) return Finished();
    const FaultyObjectStore::Fault fault = store_->BeginCall();
    if (fault == FaultyObjectStore::Fault::kBefore) {
      Abort();
      return store_->InjectedFault("Close", key_);
    }
    done_ = true;
    if (!base_) {
      store_->BufferWrite(key_, std::make_shared<const std::string>(std::move(buffer_)));
      return store_->FinishWrite(fault, "Close", key_, Status::OK());
    }
    Status st = base_->Close();
    if (st.ok()) {
      // This write is newer than any buffered one for the key.
      std::lock_guard lock(store_->mu_);
      store_->pending_.erase(key_);
    }
    return store_->FinishWrite(fault, "Close", key_, st);
  }

  void Abort() override {
    if (done_) return;
    done_ = true;
    if (base_) base_->Abort();
    buffer_.clear();
  }

  uint64_t size_bytes() const override { return size_; }

 private:
  Status Finished() const { return FinishedWriterError(key_, store_->Describe()); }

  const std::shared_ptr<FaultyObjectStore> store_;
  const std::string key_;
  const std::unique_ptr<WritableObject> base_;
  std::string buffer_;
  uint64_t size_ = 0;
  bool done_ = false;
};

FaultyObjectStore::FaultyObjectStore(std::shared_ptr<ObjectStore> base, FaultOptions options)
    : base_(std::move(base)), options_(options), rng_(options.seed) {}

FaultyObjectStore::Fault FaultyObjectStore::BeginCall() {
  uint32_t latency_ms;
  Fault fault = Fault::kNone;
  {
    std::lock_guard lock(mu_);
    calls_++;
    calls_since_options_++;
    latency_ms = options_.latency_ms;
    bool fail = options_.fail_nth_call != 0 && calls_since_options_ == options_.fail_nth_call;
    if (options_.failure_probability > 0) {
      // 53 random bits as a double in [0, 1): the same on every standard library, unlike
      // std::uniform_real_distribution, so a seed reproduces a run anywhere.
      double draw = static_cast<double>(rng_() >> 11) * 0x1.0p-53;
      fail = fail || draw < options_.failure_probability;
    }
    if (fail) {
      injected_failures_++;
      fault = options_.fail_after_write ? Fault::kAfter : Fault::kBefore;
    }
  }
  if (latency_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(latency_ms));
  return fault;
}

Status FaultyObjectStore::InjectedFault(const char* operation, const std::string& key) const {
  return Status::IOError(std::string("injected fault: ") + operation + " '" + key + "' in " + Describe(),
                         /*retryable=*/true);
}

Status FaultyObjectStore::FinishWrite(Fault fault, const char* operation, const std::string& key,
                                      Status status) const {
  if (fault == Fault::kAfter) return InjectedFault(operation, key);
  return status;
}

std::optional<FaultyObjectStore::PendingWrite> FaultyObjectStore::FindPending(const std::string& key) const {
  std::lock_guard lock(mu_);
  auto it = pending_.find(key);
  if (it == pending_.end()) return std::nullopt;
  return it->second;
}

void FaultyObjectStore::BufferWrite(const std::string& key, std::shared_ptr<const std::string> data) {
  std::lock_guard lock(mu_);
  BufferWriteLocked(key, std::move(data));
}

void FaultyObjectStore::BufferWriteLocked(const std::string& key, std::shared_ptr<const std::string> data) {
  pending_[key] = PendingWrite{std::move(data), NowMs(), ++buffered_writes_};
}

ObjectInfo FaultyObjectStore::InfoOf(const std::string& key, const PendingWrite& pending) {
  return ObjectInfo{key, pending.data->size(), pending.modification_time_ms,
                    "u" + std::to_string(pending.write)};
}

Result<bool> FaultyObjectStore::ExistsLocked(const std::string& key) {
  // REQUIRES: mu_ held.
  if (auto it = pending_.find(key); it != pending_.end()) return it->second.data != nullptr;
  auto head = base_->Head(key);
  if (head.ok()) return true;
  if (head.status().IsNotFound()) return false;
  return head.status();
}

Result<std::unique_ptr<ReadableObject>> FaultyObjectStore::OpenRead(const std::string& key,
                                                                    const ObjectReadOptions& options) {
  RETURN_IF_ERROR(ValidateObjectKey(key));
  if (BeginCall() != Fault::kNone) return InjectedFault("OpenRead", key);
  std::unique_ptr<ReadableObject> base;
  if (auto pending = FindPending(key)) {
    if (!pending->data)
      return Status::NotFound("object '" + key + "' not found in " + Describe() + " (deleted, unsynced)");
    base = NewSharedBytesReader(InfoOf(key, *pending), Describe() + " (unsynced)", pending->data);
  } else {
    ASSIGN_OR_RETURN(base, base_->OpenRead(key, options));
  }
  return std::unique_ptr<ReadableObject>(
      std::make_unique<FaultyReadable>(shared_from_this(), key, std::move(base)));
}

Result<std::unique_ptr<WritableObject>> FaultyObjectStore::OpenWrite(const std::string& key,
                                                                     const ObjectWriteOptions& options) {
  RETURN_IF_ERROR(ValidateObjectKey(key));
  if (BeginCall() != Fault::kNone) return InjectedFault("OpenWrite", key);
  bool buffered = false;
  {
    std::lock_guard lock(mu_);
    buffered = options_.buffer_writes && options.mode == WriteMode::kAtomicReplace;
    if (options.mode == WriteMode::kFreshKey) {
      ASSIGN_OR_RETURN(bool exists, ExistsLocked(key));
      if (exists) return Status::AlreadyExists("object '" + key + "' already exists in " + Describe());
    }
  }
  std::unique_ptr<WritableObject> base;
  if (!buffered) {
    ASSIGN_OR_RETURN(base, base_->OpenWrite(key, options));
  }
  return std::unique_ptr<WritableObject>(
      std::make_unique<FaultyWritable>(shared_from_this(), key, std::move(base)));
}

Result<std::string> FaultyObjectStore::Get(const std::string& key) {
  RETURN_IF_ERROR(ValidateObjectKey(key));
  if (BeginCall() != Fault::kNone) return InjectedFault("Get", key);
  if (auto pending = FindPending(key)) {
    if (!pending->data)
      return Status::NotFound("object '" + key + "' not found in " + Describe() + " (deleted, unsynced)");
    return *pending->data;
  }
  return base_->Get(key);
}

Result<std::string> FaultyObjectStore::GetRange(const std::string& key, uint64_t offset, uint64_t length) {
  RETURN_IF_ERROR(ValidateObjectKey(key));
  if (BeginCall() != Fault::kNone) return InjectedFault("GetRange", key);
  if (auto pending = FindPending(key)) {
    if (!pending->data)
      return Status::NotFound("object '" + key + "' not found in " + Describe() + " (deleted, unsynced)");
    const std::string& data = *pending->data;
    if (!RangeFits(offset, length, data.size()))
      return ShortObjectError(key, Describe() + " (unsynced)", offset, length, data.size());
    return data.substr(static_cast<size_t>(offset), static_cast<size_t>(length));
  }
  return base_->GetRange(key, offset, length);
}

Result<ObjectInfo> FaultyObjectStore::Head(const std::string& key) {
  RETURN_IF_ERROR(ValidateObjectKey(key));
  if (BeginCall() != Fault::kNone) return InjectedFault("Head", key);
  if (auto pending = FindPending(key)) {
    if (!pending->data)
      return Status::NotFound("object '" + key + "' not found in " + Describe() + " (deleted, unsynced)");
    return InfoOf(key, *pending);
  }
  return base_->Head(key);
}

Status FaultyObjectStore::Put(const std::string& key, const std::string& data) {
  RETURN_IF_ERROR(ValidateObjectKey(key));
  Fault fault = BeginCall();
  if (fault == Fault::kBefore) return InjectedFault("Put", key);
  std::unique_lock lock(mu_);
  if (options_.buffer_writes) {
    BufferWriteLocked(key, std::make_shared<const std::string>(data));
    return FinishWrite(fault, "Put", key, Status::OK());
  }
  lock.unlock();
  Status st = base_->Put(key, data);
  if (st.ok()) {
    // This write is newer than any buffered one for the key.
    lock.lock();
    pending_.erase(key);
  }
  return FinishWrite(fault, "Put", key, st);
}

Status FaultyObjectStore::BufferedPutIfAbsent(const std::string& key,
                                              std::shared_ptr<const std::string> data) {
  // REQUIRES: mu_ held, so no other buffered write can slip in between check and insert.
  ASSIGN_OR_RETURN(bool exists, ExistsLocked(key));
  if (exists) return Status::AlreadyExists("object '" + key + "' already exists in " + Describe());
  BufferWriteLocked(key, std::move(data));
  return Status::OK();
}

Status FaultyObjectStore::PutIfAbsent(const std::string& key, const std::string& data) {
  RETURN_IF_ERROR(ValidateObjectKey(key));
  Fault fault = BeginCall();
  if (fault == Fault::kBefore) return InjectedFault("PutIfAbsent", key);
  std::unique_lock lock(mu_);
  if (options_.buffer_writes) {
    return FinishWrite(fault, "PutIfAbsent", key,
                       BufferedPutIfAbsent(key, std::make_shared<const std::string>(data)));
  }
  if (auto it = pending_.find(key); it != pending_.end()) {
    // An unsynced write decides, as it would for a reader of this store.
    Status st = it->second.data
                    ? Status::AlreadyExists("object '" + key + "' already exists in " + Describe())
                    : base_->Put(key, data);
    if (st.ok()) pending_.erase(key);
    return FinishWrite(fault, "PutIfAbsent", key, st);
  }
  lock.unlock();
  return FinishWrite(fault, "PutIfAbsent", key, base_->PutIfAbsent(key, data));
}

Status FaultyObjectStore::Delete(const std::string& key) {
  RETURN_IF_ERROR(ValidateObjectKey(key));
  Fault fault = BeginCall();
  if (fault == Fault::kBefore) return InjectedFault("Delete", key);
  std::unique_lock lock(mu_);
  if (options_.buffer_writes) {
    BufferWriteLocked(key, nullptr);
    return FinishWrite(fault, "Delete", key, Status::OK());
  }
  lock.unlock();
  Status st = base_->Delete(key);
  if (st.ok()) {
    lock.lock();
    pending_.erase(key);
  }
  return FinishWrite(fault, "Delete", key, st);
}

Result<std::vector<ObjectInfo>> FaultyObjectStore::List(const std::string& prefix) {
  RETURN_IF_ERROR(ValidateListPrefix(prefix));
  if (BeginCall() != Fault::kNone) return InjectedFault("List", prefix);
  ASSIGN_OR_RETURN(std::vector<ObjectInfo> listed, base_->List(prefix));
  std::lock_guard lock(mu_);
  if (pending_.empty()) return listed;
  std::map<std::string, ObjectInfo> merged;
  for (auto& info : listed) merged.emplace(info.key, std::move(info));
  for (auto it = pending_.lower_bound(prefix); it != pending_.end() && it->first.starts_with(prefix); ++it) {
    if (it->second.data) {
      merged[it->first] = InfoOf(it->first, it->second);
    } else {
      merged.erase(it->first);
    }
  }
  std::vector<ObjectInfo> out;
  out.reserve(merged.size());
  for (auto& [key, info] : merged) out.push_back(std::move(info));
  return out;
}

bool FaultyObjectStore::CheapRandomReads() const { return base_->CheapRandomReads(); }

std::optional<std::string> FaultyObjectStore::LocalPath(const std::string& key) const {
  {
    std::lock_guard lock(mu_);
    if (pending_.count(key) != 0) return std::nullopt;
  }
  return base_->LocalPath(key);
}

std::string FaultyObjectStore::Describe() const { return "faulty(" + base_->Describe() + ")"; }

void FaultyObjectStore::SetOptions(FaultOptions options) {
  std::lock_guard lock(mu_);
  options_ = options;
  rng_.seed(options.seed);
  calls_since_options_ = 0;
}

FaultOptions FaultyObjectStore::options() const {
  std::lock_guard lock(mu_);
  return options_;
}

uint64_t FaultyObjectStore::calls() const {
  std::lock_guard lock(mu_);
  return calls_;
}

uint64_t FaultyObjectStore::injected_failures() const {
  std::lock_guard lock(mu_);
  return injected_failures_;
}

Status FaultyObjectStore::Sync() {
  std::lock_guard lock(mu_);
  while (!pending_.empty()) {
    auto it = pending_.begin();
    Status st = it->second.data ? base_->Put(it->first, *it->second.data) : base_->Delete(it->first);
    if (!st.ok()) return st.WithContext("sync of unsynced writes to " + base_->Describe());
    pending_.erase(it);
  }
  return Status::OK();
}

void FaultyObjectStore::DropUnsynced() {
  std::lock_guard lock(mu_);
  pending_.clear();
}

size_t FaultyObjectStore::unsynced_writes() const {
  std::lock_guard lock(mu_);
  return pending_.size();
}

std::shared_ptr<FaultyObjectStore> NewFaultyObjectStore(std::shared_ptr<ObjectStore> base,
                                                        FaultOptions options) {
  return std::make_shared<FaultyObjectStore>(std::move(base), options);
}

}  // namespace basin
