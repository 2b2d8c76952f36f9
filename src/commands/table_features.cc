#include "commands/table_features.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <functional>
#include <limits>
#include <set>
#include <vector>

#include "common/strings.h"
#include "common/uuid.h"
#include "delta/checkpoint_writer.h"
#include "delta/protocol.h"

namespace basin::commands {

namespace {

bool StartsWith(const std::string& text, std::string_view prefix) { return text.rfind(prefix, 0) == 0; }

constexpr std::string_view kConstraintPrefix = "delta.constraints.";
constexpr std::string_view kFeaturePrefix = "delta.feature.";

// A table feature: its PROTOCOL.md name, whether readers must know it too, and the legacy
// protocol versions that imply it (0 when only the feature lists can carry it).
struct FeatureInfo {
  std::string_view name;
  bool reader_writer;
  int legacy_reader;
  int legacy_writer;
};

constexpr FeatureInfo kFeatures[] = {
    {"appendOnly", false, 1, 2},          {"invariants", false, 1, 2},
    {"checkConstraints", false, 1, 3},    {"changeDataFeed", false, 1, 4},
    {"generatedColumns", false, 1, 4},    {"columnMapping", true, 2, 5},
    {"identityColumns", false, 1, 6},     {"deletionVectors", true, 0, 0},
    {"timestampNtz", true, 0, 0},         {"inCommitTimestamp", false, 0, 0},
    {"v2Checkpoint", true, 0, 0},         {"typeWidening", true, 0, 0},
    {"typeWidening-preview", true, 0, 0}, {"vacuumProtocolCheck", true, 0, 0},
    {"domainMetadata", false, 0, 0},      {"rowTracking", false, 0, 0},
    {"variantType", true, 0, 0},          {"variantType-preview", true, 0, 0},
    {"clustering", false, 0, 0},          {"allowColumnDefaults", false, 0, 0},
    {"icebergCompatV1", false, 0, 0},     {"icebergCompatV2", false, 0, 0},
};

const FeatureInfo* FindFeature(std::string_view name) {
  for (const auto& feature : kFeatures) {
    if (feature.name == name) return &feature;
  }
  return nullptr;
}

bool IsReaderWriterFeature(const std::string& name) {
  const FeatureInfo* info = FindFeature(name);
  // Features Basin does not know are kept as they are; only their presence matters here.
  return info != nullptr && info->reader_writer;
}

Status BooleanProperty(const std::string& key, const std::string& value) {
  const std::string v = AsciiLower(value);
  if (v == "true" || v == "false") return Status::OK();
  return Status::InvalidArgument("table property " + key + " must be 'true' or 'false', got '" + value + "'");
}

// Checks one value with the parser its reader uses, so that what is accepted here is what
// the table's later commands understand.
Status ParsedByReader(const std::string& key, const std::string& value) {
  delta::Metadata probe;
  probe.configuration[key] = value;
  if (key == "delta.checkpointInterval") return delta::CheckpointInterval(probe).status();
  if (key == "delta.checkpointPolicy") return delta::CheckpointPolicyOf(probe).status();
  if (key == "delta.targetFileSize") return TargetFileSizeBytes(probe).status();
  if (key == "delta.dataSkippingNumIndexedCols") return DataSkippingNumIndexedCols(probe).status();
  return delta::DurationPropertyMs(probe, key, 0).status();
}

Status ValidateProperty(const std::string& key, const std::string& value) {
  static const char* const kBooleans[] = {
      "delta.enableDeletionVectors",    "delta.enableChangeDataFeed", "delta.appendOnly",
      "delta.enableInCommitTimestamps", "delta.enableTypeWidening",   "delta.enableExpiredLogCleanup",
      "delta.autoOptimize.autoCompact",  // streams compact their sink unless false (stream/runner.h)
  };
  for (const char* name : kBooleans) {
    if (key == name) return BooleanProperty(key, value);
  }
  if (key == "delta.columnMapping.mode") {
    const std::string v = AsciiLower(value);
    if (v == "none" || v == "name" || v == "id") return Status::OK();
    return Status::InvalidArgument(
        "table property delta.columnMapping.mode must be 'none', 'name' or 'id', got '" + value + "'");
  }
  if (key == "delta.isolationLevel") {
    // Spelled exactly as Delta writes them: delta/conflict_checker.cc reads any other
    // spelling as Serializable.
    if (value == "Serializable" || value == "WriteSerializable") return Status::OK();
    return Status::InvalidArgument(
        "table property delta.isolationLevel must be 'Serializable' or 'WriteSerializable', got '" + value +
        "'");
  }
  if (key == "delta.checkpointInterval" || key == "delta.checkpointPolicy" ||
      key == "delta.logRetentionDuration" || key == "delta.deletedFileRetentionDuration" ||
      key == "delta.targetFileSize") {
    return ParsedByReader(key, value).WithContext("table property " + key);
  }
  // Its parser names the property itself.
  if (key == "delta.dataSkippingNumIndexedCols") return ParsedByReader(key, value);
  if (key == "delta.dataSkippingStatsColumns") {
    // Names are matched against the schema when files are written (commands/table_rows.cc).
    if (value.find_first_not_of(" \t,") != std::string::npos) return Status::OK();
    return Status::InvalidArgument("table property " + key + " must name at least one column, got '" + value +
                                   "'");
  }
  if (StartsWith(key, kConstraintPrefix)) {
    if (key.size() == kConstraintPrefix.size()) {
      return Status::InvalidArgument("table property " + key +
                                     " needs a constraint name after 'delta.constraints.'");
    }
    if (value.find_first_not_of(" \t\r\n") == std::string::npos) {
      return Status::InvalidArgument("table property " + key +
                                     ": the CHECK constraint's expression is empty");
    }
    return Status::OK();
  }
  if (StartsWith(key, kFeaturePrefix)) {
    const std::string feature = key.substr(kFeaturePrefix.size());
    const std::string v = AsciiLower(value);
    if (v != "supported" && v != "enabled") {
      return Status::InvalidArgument("table property " + key + " must be 'supported', got '" + value + "'");
    }
    const auto& writable = delta::SupportedWriterFeatures();
    if (std::find(writable.begin(), writable.end(), feature) == writable.end()) {
      return Status::InvalidArgument("table property " + key + ": '" + feature +
                                     "' is not a table feature Basin can write");
    }
    return Status::OK();
  }
  if (key == "delta.columnMapping.maxColumnId") {
    return Status::InvalidArgument("table property " + key +
                                   " is maintained by Delta writers and cannot be set");
  }
  return Status::InvalidArgument("unknown table property " + key +
                                 " (properties outside the delta. prefix are free to use)");
}

bool TypeHas(const delta::DataType& type, const std::function<bool(const delta::StructField&)>& pred,
             const std::function<bool(const delta::DataType&)>& type_pred) {
  if (type_pred(type)) return true;
  switch (type.kind) {
    case delta::DataType::Kind::kStruct:
      for (const auto& field : type.struct_type.fields) {
        if (pred(field) || (field.type && TypeHas(*field.type, pred, type_pred))) return true;
      }
      return false;
    case delta::DataType::Kind::kArray:
      return type.element_type && TypeHas(*type.element_type, pred, type_pred);
    case delta::DataType::Kind::kMap:
      return (type.key_type && TypeHas(*type.key_type, pred, type_pred)) ||
             (type.value_type && TypeHas(*type.value_type, pred, type_pred));
    case delta::DataType::Kind::kPrimitive:
      return false;
  }
  return false;
}

// Whether any field (at any depth) satisfies `field_pred`, or any type `type_pred`.
bool SchemaHasAny(const delta::StructType& schema,
                  const std::function<bool(const delta::StructField&)>& field_pred,
                  const std::function<bool(const delta::DataType&)>& type_pred) {
  for (const auto& field : schema.fields) {
    if (field_pred(field) || (field.type && TypeHas(*field.type, field_pred, type_pred))) return true;
  }
  return false;
}

bool HasFieldMetadata(const delta::StructField& field, const char* key) {
  return field.metadata.is_object() && field.metadata.contains(key);
}

// The features the table's configuration and schema use, in PROTOCOL.md's order.
// `explicit_features` tells whether a delta.feature.<name> property asks for a feature by name,
// which only a table-features protocol can list.
std::vector<std::string> NeededFeatures(const delta::Metadata& metadata, const delta::StructType& schema,
                                        bool* explicit_features) {
  *explicit_features = false;
  auto is_true = [&](const char* key) { return TablePropertyIsTrue(metadata, key); };
  auto no_type = [](const delta::DataType&) { return false; };
  auto no_field = [](const delta::StructField&) { return false; };
  std::set<std::string> needed;
  if (is_true("delta.appendOnly")) needed.insert("appendOnly");
  if (SchemaHasAny(
          schema, [](const auto& f) { return HasFieldMetadata(f, "delta.invariants"); }, no_type)) {
    needed.insert("invariants");
  }
  for (const auto& [key, value] : metadata.configuration) {
    if (StartsWith(key, kConstraintPrefix)) needed.insert("checkConstraints");
    if (StartsWith(key, kFeaturePrefix)) {
      needed.insert(key.substr(kFeaturePrefix.size()));
      *explicit_features = true;
    }
  }
  if (is_true("delta.enableChangeDataFeed")) needed.insert("changeDataFeed");
  if (SchemaHasAny(
          schema, [](const auto& f) { return HasFieldMetadata(f, "delta.generationExpression"); }, no_type)) {
    needed.insert("generatedColumns");
  }
  if (delta::ColumnMappingMode(metadata.configuration) != "none") needed.insert("columnMapping");
  if (is_true("delta.enableDeletionVectors")) needed.insert("deletionVectors");
  if (SchemaHasAny(schema, no_field, [](const delta::DataType& t) {
        return t.kind == delta::DataType::Kind::kPrimitive && t.primitive == "timestamp_ntz";
      })) {
    needed.insert("timestampNtz");
  }
  if (is_true("delta.enableInCommitTimestamps")) needed.insert("inCommitTimestamp");
  auto policy = metadata.configuration.find("delta.checkpointPolicy");
  if (policy != metadata.configuration.end() && AsciiLower(policy->second) == "v2")
    needed.insert("v2Checkpoint");
  if (is_true("delta.enableTypeWidening")) needed.insert("typeWidening");

  std::vector<std::string> ordered;
  for (const auto& feature : kFeatures) {
    if (needed.erase(std::string(feature.name))) ordered.emplace_back(feature.name);
  }
  ordered.insert(ordered.end(), needed.begin(), needed.end());
  return ordered;
}

// The features a legacy protocol (writer < 7) implies, as PROTOCOL.md's version tables say.
std::vector<std::string> ImpliedFeatures(const delta::Protocol& protocol) {
  std::vector<std::string> implied;
  for (const auto& feature : kFeatures) {
    if (feature.legacy_writer == 0) continue;
    bool writer_ok = protocol.min_writer_version >= feature.legacy_writer;
    bool reader_ok = !feature.reader_writer || protocol.min_reader_version >= feature.legacy_reader;
    if (writer_ok && reader_ok) implied.emplace_back(feature.name);
  }
  return implied;
}

void AddUnique(std::vector<std::string>& list, const std::string& name) {
  if (std::find(list.begin(), list.end(), name) == list.end()) list.push_back(name);
}

// A column mapping id and physical name for every field of `type` (and below) that lacks them.
void AssignInType(delta::DataTypePtr& type, int64_t& max_id, bool keep_names);

void AssignInStruct(delta::StructType& schema, int64_t& max_id, bool keep_names) {
  for (auto& field : schema.fields) {
    if (!field.metadata.is_object()) field.metadata = nlohmann::json::object();
    if (!field.metadata.contains("delta.columnMapping.id"))
      field.metadata["delta.columnMapping.id"] = ++max_id;
    if (!field.metadata.contains("delta.columnMapping.physicalName")) {
      field.metadata["delta.columnMapping.physicalName"] = keep_names ? field.name : "col-" + NewUuid();
    }
    if (field.type) AssignInType(field.type, max_id, keep_names);
  }
}

void AssignInType(delta::DataTypePtr& type, int64_t& max_id, bool keep_names) {
  if (type->kind == delta::DataType::Kind::kPrimitive) return;
  auto copy = std::make_shared<delta::DataType>(*type);
  switch (copy->kind) {
    case delta::DataType::Kind::kStruct:
      AssignInStruct(copy->struct_type, max_id, keep_names);
      break;
    case delta::DataType::Kind::kArray:
      if (copy->element_type) AssignInType(copy->element_type, max_id, keep_names);
      break;
    case delta::DataType::Kind::kMap:
      if (copy->key_type) AssignInType(copy->key_type, max_id, keep_names);
      if (copy->value_type) AssignInType(copy->value_type, max_id, keep_names);
      break;
    case delta::DataType::Kind::kPrimitive:
      break;
  }
  type = std::move(copy);
}

void MaxIdInType(const delta::DataType& type, int64_t& max_id);

void MaxIdInStruct(const delta::StructType& schema, int64_t& max_id) {
  for (const auto& field : schema.fields) {
    if (auto id = field.ColumnMappingId()) max_id = std::max(max_id, *id);
    if (field.type) MaxIdInType(*field.type, max_id);
  }
}

void MaxIdInType(const delta::DataType& type, int64_t& max_id) {
  if (type.kind == delta::DataType::Kind::kStruct) MaxIdInStruct(type.struct_type, max_id);
  if (type.element_type) MaxIdInType(*type.element_type, max_id);
  if (type.key_type) MaxIdInType(*type.key_type, max_id);
  if (type.value_type) MaxIdInType(*type.value_type, max_id);
}

}  // namespace

std::optional<int64_t> ParseByteSize(std::string_view size) {
  std::string text;
  for (char c : size) {
    if (!std::isspace(static_cast<unsigned char>(c))) text += c;
  }
  text = AsciiLower(text);
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end == text.data() || value <= 0) return std::nullopt;
  std::string unit = text.substr(static_cast<size_t>(end - text.data()));
  if (!unit.empty() && unit.back() == 'b') unit.pop_back();
  static const std::pair<const char*, int> kShifts[] = {{"", 0}, {"k", 10}, {"m", 20}, {"g", 30}, {"t", 40}};
  for (const auto& [suffix, shift] : kShifts) {
    if (unit != suffix) continue;
    if (value > (std::numeric_limits<int64_t>::max() >> shift)) return std::nullopt;
    return value << shift;
  }
  return std::nullopt;
}

Result<int64_t> TargetFileSizeBytes(const delta::Metadata& metadata) {
  constexpr int64_t kDefault = int64_t{128} << 20;
  auto it = metadata.configuration.find("delta.targetFileSize");
  if (it == metadata.configuration.end()) return kDefault;
  std::optional<int64_t> bytes = ParseByteSize(it->second);
  if (bytes) return *bytes;
  return Status::InvalidArgument("table property delta.targetFileSize: '" + it->second +
                                 "' is not a positive size in bytes (e.g. 134217728, 128mb or 1g)");
}

Result<int64_t> DataSkippingNumIndexedCols(const delta::Metadata& metadata) {
  constexpr int64_t kDefault = 32;
  auto it = metadata.configuration.find("delta.dataSkippingNumIndexedCols");
  if (it == metadata.configuration.end()) return kDefault;
  const std::string& value = it->second;
  int64_t parsed = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), parsed);
  if (ec == std::errc() && end == value.data() + value.size() && parsed >= -1) return parsed;
  return Status::InvalidArgument(
      "table property delta.dataSkippingNumIndexedCols must be an integer of at least -1, got '" + value +
      "'");
}

Status ValidateTableProperties(const std::map<std::string, std::string>& properties) {
  for (const auto& [key, value] : properties) {
    if (!StartsWith(key, "delta.")) continue;
    RETURN_IF_ERROR(ValidateProperty(key, value));
  }
  return Status::OK();
}

Result<delta::Protocol> RequiredProtocol(const delta::Metadata& metadata, const delta::StructType& schema,
                                         const std::optional<delta::Protocol>& current) {
  if (current && current->min_reader_version >= 3 && current->min_writer_version < 7) {
    return Status::Corruption("the table's protocol has reader version 3 with writer version " +
                              std::to_string(current->min_writer_version) +
                              " (table features need writer 7)");
  }
  bool explicit_features = false;
  const std::vector<std::string> needed = NeededFeatures(metadata, schema, &explicit_features);
  const bool current_has_features = current && current->min_writer_version >= 7;
  const bool legacy_suffices = !current_has_features && !explicit_features &&
                               std::all_of(needed.begin(), needed.end(), [](const std::string& name) {
                                 const FeatureInfo* info = FindFeature(name);
                                 return info != nullptr && info->legacy_writer != 0;
                               });

  if (legacy_suffices) {
    delta::Protocol protocol;
    protocol.min_reader_version = current ? std::max(current->min_reader_version, 1) : 1;
    protocol.min_writer_version = current ? std::max(current->min_writer_version, 2) : 2;
    for (const auto& name : needed) {
      const FeatureInfo* info = FindFeature(name);
      protocol.min_writer_version = std::max(protocol.min_writer_version, info->legacy_writer);
      if (info->reader_writer)
        protocol.min_reader_version = std::max(protocol.min_reader_version, info->legacy_reader);
    }
    return protocol;
  }

  // Table features: every feature the current protocol supports stays listed, legacy
  // versions' implicit features included (PROTOCOL.md "Table Features for New and Existing
  // Tables": a client must assume a feature its old protocol allowed was used).
  std::vector<std::string> writer;
  std::vector<std::string> reader;
  if (current) {
    if (current->writer_features) writer = *current->writer_features;
    if (current->reader_features) reader = *current->reader_features;
    if (!current_has_features) {
      for (const auto& name : ImpliedFeatures(*current)) AddUnique(writer, name);
    }
  }
  for (const auto& name : needed) AddUnique(writer, name);

  std::vector<std::string> reader_writer;
  for (const auto& name : writer) {
    if (IsReaderWriterFeature(name)) reader_writer.push_back(name);
  }
  delta::Protocol protocol;
  protocol.min_writer_version = 7;
  protocol.writer_features = writer;
  const bool current_reader_3 = current && current->min_reader_version >= 3;
  const bool only_column_mapping = std::all_of(reader_writer.begin(), reader_writer.end(),
                                               [](const std::string& n) { return n == "columnMapping"; });
  if (!current_reader_3 && only_column_mapping) {
    // Reader version 2 already means column mapping; readers need no feature list for it.
    protocol.min_reader_version = reader_writer.empty() ? (current ? current->min_reader_version : 1) : 2;
    protocol.min_reader_version = std::max(protocol.min_reader_version, 1);
    return protocol;
  }
  protocol.min_reader_version = 3;
  for (const auto& name : reader_writer) AddUnique(reader, name);
  protocol.reader_features = reader;
  return protocol;
}

void AssignColumnMapping(delta::StructType& schema, std::map<std::string, std::string>& configuration) {
  AssignColumnMapping(schema, configuration, PhysicalNames::kNew);
}

void AssignColumnMapping(delta::StructType& schema, std::map<std::string, std::string>& configuration,
                         PhysicalNames physical_names) {
  const std::string mode = delta::ColumnMappingMode(configuration);
  if (mode != "name" && mode != "id") return;
  int64_t max_id = 0;
  auto stored = configuration.find("delta.columnMapping.maxColumnId");
  if (stored != configuration.end()) {
    int64_t parsed = 0;
    auto [end, ec] =
        std::from_chars(stored->second.data(), stored->second.data() + stored->second.size(), parsed);
    if (ec == std::errc()) max_id = parsed;
  }
  // Ids already in the schema count too, in case the property was lost.
  MaxIdInStruct(schema, max_id);
  AssignInStruct(schema, max_id, physical_names == PhysicalNames::kSameAsName);
  configuration["delta.columnMapping.maxColumnId"] = std::to_string(max_id);
}

bool TablePropertyIsTrue(const delta::Metadata& metadata, const std::string& key, bool fallback) {
  auto it = metadata.configuration.find(key);
  if (it == metadata.configuration.end()) return fallback;
  return AsciiLower(it->second) == "true";
}

}  // namespace basin::commands
