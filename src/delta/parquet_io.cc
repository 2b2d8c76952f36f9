#include "delta/parquet_io.h"

namespace basin::delta {

std::span<const char* const> CheckpointColumnNames(CheckpointColumns columns) {
  // A V2 top-level file keeps the add/remove columns (all null) so that readers expecting
  // the full checkpoint schema find them.
  static constexpr const char* kClassic[] = {"txn",      "add",      "remove",
                                             "metaData", "protocol", "domainMetadata"};
  static constexpr const char* kSidecar[] = {"add", "remove"};
  static constexpr const char* kV2TopLevel[] = {
      "checkpointMetadata", "txn", "add", "remove", "metaData", "protocol", "domainMetadata", "sidecar"};
  switch (columns) {
    case CheckpointColumns::kClassic:
      return kClassic;
    case CheckpointColumns::kSidecar:
      return kSidecar;
    case CheckpointColumns::kV2TopLevel:
      return kV2TopLevel;
  }
  return kClassic;
}

}  // namespace basin::delta
