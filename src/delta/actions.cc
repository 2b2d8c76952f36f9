#include "delta/actions.h"

#include <simdjson.h>

#include <algorithm>
#include <array>
#include <functional>

#include "common/strings.h"
#include "delta/json_fields.h"
#include "delta/parsed_stats.h"
#include "delta/paths.h"

namespace basin::delta {

using json = nlohmann::json;
using namespace json_fields;  // NOLINT(google-build-using-namespace): the accessors read as field names

std::string DeletionVectorDescriptor::UniqueId() const {
  std::string id(1, storage_type);
  id += path_or_inline_dv;
  if (offset) id += "@" + std::to_string(*offset);
  return id;
}

namespace {

// Log paths are URIs; two spellings of one file (encoded or not) must reconcile.
std::string MakeReplayKey(const std::string& path, const std::optional<DeletionVectorDescriptor>& dv) {
  std::string key = DecodeDataPath(path);
  if (dv) {
    key += '\0';
    key += dv->UniqueId();
  }
  return key;
}

}  // namespace

std::string AddFile::ReplayKey() const { return MakeReplayKey(path, deletion_vector); }
std::string RemoveFile::ReplayKey() const { return MakeReplayKey(path, deletion_vector); }

bool Protocol::HasReaderFeature(const std::string& name) const {
  return reader_features &&
         std::find(reader_features->begin(), reader_features->end(), name) != reader_features->end();
}

bool Protocol::HasWriterFeature(const std::string& name) const {
  return writer_features &&
         std::find(writer_features->begin(), writer_features->end(), name) != writer_features->end();
}

namespace {

// The body of one action: `obj` is the object under the action's name (`prefix`).
struct Body {
  Object obj;
  std::string_view prefix;
  const Location& where;
  Field operator[](std::string_view name) const { return Field{obj, prefix, name, where}; }
};

// The object in field `f`; nullopt when absent or null, Corruption when not an object.
Result<std::optional<Object>> OptionalObject(const Field& f) {
  auto v = f.Find();
  if (!v) return std::optional<Object>();
  Object object;
  if (v->get_object().get(object) != simdjson::SUCCESS) return f.WrongType("an object");
  return std::optional<Object>(object);
}

Result<std::optional<DeletionVectorDescriptor>> ParseDeletionVector(const Body& b) {
  Field f = b["deletionVector"];
  ASSIGN_OR_RETURN(std::optional<Object> v, OptionalObject(f));
  if (!v) return std::optional<DeletionVectorDescriptor>();
  std::string prefix = f.Name();
  Body dv{*v, prefix, b.where};
  DeletionVectorDescriptor out;
  ASSIGN_OR_RETURN(std::string storage_type, RequiredString(dv["storageType"]));
  if (storage_type != "u" && storage_type != "i" && storage_type != "p") {
    return dv["storageType"].WrongType("one of 'u', 'i', 'p'");
  }
  out.storage_type = storage_type[0];
  ASSIGN_OR_RETURN(out.path_or_inline_dv, RequiredString(dv["pathOrInlineDv"]));
  ASSIGN_OR_RETURN(out.offset, OptionalInt32(dv["offset"]));
  ASSIGN_OR_RETURN(out.size_in_bytes, RequiredInt32(dv["sizeInBytes"]));
  ASSIGN_OR_RETURN(out.cardinality, RequiredInt64(dv["cardinality"]));
  return std::optional<DeletionVectorDescriptor>(std::move(out));
}

// Fills `out` in place: replay parses a large commit's adds without moving them around.
Status ParseAdd(const Body& b, AddFile& out) {
  ASSIGN_OR_RETURN(out.path, RequiredString(b["path"]));
  if (!b["partitionValues"].Find()) return b["partitionValues"].Missing();
  ASSIGN_OR_RETURN(out.partition_values, OptionalNullableStringMap(b["partitionValues"]));
  ASSIGN_OR_RETURN(out.size, RequiredInt64(b["size"]));
  ASSIGN_OR_RETURN(out.modification_time, RequiredInt64(b["modificationTime"]));
  ASSIGN_OR_RETURN(out.data_change, RequiredBool(b["dataChange"]));
  ASSIGN_OR_RETURN(out.stats, OptionalString(b["stats"]));
  if (!out.stats) {
    // JSON checkpoints written with writeStatsAsStruct carry the stats as a struct instead.
    Field parsed = b["stats_parsed"];
    ASSIGN_OR_RETURN(std::optional<Object> v, OptionalObject(parsed));
    if (v) out.stats = Dump(*v);
  }
  ASSIGN_OR_RETURN(out.tags, OptionalStringMap(b["tags"]));
  ASSIGN_OR_RETURN(out.deletion_vector, ParseDeletionVector(b));
  ASSIGN_OR_RETURN(out.base_row_id, OptionalInt64(b["baseRowId"]));
  ASSIGN_OR_RETURN(out.default_row_commit_version, OptionalInt64(b["defaultRowCommitVersion"]));
  ASSIGN_OR_RETURN(out.clustering_provider, OptionalString(b["clusteringProvider"]));
  return Status::OK();
}

Result<RemoveFile> ParseRemove(const Body& b) {
  RemoveFile out;
  ASSIGN_OR_RETURN(out.path, RequiredString(b["path"]));
  ASSIGN_OR_RETURN(out.deletion_timestamp, OptionalInt64(b["deletionTimestamp"]));
  ASSIGN_OR_RETURN(out.data_change, RequiredBool(b["dataChange"]));
  ASSIGN_OR_RETURN(auto extended, OptionalBool(b["extendedFileMetadata"]));
  out.extended_file_metadata = extended.value_or(false);
  ASSIGN_OR_RETURN(out.partition_values, OptionalNullableStringMap(b["partitionValues"]));
  ASSIGN_OR_RETURN(out.size, OptionalInt64(b["size"]));
  ASSIGN_OR_RETURN(out.deletion_vector, ParseDeletionVector(b));
  return out;
}

Result<Protocol> ParseProtocol(const Body& b) {
  Protocol out;
  ASSIGN_OR_RETURN(out.min_reader_version, RequiredInt32(b["minReaderVersion"]));
  ASSIGN_OR_RETURN(out.min_writer_version, RequiredInt32(b["minWriterVersion"]));
  ASSIGN_OR_RETURN(out.reader_features, OptionalStringList(b["readerFeatures"]));
  ASSIGN_OR_RETURN(out.writer_features, OptionalStringList(b["writerFeatures"]));
  return out;
}

Result<Metadata> ParseMetadata(const Body& b) {
  Metadata out;
  ASSIGN_OR_RETURN(out.id, RequiredString(b["id"]));
  ASSIGN_OR_RETURN(out.name, OptionalString(b["name"]));
  ASSIGN_OR_RETURN(out.description, OptionalString(b["description"]));
  Field format = b["format"];
  ASSIGN_OR_RETURN(std::optional<Object> fv, OptionalObject(format));
  if (!fv) return format.Missing();
  Body fb{*fv, "metaData.format", b.where};
  ASSIGN_OR_RETURN(out.format_provider, RequiredString(fb["provider"]));
  ASSIGN_OR_RETURN(out.format_options, OptionalStringMap(fb["options"]));
  ASSIGN_OR_RETURN(out.schema_string, RequiredString(b["schemaString"]));
  ASSIGN_OR_RETURN(auto partition_columns, OptionalStringList(b["partitionColumns"]));
  if (!partition_columns) return b["partitionColumns"].Missing();
  out.partition_columns = std::move(*partition_columns);
  ASSIGN_OR_RETURN(out.configuration, OptionalStringMap(b["configuration"]));
  ASSIGN_OR_RETURN(out.created_time, OptionalInt64(b["createdTime"]));
  return out;
}

Result<SetTransaction> ParseTxn(const Body& b) {
  SetTransaction out;
  ASSIGN_OR_RETURN(out.app_id, RequiredString(b["appId"]));
  ASSIGN_OR_RETURN(out.version, RequiredInt64(b["version"]));
  ASSIGN_OR_RETURN(out.last_updated, OptionalInt64(b["lastUpdated"]));
  return out;
}

Result<CommitInfo> ParseCommitInfo(const Body& b) {
  CommitInfo out;
  out.raw = json::parse(Dump(b.obj), nullptr, /*allow_exceptions=*/false);
  // Only the in-commit timestamp is protocol-defined; the rest is free-form provenance,
  // so a writer's odd types there are ignored rather than fatal.
  ASSIGN_OR_RETURN(out.in_commit_timestamp, OptionalInt64(b["inCommitTimestamp"]));
  if (auto ts = OptionalInt64(b["timestamp"]); ts.ok()) out.timestamp = *ts;
  if (auto op = OptionalString(b["operation"]); op.ok()) out.operation = *op;
  return out;
}

Result<DomainMetadata> ParseDomainMetadata(const Body& b) {
  DomainMetadata out;
  ASSIGN_OR_RETURN(out.domain, RequiredString(b["domain"]));
  ASSIGN_OR_RETURN(out.configuration, RequiredString(b["configuration"]));
  ASSIGN_OR_RETURN(out.removed, RequiredBool(b["removed"]));
  return out;
}

Result<CheckpointMetadata> ParseCheckpointMetadata(const Body& b) {
  CheckpointMetadata out;
  ASSIGN_OR_RETURN(out.version, RequiredInt64(b["version"]));
  ASSIGN_OR_RETURN(out.tags, OptionalStringMap(b["tags"]));
  return out;
}

Result<Sidecar> ParseSidecar(const Body& b) {
  Sidecar out;
  ASSIGN_OR_RETURN(out.path, RequiredString(b["path"]));
  ASSIGN_OR_RETURN(out.size_in_bytes, RequiredInt64(b["sizeInBytes"]));
  ASSIGN_OR_RETURN(out.modification_time, RequiredInt64(b["modificationTime"]));
  return out;
}

Result<CdcFile> ParseCdc(const Body& b) {
  CdcFile out;
  ASSIGN_OR_RETURN(out.path, RequiredString(b["path"]));
  ASSIGN_OR_RETURN(out.partition_values, OptionalNullableStringMap(b["partitionValues"]));
  ASSIGN_OR_RETURN(out.size, RequiredInt64(b["size"]));
  ASSIGN_OR_RETURN(out.data_change, RequiredBool(b["dataChange"]));
  return out;
}

template <typename T>
Status Store(Result<T> parsed, Action* out) {
  if (!parsed.ok()) return parsed.status();
  *out = std::move(parsed).value();
  return Status::OK();
}

constexpr std::array<std::string_view, 10> kKnownActions = {
    "add",        "remove",         "metaData",           "protocol", "txn",
    "commitInfo", "domainMetadata", "checkpointMetadata", "sidecar",  "cdc"};

Status ParseKnown(std::string_view name, Element body, const Location& where, Action* out) {
  Object object;
  if (body.get_object().get(object) != simdjson::SUCCESS) {
    return Status::Corruption(where.ToString() + ": action '" + std::string(name) + "' must be a JSON object");
  }
  Body b{object, name, where};
  if (name == "add") return ParseAdd(b, out->emplace<AddFile>());
  if (name == "remove") return Store(ParseRemove(b), out);
  if (name == "metaData") return Store(ParseMetadata(b), out);
  if (name == "protocol") return Store(ParseProtocol(b), out);
  if (name == "txn") return Store(ParseTxn(b), out);
  if (name == "commitInfo") return Store(ParseCommitInfo(b), out);
  if (name == "domainMetadata") return Store(ParseDomainMetadata(b), out);
  if (name == "checkpointMetadata") return Store(ParseCheckpointMetadata(b), out);
  if (name == "sidecar") return Store(ParseSidecar(b), out);
  return Store(ParseCdc(b), out);
}

// One parser per thread, reused line after line: it keeps its buffers.
simdjson::dom::parser& ThreadParser() {
  thread_local simdjson::dom::parser parser;
  return parser;
}

// Parses one line into `out`; false for a row without an action.
Result<bool> ParseLine(std::string_view json_text, const Location& where, Action* out) {
  Element doc;
  if (ThreadParser().parse(json_text.data(), json_text.size()).get(doc) != simdjson::SUCCESS) {
    return Status::Corruption(where.ToString() + ": not valid JSON");
  }
  Object object;
  if (doc.get_object().get(object) != simdjson::SUCCESS) {
    return Status::Corruption(where.ToString() + ": an action must be a JSON object");
  }
  // A checkpoint row has one column per action type, all null but one.
  std::optional<Element> known_body;
  std::string_view known_name;
  std::optional<Element> unknown_body;
  std::string_view unknown_name;
  for (auto [name, body] : object) {
    if (body.is_null()) continue;
    auto it = std::find(kKnownActions.begin(), kKnownActions.end(), name);
    if (it == kKnownActions.end()) {
      if (!unknown_body) {
        unknown_body = body;
        unknown_name = name;
      }
      continue;
    }
    if (known_body) {
      return Status::Corruption(where.ToString() + ": more than one action in one line ('" +
                                std::string(known_name) + "' and '" + std::string(name) + "')");
    }
    known_body = body;
    known_name = *it;
  }
  if (known_body) {
    RETURN_IF_ERROR(ParseKnown(known_name, *known_body, where, out));
    return true;
  }
  if (unknown_body) {
    json raw = json::parse(Dump(*unknown_body), nullptr, /*allow_exceptions=*/false);
    *out = UnknownAction{std::string(unknown_name), std::move(raw)};
    return true;
  }
  return false;
}

bool IsBlank(std::string_view line) { return line.find_first_not_of(" \t\r") == std::string_view::npos; }

}  // namespace

Result<std::optional<Action>> ParseAction(std::string_view json_text, const std::string& where) {
  Action action;
  ASSIGN_OR_RETURN(bool found, ParseLine(json_text, Location{where, 0}, &action));
  if (!found) return std::optional<Action>();
  return std::optional<Action>(std::move(action));
}

Status ForEachAction(std::string_view content, const std::string& where, std::string_view needle,
                     const std::function<Status(Action&)>& visit, size_t first_line) {
  // Horspool skips ahead by the needle's length; a plain find stops at every '"'.
  const std::boyer_moore_horspool_searcher searcher(needle.begin(), needle.end());
  Location location{where, 0};
  Action action;           // reused line after line
  size_t line_number = first_line;  // of the line starting at content[counted]
  size_t counted = 0;
  size_t pos = 0;  // the start of a line
  while (pos < content.size()) {
    if (!needle.empty()) {
      // Jump to the next line holding the needle, counting the lines skipped.
      const auto hit = std::search(content.begin() + pos, content.end(), searcher);
      if (hit == content.end()) break;
      const size_t newline = content.rfind('\n', static_cast<size_t>(hit - content.begin()));
      if (newline != std::string_view::npos && newline >= pos) pos = newline + 1;
      line_number += static_cast<size_t>(std::count(content.begin() + counted, content.begin() + pos, '\n'));
    }
    size_t end = content.find('\n', pos);
    if (end == std::string_view::npos) end = content.size();
    const std::string_view line = content.substr(pos, end - pos);
    location.line = line_number;
    pos = end + 1;
    counted = pos;
    line_number++;
    if (IsBlank(line)) continue;
    ASSIGN_OR_RETURN(bool found, ParseLine(line, location, &action));
    if (found) RETURN_IF_ERROR(visit(action));
  }
  return Status::OK();
}

Result<std::vector<Action>> ParseCommitFile(std::string_view content, const std::string& where) {
  return ParseCommitLinesContaining(content, where, "");
}

Result<std::vector<Action>> ParseCommitLinesContaining(std::string_view content, const std::string& where,
                                                       std::string_view needle) {
  std::vector<Action> actions;
  RETURN_IF_ERROR(ForEachAction(content, where, needle, [&](Action& action) {
    actions.push_back(std::move(action));
    return Status::OK();
  }));
  return actions;
}

namespace {

json PartitionValuesJson(const PartitionValues& values) {
  json out = json::object();
  for (const auto& [key, value] : values) out[key] = value ? json(*value) : json(nullptr);
  return out;
}

json StringMapJson(const std::map<std::string, std::string>& values) {
  json out = json::object();
  for (const auto& [key, value] : values) out[key] = value;
  return out;
}

json DeletionVectorJson(const DeletionVectorDescriptor& dv) {
  json out = {{"storageType", std::string(1, dv.storage_type)},
              {"pathOrInlineDv", dv.path_or_inline_dv},
              {"sizeInBytes", dv.size_in_bytes},
              {"cardinality", dv.cardinality}};
  if (dv.offset) out["offset"] = *dv.offset;
  return out;
}

template <typename T>
void SetIf(json& obj, const char* name, const std::optional<T>& value) {
  if (value) obj[name] = *value;
}

json StringListJson(const std::vector<std::string>& values) {
  json out = json::array();
  for (const auto& v : values) out.push_back(v);
  return out;
}

struct BodyWriter {
  json operator()(const AddFile& a) const {
    json out = {{"path", a.path},
                {"partitionValues", PartitionValuesJson(a.partition_values)},
                {"size", a.size},
                {"modificationTime", a.modification_time},
                {"dataChange", a.data_change}};
    SetIf(out, "stats", StatsJson(a));
    if (!a.tags.empty()) out["tags"] = StringMapJson(a.tags);
    if (a.deletion_vector) out["deletionVector"] = DeletionVectorJson(*a.deletion_vector);
    SetIf(out, "baseRowId", a.base_row_id);
    SetIf(out, "defaultRowCommitVersion", a.default_row_commit_version);
    SetIf(out, "clusteringProvider", a.clustering_provider);
    return out;
  }
  json operator()(const RemoveFile& r) const {
    json out = {{"path", r.path}, {"dataChange", r.data_change}};
    SetIf(out, "deletionTimestamp", r.deletion_timestamp);
    if (r.extended_file_metadata) out["extendedFileMetadata"] = true;
    if (r.extended_file_metadata || !r.partition_values.empty()) {
      out["partitionValues"] = PartitionValuesJson(r.partition_values);
    }
    SetIf(out, "size", r.size);
    if (r.deletion_vector) out["deletionVector"] = DeletionVectorJson(*r.deletion_vector);
    return out;
  }
  json operator()(const Protocol& p) const {
    json out = {{"minReaderVersion", p.min_reader_version}, {"minWriterVersion", p.min_writer_version}};
    if (p.reader_features) out["readerFeatures"] = StringListJson(*p.reader_features);
    if (p.writer_features) out["writerFeatures"] = StringListJson(*p.writer_features);
    return out;
  }
  json operator()(const Metadata& m) const {
    json out = {{"id", m.id},
                {"format", {{"provider", m.format_provider}, {"options", StringMapJson(m.format_options)}}},
                {"schemaString", m.schema_string},
                {"partitionColumns", StringListJson(m.partition_columns)},
                {"configuration", StringMapJson(m.configuration)}};
    SetIf(out, "name", m.name);
    SetIf(out, "description", m.description);
    SetIf(out, "createdTime", m.created_time);
    return out;
  }
  json operator()(const SetTransaction& t) const {
    json out = {{"appId", t.app_id}, {"version", t.version}};
    SetIf(out, "lastUpdated", t.last_updated);
    return out;
  }
  json operator()(const CommitInfo& c) const {
    json out = c.raw.is_object() ? c.raw : json::object();
    SetIf(out, "inCommitTimestamp", c.in_commit_timestamp);
    SetIf(out, "timestamp", c.timestamp);
    SetIf(out, "operation", c.operation);
    return out;
  }
  json operator()(const DomainMetadata& d) const {
    return {{"domain", d.domain}, {"configuration", d.configuration}, {"removed", d.removed}};
  }
  json operator()(const CheckpointMetadata& c) const {
    json out = {{"version", c.version}};
    if (!c.tags.empty()) out["tags"] = StringMapJson(c.tags);
    return out;
  }
  json operator()(const Sidecar& s) const {
    return {{"path", s.path}, {"sizeInBytes", s.size_in_bytes}, {"modificationTime", s.modification_time}};
  }
  json operator()(const CdcFile& c) const {
    return {{"path", c.path},
            {"partitionValues", PartitionValuesJson(c.partition_values)},
            {"size", c.size},
            {"dataChange", c.data_change}};
  }
  json operator()(const UnknownAction& u) const { return u.raw; }
};

struct NameOf {
  std::string operator()(const AddFile&) const { return "add"; }
  std::string operator()(const RemoveFile&) const { return "remove"; }
  std::string operator()(const Protocol&) const { return "protocol"; }
  std::string operator()(const Metadata&) const { return "metaData"; }
  std::string operator()(const SetTransaction&) const { return "txn"; }
  std::string operator()(const CommitInfo&) const { return "commitInfo"; }
  std::string operator()(const DomainMetadata&) const { return "domainMetadata"; }
  std::string operator()(const CheckpointMetadata&) const { return "checkpointMetadata"; }
  std::string operator()(const Sidecar&) const { return "sidecar"; }
  std::string operator()(const CdcFile&) const { return "cdc"; }
  std::string operator()(const UnknownAction& u) const { return u.name; }
};

}  // namespace

std::string ActionName(const Action& action) { return std::visit(NameOf{}, action); }

std::string SerializeAction(const Action& action) {
  json line = json::object();
  line[ActionName(action)] = std::visit(BodyWriter{}, action);
  return line.dump(-1, ' ', false, json::error_handler_t::replace);
}

RemoveFile RemoveOf(const AddFile& add, bool data_change) {
  RemoveFile remove;
  remove.path = add.path;
  remove.data_change = data_change;
  remove.extended_file_metadata = true;
  remove.partition_values = add.partition_values;
  remove.size = add.size;
  remove.deletion_vector = add.deletion_vector;
  return remove;
}

std::optional<int64_t> StatsNumRecords(const AddFile& add) {
  if (!add.stats && add.parsed_stats) return add.parsed_stats->NumRecords(add.parsed_stats_row);
  if (!add.stats) return std::nullopt;
  Element stats;
  int64_t n = 0;
  if (ThreadParser().parse(*add.stats).get(stats) != simdjson::SUCCESS ||
      stats["numRecords"].get_int64().get(n) != simdjson::SUCCESS) {
    return std::nullopt;
  }
  return n;
}

std::optional<std::string> StatsJson(const AddFile& add) {
  if (add.stats || !add.parsed_stats) return add.stats;
  return add.parsed_stats->Json(add.parsed_stats_row);
}

std::string ColumnMappingMode(const std::map<std::string, std::string>& configuration) {
  auto it = configuration.find("delta.columnMapping.mode");
  return it == configuration.end() ? "none" : AsciiLower(it->second);
}

bool ColumnMappingEnabled(const Metadata& metadata) {
  const std::string mode = ColumnMappingMode(metadata.configuration);
  return mode == "name" || mode == "id";
}

}  // namespace basin::delta
