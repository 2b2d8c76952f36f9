#include "delta/log_segment.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>

#include "common/text_scan.h"

namespace basin::delta {

std::string CommitKey(int64_t version) {
  char name[64];
  std::snprintf(name, sizeof(name), "%s%020lld.json", kLogFolder, static_cast<long long>(version));
  return name;
}

std::optional<LogFile> ParseLogFile(const ObjectInfo& object) {
  std::string_view name = object.key;
  if (!TakeLiteral(name, kLogFolder) || name.find('/') != std::string_view::npos) return std::nullopt;
  LogFile file;
  file.object = object;
  if (!TakeDigits(name, 20, &file.version)) return std::nullopt;
  file.end_version = file.version;
  if (name == ".json") {
    file.type = LogFileType::kCommit;
    return file;
  }
  if (TakeLiteral(name, ".checkpoint.")) {
    if (name == "parquet") {
      file.type = LogFileType::kClassicCheckpoint;
      return file;
    }
    std::string_view rest = name;
    int64_t part = 0, parts = 0;
    if (TakeDigits(rest, 10, &part) && TakeLiteral(rest, ".") && TakeDigits(rest, 10, &parts) &&
        rest == ".parquet") {
      if (part < 1 || part > parts || parts > INT32_MAX) return std::nullopt;
      file.type = LogFileType::kMultiPartCheckpoint;
      file.part = static_cast<int32_t>(part);
      file.num_parts = static_cast<int32_t>(parts);
      return file;
    }
    size_t dot = name.find('.');
    if (dot == 0 || dot == std::string_view::npos) return std::nullopt;
    std::string_view ext = name.substr(dot);
    if (ext != ".json" && ext != ".parquet") return std::nullopt;
    file.type = LogFileType::kV2Checkpoint;
    return file;
  }
  if (TakeLiteral(name, ".") && TakeDigits(name, 20, &file.end_version) && name == ".compacted.json" &&
      file.end_version > file.version) {
    file.type = LogFileType::kCompaction;
    return file;
  }
  return std::nullopt;
}

int64_t LogListing::latest_version() const {
  int64_t latest = -1;
  if (!commits.empty()) latest = commits.rbegin()->first;
  if (!checkpoints.empty()) latest = std::max(latest, checkpoints.back().version);
  return latest;
}

int64_t LogListing::earliest_version() const {
  bool from_zero = commits.count(0) > 0 || std::any_of(compactions.begin(), compactions.end(),
                                                       [](const LogFile& f) { return f.version == 0; });
  if (from_zero) return 0;
  if (!checkpoints.empty()) return checkpoints.front().version;
  return commits.begin()->first;
}

Result<LogListing> ListLog(ObjectStore& store, std::optional<int64_t> from_version) {
  // Every file of version N sorts after the bare "<20 digits>" key prefix of N.
  std::string start_after;
  if (from_version) start_after = CommitKey(*from_version).substr(0, std::string(kLogFolder).size() + 20);
  ASSIGN_OR_RETURN(auto objects, store.ListAfter(kLogFolder, start_after));
  LogListing listing;
  // Multi-part checkpoint parts grouped by (version, part count): only complete sets count.
  std::map<std::pair<int64_t, int32_t>, std::map<int32_t, ObjectInfo>> multi_part;
  for (const auto& object : objects) {
    auto file = ParseLogFile(object);
    if (!file) continue;
    switch (file->type) {
      case LogFileType::kCommit:
        listing.commits.emplace(file->version, file->object);
        break;
      case LogFileType::kClassicCheckpoint:
      case LogFileType::kV2Checkpoint:
        listing.checkpoints.push_back(CheckpointFiles{file->version, file->type, {file->object}});
        break;
      case LogFileType::kMultiPartCheckpoint:
        multi_part[{file->version, file->num_parts}].emplace(file->part, file->object);
        break;
      case LogFileType::kCompaction:
        listing.compactions.push_back(*file);
        break;
    }
  }
  for (auto& [id, parts] : multi_part) {
    if (parts.size() != static_cast<size_t>(id.second)) continue;
    CheckpointFiles checkpoint{id.first, LogFileType::kMultiPartCheckpoint, {}};
    for (auto& [part, object] : parts) checkpoint.files.push_back(std::move(object));
    listing.checkpoints.push_back(std::move(checkpoint));
  }
  // Ascending by version; at one version, multi-part ones first so that a single-file
  // checkpoint (fewer reads) is the one picked.
  std::stable_sort(listing.checkpoints.begin(), listing.checkpoints.end(),
                   [](const CheckpointFiles& a, const CheckpointFiles& b) {
                     if (a.version != b.version) return a.version < b.version;
                     return a.files.size() > b.files.size();
                   });
  return listing;
}

Result<LogSegment> BuildLogSegment(const LogListing& listing, std::optional<int64_t> version,
                                   const std::string& table) {
  if (listing.empty()) return Status::NotFound(table + ": no Delta log (no commits in _delta_log)");
  int64_t latest = listing.latest_version();
  int64_t earliest = listing.earliest_version();
  int64_t target = version.value_or(latest);
  if (target < earliest || target > latest) {
    return Status::NotFound(table + ": version " + std::to_string(target) +
                            " is not available: the log holds versions " + std::to_string(earliest) + ".." +
                            std::to_string(latest));
  }
  LogSegment segment;
  segment.version = target;
  // The newest checkpoint at or below the target.
  auto newest = std::find_if(listing.checkpoints.rbegin(), listing.checkpoints.rend(),
                             [&](const CheckpointFiles& checkpoint) { return checkpoint.version <= target; });
  if (newest != listing.checkpoints.rend()) segment.checkpoint = *newest;
  int64_t next = segment.checkpoint ? segment.checkpoint->version + 1 : 0;
  while (next <= target) {
    // The longest compaction starting here that stays within the segment.
    const LogFile* compaction = nullptr;
    for (const auto& c : listing.compactions) {
      if (c.version == next && c.end_version <= target &&
          (compaction == nullptr || c.end_version > compaction->end_version)) {
        compaction = &c;
      }
    }
    if (compaction != nullptr) {
      segment.deltas.push_back(*compaction);
      next = compaction->end_version + 1;
      continue;
    }
    auto commit = listing.commits.find(next);
    if (commit == listing.commits.end()) {
      return Status::Corruption(table + ": the Delta log is missing version " + std::to_string(next) + " (" +
                                CommitKey(next) + ") needed to reconstruct version " +
                                std::to_string(target));
    }
    segment.deltas.push_back(LogFile{LogFileType::kCommit, next, next, 0, 0, commit->second});
    next++;
  }
  if (auto last = listing.commits.find(target); last != listing.commits.end())
    segment.last_commit = last->second;
  return segment;
}

std::optional<int64_t> ReadLastCheckpointHint(ObjectStore& store) {
  auto content = store.Get(std::string(kLogFolder) + "_last_checkpoint");
  if (!content.ok()) return std::nullopt;
  auto hint = nlohmann::json::parse(*content, nullptr, /*allow_exceptions=*/false);
  if (!hint.is_object()) return std::nullopt;
  auto version = hint.find("version");
  if (version == hint.end() || !version->is_number_integer() || version->get<int64_t>() < 0)
    return std::nullopt;
  return version->get<int64_t>();
}

Result<LogListing> ListLogForLatest(ObjectStore& store) {
  if (std::optional<int64_t> hint = ReadLastCheckpointHint(store)) {
    ASSIGN_OR_RETURN(LogListing from_hint, ListLog(store, *hint));
    bool holds_hinted_checkpoint = std::any_of(from_hint.checkpoints.begin(), from_hint.checkpoints.end(),
                                               [&](const CheckpointFiles& c) { return c.version == *hint; });
    if (holds_hinted_checkpoint) return from_hint;
  }
  return ListLog(store);
}

}  // namespace basin::delta
