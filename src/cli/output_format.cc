#include "cli/output_format.h"

#include <array>
#include <iostream>
#include <nlohmann/json.hpp>

namespace basin::cli {

std::string JsonString(const std::string& text) {
  // Replace rather than throw on invalid UTF-8 (binary data rendered as text).
  return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

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

namespace {

class CsvWriter : public ResultWriter {
 public:
  explicit CsvWriter(std::ostream& out) : out_(out) {}
  void Begin(const std::vector<std::string>& names, const std::vector<std::string>&) override {
    for (size_t c = 0; c < names.size(); c++) out_ << (c > 0 ? "," : "") << CsvField(names[c]);
    out_ << '\n';
  }
  void Rows(const std::vector<std::vector<std::optional<std::string>>>& rows) override {
    for (const auto& row : rows) {
      for (size_t c = 0; c < row.size(); c++) out_ << (c > 0 ? "," : "") << CsvField(row[c]);
      out_ << '\n';
    }
  }
  void End() override { out_.flush(); }

 private:
  std::ostream& out_;
};

class JsonWriter : public ResultWriter {
 public:
  explicit JsonWriter(std::ostream& out) : out_(out) {}
  void Begin(const std::vector<std::string>& names, const std::vector<std::string>& types) override {
    for (const auto& name : names) keys_.push_back(JsonString(name));
    types_ = types;
    out_ << '[';
  }
  void Rows(const std::vector<std::vector<std::optional<std::string>>>& rows) override {
    for (const auto& row : rows) {
      out_ << (first_ ? "{" : ",{");
      first_ = false;
      for (size_t c = 0; c < keys_.size(); c++) {
        out_ << (c > 0 ? "," : "") << keys_[c] << ':' << JsonValue(row[c], types_[c]);
      }
      out_ << '}';
    }
  }
  void End() override { out_ << "]\n" << std::flush; }

 private:
  std::ostream& out_;
  std::vector<std::string> keys_;
  std::vector<std::string> types_;
  bool first_ = true;
};

class TableWriter : public ResultWriter {
 public:
  explicit TableWriter(std::ostream& out) : out_(out) {}
  void Begin(const std::vector<std::string>& names, const std::vector<std::string>& types) override {
    held_.column_names = names;
    held_.column_types = types;
  }
  void Rows(const std::vector<std::vector<std::optional<std::string>>>& rows) override {
    for (const auto& row : rows) {
      if (held_.rows.size() < kMaxTableRows) {
        held_.rows.push_back(row);
      } else {
        hidden_++;
      }
    }
  }
  void End() override {
    WriteTable(held_, out_, /*footer=*/true, hidden_);
    out_.flush();
  }

 private:
  std::ostream& out_;
  QueryResult held_;
  size_t hidden_ = 0;
};

}  // namespace

std::unique_ptr<ResultWriter> ResultWriter::For(OutputFormat format, std::ostream& out) {
  switch (format) {
    case OutputFormat::kCsv:
      return std::make_unique<CsvWriter>(out);
    case OutputFormat::kJson:
      return std::make_unique<JsonWriter>(out);
    case OutputFormat::kTable:
      break;
  }
  return std::make_unique<TableWriter>(out);
}

void WriteResult(const QueryResult& result, OutputFormat format, std::ostream& out) {
  auto writer = ResultWriter::For(format, out);
  writer->Begin(result.column_names, result.column_types);
  writer->Rows(result.rows);
  writer->End();
}

Status WriteStream(RowStream& stream, OutputFormat format, std::ostream& out) {
  auto writer = ResultWriter::For(format, out);
  writer->Begin(stream.column_names(), stream.column_types());
  std::vector<std::vector<std::optional<std::string>>> rows;
  while (true) {
    ASSIGN_OR_RETURN(bool more, stream.Next(&rows));
    if (!more) break;
    writer->Rows(rows);
  }
  writer->End();
  return Status::OK();
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
