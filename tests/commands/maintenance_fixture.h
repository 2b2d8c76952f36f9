// A Delta table in a temporary folder for the maintenance and change-feed tests: created
// and appended to through delta::Transaction and engine::WriteDataFiles (so the tests do
// not depend on the write commands), with a settable commit clock and helpers to compare
// the rows of two versions.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "basin/clock.h"
#include "basin/object_store.h"
#include "commands/command_context.h"
#include "delta/log_segment.h"
#include "delta/snapshot.h"
#include "delta/transaction.h"
#include "delta/transaction_test_util.h"
#include "engine/duckdb.h"
#include "engine/parquet_writer.h"
#include "engine/scan.h"
#include "testing/test_util.h"

namespace basin::commands::testing {

class TableFixture : public delta::testing::ConnectionFixture {
 public:
  TableFixture() {
    auto store = OpenLocalObjectStore(dir_.str());
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    store_ = *store;
  }

  // `fields`: (name, Delta type) pairs.
  Status Create(const std::vector<std::pair<std::string, std::string>>& fields,
                std::vector<std::string> partition_columns = {},
                std::map<std::string, std::string> configuration = {},
                delta::Protocol protocol = {1, 2, {}, {}}) {
    nlohmann::json schema = {{"type", "struct"}, {"fields", nlohmann::json::array()}};
    for (const auto& [name, type] : fields) {
      schema["fields"].push_back(
          {{"name", name}, {"type", type}, {"nullable", true}, {"metadata", nlohmann::json::object()}});
    }
    delta::Metadata metadata;
    metadata.id = "9c4f7e2a-0000-4000-8000-000000000001";
    metadata.schema_string = schema.dump();
    metadata.partition_columns = std::move(partition_columns);
    metadata.configuration = std::move(configuration);
    metadata.created_time = clock();
    delta::Transaction txn = delta::Transaction::CreateTable(store_, root(), Options());
    txn.UpdateProtocol(std::move(protocol));
    txn.UpdateMetadata(std::move(metadata));
    return txn.Commit().status();
  }

  // Appends the rows of `select_sql` (columns named as the table's) as one commit; returns
  // its version.
  Result<int64_t> Append(const std::string& select_sql) {
    ASSIGN_OR_RETURN(auto snapshot, Load());
    engine::WriteOptions options;
    options.partition_columns = snapshot->metadata.partition_columns;
    ASSIGN_OR_RETURN(auto adds, engine::WriteDataFiles(conn(), select_sql, *store_, options));
    delta::Transaction txn(snapshot, Options());
    for (auto& add : adds) txn.Add(std::move(add));
    ASSIGN_OR_RETURN(delta::CommitResult committed, txn.Commit());
    return committed.version;
  }

  Result<std::shared_ptr<delta::Snapshot>> Load(delta::SnapshotOptions options = {}) {
    return delta::LoadSnapshot(store_, root(), log_io(), options);
  }
  Result<std::shared_ptr<delta::Snapshot>> LoadVersion(int64_t version) {
    delta::SnapshotOptions options;
    options.version = version;
    return Load(options);
  }

  // Rows of `sql` run on the fixture's connection, each rendered as one string, sorted.
  Result<std::vector<std::string>> SortedRows(const std::string& sql) {
    ASSIGN_OR_RETURN(auto result, conn().Query(sql));
    std::vector<std::string> rows;
    for (const auto& row : result.rows) {
      std::string text;
      for (const auto& cell : row) text += cell.value_or("NULL") + "|";
      rows.push_back(text);
    }
    std::sort(rows.begin(), rows.end());
    return rows;
  }

  // Rows in one version but not the other, both ways (as multisets): 0 when equal.
  Result<int64_t> RowDifference(const delta::Snapshot& a, const delta::Snapshot& b) {
    ASSIGN_OR_RETURN(engine::ScanPlan scan_a, engine::BuildScanSql(a, conn()));
    ASSIGN_OR_RETURN(engine::ScanPlan scan_b, engine::BuildScanSql(b, conn()));
    auto diff =
        conn().Query("SELECT (SELECT count(*) FROM ((" + scan_a.sql + ") EXCEPT ALL (" + scan_b.sql +
                     "))) + (SELECT count(*) FROM ((" + scan_b.sql + ") EXCEPT ALL (" + scan_a.sql + ")))");
    if (!diff.ok()) return diff.status();
    return std::stoll(diff->at(0, 0).value_or("-1"));
  }

  Result<int64_t> CountRows(const delta::Snapshot& snapshot) {
    ASSIGN_OR_RETURN(engine::ScanPlan scan, engine::BuildScanSql(snapshot, conn()));
    // Reads every row (a bare count(*) is answered from the log's statistics).
    auto count = conn().Query("SELECT count(hash(t)) FROM (" + scan.sql + ") AS t");
    if (!count.ok()) return count.status();
    return std::stoll(count->at(0, 0).value_or("-1"));
  }

  // The actions of commit `version`.
  Result<std::vector<delta::Action>> Commit(int64_t version) {
    const std::string name = delta::CommitKey(version);
    ASSIGN_OR_RETURN(std::string content, store_->Get(name));
    return delta::ParseCommitFile(content, name);
  }

  CommandContext Context() {
    CommandContext ctx;
    ctx.conn = &conn();
    ctx.txn_options = Options();
    ctx.clock = clock_;
    return ctx;
  }

  // The base's options on the fixture's clock.
  delta::TransactionOptions Options() {
    delta::TransactionOptions options = ConnectionFixture::Options();
    options.clock_ms = [clock = clock_] { return clock->NowMs(); };
    return options;
  }

  // The clock of commits and commands; starts at the real time so file modification times
  // are comparable.
  void SetClock(int64_t ms) { clock_->SetMs(ms); }
  int64_t clock() const { return clock_->NowMs(); }

  std::string root() const { return dir_.str(); }
  const std::shared_ptr<ObjectStore>& store() const { return store_; }

 private:
  basin::testing::TempDir dir_;
  std::shared_ptr<ObjectStore> store_;
  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>(SystemClock()->NowMs());
};

}  // namespace basin::commands::testing
