#include "stream/files_source.h"

#include <algorithm>
#include <charconv>
#include <set>
#include <utility>
#include <vector>

#include "common/strings.h"
#include "sql/read_files.h"
#include "stream/dead_letters.h"

namespace basin::stream {
namespace {

using json = nlohmann::json;

constexpr int64_t kDefaultMaxFiles = 1000;
constexpr int64_t kCompactEvery = 100;
constexpr char kListsFolder[] = "files/";
constexpr char kSeenFolder[] = "seen/";
constexpr char kSchemaKey[] = "schema.json";

std::string SeqKey(const char* folder, int64_t seq) {
  std::string digits = std::to_string(seq);
  return folder + std::string(20 - std::min<size_t>(20, digits.size()), '0') + digits + ".json";
}

// The seq of `key` in `folder` ("files/00000000000000000007.json" -> 7); nullopt otherwise.
std::optional<int64_t> SeqOf(const std::string& key, const std::string& folder) {
  if (key.rfind(folder, 0) != 0 || key.size() < folder.size() + 5 || key.substr(key.size() - 5) != ".json") {
    return std::nullopt;
  }
  int64_t seq = -1;
  const char* begin = key.data() + folder.size();
  const char* end = key.data() + key.size() - 5;
  auto [at, error] = std::from_chars(begin, end, seq);
  if (error != std::errc() || at != end) return std::nullopt;
  return seq;
}

// A planned batch, as its entry records it.
struct FilesEntry {
  int64_t seq = 0;
  std::vector<sql::InputFile> files;
  std::optional<sql::FileSchema> schema;
};

json SchemaJson(const sql::FileSchema& schema) {
  json out = json::array();
  for (const sql::FileColumn& column : schema) out.push_back({{"name", column.name}, {"type", column.type}});
  return out;
}

Result<sql::FileSchema> SchemaFrom(const json& schema, const std::string& where) {
  if (!schema.is_array()) return Status::Corruption(where + ": \"schema\" must be an array");
  sql::FileSchema out;
  for (const json& column : schema) {
    if (!column.is_object() || !column.contains("name") || !column["name"].is_string() ||
        !column.contains("type") || !column["type"].is_string()) {
      return Status::Corruption(where + ": a column of \"schema\" needs \"name\" and \"type\"");
    }
    out.push_back({column["name"].get<std::string>(), column["type"].get<std::string>()});
  }
  return out;
}

json EntryJson(const FilesEntry& entry) {
  json files = json::array();
  for (const sql::InputFile& file : entry.files) {
    files.push_back(
        {{"path", file.key}, {"size", file.size}, {"modificationTime", file.modification_time_ms}});
  }
  json out = {{"kind", "files"}, {"seq", entry.seq}, {"files", std::move(files)}};
  if (entry.schema) out["schema"] = SchemaJson(*entry.schema);
  return out;
}

Result<FilesEntry> EntryFrom(const json& entry, const std::string& where) {
  auto bad = [&](const std::string& what) { return Status::Corruption(where + ": " + what); };
  if (!entry.is_object() || entry.value("kind", "") != "files" || !entry.contains("seq") ||
      !entry["seq"].is_number_integer() || !entry.contains("files") || !entry["files"].is_array()) {
    return bad("the source is not a files source with \"seq\" and \"files\"");
  }
  FilesEntry out;
  out.seq = entry["seq"].get<int64_t>();
  for (const json& file : entry["files"]) {
    if (!file.is_object() || !file.contains("path") || !file["path"].is_string()) {
      return bad("a file of \"files\" has no \"path\"");
    }
    out.files.push_back({file["path"].get<std::string>(), file.value("size", int64_t{0}),
                         file.value("modificationTime", int64_t{0})});
  }
  if (entry.contains("schema")) {
    ASSIGN_OR_RETURN(out.schema, SchemaFrom(entry["schema"], where));
  }
  return out;
}

// What read_files reads while the statement is bound or run: a planned batch's files, or
// while the source learns the statement's options (`entry` null), no file, with the
// declared schema (without one, binding fails after the options are recorded).
class FilesBatch final : public sql::FilesStream {
 public:
  // `set_aside`: the entry's files not to read (dead letters), or null.
  explicit FilesBatch(const FilesEntry* entry, const std::set<std::string>* set_aside = nullptr)
      : entry_(entry), set_aside_(set_aside) {}

  Result<sql::FilesStreamRead> Read(const sql::ReadFilesRequest& request,
                                    const std::shared_ptr<ObjectStore>& folder) override {
    request_ = request;
    folder_ = folder;
    if (entry_ == nullptr) return sql::FilesStreamRead{{}, request.schema};
    sql::FilesStreamRead read{entry_->files, entry_->schema};
    if (set_aside_ != nullptr) {
      std::erase_if(read.files, [&](const sql::InputFile& file) { return set_aside_->count(file.key) > 0; });
    }
    return read;
  }

  const std::optional<sql::ReadFilesRequest>& request() const { return request_; }
  const std::shared_ptr<ObjectStore>& folder() const { return folder_; }

 private:
  const FilesEntry* entry_;
  const std::set<std::string>* set_aside_;
  std::optional<sql::ReadFilesRequest> request_;
  std::shared_ptr<ObjectStore> folder_;
};

// `run()` with `batch` installed on `session` for STREAM source number `source`, a STREAM
// read_files(...), to read.
Status WithFilesStream(sql::Session& session, int64_t source, FilesBatch& batch,
                       const std::function<Status()>& run) {
  session.SetFilesStream(source, &batch);
  Status status = run();
  session.SetFilesStream(source, nullptr);
  return status;
}

// available-now: the new files when the first capped plan listed them; batches read no others.
struct AvailableNowCap {
  bool taken = false;
  std::set<std::string> keys;
};

class FilesSource final : public BatchSource {
 public:
  FilesSource(sql::Session& session, sql::grammar::StreamSource stream, std::shared_ptr<ObjectStore> store,
              DeadLetterWriter& dead_letters, std::string where)
      : session_(session),
        stream_(std::move(stream)),
        store_(std::move(store)),
        dead_letters_(dead_letters),
        where_(std::move(where)) {}

  Result<std::optional<json>> Plan(const std::optional<json>& previous) override {
    FilesEntry next;
    if (previous) {
      ASSIGN_OR_RETURN(FilesEntry last, EntryFrom(*previous, where_ + " previous offsets"));
      RETURN_IF_ERROR(Remember(last));
      next.seq = last.seq + 1;
      next.schema = std::move(last.schema);
    } else {
      RETURN_IF_ERROR(LoadSeen());
    }
    RETURN_IF_ERROR(LearnOptions());
    ASSIGN_OR_RETURN(std::vector<sql::InputFile> listed, sql::ListInputFiles(*folder_));
    std::vector<sql::InputFile> fresh;
    for (sql::InputFile& file : listed) {
      if (!seen_.count(file.key)) fresh.push_back(std::move(file));
    }
    if (cap_) {
      if (!cap_->taken) {
        for (const sql::InputFile& file : fresh) cap_->keys.insert(file.key);
        cap_->taken = true;
      }
      std::erase_if(fresh, [&](const sql::InputFile& file) { return !cap_->keys.count(file.key); });
    }
    BatchBound bound(request_->max_files.value_or(kDefaultMaxFiles), request_->max_bytes);
    for (sql::InputFile& file : fresh) {
      if (!bound.Take(1, file.size)) break;
      next.files.push_back(std::move(file));
    }
    backlog_ = static_cast<int64_t>(fresh.size() - next.files.size());
    if (next.files.empty()) return std::optional<json>();
    if (widened_) next.schema = widened_;
    if (!next.schema) next.schema = request_->schema;
    if (!next.schema) {
      ASSIGN_OR_RETURN(next.schema, ColumnsOf(next.files));
    } else {
      RETURN_IF_ERROR(CheckNewColumns(next));
    }
    return std::optional<json>(EntryJson(next));
  }

  Status Read(const json& planned, BatchRead& read, const std::function<Status()>& run) override {
    ASSIGN_OR_RETURN(FilesEntry entry, EntryFrom(planned, where_ + " offsets"));
    RETURN_IF_ERROR(LearnOptions());
    std::set<std::string> set_aside;  // Parquet files that are dead letters
    if (!request_->dead_letter_table.empty() && entry.schema) {
      RETURN_IF_ERROR(request_->format == sql::FileFormat::kParquet
                          ? SetAsideParquetFiles(entry, read, set_aside)
                          : SetAsideDeadLetters(entry, read));
    }
    for (const sql::InputFile& file : entry.files) {
      if (file.modification_time_ms > 0) read.NoteSourceTime(file.modification_time_ms);
    }
    FilesBatch batch(&entry, &set_aside);
    return ReadBatch(batch, read, run);
  }

  Status ReadNothing(const std::optional<json>& previous, BatchRead& read,
                     const std::function<Status()>& run) override {
    RETURN_IF_ERROR(LearnOptions());
    FilesEntry nothing;
    if (previous) {
      ASSIGN_OR_RETURN(FilesEntry last, EntryFrom(*previous, where_ + " previous offsets"));
      nothing.schema = std::move(last.schema);
    }
    if (widened_) nothing.schema = widened_;
    if (!nothing.schema) nothing.schema = request_->schema;
    if (!nothing.schema) {
      return Status::InvalidArgument(
          where_ + ": its source " + stream_.source +
          " has no file yet to infer its columns from, while another source of the stream has rows; give it "
          "schema => '...'");
    }
    FilesBatch batch(&nothing);
    return ReadBatch(batch, read, run);
  }

  int64_t RecordsIn(const json&) const override { return 0; }
  std::optional<int64_t> Backlog() const override { return backlog_; }

  void CapAtCurrentEnd(bool capped) override {
    cap_.reset();
    if (capped) cap_.emplace();
  }

 private:
  // `run()` reading `batch`, the rows its sink refuses set aside as dead letters.
  Status ReadBatch(FilesBatch& batch, BatchRead& read, const std::function<Status()>& run) {
    return WithFilesStream(session_, stream_.index, batch, [&] {
      return dead_letters_.WithRefusedRowsSetAside(request_->dead_letter_table, read, run);
    });
  }

  // The statement's read_files options and folder, recorded when binding it reaches
  // read_files (binding fails there without a declared schema: the columns come from the
  // first batch's files, ColumnsOf).
  Status LearnOptions() {
    if (request_) return Status::OK();
    FilesBatch probe(nullptr);
    Status bound =
        WithFilesStream(session_, stream_.index, probe, [&] { return BindStreamSource(session_, stream_); });
    if (!probe.request()) {
      RETURN_IF_ERROR(bound.WithContext(where_));
      return Status::Internal(where_ + ": binding its source reached no read_files");
    }
    request_ = probe.request();
    folder_ = probe.folder();
    return Status::OK();
  }

  // The columns DuckDB reads `files` with (inferred from every file, by name).
  Result<sql::FileSchema> ColumnsOf(const std::vector<sql::InputFile>& files) {
    ASSIGN_OR_RETURN(engine::Lakehouse::ChangeFeed feed,
                     sql::ReadFilesFeed(*request_, folder_, files, std::nullopt));
    ASSIGN_OR_RETURN(std::vector<engine::ColumnType> columns, session_.connection().DescribeQuery(feed.sql));
    sql::FileSchema schema;
    for (const engine::ColumnType& column : columns) schema.push_back({column.name, column.type_name});
    return schema;
  }

  // schemaEvolutionMode addNewColumns and failOnNewColumns: the columns `next`'s files have
  // beyond its schema stop the stream, naming them; addNewColumns first keeps the schema
  // widened with them (schema.json), which the next run reads the files with.
  Status CheckNewColumns(const FilesEntry& next) {
    const sql::SchemaEvolution mode = request_->EvolutionMode();
    if (mode != sql::SchemaEvolution::kAddNewColumns && mode != sql::SchemaEvolution::kFailOnNewColumns) {
      return Status::OK();
    }
    ASSIGN_OR_RETURN(sql::FileSchema found, ColumnsOf(next.files));
    std::set<std::string> known;
    for (const sql::FileColumn& column : *next.schema) known.insert(AsciiLower(column.name));
    sql::FileSchema added;
    std::string named;
    for (sql::FileColumn& column : found) {
      if (known.count(AsciiLower(column.name)) || column.name == sql::kRescuedDataColumn) continue;
      named += (named.empty() ? "" : ", ") + column.name + " " + column.type;
      added.push_back(std::move(column));
    }
    if (added.empty()) return Status::OK();
    const std::string found_in = where_ + ": the " + std::to_string(next.files.size()) + " files of batch " +
                                 std::to_string(next.seq) + " (the first " + next.files.front().key +
                                 ") have columns its schema lacks: " + named;
    if (mode == sql::SchemaEvolution::kFailOnNewColumns) {
      return Status::InvalidArgument(
          found_in +
          "; schemaEvolutionMode 'failOnNewColumns' stops the stream until they are "
          "in schema => '...' or the files are moved away");
    }
    sql::FileSchema widened = *next.schema;
    widened.insert(widened.end(), added.begin(), added.end());
    RETURN_IF_ERROR(store_->Put(kSchemaKey, json{{"schema", SchemaJson(widened)}}.dump()));
    widened_ = std::move(widened);
    return Status::InvalidArgument(
        found_in +
        "; the stream's schema now has them (schemaEvolutionMode 'addNewColumns'): run "
        "it again to read them, with INSERT WITH SCHEMA EVOLUTION if the sink "
        "lacks them");
  }

  // With a dead-letter table: the records of `entry`'s files that are dead letters, committed
  // there (once per batch, whatever the re-runs) before the statement reads the others,
  // unless they are more than maxDeadLetterFraction of the batch.
  Status SetAsideDeadLetters(const FilesEntry& entry, BatchRead& read) {
    ASSIGN_OR_RETURN(sql::FilesDeadLetters queries,
                     sql::ReadFilesDeadLetters(*request_, folder_, entry.files, *entry.schema));
    if (!queries.prepare_sql.empty()) RETURN_IF_ERROR(session_.connection().Execute(queries.prepare_sql));
    ASSIGN_OR_RETURN(engine::QueryResult rows, session_.connection().Query(queries.letters_sql));
    std::vector<DeadLetter> letters;
    int64_t records = 0;
    for (const auto& row : rows.rows) {
      DeadLetter letter;
      letter.file = row[0].value_or("");
      letter.line = std::stoll(row[1].value_or("0"));
      letter.value = row[2];
      letter.error =
          "file " + letter.file + " line " + std::to_string(letter.line) + ": " + row[3].value_or("");
      records = std::stoll(row[4].value_or("0"));
      letters.push_back(std::move(letter));
    }
    return dead_letters_.SetAside(request_->dead_letter_table, request_->max_dead_letter_fraction, records,
                                  letters, read);
  }

  // With a dead-letter table, Parquet files: those DuckDB cannot read whole (not for a store's
  // failure, which fails the batch), committed there as dead letters and kept in `set_aside`
  // for the statement not to read.
  Status SetAsideParquetFiles(const FilesEntry& entry, BatchRead& read, std::set<std::string>& set_aside) {
    std::vector<DeadLetter> letters;
    for (const sql::InputFile& file : entry.files) {
      ASSIGN_OR_RETURN(engine::Lakehouse::ChangeFeed whole, sql::ReadWholeParquetFile(folder_, file));
      Result<engine::QueryResult> decoded = session_.connection().Query(whole.sql);
      if (decoded.ok()) continue;
      const ErrorCode code = decoded.status().code();
      if (code == ErrorCode::kIOError || code == ErrorCode::kCancelled) return decoded.status();
      DeadLetter letter;
      letter.file = file.key;
      letter.error = "file " + file.key + ": " + decoded.status().message();
      letters.push_back(std::move(letter));
      set_aside.insert(file.key);
    }
    return dead_letters_.SetAside(request_->dead_letter_table, request_->max_dead_letter_fraction,
                                  static_cast<int64_t>(entry.files.size()), letters, read);
  }

  // The paths of every batch before the next one: the newest compaction, the lists after it;
  // and the schema addNewColumns widened, when it did.
  Status LoadSeen() {
    if (loaded_) return Status::OK();
    Result<std::string> widened = store_->Get(kSchemaKey);
    if (widened.ok()) {
      json schema = json::parse(*widened, nullptr, /*allow_exceptions=*/false);
      if (!schema.is_object() || !schema.contains("schema")) {
        return Status::Corruption(where_ + ": " + store_->Describe() + "/" + kSchemaKey +
                                  " has no \"schema\"");
      }
      ASSIGN_OR_RETURN(widened_, SchemaFrom(schema["schema"], where_ + ": " + kSchemaKey));
    } else if (widened.status().code() != ErrorCode::kNotFound) {
      return widened.status();
    }
    ASSIGN_OR_RETURN(std::vector<ObjectInfo> compactions, store_->List(kSeenFolder));
    std::optional<int64_t> compacted;
    for (const ObjectInfo& info : compactions) {
      std::optional<int64_t> seq = SeqOf(info.key, kSeenFolder);
      if (seq && (!compacted || *seq > *compacted)) compacted = seq;
    }
    if (compacted) RETURN_IF_ERROR(ReadPaths(SeqKey(kSeenFolder, *compacted)));
    ASSIGN_OR_RETURN(std::vector<ObjectInfo> lists, store_->List(kListsFolder));
    for (const ObjectInfo& info : lists) {
      std::optional<int64_t> seq = SeqOf(info.key, kListsFolder);
      if (seq && (!compacted || *seq > *compacted)) RETURN_IF_ERROR(ReadPaths(info.key));
    }
    loaded_ = true;
    return Status::OK();
  }

  Status ReadPaths(const std::string& key) {
    ASSIGN_OR_RETURN(std::string text, store_->Get(key));
    json paths = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!paths.is_object() || !paths.contains("paths") || !paths["paths"].is_array()) {
      return Status::Corruption(where_ + ": " + store_->Describe() + "/" + key + " has no \"paths\" array");
    }
    for (const json& path : paths["paths"]) {
      if (!path.is_string())
        return Status::Corruption(where_ + ": " + key + " holds a path that is not a string");
      seen_.insert(path.get<std::string>());
    }
    return Status::OK();
  }

  // `last` (durable in offsets) is read: its paths are seen, kept in files/<seq>.json and,
  // every 100 batches, compacted with the earlier ones into seen/<seq>.json.
  Status Remember(const FilesEntry& last) {
    RETURN_IF_ERROR(LoadSeen());
    if (remembered_ && *remembered_ >= last.seq) return Status::OK();  // an idle stream plans again
    json paths = json::array();
    for (const sql::InputFile& file : last.files) {
      seen_.insert(file.key);
      paths.push_back(file.key);
    }
    RETURN_IF_ERROR(store_->Put(SeqKey(kListsFolder, last.seq), json{{"paths", std::move(paths)}}.dump()));
    if ((last.seq + 1) % kCompactEvery != 0) {
      remembered_ = last.seq;
      return Status::OK();
    }
    RETURN_IF_ERROR(
        store_->Put(SeqKey(kSeenFolder, last.seq),
                    json{{"paths", std::vector<std::string>(seen_.begin(), seen_.end())}}.dump()));
    // The lists it covers and the compactions before it are no longer read.
    for (const auto& [folder, first_kept] :
         {std::pair{kListsFolder, last.seq + 1}, std::pair{kSeenFolder, last.seq}}) {
      ASSIGN_OR_RETURN(std::vector<ObjectInfo> objects, store_->List(folder));
      for (const ObjectInfo& info : objects) {
        std::optional<int64_t> seq = SeqOf(info.key, folder);
        if (seq && *seq < first_kept) RETURN_IF_ERROR(store_->Delete(info.key));
      }
    }
    remembered_ = last.seq;
    return Status::OK();
  }

  sql::Session& session_;
  const sql::grammar::StreamSource stream_;
  std::shared_ptr<ObjectStore> store_;  // the source's checkpoint folder
  DeadLetterWriter& dead_letters_;
  const std::string where_;
  std::optional<sql::ReadFilesRequest> request_;
  std::shared_ptr<ObjectStore> folder_;
  bool loaded_ = false;
  std::optional<int64_t> remembered_;       // the newest seq whose paths are stored
  std::set<std::string> seen_;              // paths of every planned batch before the next
  std::optional<sql::FileSchema> widened_;  // by addNewColumns, kept in schema.json
  std::optional<AvailableNowCap> cap_;
  std::optional<int64_t> backlog_;
};

}  // namespace

Result<std::unique_ptr<BatchSource>> NewFilesSource(sql::Session& session,
                                                    const sql::grammar::StreamSource& stream,
                                                    std::shared_ptr<ObjectStore> source_store,
                                                    DeadLetterWriter& dead_letters, std::string where) {
  return std::unique_ptr<BatchSource>(std::make_unique<FilesSource>(session, stream, std::move(source_store),
                                                                    dead_letters, std::move(where)));
}

}  // namespace basin::stream
