// SessionContext: what Basin's statement handlers (sql/statements.h) get from the
// session: the warehouse, the DuckDB connection, snapshots through the session's cache,
// table lookup by DuckDB's name rules, settings, command contexts, and the governor that
// says what the session's user may do.
//
// Thread safety: one thread at a time (the session's).
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "basin/status.h"
#include "catalog/warehouse.h"
#include "commands/command_context.h"
#include "delta/snapshot.h"
#include "engine/duckdb.h"
#include "sql/governor.h"

namespace basin::sql {

class SessionContext {
 public:
  virtual ~SessionContext() = default;

  virtual engine::Connection& conn() = 0;
  virtual const catalog::Warehouse& warehouse() const = 0;

  // The table `name_parts` (["t"] or ["s", "t"]) names; nullopt when the warehouse has no
  // such table. InvalidArgument for a malformed name.
  virtual Result<std::optional<catalog::TableEntry>> LookupTable(
      const std::vector<std::string>& name_parts) = 0;
  // The warehouse table a statement's name refers to by DuckDB's rules (temporary tables
  // and the search path first, catalog and schema qualification as DuckDB binds them);
  // nullopt when the name is some other table's, or nobody's.
  virtual Result<std::optional<catalog::TableEntry>> ResolveTable(
      const std::vector<std::string>& name_parts) = 0;
  // As LookupTable, NotFound naming the table when absent.
  virtual Result<catalog::TableEntry> GetTable(const std::vector<std::string>& name_parts) = 0;

  // A snapshot of the table at `location` (latest, or as `options` says), through the
  // session's snapshot cache. Errors name the table.
  virtual Result<std::shared_ptr<const delta::Snapshot>> LoadTable(
      const std::string& location, const delta::SnapshotOptions& options = {}) = 0;

  // A context for one command: the connection, the session's transaction options, and the
  // idempotent write id from SET basin.txn_app_id / basin.txn_version, which this call
  // consumes (the next write needs a new version).
  virtual commands::CommandContext MakeCommandContext() = 0;

  // Returns when the checkpoints this session's commits queued are written (before a
  // table's files are deleted: a checkpoint written after would bring its folder back).
  virtual void WaitForCheckpoints() = 0;

  // Whether a write may read STREAM sources (Session::AllowStreams).
  virtual bool streams_allowed() const = 0;

  // A setting from SET basin.<name> = value (name without the prefix), nullopt when unset.
  virtual std::optional<std::string> Setting(const std::string& name) const = 0;

  // Who runs the statement and what it may do; its access is read for each statement.
  virtual Governor& governor() = 0;
};

}  // namespace basin::sql
