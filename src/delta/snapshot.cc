#include "delta/snapshot.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <future>
#include <span>
#include <thread>
#include <unordered_map>

#include "delta/checkpoint.h"
#include "delta/history.h"
#include "delta/log_segment.h"
#include "delta/log_tail.h"
#include "delta/paths.h"
#include "delta/protocol.h"

namespace basin::delta {

namespace {

// The newest protocol action in `actions` (log order), nullopt when there is none.
std::optional<Protocol> ProtocolIn(const std::vector<Action>& actions) {
  std::optional<Protocol> found;
  for (const auto& a : actions) {
    if (const auto* p = std::get_if<Protocol>(&a)) found = *p;
  }
  return found;
}

// How errors name a commit or compaction file: "<table> _delta_log/...json (version 3)".
std::string DescribeLogFile(const std::string& table_root, const LogFile& file) {
  std::string versions = file.end_version != file.version ? "versions " + std::to_string(file.version) +
                                                                ".." + std::to_string(file.end_version)
                                                          : "version " + std::to_string(file.version);
  return table_root + ": " + file.object.key + " (" + versions + ")";
}

// A lower bound for the length of an `add` line, to size replay's vectors from file sizes.
constexpr uint64_t kMinAddLineBytes = 160;

// Commits are read in pieces of this size: a large commit is never held whole.
constexpr uint64_t kReadPieceBytes = uint64_t{8} << 20;

// A log file that vanished between listing and reading is a broken log, not a missing table.
Status VanishedAsCorruption(const Status& status, const std::string& key, const std::string& where) {
  if (status.IsNotFound())
    return Status::Corruption(where + ": " + key + " vanished while the log was being read");
  return status.WithContext(where);
}

// The number of '\n' in `text`, by memchr (a byte loop is several times slower here).
size_t CountNewlines(std::string_view text) {
  size_t count = 0;
  const char* end = text.data() + text.size();
  for (const char* p = text.data(); p < end; p++) {
    p = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
    if (p == nullptr) break;
    count++;
  }
  return count;
}

// Lines below this size are parsed on one thread: starting threads costs more than it saves.
constexpr size_t kParallelParseBytes = size_t{1} << 20;

// ForEachAction over `lines` (whole lines, the first being line `first_line` of its file),
// with the JSON parsed on up to as many threads as the machine has cores when `lines` is
// large (a large commit is CPU-bound on parsing). `visit` is called on this thread, in
// order: the first part's actions as they are parsed, the other parts' once their threads
// are done. The first error in line order is returned.
Status ParseLines(std::string_view lines, const std::string& where, std::string_view needle,
                  const std::function<Status(Action&)>& visit, size_t first_line) {
  // Asked once: glibc reads it from /sys on every call, which a log of many small commits felt.
  static const size_t threads = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 8);
  if (threads == 1 || !needle.empty() || lines.size() < kParallelParseBytes) {
    return ForEachAction(lines, where, needle, visit, first_line);
  }
  struct Part {
    std::string_view lines;
    size_t first_line;
    std::future<Result<std::vector<Action>>> actions;
  };
  std::vector<Part> parts;
  size_t line = first_line;
  for (size_t begin = 0; begin < lines.size();) {
    size_t end = parts.size() + 1 == threads ? lines.size() : begin + lines.size() / threads;
    end = end >= lines.size() ? lines.size() : lines.find('\n', end);
    if (end == std::string_view::npos) end = lines.size();
    const std::string_view part = lines.substr(begin, end - begin);
    parts.push_back(Part{part, line, {}});
    line += CountNewlines(part) + 1;
    begin = end + 1;
  }
  for (size_t i = 1; i < parts.size(); i++) {
    const Part& part = parts[i];
    parts[i].actions = std::async(
        std::launch::async,
        [&where, part_lines = part.lines, part_line = part.first_line]() -> Result<std::vector<Action>> {
          std::vector<Action> actions;
          RETURN_IF_ERROR(ForEachAction(
              part_lines, where, "",
              [&](Action& a) {
                actions.push_back(std::move(a));
                return Status::OK();
              },
              part_line));
          return actions;
        });
  }
  // The other threads finish (the futures wait) before an error is returned.
  RETURN_IF_ERROR(ForEachAction(parts[0].lines, where, "", visit, parts[0].first_line));
  for (size_t i = 1; i < parts.size(); i++) {
    ASSIGN_OR_RETURN(std::vector<Action> actions, parts[i].actions.get());
    for (Action& a : actions) RETURN_IF_ERROR(visit(a));
  }
  return Status::OK();
}

// Calls `visit` with each action of the commit or compaction file `file`, in log order
// (only of lines containing `needle`, when it is not empty). `where` names the snapshot.
Status ForEachDeltaAction(ObjectStore& store, const LogFile& file, const std::string& table_root,
                          const std::string& where, std::string_view needle,
                          const std::function<Status(Action&)>& visit) {
  const std::string file_where = DescribeLogFile(table_root, file);
  const std::string& key = file.object.key;
  if (file.type == LogFileType::kCompaction) {
    // Writers (Databricks) list a compaction's actions newest first, not fully reconciled:
    // the first action per key is the one that holds. A reconciled file has one action per
    // key, so applying it in reverse is right for both.
    auto content = store.Get(key);
    if (!content.ok()) return VanishedAsCorruption(content.status(), key, where);
    ASSIGN_OR_RETURN(std::vector<Action> actions, ParseCommitLinesContaining(*content, file_where, needle));
    for (auto it = actions.rbegin(); it != actions.rend(); ++it) RETURN_IF_ERROR(visit(*it));
    return Status::OK();
  }
  const uint64_t size = file.object.size_bytes;
  if (size <= kReadPieceBytes) {
    auto content = store.Get(key);
    if (!content.ok()) return VanishedAsCorruption(content.status(), key, where);
    return ParseLines(*content, file_where, needle, visit, 1);
  }
  // Piece by piece: whole lines are parsed where they lie; a line cut at a piece's end is
  // carried over and completed from the next piece.
  std::string carry;
  size_t line = 1;  // the number of the first line not yet parsed
  auto parse = [&](std::string_view lines) -> Status {
    RETURN_IF_ERROR(ParseLines(lines, file_where, needle, visit, line));
    line += CountNewlines(lines) + 1;
    return Status::OK();
  };
  for (uint64_t offset = 0; offset < size;) {
    const uint64_t length = std::min(kReadPieceBytes, size - offset);
    auto piece = store.GetRange(key, offset, length);
    if (!piece.ok()) return VanishedAsCorruption(piece.status(), key, where);
    offset += length;
    std::string_view rest = *piece;
    const size_t last_newline = rest.rfind('\n');
    if (last_newline == std::string_view::npos) {
      carry.append(rest);  // a line longer than a piece
      continue;
    }
    if (!carry.empty()) {
      const size_t newline = rest.find('\n');
      carry.append(rest.substr(0, newline));
      RETURN_IF_ERROR(parse(carry));
      carry.clear();
      rest.remove_prefix(newline + 1);
    }
    const size_t end = rest.rfind('\n');
    if (end != std::string_view::npos) RETURN_IF_ERROR(parse(rest.substr(0, end)));
    carry.assign(end == std::string_view::npos ? rest : rest.substr(end + 1));
  }
  return carry.empty() ? Status::OK() : parse(carry);
}

// The newest protocol action among the commit and compaction files `files` (oldest
// first), reading only the lines that mention one, newest file first.
Result<std::optional<Protocol>> NewestProtocolIn(ObjectStore& store, const std::vector<LogFile>& files,
                                                 const std::string& table_root, const std::string& where) {
  for (auto it = files.rbegin(); it != files.rend(); ++it) {
    std::optional<Protocol> found;
    RETURN_IF_ERROR(ForEachDeltaAction(store, *it, table_root, where, "\"protocol\"", [&](Action& a) {
      if (auto* p = std::get_if<Protocol>(&a)) found = std::move(*p);
      return Status::OK();
    }));
    if (found) return found;
  }
  return std::optional<Protocol>();
}

// `failure` happened while reading the log; but a protocol Basin cannot read explains any
// failure to read what it governs, so that is reported instead when the log has one (the
// newest protocol of `files`, else `fallback`).
Status ProtocolErrorFirst(Status failure, ObjectStore& store, const std::vector<LogFile>& files,
                          const std::optional<Protocol>& fallback, const std::string& table_root,
                          const std::string& where) {
  auto newest = NewestProtocolIn(store, files, table_root, where);
  std::optional<Protocol> protocol = newest.ok() && *newest ? *newest : fallback;
  if (protocol) {
    if (Status unreadable = ValidateReadProtocol(*protocol, where); !unreadable.ok()) return unreadable;
  }
  return failure;
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

// The table state as actions are applied in log order (PROTOCOL.md "Action
// Reconciliation").
//
// File actions are collected as they come and reconciled once, in Finish(): the last action
// for a replay key decides whether its file is live (an add) and whether a tombstone is
// kept (a remove). Reconciling sorts the actions by key hash, so keys are built only where
// hashes meet: replaying a commit of 100,000 new files builds no index and no key.
class Replay {
 public:
  explicit Replay(bool keep_tombstones) : keep_tombstones_(keep_tombstones) {}

  // Room for `n` more file actions (an estimate: parts of adds are sized by it).
  void Reserve(size_t n) {
    events_.reserve(events_.size() + n);
    expected_ += n;
  }

  // Checkpoint removes are tombstones for VACUUM; they never hide a file of the checkpoint.
  void ApplyCheckpoint(std::vector<Action>& actions) {
    Reserve(actions.size());
    for (auto& a : actions) {
      if (auto* remove = std::get_if<RemoveFile>(&a)) {
        if (keep_tombstones_) Record(std::move(*remove), /*tombstone_only=*/true);
        continue;
      }
      Apply(a);
    }
  }

  void Apply(Action& a) {
    if (auto* add = std::get_if<AddFile>(&a)) {
      const size_t hash = ReplayKeyHash(add->path, add->deletion_vector);
      events_.push_back(Event{hash, events_.size(), Event::kAdd, num_adds_++});
      if (adds_.empty() || adds_.back().files.size() == FileList::kMaxChunkFiles) {
        const size_t room = std::clamp<size_t>(expected_ > num_adds_ ? expected_ - num_adds_ : 1, 1,
                                               FileList::kMaxChunkFiles);
        adds_.emplace_back();
        adds_.back().files.reserve(room);
        adds_.back().hashes.reserve(room);
      }
      adds_.back().files.push_back(std::move(*add));
      adds_.back().hashes.push_back(hash);
    } else if (auto* remove = std::get_if<RemoveFile>(&a)) {
      Record(std::move(*remove), /*tombstone_only=*/false);
    } else {
      state.Apply(a);
    }
  }

  // The live files and (when kept) the tombstones, in no particular order.
  void Finish(FileList* files, TombstoneList* tombstones) {
    std::sort(events_.begin(), events_.end(), [](const Event& a, const Event& b) {
      return a.hash != b.hash ? a.hash < b.hash : a.sequence < b.sequence;
    });
    std::vector<char> live(num_adds_, 0);
    std::vector<size_t> kept_removes;
    for (size_t begin = 0; begin < events_.size();) {
      size_t end = begin + 1;
      while (end < events_.size() && events_[end].hash == events_[begin].hash) end++;
      if (end - begin == 1) {
        Decide(std::span<const Event>(&events_[begin], 1), live, kept_removes);
      } else {
        DecideByKey(std::span<const Event>(events_.data() + begin, end - begin), live, kept_removes);
      }
      begin = end;
    }
    // Compacted in place (the files before the first dead one do not move), and the parts
    // become the list's chunks as they are: no second copy of the files.
    constexpr size_t kPart = FileList::kMaxChunkFiles;
    size_t kept = 0;
    for (size_t i = 0; i < num_adds_; i++) {
      if (!live[i]) continue;
      if (kept != i) {
        adds_[kept / kPart].files[kept % kPart] = std::move(adds_[i / kPart].files[i % kPart]);
        adds_[kept / kPart].hashes[kept % kPart] = adds_[i / kPart].hashes[i % kPart];
      }
      kept++;
    }
    adds_.resize((kept + kPart - 1) / kPart);
    if (!adds_.empty()) {
      FileList::HashedFiles& last = adds_.back();
      last.files.resize(kept - (adds_.size() - 1) * kPart);
      last.hashes.resize(last.files.size());
      // A snapshot keeps its chunks: room reserved from an estimate that went unused is
      // given back (a small table would otherwise hold room for thousands of files).
      if (last.files.capacity() > 2 * last.files.size() + 16) {
        last.files.shrink_to_fit();
        last.hashes.shrink_to_fit();
      }
    }
    *files = FileList::FromHashed(std::move(adds_));
    std::vector<RemoveFile> kept_tombstones;
    kept_tombstones.reserve(kept_removes.size());
    for (size_t i : kept_removes) kept_tombstones.push_back(std::move(removes_[i]));
    *tombstones = TombstoneList(std::move(kept_tombstones));
  }

  TableState state;

 private:
  struct Event {
    enum Kind : uint8_t { kAdd, kRemove, kTombstone };  // kTombstone: a checkpoint's remove
    size_t hash;
    size_t sequence;  // log order
    Kind kind;
    size_t index;  // into removes_, or the add's position in log order
  };

  void Record(RemoveFile remove, bool tombstone_only) {
    events_.push_back(Event{ReplayKeyHash(remove.path, remove.deletion_vector), events_.size(),
                            tombstone_only ? Event::kTombstone : Event::kRemove, removes_.size()});
    removes_.push_back(std::move(remove));
  }

  // `events`, in log order, all concern one key: the last add or remove decides whether the
  // file is live; the last action of any kind whether a tombstone is kept.
  void Decide(std::span<const Event> events, std::vector<char>& live,
              std::vector<size_t>& kept_removes) const {
    for (auto it = events.rbegin(); it != events.rend(); ++it) {
      if (it->kind == Event::kTombstone) continue;
      if (it->kind == Event::kAdd) live[it->index] = 1;
      break;
    }
    if (keep_tombstones_ && events.back().kind != Event::kAdd) kept_removes.push_back(events.back().index);
  }

  // Events whose keys share a hash, split by key.
  void DecideByKey(std::span<const Event> events, std::vector<char>& live,
                   std::vector<size_t>& kept_removes) const {
    std::vector<std::pair<std::string, const Event*>> keyed;
    keyed.reserve(events.size());
    for (const Event& e : events) {
      keyed.emplace_back(e.kind == Event::kAdd ? Add(e.index).ReplayKey() : removes_[e.index].ReplayKey(),
                         &e);
    }
    std::vector<bool> done(keyed.size(), false);
    std::vector<Event> same_key;
    for (size_t i = 0; i < keyed.size(); i++) {
      if (done[i]) continue;
      same_key.clear();
      for (size_t j = i; j < keyed.size(); j++) {
        if (done[j] || keyed[j].first != keyed[i].first) continue;
        same_key.push_back(*keyed[j].second);
        done[j] = true;
      }
      Decide(same_key, live, kept_removes);
    }
  }

  const AddFile& Add(size_t index) const {
    return adds_[index / FileList::kMaxChunkFiles].files[index % FileList::kMaxChunkFiles];
  }

  const bool keep_tombstones_;
  // The adds in log order, in parts of FileList::kMaxChunkFiles (the last may be short)
  // that become the snapshot's chunks.
  std::vector<FileList::HashedFiles> adds_;
  size_t num_adds_ = 0;
  size_t expected_ = 0;  // file actions Reserve() was told of
  std::vector<RemoveFile> removes_;
  std::vector<Event> events_;
};

// Drops `snapshot`'s tombstones when they outnumber its limit (kOverLimit).
void LimitTombstones(Snapshot& snapshot) {
  if (snapshot.tombstone_state != TombstoneState::kKept || snapshot.tombstone_limit == 0 ||
      snapshot.tombstones.size() <= snapshot.tombstone_limit) {
    return;
  }
  snapshot.tombstones = TombstoneList();
  snapshot.tombstone_state = TombstoneState::kOverLimit;
}

}  // namespace

// A snapshot's commit time is its newest commit's.
int64_t CommitTimestampMs(const Metadata& metadata, const std::optional<CommitInfo>& info,
                          int64_t file_time_ms) {
  if (ConfigIsTrue(metadata, "delta.enableInCommitTimestamps") && info && info->in_commit_timestamp) {
    return *info->in_commit_timestamp;
  }
  return file_time_ms;
}

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

  // The protocol decides whether anything else can be read: when reading fails, a
  // protocol Basin cannot read is the error reported (ProtocolErrorFirst), and otherwise
  // the newest protocol is checked before the snapshot is returned.
  Replay replay(options.keep_tombstones);
  std::optional<Protocol> checkpoint_protocol;
  if (segment.checkpoint) {
    auto checkpoint_actions_or = ReadCheckpointFiles(*store, io, *segment.checkpoint);
    if (!checkpoint_actions_or.ok()) {
      return ProtocolErrorFirst(checkpoint_actions_or.status().WithContext(where), *store, segment.deltas,
                                std::nullopt, table_root, where);
    }
    std::vector<Action> checkpoint_actions = std::move(checkpoint_actions_or).value();
    checkpoint_protocol = ProtocolIn(checkpoint_actions);
    std::vector<Sidecar> sidecars;
    for (const auto& a : checkpoint_actions) {
      if (const auto* s = std::get_if<Sidecar>(&a)) sidecars.push_back(*s);
    }
    if (!sidecars.empty()) {
      if (Status read = ReadSidecars(*store, io, sidecars, &checkpoint_actions); !read.ok()) {
        return ProtocolErrorFirst(read.WithContext(where), *store, segment.deltas, checkpoint_protocol,
                                  table_root, where);
      }
    }
    replay.ApplyCheckpoint(checkpoint_actions);
  }

  // Commits are applied as they are parsed: a large commit's actions are never all held.
  // Room for their files up front (an add takes a few hundred bytes of JSON; reserving
  // address space that stays unused costs nothing), so that no file is moved as the
  // vector grows.
  uint64_t delta_bytes = 0;
  for (const LogFile& file : segment.deltas) delta_bytes += file.object.size_bytes;
  replay.Reserve(static_cast<size_t>(delta_bytes / kMinAddLineBytes));
  std::optional<Protocol> protocol;
  for (const LogFile& file : segment.deltas) {
    replay.state.StartCommit();
    Status applied = ForEachDeltaAction(*store, file, table_root, where, "", [&](Action& a) {
      if (auto* p = std::get_if<Protocol>(&a)) {
        protocol = std::move(*p);
      } else {
        replay.Apply(a);
      }
      return Status::OK();
    });
    if (!applied.ok()) {
      return ProtocolErrorFirst(applied, *store, segment.deltas, checkpoint_protocol, table_root, where);
    }
  }
  if (!protocol) protocol = std::move(checkpoint_protocol);
  if (!protocol) return Status::Corruption(where + ": the log has no protocol action");
  RETURN_IF_ERROR(ValidateReadProtocol(*protocol, where));
  if (!replay.state.metadata) return Status::Corruption(where + ": the log has no metaData action");

  auto snapshot = std::make_shared<Snapshot>();
  snapshot->version = segment.version;
  snapshot->protocol = std::move(*protocol);
  snapshot->metadata = std::move(*replay.state.metadata);
  auto schema = ParseSchema(snapshot->metadata.schema_string);
  if (!schema.ok()) return schema.status().WithContext(where);
  snapshot->schema = std::move(*schema);
  replay.Finish(&snapshot->files, &snapshot->tombstones);
  snapshot->tombstone_limit = options.tombstone_limit;
  snapshot->tombstone_state = options.keep_tombstones ? TombstoneState::kKept : TombstoneState::kNotKept;
  LimitTombstones(*snapshot);
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

// Whether a commit file is the one a snapshot read (a table written again has others).
bool SameObject(const ObjectInfo& a, const ObjectInfo& b) {
  return a.size_bytes == b.size_bytes && a.modification_time_ms == b.modification_time_ms;
}

// The commits after `version`, found by listing the log; nullopt when what was read at
// `version` cannot be brought forward (its commit is gone or changed, or newer commits
// were cleaned up).
Result<std::optional<std::vector<LogFile>>> ListCommitsAfter(ObjectStore& store,
                                                             const std::string& table_root, int64_t version,
                                                             const std::optional<ObjectInfo>& commit_file) {
  using Found = std::optional<std::vector<LogFile>>;
  auto listed = ListLog(store, version);
  if (!listed.ok()) return listed.status().WithContext("listing the Delta log of " + table_root);
  const LogListing& listing = *listed;
  // The log must still hold the commit that was read, unchanged: otherwise it was cleaned
  // up, or the table was deleted and written again.
  auto same = listing.commits.find(version);
  if (commit_file && (same == listing.commits.end() || !SameObject(same->second, *commit_file))) {
    return Found();
  }
  std::vector<LogFile> commits;
  if (listing.empty() || listing.latest_version() <= version) return Found(std::move(commits));
  if (!commit_file) return Found();  // nothing to check the log against
  for (int64_t v = version + 1; v <= listing.latest_version(); v++) {
    auto it = listing.commits.find(v);
    if (it == listing.commits.end()) return Found();  // cleaned up: a checkpoint covers it
    commits.push_back(LogFile{LogFileType::kCommit, v, v, 0, 0, it->second});
  }
  return Found(std::move(commits));
}

}  // namespace

// As ListCommitsAfter, asking for each next commit rather than listing the log (a listing
// costs in proportion to the log's files: thousands, for a table committed to often).
// Versions are contiguous and log cleanup deletes the oldest first, so while commit
// `version` is there unchanged, a missing next commit means there is none, unless
// _last_checkpoint names a newer version (a cleanup that deleted out of order): then the
// log is listed.
Result<std::optional<std::vector<LogFile>>> CommitFilesAfter(ObjectStore& store,
                                                             const std::string& table_root, int64_t version,
                                                             const std::optional<ObjectInfo>& commit_file) {
  using Found = std::optional<std::vector<LogFile>>;
  if (!commit_file) return ListCommitsAfter(store, table_root, version, commit_file);
  auto head = [&](int64_t v) -> Result<std::optional<ObjectInfo>> {
    auto info = store.Head(CommitKey(v));
    if (info.ok()) return std::optional<ObjectInfo>(std::move(*info));
    if (info.status().IsNotFound()) return std::optional<ObjectInfo>();
    return info.status().WithContext("reading the Delta log of " + table_root);
  };
  ASSIGN_OR_RETURN(std::optional<ObjectInfo> own, head(version));
  if (!own || !SameObject(*own, *commit_file)) return Found();
  std::vector<LogFile> commits;
  for (int64_t v = version + 1;; v++) {
    ASSIGN_OR_RETURN(std::optional<ObjectInfo> next, head(v));
    if (!next) break;
    commits.push_back(LogFile{LogFileType::kCommit, v, v, 0, 0, std::move(*next)});
  }
  if (commits.empty()) {
    std::optional<int64_t> checkpointed = ReadLastCheckpointHint(store);
    if (checkpointed && *checkpointed > version)
      return ListCommitsAfter(store, table_root, version, commit_file);
  }
  return Found(std::move(commits));
}

Status ForEachCommitAction(ObjectStore& store, const LogFile& file, const std::string& table_root,
                           const std::function<Status(Action&)>& visit) {
  return ForEachDeltaAction(store, file, table_root, table_root + " version " + std::to_string(file.version),
                            "", visit);
}

Result<std::shared_ptr<const Snapshot>> UpdateSnapshot(std::shared_ptr<const Snapshot> snapshot,
                                                       ParquetLogIO& io) {
  const Snapshot& old = *snapshot;
  auto reload = [&]() -> Result<std::shared_ptr<const Snapshot>> {
    SnapshotOptions options;
    options.keep_tombstones = old.tombstone_state != TombstoneState::kNotKept;
    options.tombstone_limit = old.tombstone_limit;
    ASSIGN_OR_RETURN(std::shared_ptr<Snapshot> fresh, LoadSnapshot(old.store, old.table_root, io, options));
    return std::shared_ptr<const Snapshot>(std::move(fresh));
  };
  ASSIGN_OR_RETURN(std::optional<std::vector<LogFile>> found,
                   CommitFilesAfter(*old.store, old.table_root, old.version, old.commit_file));
  if (!found) return reload();
  const std::vector<LogFile>& commits = *found;
  if (commits.empty()) return snapshot;
  const int64_t latest = commits.back().version;
  const std::string where = old.table_root + " version " + std::to_string(latest);
  std::optional<Protocol> protocol;  // the newest of the new commits, checked once they are read

  // Replay the new commits on their own; then one pass over the old files.
  TableState state;
  state.txns = old.set_transactions;
  state.domains = old.domain_metadata;
  std::unordered_map<std::string, size_t> touched;  // keys the new commits add or remove, with their hashes
  std::unordered_map<std::string, AddFile> added;
  std::unordered_map<std::string, RemoveFile> removed;
  for (const LogFile& file : commits) {
    state.StartCommit();
    Status applied = ForEachDeltaAction(*old.store, file, old.table_root, where, "", [&](Action& a) {
      if (auto* add = std::get_if<AddFile>(&a)) {
        std::string key = add->ReplayKey();
        touched.emplace(key, ReplayKeyHash(add->path, add->deletion_vector));
        removed.erase(key);
        added.insert_or_assign(std::move(key), std::move(*add));
      } else if (auto* remove = std::get_if<RemoveFile>(&a)) {
        std::string key = remove->ReplayKey();
        touched.emplace(key, ReplayKeyHash(remove->path, remove->deletion_vector));
        added.erase(key);
        if (old.tombstone_state == TombstoneState::kKept) {
          removed.insert_or_assign(std::move(key), std::move(*remove));
        }
      } else if (auto* p = std::get_if<Protocol>(&a)) {
        protocol = std::move(*p);
      } else {
        state.Apply(a);
      }
      return Status::OK();
    });
    if (!applied.ok())
      return ProtocolErrorFirst(applied, *old.store, commits, std::nullopt, old.table_root, where);
  }
  if (protocol) RETURN_IF_ERROR(ValidateReadProtocol(*protocol, where));

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
  // Their old entries go; chunks of files the commits did not touch are shared, not copied.
  std::vector<KeyToRemove> replaced;
  replaced.reserve(touched.size());
  for (auto& [key, hash] : touched) replaced.push_back(KeyToRemove{hash, key});
  std::vector<AddFile> new_files;
  new_files.reserve(added.size());
  for (auto& [key, add] : added) new_files.push_back(std::move(add));
  std::vector<uint32_t> kept;  // old indexes of the files next->files starts with
  next->files = old.files.Updated(replaced, std::move(new_files), &kept);
  // Statistics parsed for the old files carry over (same schema): only new files are parsed.
  if (const FileStatsIndex* parsed = old.stats_cache.IfBuilt(); parsed != nullptr && !state.metadata) {
    auto extended = FileStatsIndex::Extend(*parsed, FileStatsIndex::MakeLayout(next->schema, next->metadata),
                                           kept, next->files);
    if (extended) next->stats_cache.Seed(std::move(extended));
  }
  next->tombstone_state = old.tombstone_state;
  next->tombstone_limit = old.tombstone_limit;
  if (old.tombstone_state == TombstoneState::kKept) {
    std::vector<RemoveFile> new_tombstones;
    new_tombstones.reserve(removed.size());
    for (auto& [key, remove] : removed) new_tombstones.push_back(std::move(remove));
    next->tombstones = old.tombstones.Updated(replaced, std::move(new_tombstones));
    LimitTombstones(*next);
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
