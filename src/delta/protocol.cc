#include "delta/protocol.h"

#include <algorithm>

namespace basin::delta {

const std::vector<std::string>& SupportedReaderFeatures() {
  static const std::vector<std::string> kFeatures = {
      "deletionVectors",
      "columnMapping",
      "timestampNtz",
      "typeWidening",
      "typeWidening-preview",
      "v2Checkpoint",
      "vacuumProtocolCheck",
      "variantType",
      "variantType-preview",
      // Shredded variants reach the scan as Parquet structs with typed_value columns;
      // engine/scan decides how to present them.
      "variantShredding-preview",
  };
  return kFeatures;
}

Status ValidateReadProtocol(const Protocol& protocol, const std::string& where) {
  int32_t version = protocol.min_reader_version;
  if (version < 1 || version > 3) {
    return Status::Unsupported(where + ": the table requires Delta reader version " +
                               std::to_string(version) + "; Basin reads versions 1 to 3");
  }
  if (version < 3) return Status::OK();
  if (!protocol.reader_features) {
    return Status::Corruption(where +
                              ": reader version 3 requires a readerFeatures list in the protocol action");
  }
  const auto& supported = SupportedReaderFeatures();
  for (const auto& feature : *protocol.reader_features) {
    if (std::find(supported.begin(), supported.end(), feature) != supported.end()) continue;
    if (feature == "catalogManaged" || feature == "catalogOwned-preview") {
      return Status::Unsupported(where + ": the table requires reader feature '" + feature +
                                 "' (its commits are ratified by a catalog, which Basin does not consult)");
    }
    return Status::Unsupported(where + ": the table requires reader feature '" + feature +
                               "', which Basin does not support");
  }
  return Status::OK();
}

const std::vector<std::string>& SupportedWriterFeatures() {
  static const std::vector<std::string> kFeatures = {
      "appendOnly",     "invariants",          "checkConstraints", "generatedColumns",
      "columnMapping",  "deletionVectors",     "changeDataFeed",   "timestampNtz",
      "v2Checkpoint",   "inCommitTimestamp",   "typeWidening",     "typeWidening-preview",
      "domainMetadata", "vacuumProtocolCheck",
  };
  return kFeatures;
}

namespace {

// Why Basin refuses writer feature `feature`, for the message.
std::string WriteRefusalReason(const std::string& feature) {
  auto starts_with = [&](std::string_view prefix) { return feature.rfind(prefix, 0) == 0; };
  if (feature == "identityColumns") return "Basin does not generate identity column values";
  if (feature == "rowTracking") return "Basin does not assign row ids and row commit versions";
  if (feature == "clustering" || feature == "liquid") return "Basin does not maintain clustering metadata";
  if (starts_with("variantType") || starts_with("variantShredding"))
    return "Basin does not write variant values";
  if (starts_with("icebergCompat")) return "Basin does not keep the Iceberg compatibility requirements";
  if (feature == "materializePartitionColumns")
    return "Basin does not write partition columns into data files";
  if (feature == "catalogManaged" || feature == "catalogOwned-preview") {
    return "its commits are ratified by a catalog, which Basin does not consult";
  }
  return "Basin does not support it";
}

void CollectInvariantColumns(const DataType& type, const std::string& path, std::vector<std::string>& out);

// Dotted paths of the columns of `schema` (at any depth) with a delta.invariants expression.
void CollectInvariantColumns(const StructType& schema, const std::string& prefix,
                             std::vector<std::string>& out) {
  for (const auto& field : schema.fields) {
    const std::string path = prefix.empty() ? field.name : prefix + "." + field.name;
    if (field.metadata.is_object() && field.metadata.contains("delta.invariants")) out.push_back(path);
    if (field.type) CollectInvariantColumns(*field.type, path, out);
  }
}

void CollectInvariantColumns(const DataType& type, const std::string& path, std::vector<std::string>& out) {
  switch (type.kind) {
    case DataType::Kind::kStruct:
      CollectInvariantColumns(type.struct_type, path, out);
      break;
    case DataType::Kind::kArray:
      if (type.element_type) CollectInvariantColumns(*type.element_type, path + ".element", out);
      break;
    case DataType::Kind::kMap:
      if (type.key_type) CollectInvariantColumns(*type.key_type, path + ".key", out);
      if (type.value_type) CollectInvariantColumns(*type.value_type, path + ".value", out);
      break;
    case DataType::Kind::kPrimitive:
      break;
  }
}

}  // namespace

Status CheckWritable(const Protocol& protocol, const StructType& schema, const std::string& where) {
  const int32_t version = protocol.min_writer_version;
  if (version < 1 || version > 7) {
    return Status::Unsupported(where + ": the table requires Delta writer version " +
                               std::to_string(version) + "; Basin writes versions 1 to 5 and 7");
  }
  if (version == 7 && !protocol.writer_features) {
    return Status::Corruption(where +
                              ": writer version 7 requires a writerFeatures list in the protocol action");
  }
  std::vector<std::string> refusals;
  if (version == 6) {
    refusals.push_back("writer version 6, which implies identity columns (" +
                       WriteRefusalReason("identityColumns") + ")");
  }
  const bool has_invariants_feature = version == 7 ? protocol.HasWriterFeature("invariants") : version >= 2;
  if (has_invariants_feature) {
    std::vector<std::string> columns;
    CollectInvariantColumns(schema, "", columns);
    for (const auto& column : columns) {
      refusals.push_back(
          "column '" + column +
          "' has a delta.invariants expression (writer feature 'invariants'), which Basin does "
          "not enforce");
    }
  }
  if (version == 7) {
    const auto& supported = SupportedWriterFeatures();
    for (const auto& feature : *protocol.writer_features) {
      if (std::find(supported.begin(), supported.end(), feature) != supported.end()) continue;
      refusals.push_back("writer feature '" + feature + "' (" + WriteRefusalReason(feature) + ")");
    }
  }
  if (refusals.empty()) return Status::OK();
  std::string message = where + ": Basin cannot write this table: ";
  for (size_t i = 0; i < refusals.size(); i++) message += (i ? "; " : "") + refusals[i];
  return Status::Unsupported(message);
}

}  // namespace basin::delta
