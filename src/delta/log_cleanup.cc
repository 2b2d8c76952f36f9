#include "delta/log_cleanup.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "delta/checkpoint.h"
#include "delta/checkpoint_writer.h"
#include "delta/history.h"
#include "delta/log_segment.h"
#include "delta/paths.h"

namespace basin::delta {

namespace {

constexpr int64_t kDayMs = 86'400'000;

int64_t StartOfUtcDay(int64_t ms) {
  int64_t days = ms / kDayMs;
  if (ms % kDayMs < 0) days--;
  return days * kDayMs;
}

// The version of a version checksum file "_delta_log/<20 digits>.crc"; nullopt otherwise.
std::optional<int64_t> ChecksumFileVersion(const std::string& key) {
  if (key.rfind(kLogFolder, 0) != 0) return std::nullopt;
  const std::string_view name = std::string_view(key).substr(std::string_view(kLogFolder).size());
  if (name.size() != 24 || name.substr(20) != ".crc") return std::nullopt;
  int64_t version = 0;
  for (char c : name.substr(0, 20)) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    if (version > (INT64_MAX - (c - '0')) / 10) return std::nullopt;
    version = version * 10 + (c - '0');
  }
  return version;
}

// The file name a sidecar action refers to: sidecars live in _delta_log/_sidecars/, so an
// absolute path is matched by its last component (keeping too much, never too little).
std::string SidecarFileName(const Sidecar& sidecar) {
  std::string decoded = DecodeDataPath(sidecar.path);
  size_t slash = decoded.rfind('/');
  return slash == std::string::npos ? decoded : decoded.substr(slash + 1);
}

// Hadoop's checksum companion of a file: "dir/.<name>.crc" -> "dir/<name>"; nullopt for
// other keys.
std::optional<std::string> HadoopCompanionOf(const std::string& key) {
  size_t slash = key.rfind('/');
  std::string_view name = std::string_view(key).substr(slash + 1);
  if (name.size() <= 5 || name[0] != '.' || name.substr(name.size() - 4) != ".crc") return std::nullopt;
  return key.substr(0, slash + 1) + std::string(name.substr(1, name.size() - 5));
}

// Which cleanup step deletes a file of _delta_log/ (not _sidecars/) when the cutoff
// checkpoint is at `keep_from`; nullopt for files that stay.
enum class Step { kCheckpoint, kCompaction, kCommit, kChecksum };

std::optional<Step> ExpiredStep(const std::string& key, int64_t keep_from) {
  if (auto version = ChecksumFileVersion(key)) {
    return *version < keep_from ? std::optional<Step>(Step::kChecksum) : std::nullopt;
  }
  auto file = ParseLogFile(ObjectInfo{key, 0, 0});
  if (!file) return std::nullopt;
  switch (file->type) {
    case LogFileType::kCommit:
      return file->version < keep_from ? std::optional<Step>(Step::kCommit) : std::nullopt;
    case LogFileType::kClassicCheckpoint:
    case LogFileType::kMultiPartCheckpoint:
    case LogFileType::kV2Checkpoint:
      return file->version < keep_from ? std::optional<Step>(Step::kCheckpoint) : std::nullopt;
    case LogFileType::kCompaction:
      return file->version <= keep_from ? std::optional<Step>(Step::kCompaction) : std::nullopt;
  }
  return std::nullopt;
}

// Sidecar file names referenced by the checkpoints at or after `from_version`, listed
// afresh so that a checkpoint written since the cleanup started is counted.
Result<std::set<std::string>> ReferencedSidecars(ObjectStore& store, ParquetLogIO& io, int64_t from_version) {
  ASSIGN_OR_RETURN(LogListing listing, ListLog(store, from_version));
  std::set<std::string> names;
  for (const auto& checkpoint : listing.checkpoints) {
    // Multi-part checkpoints are V1 only and cannot reference sidecars.
    if (checkpoint.type == LogFileType::kMultiPartCheckpoint) continue;
    ASSIGN_OR_RETURN(std::vector<Action> actions, ReadCheckpointFiles(store, io, checkpoint));
    for (const auto& action : actions) {
      if (const auto* sidecar = std::get_if<Sidecar>(&action)) names.insert(SidecarFileName(*sidecar));
    }
  }
  return names;
}

}  // namespace

Result<int64_t> LogRetentionMs(const Metadata& metadata) {
  return DurationPropertyMs(metadata, "delta.logRetentionDuration", 30 * kDayMs);
}

Result<bool> ExpiredLogCleanupEnabled(const Metadata& metadata) {
  auto it = metadata.configuration.find("delta.enableExpiredLogCleanup");
  if (it == metadata.configuration.end()) return true;
  std::string value = it->second;
  std::transform(value.begin(), value.end(), value.begin(), [](unsigned char c) { return std::tolower(c); });
  if (value == "true") return true;
  if (value == "false") return false;
  return Status::InvalidArgument("delta.enableExpiredLogCleanup must be 'true' or 'false', got '" +
                                 it->second + "'");
}

Result<LogCleanupResult> CleanUpExpiredLogs(ObjectStore& store, const Metadata& metadata, int64_t now_ms,
                                            ParquetLogIO& io, const std::string& table_root) {
  const std::string where = table_root + ": cleaning up expired log files";
  LogCleanupResult result;
  auto enabled = ExpiredLogCleanupEnabled(metadata);
  if (!enabled.ok()) return enabled.status().WithContext(where);
  result.enabled = *enabled;
  if (!result.enabled) return result;
  auto retention_ms = LogRetentionMs(metadata);
  if (!retention_ms.ok()) return retention_ms.status().WithContext(where);
  result.cutoff_ms = StartOfUtcDay(now_ms - *retention_ms);

  auto listing = ListLog(store);
  if (!listing.ok()) return listing.status().WithContext(where);
  if (listing->empty()) return result;
  auto cutoff_commit = VersionAtTimestamp(store, *listing, result.cutoff_ms, table_root);
  if (!cutoff_commit.ok()) {
    // Every commit is younger than the cutoff: all of them are retained.
    if (cutoff_commit.status().IsNotFound()) return result;
    return cutoff_commit.status().WithContext(where);
  }
  auto cutoff_checkpoint =
      std::find_if(listing->checkpoints.rbegin(), listing->checkpoints.rend(),
                   [&](const CheckpointFiles& checkpoint) { return checkpoint.version <= *cutoff_commit; });
  if (cutoff_checkpoint == listing->checkpoints.rend()) return result;
  const int64_t keep_from = cutoff_checkpoint->version;
  result.oldest_kept_version = keep_from;

  auto listed = store.List(kLogFolder);
  if (!listed.ok()) return listed.status().WithContext(where);
  // Listing order is key order, so commits within a step go oldest first.
  std::map<Step, std::vector<std::string>> expired;
  std::vector<std::string> companions;  // of expired files, deleted after them
  std::vector<ObjectInfo> sidecars;
  std::vector<std::string> stale_temps;
  const int64_t grace_cutoff_ms = StartOfUtcDay(now_ms - kDayMs);
  for (const auto& object : *listed) {
    if (IsLocalTempFile(object.key)) {
      if (object.modification_time_ms < grace_cutoff_ms) stale_temps.push_back(object.key);
    } else if (object.key.rfind(kSidecarFolder, 0) == 0) {
      sidecars.push_back(object);
    } else if (auto base = HadoopCompanionOf(object.key)) {
      if (ExpiredStep(*base, keep_from)) companions.push_back(object.key);
    } else if (auto step = ExpiredStep(object.key, keep_from)) {
      expired[*step].push_back(object.key);
    }
  }
  auto remove = [&](const std::string& key) -> Status {
    RETURN_IF_ERROR_CTX(store.Delete(key), where + ": deleting " + key);
    result.deleted_keys.push_back(key);
    return Status::OK();
  };
  for (Step step : {Step::kCheckpoint, Step::kCompaction, Step::kCommit, Step::kChecksum}) {
    for (const auto& key : expired[step]) RETURN_IF_ERROR(remove(key));
  }
  for (const auto& key : companions) RETURN_IF_ERROR(remove(key));
  for (const auto& key : stale_temps) RETURN_IF_ERROR(remove(key));

  // Sidecars (and their companions) written before the grace cutoff that no remaining
  // checkpoint names. Finding the names reads every remaining checkpoint, so it is done
  // only when checkpoints were deleted (and with them, references); orphans of crashed
  // checkpoint writes go in such a run too.
  if (expired[Step::kCheckpoint].empty()) return result;
  std::vector<std::string> old_sidecars;
  for (const auto& object : sidecars) {
    if (object.modification_time_ms < grace_cutoff_ms) old_sidecars.push_back(object.key);
  }
  if (old_sidecars.empty()) return result;
  auto referenced = ReferencedSidecars(store, io, keep_from);
  if (!referenced.ok()) return referenced.status().WithContext(where + ": finding referenced sidecars");
  const size_t prefix = std::string(kSidecarFolder).size();
  for (const auto& key : old_sidecars) {
    std::optional<std::string> base = HadoopCompanionOf(key);
    if (referenced->count((base ? *base : key).substr(prefix))) continue;
    RETURN_IF_ERROR(remove(key));
  }
  return result;
}

}  // namespace basin::delta
