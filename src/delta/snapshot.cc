#include "delta/snapshot.h"

#include <algorithm>
#include <cctype>
#include <unordered_map>
#include <unordered_set>

#include "delta/checkpoint.h"
#include "delta/history.h"
#include "delta/log_segment.h"
#include "delta/protocol.h"

namespace basin::delta {

namespace {

struct DeltaFile {
  LogFile file;
  std::string content;
};

// The newest protocol action in `actions` (log order), nullopt when there is none.
std::optional<Protocol> ProtocolIn(const std::vector<Action>& actions) {
  std::optional<Protocol> found;
  for (const auto& a : actions) {
    if (const auto* p = std::get_if<Protocol>(&a)) found = *p;
  }
  return found;
}

// Compactions list actions newest first (see the replay loop in LoadSnapshot).
void ToLogOrder(const LogFile& file, std::vector<Action>& actions) {
  if (file.type == LogFileType::kCompaction) std::reverse(actions.begin(), actions.end());
}

// How errors name a commit or compaction file: "<table> _delta_log/...json (version 3)".
std::string DescribeLogFile(const std::string& table_root, const LogFile& file) {
  std::string versions = file.end_version != file.version ? "versions " + std::to_string(file.version) +
                                                                ".." + std::to_string(file.end_version)
                                                          : "version " + std::to_string(file.version);
  return table_root + ": " + file.object.key + " (" + versions + ")";
}

// The newest protocol action among commit files (newest last). Only lines that mention
// "protocol" are parsed: this runs before anything else is trusted.
Result<std::optional<Protocol>> NewestProtocolIn(const std::vector<DeltaFile>& deltas,
                                                 const std::string& table_root) {
  for (auto it = deltas.rbegin(); it != deltas.rend(); ++it) {
    ASSIGN_OR_RETURN(auto actions, ParseCommitLinesContaining(
                                       it->content, DescribeLogFile(table_root, it->file), "\"protocol\""));
    ToLogOrder(it->file, actions);
    if (auto found = ProtocolIn(actions)) return found;
  }
  return std::optional<Protocol>();
}

bool ConfigIsTrue(const Metadata& metadata, const std::string& key) {
  auto it = metadata.configuration.find(key);
  if (it == metadata.configuration.end()) return false;
  std::string v = it->second;
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
  return v == "true";
}

// The table state other than its files as actions are applied in log order
// (PROTOCOL.md "Action Reconciliation").
struct TableState {
  // The newest protocol is found (and validated) before replay. cdc, checkpointMetadata,
  // sidecar and unknown actions do not change the table state; add and remove are the
  // caller's.
  void Apply(Action& a) {
    if (auto* m = std::get_if<Metadata>(&a)) {
      metadata = std::move(*m);
    } else if (auto* txn = std::get_if<SetTransaction>(&a)) {
      txns.insert_or_assign(txn->app_id, std::move(*txn));
    } else if (auto* domain = std::get_if<DomainMetadata>(&a)) {
      if (domain->removed) {
        domains.erase(domain->domain);
      } else {
        domains.insert_or_assign(domain->domain, std::move(*domain));
      }
    } else if (auto* info = std::get_if<CommitInfo>(&a)) {
      last_commit_info = std::move(*info);
    }
  }

  void StartCommit() { last_commit_info.reset(); }

  std::optional<Metadata> metadata;
  std::map<std::string, SetTransaction> txns;
  std::map<std::string, DomainMetadata> domains;
  std::optional<CommitInfo> last_commit_info;  // of the last commit file applied
};

// The table state as actions are applied in log order.
struct Replay {
  explicit Replay(bool keep_tombstones) : keep_tombstones(keep_tombstones) {}

  // Checkpoint removes are tombstones for VACUUM; they never hide a file of the checkpoint.
  void ApplyCheckpoint(std::vector<Action>& actions) {
    for (auto& a : actions) {
      if (auto* remove = std::get_if<RemoveFile>(&a)) {
        if (keep_tombstones) tombstones.insert_or_assign(remove->ReplayKey(), std::move(*remove));
        continue;
      }
      Apply(a);
    }
  }

  void Apply(Action& a) {
    if (auto* add = std::get_if<AddFile>(&a)) {
      std::string key = add->ReplayKey();
      if (keep_tombstones) tombstones.erase(key);
      files.insert_or_assign(std::move(key), std::move(*add));
    } else if (auto* remove = std::get_if<RemoveFile>(&a)) {
      std::string key = remove->ReplayKey();
      files.erase(key);
      if (keep_tombstones) tombstones.insert_or_assign(std::move(key), std::move(*remove));
    } else {
      state.Apply(a);
    }
  }

  const bool keep_tombstones;
  std::unordered_map<std::string, AddFile> files;
  std::unordered_map<std::string, RemoveFile> tombstones;
  TableState state;
};

// The commit time of a snapshot: the in-commit timestamp when enabled (from `last_info`,
// the newest commit's commitInfo), else the commit file's modification time.
int64_t CommitTimestampMs(const Metadata& metadata, const std::optional<CommitInfo>& last_info,
                          int64_t file_time_ms) {
  if (ConfigIsTrue(metadata, "delta.enableInCommitTimestamps") && last_info &&
      last_info->in_commit_timestamp) {
    return *last_info->in_commit_timestamp;
  }
  return file_time_ms;
}

// Reads the commit files `files` of the log; a file that vanished since listing makes the
// log Corruption (`where` names the snapshot).
Result<std::vector<DeltaFile>> ReadDeltaFiles(ObjectStore& store, const std::vector<LogFile>& files,
                                              const std::string& where) {
  std::vector<DeltaFile> deltas;
  deltas.reserve(files.size());
  for (const auto& file : files) {
    auto content = store.Get(file.object.key);
    if (!content.ok()) {
      if (content.status().IsNotFound()) {
        return Status::Corruption(where + ": " + file.object.key + " vanished while the log was being read");
      }
      return content.status().WithContext(where);
    }
    deltas.push_back(DeltaFile{file, std::move(*content)});
  }
  return deltas;
}

}  // namespace

int64_t Snapshot::num_records() const {
  const FileStatsIndex& index = stats_index();
  int64_t total = 0;
  for (size_t i = 0; i < files.size(); i++) {
    std::optional<int64_t> n = index.NumRecords(i);
    if (!n) return -1;
    total += *n;
    if (files[i].deletion_vector) total -= files[i].deletion_vector->cardinality;
  }
  return total;
}

int64_t Snapshot::size_bytes() const {
  int64_t total = 0;
  for (const auto& f : files) total += f.size;
  return total;
}

Result<std::shared_ptr<Snapshot>> LoadSnapshot(std::shared_ptr<ObjectStore> store,
                                               const std::string& table_root, ParquetLogIO& io,
                                               const SnapshotOptions& options) {
  if (options.version && options.timestamp) {
    return Status::InvalidArgument(table_root + ": time travel takes a version or a timestamp, not both");
  }
  // Time travel may need commits older than the newest checkpoint, so only the latest
  // version starts listing from the `_last_checkpoint` hint.
  auto listed = options.version || options.timestamp ? ListLog(*store) : ListLogForLatest(*store);
  if (!listed.ok()) return listed.status().WithContext("listing the Delta log of " + table_root);
  const LogListing& listing = *listed;
  std::optional<int64_t> version = options.version;
  if (options.timestamp) {
    ASSIGN_OR_RETURN(int64_t ts, ParseTimestampMs(*options.timestamp));
    ASSIGN_OR_RETURN(version, VersionAtTimestamp(*store, listing, ts, table_root));
  }
  ASSIGN_OR_RETURN(LogSegment segment, BuildLogSegment(listing, version, table_root));
  const std::string where = table_root + " version " + std::to_string(segment.version);

  ASSIGN_OR_RETURN(std::vector<DeltaFile> deltas, ReadDeltaFiles(*store, segment.deltas, where));

  // The protocol decides whether anything else can be read, so it is checked first.
  ASSIGN_OR_RETURN(std::optional<Protocol> protocol, NewestProtocolIn(deltas, table_root));
  if (protocol) RETURN_IF_ERROR(ValidateReadProtocol(*protocol, where));

  Replay replay(options.keep_tombstones);
  if (segment.checkpoint) {
    auto checkpoint_actions_or = ReadCheckpointFiles(*store, io, *segment.checkpoint);
    if (!checkpoint_actions_or.ok()) return checkpoint_actions_or.status().WithContext(where);
    std::vector<Action> checkpoint_actions = std::move(checkpoint_actions_or).value();
    if (!protocol) {
      protocol = ProtocolIn(checkpoint_actions);
      if (protocol) RETURN_IF_ERROR(ValidateReadProtocol(*protocol, where));
    }
    std::vector<Sidecar> sidecars;
    for (const auto& a : checkpoint_actions) {
      if (const auto* s = std::get_if<Sidecar>(&a)) sidecars.push_back(*s);
    }
    if (!sidecars.empty()) RETURN_IF_ERROR(ReadSidecars(*store, io, sidecars, &checkpoint_actions));
    replay.ApplyCheckpoint(checkpoint_actions);
  }
  if (!protocol) return Status::Corruption(where + ": the log has no protocol action");

  for (auto& delta : deltas) {
    ASSIGN_OR_RETURN(std::vector<Action> actions,
                     ParseCommitFile(delta.content, DescribeLogFile(table_root, delta.file)));
    delta.content.clear();
    // Writers (Databricks) list a compaction's actions newest first, not fully reconciled:
    // the first action per key is the one that holds. A reconciled file has one action per
    // key, so applying it in reverse is right for both.
    ToLogOrder(delta.file, actions);
    replay.state.StartCommit();
    for (auto& a : actions) replay.Apply(a);
  }
  if (!replay.state.metadata) return Status::Corruption(where + ": the log has no metaData action");

  auto snapshot = std::make_shared<Snapshot>();
  snapshot->version = segment.version;
  snapshot->protocol = std::move(*protocol);
  snapshot->metadata = std::move(*replay.state.metadata);
  auto schema = ParseSchema(snapshot->metadata.schema_string);
  if (!schema.ok()) return schema.status().WithContext(where);
  snapshot->schema = std::move(*schema);
  snapshot->files.reserve(replay.files.size());
  for (auto& [key, add] : replay.files) snapshot->files.push_back(std::move(add));
  snapshot->tombstones.reserve(replay.tombstones.size());
  for (auto& [key, remove] : replay.tombstones) snapshot->tombstones.push_back(std::move(remove));
  snapshot->tombstones_kept = options.keep_tombstones;
  snapshot->set_transactions = std::move(replay.state.txns);
  snapshot->domain_metadata = std::move(replay.state.domains);
  snapshot->commit_file = segment.last_commit;
  snapshot->store = std::move(store);
  snapshot->table_root = table_root;

  // The commit time: the in-commit timestamp when enabled, else the commit file's mtime.
  std::optional<CommitInfo> last_info;
  bool last_delta_is_target_commit = !segment.deltas.empty() &&
                                     segment.deltas.back().type == LogFileType::kCommit &&
                                     segment.deltas.back().version == segment.version;
  if (last_delta_is_target_commit) last_info = std::move(replay.state.last_commit_info);
  bool ict_enabled = ConfigIsTrue(snapshot->metadata, "delta.enableInCommitTimestamps");
  if (ict_enabled && !last_delta_is_target_commit && segment.last_commit) {
    ASSIGN_OR_RETURN(last_info, ReadCommitInfo(*snapshot->store, *segment.last_commit));
  }
  int64_t file_time_ms = 0;
  if (segment.last_commit) {
    file_time_ms = segment.last_commit->modification_time_ms;
  } else if (!segment.deltas.empty()) {
    file_time_ms = segment.deltas.back().object.modification_time_ms;
  } else if (segment.checkpoint) {
    file_time_ms = segment.checkpoint->files.front().modification_time_ms;
  }
  snapshot->timestamp_ms = CommitTimestampMs(snapshot->metadata, last_info, file_time_ms);
  return snapshot;
}

namespace {

// Keys hashed as strings and looked up by string_view, without a copy.
struct KeyHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
};
using KeySet = std::unordered_set<std::string, KeyHash, std::equal_to<>>;

// Whether `file` is among `keys`, computing its replay key only when its path is not its
// own key already (escapes, a file: URI or a deletion vector).
bool KeyIn(const KeySet& keys, const AddFile& file) {
  if (!file.deletion_vector && file.path.find('%') == std::string::npos && !file.path.starts_with("file:")) {
    return keys.find(std::string_view(file.path)) != keys.end();
  }
  return keys.count(file.ReplayKey()) > 0;
}

bool KeyIn(const KeySet& keys, const RemoveFile& file) { return keys.count(file.ReplayKey()) > 0; }

}  // namespace

Result<std::shared_ptr<const Snapshot>> UpdateSnapshot(std::shared_ptr<const Snapshot> snapshot,
                                                       ParquetLogIO& io) {
  const Snapshot& old = *snapshot;
  auto reload = [&]() -> Result<std::shared_ptr<const Snapshot>> {
    SnapshotOptions options;
    options.keep_tombstones = old.tombstones_kept;
    ASSIGN_OR_RETURN(std::shared_ptr<Snapshot> fresh, LoadSnapshot(old.store, old.table_root, io, options));
    return std::shared_ptr<const Snapshot>(std::move(fresh));
  };
  auto listed = ListLog(*old.store, old.version);
  if (!listed.ok()) return listed.status().WithContext("listing the Delta log of " + old.table_root);
  const LogListing& listing = *listed;

  // The log must still hold the commit this snapshot ends with, unchanged: otherwise it
  // was cleaned up, or the table was deleted and written again.
  auto same = listing.commits.find(old.version);
  if (old.commit_file) {
    if (same == listing.commits.end() || same->second.size_bytes != old.commit_file->size_bytes ||
        same->second.modification_time_ms != old.commit_file->modification_time_ms) {
      return reload();
    }
  }
  if (listing.empty() || listing.latest_version() <= old.version) return snapshot;
  if (!old.commit_file) return reload();  // nothing to check the log against
  const int64_t latest = listing.latest_version();
  std::vector<LogFile> commits;
  for (int64_t v = old.version + 1; v <= latest; v++) {
    auto it = listing.commits.find(v);
    if (it == listing.commits.end()) return reload();  // cleaned up: a checkpoint covers it
    commits.push_back(LogFile{LogFileType::kCommit, v, v, 0, 0, it->second});
  }
  const std::string where = old.table_root + " version " + std::to_string(latest);
  ASSIGN_OR_RETURN(std::vector<DeltaFile> deltas, ReadDeltaFiles(*old.store, commits, where));
  ASSIGN_OR_RETURN(std::optional<Protocol> protocol, NewestProtocolIn(deltas, old.table_root));
  if (protocol) RETURN_IF_ERROR(ValidateReadProtocol(*protocol, where));

  // Replay the new commits on their own; then one pass over the old files.
  TableState state;
  state.txns = old.set_transactions;
  state.domains = old.domain_metadata;
  KeySet touched;  // keys the new commits add or remove: their old entries go
  std::unordered_map<std::string, AddFile> added;
  std::unordered_map<std::string, RemoveFile> removed;
  for (auto& delta : deltas) {
    ASSIGN_OR_RETURN(std::vector<Action> actions,
                     ParseCommitFile(delta.content, DescribeLogFile(old.table_root, delta.file)));
    delta.content.clear();
    state.StartCommit();
    for (auto& a : actions) {
      if (auto* add = std::get_if<AddFile>(&a)) {
        std::string key = add->ReplayKey();
        touched.insert(key);
        removed.erase(key);
        added.insert_or_assign(std::move(key), std::move(*add));
      } else if (auto* remove = std::get_if<RemoveFile>(&a)) {
        std::string key = remove->ReplayKey();
        touched.insert(key);
        added.erase(key);
        if (old.tombstones_kept) removed.insert_or_assign(std::move(key), std::move(*remove));
      } else {
        state.Apply(a);
      }
    }
  }

  auto next = std::make_shared<Snapshot>();
  next->version = latest;
  next->protocol = protocol ? std::move(*protocol) : old.protocol;
  if (state.metadata) {
    next->metadata = std::move(*state.metadata);
    auto schema = ParseSchema(next->metadata.schema_string);
    if (!schema.ok()) return schema.status().WithContext(where);
    next->schema = std::move(*schema);
  } else {
    next->metadata = old.metadata;
    next->schema = old.schema;
  }
  next->files.reserve(old.files.size() + added.size());
  for (const AddFile& file : old.files) {
    if (touched.empty() || !KeyIn(touched, file)) next->files.push_back(file);
  }
  for (auto& [key, add] : added) next->files.push_back(std::move(add));
  next->tombstones_kept = old.tombstones_kept;
  if (old.tombstones_kept) {
    next->tombstones.reserve(old.tombstones.size() + removed.size());
    for (const RemoveFile& tombstone : old.tombstones) {
      if (touched.empty() || !KeyIn(touched, tombstone)) next->tombstones.push_back(tombstone);
    }
    for (auto& [key, remove] : removed) next->tombstones.push_back(std::move(remove));
  }
  next->set_transactions = std::move(state.txns);
  next->domain_metadata = std::move(state.domains);
  next->store = old.store;
  next->table_root = old.table_root;
  next->commit_file = commits.back().object;
  next->timestamp_ms =
      CommitTimestampMs(next->metadata, state.last_commit_info, commits.back().object.modification_time_ms);
  return std::shared_ptr<const Snapshot>(std::move(next));
}

}  // namespace basin::delta
