// Helpers shared by the transaction, checkpoint-writer and crash tests: a one-column
// table, file actions, a DuckDB connection to load snapshots with (also the base of the
// table fixtures in tests/commands), and child processes.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "delta/snapshot.h"
#include "delta/transaction.h"
#include "engine/duckdb.h"
#include "engine/parquet_log_io.h"
#include "testing/child_process.h"
#include "testing/test_util.h"

namespace basin::delta::testing {

inline Metadata TestMetadata(std::map<std::string, std::string> configuration = {}) {
  Metadata m;
  m.id = "5b7e2f1c-0000-4000-8000-000000000042";
  m.schema_string = R"({"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},)"
                    R"({"name":"day","type":"string","nullable":true,"metadata":{}}]})";
  m.partition_columns = {"day"};
  m.configuration = std::move(configuration);
  m.created_time = 1700000000000;
  return m;
}

inline AddFile TestAdd(const std::string& path, bool data_change = true) {
  AddFile a;
  a.path = path;
  a.partition_values = {{"day", "2024-01-01"}};
  a.size = 1234;
  a.modification_time = 1700000000000;
  a.data_change = data_change;
  a.stats = R"({"numRecords":3,"minValues":{"id":1},"maxValues":{"id":3},"nullCount":{"id":0}})";
  return a;
}

inline RemoveFile TestRemove(const std::string& path, bool data_change = true) {
  RemoveFile r;
  r.path = path;
  r.data_change = data_change;
  r.partition_values = {{"day", "2024-01-01"}};
  r.extended_file_metadata = true;
  r.size = 1234;
  return r;
}

// A DuckDB database and connection for a test, and transaction options for it; the base of
// the table fixtures here and in tests/commands. Not thread-safe: one test thread uses it.
class ConnectionFixture {
 public:
  ConnectionFixture() {
    auto db = engine::Database::Open();
    EXPECT_TRUE(db.ok()) << db.status().ToString();
    db_ = *db;
    auto conn = engine::Connection::Open(db_);
    EXPECT_TRUE(conn.ok()) << conn.status().ToString();
    conn_ = std::move(*conn);
    log_io_ = std::make_unique<engine::DuckDBParquetLogIO>();
  }

  // Small backoff so tests with retries stay fast.
  static TransactionOptions Options() {
    TransactionOptions options;
    options.backoff_initial_ms = 1;
    options.backoff_max_ms = 5;
    return options;
  }

  engine::Connection& conn() { return *conn_; }
  // Reads and writes checkpoints for LoadSnapshot and TransactionOptions::checkpoint_io.
  engine::DuckDBParquetLogIO& log_io() { return *log_io_; }

 private:
  std::shared_ptr<engine::Database> db_;
  std::unique_ptr<engine::Connection> conn_;
  std::unique_ptr<engine::DuckDBParquetLogIO> log_io_;
};

// Helpers to create and load a one-table store.
class TableFixture : public ConnectionFixture {
 public:
  explicit TableFixture(std::shared_ptr<ObjectStore> store) : store_(std::move(store)) {}

  Status Create(std::map<std::string, std::string> configuration = {}) {
    Transaction txn = Transaction::CreateTable(store_, "table", Options());
    txn.UpdateProtocol(Protocol{1, 2, std::nullopt, std::nullopt});
    txn.UpdateMetadata(TestMetadata(std::move(configuration)));
    return txn.Commit().status();
  }

  Result<std::shared_ptr<Snapshot>> Load(SnapshotOptions options = {}) {
    return LoadSnapshot(store_, "table", log_io(), options);
  }

  // A transaction on the latest version (read with its tombstones after
  // set_read_tombstones(true), as sessions read it).
  Result<std::unique_ptr<Transaction>> Begin(TransactionOptions options) {
    SnapshotOptions read;
    read.keep_tombstones = read_tombstones_;
    ASSIGN_OR_RETURN(auto snapshot, Load(read));
    return std::make_unique<Transaction>(snapshot, std::move(options));
  }
  Result<std::unique_ptr<Transaction>> Begin() { return Begin(Options()); }

  const std::shared_ptr<ObjectStore>& store() const { return store_; }
  void set_read_tombstones(bool read) { read_tombstones_ = read; }

 private:
  std::shared_ptr<ObjectStore> store_;
  bool read_tombstones_ = false;
};

// Child processes: see testing/child_process.h.
using ::basin::testing::ForkChild;
using ::basin::testing::WaitChild;

}  // namespace basin::delta::testing
