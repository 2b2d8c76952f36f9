// ConflictChecker: decides whether a transaction may commit after a commit that won the
// race for its version (optimistic concurrency, WriteSerializable as Delta Lake defines
// it). The rules, and the Delta Lake exceptions they correspond to, are in
// docs/transactions.md.
//
// Thread safety: plain values and a stateless function.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "delta/actions.h"

namespace basin::delta {

// What a transaction read and what it is about to write, as far as conflicts go.
struct TransactionFootprint {
  // The transaction scanned the table without a filter it can name, so any file added by
  // someone else could have been part of what it read.
  bool read_whole_table = false;
  std::map<std::string, std::string> read_files;     // replay key -> path (for messages)
  std::map<std::string, std::string> removed_files;  // replay key -> path
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
};

// OK when the transaction can be committed after `winner` as if it had read it; Conflict
// naming the winner's version and operation, and the rule it breaks, otherwise.
// `table` names the table in messages.
Status CheckConflict(const TransactionFootprint& txn, const WinningCommit& winner, const std::string& table);

}  // namespace basin::delta
