#include "engine/snapshot_cache.h"

#include "delta/log_segment.h"

namespace basin::engine {

namespace {

bool SameObject(const ObjectInfo& a, const ObjectInfo& b) {
  return a.key == b.key && a.size_bytes == b.size_bytes && a.modification_time_ms == b.modification_time_ms;
}

// The key just before commit `version`'s, so that a listing after it starts with that commit.
std::string KeyBeforeCommit(int64_t version) {
  if (version == 0) return delta::kLogFolder;
  return delta::CommitKey(version - 1);
}

}  // namespace

SnapshotCache::SnapshotCache(std::shared_ptr<Database> db, size_t capacity)
    : db_(std::move(db)), capacity_(capacity) {}

std::shared_ptr<const delta::Snapshot> SnapshotCache::Find(const std::string& location, int64_t version,
                                                           const ObjectInfo* commit) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->location != location || it->snapshot->version != version) continue;
    if (commit != nullptr && !SameObject(it->commit, *commit)) continue;
    entries_.splice(entries_.begin(), entries_, it);
    return entries_.front().snapshot;
  }
  return nullptr;
}

void SnapshotCache::Insert(Entry entry) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->location == entry.location && it->snapshot->version == entry.snapshot->version) {
      entries_.erase(it);
      break;
    }
  }
  entries_.push_front(std::move(entry));
  if (entries_.size() > capacity_) entries_.pop_back();
}

void SnapshotCache::Forget(const std::string& location) {
  std::lock_guard<std::mutex> lock(mutex_);
  entries_.remove_if([&](const Entry& e) { return e.location == location; });
}

Result<std::shared_ptr<const delta::Snapshot>> SnapshotCache::Load(const std::shared_ptr<ObjectStore>& store,
                                                                   const std::string& location,
                                                                   const delta::SnapshotOptions& options) {
  std::lock_guard<std::mutex> lock(load_mutex_);
  if (!conn_) {
    ASSIGN_OR_RETURN(conn_, Connection::Open(db_));
  }
  ASSIGN_OR_RETURN(std::shared_ptr<delta::Snapshot> snapshot, delta::LoadSnapshot(store, location, *conn_, options));
  return std::shared_ptr<const delta::Snapshot>(std::move(snapshot));
}

Result<std::shared_ptr<const delta::Snapshot>> SnapshotCache::Get(const std::shared_ptr<ObjectStore>& store,
                                                                  const std::string& location,
                                                                  const delta::SnapshotOptions& options) {
  if (options.timestamp) return Load(store, location, options);

  if (options.version) {
    auto commit = store->Head(delta::CommitKey(*options.version));
    if (commit.ok()) {
      if (auto cached = Find(location, *options.version, &*commit)) return cached;
    }
    ASSIGN_OR_RETURN(auto snapshot, Load(store, location, options));
    if (commit.ok()) Insert(Entry{location, *commit, snapshot});
    return snapshot;
  }

  // The latest version: is the newest cached snapshot of this table still the latest?
  std::shared_ptr<const delta::Snapshot> newest;
  ObjectInfo newest_commit;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const Entry& e : entries_) {
      if (e.location == location && (!newest || e.snapshot->version > newest->version)) {
        newest = e.snapshot;
        newest_commit = e.commit;
      }
    }
  }
  if (!newest) {
    // Nothing cached: replay (which lists the log from its last checkpoint), then remember
    // the commit file that identifies the version.
    ASSIGN_OR_RETURN(auto snapshot, Load(store, location, options));
    auto commit = store->Head(delta::CommitKey(snapshot->version));
    if (commit.ok()) Insert(Entry{location, *commit, snapshot});
    return snapshot;
  }
  std::optional<ObjectInfo> latest_commit;
  int64_t latest_version = -1;
  auto listing = store->ListAfter(delta::kLogFolder, KeyBeforeCommit(newest->version));
  if (listing.ok()) {
    for (const ObjectInfo& object : *listing) {
      auto file = delta::ParseLogFile(object);
      if (!file || file->type != delta::LogFileType::kCommit || file->version < latest_version) continue;
      latest_version = file->version;
      latest_commit = object;
    }
  }
  if (latest_commit && latest_version == newest->version && SameObject(*latest_commit, newest_commit)) {
    Find(location, newest->version, nullptr);  // mark as recently used
    return newest;
  }
  // New commits, or a table written again: replay, pinned to the version listed so the
  // cache key stays right if a commit lands meanwhile.
  delta::SnapshotOptions pinned = options;
  if (latest_commit && latest_version > newest->version) pinned.version = latest_version;
  ASSIGN_OR_RETURN(auto snapshot, Load(store, location, pinned));
  if (latest_commit && snapshot->version == latest_version) Insert(Entry{location, *latest_commit, snapshot});
  return snapshot;
}

}  // namespace basin::engine
