#include "delta/transaction.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <thread>

#include "common/metrics.h"
#include "common/uuid.h"
#include "delta/checkpoint_writer.h"
#include "delta/commit_writer.h"
#include "delta/log_cleanup.h"
#include "delta/log_segment.h"
#include "delta/protocol.h"

namespace basin::delta {

namespace {

// What the process's commits met (basin serve's GET /metrics): registered when the library
// loads, so that a scrape shows them at 0 before the first commit.
metrics::Counter& commit_conflicts =
    metrics::ProcessRegistry()
        .AddCounter("basin_commit_conflicts_total",
                    "Commit attempts that found their version taken by a concurrent writer.")
        .With();
metrics::Counter& commit_retries =
    metrics::ProcessRegistry()
        .AddCounter("basin_commit_retries_total",
                    "Commit attempts made again: past concurrent commits that did not conflict, or after a "
                    "storage error that may be retried.")
        .With();

// The snapshot of `version`, committed by a transaction that read `read` (null for a table
// it created): `read` brought forward by the commits since, when that reaches exactly
// `version` and kept its tombstones (all of them); null otherwise. It is the checkpoint's
// state without replaying the log from the last checkpoint on.
std::shared_ptr<const Snapshot> CommittedSnapshot(const std::shared_ptr<const Snapshot>& read,
                                                  ParquetLogIO& io, int64_t version) {
  if (!read || read->tombstone_state != TombstoneState::kKept) return nullptr;
  auto updated = UpdateSnapshot(read, io);
  return updated.ok() && (*updated)->version == version ? *updated : nullptr;
}

// Writes the checkpoint of `version` (from `committed` when not null, else by loading
// the version), then cleans up expired log files as `metadata` says; outcomes in `result`.
void CheckpointAndCleanUp(const std::shared_ptr<const Snapshot>& committed,
                          const std::shared_ptr<ObjectStore>& store, const std::string& table_root,
                          ParquetLogIO& io, int64_t version, int64_t now_ms, const Metadata& metadata,
                          CommitResult& result) {
  auto written = committed ? WriteCheckpoint(*store, io, *committed, now_ms)
                           : CheckpointVersion(store, table_root, io, version, now_ms);
  if (!written.ok()) {
    result.checkpoint_status = written.status();
    return;
  }
  result.checkpoint_version = version;
  auto cleaned = CleanUpExpiredLogs(*store, metadata, now_ms, io, table_root);
  if (cleaned.ok()) {
    result.log_files_deleted = static_cast<int64_t>(cleaned->deleted_keys.size());
  } else {
    result.log_cleanup_status = cleaned.status();
  }
}

uint64_t SeedFrom(uint64_t seed) {
  if (seed != 0) return seed;
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

bool InCommitTimestampsEnabled(const Metadata& metadata) {
  auto it = metadata.configuration.find("delta.enableInCommitTimestamps");
  if (it == metadata.configuration.end()) return false;
  std::string v = it->second;
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
  return v == "true";
}

const CommitInfo* FindCommitInfo(const std::vector<Action>& actions) {
  for (const auto& a : actions) {
    if (const auto* info = std::get_if<CommitInfo>(&a)) return info;
  }
  return nullptr;
}

}  // namespace

Transaction::Transaction(std::shared_ptr<ObjectStore> store, std::string table_root, int64_t read_version,
                         TransactionOptions options)
    : store_(std::move(store)),
      table_root_(std::move(table_root)),
      read_version_(read_version),
      options_(std::move(options)),
      rng_(SeedFrom(options_.seed)),
      // Never from the seed: two transactions seeded alike would take each other's commit
      // for their own.
      txn_id_(NewUuid()) {}

Transaction::Transaction(std::shared_ptr<const Snapshot> read_snapshot, TransactionOptions options)
    : Transaction(read_snapshot->store, read_snapshot->table_root, read_snapshot->version,
                  std::move(options)) {
  previous_commit_timestamp_ms_ = read_snapshot->timestamp_ms;
  read_snapshot_ = std::move(read_snapshot);
}

Transaction Transaction::CreateTable(std::shared_ptr<ObjectStore> store, std::string table_root,
                                     TransactionOptions options) {
  Transaction txn(std::move(store), std::move(table_root), -1, std::move(options));
  txn.operation_ = "CREATE TABLE";
  return txn;
}

void Transaction::ReadWholeTable() { read_whole_table_ = true; }

void Transaction::ReadFile(const AddFile& file) { read_files_.emplace(file.ReplayKey(), file.path); }

void Transaction::ReadPredicate(Predicate predicate) {
  if (predicate.is_unknown()) {
    ReadWholeTable();
    return;
  }
  read_predicates_.push_back(TableReadPredicate{std::move(predicate)});
}

void Transaction::Add(AddFile add) { adds_.push_back(std::move(add)); }
void Transaction::Remove(RemoveFile remove) { removes_.push_back(std::move(remove)); }
void Transaction::AddChangeFile(CdcFile cdc) { cdc_files_.push_back(std::move(cdc)); }
void Transaction::UpdateMetadata(Metadata metadata) { new_metadata_ = std::move(metadata); }
void Transaction::UpdateProtocol(Protocol protocol) { new_protocol_ = std::move(protocol); }

void Transaction::SetDomainMetadata(DomainMetadata domain) {
  std::string name = domain.domain;
  domain_metadata_.insert_or_assign(std::move(name), std::move(domain));
}

void Transaction::SetTransactionId(std::string app_id, int64_t version) {
  txn_ = SetTransaction{std::move(app_id), version, std::nullopt};
}

void Transaction::SetOperation(std::string operation, nlohmann::json parameters) {
  operation_ = std::move(operation);
  operation_parameters_ = std::move(parameters);
}

void Transaction::SetOperationMetrics(nlohmann::json metrics) { operation_metrics_ = std::move(metrics); }

int64_t Transaction::Now() const {
  if (options_.clock_ms) return options_.clock_ms();
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool Transaction::Backoff(int attempt) {
  const CancellationToken* cancellation = options_.cancellation;
  if (cancellation != nullptr && cancellation->cancelled()) return false;
  if (attempt < 2 || options_.backoff_max_ms <= 0) return true;
  int64_t cap = options_.backoff_initial_ms;
  for (int i = 2; i < attempt && cap < options_.backoff_max_ms; i++) cap *= 2;
  cap = std::clamp<int64_t>(cap, 0, options_.backoff_max_ms);
  const std::chrono::milliseconds wait(std::uniform_int_distribution<int64_t>(0, cap)(rng_));
  if (cancellation != nullptr) return !cancellation->WaitFor(wait);
  std::this_thread::sleep_for(wait);
  return true;
}

bool Transaction::IsBlindAppend() const {
  if (read_whole_table_ || !read_predicates_.empty() || !read_files_.empty() || !removes_.empty() ||
      !domain_metadata_.empty() || new_metadata_ || new_protocol_) {
    return false;
  }
  return std::all_of(adds_.begin(), adds_.end(), [](const AddFile& a) { return a.data_change; });
}

TransactionFootprint Transaction::Footprint() const {
  TransactionFootprint footprint;
  footprint.read_snapshot = read_snapshot_;
  if (read_snapshot_) footprint.isolation_level = TableIsolationLevel(read_snapshot_->metadata);
  footprint.read_whole_table = read_whole_table_;
  footprint.read_predicates = read_predicates_;
  footprint.read_files = read_files_;
  for (const auto& [name, domain] : domain_metadata_) footprint.domains.insert(name);
  for (const auto& r : removes_) footprint.removed_files.emplace(r.ReplayKey(), r.path);
  footprint.changes_metadata = new_metadata_.has_value();
  footprint.changes_protocol = new_protocol_.has_value();
  if (txn_) footprint.txn_app_id = txn_->app_id;
  footprint.is_blind_append = IsBlindAppend();
  return footprint;
}

const Metadata* Transaction::EffectiveMetadata() const {
  if (new_metadata_) return &*new_metadata_;
  return read_snapshot_ ? &read_snapshot_->metadata : nullptr;
}

const Protocol* Transaction::EffectiveProtocol() const {
  if (new_protocol_) return &*new_protocol_;
  return read_snapshot_ ? &read_snapshot_->protocol : nullptr;
}

Status Transaction::CheckCommittable() const {
  if (read_snapshot_) {
    RETURN_IF_ERROR(CheckWritable(read_snapshot_->protocol, read_snapshot_->schema,
                                  table_root_ + " version " + std::to_string(read_version_)));
  }
  const Protocol* protocol = EffectiveProtocol();
  if (!domain_metadata_.empty() && (protocol == nullptr || !protocol->HasWriterFeature("domainMetadata"))) {
    return Status::InvalidArgument(
        table_root_ + ": domain metadata '" + domain_metadata_.begin()->first +
        "' needs the writer feature domainMetadata, which the table protocol lacks");
  }
  return Status::OK();
}

std::vector<Action> Transaction::BuildActions(int64_t now_ms) const {
  CommitInfo info = MakeCommitInfo(now_ms, operation_, operation_parameters_);
  info.raw["isolationLevel"] = IsolationLevelName(
      read_snapshot_ ? TableIsolationLevel(read_snapshot_->metadata) : IsolationLevel::kWriteSerializable);
  info.raw["isBlindAppend"] = IsBlindAppend();
  if (read_version_ >= 0) info.raw["readVersion"] = read_version_;
  if (operation_metrics_) info.raw["operationMetrics"] = *operation_metrics_;
  info.raw["txnId"] = txn_id_;
  const Metadata* metadata = EffectiveMetadata();
  if (metadata && InCommitTimestampsEnabled(*metadata)) {
    // PROTOCOL.md "In-Commit Timestamps": strictly increasing across commits.
    int64_t ict = std::max(now_ms, previous_commit_timestamp_ms_ + 1);
    info.in_commit_timestamp = ict;
    info.timestamp = ict;
  }

  std::vector<Action> actions;
  actions.reserve(4 + domain_metadata_.size() + removes_.size() + adds_.size());
  actions.emplace_back(std::move(info));  // first: readers of in-commit timestamps rely on it
  if (new_protocol_) actions.emplace_back(*new_protocol_);
  if (new_metadata_) actions.emplace_back(*new_metadata_);
  if (txn_) {
    SetTransaction txn = *txn_;
    txn.last_updated = now_ms;
    actions.emplace_back(std::move(txn));
  }
  for (const auto& [name, domain] : domain_metadata_) actions.emplace_back(domain);
  for (const auto& r : removes_) {
    RemoveFile remove = r;
    if (!remove.deletion_timestamp) remove.deletion_timestamp = now_ms;
    actions.emplace_back(std::move(remove));
  }
  for (const auto& a : adds_) actions.emplace_back(a);
  for (const auto& c : cdc_files_) actions.emplace_back(c);
  return actions;
}

Result<std::optional<std::vector<Action>>> Transaction::ReadCommit(int64_t version) {
  const std::string key = CommitKey(version);
  for (int attempt = 1;; attempt++) {
    if (attempt > 1 && !Backoff(attempt)) {
      return Status::Cancelled(table_root_ + ": cancelled while waiting to read concurrent commit " + key +
                               " again");
    }
    auto content = store_->Get(key);
    if (content.ok()) {
      ASSIGN_OR_RETURN(auto actions, ParseCommitFile(*content, table_root_ + ": " + key));
      return std::optional<std::vector<Action>>(std::move(actions));
    }
    if (content.status().IsNotFound()) return std::optional<std::vector<Action>>();
    if (!content.status().retryable() || attempt >= options_.max_attempts) {
      return content.status().WithContext(table_root_ + ": reading concurrent commit " + key);
    }
  }
}

bool Transaction::IsOwnCommit(const std::vector<Action>& actions) const {
  const CommitInfo* info = FindCommitInfo(actions);
  if (info == nullptr || !info->raw.is_object()) return false;
  auto id = info->raw.find("txnId");
  return id != info->raw.end() && id->is_string() && id->get<std::string>() == txn_id_;
}

void Transaction::WriteCheckpointIfDue(int64_t version, CommitResult& result) const {
  const Metadata* metadata = EffectiveMetadata();
  if (options_.checkpoint_io == nullptr || metadata == nullptr || version == 0) return;
  auto interval = CheckpointInterval(*metadata);
  if (!interval.ok()) {
    result.checkpoint_status = interval.status().WithContext(table_root_);
    return;
  }
  if (version % *interval != 0) return;
  const int64_t now_ms = Now();
  ParquetLogIO& io = *options_.checkpoint_io;
  std::shared_ptr<const Snapshot> committed = CommittedSnapshot(read_snapshot_, io, version);
  if (options_.checkpoint_worker == nullptr) {
    CheckpointAndCleanUp(committed, store_, table_root_, io, version, now_ms, *metadata, result);
    return;
  }
  options_.checkpoint_worker->Submit(
      table_root_,
      [committed, store = store_, root = table_root_, io = &io, version, now_ms,
       metadata = *metadata]() -> Status {
        CommitResult outcome;
        outcome.version = version;
        CheckpointAndCleanUp(committed, store, root, *io, version, now_ms, metadata, outcome);
        std::vector<std::string> warnings = CommitWarnings(outcome);
        return warnings.empty() ? Status::OK() : Status::IOError(root + ": " + warnings.front());
      });
  result.checkpoint_queued = true;
}

std::vector<std::string> CommitWarnings(const CommitResult& result) {
  std::vector<std::string> warnings;
  const std::string version = std::to_string(result.version);
  if (!result.checkpoint_status.ok()) {
    warnings.push_back("version " + version + " is committed, but its checkpoint was not written: " +
                       result.checkpoint_status.message());
  }
  if (!result.log_cleanup_status.ok()) {
    warnings.push_back("version " + version + " is committed, but expired log files were not cleaned up: " +
                       result.log_cleanup_status.message());
  }
  return warnings;
}

Result<CommitResult> Transaction::Commit() {
  if (committed_) return Status::InvalidArgument(table_root_ + ": transaction was already committed");
  committed_ = true;
  CommitResult result;
  if (read_version_ < 0 && (!new_protocol_ || !new_metadata_)) {
    return Status::InvalidArgument(table_root_ + ": creating a table needs a protocol and a metadata action");
  }
  RETURN_IF_ERROR(CheckCommittable());
  if (txn_ && read_snapshot_) {
    auto it = read_snapshot_->set_transactions.find(txn_->app_id);
    if (it != read_snapshot_->set_transactions.end() && it->second.version >= txn_->version) {
      result.skipped = true;
      result.version = read_version_;
      return result;
    }
  }
  const TransactionFootprint footprint = Footprint();
  int64_t version = read_version_ + 1;
  for (;;) {
    if (!Backoff(result.attempts + 1)) {
      return Status::Cancelled(
          table_root_ + ": commit cancelled" +
          (result.attempts == 0
               ? std::string()
               : " while waiting to retry after " + std::to_string(result.attempts) + " attempt(s)") +
          "; nothing was committed (version " + std::to_string(version) + " was not written)");
    }
    result.attempts++;
    Status written = WriteCommit(*store_, version, BuildActions(Now()));
    if (written.ok()) break;
    // Any failure but a lost race may have landed anyway; only reading it back tells.
    const bool ambiguous = !written.IsConflict();
    auto unknown_outcome = [&](const Status& read_error) {
      return Status::IOError(table_root_ + ": outcome unknown for commit " + CommitKey(version) + " (txnId " +
                             txn_id_ + "): writing failed (" + written.message() +
                             ") and reading it back failed (" + read_error.message() + ")");
    };
    bool landed = false;
    bool raced = false;  // another writer's commit holds a version this attempt wanted
    for (int64_t v = version;; v++) {
      auto read = ReadCommit(v);
      if (!read.ok()) {
        if (ambiguous && v == version) return unknown_outcome(read.status());
        if (read.status().code() == ErrorCode::kCancelled) {
          // This transaction's own write did not land (lost race or proven absent).
          return read.status().WithContext("commit cancelled; nothing was committed");
        }
        return read.status();
      }
      if (!read->has_value()) {
        if (v == version && ambiguous && !written.retryable()) return written;
        version = v;
        break;
      }
      std::vector<Action>& actions = **read;
      if (IsOwnCommit(actions)) {
        version = v;
        landed = true;
        break;
      }
      if (!raced) commit_conflicts.Increment();
      raced = true;
      WinningCommit winner{v, std::move(actions)};
      if (txn_) {
        for (const auto& a : winner.actions) {
          const auto* t = std::get_if<SetTransaction>(&a);
          if (t && t->app_id == txn_->app_id && t->version >= txn_->version) {
            result.skipped = true;
            result.version = v;
            return result;
          }
        }
      }
      RETURN_IF_ERROR(CheckConflict(footprint, winner, table_root_));
      if (const CommitInfo* info = FindCommitInfo(winner.actions)) {
        previous_commit_timestamp_ms_ =
            info->in_commit_timestamp.value_or(info->timestamp.value_or(previous_commit_timestamp_ms_));
      }
    }
    if (landed) break;
    if (result.attempts >= options_.max_attempts && ambiguous) return written.WithContext(table_root_);
    if (result.attempts >= options_.max_attempts) {
      return Status::Conflict(table_root_ + ": gave up committing after " + std::to_string(result.attempts) +
                              " attempts; concurrent writers kept taking the next version (latest " +
                              std::to_string(version - 1) + ")");
    }
    commit_retries.Increment();
  }
  result.version = version;
  WriteCheckpointIfDue(version, result);
  return result;
}

}  // namespace basin::delta
