// Warehouse: a folder of named Delta tables. Names are `schema.table` (the schema defaults
// to `default`), matched case-insensitively and stored lower-case; the catalog that maps
// them to table locations lives inside the warehouse, one small JSON file per table, so
// the folder can be moved or copied as a whole. The format is specified in
// docs/catalog.md.
//
// A name is registered with put-if-absent, so two processes creating the same table race
// safely: one wins, the other gets AlreadyExists. The catalog holds names only; a table's
// schema and data are its Delta log.
//
// Thread safety: a Warehouse has no mutable state; share it. Concurrent processes are safe
// through the object store's put-if-absent.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "storage/object_store.h"

namespace basin::catalog {

inline constexpr const char* kDefaultSchema = "default";

struct TableName {
  std::string schema = kDefaultSchema;  // lower-case
  std::string table;                    // lower-case
  std::string ToString() const;         // "schema.table"
};

// A name from its one or two dot-separated parts as a statement wrote them (quotes already
// removed). InvalidArgument for an empty part, more than two parts, or characters the
// catalog cannot store in a file name ('/', '\\', NUL, or a leading '.').
Result<TableName> MakeTableName(const std::vector<std::string>& parts);

struct TableEntry {
  TableName name;
  // Absolute folder of the table (its _delta_log is below it).
  std::string location;
  // Registered over a table that already existed (CREATE TABLE ... LOCATION on an existing
  // Delta table): DROP TABLE unregisters it but leaves its files.
  bool external = false;
  int64_t created_time_ms = 0;
};

class Warehouse {
 public:
  // Opens the warehouse at `root_dir` (made absolute). Nothing is created until a table
  // is registered, so opening a session in a folder leaves no trace there.
  static Result<std::shared_ptr<Warehouse>> Open(const std::string& root_dir);

  const std::string& root() const { return root_; }

  // Where a managed table of this name lives: <root>/<schema>/<table>.
  std::string DefaultLocation(const TableName& name) const;

  // The entry for `name`, nullopt when there is none. Corruption naming the catalog file
  // when it cannot be parsed.
  Result<std::optional<TableEntry>> Lookup(const TableName& name) const;
  // As Lookup, but NotFound ("table default.t does not exist") when there is none.
  Result<TableEntry> Get(const TableName& name) const;

  // Adds `entry` (created_time_ms is set when 0). AlreadyExists naming the table when the
  // name is taken.
  Status Register(TableEntry entry) const;
  // Removes the name; NotFound when there is none. The table's files are the caller's.
  Status Unregister(const TableName& name) const;

  // Every table, ordered by schema then name; only `schema`'s when given.
  Result<std::vector<TableEntry>> List(const std::optional<std::string>& schema = std::nullopt) const;

 private:
  explicit Warehouse(std::string root);
  // The catalog folder, <root>/_basin_catalog, is opened per call: opening a local store
  // creates its folder, and reads must not.
  std::string root_;
};

}  // namespace basin::catalog
