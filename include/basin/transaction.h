// Transaction: an append to one Delta table, committed atomically as one new version.
//
//   basin::Transaction txn = table.BeginTransaction().value();
//   txn.SetTxn("orders-loader", 42);          // optional: makes a retry commit at most once
//   RETURN_IF_ERROR(txn.Append("FROM read_csv('orders.csv')"));
//   basin::CommitResult done = txn.Commit().value();
//
// The rows come from SQL queries run by the transaction's own session (session.h): any
// query DuckDB and Basin understand, reading files, warehouse tables or literal VALUES.
// Each query must give the table's columns in table order, as `INSERT INTO t <query>`
// requires; values are cast to the column types. The queries run when Commit() writes
// the data files; nothing is visible to readers until the commit succeeds, and a failed
// Commit() leaves the table as it was (written files are garbage for VACUUM).
//
// Commit() retries over concurrent commits that do not conflict with an append (other
// appends, compactions), as Delta's optimistic concurrency allows.
//
// Thread safety: one thread at a time. Different transactions, on the same table or not,
// may run concurrently in different threads and processes.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "basin/status.h"

namespace basin {

struct CommitResult {
  // The version committed. When skipped: the table's version found to hold the txn id
  // already (the latest when the commit looked, not necessarily the one that wrote it).
  int64_t version = -1;
  // SetTxn's app id already had a version >= the one given: nothing was written.
  bool skipped = false;
  int64_t num_rows = 0;   // rows written
  int64_t num_files = 0;  // data files written
  // What the caller should know that did not fail the commit: why it was skipped, a
  // checkpoint that could not be written after it.
  std::vector<std::string> notices;
};

class Transaction {
 public:
  Transaction(Transaction&&) noexcept;
  Transaction& operator=(Transaction&&) noexcept;
  ~Transaction();

  // Adds the rows of `query_sql` ("SELECT ...", "VALUES (1, 'a')", "FROM read_csv('x')").
  // The query is checked now, with DuckDB's message when it does not bind (NotFound for a
  // missing table, InvalidArgument for a syntax error or a missing column), and run by
  // Commit(). InvalidArgument after Commit().
  Status Append(const std::string& query_sql);

  // Makes the commit idempotent, as Delta's `txn` action does: the commit records
  // (app_id, version), and a commit whose app id already has a version >= `version` in the
  // table writes nothing and reports skipped. A loader that retries a batch with the same
  // (app_id, version) thus commits it at most once. InvalidArgument for an empty app id or
  // a negative version.
  Status SetTxn(const std::string& app_id, int64_t version);

  // Writes the appended rows' data files and commits them as the table's next version.
  // Errors: InvalidArgument when nothing was appended or the rows do not fit the table
  // (naming the column), Unsupported when Basin cannot write the table (writer features),
  // Conflict when a concurrent commit conflicts, Cancelled when interrupted, IOError from
  // storage. A transaction commits once: calling Commit() again is InvalidArgument.
  Result<CommitResult> Commit();

  // Internal: transactions come from Table::BeginTransaction().
  struct Impl;
  explicit Transaction(std::unique_ptr<Impl> impl);

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace basin
