#include "cli/output_format.h"

#include <array>
#include <iostream>
#include <nlohmann/json.hpp>

namespace basin::cli {

namespace {

// RFC 4180: quote when the field holds a separator, a quote or a line break; an empty
// string is quoted so that it stays distinct from NULL (an empty field).
std::string CsvField(const std::optional<std::string>& cell) {
  if (!cell) return "";
  const std::string& text = *cell;
  if (!text.empty() && text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char ch : text) {
    if (ch == '"') out += '"';
    out += ch;
  }
  return out + "\"";
}

std::string JsonString(const std::string& text) {
  // Replace rather than throw on invalid UTF-8 (binary data rendered as text).
  return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string JsonValue(const std::optional<std::string>& cell, std::string_view type) {
  if (!cell) return "null";
  if (type == "BOOLEAN") return *cell == "true" ? "true" : "false";
  // DuckDB renders numbers in JSON-compatible form, except inf/nan, which stay strings.
  if (IsNumericType(type) && nlohmann::json::accept(*cell)) return *cell;
  return JsonString(*cell);
}

}  // namespace

Result<OutputFormat> ParseOutputFormat(std::string_view name) {
  if (name == "table") return OutputFormat::kTable;
  if (name == "csv") return OutputFormat::kCsv;
  if (name == "json") return OutputFormat::kJson;
  return Status::InvalidArgument("unknown output format '" + std::string(name) +
                                 "' (use table, csv or json)");
}

std::string_view OutputFormatName(OutputFormat format) {
  switch (format) {
    case OutputFormat::kTable:
      return "table";
    case OutputFormat::kCsv:
      return "csv";
    case OutputFormat::kJson:
      return "json";
  }
  return "table";
}

void WriteResult(const engine::QueryResult& result, OutputFormat format, std::ostream& out) {
  switch (format) {
    case OutputFormat::kTable:
      WriteTable(result, out);
      break;
    case OutputFormat::kCsv:
      WriteCsv(result, out);
      break;
    case OutputFormat::kJson:
      WriteJson(result, out);
      break;
  }
  out.flush();
}

void WriteCsv(const engine::QueryResult& result, std::ostream& out) {
  for (size_t c = 0; c < result.column_count(); c++) {
    out << (c > 0 ? "," : "") << CsvField(result.column_names[c]);
  }
  out << '\n';
  for (const auto& row : result.rows) {
    for (size_t c = 0; c < row.size(); c++) out << (c > 0 ? "," : "") << CsvField(row[c]);
    out << '\n';
  }
}

void WriteJson(const engine::QueryResult& result, std::ostream& out) {
  std::vector<std::string> keys;
  keys.reserve(result.column_count());
  for (const auto& name : result.column_names) keys.push_back(JsonString(name));
  out << '[';
  for (size_t r = 0; r < result.row_count(); r++) {
    out << (r > 0 ? ",{" : "{");
    for (size_t c = 0; c < keys.size(); c++) {
      out << (c > 0 ? "," : "") << keys[c] << ':' << JsonValue(result.at(r, c), result.column_types[c]);
    }
    out << '}';
  }
  out << "]\n";
}

void WriteError(const Status& status, std::ostream& err) {
  err << "Error: " << status.ToString() << '\n';
  err.flush();
}

int ExitStatus(const Status& status) {
  if (status.ok()) return 0;
  WriteError(status, std::cerr);
  return 1;
}

bool IsNumericType(std::string_view duckdb_type) {
  static constexpr std::array<std::string_view, 12> kNumeric = {
      "TINYINT",   "SMALLINT", "INTEGER", "BIGINT",   "HUGEINT", "UTINYINT",
      "USMALLINT", "UINTEGER", "UBIGINT", "UHUGEINT", "FLOAT",   "DOUBLE"};
  for (std::string_view name : kNumeric) {
    if (duckdb_type == name) return true;
  }
  return duckdb_type.starts_with("DECIMAL(");
}

}  // namespace basin::cli
