// basin:// URLs: how DuckDB reads and writes Basin's object stores.
//
// A store registered here gets a process-wide random number, and `basin://<number>/<key>` names
// its object `key` in every DuckDB database Basin opens (engine::Database registers the
// file system behind it, src/engine/duckdb/store_file_system.cc). So read_parquet,
// read_json, read_csv, COPY ... TO, globs and PARTITION_BY work on any ObjectStore (local
// folders, memory in tests, S3 later) without local paths. `basin://<number>` alone is
// the store's root folder.
//
// Registering the same store object again returns a handle with the same number; the
// store is unregistered when its last handle goes away. Numbers are random 63-bit values,
// so they are not reused in practice (DuckDB's caches keyed by path never confuse two
// stores), and a session cannot guess the URLs of another session's stores.
//
// Thread safety: all functions may be called concurrently; a StoreHandle is used by one
// owner at a time (move it, do not share it).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "basin/object_store.h"
#include "basin/status.h"

namespace basin::engine {

inline constexpr std::string_view kStoreUrlScheme = "basin://";

// Keeps a store registered while it lives (RAII). An empty handle registers nothing.
class StoreHandle {
 public:
  StoreHandle() = default;
  ~StoreHandle();
  StoreHandle(StoreHandle&& other) noexcept;
  StoreHandle& operator=(StoreHandle&& other) noexcept;
  StoreHandle(const StoreHandle&) = delete;
  StoreHandle& operator=(const StoreHandle&) = delete;

  bool empty() const { return id_ == 0; }
  // The number in the store's URLs; 0 for an empty handle.
  uint64_t id() const { return id_; }
  const std::shared_ptr<ObjectStore>& store() const { return store_; }

 private:
  friend StoreHandle RegisterStore(std::shared_ptr<ObjectStore> store);
  StoreHandle(uint64_t id, std::shared_ptr<ObjectStore> store) : id_(id), store_(std::move(store)) {}
  void Release();

  uint64_t id_ = 0;
  std::shared_ptr<ObjectStore> store_;
};

// Registers `store` (or counts one more handle of it). REQUIRES: store is non-null.
// The registry shares ownership; a non-owning pointer (shared_ptr's aliasing constructor
// over no owner) is allowed when the store outlives the handle and every DuckDB file opened
// through it.
StoreHandle RegisterStore(std::shared_ptr<ObjectStore> store);

// basin://<id>/<key>, or basin://<id> for the root (key ""). REQUIRES: !handle.empty().
std::string StoreUrl(const StoreHandle& handle, std::string_view key);

// The key `url` names in `handle`'s store; nullopt when it is not a URL of that store.
std::optional<std::string> StoreKeyOf(const StoreHandle& handle, std::string_view url);

// What a basin:// (or memory://) URL names: the store (shared, so that files opened through
// it keep it alive), the URL of its root ("basin://<number>", "memory://<name>"), and the
// key (without a trailing '/'; "" for the root).
struct StoreUrlTarget {
  std::shared_ptr<ObjectStore> store;
  std::string root;
  std::string key;
  // The URL of `object_key` in the same store.
  std::string UrlOf(std::string_view object_key) const;
};

// Whether DuckDB reads `url` through Basin's stores: basin://<number>/<key>, or
// memory://<name>/<key> (storage's NamedMemoryStore).
bool IsStoreUrl(std::string_view url);
// InvalidArgument when `url` is neither; NotFound when no store is registered under that
// number (its handle went away).
Result<StoreUrlTarget> ResolveStoreUrl(std::string_view url);

}  // namespace basin::engine
