// Transaction: one atomic change to a Delta table, committed with optimistic concurrency
// (PROTOCOL.md "Delta Log Entries"; rules in docs/transactions.md).
//
// A transaction starts from a Snapshot (its read version), records what it read and the
// actions it will commit, and Commit() writes them as version read+1 with put-if-absent.
// When another writer took that version first, Commit() reads the winning commits, checks
// them against what this transaction read and writes (delta/conflict_checker.h), and
// either retries on top of them (bounded, with jittered exponential backoff) or fails with
// Conflict naming the competing version, its operation and the reason.
//
// Ambiguous storage failures (the put may have landed although it reported an error) are
// resolved by reading the commit back: each commit carries a random commitInfo.txnId, so
// Commit() recognises its own commit and never writes the same change twice.
//
// Thread safety: a Transaction is used by one thread at a time; separate transactions on
// one table, in threads or processes, are what it is built for.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "basin/object_store.h"
#include "basin/status.h"
#include "common/cancellation.h"
#include "delta/actions.h"
#include "delta/checkpoint_worker.h"
#include "delta/conflict_checker.h"
#include "delta/parquet_io.h"
#include "delta/predicate.h"
#include "delta/snapshot.h"

namespace basin::delta {

struct TransactionOptions {
  // Write attempts before giving up: each lost race and each retryable storage failure of
  // the commit write counts one. Reads of winning commits retry as many times.
  int max_attempts = 10;
  // Backoff before attempt n (n >= 2): uniform in [0, min(initial * 2^(n-2), max)].
  int64_t backoff_initial_ms = 5;
  int64_t backoff_max_ms = 500;
  // Milliseconds since the epoch for commitInfo timestamps and txn lastUpdated; the
  // system clock when unset.
  std::function<int64_t()> clock_ms;
  // Seeds the backoff jitter (commitInfo.txnId is always random); 0 draws a seed from
  // std::random_device.
  uint64_t seed = 0;
  // When set, a commit whose version is a multiple of delta.checkpointInterval is followed
  // by a checkpoint written through it (delta/checkpoint_writer.h), then by log cleanup
  // (delta/log_cleanup.h). REQUIRES: outlives Commit().
  ParquetLogIO* checkpoint_io = nullptr;
  // With checkpoint_io: when set, the due checkpoint and log cleanup are written by this
  // worker after Commit() returns (CommitResult::checkpoint_queued; their failures are the
  // worker's, CommitWarnings' sentences prefixed with the table). REQUIRES: outlives the
  // jobs it is given, as checkpoint_io does.
  CheckpointWorker* checkpoint_worker = nullptr;
  // When set and cancelled (Ctrl-C: engine::Connection::Interrupt()), Commit() stops before
  // its next write attempt, waking from a backoff wait at once, and fails with Cancelled;
  // nothing was committed. REQUIRES: outlives Commit().
  const CancellationToken* cancellation = nullptr;
};

struct CommitResult {
  // The version committed; when skipped, the version found to hold the appId's version
  // (the read version, or a concurrent commit's).
  int64_t version = -1;
  // SetTransactionId's appId already had a version >= the given one: nothing was written.
  bool skipped = false;
  int attempts = 0;  // write attempts made (0 when skipped before writing)
  // A checkpoint written after the commit, when one was due and succeeded.
  std::optional<int64_t> checkpoint_version;
  // The due checkpoint was given to TransactionOptions::checkpoint_worker.
  bool checkpoint_queued = false;
  // Why a due checkpoint was not written. The commit succeeded regardless: this is a
  // warning for the caller to report, never a commit failure.
  Status checkpoint_status;
  // After a checkpoint, expired log files are cleaned up (delta/log_cleanup.h): how many
  // were deleted, and why the cleanup stopped, as a warning like checkpoint_status.
  int64_t log_files_deleted = 0;
  Status log_cleanup_status;
};

// `result`'s warnings as sentences for the caller to report ("version 20 is committed, but
// its checkpoint was not written: ..."); empty when there are none.
std::vector<std::string> CommitWarnings(const CommitResult& result);

class Transaction {
 public:
  // A transaction on the table `read_snapshot` shows, at its version.
  explicit Transaction(std::shared_ptr<const Snapshot> read_snapshot, TransactionOptions options = {});
  // A transaction creating the table at `store`'s root as version 0. Commit() requires
  // UpdateProtocol and UpdateMetadata; it fails with Conflict when the table exists.
  static Transaction CreateTable(std::shared_ptr<ObjectStore> store, std::string table_root,
                                 TransactionOptions options = {});

  int64_t read_version() const { return read_version_; }

  // --- what the transaction read ---
  // The transaction scanned the table with no filter it records: a concurrently added file
  // could have changed what it saw, so such an add is a conflict (unless blind append).
  void ReadWholeTable();
  // Files whose contents the transaction depends on (it may also remove them).
  // (A vector of AddFile, a FileList or a braced list.)
  template <typename Files>
  void ReadFiles(const Files& files) {
    for (const AddFile& file : files) ReadFile(file);
  }
  void ReadFiles(std::initializer_list<AddFile> files) {
    for (const AddFile& file : files) ReadFile(file);
  }
  void ReadFile(const AddFile& file);
  // The transaction read the rows for which `predicate` (over the read snapshot's columns)
  // is true. A concurrently added file then conflicts only when its partition values and
  // stats say it may hold such rows (delta/skipping.h); a concurrently removed file that
  // may hold them counts as read. Calls union; an unknown predicate (Predicate()) says
  // nothing about which rows, so it means the whole table (ReadWholeTable).
  void ReadPredicate(Predicate predicate);

  // --- what it will commit ---
  void Add(AddFile add);
  void Remove(RemoveFile remove);
  // A change data file (cdc action, PROTOCOL.md "Change Data Files") written with the data.
  void AddChangeFile(CdcFile cdc);
  void UpdateMetadata(Metadata metadata);
  void UpdateProtocol(Protocol protocol);
  // Commits a domainMetadata action (removed = true removes the domain); the last call
  // for a domain wins. Commit() requires the writer feature domainMetadata. A concurrent
  // commit touching the same domain conflicts.
  void SetDomainMetadata(DomainMetadata domain);
  // Idempotent writes: commit a txn action (appId, version) with the data; when the table
  // already holds version >= `version` for `app_id` (at the read version or in a winning
  // commit), Commit() writes nothing and reports skipped.
  void SetTransactionId(std::string app_id, int64_t version);
  // commitInfo.operation, operationParameters and operationMetrics.
  void SetOperation(std::string operation, nlohmann::json parameters = nlohmann::json::object());
  void SetOperationMetrics(nlohmann::json metrics);

  // Commits once; a second call is InvalidArgument. Errors: Conflict (a winning commit
  // conflicts, or max_attempts lost races; names the version and operation), InvalidArgument
  // (nothing to create a table with; domain metadata without the domainMetadata feature),
  // Unsupported (the existing table has writer features Basin cannot honour, see
  // delta/protocol.h CheckWritable; nothing is written), the store's error when a write or
  // read fails for good, Cancelled (options.cancellation was cancelled before a write attempt;
  // the message says nothing was committed). An IOError whose message says "outcome unknown"
  // means the commit may or may not have landed (its commitInfo.txnId tells).
  Result<CommitResult> Commit();

  // The random id written as commitInfo.txnId.
  const std::string& txn_id() const { return txn_id_; }

 private:
  Transaction(std::shared_ptr<ObjectStore> store, std::string table_root, int64_t read_version,
              TransactionOptions options);

  int64_t Now() const;
  // Waits before attempt `attempt` (n >= 2) of a write or read; false, at once, when
  // options_.cancellation is or becomes cancelled.
  bool Backoff(int attempt);
  bool IsBlindAppend() const;
  TransactionFootprint Footprint() const;
  const Metadata* EffectiveMetadata() const;
  const Protocol* EffectiveProtocol() const;
  // Errors that make the commit pointless to attempt: an unwritable table, domain
  // metadata the protocol does not allow.
  Status CheckCommittable() const;
  // The actions to commit, commitInfo first.
  std::vector<Action> BuildActions(int64_t now_ms) const;
  // The commit at `version`, nullopt when absent; retryable read failures are retried.
  Result<std::optional<std::vector<Action>>> ReadCommit(int64_t version);
  // Whether `actions` is this transaction's own commit (an earlier ambiguous write).
  bool IsOwnCommit(const std::vector<Action>& actions) const;
  void WriteCheckpointIfDue(int64_t version, CommitResult& result) const;

  std::shared_ptr<ObjectStore> store_;
  std::string table_root_;
  int64_t read_version_;
  TransactionOptions options_;
  std::mt19937_64 rng_;
  std::string txn_id_;
  bool committed_ = false;

  std::shared_ptr<const Snapshot> read_snapshot_;  // null for CreateTable
  // The newest commit's in-commit timestamp (or time), for monotonic in-commit timestamps.
  int64_t previous_commit_timestamp_ms_ = -1;

  bool read_whole_table_ = false;
  std::vector<TableReadPredicate> read_predicates_;
  std::map<std::string, std::string> read_files_;
  std::map<std::string, DomainMetadata> domain_metadata_;
  std::vector<AddFile> adds_;
  std::vector<RemoveFile> removes_;
  std::vector<CdcFile> cdc_files_;
  std::optional<Metadata> new_metadata_;
  std::optional<Protocol> new_protocol_;
  std::optional<SetTransaction> txn_;
  std::string operation_ = "WRITE";
  nlohmann::json operation_parameters_ = nlohmann::json::object();
  std::optional<nlohmann::json> operation_metrics_;
};

}  // namespace basin::delta
