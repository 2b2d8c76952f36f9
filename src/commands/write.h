// INSERT INTO, INSERT OVERWRITE (whole table or dynamic partition overwrite) and
// REPLACE WHERE, each one Delta transaction: data files written, then one commit with
// their adds (and the removes an overwrite implies), a txn action when the context has a
// txn id, and operation "WRITE" with Delta's parameters (mode, partitionBy, predicate)
// and metrics (numFiles, numOutputRows, numOutputBytes, numRemovedFiles...).
//
// Thread safety: functions; the context's Connection is used by one thread at a time.
#pragma once

#include <memory>
#include <string>

#include "basin/status.h"
#include "commands/command_context.h"
#include "commands/table_rows.h"
#include "delta/snapshot.h"

namespace basin::commands {

enum class WriteMode {
  kAppend,
  kOverwrite,                  // replaces every row of the table
  kDynamicPartitionOverwrite,  // replaces only the partitions the new rows fall into
  kReplaceWhere,               // replaces the rows matching `replace_where`
};

struct WriteRequest {
  std::string source_sql;  // DuckDB SQL producing the rows; names already resolved
  RowShape shape;
  WriteMode mode = WriteMode::kAppend;
  // kReplaceWhere: a predicate over the table's logical columns. Every new row must match
  // it (else InvalidArgument, as Delta's constraint check), and the rows matching it are
  // replaced: files wholly inside are removed, files partly inside rewritten.
  std::string replace_where;
};

// Errors: InvalidArgument (shape, types, constraints, naming the column), Unsupported for
// a table Basin cannot write (writer features), Conflict from the transaction, and
// InvalidArgument for an overwrite or delete on a delta.appendOnly table.
Result<CommandResult> Write(const CommandContext& ctx, std::shared_ptr<const delta::Snapshot> table,
                            const WriteRequest& request);

}  // namespace basin::commands
