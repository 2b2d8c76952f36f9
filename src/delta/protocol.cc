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

}  // namespace basin::delta
