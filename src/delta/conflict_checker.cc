#include "delta/conflict_checker.h"

namespace basin::delta {

std::string WinningCommit::Operation() const {
  for (const auto& a : actions) {
    if (const auto* info = std::get_if<CommitInfo>(&a)) {
      if (info->operation) return *info->operation;
    }
  }
  return "unknown operation";
}

Status CheckConflict(const TransactionFootprint& txn, const WinningCommit& winner, const std::string& table) {
  auto conflict = [&](const std::string& why, const char* delta_name) {
    return Status::Conflict(table + ": concurrent commit version " + std::to_string(winner.version) + " (" +
                            winner.Operation() + ") " + why + " [Delta Lake: " + delta_name + "]");
  };
  for (const auto& a : winner.actions) {
    if (std::holds_alternative<Protocol>(a)) {
      return conflict("changed the table protocol", "ProtocolChangedException");
    }
    if (std::holds_alternative<Metadata>(a)) {
      return conflict("changed the table metadata", "MetadataChangedException");
    }
    if (const auto* t = std::get_if<SetTransaction>(&a)) {
      if (txn.txn_app_id && *txn.txn_app_id == t->app_id) {
        return conflict(
            "advanced application transaction '" + t->app_id + "' to version " + std::to_string(t->version),
            "ConcurrentTransactionException");
      }
    }
    if (const auto* remove = std::get_if<RemoveFile>(&a)) {
      std::string key = remove->ReplayKey();
      if (auto it = txn.removed_files.find(key); it != txn.removed_files.end()) {
        return conflict("also removed file " + it->second, "ConcurrentDeleteDeleteException");
      }
      // A dataChange=false rewrite (compaction) keeps the rows; reading them stays valid.
      if (remove->data_change) {
        if (auto it = txn.read_files.find(key); it != txn.read_files.end()) {
          return conflict("removed file " + it->second + " that this transaction read",
                          "ConcurrentDeleteReadException");
        }
      }
    }
    if (const auto* add = std::get_if<AddFile>(&a)) {
      if (add->data_change && txn.read_whole_table && !txn.is_blind_append) {
        return conflict("added file " + add->path + " to data this transaction read",
                        "ConcurrentAppendException");
      }
    }
  }
  return Status::OK();
}

}  // namespace basin::delta
