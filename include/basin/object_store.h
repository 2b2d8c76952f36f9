// ObjectStore: the only way Basin touches table storage.
//
// Keys are '/'-separated paths relative to the store's root ("tbl/_delta_log/0.json").
// Backends: LocalObjectStore (a folder), MemoryObjectStore (tests), FaultyObjectStore
// (wraps another store and injects failures, latency and lost unsynced writes),
// PrefixedObjectStore (a folder of another store). A new backend implements OpenRead,
// OpenWrite, Head, PutIfAbsent, Delete, List, CheapRandomReads and Describe, and passes
// tests/storage/object_store_conformance_test.cc; Get, GetRange and Put come with them.
// DuckDB reads and writes stores through basin:// URLs (engine/store_registry.h).
//
// Thread safety: all methods may be called concurrently from many threads. Open objects
// keep what they need of their store: they may outlive it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "basin/clock.h"
#include "basin/status.h"

namespace basin {

struct ObjectInfo {
  std::string key;  // full key, relative to the store root
  uint64_t size_bytes = 0;
  int64_t modification_time_ms = 0;  // milliseconds since the Unix epoch
  // Names these bytes of the object: a replaced object gets another tag even when its size
  // and time are the same (an S3 ETag; device, inode, size and nanosecond time of a local
  // file; a write counter in memory). Empty when the store cannot tell. Caches (DuckDB's)
  // trust a tag; without one they distrust objects changed in the last seconds.
  std::string version_tag = {};
};

// What a reader may already know about an object (from a listing, or from the Delta log's
// `add` action), so that OpenRead need not ask the store (no stat, no HEAD request).
// REQUIRES: values given are the object's; a wrong size makes reads fail, not lie.
struct ObjectReadOptions {
  std::optional<uint64_t> size_bytes;
  std::optional<int64_t> modification_time_ms;
  std::optional<std::string> version_tag;
};

// One object opened for reading (ObjectStore::OpenRead). It reads the bytes the object had
// when it was opened: when the object is replaced or deleted meanwhile, reads return those
// bytes or fail with an error, never a mix of old and new.
//
// Thread safety: ReadAt may be called concurrently from many threads.
class ReadableObject {
 public:
  virtual ~ReadableObject() = default;

  virtual uint64_t size_bytes() const = 0;
  // nullopt when the caller gave the size but not the time, and the store did not look.
  virtual std::optional<int64_t> modification_time_ms() const = 0;
  // As ObjectInfo::version_tag; empty when unknown (the caller gave the size but no tag).
  virtual std::string version_tag() const = 0;
  // Reads bytes [offset, offset+length) into `out`. Corruption (naming the key) when they
  // go past the end; IOError when the store fails.
  virtual Status ReadAt(uint64_t offset, uint64_t length, char* out) = 0;
};

enum class WriteMode {
  // Replaces the object atomically when Close() succeeds, as Put does: until then readers
  // see the old object (or none). Costs a temporary object and a rename where the store
  // has no atomic upload.
  kAtomicReplace,
  // For a fresh, uniquely named key that no reader looks at until a commit references it
  // (data files, deletion vectors, checkpoint parts): written in place, so the partial
  // object may be listed before Close(). AlreadyExists (from OpenWrite) when an object
  // has the key.
  kFreshKey,
};

struct ObjectWriteOptions {
  WriteMode mode = WriteMode::kAtomicReplace;
};

// One object being written (ObjectStore::OpenWrite): appended to in order, then closed.
// Close() makes it durable and visible; Abort(), or destroying it before Close(), leaves
// nothing visible (a kFreshKey object is removed, an kAtomicReplace one never appears).
// After an error from Append or Close the object is aborted; later calls fail.
//
// Thread safety: used by one thread at a time.
class WritableObject {
 public:
  virtual ~WritableObject() = default;

  virtual Status Append(std::string_view data) = 0;
  // Durable (fsynced where the store has such a thing) and visible when it returns OK.
  virtual Status Close() = 0;
  // Best effort: what cannot be removed is garbage of the kind VACUUM removes.
  virtual void Abort() = 0;
  // Bytes appended so far.
  virtual uint64_t size_bytes() const = 0;
};

class ObjectStore {
 public:
  virtual ~ObjectStore() = default;

  // The object `key`, open for reads at any offset without reopening. NotFound when absent.
  virtual Result<std::unique_ptr<ReadableObject>> OpenRead(const std::string& key,
                                                           const ObjectReadOptions& options = {}) = 0;
  // A new object at `key`, visible once Close() succeeds (see WriteMode for how).
  virtual Result<std::unique_ptr<WritableObject>> OpenWrite(const std::string& key,
                                                            const ObjectWriteOptions& options = {}) = 0;

  // Whole object. NotFound when absent. (The default reads through OpenRead.)
  virtual Result<std::string> Get(const std::string& key);
  // Bytes [offset, offset+length). Corruption (naming the key) when the object is shorter.
  virtual Result<std::string> GetRange(const std::string& key, uint64_t offset, uint64_t length);
  // Size, modification time and version tag. NotFound when absent.
  virtual Result<ObjectInfo> Head(const std::string& key) = 0;

  // Creates or replaces the object atomically: readers see the old or the new bytes.
  // (The default writes through OpenWrite in kAtomicReplace mode.)
  virtual Status Put(const std::string& key, const std::string& data);
  // Creates the object only if no object has that key, atomically with respect to other
  // writers (of this and other processes): exactly one concurrent caller succeeds, the
  // others get AlreadyExists. Durable when it returns OK. This is how Delta commits land.
  virtual Status PutIfAbsent(const std::string& key, const std::string& data) = 0;
  // OK when absent too. Folders exist only as parts of keys: once the last object below
  // one is deleted, the folder is gone (the local store removes emptied folders up to its
  // root).
  virtual Status Delete(const std::string& key) = 0;

  // Objects whose keys start with `prefix`, sorted by key (byte order). When `prefix` ends
  // in '/', it names a folder; only objects (not folders) are listed, recursively.
  // An empty result (not NotFound) when nothing matches. A local store also lists the
  // temporary files of writes in progress (IsLocalTempFile), so that crashed writers'
  // leftovers can be found.
  virtual Result<std::vector<ObjectInfo>> List(const std::string& prefix) = 0;
  // As List(prefix), keeping only keys that sort after `start_after` (byte order). Stores
  // that can start a listing at a key (S3's start-after) override this to skip the rest;
  // the default filters a full listing.
  virtual Result<std::vector<ObjectInfo>> ListAfter(const std::string& prefix,
                                                    const std::string& start_after);
  // Whether List(prefix) would return anything. Stores override it to stop at the first
  // object (a folder's existence check must not list a whole table); the default lists.
  virtual Result<bool> HasObjectsWithPrefix(const std::string& prefix);

  // Whether reading many small ranges of an object costs about what reading them in one
  // request does (local disks, memory). False for stores where each request is a round
  // trip (S3): readers then prefetch larger ranges.
  virtual bool CheapRandomReads() const = 0;

  // A local filesystem path for `key`, when the backend keeps objects as local files that
  // DuckDB can open directly; nullopt otherwise. LocalPath("") is the root folder.
  // TRANSITIONAL: used only by engine/scan.cc and delta/checkpoint.cc, which are being
  // moved onto basin:// URLs (engine/store_registry.h); new code must not use it.
  virtual std::optional<std::string> LocalPath(const std::string& key) const = 0;

  // A short description for messages ("local:/data/wh", "memory").
  virtual std::string Describe() const = 0;
};

struct LocalStoreOptions {
  // Create the root folder (and its parents) now; otherwise on the first write, so that
  // opening a store to read leaves no trace.
  bool create_root = true;
};

// Opens a folder as a store. InvalidArgument if `root` is a file. With create_root false a
// missing folder is fine: reads find nothing, and the first write creates it.
Result<std::shared_ptr<ObjectStore>> OpenLocalObjectStore(const std::string& root,
                                                          const LocalStoreOptions& options = {});
// `folder` made absolute (against the working directory) and lexically normal, without a
// trailing '/': how a local store names its root.
Result<std::string> AbsoluteLocalPath(const std::string& folder);
// Objects in memory, stamped with `clock`'s time when written.
std::shared_ptr<ObjectStore> NewMemoryObjectStore(std::shared_ptr<const Clock> clock = SystemClock());

// The store rooted at a table's or warehouse's location, for code that is handed a location
// rather than a store (the CLI, absolute paths in the Delta log): a local path ("/data/t",
// "data/t", "file:/data/t", "file:///data/t") opens a local store that creates its folder on
// the first write only; "memory://<name>/<folder>" the folder of NamedMemoryStore(name).
// InvalidArgument for an empty or malformed location; NotImplemented for other schemes
// ("s3://...") until their backends exist.
Result<std::shared_ptr<ObjectStore>> OpenStoreAt(const std::string& location);

// The in-memory store this process keeps under `name` ("memory://<name>/..."), made empty
// on first use and kept until ForgetNamedMemoryStore(name): a warehouse that never touches
// a disk, for tests and trials.
std::shared_ptr<ObjectStore> NamedMemoryStore(const std::string& name);
void ForgetNamedMemoryStore(const std::string& name);
// Puts `store` under `name` in place of the store NamedMemoryStore would make (a test's
// fault-injecting store over one, say), until ForgetNamedMemoryStore(name).
void SetNamedMemoryStore(const std::string& name, std::shared_ptr<ObjectStore> store);
inline constexpr std::string_view kMemoryStoreScheme = "memory://";

// Whether `key` names a temporary file a local store writes an object to before moving it
// into place: a process killed in between leaves one behind, for log cleanup to remove.
bool IsLocalTempFile(std::string_view key);

}  // namespace basin
