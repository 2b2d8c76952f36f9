// ConflictChecker: decides whether a transaction may commit after a commit that won the
// race for its version (optimistic concurrency, WriteSerializable or Serializable as Delta
// Lake defines them). The rules, and the Delta Lake exceptions they correspond to, are in
// docs/transactions.md.
//
// Thread safety: plain values and a stateless function.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "basin/status.h"
#include "delta/actions.h"
#include "delta/predicate.h"
#include "delta/snapshot.h"

namespace basin::delta {

// The table property delta.isolationLevel. Under WriteSerializable (the default) a
// concurrent blind append never invalidates what a transaction read: it is serialized
// after it. Under Serializable it does when its files may hold rows the transaction read.
enum class IsolationLevel { kWriteSerializable, kSerializable };

// The level `metadata` asks for: absent or "WriteSerializable" is WriteSerializable; any
// other value is Serializable (the stricter reading of a value Basin does not know).
IsolationLevel TableIsolationLevel(const Metadata& metadata);
const char* IsolationLevelName(IsolationLevel level);

// Rows a transaction read: those of the table for which `predicate` may be true (its
// columns are the read snapshot's; judged as delta/skipping.h judges files).
struct TableReadPredicate {
  Predicate predicate;
};

// What a transaction read and what it is about to write, as far as conflicts go.
struct TransactionFootprint {
  // The snapshot the transaction read (null when it creates the table): its schema,
  // partition columns and files give read_predicates their meaning.
  std::shared_ptr<const Snapshot> read_snapshot;
  IsolationLevel isolation_level = IsolationLevel::kWriteSerializable;
  // The transaction read every row, so any added or removed file touches what it read.
  bool read_whole_table = false;
  // Read row sets, unioned. A file of read_snapshot matching one counts as read.
  std::vector<TableReadPredicate> read_predicates;
  std::map<std::string, std::string> read_files;     // replay key -> path (for messages)
  std::map<std::string, std::string> removed_files;  // replay key -> path
  std::set<std::string> domains;                     // domainMetadata the transaction writes
  bool changes_metadata = false;
  bool changes_protocol = false;
  std::optional<std::string> txn_app_id;
  // Read nothing, removes nothing, changes no metadata: only adds new data.
  bool is_blind_append = false;
};

// A commit that landed after the transaction's read version.
struct WinningCommit {
  int64_t version = 0;
  std::vector<Action> actions;

  std::string Operation() const;  // commitInfo.operation, or "unknown operation"
  // commitInfo.isBlindAppend; false when absent (another writer may not say).
  bool IsBlindAppend() const;
};

// OK when the transaction can be committed after `winner` as if it had read it; Conflict
// naming the winner's version and operation, the file or domain involved, and the rule it
// breaks, otherwise. `table` names the table in messages.
Status CheckConflict(const TransactionFootprint& txn, const WinningCommit& winner, const std::string& table);

}  // namespace basin::delta
