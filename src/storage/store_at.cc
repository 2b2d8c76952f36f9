#include <map>
#include <mutex>
#include <utility>

#include "basin/object_store.h"
#include "storage/prefixed_object_store.h"

namespace basin {

namespace {

struct NamedMemoryStores {
  std::mutex mu;
  std::map<std::string, std::shared_ptr<ObjectStore>> stores;

  static NamedMemoryStores& Get() {
    static NamedMemoryStores* stores = new NamedMemoryStores();  // used until the process ends
    return *stores;
  }
};

// "memory://<name>/<folder>": the folder (without leading or trailing '/') of the named store.
Result<std::shared_ptr<ObjectStore>> OpenMemoryStoreAt(const std::string& location) {
  std::string_view rest = std::string_view(location).substr(kMemoryStoreScheme.size());
  const size_t slash = rest.find('/');
  const std::string name(rest.substr(0, slash));
  if (name.empty())
    return Status::InvalidArgument("'" + location + "' names no memory store (memory://<name>/...)");
  std::string folder(slash == std::string_view::npos ? "" : rest.substr(slash + 1));
  while (!folder.empty() && folder.back() == '/') folder.pop_back();
  std::shared_ptr<ObjectStore> store = NamedMemoryStore(name);
  if (folder.empty()) return store;
  if (folder.starts_with('/')) return Status::InvalidArgument("'" + location + "' has an empty folder name");
  return NewPrefixedObjectStore(std::move(store), std::move(folder));
}

}  // namespace

std::shared_ptr<ObjectStore> NamedMemoryStore(const std::string& name) {
  NamedMemoryStores& named = NamedMemoryStores::Get();
  std::lock_guard<std::mutex> lock(named.mu);
  std::shared_ptr<ObjectStore>& store = named.stores[name];
  if (store == nullptr) store = NewMemoryObjectStore();
  return store;
}

void SetNamedMemoryStore(const std::string& name, std::shared_ptr<ObjectStore> store) {
  NamedMemoryStores& named = NamedMemoryStores::Get();
  std::lock_guard<std::mutex> lock(named.mu);
  named.stores[name] = std::move(store);
}

void ForgetNamedMemoryStore(const std::string& name) {
  NamedMemoryStores& named = NamedMemoryStores::Get();
  std::lock_guard<std::mutex> lock(named.mu);
  named.stores.erase(name);
}

Result<std::shared_ptr<ObjectStore>> OpenStoreAt(const std::string& location) {
  if (location.empty()) return Status::InvalidArgument("a store location is empty");
  std::string path = location;
  if (path.starts_with("file:")) {
    path = path.substr(5);
    // file:///x and file://localhost/x name /x; file:/x does too.
    if (path.starts_with("//localhost/")) {
      path = path.substr(11);
    } else if (path.starts_with("///")) {
      path = path.substr(2);
    }
    if (!path.starts_with('/') || path.starts_with("//")) {
      return Status::InvalidArgument("'" + location + "' is not a local file URI");
    }
  } else if (path.starts_with(kMemoryStoreScheme)) {
    return OpenMemoryStoreAt(path);
  } else if (size_t scheme = path.find("://"); scheme != std::string::npos) {
    return Status::NotImplemented("no object store for '" + location + "': only local folders are supported");
  }
  LocalStoreOptions options;
  options.create_root = false;
  return OpenLocalObjectStore(path, options);
}

}  // namespace basin
