// SnapshotCache: the snapshots of recently read tables, shared by every connection and
// statement of one database, so that a query on an unchanged table costs one listing of
// its log and no replay.
//
// Commits are never rewritten, so a table folder and a version identify a snapshot; the
// size and modification time of that version's commit file also guard against a table
// deleted and written again in the same folder. Snapshots are immutable and shared: a
// statement keeps the one it was given however many commits land meanwhile.
//
// Thread safety: all methods may be called from any thread.
#pragma once

#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <string>

#include "common/status.h"
#include "delta/snapshot.h"
#include "engine/duckdb.h"
#include "storage/object_store.h"

namespace basin::engine {

class SnapshotCache {
 public:
  // `db` reads Parquet checkpoints (through a connection of its own).
  explicit SnapshotCache(std::shared_ptr<Database> db, size_t capacity = 32);

  // The snapshot of the table in `store` that `options` selects (the latest when empty).
  // `location` identifies the table (its folder or URL) and names it in errors. The latest
  // version costs one listing of the log when it is cached; time travel to a version is
  // served from the cache when that version is; time travel by timestamp replays the log.
  Result<std::shared_ptr<const delta::Snapshot>> Get(const std::shared_ptr<ObjectStore>& store,
                                                     const std::string& location,
                                                     const delta::SnapshotOptions& options = {});

  // Forgets every snapshot of `location` (after a DROP TABLE).
  void Forget(const std::string& location);

 private:
  struct Entry {
    std::string location;
    ObjectInfo commit;  // the snapshot's commit file as listed when it was cached
    std::shared_ptr<const delta::Snapshot> snapshot;
  };

  Result<std::shared_ptr<const delta::Snapshot>> Load(const std::shared_ptr<ObjectStore>& store,
                                                      const std::string& location,
                                                      const delta::SnapshotOptions& options);
  std::shared_ptr<const delta::Snapshot> Find(const std::string& location, int64_t version,
                                              const ObjectInfo* commit);
  void Insert(Entry entry);

  std::shared_ptr<Database> db_;
  size_t capacity_;
  std::mutex mutex_;
  std::list<Entry> entries_;  // most recently used first; guarded by mutex_
  std::unique_ptr<Connection> conn_;  // checkpoint reads; guarded by load_mutex_
  std::mutex load_mutex_;
};

}  // namespace basin::engine
