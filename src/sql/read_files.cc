#include "sql/read_files.h"

#include <algorithm>
#include <cstdlib>
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

Result<SchemaEvolution> ParseEvolution(const std::string& text) {
  const std::string mode = AsciiLower(text);
  if (mode == "addnewcolumns") return SchemaEvolution::kAddNewColumns;
  if (mode == "rescue") return SchemaEvolution::kRescue;
  if (mode == "failonnewcolumns") return SchemaEvolution::kFailOnNewColumns;
  if (mode == "none") return SchemaEvolution::kNone;
  return Status::InvalidArgument(
      "read_files: schemaEvolutionMode must be 'addNewColumns', 'rescue', 'failOnNewColumns' or 'none', "
      "not '" +
      text + "'");
}

Result<FileSchema> ParseDeclaredSchema(const std::string& text) {
  Result<std::vector<delta::StructField>> fields = grammar::ParseColumnList(text);
  if (!fields.ok()) return fields.status().WithContext("read_files: schema");
  FileSchema schema;
  for (const delta::StructField& field : *fields) schema.push_back({field.name, field.type->ToDuckDBType()});
  return schema;
}

// What the basin:// URL of a file of `handle`'s store starts with, before its key.
std::string UrlPrefix(const engine::StoreHandle& handle) {
  return std::string(engine::kStoreUrlScheme) + std::to_string(handle.id()) + "/";
}

// The files as a DuckDB list of basin:// URLs.
std::string UrlList(const engine::StoreHandle& handle, const std::vector<InputFile>& files) {
  std::string out = "[";
  for (size_t i = 0; i < files.size(); i++)
    out += (i > 0 ? ", " : "") + QuoteLiteral(UrlPrefix(handle) + files[i].key);
  return out + "]";
}

// SQL of the key of a file whose basin:// URL (of `handle`'s store) is in `column`.
std::string KeyOf(const engine::StoreHandle& handle, const std::string& column) {
  return "substr(" + column + ", " + std::to_string(UrlPrefix(handle).size() + 1) + ")";
}

// read_csv's options beyond the files that `request` gives (its header).
std::string CsvOptions(const ReadFilesRequest& request) {
  return request.header ? std::string(", header = ") + (*request.header ? "true" : "false") : std::string();
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

// Queries that see each row of the files as one JSON object, the column kRow: a JSON file's
// objects as they are, a CSV or Parquet row as its fields by name (CSV fields as text).
constexpr char kRow[] = "\"__basin_row\"";

// A column's value in kRow, cast to its type; NULL when it has none or it does not cast.
std::string ValueOf(const FileColumn& column, bool text_fields) {
  const bool as_text = text_fields || AsciiLower(column.type) == "varchar";
  return "TRY_CAST((" + std::string(kRow) + (as_text ? "->>" : "->") + QuoteLiteral(column.name) + ") AS " +
         column.type + ")";
}

// kRow's value for `column`, as JSON (NULL when it has none).
std::string FieldOf(const FileColumn& column) {
  return "(" + std::string(kRow) + "->" + QuoteLiteral(column.name) + ")";
}

// Whether kRow has a value for `column` that `cast` (ValueOf's) could not take.
std::string MisfitOf(const FileColumn& column, const std::string& cast) {
  const std::string value = FieldOf(column);
  return value + " IS NOT NULL AND json_type(" + value + ") <> 'NULL' AND " + cast + " IS NULL";
}

// kRow over each row of `files` (rescue mode without dead letters).
std::string RowsOf(const ReadFilesRequest& request, const std::string& urls) {
  const std::string row = " AS " + std::string(kRow);
  switch (request.format) {
    case FileFormat::kJson:
      return "SELECT json" + row + " FROM read_json_objects(" + urls + ", format = 'auto')";
    case FileFormat::kCsv:
      return "SELECT to_json(t)" + row + " FROM read_csv(" + urls +
             ", union_by_name = true, all_varchar = true" + CsvOptions(request) + ") AS t";
    case FileFormat::kParquet:
      return "SELECT to_json(t)" + row + " FROM read_parquet(" + urls + ", union_by_name = true) AS t";
  }
  return {};
}

// `schema`'s columns (ValueOf) from kRow of each row `rows` gives; with `rescue`,
// kRescuedDataColumn after them: the fields of no column and the values that did not cast,
// as a JSON object (NULL when there are none; null values are left out).
std::string TypedRows(const std::string& rows, const FileSchema& schema, bool text_fields, bool rescue) {
  std::string values, columns, known_removed, misfits;
  for (const FileColumn& column : schema) {
    if (column.name == kRescuedDataColumn) continue;
    const std::string field = QuoteLiteral(column.name);
    const std::string name = QuoteIdentifier(column.name);
    values += ", " + ValueOf(column, text_fields) + " AS " + name;
    columns += (columns.empty() ? "" : ", ") + name;
    known_removed += (known_removed.empty() ? "" : ", ") + field + ", NULL";
    misfits += (misfits.empty() ? "" : ", ") + field + ", CASE WHEN " + MisfitOf(column, name) + " THEN " +
               FieldOf(column) + " END";
  }
  if (rescue) {
    std::string rescued = "json_merge_patch('{}', " + std::string(kRow) + ")";
    if (!known_removed.empty()) {
      rescued = "json_merge_patch(json_merge_patch('{}', json_merge_patch(" + std::string(kRow) +
                ", json_object(" + known_removed + "))), json_object(" + misfits + "))";
    }
    columns += std::string(columns.empty() ? "" : ", ") + "NULLIF(CAST(" + rescued +
               " AS VARCHAR), '{}') AS " + QuoteIdentifier(kRescuedDataColumn);
  }
  return "SELECT " + columns + " FROM (SELECT " + kRow + values + " FROM (" + rows + "))";
}

// JSON lines with dead letters: every non-blank line of `files` (file: the key; line: from
// 1; text) with kRow (NULL when the line is not JSON) and why it is a dead letter (error;
// NULL when it is not one): it is not a JSON object, or outside rescue mode, a value of it
// does not fit its column.
std::string ClassifiedLines(const engine::StoreHandle& handle, const std::string& urls,
                            const FileSchema& schema, bool rescue) {
  const std::string lines =
      "SELECT " + KeyOf(handle, "filename") +
      " AS file, line, text FROM (SELECT filename, line, rtrim(text, chr(13)) AS text FROM (SELECT "
      "filename, "
      "unnest(range(1, len(parts) + 1)) AS line, unnest(parts) AS text FROM (SELECT filename, "
      "string_split(content, chr(10)) AS parts FROM read_text(" +
      urls + ")))) WHERE trim(text) <> ''";
  std::string error = "CASE WHEN " + std::string(kRow) + " IS NULL THEN 'not valid JSON' WHEN json_type(" +
                      kRow + ") <> 'OBJECT' THEN 'not a JSON object'";
  for (const FileColumn& column : schema) {
    if (rescue || column.name == kRescuedDataColumn) continue;
    error += " WHEN " + MisfitOf(column, ValueOf(column, false)) + " THEN " +
             QuoteLiteral("column " + column.name + ": ") + " || CAST(" + FieldOf(column) +
             " AS VARCHAR) || " + QuoteLiteral(" is not a " + column.type);
  }
  return "SELECT file, line, text, " + std::string(kRow) + ", " + error +
         " END AS error FROM (SELECT *, CASE WHEN json_valid(text) THEN CAST(text AS JSON) END AS " + kRow +
         " FROM (" + lines + "))";
}

// `schema` with the rescue column last, as rescue mode reads it.
FileSchema WithRescuedColumn(FileSchema schema) {
  std::erase_if(schema, [](const FileColumn& column) { return column.name == kRescuedDataColumn; });
  schema.push_back({kRescuedDataColumn, "VARCHAR"});
  return schema;
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
    } else if (name == "deadlettertable") {
      request.dead_letter_table = value;
    } else if (name == "maxdeadletterfraction") {
      char* end = nullptr;
      const double fraction = std::strtod(value.c_str(), &end);
      if (value.empty() || *end != '\0' || !(fraction >= 0 && fraction <= 1)) {
        return Status::InvalidArgument(
            "read_files: maxDeadLetterFraction must be a number from 0 to 1, not " + value);
      }
      request.max_dead_letter_fraction = fraction;
    } else if (name == "schemaevolutionmode") {
      ASSIGN_OR_RETURN(request.evolution, ParseEvolution(value));
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
  if (request.format == FileFormat::kCsv && !request.dead_letter_table.empty() &&
      request.evolution == SchemaEvolution::kRescue) {
    return Status::InvalidArgument(
        "read_files: CSV files take deadLetterTable or schemaEvolutionMode 'rescue', not both yet");
  }
  if (request.format == FileFormat::kParquet && !request.dead_letter_table.empty() && !request.schema) {
    return Status::InvalidArgument(
        "read_files: deadLetterTable for Parquet files needs schema => 'name TYPE, ...'");
  }
  if (request.max_dead_letter_fraction && request.dead_letter_table.empty()) {
    return Status::InvalidArgument("read_files: maxDeadLetterFraction needs a deadLetterTable");
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
    const bool rescue = request.EvolutionMode() == SchemaEvolution::kRescue;
    return engine::Lakehouse::ChangeFeed{CastColumns(rescue ? WithRescuedColumn(*schema) : *schema, ""),
                                         nullptr};
  }
  auto handle = std::make_shared<engine::StoreHandle>(engine::RegisterStore(store));
  const std::string urls = UrlList(*handle, files);
  const bool rescue = schema && request.EvolutionMode() == SchemaEvolution::kRescue;
  if (schema && !request.dead_letter_table.empty() && request.format == FileFormat::kJson) {
    const std::string good = "SELECT " + std::string(kRow) + " FROM (" +
                             ClassifiedLines(*handle, urls, *schema, rescue) + ") WHERE error IS NULL";
    return engine::Lakehouse::ChangeFeed{TypedRows(good, *schema, false, rescue), std::move(handle)};
  }
  if (rescue) {
    return engine::Lakehouse::ChangeFeed{
        TypedRows(RowsOf(request, urls), *schema, request.format == FileFormat::kCsv, true),
        std::move(handle)};
  }
  // Columns inferred from every file, matched by name, so a field that only later files
  // have is one of them.
  const std::string columns = schema ? ", columns = " + ColumnsStruct(*schema) : ", union_by_name = true";
  std::string sql;
  switch (request.format) {
    case FileFormat::kJson:
      sql = "SELECT * FROM read_json(" + urls + ", format = 'auto'" + columns + ")";
      break;
    case FileFormat::kCsv:
      // With dead letters, the lines ReadFilesDeadLetters found are skipped: every column is
      // read, as it read them, whatever the statement uses (a value of an unused column that
      // does not convert skips its line here too).
      sql = "SELECT * FROM read_csv(" + urls + CsvOptions(request) + columns +
            (request.dead_letter_table.empty() ? ")" : ", ignore_errors = true) AS r WHERE r IS NOT NULL");
      break;
    case FileFormat::kParquet: {
      const std::string from = "read_parquet(" + urls + ", union_by_name = true)";
      sql = schema ? CastColumns(*schema, from) : "SELECT * FROM " + from;
      break;
    }
  }
  return engine::Lakehouse::ChangeFeed{std::move(sql), std::move(handle)};
}

Result<FilesDeadLetters> ReadFilesDeadLetters(const ReadFilesRequest& request,
                                              const std::shared_ptr<ObjectStore>& store,
                                              const std::vector<InputFile>& files, const FileSchema& schema) {
  auto handle = std::make_shared<engine::StoreHandle>(engine::RegisterStore(store));
  const std::string urls = UrlList(*handle, files);
  FilesDeadLetters out;
  if (request.format == FileFormat::kCsv) {
    // DuckDB's CSV reader notes the lines it cannot read (the same it skips with
    // ignore_errors, as the batch's read does) in the rejects tables.
    // The rejects tables keep every scan's: emptied first. count(r) of the whole row: every
    // column is read (count(*) would read none, and so find no value that does not convert).
    out.prepare_sql =
        "DROP TABLE IF EXISTS temp.basin_file_rejects; DROP TABLE IF EXISTS temp.basin_file_reject_scans; "
        "CREATE OR REPLACE TEMP TABLE basin_file_records AS SELECT count(r) AS n FROM read_csv(" +
        urls + CsvOptions(request) + ", columns = " + ColumnsStruct(schema) +
        ", store_rejects = true, rejects_table = 'basin_file_rejects', rejects_scan = "
        "'basin_file_reject_scans') AS r";
    out.letters_sql = "SELECT " + KeyOf(*handle, "s.file_path") +
                      " AS file, e.line, e.csv_line AS text, e.error_message AS error, (SELECT n FROM "
                      "basin_file_records) + count(*) OVER () AS records FROM basin_file_rejects e JOIN "
                      "basin_file_reject_scans s USING (scan_id, file_id) ORDER BY file, line";
  } else {
    const bool rescue = request.EvolutionMode() == SchemaEvolution::kRescue;
    out.letters_sql = "SELECT file, line, text, error, count(*) OVER () AS records FROM (" +
                      ClassifiedLines(*handle, urls, schema, rescue) +
                      ") QUALIFY error IS NOT NULL ORDER BY file, line";
  }
  out.keepalive = std::move(handle);
  return out;
}

Result<engine::Lakehouse::ChangeFeed> ReadWholeParquetFile(const std::shared_ptr<ObjectStore>& store,
                                                           const InputFile& file) {
  auto handle = std::make_shared<engine::StoreHandle>(engine::RegisterStore(store));
  // count(r) of the whole row: every column of every row group is decoded.
  std::string sql =
      "SELECT count(r) FROM read_parquet(" + QuoteLiteral(UrlPrefix(*handle) + file.key) + ") AS r";
  return engine::Lakehouse::ChangeFeed{std::move(sql), std::move(handle)};
}

}  // namespace basin::sql
