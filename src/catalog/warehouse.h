// Warehouse: a folder of named Delta tables in an object store (a local folder by default).
// Names are `schema.table` (the schema defaults to `default`), matched case-insensitively
// and stored lower-case; the catalog that maps them to table locations lives inside the
// warehouse, one small JSON object per table, so the folder can be moved or copied as a
// whole. The format is specified in docs/catalog.md. Every catalog read and write goes
// through the warehouse's ObjectStore, and times come from its Clock.
//
// A name is registered with put-if-absent, so two processes creating the same table race
// safely: one wins, the other gets AlreadyExists. Each managed table gets a folder no other
// incarnation of its name shares while it exists, and DROP removes only the incarnation it
// looked up, so DROP and CREATE of one name may race too. The catalog holds names only; a
// table's schema and data are its Delta log.
//
// Thread safety: a Warehouse has no mutable state; share it. Concurrent processes are safe
// through the object store's put-if-absent.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "basin/clock.h"
#include "basin/object_store.h"
#include "basin/status.h"

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
  // Where the table is (its _delta_log is below it): under the warehouse's location for a
  // table inside the warehouse, else as registered (an absolute folder).
  std::string location;
  // Registered over a table that already existed (CREATE TABLE ... LOCATION on an existing
  // Delta table): DROP TABLE unregisters it but leaves its files.
  bool external = false;
  int64_t created_time_ms = 0;
  // Tells incarnations of one name apart (a table dropped and created again); Register
  // sets it when empty. Entries written before it existed have none.
  std::string id;
};

class Warehouse {
 public:
  // Opens the warehouse at the root of `store`. `location` names that root in table
  // locations: the absolute folder of a local store, or a URL-like name of another
  // ("memory://wh"); locations below it are stored relative to it. Nothing is written until
  // a table is registered.
  static Result<std::shared_ptr<Warehouse>> Open(std::shared_ptr<ObjectStore> store, std::string location,
                                                 std::shared_ptr<const Clock> clock = SystemClock());
  // Opens the warehouse at `root_dir`: a local folder (made absolute; "" is the working
  // folder) or a location OpenStoreAt opens ("memory://wh"). Nothing is created until a
  // table is registered, so opening a session in a folder leaves no trace there.
  static Result<std::shared_ptr<Warehouse>> Open(const std::string& root_dir);

  // The warehouse's location, without a trailing '/'.
  const std::string& root() const { return root_; }
  const std::shared_ptr<ObjectStore>& store() const { return store_; }

  // Where a managed table of this name lives when nothing else is there:
  // <root>/<schema>/<table>.
  std::string DefaultLocation(const TableName& name) const;
  // Claims the folder of a new managed table of `name` and returns its location:
  // DefaultLocation when no object is below it, else <root>/<schema>/<table>-<8 hex
  // digits>. The claim is an owner object put-if-absent in the folder, so the folder
  // belongs to this incarnation alone: no concurrent CREATE shares it, and a DROP of an
  // earlier incarnation (which deletes only the folder its entry names) cannot touch it.
  Result<std::string> ClaimManagedLocation(const TableName& name) const;
  // Deletes every object of the managed table folder `location` (as ClaimManagedLocation
  // or an entry gave it), its owner object last, so the folder cannot be claimed again
  // before it is empty. Temporary files of writes in progress are left to their writers
  // (unless ten minutes old). InvalidArgument for a location outside the warehouse.
  Status DeleteManagedFolder(const std::string& location) const;

  // The entry for `name`, nullopt when there is none. Corruption naming the catalog file
  // when it cannot be parsed.
  Result<std::optional<TableEntry>> Lookup(const TableName& name) const;
  // As Lookup, but NotFound ("table default.t does not exist") when there is none.
  Result<TableEntry> Get(const TableName& name) const;

  // Adds `entry` (created_time_ms is set from the clock when 0). AlreadyExists naming the
  // table when the name is taken.
  Status Register(TableEntry entry) const;
  // Removes the name if it still refers to `entry` (as Lookup gave it: same id, location
  // and creation time). A drop marker put-if-absent per incarnation makes the check and
  // the removal one step among DROPs, so a DROP racing another DROP and a CREATE never
  // removes the entry of an incarnation it did not look up. NotFound when there is no
  // entry (or another DROP is removing it), Conflict when the name now refers to another
  // incarnation (left in place). The table's files are the caller's.
  Status Unregister(const TableEntry& entry) const;

  // Every table, ordered by schema then name; only `schema`'s when given.
  Result<std::vector<TableEntry>> List(const std::optional<std::string>& schema = std::nullopt) const;
  // The table whose location is `location` (compared as locations are: lexically, after
  // removing ".", ".." and repeated '/'); nullopt when no table is there. Lists the catalog.
  Result<std::optional<TableEntry>> FindByLocation(const std::string& location) const;

  const std::shared_ptr<const Clock>& clock() const { return clock_; }

 private:
  Warehouse(std::shared_ptr<ObjectStore> store, std::string root, std::shared_ptr<const Clock> clock);

  const std::shared_ptr<ObjectStore> store_;
  const std::string root_;
  const std::shared_ptr<const Clock> clock_;
};

}  // namespace basin::catalog
