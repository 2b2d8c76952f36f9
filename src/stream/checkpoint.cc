#include "stream/checkpoint.h"

#include <algorithm>
#include <cctype>
#include <string_view>

#include "common/text_scan.h"

namespace basin::stream {

namespace {

constexpr const char* kMetadataKey = "metadata.json";
constexpr const char* kOffsetsFolder = "offsets/";
constexpr const char* kCommitsFolder = "commits/";

std::string BatchKey(const char* folder, int64_t batch_id) {
  std::string digits = std::to_string(batch_id);
  return std::string(folder) + std::string(20 - std::min<size_t>(20, digits.size()), '0') + digits + ".json";
}

// The batch id a key of `folder` names; nullopt for keys that are not batch objects (a
// temporary file a store left, anything a user put there).
std::optional<int64_t> BatchIdOf(std::string_view key, std::string_view folder) {
  int64_t id = 0;
  if (!TakeLiteral(key, folder) || !TakeDigits(key, 20, &id) || key != ".json") return std::nullopt;
  return id;
}

// `text` with runs of whitespace made one space, and none at the ends.
std::string SquashWhitespace(const std::string& text) {
  std::string out;
  bool space = false;
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

Result<nlohmann::json> ParseObject(const std::string& text, const std::string& key) {
  nlohmann::json parsed = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object())
    return Status::Corruption("stream checkpoint object " + key + " is not a JSON object");
  return parsed;
}

Result<std::string> StringField(const nlohmann::json& object, const char* field, const std::string& key) {
  auto it = object.find(field);
  if (it == object.end() || !it->is_string()) {
    return Status::Corruption("stream checkpoint object " + key + ": field " + field +
                              " is missing or not a string");
  }
  return it->get<std::string>();
}

Result<int64_t> IntegerField(const nlohmann::json& object, const char* field, const std::string& key) {
  auto it = object.find(field);
  if (it == object.end() || !it->is_number_integer()) {
    return Status::Corruption("stream checkpoint object " + key + ": field " + field +
                              " is missing or not an integer");
  }
  return it->get<int64_t>();
}

nlohmann::json MetadataJson(const StreamMetadata& m) {
  return {{"format", kCheckpointFormat},
          {"streamId", m.stream_id},
          {"createdTime", m.created_time_ms},
          {"statement", m.statement},
          {"sink", {{"table", m.sink_table}, {"location", m.sink_location}}}};
}

Result<StreamMetadata> ParseMetadata(const std::string& text) {
  ASSIGN_OR_RETURN(nlohmann::json object, ParseObject(text, kMetadataKey));
  ASSIGN_OR_RETURN(int64_t format, IntegerField(object, "format", kMetadataKey));
  if (format > kCheckpointFormat) {
    return Status::Unsupported("stream checkpoint format " + std::to_string(format) +
                               " is newer than this Basin reads (" + std::to_string(kCheckpointFormat) + ")");
  }
  StreamMetadata m;
  ASSIGN_OR_RETURN(m.stream_id, StringField(object, "streamId", kMetadataKey));
  ASSIGN_OR_RETURN(m.created_time_ms, IntegerField(object, "createdTime", kMetadataKey));
  ASSIGN_OR_RETURN(m.statement, StringField(object, "statement", kMetadataKey));
  auto sink = object.find("sink");
  if (sink == object.end() || !sink->is_object()) {
    return Status::Corruption(std::string("stream checkpoint object ") + kMetadataKey +
                              ": field sink is missing");
  }
  ASSIGN_OR_RETURN(m.sink_table, StringField(*sink, "table", kMetadataKey));
  ASSIGN_OR_RETURN(m.sink_location, StringField(*sink, "location", kMetadataKey));
  return m;
}

// A batch's commit read from `object` (`where` names it in errors), which must name
// batch `batch_id`.
Result<BatchCommit> ParseCommit(const nlohmann::json& object, const std::string& where, int64_t batch_id) {
  BatchCommit c;
  ASSIGN_OR_RETURN(c.batch_id, IntegerField(object, "batchId", where));
  ASSIGN_OR_RETURN(c.table_version, IntegerField(object, "tableVersion", where));
  if (object.contains("deadLetterVersion")) {
    ASSIGN_OR_RETURN(c.dead_letter_version, IntegerField(object, "deadLetterVersion", where));
  }
  // The figures are informational: absent ones read as zero.
  auto figure = [&](const char* field) { return object.value(field, int64_t{0}); };
  c.rows_in = figure("rowsIn");
  c.rows_out = figure("rowsOut");
  c.dead_letters = figure("deadLetters");
  c.late_rows = figure("lateRows");
  c.duration_ms = figure("durationMs");
  c.committed_time_ms = figure("committedTime");
  if (c.batch_id != batch_id) {
    return Status::Corruption("stream checkpoint object " + where + " names batch " +
                              std::to_string(c.batch_id) + ", not " + std::to_string(batch_id));
  }
  return c;
}

}  // namespace

std::string StreamCheckpoint::OffsetsKey(int64_t batch_id) { return BatchKey(kOffsetsFolder, batch_id); }
std::string StreamCheckpoint::CommitKey(int64_t batch_id) { return BatchKey(kCommitsFolder, batch_id); }

Result<std::unique_ptr<StreamCheckpoint>> StreamCheckpoint::Open(std::shared_ptr<ObjectStore> store,
                                                                 const StreamMetadata& proposed) {
  Status created = store->PutIfAbsent(kMetadataKey, MetadataJson(proposed).dump());
  if (created.ok())
    return std::unique_ptr<StreamCheckpoint>(new StreamCheckpoint(std::move(store), proposed));
  if (!created.IsAlreadyExists())
    return created.WithContext("creating the stream checkpoint in " + store->Describe());
  ASSIGN_OR_RETURN(std::string text, store->Get(kMetadataKey));
  ASSIGN_OR_RETURN(StreamMetadata existing, ParseMetadata(text));
  if (SquashWhitespace(existing.statement) != SquashWhitespace(proposed.statement)) {
    return Status::InvalidArgument("the checkpoint in " + store->Describe() + " belongs to stream " +
                                   existing.stream_id + ", which runs a different statement:\n  " +
                                   existing.statement + "\nnot:\n  " + proposed.statement +
                                   "\nA changed statement is a new stream: give it a new checkpoint folder");
  }
  return std::unique_ptr<StreamCheckpoint>(new StreamCheckpoint(std::move(store), std::move(existing)));
}

Result<std::unique_ptr<StreamCheckpoint>> StreamCheckpoint::OpenExisting(std::shared_ptr<ObjectStore> store) {
  auto text = store->Get(kMetadataKey);
  if (text.status().IsNotFound()) return Status::NotFound("no stream checkpoint in " + store->Describe());
  RETURN_IF_ERROR(text.status());
  ASSIGN_OR_RETURN(StreamMetadata existing, ParseMetadata(*text));
  return std::unique_ptr<StreamCheckpoint>(new StreamCheckpoint(std::move(store), std::move(existing)));
}

Result<std::optional<int64_t>> StreamCheckpoint::Latest(const std::string& folder) {
  ASSIGN_OR_RETURN(std::vector<ObjectInfo> objects, store_->List(folder));
  std::optional<int64_t> latest;
  for (const ObjectInfo& info : objects) {
    std::optional<int64_t> id = BatchIdOf(info.key, folder);
    if (id && (!latest || *id > *latest)) latest = id;
  }
  return latest;
}

Status StreamCheckpoint::Expire(int64_t first_kept, bool sweep) {
  if (first_kept <= 0) return Status::OK();
  for (const char* folder : {kCommitsFolder, kOffsetsFolder}) {
    if (!sweep) {
      RETURN_IF_ERROR(store_->Delete(BatchKey(folder, first_kept - 1)));
      continue;
    }
    ASSIGN_OR_RETURN(std::vector<ObjectInfo> objects, store_->List(folder));
    for (const ObjectInfo& info : objects) {
      std::optional<int64_t> id = BatchIdOf(info.key, folder);
      if (id && *id < first_kept) RETURN_IF_ERROR(store_->Delete(info.key));
    }
  }
  return Status::OK();
}

Result<std::optional<int64_t>> StreamCheckpoint::LatestPlanned() { return Latest(kOffsetsFolder); }
Result<std::optional<int64_t>> StreamCheckpoint::LatestCommitted() { return Latest(kCommitsFolder); }

Status StreamCheckpoint::WriteOffsets(int64_t batch_id, const nlohmann::json& offsets) {
  Status put = store_->PutIfAbsent(OffsetsKey(batch_id), offsets.dump());
  if (put.IsAlreadyExists()) {
    return Status::Conflict("another run of stream " + metadata_.stream_id + " planned batch " +
                            std::to_string(batch_id) + " already (" + OffsetsKey(batch_id) + ")");
  }
  return put;
}

Result<nlohmann::json> StreamCheckpoint::ReadOffsets(int64_t batch_id) {
  const std::string key = OffsetsKey(batch_id);
  ASSIGN_OR_RETURN(std::string text, store_->Get(key));
  return ParseObject(text, key);
}

std::optional<int64_t> EndToEndMs(const BatchCommit& commit) {
  if (!commit.source_time_ms) return std::nullopt;
  return std::max<int64_t>(0, commit.committed_time_ms - *commit.source_time_ms);
}

nlohmann::json CommitJson(const BatchCommit& c) {
  nlohmann::json object = {{"batchId", c.batch_id},         {"tableVersion", c.table_version},
                           {"rowsIn", c.rows_in},           {"rowsOut", c.rows_out},
                           {"deadLetters", c.dead_letters}, {"lateRows", c.late_rows},
                           {"durationMs", c.duration_ms},   {"committedTime", c.committed_time_ms}};
  if (c.dead_letter_version) object["deadLetterVersion"] = *c.dead_letter_version;
  return object;
}

Status StreamCheckpoint::WriteCommit(const BatchCommit& commit) {
  Status put = store_->PutIfAbsent(CommitKey(commit.batch_id), CommitJson(commit).dump());
  return put.IsAlreadyExists() ? Status::OK() : put;
}

Result<std::optional<BatchCommit>> StreamCheckpoint::ReadCommit(int64_t batch_id) {
  const std::string key = CommitKey(batch_id);
  Result<std::string> text = store_->Get(key);
  if (!text.ok() && text.status().IsNotFound()) return std::optional<BatchCommit>();
  if (!text.ok()) return text.status();
  ASSIGN_OR_RETURN(nlohmann::json object, ParseObject(*text, key));
  ASSIGN_OR_RETURN(BatchCommit commit, ParseCommit(object, key, batch_id));
  return std::optional<BatchCommit>(commit);
}

Result<std::optional<BatchCommit>> StreamCheckpoint::NewestCommit() {
  ASSIGN_OR_RETURN(std::optional<int64_t> planned, LatestPlanned());
  if (planned) {
    ASSIGN_OR_RETURN(std::optional<BatchCommit> marked, ReadCommit(*planned));
    if (marked) return marked;
    ASSIGN_OR_RETURN(nlohmann::json offsets, ReadOffsets(*planned));
    auto previous = offsets.find(kPreviousCommitField);
    if (previous != offsets.end()) {
      const std::string where = OffsetsKey(*planned) + " " + kPreviousCommitField;
      if (!previous->is_object())
        return Status::Corruption("stream checkpoint object " + where + " is not an object");
      ASSIGN_OR_RETURN(BatchCommit commit, ParseCommit(*previous, where, *planned - 1));
      return std::optional<BatchCommit>(commit);
    }
  }
  // A folder an earlier Basin wrote (a marker for every batch), or a batch committed in a
  // run before the one that planned the next.
  ASSIGN_OR_RETURN(std::optional<int64_t> committed, LatestCommitted());
  if (!committed) return std::optional<BatchCommit>();
  return ReadCommit(*committed);
}

Result<Recovery> StreamCheckpoint::Recover(std::optional<int64_t> sink_txn_version) {
  ASSIGN_OR_RETURN(std::optional<int64_t> planned, LatestPlanned());
  ASSIGN_OR_RETURN(std::optional<int64_t> committed, LatestCommitted());
  const std::string stream = "stream " + metadata_.stream_id;
  auto table_ahead = [&](int64_t limit) -> Status {
    if (sink_txn_version && *sink_txn_version > limit) {
      return Status::Corruption("the sink table " + metadata_.sink_table + " holds batch " +
                                std::to_string(*sink_txn_version) + " of " + stream +
                                ", which its checkpoint never planned: was the checkpoint folder replaced?");
    }
    return Status::OK();
  };
  Recovery out;
  if (!planned) {
    if (committed)
      return Status::Corruption(stream + ": " + CommitKey(*committed) + " has no offsets object");
    RETURN_IF_ERROR(table_ahead(-1));
    out.action = Recovery::Action::kPlan;
    out.batch_id = 0;
    return out;
  }
  RETURN_IF_ERROR(table_ahead(*planned));
  if (committed && *committed > *planned) {
    return Status::Corruption(stream + ": " + CommitKey(*committed) + " has no offsets object");
  }
  if (committed && *committed == *planned) {
    out.action = Recovery::Action::kPlan;
    out.batch_id = *planned + 1;
    ASSIGN_OR_RETURN(out.previous, ReadOffsets(*planned));
    return out;
  }
  // Batch `planned` ran, or began to. The one before it committed (a batch is planned only
  // then), whether or not its marker was written: offsets/<planned> holds its figures.
  out.batch_id = *planned;
  ASSIGN_OR_RETURN(out.planned, ReadOffsets(*planned));
  out.action = sink_txn_version && *sink_txn_version >= *planned ? Recovery::Action::kRecordCommit
                                                                 : Recovery::Action::kRerun;
  return out;
}

}  // namespace basin::stream
