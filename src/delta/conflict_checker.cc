#include "delta/conflict_checker.h"

#include <unordered_map>

#include "delta/skipping.h"

namespace basin::delta {

namespace {

const CommitInfo* FindCommitInfo(const std::vector<Action>& actions) {
  for (const auto& a : actions) {
    if (const auto* info = std::get_if<CommitInfo>(&a)) return info;
  }
  return nullptr;
}

// "file p (day=2024-01-01)": the partition tells the user which jobs collided.
std::string DescribeFile(const std::string& path, const PartitionValues& partition) {
  std::string out = "file " + path;
  if (partition.empty()) return out;
  out += " (";
  bool first = true;
  for (const auto& [column, value] : partition) {
    out += (first ? "" : ", ") + column + "=" + value.value_or("null");
    first = false;
  }
  return out + ")";
}

// Whether `file` may hold rows that one of the transaction's read predicates selected.
bool MatchesReadPredicates(const TransactionFootprint& txn, const AddFile& file) {
  // Without the read snapshot's schema nothing can be excluded.
  if (!txn.read_snapshot) return !txn.read_predicates.empty();
  for (const auto& read : txn.read_predicates) {
    if (FileMayMatch(*txn.read_snapshot, file, read.predicate)) return true;
  }
  return false;
}

// As above for the read snapshot's file at `index`, whose stats the snapshot parsed once.
bool SnapshotFileMatchesReadPredicates(const TransactionFootprint& txn, size_t index) {
  for (const auto& read : txn.read_predicates) {
    if (FileMayMatch(*txn.read_snapshot, index, read.predicate)) return true;
  }
  return false;
}

}  // namespace

IsolationLevel TableIsolationLevel(const Metadata& metadata) {
  auto it = metadata.configuration.find("delta.isolationLevel");
  if (it == metadata.configuration.end() || it->second == "WriteSerializable") {
    return IsolationLevel::kWriteSerializable;
  }
  return IsolationLevel::kSerializable;
}

const char* IsolationLevelName(IsolationLevel level) {
  return level == IsolationLevel::kSerializable ? "Serializable" : "WriteSerializable";
}

std::string WinningCommit::Operation() const {
  const CommitInfo* info = FindCommitInfo(actions);
  return info && info->operation ? *info->operation : "unknown operation";
}

bool WinningCommit::IsBlindAppend() const {
  const CommitInfo* info = FindCommitInfo(actions);
  if (info == nullptr || !info->raw.is_object()) return false;
  auto it = info->raw.find("isBlindAppend");
  return it != info->raw.end() && it->is_boolean() && it->get<bool>();
}

Status CheckConflict(const TransactionFootprint& txn, const WinningCommit& winner, const std::string& table) {
  auto conflict = [&](const std::string& why, const char* delta_name) {
    return Status::Conflict(table + ": concurrent commit version " + std::to_string(winner.version) + " (" +
                            winner.Operation() + ") " + why + " [Delta Lake: " + delta_name + "]");
  };
  // Table-wide changes first: the file checks below assume the read schema still holds.
  for (const auto& a : winner.actions) {
    if (std::holds_alternative<Protocol>(a)) {
      return conflict("changed the table protocol", "ProtocolChangedException");
    }
    if (std::holds_alternative<Metadata>(a)) {
      return conflict("changed the table metadata", "MetadataChangedException");
    }
    if (const auto* d = std::get_if<DomainMetadata>(&a); d && txn.domains.count(d->domain) > 0) {
      return conflict("also changed domain metadata '" + d->domain + "'", "ConcurrentTransactionException");
    }
    if (const auto* t = std::get_if<SetTransaction>(&a)) {
      if (txn.txn_app_id && *txn.txn_app_id == t->app_id) {
        return conflict(
            "advanced application transaction '" + t->app_id + "' to version " + std::to_string(t->version),
            "ConcurrentTransactionException");
      }
    }
  }

  // Added files: could this transaction have read rows in them? A blind append by the
  // winner serializes after this transaction under WriteSerializable, unless this one
  // changes the metadata its rows must obey.
  const bool reads_rows = txn.read_whole_table || !txn.read_predicates.empty();
  const bool winner_serializes_after = winner.IsBlindAppend() &&
                                       txn.isolation_level == IsolationLevel::kWriteSerializable &&
                                       !txn.changes_metadata;
  if (reads_rows && !txn.is_blind_append && !winner_serializes_after) {
    for (const auto& a : winner.actions) {
      const auto* add = std::get_if<AddFile>(&a);
      // dataChange=false adds rearrange rows that already existed (compaction); the
      // removes that come with them are checked below.
      if (add == nullptr || !add->data_change) continue;
      if (txn.read_whole_table) {
        return conflict("added " + DescribeFile(add->path, add->partition_values) +
                            " to a table this transaction read in whole",
                        "ConcurrentAppendException");
      }
      if (MatchesReadPredicates(txn, *add)) {
        return conflict("added " + DescribeFile(add->path, add->partition_values) +
                            " that may hold rows matching what this transaction read",
                        "ConcurrentAppendException");
      }
    }
  }

  // Removed files, whatever their dataChange: after a compaction the file this
  // transaction read or rewrites is gone, and committing would resurrect or duplicate rows.
  std::unordered_map<std::string, const RemoveFile*> judge_by_predicate;
  for (const auto& a : winner.actions) {
    const auto* remove = std::get_if<RemoveFile>(&a);
    if (remove == nullptr) continue;
    const std::string key = remove->ReplayKey();
    if (auto it = txn.read_files.find(key); it != txn.read_files.end()) {
      return conflict(
          "removed " + DescribeFile(it->second, remove->partition_values) + " that this transaction read",
          "ConcurrentDeleteReadException");
    }
    if (auto it = txn.removed_files.find(key); it != txn.removed_files.end()) {
      return conflict("also removed " + DescribeFile(it->second, remove->partition_values),
                      "ConcurrentDeleteDeleteException");
    }
    if (txn.read_whole_table) {
      return conflict("removed " + DescribeFile(remove->path, remove->partition_values) +
                          " from a table this transaction read in whole",
                      "ConcurrentDeleteReadException");
    }
    if (!txn.read_predicates.empty()) judge_by_predicate.emplace(key, remove);
  }
  // A removed file that was live at the read version and matches a read predicate held
  // rows the transaction read, whether or not it listed the file.
  if (!judge_by_predicate.empty() && txn.read_snapshot) {
    size_t i = 0;
    for (const AddFile& file : txn.read_snapshot->files) {
      const size_t index = i++;
      auto it = judge_by_predicate.find(file.ReplayKey());
      if (it != judge_by_predicate.end() && SnapshotFileMatchesReadPredicates(txn, index)) {
        return conflict("removed " + DescribeFile(file.path, file.partition_values) +
                            " that may hold rows matching what this transaction read",
                        "ConcurrentDeleteReadException");
      }
    }
  }
  return Status::OK();
}

}  // namespace basin::delta
