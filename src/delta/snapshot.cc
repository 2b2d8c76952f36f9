#include "delta/snapshot.h"

#include <algorithm>
#include <cctype>
#include <unordered_map>

#include "delta/checkpoint.h"
#include "delta/history.h"
#include "delta/log_segment.h"
#include "delta/protocol.h"

namespace basin::delta {

namespace {

using json = nlohmann::json;

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

// The newest protocol action among commit files (newest last). Only lines that mention
// "protocol" are parsed: this runs before anything else is trusted.
// How errors name a commit or compaction file: "<table> _delta_log/...json (version 3)".
std::string DescribeLogFile(const std::string& table_root, const LogFile& file) {
  std::string versions = file.end_version != file.version ? "versions " + std::to_string(file.version) +
                                                                ".." + std::to_string(file.end_version)
                                                          : "version " + std::to_string(file.version);
  return table_root + ": " + file.object.key + " (" + versions + ")";
}

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

// The table state as actions are applied in log order (PROTOCOL.md "Action Reconciliation").
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
    } else if (auto* m = std::get_if<Metadata>(&a)) {
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
    // The newest protocol was found (and validated) before replay. cdc, checkpointMetadata,
    // sidecar and unknown actions do not change the table state.
  }

  void StartCommit() { last_commit_info.reset(); }

  const bool keep_tombstones;
  std::unordered_map<std::string, AddFile> files;
  std::unordered_map<std::string, RemoveFile> tombstones;
  std::optional<Metadata> metadata;
  std::map<std::string, SetTransaction> txns;
  std::map<std::string, DomainMetadata> domains;
  std::optional<CommitInfo> last_commit_info;  // of the last commit file applied
};

}  // namespace

int64_t Snapshot::num_records() const {
  int64_t total = 0;
  for (const auto& f : files) {
    if (!f.stats) return -1;
    json stats = json::parse(*f.stats, nullptr, /*allow_exceptions=*/false);
    if (!stats.is_object()) return -1;
    auto n = stats.find("numRecords");
    if (n == stats.end() || !n->is_number_integer()) return -1;
    total += n->get<int64_t>();
    if (f.deletion_vector) total -= f.deletion_vector->cardinality;
  }
  return total;
}

int64_t Snapshot::size_bytes() const {
  int64_t total = 0;
  for (const auto& f : files) total += f.size;
  return total;
}

Result<std::shared_ptr<Snapshot>> LoadSnapshot(std::shared_ptr<ObjectStore> store,
                                               const std::string& table_root, engine::Connection& conn,
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

  std::vector<DeltaFile> deltas;
  deltas.reserve(segment.deltas.size());
  for (const auto& file : segment.deltas) {
    auto content = store->Get(file.object.key);
    if (!content.ok()) {
      if (content.status().IsNotFound()) {
        return Status::Corruption(where + ": " + file.object.key + " vanished while the log was being read");
      }
      return content.status().WithContext(where);
    }
    deltas.push_back(DeltaFile{file, std::move(*content)});
  }

  // The protocol decides whether anything else can be read, so it is checked first.
  ASSIGN_OR_RETURN(std::optional<Protocol> protocol, NewestProtocolIn(deltas, table_root));
  if (protocol) RETURN_IF_ERROR(ValidateReadProtocol(*protocol, where));

  Replay replay(options.keep_tombstones);
  if (segment.checkpoint) {
    auto checkpoint_actions_or = ReadCheckpointFiles(*store, conn, *segment.checkpoint);
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
    if (!sidecars.empty()) RETURN_IF_ERROR(ReadSidecars(*store, conn, sidecars, &checkpoint_actions));
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
    replay.StartCommit();
    for (auto& a : actions) replay.Apply(a);
  }
  if (!replay.metadata) return Status::Corruption(where + ": the log has no metaData action");

  auto snapshot = std::make_shared<Snapshot>();
  snapshot->version = segment.version;
  snapshot->protocol = std::move(*protocol);
  snapshot->metadata = std::move(*replay.metadata);
  auto schema = ParseSchema(snapshot->metadata.schema_string);
  if (!schema.ok()) return schema.status().WithContext(where);
  snapshot->schema = std::move(*schema);
  snapshot->files.reserve(replay.files.size());
  for (auto& [key, add] : replay.files) snapshot->files.push_back(std::move(add));
  snapshot->tombstones.reserve(replay.tombstones.size());
  for (auto& [key, remove] : replay.tombstones) snapshot->tombstones.push_back(std::move(remove));
  snapshot->set_transactions = std::move(replay.txns);
  snapshot->domain_metadata = std::move(replay.domains);
  snapshot->store = std::move(store);
  snapshot->table_root = table_root;

  // The commit time: the in-commit timestamp when enabled, else the commit file's mtime.
  std::optional<CommitInfo> last_info;
  bool last_delta_is_target_commit = !segment.deltas.empty() &&
                                     segment.deltas.back().type == LogFileType::kCommit &&
                                     segment.deltas.back().version == segment.version;
  if (last_delta_is_target_commit) last_info = std::move(replay.last_commit_info);
  bool ict_enabled = ConfigIsTrue(snapshot->metadata, "delta.enableInCommitTimestamps");
  if (ict_enabled && !last_delta_is_target_commit && segment.last_commit) {
    ASSIGN_OR_RETURN(last_info, ReadCommitInfo(*snapshot->store, *segment.last_commit));
  }
  if (segment.last_commit) {
    snapshot->timestamp_ms = segment.last_commit->modification_time_ms;
  } else if (!segment.deltas.empty()) {
    snapshot->timestamp_ms = segment.deltas.back().object.modification_time_ms;
  } else if (segment.checkpoint) {
    snapshot->timestamp_ms = segment.checkpoint->files.front().modification_time_ms;
  }
  if (ict_enabled && last_info && last_info->in_commit_timestamp) {
    snapshot->timestamp_ms = *last_info->in_commit_timestamp;
  }
  return snapshot;
}

}  // namespace basin::delta
