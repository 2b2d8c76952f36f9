#include "catalog/warehouse.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <vector>

#include "common/strings.h"
#include "common/uuid.h"

namespace basin::catalog {

namespace {

using nlohmann::json;

constexpr const char* kCatalogFolder = "_basin_catalog/";
constexpr const char* kEntrySuffix = ".json";
// In a managed table's folder: the object whose put-if-absent claims the folder.
constexpr const char* kOwnerFile = "_basin_owner";
// A drop marker (or a temporary file of a write) older than this was left by a process
// that crashed: another may take over (or delete it).
constexpr int64_t kStaleDropMarkerMs = 10 * 60 * 1000;

Status CheckPart(const std::string& part, const std::vector<std::string>& parts) {
  auto whole = [&] {
    std::string out;
    for (const auto& p : parts) out += (out.empty() ? "" : ".") + p;
    return out;
  };
  if (part.empty()) return Status::InvalidArgument("table name '" + whole() + "' has an empty part");
  if (part[0] == '.' || part.find_first_of(std::string("/\\\0", 3)) != std::string::npos) {
    return Status::InvalidArgument("table name '" + whole() +
                                   "': names cannot contain '/', '\\' or NUL, or start with '.'");
  }
  return Status::OK();
}

std::string EntryKey(const TableName& name) {
  return kCatalogFolder + name.schema + "/" + name.table + kEntrySuffix;
}

// `path` with "." and empty components dropped and ".." resolved, lexically (as locations
// are compared as text): "/a/./b/../c/" -> "/a/c". A "scheme://" prefix is kept as it is.
std::string NormalizePath(std::string_view path) {
  std::string head;
  if (size_t scheme = path.find("://"); scheme != std::string_view::npos) {
    head = std::string(path.substr(0, scheme + 3));
    path.remove_prefix(scheme + 3);
  } else if (path.starts_with('/')) {
    head = "/";
  }
  std::vector<std::string_view> parts;
  while (!path.empty()) {
    size_t slash = path.find('/');
    std::string_view part = path.substr(0, slash);
    path.remove_prefix(slash == std::string_view::npos ? path.size() : slash + 1);
    if (part.empty() || part == ".") continue;
    if (part == ".." && !parts.empty() && parts.back() != "..") {
      parts.pop_back();
    } else if (part != ".." || head.empty()) {
      parts.push_back(part);  // ".." above an absolute root stays at the root
    }
  }
  std::string out = head;
  for (size_t i = 0; i < parts.size(); i++) out.append(i > 0 ? "/" : "").append(parts[i]);
  return out.empty() ? "." : out;
}

// The entry file `content` of table `name`; Corruption naming `where` (the file) and the
// field when it is not the object docs/catalog.md specifies. Every field is checked before
// it is read: nlohmann's typed getters throw, and nothing may throw out of the catalog.
Result<TableEntry> ParseEntry(const std::string& root, const TableName& name, const std::string& content,
                              const std::string& where) {
  json j = json::parse(content, nullptr, false);
  if (j.is_discarded()) return Status::Corruption(where + ": not valid JSON");
  if (!j.is_object()) return Status::Corruption(where + ": expected a JSON object, got " + j.type_name());
  auto location_field = j.find("location");
  if (location_field == j.end() || !location_field->is_string() ||
      location_field->get<std::string>().empty()) {
    return Status::Corruption(where + ": expected a non-empty string \"location\"");
  }
  auto external = j.find("external");
  if (external != j.end() && !external->is_boolean()) {
    return Status::Corruption(where + ": \"external\" must be true or false, got " + external->dump());
  }
  auto created = j.find("createdTime");
  if (created != j.end() && !created->is_number_integer()) {
    return Status::Corruption(where + ": \"createdTime\" must be an integer, got " + created->dump());
  }
  TableEntry entry;
  entry.name = name;
  const std::string location = location_field->get<std::string>();
  // Stored relative to the warehouse when inside it ("default/t"); absolute otherwise.
  const bool relative = !location.starts_with('/') && location.find("://") == std::string::npos;
  entry.location = NormalizePath(relative ? root + "/" + location : location);
  auto id = j.find("id");
  if (id != j.end() && !id->is_string()) {
    return Status::Corruption(where + ": \"id\" must be a string, got " + id->dump());
  }
  if (external != j.end()) entry.external = external->get<bool>();
  if (created != j.end()) entry.created_time_ms = created->get<int64_t>();
  if (id != j.end()) entry.id = id->get<std::string>();
  return entry;
}

bool SameIncarnation(const TableEntry& a, const TableEntry& b) {
  return a.id == b.id && a.location == b.location && a.created_time_ms == b.created_time_ms;
}

// The marker a DROP of `entry` puts before removing it: one per incarnation. Hidden, and
// not ending in ".json", so List skips it.
std::string DropMarkerKey(const TableEntry& entry) {
  const std::string incarnation =
      entry.id.empty() ? "created-" + std::to_string(entry.created_time_ms) : entry.id;
  return kCatalogFolder + entry.name.schema + "/." + entry.name.table + ".dropping-" + incarnation;
}

}  // namespace

std::string TableName::ToString() const { return schema + "." + table; }

Result<TableName> MakeTableName(const std::vector<std::string>& parts) {
  if (parts.empty() || parts.size() > 2) {
    return Status::InvalidArgument("a table name is 'table' or 'schema.table', got " +
                                   std::to_string(parts.size()) + " parts");
  }
  for (const auto& part : parts) RETURN_IF_ERROR(CheckPart(part, parts));
  TableName name;
  if (parts.size() == 2) name.schema = AsciiLower(parts[0]);
  name.table = AsciiLower(parts.back());
  return name;
}

Warehouse::Warehouse(std::shared_ptr<ObjectStore> store, std::string root, std::shared_ptr<const Clock> clock)
    : store_(std::move(store)), root_(std::move(root)), clock_(std::move(clock)) {}

Result<std::shared_ptr<Warehouse>> Warehouse::Open(std::shared_ptr<ObjectStore> store, std::string location,
                                                   std::shared_ptr<const Clock> clock) {
  if (store == nullptr || clock == nullptr)
    return Status::InvalidArgument("a warehouse needs a store and a clock");
  if (location.empty()) return Status::InvalidArgument("a warehouse needs a location");
  return std::shared_ptr<Warehouse>(
      new Warehouse(std::move(store), NormalizePath(location), std::move(clock)));
}

Result<std::shared_ptr<Warehouse>> Warehouse::Open(const std::string& root_dir) {
  std::string root = root_dir;
  if (root.find("://") == std::string::npos) {
    ASSIGN_OR_RETURN(root, AbsoluteLocalPath(root_dir));
  }
  // A store that creates its folder on the first write only.
  auto store = OpenStoreAt(root);
  if (!store.ok()) return store.status().WithContext("warehouse " + root_dir);
  return Open(std::move(store).value(), root);
}

std::string Warehouse::DefaultLocation(const TableName& name) const {
  return root_ + "/" + name.schema + "/" + name.table;
}

Result<std::string> Warehouse::ClaimManagedLocation(const TableName& name) const {
  const json owner = {{"name", name.ToString()}, {"claimedTime", clock_->NowMs()}};
  // A few tries: a collision of 8 random hex digits is already unlikely.
  for (int attempt = 0; attempt < 8; attempt++) {
    const std::string folder =
        name.schema + "/" + name.table + (attempt == 0 ? "" : "-" + NewUuid().substr(0, 8));
    Status claimed = store_->PutIfAbsent(folder + "/" + kOwnerFile, owner.dump() + "\n");
    if (claimed.IsAlreadyExists()) continue;  // another incarnation's folder
    RETURN_IF_ERROR(
        claimed.WithContext("table " + name.ToString() + ": claiming folder " + root_ + "/" + folder));
    // Files nobody owns (written before owner objects, or left by a crash): not ours.
    ASSIGN_OR_RETURN(std::vector<ObjectInfo> objects, store_->List(folder + "/"));
    if (objects.size() == 1) return root_ + "/" + folder;
    RETURN_IF_ERROR(
        store_->Delete(folder + "/" + kOwnerFile)
            .WithContext("table " + name.ToString() + ": giving back folder " + root_ + "/" + folder));
  }
  return Status::IOError("table " + name.ToString() + ": no free folder name under " + root_ + "/" +
                         name.schema);
}

Status Warehouse::DeleteManagedFolder(const std::string& location) const {
  const std::string normalized = NormalizePath(location);
  const std::string inside = root_ == "/" ? root_ : root_ + "/";
  if (!normalized.starts_with(inside) || normalized.size() <= inside.size()) {
    return Status::InvalidArgument("folder " + location + " is not inside warehouse " + root_);
  }
  const std::string prefix = normalized.substr(inside.size()) + "/";
  ASSIGN_OR_RETURN(std::vector<ObjectInfo> objects, store_->List(prefix));
  bool owned = false;
  for (const ObjectInfo& object : objects) {
    if (object.key == prefix + kOwnerFile) {
      owned = true;
      continue;
    }
    // A write in flight (a CREATE claiming the folder the moment the owner object goes):
    // its temporary file is its own to link or remove. A crash's leftovers go once old.
    if (IsLocalTempFile(object.key) && clock_->NowMs() - object.modification_time_ms < kStaleDropMarkerMs) {
      continue;
    }
    Status deleted = store_->Delete(object.key);
    if (!deleted.ok() && !deleted.IsNotFound()) return deleted.WithContext("deleting folder " + normalized);
  }
  if (!owned) return Status::OK();
  Status deleted = store_->Delete(prefix + kOwnerFile);
  if (deleted.IsNotFound()) return Status::OK();
  return deleted.WithContext("deleting folder " + normalized);
}

Result<std::optional<TableEntry>> Warehouse::Lookup(const TableName& name) const {
  const std::string key = EntryKey(name);
  auto content = store_->Get(key);
  if (!content.ok()) {
    if (content.status().IsNotFound()) return std::optional<TableEntry>();
    return content.status().WithContext("catalog entry of table " + name.ToString());
  }
  ASSIGN_OR_RETURN(TableEntry entry, ParseEntry(root_, name, *content, "catalog file " + root_ + "/" + key));
  return std::optional<TableEntry>(std::move(entry));
}

Result<TableEntry> Warehouse::Get(const TableName& name) const {
  ASSIGN_OR_RETURN(std::optional<TableEntry> entry, Lookup(name));
  if (!entry) return Status::NotFound("table " + name.ToString() + " does not exist");
  return std::move(*entry);
}

Status Warehouse::Register(TableEntry entry) const {
  if (entry.created_time_ms == 0) entry.created_time_ms = clock_->NowMs();
  if (entry.id.empty()) entry.id = NewUuid();
  // Locations inside the warehouse are stored relative to it, so the folder can move.
  const std::string location = NormalizePath(entry.location);
  const std::string inside = root_ == "/" ? root_ : root_ + "/";
  const bool relative = location.starts_with(inside) && location.size() > inside.size();
  json j = {{"name", entry.name.ToString()},
            {"location", relative ? location.substr(inside.size()) : location},
            {"external", entry.external},
            {"createdTime", entry.created_time_ms},
            {"id", entry.id}};
  Status st = store_->PutIfAbsent(EntryKey(entry.name), j.dump(2) + "\n");
  if (st.IsAlreadyExists())
    return Status::AlreadyExists("table " + entry.name.ToString() + " already exists");
  return st.WithContext("registering table " + entry.name.ToString());
}

Status Warehouse::Unregister(const TableEntry& entry) const {
  const TableName& name = entry.name;
  const std::string what = "dropping table " + name.ToString();
  // Only the DROP holding the marker goes on: between its check and its delete, nobody
  // else removes the entry (CREATE cannot register a name that is taken).
  const std::string marker = DropMarkerKey(entry);
  const json mark = {{"droppedTime", clock_->NowMs()}};
  Status marked = store_->PutIfAbsent(marker, mark.dump() + "\n");
  if (marked.IsAlreadyExists()) {
    auto held = store_->Get(marker);
    const json since = held.ok() ? json::parse(*held, nullptr, false) : json();
    const bool stale = since.is_object() && since.contains("droppedTime") &&
                       since["droppedTime"].is_number_integer() &&
                       clock_->NowMs() - since["droppedTime"].get<int64_t>() > kStaleDropMarkerMs;
    if (!stale)
      return Status::NotFound("table " + name.ToString() + " is being dropped by another statement");
    marked = store_->Put(marker, mark.dump() + "\n");  // left by a DROP that crashed
  }
  RETURN_IF_ERROR(marked.WithContext(what));
  auto done = [&](Status outcome) {
    Status unmarked = store_->Delete(marker);
    if (outcome.ok() && !unmarked.ok() && !unmarked.IsNotFound()) return unmarked.WithContext(what);
    return outcome;
  };
  auto current = Lookup(name);
  if (!current.ok()) return done(current.status());
  if (!*current) return done(Status::NotFound("table " + name.ToString() + " does not exist"));
  if (!SameIncarnation(**current, entry)) {
    return done(Status::Conflict("table " + name.ToString() +
                                 " was dropped and created again while this DROP ran; nothing was dropped"));
  }
  return done(store_->Delete(EntryKey(name)).WithContext(what));
}

Result<std::optional<TableEntry>> Warehouse::FindByLocation(const std::string& location) const {
  const std::string wanted = NormalizePath(location);
  ASSIGN_OR_RETURN(std::vector<TableEntry> tables, List());
  for (TableEntry& table : tables) {
    if (NormalizePath(table.location) == wanted) return std::optional<TableEntry>(std::move(table));
  }
  return std::optional<TableEntry>();
}

Result<std::vector<TableEntry>> Warehouse::List(const std::optional<std::string>& schema) const {
  std::vector<TableEntry> out;
  const std::string folder = kCatalogFolder;
  ASSIGN_OR_RETURN(std::vector<ObjectInfo> objects,
                   store_->List(folder + (schema ? AsciiLower(*schema) + "/" : "")));
  const std::string suffix = kEntrySuffix;
  for (const ObjectInfo& object : objects) {
    const std::string key = object.key.substr(folder.size());
    size_t slash = key.find('/');
    if (slash == std::string::npos || key.find('/', slash + 1) != std::string::npos ||
        key.size() <= suffix.size() || !key.ends_with(suffix)) {
      continue;  // not an entry (a temporary file of an interrupted write, say)
    }
    TableName name{key.substr(0, slash), key.substr(slash + 1, key.size() - slash - 1 - suffix.size())};
    ASSIGN_OR_RETURN(std::optional<TableEntry> entry, Lookup(name));
    if (entry) out.push_back(std::move(*entry));
  }
  return out;
}

}  // namespace basin::catalog
