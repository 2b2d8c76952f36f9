// How `basin` prints query results and errors.
//
//   table  an aligned ASCII box with a header and a "(N rows)" footer; NULL shows as NULL
//   csv    a header line, then one line per row; RFC 4180 quoting; NULL is an empty field,
//          an empty string is ""
//   json   one JSON array of objects per result, on one line; numbers and booleans are
//          JSON numbers and booleans, NULL is null, everything else (including nested
//          values, in DuckDB's text form) is a string
//
// Thread safety: free functions over caller-owned values.
#pragma once

#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "basin/session.h"
#include "basin/status.h"

namespace basin::cli {

enum class OutputFormat { kTable, kCsv, kJson };

// InvalidArgument naming the accepted values for anything but "table", "csv", "json".
Result<OutputFormat> ParseOutputFormat(std::string_view name);
std::string_view OutputFormatName(OutputFormat format);

// Writes one result as its rows arrive, in chunks: CSV and JSON rows go out as they come,
// so memory stays bounded however large the result; a table is aligned over the rows it
// holds, so it keeps up to kMaxTableRows of them and says how many more there were.
class ResultWriter {
 public:
  static std::unique_ptr<ResultWriter> For(OutputFormat format, std::ostream& out);
  virtual ~ResultWriter() = default;
  virtual void Begin(const std::vector<std::string>& names, const std::vector<std::string>& types) = 0;
  virtual void Rows(const std::vector<std::vector<std::optional<std::string>>>& rows) = 0;
  virtual void End() = 0;
};
inline constexpr size_t kMaxTableRows = 10000;

// A materialized result through ResultWriter::For(format).
void WriteResult(const QueryResult& result, OutputFormat format, std::ostream& out);
// Every row of `stream`, written as it is read. Errors are the stream's.
Status WriteStream(RowStream& stream, OutputFormat format, std::ostream& out);

// `footer`: the "(N rows)" line; `hidden_rows`: rows left out, said in the footer.
void WriteTable(const QueryResult& result, std::ostream& out, bool footer = true, size_t hidden_rows = 0);

// "Error: <code name>: <message>" on one line.
void WriteError(const Status& status, std::ostream& err);
// A command's exit status: 0 for OK; otherwise 1, after writing the error to stderr.
int ExitStatus(const Status& status);

// `text` as a JSON string literal, quotes included (invalid UTF-8 replaced).
std::string JsonString(const std::string& text);

// True for DuckDB numeric type names (integers, floating point, DECIMAL(p,s)).
bool IsNumericType(std::string_view duckdb_type);

}  // namespace basin::cli
