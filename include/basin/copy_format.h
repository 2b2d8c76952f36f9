// How COPY ... TO STDOUT writes its rows, from PostgreSQL's COPY options (FORMAT, HEADER,
// DELIMITER, NULL, QUOTE, ESCAPE), for a session's caller that sends them on
// (SessionOptions::copy_to_caller, StatementResult::copy_out). docs/server.md describes the
// formats.
//
// Thread safety: a value.
#pragma once

#include <string>

namespace basin {

struct CopyFormat {
  enum class Kind { kText, kCsv };
  Kind kind = Kind::kText;
  bool header = false;              // a first line of column names
  char delimiter = '\t';            // ',' for CSV
  std::string null_string = "\\N";  // "" for CSV
  char quote = '"';                 // CSV only
  char escape = '"';                // CSV only: what precedes a quote inside a quoted value
};

}  // namespace basin
