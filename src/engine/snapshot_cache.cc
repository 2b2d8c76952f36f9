#include "engine/snapshot_cache.h"

#include "delta/log_segment.h"

namespace basin::engine {

namespace {

bool SameObject(const ObjectInfo& a, const ObjectInfo& b) {
  return a.key == b.key && a.size_bytes == b.size_bytes && a.modification_time_ms == b.modification_time_ms;
}

}  // namespace

SnapshotCache::SnapshotCache(size_t capacity, size_t tombstone_limit)
    : capacity_(capacity), tombstone_limit_(tombstone_limit) {}

std::shared_ptr<const delta::Snapshot> SnapshotCache::Find(const std::string& location,
                                                           std::optional<int64_t> version) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = entries_.end();
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->location != location) continue;
    if (version ? it->snapshot->version == *version
                : found == entries_.end() || it->snapshot->version > found->snapshot->version) {
      found = it;
      if (version) break;
    }
  }
  if (found == entries_.end()) return nullptr;
  entries_.splice(entries_.begin(), entries_, found);
  return entries_.front().snapshot;
}

void SnapshotCache::Insert(const std::string& location, std::shared_ptr<const delta::Snapshot> snapshot) {
  if (!snapshot->commit_file) return;  // nothing identifies this version's commit
  std::lock_guard<std::mutex> lock(mutex_);
  entries_.remove_if(
      [&](const Entry& e) { return e.location == location && e.snapshot->version == snapshot->version; });
  entries_.push_front(Entry{location, std::move(snapshot)});
  size_t versions = 0;
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (it->location == location && ++versions > kVersionsPerTable) {
      it = entries_.erase(it);
    } else {
      ++it;
    }
  }
  if (entries_.size() > capacity_) entries_.pop_back();
}

Result<std::shared_ptr<ObjectStore>> SnapshotCache::StoreOf(const std::string& location,
                                                            const StoreOpener& open) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const Entry& entry : entries_) {
      if (entry.location == location) return entry.snapshot->store;
    }
  }
  return open(location);
}

void SnapshotCache::Forget(const std::string& location) {
  std::lock_guard<std::mutex> lock(mutex_);
  entries_.remove_if([&](const Entry& e) { return e.location == location; });
}

Result<std::shared_ptr<const delta::Snapshot>> SnapshotCache::Get(const std::shared_ptr<ObjectStore>& store,
                                                                  const std::string& location,
                                                                  const delta::SnapshotOptions& options) {
  if (options.timestamp) {
    ASSIGN_OR_RETURN(std::shared_ptr<const delta::Snapshot> snapshot,
                     delta::LoadSnapshot(store, location, log_io_, options));
    return snapshot;
  }

  if (options.version) {
    if (auto cached = Find(location, options.version)) {
      // The commit file still being the one read guards against a table written again.
      auto commit = store->Head(delta::CommitKey(*options.version));
      if (commit.ok() && SameObject(*commit, *cached->commit_file)) return cached;
    }
    ASSIGN_OR_RETURN(std::shared_ptr<const delta::Snapshot> snapshot,
                     delta::LoadSnapshot(store, location, log_io_, options));
    Insert(location, snapshot);
    return snapshot;
  }

  // The latest version: bring the newest cached snapshot of this table up to date, which
  // looks up the commits after its version and reads only those.
  std::shared_ptr<const delta::Snapshot> snapshot = Find(location, std::nullopt);
  if (snapshot && snapshot->tombstone_state != delta::TombstoneState::kNotKept) {
    ASSIGN_OR_RETURN(auto updated, delta::UpdateSnapshot(snapshot, log_io_));
    if (updated != snapshot) Insert(location, updated);
    return updated;
  }
  delta::SnapshotOptions latest = options;
  latest.keep_tombstones = true;
  latest.tombstone_limit = tombstone_limit_;
  ASSIGN_OR_RETURN(snapshot, delta::LoadSnapshot(store, location, log_io_, latest));
  Insert(location, snapshot);
  return snapshot;
}

}  // namespace basin::engine
