// A test fixture for the write path (table_rows_test.cc, write_test.cc, table_ddl_test.cc): a DuckDB
// connection, tables created with commands::CreateTable in a temporary folder, writes
// through commands::Write, and reads back through Basin's own scan.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "basin/object_store.h"
#include "commands/table_ddl.h"
#include "commands/write.h"
#include "delta/snapshot.h"
#include "engine/parquet_log_io.h"
#include "engine/scan.h"
#include "testing/test_util.h"

namespace basin::commands::testing {

using Rows = std::vector<std::vector<std::optional<std::string>>>;

inline delta::DataTypePtr Primitive(const std::string& name, int precision = 0, int scale = 0) {
  auto type = std::make_shared<delta::DataType>();
  type->primitive = name;
  type->precision = precision;
  type->scale = scale;
  return type;
}

inline delta::StructField Field(const std::string& name, delta::DataTypePtr type, bool nullable = true) {
  delta::StructField field;
  field.name = name;
  field.type = std::move(type);
  field.nullable = nullable;
  return field;
}

inline delta::StructField Field(const std::string& name, const std::string& type, bool nullable = true) {
  return Field(name, Primitive(type), nullable);
}

inline delta::DataTypePtr Struct(std::vector<delta::StructField> fields) {
  auto type = std::make_shared<delta::DataType>();
  type->kind = delta::DataType::Kind::kStruct;
  type->struct_type.fields = std::move(fields);
  return type;
}

class WriteFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(db_, engine::Database::Open());
    ASSERT_OK_AND_ASSIGN(conn_, engine::Connection::Open(db_));
    ctx_.conn = conn_.get();
    ctx_.txn_options.seed = 11;
  }

  std::string Root(const std::string& name = "t") const { return (dir_.path() / name).string(); }

  std::shared_ptr<ObjectStore> Store(const std::string& name = "t") {
    auto store = OpenLocalObjectStore(Root(name));
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return *store;
  }

  // Creates table `name` with `fields`; ASSERTs success.
  void Create(std::vector<delta::StructField> fields, std::vector<std::string> partition_columns = {},
              std::map<std::string, std::string> properties = {}, const std::string& name = "t") {
    CreateTableRequest request;
    request.name = name;
    request.schema.fields = std::move(fields);
    request.partition_columns = std::move(partition_columns);
    request.properties = std::move(properties);
    auto created = CreateTable(ctx_, Store(name), Root(name), request);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
  }

  // The latest version of table `name`, or null (with a test failure) when it cannot be read.
  std::shared_ptr<const delta::Snapshot> Load(const std::string& name = "t") { return Load({}, name); }
  std::shared_ptr<const delta::Snapshot> LoadVersion(int64_t version, const std::string& name = "t") {
    delta::SnapshotOptions options;
    options.version = version;
    return Load(options, name);
  }
  std::shared_ptr<const delta::Snapshot> Load(const delta::SnapshotOptions& options,
                                              const std::string& name) {
    engine::DuckDBParquetLogIO log_io;
    auto snapshot = delta::LoadSnapshot(Store(name), Root(name), log_io, options);
    EXPECT_TRUE(snapshot.ok()) << snapshot.status().ToString();
    return snapshot.ok() ? std::shared_ptr<const delta::Snapshot>(*snapshot) : nullptr;
  }

  // The newest commit of table "t" as history shows it.
  delta::CommitSummary LastCommit() {
    auto history = delta::ReadHistory(Store(), 1);
    EXPECT_TRUE(history.ok() && !history->empty());
    return history.ok() && !history->empty() ? history->front() : delta::CommitSummary{};
  }

  Result<CommandResult> Insert(const std::string& source_sql, WriteMode mode = WriteMode::kAppend,
                               RowShape shape = {}, const std::string& replace_where = "",
                               const std::string& name = "t") {
    auto snapshot = Load(name);
    if (snapshot == nullptr) return Status::Internal("no table");
    WriteRequest request;
    request.source_sql = source_sql;
    request.mode = mode;
    request.shape = std::move(shape);
    request.replace_where = replace_where;
    return Write(ctx_, snapshot, request);
  }

  // `select` with "FROM t" reading the table through Basin's scan.
  Rows Query(const std::string& select, const std::string& name = "t") {
    auto snapshot = Load(name);
    if (snapshot == nullptr) return {};
    auto plan = engine::BuildScanSql(*snapshot, *conn_);
    EXPECT_TRUE(plan.ok()) << plan.status().ToString();
    if (!plan.ok()) return {};
    std::string sql = select;
    sql.replace(sql.find("FROM t"), 6, "FROM (" + plan->sql + ") AS t");
    auto result = conn_->Query(sql);
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    return result.ok() ? result->rows : Rows{};
  }

  // The rows of `select` as "a|b|c" lines.
  std::vector<std::string> Lines(const std::string& select, const std::string& name = "t") {
    std::vector<std::string> out;
    for (const auto& row : Query(select, name)) {
      std::string line;
      for (size_t i = 0; i < row.size(); i++) line += (i > 0 ? "|" : "") + row[i].value_or("NULL");
      out.push_back(line);
    }
    return out;
  }

  basin::testing::TempDir dir_;
  std::shared_ptr<engine::Database> db_;
  std::unique_ptr<engine::Connection> conn_;
  CommandContext ctx_;
};

}  // namespace basin::commands::testing
