#include "delta/history.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <optional>
#include <vector>

#include "delta/snapshot.h"
#include "delta/temporal.h"

namespace basin::delta {

namespace {

constexpr size_t kCommitInfoProbeBytes = size_t{64} * 1024;

}  // namespace

Result<int64_t> ParseTimestampMs(std::string_view text) {
  std::string_view s = text;
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  std::optional<int64_t> micros = ParseTimestampMicros(s);
  if (!micros) {
    return Status::InvalidArgument("cannot parse timestamp '" + std::string(text) +
                                   "': expected 'YYYY-MM-DD', 'YYYY-MM-DD HH:MM:SS[.ffffff]' or ISO-8601");
  }
  return *micros >= 0 ? *micros / 1000 : -((-*micros + 999) / 1000);
}

std::string FormatTimestampMs(int64_t ms) {
  int64_t days = ms >= 0 ? ms / 86400000 : -((-ms + 86399999) / 86400000);
  int64_t rem = ms - days * 86400000;
  char buf[128];
  std::snprintf(buf, sizeof(buf), "%s %02lld:%02lld:%02lld.%03lld UTC", FormatDate(days).c_str(),
                static_cast<long long>(rem / 3600000), static_cast<long long>(rem / 60000 % 60),
                static_cast<long long>(rem / 1000 % 60), static_cast<long long>(rem % 1000));
  return buf;
}

Result<std::optional<CommitInfo>> FindCommitInfo(std::string_view content, const std::string& where) {
  ASSIGN_OR_RETURN(auto actions, ParseCommitLinesContaining(content, where, "\"commitInfo\""));
  for (auto& action : actions) {
    if (auto* info = std::get_if<CommitInfo>(&action)) return std::optional<CommitInfo>(std::move(*info));
  }
  return std::optional<CommitInfo>();
}

Result<std::optional<CommitInfo>> ReadCommitInfo(ObjectStore& store, const ObjectInfo& object) {
  if (object.size_bytes > kCommitInfoProbeBytes) {
    // Writers put commitInfo first (in-commit timestamps require it), so the head of a
    // large commit usually answers.
    ASSIGN_OR_RETURN(std::string head, store.GetRange(object.key, 0, kCommitInfoProbeBytes));
    size_t last_newline = head.rfind('\n');
    if (last_newline != std::string::npos) {
      ASSIGN_OR_RETURN(auto info, FindCommitInfo(std::string_view(head).substr(0, last_newline), object.key));
      if (info) return info;
    }
  }
  ASSIGN_OR_RETURN(std::string content, store.Get(object.key));
  return FindCommitInfo(content, object.key);
}

Result<int64_t> VersionAtTimestamp(ObjectStore& store, const LogListing& listing, int64_t timestamp_ms,
                                   const std::string& table) {
  if (listing.empty()) return Status::NotFound(table + ": no Delta log (no commits in _delta_log)");
  std::vector<std::pair<int64_t, ObjectInfo>> commits;
  for (const auto& [version, object] : listing.commits) {
    if (version >= listing.earliest_version()) commits.emplace_back(version, object);
  }
  if (commits.empty()) return Status::NotFound(table + ": no commit files to resolve a timestamp against");

  // In-commit timestamps, read lazily: binary searches touch O(log n) commit files.
  std::map<size_t, std::optional<int64_t>> ict_cache;
  auto ict = [&](size_t i) -> Result<std::optional<int64_t>> {
    if (auto it = ict_cache.find(i); it != ict_cache.end()) return it->second;
    ASSIGN_OR_RETURN(auto info, ReadCommitInfo(store, commits[i].second));
    std::optional<int64_t> value = info ? info->in_commit_timestamp : std::nullopt;
    ict_cache[i] = value;
    return value;
  };

  // Once enabled, every commit has an in-commit timestamp: find where that suffix starts.
  size_t first_ict = commits.size();
  ASSIGN_OR_RETURN(auto latest_ict, ict(commits.size() - 1));
  if (latest_ict) {
    size_t lo = 0, hi = commits.size() - 1;
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      ASSIGN_OR_RETURN(auto v, ict(mid));
      if (v) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    first_ict = lo;
  }
  std::vector<int64_t> mtimes(first_ict);
  for (size_t i = 0; i < first_ict; i++) {
    mtimes[i] = commits[i].second.modification_time_ms;
    if (i > 0) mtimes[i] = std::max(mtimes[i], mtimes[i - 1] + 1);
  }
  auto commit_time = [&](size_t i) -> Result<int64_t> {
    if (i < first_ict) return mtimes[i];
    ASSIGN_OR_RETURN(auto v, ict(i));
    return v.value_or(commits[i].second.modification_time_ms);
  };

  ASSIGN_OR_RETURN(int64_t earliest_time, commit_time(0));
  if (timestamp_ms < earliest_time) {
    return Status::NotFound(table + ": timestamp " + FormatTimestampMs(timestamp_ms) +
                            " is before the earliest available commit (version " +
                            std::to_string(commits[0].first) + " at " + FormatTimestampMs(earliest_time) +
                            ")");
  }
  // The last index whose time is <= timestamp_ms.
  size_t lo = 0, hi = commits.size() - 1;
  while (lo < hi) {
    size_t mid = lo + (hi - lo + 1) / 2;
    ASSIGN_OR_RETURN(int64_t t, commit_time(mid));
    if (t <= timestamp_ms) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  // A checkpoint-only latest version (commit file already cleaned up) is newer still.
  if (lo == commits.size() - 1) return listing.latest_version();
  return commits[lo].first;
}

Result<std::vector<CommitSummary>> ReadHistory(const std::shared_ptr<ObjectStore>& store, size_t limit) {
  ASSIGN_OR_RETURN(LogListing listing, ListLog(*store));
  // Modification times made monotonic, as time travel uses them, so that history shows the
  // times a `timestamp =>` query resolves against.
  std::map<int64_t, int64_t> commit_times;
  std::optional<int64_t> previous;
  for (const auto& [version, object] : listing.commits) {
    int64_t time =
        previous ? std::max(object.modification_time_ms, *previous + 1) : object.modification_time_ms;
    commit_times[version] = time;
    previous = time;
  }
  std::vector<CommitSummary> out;
  for (auto it = listing.commits.rbegin(); it != listing.commits.rend(); ++it) {
    if (limit != 0 && out.size() >= limit) break;
    CommitSummary summary;
    summary.version = it->first;
    summary.timestamp_ms = commit_times[it->first];
    ASSIGN_OR_RETURN(auto info, ReadCommitInfo(*store, it->second));
    if (info) {
      if (info->in_commit_timestamp) summary.timestamp_ms = *info->in_commit_timestamp;
      summary.operation = info->operation;
      const auto& raw = info->raw;
      if (auto p = raw.find("operationParameters"); p != raw.end()) summary.operation_parameters = *p;
      if (auto m = raw.find("operationMetrics"); m != raw.end()) summary.operation_metrics = *m;
      if (auto e = raw.find("engineInfo"); e != raw.end() && e->is_string())
        summary.engine_info = e->get<std::string>();
      if (auto b = raw.find("isBlindAppend"); b != raw.end() && b->is_boolean())
        summary.is_blind_append = b->get<bool>();
    }
    out.push_back(std::move(summary));
  }
  return out;
}

}  // namespace basin::delta
