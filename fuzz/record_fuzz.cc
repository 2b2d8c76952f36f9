// Feeds arbitrary bytes to the stream record parsers (stream/record_format.h): as a Kafka
// value to the JSON parser (or, after a first ',', the CSV parser) of a schema with every
// supported type, (after a first '!') as an Avro record in Confluent's wire format whose writer
// schema (a field of every Avro type a column reads) an in-process schema registry serves,
// (after a first '#') as a schema option's text, and (after a first '?') as records, one a
// line, to infer a schema from. Any outcome but a crash, a sanitizer report,
// an accepted record whose cells break the schema (a NULL in a NOT NULL column, a cell of
// another kind, a decimal beyond its precision), an inferred schema that does not parse, or
// a CSV record of the inferred field count that the inferred schema does not read is fine.
#include <httplib.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <thread>
#include <variant>
#include <vector>

#include "delta/decimal_text.h"
#include "stream/avro/avro_record.h"
#include "stream/avro/schema_registry.h"
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

// The Avro parser of the record schema Parser's have, over a registry on loopback that
// serves one writer schema, id 1, with a field for each column.
basin::stream::RecordParser& AvroParser() {
  static basin::stream::RecordParser* parser = [] {
    static httplib::Server server;
    server.Get("/schemas/ids/1", [](const httplib::Request&, httplib::Response& response) {
      response.set_content(
          R"({"schema": "{\"type\": \"record\", \"name\": \"r\", \"fields\": [)"
          R"({\"name\": \"id\", \"type\": \"long\"}, {\"name\": \"t\", \"type\": \"int\"}, )"
          R"({\"name\": \"s\", \"type\": [\"null\", \"int\"]}, {\"name\": \"i\", \"type\": \"long\"}, )"
          R"({\"name\": \"f\", \"type\": \"float\"}, {\"name\": \"d\", \"type\": \"double\"}, )"
          R"({\"name\": \"m\", \"type\": {\"type\": \"bytes\", \"logicalType\": \"decimal\", \"precision\": 5, \"scale\": 2}}, )"
          R"({\"name\": \"h\", \"type\": {\"type\": \"fixed\", \"name\": \"h16\", \"size\": 16, \"logicalType\": \"decimal\", \"precision\": 38, \"scale\": 10}}, )"
          R"({\"name\": \"b\", \"type\": \"boolean\"}, {\"name\": \"name\", \"type\": {\"type\": \"enum\", \"name\": \"e\", \"symbols\": [\"A\", \"B\"]}}, )"
          R"({\"name\": \"raw\", \"type\": \"bytes\"}, {\"name\": \"day\", \"type\": {\"type\": \"int\", \"logicalType\": \"date\"}}, )"
          R"({\"name\": \"ts\", \"type\": {\"type\": \"long\", \"logicalType\": \"timestamp-millis\"}}, )"
          R"({\"name\": \"local\", \"type\": [\"string\", {\"type\": \"array\", \"items\": \"long\"}]}]}"})",
          "application/json");
    });
    const int port = server.bind_to_any_port("127.0.0.1");
    std::thread([] { server.listen_after_bind(); }).detach();  // serves until the process ends
    while (!server.is_running()) std::this_thread::yield();
    auto registry = basin::stream::SchemaRegistry::At("http://127.0.0.1:" + std::to_string(port)).value();
    return new basin::stream::AvroRecordParser(Parser(basin::stream::ValueFormat::kJson).schema(), registry);
  }();
  return *parser;
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
  const bool avro = size > 0 && data[0] == '!';
  basin::stream::RecordParser& parser =
      avro ? AvroParser()
           : Parser(csv ? basin::stream::ValueFormat::kCsv : basin::stream::ValueFormat::kJson);
  std::vector<RecordCell> cells;
  const std::string framed =
      avro ? std::string("\0\0\0\0\1", 5) + std::string(bytes.substr(1)) : std::string();
  if (!parser.Parse(avro ? std::string_view(framed) : csv ? bytes.substr(1) : bytes, &cells).ok()) return 0;
  const auto& schema = parser.schema();
  if (cells.size() != schema.size()) __builtin_trap();
  for (size_t c = 0; c < schema.size(); c++) {
    if (!Fits(schema[c], cells[c])) __builtin_trap();
  }
  return 0;
}
