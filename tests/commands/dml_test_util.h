// Helpers for the DML tests: Delta tables in a temporary folder, created and appended to
// through delta::Transaction (so the tests depend only on the commands under test), read
// back through delta::LoadSnapshot + engine::BuildScanSql, and compared in DuckDB.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "basin/object_store.h"
#include "commands/command_context.h"
#include "commands/dml.h"
#include "commands/table_features.h"
#include "common/uuid.h"
#include "delta/schema.h"
#include "delta/snapshot.h"
#include "delta/transaction.h"
#include "delta/transaction_test_util.h"
#include "engine/duckdb.h"
#include "engine/parquet_writer.h"
#include "engine/scan.h"
#include "testing/test_util.h"

namespace basin::commands::testing {

struct Column {
  std::string name;
  std::string delta_type;  // "long", "string", "integer", ...
  bool nullable = true;
  nlohmann::json metadata = nlohmann::json::object();
};

class DmlFixture : public delta::testing::ConnectionFixture {
 public:
  std::string Root(const std::string& name) const { return (dir_.path() / name).string(); }

  CommandContext Context() {
    CommandContext ctx;
    ctx.conn = &conn();
    ctx.txn_options = Options();
    return ctx;
  }

  Result<std::shared_ptr<ObjectStore>> Store(const std::string& name) {
    return OpenLocalObjectStore(Root(name));
  }

  Status Create(const std::string& name, const std::vector<Column>& columns,
                const std::vector<std::string>& partition_columns = {},
                std::map<std::string, std::string> properties = {}) {
    nlohmann::json fields = nlohmann::json::array();
    for (const Column& c : columns) {
      fields.push_back(
          {{"name", c.name}, {"type", c.delta_type}, {"nullable", c.nullable}, {"metadata", c.metadata}});
    }
    delta::Metadata metadata;
    metadata.id = NewUuid();
    ASSIGN_OR_RETURN(delta::StructType schema,
                     delta::ParseSchema(nlohmann::json{{"type", "struct"}, {"fields", fields}}.dump()));
    metadata.configuration = std::move(properties);
    AssignColumnMapping(schema, metadata.configuration);
    metadata.schema_string = delta::SchemaToJson(schema).dump();
    metadata.partition_columns = partition_columns;
    metadata.created_time = 1700000000000;
    ASSIGN_OR_RETURN(delta::Protocol protocol, RequiredProtocol(metadata, schema));
    ASSIGN_OR_RETURN(auto store, Store(name));
    delta::Transaction txn = delta::Transaction::CreateTable(store, Root(name));
    txn.UpdateProtocol(protocol);
    txn.UpdateMetadata(metadata);
    return txn.Commit().status();
  }

  // Appends the rows of `select_sql` (columns by physical name) as new files; without
  // `with_stats`, their add actions carry no stats (as some writers leave them).
  Status Append(const std::string& name, const std::string& select_sql, bool with_stats = true) {
    ASSIGN_OR_RETURN(auto snapshot, Load(name));
    engine::WriteOptions options;
    for (const std::string& column : snapshot->metadata.partition_columns) {
      options.partition_columns.push_back(snapshot->schema.Find(column)->PhysicalName());
    }
    ASSIGN_OR_RETURN(auto adds, engine::WriteDataFiles(conn(), select_sql, *snapshot->store, options));
    delta::Transaction txn(snapshot);
    for (auto& add : adds) {
      if (!with_stats) add.stats.reset();
      txn.Add(std::move(add));
    }
    return txn.Commit().status();
  }

  Result<std::shared_ptr<const delta::Snapshot>> Load(const std::string& name) {
    ASSIGN_OR_RETURN(auto store, Store(name));
    ASSIGN_OR_RETURN(std::shared_ptr<delta::Snapshot> snapshot,
                     delta::LoadSnapshot(store, Root(name), log_io()));
    return std::shared_ptr<const delta::Snapshot>(std::move(snapshot));
  }

  // The table's rows as SQL (a subquery), read as any reader would. The scan stays
  // registered as long as the fixture lives.
  Result<std::string> ScanSql(const std::string& name) {
    ASSIGN_OR_RETURN(auto snapshot, Load(name));
    ASSIGN_OR_RETURN(engine::ScanPlan plan, engine::BuildScanSql(snapshot, conn()));
    scans_.push_back(plan);
    return "(" + plan.sql + ")";
  }

  // Every row, ordered, as text.
  Result<std::vector<std::vector<std::optional<std::string>>>> Rows(const std::string& name) {
    ASSIGN_OR_RETURN(std::string scan, ScanSql(name));
    ASSIGN_OR_RETURN(engine::QueryResult r, conn().Query("SELECT * FROM " + scan + " ORDER BY ALL"));
    return r.rows;
  }

  // Rows in `a` but not in `b` plus rows in `b` but not in `a`, as multisets.
  Result<int64_t> Difference(const std::string& a_sql, const std::string& b_sql) {
    ASSIGN_OR_RETURN(
        engine::QueryResult r,
        conn().Query("SELECT (SELECT count(*) FROM (SELECT * FROM " + a_sql + " EXCEPT ALL SELECT * FROM " +
                     b_sql + ")) + (SELECT count(*) FROM (SELECT * FROM " + b_sql +
                     " EXCEPT ALL SELECT * FROM " + a_sql + "))"));
    return std::stoll(r.at(0, 0).value_or("-1"));
  }

 private:
  basin::testing::TempDir dir_;
  std::vector<engine::ScanPlan> scans_;
};

}  // namespace basin::commands::testing
