#include "delta/checkpoint_writer.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <span>
#include <sstream>

#include "common/strings.h"
#include "common/uuid.h"
#include "delta/log_segment.h"

namespace basin::delta {

namespace {

using json = nlohmann::json;
using ordered_json = nlohmann::ordered_json;

// _last_checkpoint embeds a V2 checkpoint's top-level actions only up to this many, so
// that the hint file stays small however many txn appIds a table collects.
constexpr size_t kMaxEmbeddedActions = 64;

// "_delta_log/00000000000000000007" + suffix
std::string LogKey(int64_t version, const std::string& suffix) {
  char name[64];
  std::snprintf(name, sizeof(name), "%s%020lld", kLogFolder, static_cast<long long>(version));
  return name + suffix;
}

// The snapshot's state as actions: the non-file ones in the order readers expect
// (protocol and metadata first), and the file actions (adds, then kept tombstones).
struct CheckpointContent {
  std::vector<Action> non_file;
  std::vector<Action> files;
};

Result<CheckpointContent> CollectActions(const Snapshot& snapshot, int64_t now_ms) {
  ASSIGN_OR_RETURN(int64_t retention_ms, DeletedFileRetentionMs(snapshot.metadata));
  CheckpointContent content;
  content.non_file.reserve(2 + snapshot.set_transactions.size() + snapshot.domain_metadata.size());
  content.non_file.emplace_back(snapshot.protocol);
  content.non_file.emplace_back(snapshot.metadata);
  for (const auto& [app, txn] : snapshot.set_transactions) content.non_file.emplace_back(txn);
  for (const auto& [domain, dm] : snapshot.domain_metadata) content.non_file.emplace_back(dm);
  content.files.reserve(snapshot.files.size() + snapshot.tombstones.size());
  for (const auto& add : snapshot.files) content.files.emplace_back(add);
  // A tombstone without a deletion time counts as deleted at the epoch, as in Delta.
  const int64_t oldest_kept_ms = now_ms - retention_ms;
  for (const auto& remove : snapshot.tombstones) {
    if (remove.deletion_timestamp.value_or(0) > oldest_kept_ms) content.files.emplace_back(remove);
  }
  return content;
}

// Writes `actions` as Parquet at `key` and returns what the store records for it: V2
// checkpoints name their files with size and modification time.
Result<ObjectInfo> WriteParquetAndHead(ObjectStore& store, ParquetLogIO& io, const std::string& key,
                                       std::span<const Action> actions, CheckpointColumns columns) {
  RETURN_IF_ERROR(io.WriteActions(store, key, actions, columns));
  return store.Head(key);
}

// _last_checkpoint must not go backwards when an older checkpoint is (re)written late.
Status UpdateLastCheckpoint(ObjectStore& store, int64_t version, const ordered_json& doc) {
  const std::string key = std::string(kLogFolder) + "_last_checkpoint";
  auto existing = store.Get(key);
  if (existing.ok()) {
    json old = json::parse(*existing, nullptr, /*allow_exceptions=*/false);
    auto v = old.is_object() ? old.find("version") : old.end();
    if (old.is_object() && v != old.end() && v->is_number_integer() && v->get<int64_t>() > version) {
      return Status::OK();
    }
  } else if (!existing.status().IsNotFound()) {
    return existing.status();
  }
  return store.Put(key, doc.dump());
}

// version and size lead, as Delta writes them, for readers that look only at a prefix.
ordered_json LastCheckpointDoc(const CheckpointInfo& info) {
  ordered_json doc;
  doc["version"] = info.version;
  doc["size"] = info.num_actions;
  doc["sizeInBytes"] = info.size_bytes;
  doc["numOfAddFiles"] = info.num_add_files;
  return doc;
}

ordered_json ActionJson(const Action& action) {
  return ordered_json::parse(SerializeAction(action), nullptr, /*allow_exceptions=*/false);
}

Result<CheckpointInfo> WriteClassic(ObjectStore& store, ParquetLogIO& io, const Snapshot& snapshot,
                                    CheckpointContent content) {
  std::vector<Action> actions = std::move(content.non_file);
  std::move(content.files.begin(), content.files.end(), std::back_inserter(actions));
  CheckpointInfo info;
  info.version = snapshot.version;
  info.policy = CheckpointPolicy::kClassic;
  info.key = LogKey(snapshot.version, ".checkpoint.parquet");
  ASSIGN_OR_RETURN(ObjectInfo stored,
                   WriteParquetAndHead(store, io, info.key, actions, CheckpointColumns::kClassic));
  info.num_actions = static_cast<int64_t>(actions.size());
  info.num_add_files = static_cast<int64_t>(snapshot.files.size());
  info.size_bytes = static_cast<int64_t>(stored.size_bytes);
  RETURN_IF_ERROR(UpdateLastCheckpoint(store, info.version, LastCheckpointDoc(info)));
  return info;
}

Result<CheckpointInfo> WriteV2(ObjectStore& store, ParquetLogIO& io, const Snapshot& snapshot,
                               const CheckpointContent& content, const CheckpointOptions& options) {
  if (options.actions_per_sidecar <= 0) {
    return Status::InvalidArgument("actions_per_sidecar must be positive, got " +
                                   std::to_string(options.actions_per_sidecar));
  }
  CheckpointInfo info;
  info.version = snapshot.version;
  info.policy = CheckpointPolicy::kV2;
  info.num_add_files = static_cast<int64_t>(snapshot.files.size());

  // Sidecars first: the top-level file must only name files that exist.
  std::vector<Action> top{CheckpointMetadata{snapshot.version, {}}};
  top.insert(top.end(), content.non_file.begin(), content.non_file.end());
  const std::span<const Action> files(content.files);
  const auto per_sidecar = static_cast<size_t>(options.actions_per_sidecar);
  for (size_t begin = 0; begin < files.size(); begin += per_sidecar) {
    std::span<const Action> chunk = files.subspan(begin, std::min(per_sidecar, files.size() - begin));
    const std::string uuid = NewUuid();
    const std::string name = uuid + ".parquet";
    const std::string key = kSidecarFolder + name;
    ASSIGN_OR_RETURN(ObjectInfo stored,
                     WriteParquetAndHead(store, io, key, chunk, CheckpointColumns::kSidecar));
    top.emplace_back(Sidecar{name, static_cast<int64_t>(stored.size_bytes), stored.modification_time_ms});
    info.sidecar_keys.push_back(key);
    info.size_bytes += static_cast<int64_t>(stored.size_bytes);
  }

  const std::string uuid = NewUuid();
  ObjectInfo stored;
  if (options.v2_top_level_format == CheckpointFileFormat::kJson) {
    std::string bytes;
    for (const auto& action : top) bytes += SerializeAction(action) + "\n";
    info.key = LogKey(snapshot.version, ".checkpoint." + uuid + ".json");
    RETURN_IF_ERROR(store.Put(info.key, bytes));
    ASSIGN_OR_RETURN(stored, store.Head(info.key));
  } else {
    info.key = LogKey(snapshot.version, ".checkpoint." + uuid + ".parquet");
    ASSIGN_OR_RETURN(stored, WriteParquetAndHead(store, io, info.key, top, CheckpointColumns::kV2TopLevel));
  }
  info.size_bytes += static_cast<int64_t>(stored.size_bytes);
  info.num_actions = static_cast<int64_t>(top.size() + content.files.size());

  ordered_json v2;
  v2["path"] = info.key.substr(std::string(kLogFolder).size());
  v2["sizeInBytes"] = stored.size_bytes;
  v2["modificationTime"] = stored.modification_time_ms;
  if (top.size() <= kMaxEmbeddedActions) {
    ordered_json non_file_actions = ordered_json::array();
    ordered_json sidecar_files = ordered_json::array();
    for (const auto& action : top) {
      if (std::holds_alternative<Sidecar>(action)) {
        sidecar_files.push_back(ActionJson(action)["sidecar"]);
      } else {
        non_file_actions.push_back(ActionJson(action));
      }
    }
    v2["nonFileActions"] = std::move(non_file_actions);
    v2["sidecarFiles"] = std::move(sidecar_files);
  }
  ordered_json doc = LastCheckpointDoc(info);
  doc["v2Checkpoint"] = std::move(v2);
  RETURN_IF_ERROR(UpdateLastCheckpoint(store, info.version, doc));
  return info;
}

bool HasV2CheckpointFeature(const Protocol& protocol) {
  return protocol.HasReaderFeature("v2Checkpoint") && protocol.HasWriterFeature("v2Checkpoint");
}

}  // namespace

Result<int64_t> CheckpointInterval(const Metadata& metadata) {
  auto it = metadata.configuration.find("delta.checkpointInterval");
  if (it == metadata.configuration.end()) return int64_t{10};
  int64_t interval = 0;
  const std::string& text = it->second;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), interval);
  if (ec != std::errc() || end != text.data() + text.size() || interval <= 0) {
    return Status::InvalidArgument("delta.checkpointInterval must be a positive integer, got '" + text + "'");
  }
  return interval;
}

Result<int64_t> DurationPropertyMs(const Metadata& metadata, const std::string& key, int64_t default_ms) {
  auto it = metadata.configuration.find(key);
  if (it == metadata.configuration.end()) return default_ms;
  std::istringstream in(AsciiLower(it->second));
  std::string word;
  in >> word;
  if (word == "interval") in >> word;
  int64_t amount = 0;
  auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), amount);
  std::string unit;
  in >> unit;
  std::string rest;
  in >> rest;
  if (!unit.empty() && unit.back() == 's') unit.pop_back();
  static const std::pair<const char*, int64_t> kUnits[] = {{"millisecond", 1},  {"second", 1000},
                                                           {"minute", 60'000},  {"hour", 3'600'000},
                                                           {"day", 86'400'000}, {"week", 604'800'000}};
  if (ec == std::errc() && end == word.data() + word.size() && amount >= 0 && rest.empty()) {
    for (const auto& [name, ms] : kUnits) {
      if (unit == name) return amount * ms;
    }
  }
  return Status::InvalidArgument(key + " must look like 'interval 7 days', got '" + it->second + "'");
}

Result<int64_t> DeletedFileRetentionMs(const Metadata& metadata) {
  return DurationPropertyMs(metadata, "delta.deletedFileRetentionDuration", int64_t{7} * 24 * 3600 * 1000);
}

Result<CheckpointPolicy> CheckpointPolicyOf(const Metadata& metadata) {
  auto it = metadata.configuration.find("delta.checkpointPolicy");
  if (it == metadata.configuration.end()) return CheckpointPolicy::kClassic;
  const std::string policy = AsciiLower(it->second);
  if (policy == "classic") return CheckpointPolicy::kClassic;
  if (policy == "v2") return CheckpointPolicy::kV2;
  return Status::InvalidArgument("delta.checkpointPolicy must be 'classic' or 'v2', got '" + it->second +
                                 "'");
}

Result<CheckpointPolicy> EffectiveCheckpointPolicy(const Snapshot& snapshot) {
  ASSIGN_OR_RETURN(CheckpointPolicy policy, CheckpointPolicyOf(snapshot.metadata));
  if (policy == CheckpointPolicy::kV2 && !HasV2CheckpointFeature(snapshot.protocol)) {
    return CheckpointPolicy::kClassic;
  }
  return policy;
}

Result<CheckpointInfo> WriteCheckpoint(ObjectStore& store, ParquetLogIO& io, const Snapshot& snapshot,
                                       int64_t now_ms, const CheckpointOptions& options) {
  const std::string where =
      snapshot.table_root + ": writing the checkpoint of version " + std::to_string(snapshot.version);
  if (snapshot.tombstone_state != TombstoneState::kKept) {
    return Status::Internal(where + ": the snapshot does not hold its tombstones");
  }
  CheckpointPolicy policy = CheckpointPolicy::kClassic;
  if (options.policy) {
    policy = *options.policy;
    if (policy == CheckpointPolicy::kV2 && !HasV2CheckpointFeature(snapshot.protocol)) {
      return Status::InvalidArgument(where +
                                     ": a V2 checkpoint needs the v2Checkpoint reader and writer feature "
                                     "in the table protocol");
    }
  } else {
    auto effective = EffectiveCheckpointPolicy(snapshot);
    if (!effective.ok()) return effective.status().WithContext(where);
    policy = *effective;
  }
  auto content = CollectActions(snapshot, now_ms);
  if (!content.ok()) return content.status().WithContext(where);
  auto written = policy == CheckpointPolicy::kV2 ? WriteV2(store, io, snapshot, *content, options)
                                                 : WriteClassic(store, io, snapshot, std::move(*content));
  if (!written.ok()) return written.status().WithContext(where);
  return written;
}

Result<CheckpointInfo> CheckpointVersion(const std::shared_ptr<ObjectStore>& store,
                                         const std::string& table_root, ParquetLogIO& io, int64_t version,
                                         int64_t now_ms, const CheckpointOptions& options) {
  SnapshotOptions snapshot_options;
  snapshot_options.version = version;
  snapshot_options.keep_tombstones = true;
  ASSIGN_OR_RETURN(auto snapshot, LoadSnapshot(store, table_root, io, snapshot_options));
  return WriteCheckpoint(*store, io, *snapshot, now_ms, options);
}

}  // namespace basin::delta
