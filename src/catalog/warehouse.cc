#include "catalog/warehouse.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "common/strings.h"

namespace basin::catalog {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kCatalogFolder = "_basin_catalog";
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

std::string EntryKey(const TableName& name) { return name.schema + "/" + name.table + kEntrySuffix; }

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
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

Warehouse::Warehouse(std::string root) : root_(std::move(root)) {}

Result<std::shared_ptr<Warehouse>> Warehouse::Open(const std::string& root_dir) {
  std::error_code ec;
  fs::path root = fs::absolute(root_dir.empty() ? fs::path(".") : fs::path(root_dir), ec);
  if (ec) return Status::IOError("warehouse " + root_dir + ": " + ec.message());
  root = root.lexically_normal();
  std::string text = root.string();
  if (text.size() > 1 && text.back() == '/') text.pop_back();
  return std::shared_ptr<Warehouse>(new Warehouse(text));
}

std::string Warehouse::DefaultLocation(const TableName& name) const {
  return (fs::path(root_) / name.schema / name.table).string();
}

Result<std::optional<TableEntry>> Warehouse::Lookup(const TableName& name) const {
  fs::path file = fs::path(root_) / kCatalogFolder / (name.schema) / (name.table + kEntrySuffix);
  std::error_code ec;
  if (!fs::exists(file, ec)) return std::optional<TableEntry>();
  ASSIGN_OR_RETURN(auto store, OpenLocalObjectStore((fs::path(root_) / kCatalogFolder).string()));
  auto content = store->Get(EntryKey(name));
  if (!content.ok()) {
    if (content.status().code() == ErrorCode::kNotFound)
      return std::optional<TableEntry>();  // dropped meanwhile
    return content.status().WithContext("catalog entry of table " + name.ToString());
  }
  json j = json::parse(*content, nullptr, false);
  std::string where = "catalog file " + file.string();
  if (j.is_discarded() || !j.is_object() || !j.contains("location") || !j["location"].is_string()) {
    return Status::Corruption(where + ": expected a JSON object with a string \"location\"");
  }
  TableEntry entry;
  entry.name = name;
  fs::path location(j["location"].get<std::string>());
  if (location.is_relative()) location = fs::path(root_) / location;
  entry.location = location.lexically_normal().string();
  entry.external = j.value("external", false);
  entry.created_time_ms = j.value("createdTime", int64_t{0});
  return std::optional<TableEntry>(std::move(entry));
}

Result<TableEntry> Warehouse::Get(const TableName& name) const {
  ASSIGN_OR_RETURN(std::optional<TableEntry> entry, Lookup(name));
  if (!entry) return Status::NotFound("table " + name.ToString() + " does not exist");
  return std::move(*entry);
}

Status Warehouse::Register(TableEntry entry) const {
  if (entry.created_time_ms == 0) entry.created_time_ms = NowMs();
  // Locations inside the warehouse are stored relative to it, so the folder can move.
  fs::path location = fs::path(entry.location).lexically_normal();
  fs::path relative = location.lexically_relative(root_);
  bool inside = !relative.empty() && *relative.begin() != "..";
  json j = {{"name", entry.name.ToString()},
            {"location", inside ? relative.string() : location.string()},
            {"external", entry.external},
            {"createdTime", entry.created_time_ms}};
  ASSIGN_OR_RETURN(auto store, OpenLocalObjectStore((fs::path(root_) / kCatalogFolder).string()));
  Status st = store->PutIfAbsent(EntryKey(entry.name), j.dump(2) + "\n");
  if (st.code() == ErrorCode::kAlreadyExists) {
    return Status::AlreadyExists("table " + entry.name.ToString() + " already exists");
  }
  return st.WithContext("registering table " + entry.name.ToString());
}

Status Warehouse::Unregister(const TableName& name) const {
  ASSIGN_OR_RETURN(std::optional<TableEntry> entry, Lookup(name));
  if (!entry) return Status::NotFound("table " + name.ToString() + " does not exist");
  ASSIGN_OR_RETURN(auto store, OpenLocalObjectStore((fs::path(root_) / kCatalogFolder).string()));
  return store->Delete(EntryKey(name)).WithContext("dropping table " + name.ToString());
}

Result<std::vector<TableEntry>> Warehouse::List(const std::optional<std::string>& schema) const {
  std::vector<TableEntry> out;
  fs::path catalog = fs::path(root_) / kCatalogFolder;
  std::error_code ec;
  if (!fs::is_directory(catalog, ec)) return out;
  ASSIGN_OR_RETURN(auto store, OpenLocalObjectStore(catalog.string()));
  std::string prefix = schema ? AsciiLower(*schema) + "/" : "";
  ASSIGN_OR_RETURN(std::vector<ObjectInfo> objects, store->List(prefix));
  for (const ObjectInfo& object : objects) {
    const std::string& key = object.key;
    size_t slash = key.find('/');
    std::string suffix = kEntrySuffix;
    if (slash == std::string::npos || key.find('/', slash + 1) != std::string::npos ||
        key.size() <= suffix.size() || key.compare(key.size() - suffix.size(), suffix.size(), suffix) != 0) {
      continue;  // not an entry (a temporary file of an interrupted write, say)
    }
    TableName name{key.substr(0, slash), key.substr(slash + 1, key.size() - slash - 1 - suffix.size())};
    ASSIGN_OR_RETURN(std::optional<TableEntry> entry, Lookup(name));
    if (entry) out.push_back(std::move(*entry));
  }
  return out;
}

}  // namespace basin::catalog
