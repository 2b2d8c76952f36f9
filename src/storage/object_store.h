// ObjectStore: the only way Basin touches table storage.
//
// Keys are '/'-separated paths relative to the store's root ("tbl/_delta_log/0.json").
// Backends: LocalObjectStore (a folder), MemoryObjectStore (tests), FaultyObjectStore
// (wraps another store and injects failures, latency and lost unsynced writes).
// Every backend passes tests/storage/object_store_conformance_test.cc.
//
// Thread safety: all methods may be called concurrently from many threads.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace basin {

struct ObjectInfo {
  std::string key;  // full key, relative to the store root
  uint64_t size_bytes = 0;
  int64_t modification_time_ms = 0;  // milliseconds since the Unix epoch
};

class ObjectStore {
 public:
  virtual ~ObjectStore() = default;

  // Whole object. NotFound when absent.
  virtual Result<std::string> Get(const std::string& key) = 0;
  // Bytes [offset, offset+length). Corruption (naming the key) when the object is shorter.
  virtual Result<std::string> GetRange(const std::string& key, uint64_t offset, uint64_t length) = 0;
  // Size and modification time. NotFound when absent.
  virtual Result<ObjectInfo> Head(const std::string& key) = 0;

  // Creates or replaces the object atomically: readers see the old or the new bytes.
  virtual Status Put(const std::string& key, const std::string& data) = 0;
  // Creates the object only if no object has that key, atomically with respect to other
  // writers (of this and other processes): exactly one concurrent caller succeeds, the
  // others get AlreadyExists. Durable when it returns OK. This is how Delta commits land.
  virtual Status PutIfAbsent(const std::string& key, const std::string& data) = 0;
  // OK when absent too.
  virtual Status Delete(const std::string& key) = 0;

  // Objects whose keys start with `prefix`, sorted by key (byte order). When `prefix` ends
  // in '/', it names a folder; only objects (not folders) are listed, recursively.
  // An empty result (not NotFound) when nothing matches.
  virtual Result<std::vector<ObjectInfo>> List(const std::string& prefix) = 0;
  // As List(prefix), keeping only keys that sort after `start_after` (byte order). Stores
  // that can start a listing at a key (S3's start-after) override this to skip the rest;
  // the default filters a full listing.
  virtual Result<std::vector<ObjectInfo>> ListAfter(const std::string& prefix,
                                                    const std::string& start_after);

  // A local filesystem path for `key`, when the backend keeps objects as local files that
  // DuckDB can open directly; nullopt otherwise. LocalPath("") is the root folder.
  virtual std::optional<std::string> LocalPath(const std::string& key) const = 0;

  // A short description for messages ("local:/data/wh", "memory").
  virtual std::string Describe() const = 0;
};

// Opens a folder (created if missing) as a store. InvalidArgument if `root` is a file.
Result<std::shared_ptr<ObjectStore>> OpenLocalObjectStore(const std::string& root);
std::shared_ptr<ObjectStore> NewMemoryObjectStore();

// Whether `key` names a temporary file a local store writes an object to before moving it
// into place: a process killed in between leaves one behind, for log cleanup to remove.
bool IsLocalTempFile(std::string_view key);

// Makes files written in place at store.LocalPath(key) (by DuckDB, not through Put) durable:
// fsyncs each file and every folder from its own up to the store's root, since a write may
// have created partition folders. OK for stores without local paths.
Status SyncLocalFiles(const ObjectStore& store, const std::vector<std::string>& keys);

}  // namespace basin
