// Helpers shared by the maintenance commands (optimize.cc, vacuum.cc, restore.cc): the
// table as a write target, and the transaction clock.
//
// Thread safety: functions of their arguments.
#pragma once

#include <cstdint>

#include "basin/status.h"
#include "commands/table_rows.h"
#include "delta/actions.h"
#include "delta/snapshot.h"
#include "delta/transaction.h"

namespace basin::commands::internal {

// Where new data files of `table` go, with its current protocol, metadata and schema.
WriteTarget TargetOf(const delta::Snapshot& table);

// The transaction clock's time (the system clock when the options set none).
int64_t NowMs(const delta::TransactionOptions& options);

}  // namespace basin::commands::internal
