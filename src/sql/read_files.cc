#include "sql/read_files.h"

#include <algorithm>
#include <utility>

#include "commands/table_features.h"
#include "common/strings.h"
#include "engine/store_registry.h"
#include "sql/grammar/parse.h"

namespace basin::sql {

namespace {

// Spark and Hadoop writers leave _SUCCESS, _committed_* and .crc files beside the data.
bool IsHidden(const std::string& key) {
  size_t start = 0;
  while (start <= key.size()) {
    const size_t end = std::min(key.find('/', start), key.size());
    if (end > start && (key[start] == '.' || key[start] == '_')) return true;
    start = end + 1;
  }
  return IsLocalTempFile(key);
}

Result<FileFormat> ParseFormat(const std::string& text) {
  const std::string format = AsciiLower(text);
  if (format == "json") return FileFormat::kJson;
  if (format == "csv") return FileFormat::kCsv;
  if (format == "parquet") return FileFormat::kParquet;
  return Status::InvalidArgument("read_files: format must be 'json', 'csv' or 'parquet', not '" + text + "'");
}

Result<FileSchema> ParseDeclaredSchema(const std::string& text) {
  Result<std::vector<delta::StructField>> fields = grammar::ParseColumnList(text);
  if (!fields.ok()) return fields.status().WithContext("read_files: schema");
  FileSchema schema;
  for (const delta::StructField& field : *fields) schema.push_back({field.name, field.type->ToDuckDBType()});
  return schema;
}

// The files as a DuckDB list of basin:// URLs.
std::string UrlList(const engine::StoreHandle& handle, const std::vector<InputFile>& files) {
  std::string out = "[";
  for (size_t i = 0; i < files.size(); i++) {
    if (i > 0) out += ", ";
    out +=
        QuoteLiteral(std::string(engine::kStoreUrlScheme) + std::to_string(handle.id()) + "/" + files[i].key);
  }
  return out + "]";
}

// {'id': 'BIGINT', ...}: the columns option of read_json and read_csv.
std::string ColumnsStruct(const FileSchema& schema) {
  std::string out = "{";
  for (size_t i = 0; i < schema.size(); i++) {
    if (i > 0) out += ", ";
    out += QuoteLiteral(schema[i].name) + ": " + QuoteLiteral(schema[i].type);
  }
  return out + "}";
}

// SELECT CAST("id" AS BIGINT) AS "id", ...: `schema`'s columns over `from`.
std::string CastColumns(const FileSchema& schema, const std::string& from) {
  std::string out = "SELECT ";
  for (size_t i = 0; i < schema.size(); i++) {
    if (i > 0) out += ", ";
    const std::string name = QuoteIdentifier(schema[i].name);
    out += "CAST(" + (from.empty() ? std::string("NULL") : name) + " AS " + schema[i].type + ") AS " + name;
  }
  return out + (from.empty() ? " WHERE false" : " FROM " + from);
}

}  // namespace

Result<ReadFilesRequest> ParseReadFilesRequest(const std::string& folder,
                                               const std::map<std::string, std::string>& options) {
  ReadFilesRequest request;
  request.folder = folder;
  auto format = options.find("format");
  if (format == options.end()) {
    return Status::InvalidArgument("read_files('" + folder +
                                   "'): give the files' format => 'json', 'csv' or 'parquet'");
  }
  ASSIGN_OR_RETURN(request.format, ParseFormat(format->second));
  for (const auto& [name, value] : options) {
    if (name == "schema") {
      ASSIGN_OR_RETURN(request.schema, ParseDeclaredSchema(value));
    } else if (name == "header") {
      if (request.format != FileFormat::kCsv)
        return Status::InvalidArgument("read_files: header is for CSV files");
      request.header = AsciiLower(value) == "true";
    } else if (name == "maxfilespertrigger") {
      const int64_t files = std::stoll(value);
      if (files < 1)
        return Status::InvalidArgument("read_files: maxFilesPerTrigger must be 1 or more, not " + value);
      request.max_files = files;
    } else if (name == "maxbytespertrigger") {
      request.max_bytes = commands::ParseByteSize(value);
      if (!request.max_bytes) {
        return Status::InvalidArgument(
            "read_files: maxBytesPerTrigger takes a size in bytes ('512mb', '1g' or a "
            "byte count), not '" +
            value + "'");
      }
    }
  }
  return request;
}

Result<std::vector<InputFile>> ListInputFiles(ObjectStore& store) {
  ASSIGN_OR_RETURN(std::vector<ObjectInfo> objects, store.List(""));
  std::vector<InputFile> files;
  for (ObjectInfo& object : objects) {
    if (IsHidden(object.key)) continue;
    files.push_back(
        {std::move(object.key), static_cast<int64_t>(object.size_bytes), object.modification_time_ms});
  }
  std::sort(files.begin(), files.end(), [](const InputFile& a, const InputFile& b) {
    return std::tie(a.modification_time_ms, a.key) < std::tie(b.modification_time_ms, b.key);
  });
  return files;
}

Result<engine::Lakehouse::ChangeFeed> ReadFilesFeed(const ReadFilesRequest& request,
                                                    const std::shared_ptr<ObjectStore>& store,
                                                    const std::vector<InputFile>& files,
                                                    const std::optional<FileSchema>& schema) {
  if (files.empty()) {
    if (!schema) {
      return Status::InvalidArgument("read_files('" + request.folder +
                                     "'): no files to read, so no columns to infer: give schema => "
                                     "'name TYPE, ...'");
    }
    return engine::Lakehouse::ChangeFeed{CastColumns(*schema, ""), nullptr};
  }
  auto handle = std::make_shared<engine::StoreHandle>(engine::RegisterStore(store));
  const std::string urls = UrlList(*handle, files);
  std::string sql;
  switch (request.format) {
    case FileFormat::kJson:
      sql = "SELECT * FROM read_json(" + urls + ", format = 'auto'" +
            (schema ? ", columns = " + ColumnsStruct(*schema) : std::string()) + ")";
      break;
    case FileFormat::kCsv:
      sql = "SELECT * FROM read_csv(" + urls +
            (request.header ? std::string(", header = ") + (*request.header ? "true" : "false")
                            : std::string()) +
            (schema ? ", columns = " + ColumnsStruct(*schema) : std::string()) + ")";
      break;
    case FileFormat::kParquet: {
      const std::string from = "read_parquet(" + urls + ", union_by_name = true)";
      sql = schema ? CastColumns(*schema, from) : "SELECT * FROM " + from;
      break;
    }
  }
  return engine::Lakehouse::ChangeFeed{std::move(sql), std::move(handle)};
}

}  // namespace basin::sql
