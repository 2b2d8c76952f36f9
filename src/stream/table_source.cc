#include "stream/table_source.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <string>
#include <utility>

#include "commands/table_features.h"
#include "delta/actions.h"
#include "delta/history.h"
#include "delta/log_segment.h"
#include "sql/session_context.h"

namespace basin::stream {
namespace {

using json = nlohmann::json;

// A batch's entry as the session reads it, and the table it is of.
struct PlannedRead {
  std::string location;
  std::string table;
  sql::TableStreamRead read;
};

// `entry` (offsets/<N>.json's source entry) read; Corruption naming `where` when it is not
// a table source's.
Result<PlannedRead> ReadEntry(const json& entry, const std::string& where) {
  auto bad = [&] {
    return Status::Corruption(where +
                              ": the source is not a table source with a location and snapshotVersion, "
                              "or startVersion and endVersion");
  };
  auto integer = [&](const char* key) -> std::optional<int64_t> {
    if (!entry.contains(key) || !entry[key].is_number_integer()) return std::nullopt;
    return entry[key].get<int64_t>();
  };
  if (!entry.is_object() || entry.value("kind", "") != "table" || !entry.contains("location") ||
      !entry["location"].is_string()) {
    return bad();
  }
  PlannedRead planned;
  planned.location = entry["location"].get<std::string>();
  if (entry.contains("table") && entry["table"].is_string())
    planned.table = entry["table"].get<std::string>();
  if (std::optional<int64_t> snapshot = integer("snapshotVersion")) {
    planned.read.kind = sql::TableStreamRead::Kind::kSnapshot;
    planned.read.end_version = *snapshot;
    return planned;
  }
  std::optional<int64_t> start = integer("startVersion"), end = integer("endVersion");
  if (!start || !end) return bad();
  planned.read.kind = entry.value("changes", false) ? sql::TableStreamRead::Kind::kChanges
                                                    : sql::TableStreamRead::Kind::kAppends;
  planned.read.start_version = *start;
  planned.read.end_version = *end;
  planned.read.skip_change_commits = entry.value("skipChangeCommits", false);
  return planned;
}

// STREAM(t, ...)'s options.
struct TableOptions {
  std::optional<int64_t> starting_version;        // startingVersion => n
  bool starting_latest = false;                   // startingVersion => 'latest'
  std::optional<std::string> starting_timestamp;  // startingTimestamp => '2026-12-01 10:00:00'
  bool skip_change_commits = false;               // skipChangeCommits => true
  std::optional<int64_t> max_files;               // maxFilesPerTrigger => n
  std::optional<int64_t> max_bytes;               // maxBytesPerTrigger => '512mb' (or a byte count)

  bool starts_later() const { return starting_version || starting_latest || starting_timestamp; }
};

std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

std::optional<int64_t> NonNegativeInteger(std::string_view text) {
  int64_t value = -1;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 0) return std::nullopt;
  return value;
}

// The text of the SQL string literal `value` ('it''s' is it's); nullopt when it is not one.
std::optional<std::string> StringLiteral(std::string_view value) {
  if (value.size() < 2 || value.front() != '\'' || value.back() != '\'') return std::nullopt;
  std::string text;
  for (size_t i = 1; i + 1 < value.size(); i++) {
    if (value[i] == '\'' && value[++i] != '\'') return std::nullopt;
    text += value[i];
  }
  return text;
}

// `options` read; InvalidArgument naming the option for one Basin does not know or a value
// it cannot take.
Result<TableOptions> ReadTableOptions(const std::vector<sql::grammar::StreamOption>& options,
                                      const std::string& where) {
  TableOptions out;
  for (const sql::grammar::StreamOption& option : options) {
    const std::string name = Lower(option.name);
    const std::string value = Lower(option.value);
    auto bad = [&](const std::string& wanted) {
      return Status::InvalidArgument(where + ": STREAM option " + option.name + " takes " + wanted +
                                     ", not " + option.value);
    };
    if (name == "startingversion") {
      out.starting_latest = value == "'latest'";
      out.starting_version = NonNegativeInteger(value);
      if (!out.starting_latest && !out.starting_version)
        return bad("a table version (0 or more) or 'latest'");
    } else if (name == "startingtimestamp") {
      out.starting_timestamp = StringLiteral(option.value);
      if (!out.starting_timestamp || !delta::ParseTimestampMs(*out.starting_timestamp).ok()) {
        return bad("a timestamp string ('2026-12-01 10:00:00')");
      }
    } else if (name == "skipchangecommits") {
      if (value != "true" && value != "false") return bad("true or false");
      out.skip_change_commits = value == "true";
    } else if (name == "maxfilespertrigger") {
      out.max_files = NonNegativeInteger(value);
      if (!out.max_files || *out.max_files == 0) return bad("a number of files (1 or more)");
    } else if (name == "maxbytespertrigger") {
      std::optional<std::string> text = StringLiteral(option.value);
      out.max_bytes = commands::ParseByteSize(text ? *text : option.value);
      if (!out.max_bytes) return bad("a size in bytes ('512mb', '1g' or a byte count)");
    } else {
      return Status::InvalidArgument(where + ": STREAM(table) has no option " + option.name +
                                     " (it takes startingVersion, startingTimestamp, skipChangeCommits, "
                                     "maxFilesPerTrigger and maxBytesPerTrigger)");
    }
  }
  if ((out.starting_version || out.starting_latest) && out.starting_timestamp) {
    return Status::InvalidArgument(where +
                                   ": STREAM(table) takes startingVersion or startingTimestamp, not both");
  }
  return out;
}

// The first version committed at or after `timestamp` (one past the latest when every
// commit is older), as Delta's startingTimestamp reads it.
Result<int64_t> FirstVersionAtOrAfter(const delta::Snapshot& latest, const std::string& timestamp,
                                      const std::string& where) {
  ASSIGN_OR_RETURN(int64_t ms, delta::ParseTimestampMs(timestamp));
  ASSIGN_OR_RETURN(delta::LogListing listing, delta::ListLog(*latest.store));
  Result<int64_t> before = delta::VersionAtTimestamp(*latest.store, listing, ms - 1, where);
  if (before.ok()) return *before + 1;
  if (!before.status().IsNotFound() || listing.commits.empty()) return before.status();
  return listing.commits.begin()->first;  // every commit kept is at or after it
}

// The last version from `start` to `end` whose commits add at most `options`' files and
// bytes together (either limit, when only one is set), and at least `start` (a commit is
// never split).
Result<int64_t> EndWithinLimits(ObjectStore& store, int64_t start, int64_t end, const TableOptions& options,
                                const std::string& where) {
  BatchBound bound(options.max_files, options.max_bytes);
  for (int64_t v = start; v <= end; v++) {
    const std::string key = delta::CommitKey(v);
    ASSIGN_OR_RETURN(std::string content, store.Get(key));
    ASSIGN_OR_RETURN(std::vector<delta::Action> adds,
                     delta::ParseCommitLinesContaining(content, where + ": " + key, "\"add\""));
    int64_t added_files = 0, added_bytes = 0;
    for (const delta::Action& action : adds) {
      const auto* add = std::get_if<delta::AddFile>(&action);
      if (add == nullptr || !add->data_change) continue;
      added_files++;
      added_bytes += add->size;
    }
    if (!bound.Take(added_files, added_bytes)) return v - 1;
  }
  return end;
}

// What STREAM(table) reads while the statement is bound or run: `planned`, or nothing
// (binding only, which records the table the statement streams).
class TableBatch final : public sql::TableStream {
 public:
  explicit TableBatch(std::optional<PlannedRead> planned) : planned_(std::move(planned)) {}

  Result<sql::TableStreamRead> Read(const catalog::TableEntry& table,
                                    std::optional<int64_t> changes_from) override {
    table_ = table;
    changes_from_ = changes_from;
    if (!planned_) return sql::TableStreamRead();
    if (planned_->location != table.location) {
      return Status::InvalidArgument("the stream's offsets are of table " + planned_->table +
                                     ", but STREAM(" + table.name.ToString() + ") reads another table");
    }
    if ((planned_->read.kind == sql::TableStreamRead::Kind::kChanges) != changes_from.has_value()) {
      return Status::InvalidArgument("the stream's offsets are of " +
                                     std::string(changes_from ? "STREAM(" : "STREAM table_changes(") +
                                     planned_->table + "), but the statement reads the other");
    }
    return planned_->read;
  }

  void ReadUpTo(int64_t commit_time_ms) override { commit_time_ms_ = commit_time_ms; }

  const std::optional<catalog::TableEntry>& table() const { return table_; }
  std::optional<int64_t> changes_from() const { return changes_from_; }
  std::optional<int64_t> commit_time_ms() const { return commit_time_ms_; }

 private:
  const std::optional<PlannedRead> planned_;
  std::optional<int64_t> commit_time_ms_;
  std::optional<catalog::TableEntry> table_;
  std::optional<int64_t> changes_from_;
};

// `run()` with `batch` installed on `session` for STREAM source number `source`, a
// STREAM(table), to read.
Status WithTableStream(sql::Session& session, int64_t source, TableBatch& batch,
                       const std::function<Status()>& run) {
  session.SetTableStream(source, &batch);
  Status status = run();
  session.SetTableStream(source, nullptr);
  return status;
}

class TableSource final : public BatchSource {
 public:
  TableSource(sql::Session& session, sql::grammar::StreamSource stream, StreamSink sink, TableOptions options,
              std::string where)
      : session_(session),
        stream_(std::move(stream)),
        sink_(std::move(sink)),
        options_(options),
        where_(std::move(where)) {}

  Result<std::optional<json>> Plan(const std::optional<json>& previous) override {
    if (!table_) {
      ASSIGN_OR_RETURN(catalog::TableEntry table, ProbeTable());
      if (table.location == sink_.location) {
        return Status::InvalidArgument(where_ + ": it streams " + table.name.ToString() +
                                       " into itself, and would read its own rows again and again");
      }
      table_ = std::move(table);
    }
    ASSIGN_OR_RETURN(auto latest, session_.context().LoadTable(table_->location));
    int64_t end = latest->version;
    if (capped_) {
      if (!cap_) cap_ = end;
      end = std::min(end, *cap_);
    }
    json entry = {{"kind", "table"}, {"table", table_->name.ToString()}, {"location", table_->location}};
    int64_t start = 0;
    if (previous) {
      ASSIGN_OR_RETURN(PlannedRead last, ReadEntry(*previous, where_ + " previous offsets"));
      start = last.read.end_version + 1;
    } else if (changes_from_ || options_.starts_later()) {
      // The stream's first batch reads from the version asked for, not the snapshot.
      if (!starting_version_) {
        ASSIGN_OR_RETURN(starting_version_, FirstVersion(*latest));
      }
      start = *starting_version_;
    } else {
      entry["snapshotVersion"] = end;
      return std::optional<json>(std::move(entry));
    }
    if (end < start) return std::optional<json>();
    if (sink_.complete) {
      entry["snapshotVersion"] = end;
      return std::optional<json>(std::move(entry));
    }
    if (options_.max_files || options_.max_bytes) {
      ASSIGN_OR_RETURN(end, EndWithinLimits(*latest->store, start, end, options_, where_));
    }
    entry["startVersion"] = start;
    entry["endVersion"] = end;
    if (changes_from_) entry["changes"] = true;
    if (options_.skip_change_commits) entry["skipChangeCommits"] = true;
    return std::optional<json>(std::move(entry));
  }

  Status Read(const json& planned, BatchRead& read, const std::function<Status()>& run) override {
    ASSIGN_OR_RETURN(PlannedRead planned_read, ReadEntry(planned, where_ + " offsets"));
    TableBatch batch(std::move(planned_read));
    Status ran = WithTableStream(session_, stream_.index, batch, run);
    read.NoteSourceTime(batch.commit_time_ms());
    return ran;
  }

  Status ReadNothing(const std::optional<json>&, BatchRead&, const std::function<Status()>& run) override {
    TableBatch nothing(std::nullopt);
    return WithTableStream(session_, stream_.index, nothing, run);
  }

  int64_t RecordsIn(const json&) const override { return 0; }
  std::optional<int64_t> Backlog() const override { return std::nullopt; }

  void CapAtCurrentEnd(bool capped) override {
    capped_ = capped;
    cap_.reset();
  }

 private:
  // The table the statement streams, from binding its query with nothing to read.
  Result<catalog::TableEntry> ProbeTable() {
    TableBatch probe(std::nullopt);
    RETURN_IF_ERROR(WithTableStream(session_, stream_.index, probe, [&] {
                      return BindStreamSource(session_, stream_);
                    }).WithContext(where_));
    if (!probe.table()) return Status::Internal(where_ + ": its STREAM(table) source was not bound");
    changes_from_ = probe.changes_from();
    return *probe.table();
  }

  // The version the stream's first batch starts at, when it does not read the snapshot.
  Result<int64_t> FirstVersion(const delta::Snapshot& latest) const {
    const int64_t next = latest.version + 1;
    if (options_.starting_latest) return next;
    if (options_.starting_timestamp)
      return FirstVersionAtOrAfter(latest, *options_.starting_timestamp, where_);
    const int64_t first = changes_from_ ? *changes_from_ : *options_.starting_version;
    if (first < 0 || first > next) {
      return Status::InvalidArgument(where_ + ": the stream starts at version " + std::to_string(first) +
                                     " of " + table_->name.ToString() + ", whose latest version is " +
                                     std::to_string(latest.version));
    }
    return first;
  }

  sql::Session& session_;
  const sql::grammar::StreamSource stream_;
  const StreamSink sink_;
  const TableOptions options_;
  const std::string where_;
  std::optional<catalog::TableEntry> table_;
  std::optional<int64_t> changes_from_;      // STREAM table_changes(t, start)'s start
  std::optional<int64_t> starting_version_;  // the first batch's start, fixed at the first plan
  bool capped_ = false;
  std::optional<int64_t> cap_;  // available-now: the latest version at the first plan
};

}  // namespace

Result<std::unique_ptr<BatchSource>> NewTableSource(sql::Session& session,
                                                    const sql::grammar::StreamSource& stream, StreamSink sink,
                                                    std::string where) {
  ASSIGN_OR_RETURN(TableOptions read, ReadTableOptions(stream.options, where));
  if (sink.complete && (stream.is_changes || read.starts_later() || read.skip_change_commits ||
                        read.max_files || read.max_bytes)) {
    return Status::InvalidArgument(where +
                                   ": a complete sink (INSERT OVERWRITE) reads the whole table every batch; "
                                   "STREAM table_changes(...) and the STREAM(table) options do not apply");
  }
  return std::unique_ptr<BatchSource>(
      std::make_unique<TableSource>(session, stream, std::move(sink), read, std::move(where)));
}

}  // namespace basin::stream
