// Table: a handle on one Delta table, in a warehouse (warehouse.h) or at a location. It
// reads the table's snapshots and history from its Delta log and begins append
// transactions; it caches nothing, so each call sees the table as it is in storage then.
//
// Thread safety: copies are cheap handles; any number of threads may use them at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "basin/snapshot.h"
#include "basin/status.h"
#include "basin/transaction.h"

namespace basin {

// One commit of the table's history.
struct HistoryEntry {
  int64_t version = 0;
  int64_t timestamp_ms = 0;  // as Snapshot::timestamp_ms()
  std::string operation;     // "CREATE TABLE", "WRITE", "MERGE", ...; empty when not recorded
};

class Table {
 public:
  // The Delta table at `location` (a local folder, absolute or relative to the working
  // folder, or a file: URI), outside any warehouse. NotFound when the location has no
  // _delta_log; InvalidArgument for an empty location; NotImplemented for stores Basin
  // does not have yet (s3://).
  static Result<Table> OpenAt(const std::string& location);

  // "schema.table"; empty for a table opened with OpenAt().
  const std::string& name() const;
  // Where the table is: its _delta_log is below it.
  const std::string& location() const;

  // The latest version. Errors name the table: Corruption for a damaged log, Unsupported
  // for a table written with features Basin cannot read, IOError from storage.
  Result<Snapshot> LatestSnapshot() const;
  // Exactly `version`; NotFound when the log no longer (or not yet) has it.
  Result<Snapshot> SnapshotAtVersion(int64_t version) const;
  // The latest version committed at or before `timestamp_ms` (milliseconds since the Unix
  // epoch, UTC); NotFound when that is before the oldest version the log can rebuild.
  Result<Snapshot> SnapshotAtTimestamp(int64_t timestamp_ms) const;

  // The commits still in the log, newest first; at most `limit` of them (0: all).
  Result<std::vector<HistoryEntry>> History(size_t limit = 0) const;

  // An append transaction on this table, with a session of its own on the table's
  // warehouse (the working folder for a table opened with OpenAt()). Errors: opening the
  // session failed.
  Result<Transaction> BeginTransaction() const;

  // Internal: tables come from Warehouse and OpenAt().
  struct Impl;
  explicit Table(std::shared_ptr<const Impl> impl);

 private:
  std::shared_ptr<const Impl> impl_;
};

}  // namespace basin
