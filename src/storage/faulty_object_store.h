// FaultyObjectStore: wraps a store and injects failures for crash and retry tests.
// Failures are reproducible from a seed.
//
// Thread safety: as ObjectStore; the fault settings may be changed concurrently.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>

#include "basin/object_store.h"

namespace basin {

struct FaultOptions {
  // Fail the Nth call counted from now (1-based) with a retryable IOError; 0 = never.
  uint64_t fail_nth_call = 0;
  // Fail each call with this probability (0..1), drawn from `seed`.
  double failure_probability = 0.0;
  uint64_t seed = 1;
  // Sleep this long before each call.
  uint32_t latency_ms = 0;
  // Writes (Put/PutIfAbsent/Delete, written objects) are kept in an unsynced buffer until Sync();
  // DropUnsynced() forgets them, as a machine crash would.
  bool buffer_writes = false;
  // An injected failure of a write lands after the write took effect, as when the storage
  // applied a request but its reply was lost. Reads always fail before doing anything.
  bool fail_after_write = false;
};

// Every ObjectStore call (not LocalPath/Describe/CheapRandomReads) counts as one call for
// fail_nth_call and draws once from the seeded generator when failure_probability > 0; so
// does each ReadAt of an object opened for reading (a ranged GET) and the Close of one
// opened for writing (completing an upload). Appends do not: they model buffered bytes,
// not requests. Injected failures are IOError with retryable() set and "injected fault"
// in the message. A failed Close leaves nothing visible, unless fail_after_write.
//
// With buffer_writes, reads see this store's unsynced writes (like a page cache), the base
// store does not; PutIfAbsent is atomic against both. An object opened in kAtomicReplace
// mode while buffer_writes is set is buffered at Close; a kFreshKey object is not: its
// Close is durable by contract (the local store fsyncs it), so it goes to the base store,
// and is lost with a crash only as garbage no commit references.
class FaultyObjectStore final : public ObjectStore, public std::enable_shared_from_this<FaultyObjectStore> {
 public:
  FaultyObjectStore(std::shared_ptr<ObjectStore> base, FaultOptions options);

  Result<std::unique_ptr<ReadableObject>> OpenRead(const std::string& key,
                                                   const ObjectReadOptions& options = {}) override;
  Result<std::unique_ptr<WritableObject>> OpenWrite(const std::string& key,
                                                    const ObjectWriteOptions& options = {}) override;
  Result<std::string> Get(const std::string& key) override;
  Result<std::string> GetRange(const std::string& key, uint64_t offset, uint64_t length) override;
  Result<ObjectInfo> Head(const std::string& key) override;
  Status Put(const std::string& key, const std::string& data) override;
  Status PutIfAbsent(const std::string& key, const std::string& data) override;
  Status Delete(const std::string& key) override;
  Result<std::vector<ObjectInfo>> List(const std::string& prefix) override;
  bool CheapRandomReads() const override;
  // nullopt for a key with an unsynced write, whose file is not (yet) what readers see.
  std::optional<std::string> LocalPath(const std::string& key) const override;
  std::string Describe() const override;

  // Replaces the settings: the Nth-call count restarts and the generator is reseeded.
  // Unsynced writes stay buffered until Sync() or DropUnsynced().
  void SetOptions(FaultOptions options);
  FaultOptions options() const;

  uint64_t calls() const;              // ObjectStore calls so far, failed ones included
  uint64_t injected_failures() const;  // of which failed by injection

  // Applies the unsynced writes to the base store, in key order. On a base failure the
  // writes not yet applied stay buffered.
  Status Sync();
  // Forgets the unsynced writes, as a crash before they reached the disk would.
  void DropUnsynced();
  size_t unsynced_writes() const;

 private:
  friend class FaultyReadable;
  friend class FaultyWritable;

  // A buffered write: the new bytes, or null for a delete.
  struct PendingWrite {
    std::shared_ptr<const std::string> data;
    int64_t modification_time_ms = 0;
    uint64_t write = 0;  // which buffered write: the version tag
  };
  enum class Fault { kNone, kBefore, kAfter };

  // Counts the call, sleeps for the latency, and decides whether (and when) it fails.
  Fault BeginCall();
  Status InjectedFault(const char* operation, const std::string& key) const;
  Status FinishWrite(Fault fault, const char* operation, const std::string& key, Status status) const;
  // The buffered state of `key`: nullopt when it has no unsynced write.
  std::optional<PendingWrite> FindPending(const std::string& key) const;
  Status BufferedPutIfAbsent(const std::string& key, std::shared_ptr<const std::string> data);
  // Buffers a write of `data` (null: a delete) to `key`.
  void BufferWrite(const std::string& key, std::shared_ptr<const std::string> data);
  // REQUIRES: mu_ held.
  void BufferWriteLocked(const std::string& key, std::shared_ptr<const std::string> data);
  static ObjectInfo InfoOf(const std::string& key, const PendingWrite& pending);
  // Whether `key` names an object as this store's readers see it. REQUIRES: mu_ held.
  Result<bool> ExistsLocked(const std::string& key);

  const std::shared_ptr<ObjectStore> base_;
  mutable std::mutex mu_;
  FaultOptions options_;                         // guarded by mu_
  std::mt19937_64 rng_;                          // guarded by mu_
  uint64_t calls_ = 0;                           // guarded by mu_
  uint64_t calls_since_options_ = 0;             // guarded by mu_
  uint64_t injected_failures_ = 0;               // guarded by mu_
  std::map<std::string, PendingWrite> pending_;  // guarded by mu_
  uint64_t buffered_writes_ = 0;                 // guarded by mu_
};

std::shared_ptr<FaultyObjectStore> NewFaultyObjectStore(std::shared_ptr<ObjectStore> base,
                                                        FaultOptions options);

}  // namespace basin
