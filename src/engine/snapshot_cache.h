// SnapshotCache: the snapshots of recently read tables, shared by every connection and
// statement of one database, so that a query on an unchanged table costs a look-up of its
// next commit and no replay.
//
// Commits are never rewritten, so a table folder and a version identify a snapshot; the
// size and modification time of that version's commit file also guard against a table
// deleted and written again in the same folder. Snapshots are immutable and shared: a
// statement keeps the one it was given however many commits land meanwhile. New commits
// are applied to the cached snapshot (delta::UpdateSnapshot): only they are read.
//
// Latest snapshots keep their tombstones (the removes a checkpoint must still carry, at
// most the retention's worth): a commit on one writes its checkpoint from it, brought
// forward by its own commit, without replaying the log from the last checkpoint. Up to
// `tombstone_limit` of them: a table with more (a stream compacting its files for a week)
// is brought forward without any, and its checkpoints load their version instead, so that
// the cache's memory follows the tables' files, not their history.
//
// Thread safety: all methods may be called from any thread.
#pragma once

#include <cstddef>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>

#include "basin/object_store.h"
#include "basin/status.h"
#include "delta/snapshot.h"
#include "engine/duckdb.h"
#include "engine/parquet_log_io.h"

namespace basin::engine {

class SnapshotCache {
 public:
  // Parquet checkpoints are read, and written by commits, through a DuckDBParquetLogIO.
  static constexpr size_t kDefaultTombstoneLimit = 10'000;
  // Versions of one table kept at most, the least recently read going first: each reader of
  // a table that is written all the time brings the latest forward, and every superseded
  // version would otherwise stay until the cache's capacity pushed it out (a server's
  // cache of 256 held 256 versions of a streamed table, each with what its file list
  // shares with none of the others).
  static constexpr size_t kVersionsPerTable = 8;

  explicit SnapshotCache(size_t capacity = 32, size_t tombstone_limit = kDefaultTombstoneLimit);

  // The snapshot of the table in `store` that `options` selects (the latest when empty).
  // `location` identifies the table (its folder or URL) and names it in errors. The latest
  // version costs a look-up of the next commit when it is cached (and reads the new
  // commits when there are any); time travel to a version is served from the cache when
  // that version is; time travel by timestamp replays the log.
  Result<std::shared_ptr<const delta::Snapshot>> Get(const std::shared_ptr<ObjectStore>& store,
                                                     const std::string& location,
                                                     const delta::SnapshotOptions& options = {});

  // The store of `location`: a cached snapshot's, or `open(location)` when none of its
  // snapshots is cached. A cached table needs no check that its log exists (`open` checks
  // that): Get validates the cached commit against the log anyway, so per-statement cost
  // does not grow with the table's folder.
  using StoreOpener = std::function<Result<std::shared_ptr<ObjectStore>>(const std::string& location)>;
  Result<std::shared_ptr<ObjectStore>> StoreOf(const std::string& location, const StoreOpener& open);

  // Forgets every snapshot of `location` (after a DROP TABLE).
  void Forget(const std::string& location);

  // How snapshots read checkpoints; commits use it to write theirs.
  delta::ParquetLogIO& log_io() { return log_io_; }

 private:
  struct Entry {
    std::string location;
    std::shared_ptr<const delta::Snapshot> snapshot;
  };

  std::shared_ptr<const delta::Snapshot> Find(const std::string& location, std::optional<int64_t> version);
  void Insert(const std::string& location, std::shared_ptr<const delta::Snapshot> snapshot);

  DuckDBParquetLogIO log_io_;
  size_t capacity_;
  size_t tombstone_limit_;
  std::mutex mutex_;
  std::list<Entry> entries_;  // most recently used first; guarded by mutex_
};

}  // namespace basin::engine
