// Warehouse: a folder of named Delta tables. Names are "table" or "schema.table" (the
// schema defaults to "default"), matched case-insensitively; the catalog mapping names to
// table folders lives inside the warehouse (docs/catalog.md), so the folder can be moved
// or copied whole. Tables created here are ordinary Delta tables that Spark, DuckDB and
// delta-rs read too. SQL sessions on the same folder (session.h) see the same tables.
//
//   basin::Warehouse wh = basin::Warehouse::Open("/data/wh").value();
//   basin::Table t = wh.CreateTable("sales.orders", {{"id", "bigint", false},
//                                                    {"day", "date"}},
//                                   {.partition_columns = {"day"}}).value();
//
// Thread safety: copies are cheap handles on the same warehouse; any number of threads may
// use them at once (CreateTable and DropTable of one Warehouse run one at a time).
// Processes sharing a warehouse are safe: a name is claimed with put-if-absent, so of two
// creating the same table one wins and the other gets AlreadyExists.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "basin/status.h"
#include "basin/table.h"

namespace basin {

// A column of CREATE TABLE.
struct ColumnDefinition {
  std::string name;
  // Spark's or DuckDB's spelling, as CREATE TABLE takes it: "bigint", "int", "string",
  // "varchar", "decimal(10,2)", "timestamp", "timestamp_ntz", "array<string>",
  // "struct<a: int, b: string>", "map<string, int>".
  std::string type;
  bool nullable = true;
};

struct CreateTableOptions {
  std::vector<std::string> partition_columns = {};  // names of columns given to CreateTable
  // Table properties, as TBLPROPERTIES sets them ("delta.appendOnly" = "true",
  // "delta.enableDeletionVectors", "delta.checkpointInterval", ...).
  std::map<std::string, std::string> properties = {};
  std::optional<std::string> description = {};  // the table's comment
};

class Warehouse {
 public:
  // The warehouse at `location`: a local folder (absolute, or relative to the working
  // folder; "" is the working folder), or "memory://<name>" for one kept in this process
  // (NamedMemoryStore in basin/object_store.h). Nothing is written until a table is
  // created. InvalidArgument when `location` is a file; NotImplemented for other URLs
  // (s3://, file:) until their stores exist.
  static Result<Warehouse> Open(const std::string& location);

  // The warehouse's folder, absolute (or its memory:// URL), without a trailing '/'.
  const std::string& location() const;

  // Every table's name ("schema.table"), sorted by schema then table. Corruption naming
  // the catalog file when an entry cannot be read.
  Result<std::vector<std::string>> ListTables() const;

  // The table named `name`. NotFound ("table default.t does not exist") when there is
  // none; InvalidArgument for a malformed name (empty parts, more than two, '/').
  Result<Table> GetTable(const std::string& name) const;

  // Creates a managed table (in <location>/<schema>/<table>) as version 0 of a new Delta
  // table. AlreadyExists when the name is taken; InvalidArgument naming the column,
  // type or property for no columns, a duplicate column, an unknown type, a partition
  // column that is not a column, or a bad property value.
  Result<Table> CreateTable(const std::string& name, const std::vector<ColumnDefinition>& columns,
                            const CreateTableOptions& options = {});

  // Removes the table's name and, for a managed table, its folder (a table registered at
  // an outside location keeps its files). NotFound naming the table when there is none.
  Status DropTable(const std::string& name);

  // Internal: warehouses come from Open().
  struct Impl;
  explicit Warehouse(std::shared_ptr<Impl> impl);

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace basin
