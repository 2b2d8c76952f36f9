#include "catalog/warehouse.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <vector>

#include "common/strings.h"

namespace basin::catalog {

namespace {

using nlohmann::json;

constexpr const char* kCatalogFolder = "_basin_catalog/";
constexpr const char* kEntrySuffix = ".json";

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
  if (external != j.end()) entry.external = external->get<bool>();
  if (created != j.end()) entry.created_time_ms = created->get<int64_t>();
  return entry;
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
  ASSIGN_OR_RETURN(std::string root, AbsoluteLocalPath(root_dir));
  // A store that creates its folder on the first write only.
  auto store = OpenStoreAt(root);
  if (!store.ok()) return store.status().WithContext("warehouse " + root_dir);
  return Open(std::move(store).value(), root);
}

std::string Warehouse::DefaultLocation(const TableName& name) const {
  return root_ + "/" + name.schema + "/" + name.table;
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
  // Locations inside the warehouse are stored relative to it, so the folder can move.
  const std::string location = NormalizePath(entry.location);
  const std::string inside = root_ == "/" ? root_ : root_ + "/";
  const bool relative = location.starts_with(inside) && location.size() > inside.size();
  json j = {{"name", entry.name.ToString()},
            {"location", relative ? location.substr(inside.size()) : location},
            {"external", entry.external},
            {"createdTime", entry.created_time_ms}};
  Status st = store_->PutIfAbsent(EntryKey(entry.name), j.dump(2) + "\n");
  if (st.IsAlreadyExists())
    return Status::AlreadyExists("table " + entry.name.ToString() + " already exists");
  return st.WithContext("registering table " + entry.name.ToString());
}

Status Warehouse::Unregister(const TableName& name) const {
  ASSIGN_OR_RETURN(std::optional<TableEntry> entry, Lookup(name));
  if (!entry) return Status::NotFound("table " + name.ToString() + " does not exist");
  return store_->Delete(EntryKey(name)).WithContext("dropping table " + name.ToString());
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
