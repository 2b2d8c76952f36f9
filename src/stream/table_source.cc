#include "stream/table_source.h"

#include <algorithm>
#include <string>
#include <utility>

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
  planned.read.kind = sql::TableStreamRead::Kind::kAppends;
  planned.read.start_version = *start;
  planned.read.end_version = *end;
  return planned;
}

// What STREAM(table) reads while the statement is bound or run: `planned`, or nothing
// (binding only, which records the table the statement streams).
class TableBatch final : public sql::TableStream {
 public:
  explicit TableBatch(std::optional<PlannedRead> planned) : planned_(std::move(planned)) {}

  Result<sql::TableStreamRead> Read(const catalog::TableEntry& table) override {
    if (table_ && table_->location != table.location) {
      return Status::NotImplemented("a stream reads one table; this statement streams " +
                                    table_->name.ToString() + " and " + table.name.ToString());
    }
    table_ = table;
    if (!planned_) return sql::TableStreamRead();
    if (planned_->location != table.location) {
      return Status::InvalidArgument("the stream's offsets are of table " + planned_->table +
                                     ", but STREAM(" + table.name.ToString() + ") reads another table");
    }
    return planned_->read;
  }

  const std::optional<catalog::TableEntry>& table() const { return table_; }

 private:
  const std::optional<PlannedRead> planned_;
  std::optional<catalog::TableEntry> table_;
};

// `run()` with `batch` installed on `session` for STREAM(table) to read.
Status WithTableStream(sql::Session& session, TableBatch& batch, const std::function<Status()>& run) {
  session.SetTableStream(&batch);
  Status status = run();
  session.SetTableStream(nullptr);
  return status;
}

class TableSource final : public BatchSource {
 public:
  TableSource(sql::Session& session, std::string query, StreamSink sink, std::string where)
      : session_(session), query_(std::move(query)), sink_(std::move(sink)), where_(std::move(where)) {}

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
    if (!previous) {
      entry["snapshotVersion"] = end;
      return std::optional<json>(std::move(entry));
    }
    ASSIGN_OR_RETURN(PlannedRead last, ReadEntry(*previous, where_ + " previous offsets"));
    if (end <= last.read.end_version) return std::optional<json>();
    if (sink_.complete) {
      entry["snapshotVersion"] = end;
      return std::optional<json>(std::move(entry));
    }
    entry["startVersion"] = last.read.end_version + 1;
    entry["endVersion"] = end;
    return std::optional<json>(std::move(entry));
  }

  Status Read(const json& planned, BatchRead&, const std::function<Status()>& run) override {
    ASSIGN_OR_RETURN(PlannedRead read, ReadEntry(planned, where_ + " offsets"));
    TableBatch batch(std::move(read));
    return WithTableStream(session_, batch, run);
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
    RETURN_IF_ERROR(WithTableStream(session_, probe, [&] {
                      return BindStreamQuery(session_, query_);
                    }).WithContext(where_));
    if (!probe.table()) return Status::Internal(where_ + ": its STREAM(table) source was not bound");
    return *probe.table();
  }

  sql::Session& session_;
  const std::string query_;
  const StreamSink sink_;
  const std::string where_;
  std::optional<catalog::TableEntry> table_;
  bool capped_ = false;
  std::optional<int64_t> cap_;  // available-now: the latest version at the first plan
};

}  // namespace

std::unique_ptr<BatchSource> NewTableSource(sql::Session& session, std::string query, StreamSink sink,
                                            std::string where) {
  return std::make_unique<TableSource>(session, std::move(query), std::move(sink), std::move(where));
}

}  // namespace basin::stream
