#include "commands/maintenance_internal.h"

#include <chrono>
#include <string>

namespace basin::commands::internal {

WriteTarget TargetOf(const delta::Snapshot& table) {
  WriteTarget target;
  target.store = table.store;
  target.table_root = table.table_root;
  target.protocol = table.protocol;
  target.metadata = table.metadata;
  target.schema = table.schema;
  return target;
}

int64_t NowMs(const delta::TransactionOptions& options) {
  if (options.clock_ms) return options.clock_ms();
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace basin::commands::internal
