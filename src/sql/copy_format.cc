#include "sql/copy_format.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>

namespace basin::sql {
namespace {

std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

// PostgreSQL's boolean option values; an option without a value is true.
Result<bool> BoolOption(const std::string& name, const std::optional<std::string>& value) {
  if (!value) return true;
  const std::string v = Lower(*value);
  if (v == "true" || v == "on" || v == "1" || v == "t" || v == "yes") return true;
  if (v == "false" || v == "off" || v == "0" || v == "f" || v == "no") return false;
  return Status::InvalidArgument("COPY option " + name + " takes a boolean, not '" + *value + "'");
}

Result<char> OneCharacter(const std::string& name, const std::optional<std::string>& value) {
  if (!value || value->size() != 1) {
    return Status::InvalidArgument("COPY " + name + " must be a single one-byte character");
  }
  return (*value)[0];
}

}  // namespace

Result<CopyFormat> ParseCopyFormat(const engine::SqlCopy& copy) {
  CopyFormat format;
  // FORMAT first: it sets the other options' defaults.
  for (const auto& [name, value] : copy.options) {
    if (Lower(name) != "format") continue;
    const std::string kind = Lower(value.value_or(""));
    if (kind == "csv") {
      format.kind = CopyFormat::Kind::kCsv;
      format.delimiter = ',';
      format.null_string = "";
    } else if (kind == "binary") {
      return Status::NotImplemented("COPY TO STDOUT in FORMAT binary: use text or csv");
    } else if (kind != "text") {
      return Status::NotImplemented("COPY TO STDOUT in FORMAT " + value.value_or("") +
                                    ": use text or csv (DuckDB's formats are for COPY TO 'file')");
    }
  }
  const bool csv = format.kind == CopyFormat::Kind::kCsv;
  std::optional<char> escape;
  for (const auto& [written, value] : copy.options) {
    const std::string name = Lower(written);
    if (name == "format") continue;
    if (name == "header") {
      ASSIGN_OR_RETURN(format.header, BoolOption("HEADER", value));
    } else if (name == "delimiter" || name == "sep") {
      ASSIGN_OR_RETURN(format.delimiter, OneCharacter("DELIMITER", value));
    } else if (name == "null" || name == "nullstr") {
      if (!value) return Status::InvalidArgument("COPY NULL needs a string");
      format.null_string = *value;
    } else if ((name == "quote" || name == "escape") && !csv) {
      return Status::InvalidArgument("COPY " + Lower(written) + " is available only in CSV mode");
    } else if (name == "quote") {
      ASSIGN_OR_RETURN(format.quote, OneCharacter("QUOTE", value));
    } else if (name == "escape") {
      ASSIGN_OR_RETURN(escape, OneCharacter("ESCAPE", value));
    } else {
      return Status::InvalidArgument("COPY TO STDOUT does not take the option " + written +
                                     " (it takes FORMAT, HEADER, DELIMITER, NULL, QUOTE and ESCAPE)");
    }
  }
  format.escape = escape.value_or(format.quote);
  const char d = format.delimiter;
  if (d == '\r' || d == '\n' || (!csv && d == '\\')) {
    return Status::InvalidArgument(
        "COPY delimiter cannot be newline, carriage return or (in text) backslash");
  }
  if (csv && d == format.quote) return Status::InvalidArgument("COPY delimiter and quote must be different");
  if (format.null_string.find(d) != std::string::npos) {
    return Status::InvalidArgument("COPY delimiter character must not appear in the NULL specification");
  }
  if (format.null_string.find_first_of("\r\n") != std::string::npos) {
    return Status::InvalidArgument("COPY null representation cannot use newline or carriage return");
  }
  return format;
}

}  // namespace basin::sql
