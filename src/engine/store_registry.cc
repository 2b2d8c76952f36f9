#include "engine/store_registry.h"

#include <cassert>
#include <charconv>
#include <mutex>
#include <random>
#include <shared_mutex>
#include <unordered_map>
#include <utility>

namespace basin::engine {

namespace {

struct Registration {
  std::shared_ptr<ObjectStore> store;
  uint64_t handles = 0;
};

// The process's registered stores, by number and by address (for re-registration).
class Registry {
 public:
  static Registry& Get() {
    static Registry* registry = new Registry();  // never destroyed: handles may outlive main()
    return *registry;
  }

  uint64_t Add(const std::shared_ptr<ObjectStore>& store) {
    std::unique_lock lock(mu_);
    auto known = ids_.find(store.get());
    if (known != ids_.end()) {
      Registration& registration = by_id_[known->second];
      registration.handles++;
      // Prefer a pointer that owns the store over a non-owning one registered earlier.
      if (registration.store.use_count() == 0 && store.use_count() > 0) registration.store = store;
      return known->second;
    }
    uint64_t id = 0;
    while (id == 0 || by_id_.count(id) > 0) id = RandomId();
    by_id_[id] = Registration{store, 1};
    ids_[store.get()] = id;
    return id;
  }

  void Remove(uint64_t id) {
    std::unique_lock lock(mu_);
    auto it = by_id_.find(id);
    assert(it != by_id_.end());
    if (it == by_id_.end() || --it->second.handles > 0) return;
    ids_.erase(it->second.store.get());
    by_id_.erase(it);
  }

  std::shared_ptr<ObjectStore> Find(uint64_t id) const {
    std::shared_lock lock(mu_);
    auto it = by_id_.find(id);
    return it == by_id_.end() ? nullptr : it->second.store;
  }

 private:
  // Random, not counted: a session whose user may read only some tables must not reach
  // another session's stores by guessing their URLs (docs/governance.md).
  static uint64_t RandomId() {
    std::random_device device;
    return (uint64_t{device()} << 32 | device()) >> 1;  // positive as an int64 too
  }

  mutable std::shared_mutex mu_;
  std::unordered_map<uint64_t, Registration> by_id_;      // guarded by mu_
  std::unordered_map<const ObjectStore*, uint64_t> ids_;  // guarded by mu_
};

}  // namespace

StoreHandle::~StoreHandle() { Release(); }

StoreHandle::StoreHandle(StoreHandle&& other) noexcept
    : id_(std::exchange(other.id_, 0)), store_(std::move(other.store_)) {}

StoreHandle& StoreHandle::operator=(StoreHandle&& other) noexcept {
  if (this != &other) {
    Release();
    id_ = std::exchange(other.id_, 0);
    store_ = std::move(other.store_);
  }
  return *this;
}

void StoreHandle::Release() {
  if (id_ != 0) Registry::Get().Remove(id_);
  id_ = 0;
  store_.reset();
}

StoreHandle RegisterStore(std::shared_ptr<ObjectStore> store) {
  assert(store != nullptr);
  const uint64_t id = Registry::Get().Add(store);
  return StoreHandle(id, std::move(store));
}

namespace {

std::string JoinUrl(std::string url, std::string_view key) {
  if (!key.empty()) url.append("/").append(key);
  return url;
}

}  // namespace

std::string StoreUrl(const StoreHandle& handle, std::string_view key) {
  assert(!handle.empty());
  return JoinUrl(std::string(kStoreUrlScheme) + std::to_string(handle.id()), key);
}

std::string StoreUrlTarget::UrlOf(std::string_view object_key) const { return JoinUrl(root, object_key); }

bool IsStoreUrl(std::string_view url) {
  return url.starts_with(kStoreUrlScheme) || url.starts_with(kMemoryStoreScheme);
}

std::optional<std::string> StoreKeyOf(const StoreHandle& handle, std::string_view url) {
  if (handle.empty()) return std::nullopt;
  const std::string root = StoreUrl(handle, "");
  if (url == root) return "";
  if (!url.starts_with(root) || url.size() <= root.size() || url[root.size()] != '/') return std::nullopt;
  return std::string(url.substr(root.size() + 1));
}

Result<StoreUrlTarget> ResolveStoreUrl(std::string_view url) {
  auto malformed = [&] {
    return Status::InvalidArgument("'" + std::string(url) +
                                   "' is not a store URL (basin://<number>/<key> or memory://<name>/<key>)");
  };
  const bool memory = url.starts_with(kMemoryStoreScheme);
  if (!memory && !url.starts_with(kStoreUrlScheme)) return malformed();
  std::string_view rest = url.substr(memory ? kMemoryStoreScheme.size() : kStoreUrlScheme.size());
  const size_t slash = rest.find('/');
  std::string_view name = rest.substr(0, slash);
  if (name.empty()) return malformed();
  StoreUrlTarget target;
  target.root = std::string(url.substr(0, url.size() - rest.size())) + std::string(name);
  if (slash != std::string_view::npos) target.key = std::string(rest.substr(slash + 1));
  while (!target.key.empty() && target.key.back() == '/') target.key.pop_back();
  if (memory) {
    target.store = NamedMemoryStore(std::string(name));
    return target;
  }
  uint64_t id = 0;
  auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), id);
  if (ec != std::errc() || end != name.data() + name.size() || id == 0) return malformed();
  target.store = Registry::Get().Find(id);
  if (target.store == nullptr) {
    return Status::NotFound("no store is registered as " + std::string(kStoreUrlScheme) + std::string(name) +
                            " (its handle was released)");
  }
  return target;
}

}  // namespace basin::engine
