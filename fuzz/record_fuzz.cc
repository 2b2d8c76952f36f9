// Feeds arbitrary bytes to the stream record parsers (stream/record_format.h): as a Kafka
// value to the JSON parser (or, after a first ',', the CSV parser) of a schema with every
// supported type, (after a first '#') as a schema option's text, and (after a first '?') as
// records, one a line, to infer a schema from. Any outcome but a crash, a sanitizer report,
// an accepted record whose cells break the schema (a NULL in a NOT NULL column, a cell of
// another kind, a decimal beyond its precision), an inferred schema that does not parse, or
// a CSV record of the inferred field count that the inferred schema does not read is fine.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "delta/decimal_text.h"
#include "stream/record_format.h"

namespace {

using basin::stream::RecordCell;
using Kind = basin::stream::RecordColumn::Kind;

basin::stream::RecordParser& Parser(basin::stream::ValueFormat format) {
  auto make = [](basin::stream::ValueFormat f) {
    basin::stream::RecordOptions options;
    options.format = f;
    options.schema =
        basin::stream::ParseRecordSchema(
            "id BIGINT NOT NULL, t TINYINT, s SMALLINT, i INT, f FLOAT, d DOUBLE, m DECIMAL(5,2), "
            "h DECIMAL(38,10), b BOOLEAN, name STRING, raw BINARY, day DATE, ts TIMESTAMP, "
            "local TIMESTAMP_NTZ")
            .value();
    return basin::stream::MakeRecordParser(options).release();
  };
  static auto* json = make(basin::stream::ValueFormat::kJson);
  static auto* csv = make(basin::stream::ValueFormat::kCsv);
  return format == basin::stream::ValueFormat::kCsv ? *csv : *json;
}

bool Fits(const basin::stream::RecordColumn& column, const RecordCell& cell) {
  if (std::holds_alternative<std::monostate>(cell)) return column.nullable;
  switch (column.kind) {
    case Kind::kBoolean:
      return std::holds_alternative<bool>(cell);
    case Kind::kFloat:
    case Kind::kDouble:
      return std::holds_alternative<double>(cell);
    case Kind::kDecimal: {
      if (!std::holds_alternative<__int128>(cell)) return false;
      const __int128 v = std::get<__int128>(cell), limit = basin::delta::PowerOfTen(column.precision);
      return v < limit && v > -limit;
    }
    case Kind::kString:
    case Kind::kBinary:
      return std::holds_alternative<std::string>(cell);
    default:
      return std::holds_alternative<int64_t>(cell);
  }
}

// Infers a schema of each format from `text`'s lines; both must parse, and the CSV one must
// read every line it was inferred from that is CSV of its field count.
void CheckInference(std::string_view text) {
  std::vector<std::string_view> lines;
  for (size_t start = 0; start <= text.size();) {
    const size_t end = std::min(text.find('\n', start), text.size());
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  if (auto json = basin::stream::InferJsonSchema(lines); json.ok()) {
    if (!basin::stream::ParseRecordSchema(*json).ok()) __builtin_trap();
  }
  auto csv = basin::stream::InferCsvSchema(lines);
  if (!csv.ok()) return;
  auto schema = basin::stream::ParseRecordSchema(*csv);
  if (!schema.ok()) __builtin_trap();
  basin::stream::CsvRecordParser parser(*schema);
  std::vector<RecordCell> cells;
  for (std::string_view line : lines) {
    basin::Status parsed = parser.Parse(line, &cells);
    if (!parsed.ok() && parsed.message().find("fields, the schema") == std::string::npos &&
        parsed.message().find("not valid") == std::string::npos) {
      __builtin_trap();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  if (size > 0 && data[0] == '#') {
    (void)basin::stream::ParseRecordSchema(bytes.substr(1));
    return 0;
  }
  if (size > 0 && data[0] == '?') {
    CheckInference(bytes.substr(1));
    return 0;
  }
  const bool csv = size > 0 && data[0] == ',';
  basin::stream::RecordParser& parser =
      Parser(csv ? basin::stream::ValueFormat::kCsv : basin::stream::ValueFormat::kJson);
  std::vector<RecordCell> cells;
  if (!parser.Parse(csv ? bytes.substr(1) : bytes, &cells).ok()) return 0;
  const auto& schema = parser.schema();
  if (cells.size() != schema.size()) __builtin_trap();
  for (size_t c = 0; c < schema.size(); c++) {
    if (!Fits(schema[c], cells[c])) __builtin_trap();
  }
  return 0;
}
