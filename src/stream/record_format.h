// Records a stream source parses: a value format (`valueFormat => 'json'` or 'csv'), a declared
// schema (`schema => 'id BIGINT NOT NULL, amount DECIMAL(12,2), ts TIMESTAMP'`, columns as
// CREATE TABLE spells them) and the parser of one record's bytes into a row of typed cells.
// A record that does not parse or does not fit the schema is refused with the reason, so
// that the stream can send it to a dead-letter table (stream/dead_letters.h).
//
// JSON: one object per record. A field fills the column of its name (the exact name, else
// the first that matches ignoring case); fields of no column are ignored; a missing field
// or a JSON null is NULL, refused for a NOT NULL column. Conversions are exact, never
// silent: integers from integral JSON numbers in the column's range, floating point from
// any number, decimals from numbers or numeric strings with no more digits than the type
// holds, booleans from true/false, dates and timestamps from ISO-8601 strings
// (delta/temporal.h; a timestamp without an offset is UTC), strings from strings (any
// other JSON value as its JSON text), binary from strings. Struct, array and map columns
// are not supported yet (the schema is refused, naming the column).
//
// CSV: one line per record (a trailing newline is dropped), fields separated by commas,
// a field in double quotes may hold commas, newlines and "" for a quote. The fields fill the
// columns in order, exactly as many as the schema has; an empty unquoted field is NULL; each
// field converts from its text as a JSON string field would (integers and floating point from
// their decimal text, booleans from true/false in any case).
//
// Thread safety: ParseRecordSchema is a function; a JsonRecordParser is used by one thread
// at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "basin/status.h"

namespace basin::stream {

enum class ValueFormat {
  kRaw,   // the record's bytes as they are (read_kafka's key, value, topic, ... columns)
  kJson,  // one JSON object per record, into the schema's columns
  kCsv,   // one CSV line per record, into the schema's columns in order
  kAvro,  // Avro in Confluent's wire format, by field name (stream/avro/avro_record.h)
};

// "raw", "json", "csv" or "avro" (any case). InvalidArgument naming the value otherwise.
Result<ValueFormat> ParseValueFormat(std::string_view name);

struct RecordColumn {
  enum class Kind {
    kBoolean,
    kInt8,
    kInt16,
    kInt32,
    kInt64,
    kFloat,
    kDouble,
    kDecimal,
    kString,
    kBinary,
    kDate,
    kTimestamp,
    kTimestampNtz
  };
  std::string name;
  Kind kind = Kind::kString;
  int precision = 0, scale = 0;  // kDecimal
  bool nullable = true;
  std::string type_name;  // as messages show it: "bigint", "decimal(12,2)"
};
using RecordSchema = std::vector<RecordColumn>;

// A schema option's text. InvalidArgument for a syntax error (line and column), a repeated
// column name, or a type records cannot have yet (struct, array, map, variant, void).
Result<RecordSchema> ParseRecordSchema(std::string_view text);

// One cell of a parsed row: NULL, or by the column's kind: bool (kBoolean); int64_t
// (integers, kDate as days since 1970-01-01, timestamps as microseconds since the epoch);
// double (kFloat, kDouble); __int128 (kDecimal, unscaled at the column's scale); std::string
// (kString, kBinary).
using RecordCell = std::variant<std::monostate, bool, int64_t, double, __int128, std::string>;

// Where a record parser puts a record's values: column `c` of the schema, each as a
// RecordCell holds it (Set(c, value) with a value of the column's kind). A record the
// parser accepts has every column set (NULL when it lacks one); one it refuses leaves what
// it set unspecified. CellRow keeps them as RecordCells, RecordChunkRows (record_columns.h)
// writes them into a DuckDB chunk's row.
class CellSink {
 public:
  virtual ~CellSink() = default;
  virtual void SetNull(size_t c) = 0;
  virtual void SetBool(size_t c, bool value) = 0;
  virtual void SetInt(size_t c, int64_t value) = 0;
  virtual void SetDouble(size_t c, double value) = 0;
  virtual void SetDecimal(size_t c, __int128 unscaled) = 0;
  // Copies `text`.
  virtual void SetText(size_t c, std::string_view text) = 0;
  // Sets column `c` to `cell`.
  void SetCell(size_t c, const RecordCell& cell);
};

// A record's cells, one per column (`cells` is resized to the schema's width by the parser,
// and a string cell reuses its string record after record).
class CellRow final : public CellSink {
 public:
  explicit CellRow(std::vector<RecordCell>* cells) : cells_(cells) {}
  void SetNull(size_t c) override { (*cells_)[c] = RecordCell(); }
  void SetBool(size_t c, bool value) override { (*cells_)[c] = value; }
  void SetInt(size_t c, int64_t value) override { (*cells_)[c] = value; }
  void SetDouble(size_t c, double value) override { (*cells_)[c] = value; }
  void SetDecimal(size_t c, __int128 unscaled) override { (*cells_)[c] = unscaled; }
  void SetText(size_t c, std::string_view text) override;

 private:
  std::vector<RecordCell>* cells_;
};

// The record options every source takes (docs/streams.md "Record formats and dead letters").
struct RecordOptions {
  ValueFormat format = ValueFormat::kRaw;
  RecordSchema schema;  // kJson, kCsv; empty without one (InferRecordSchema)
  // The warehouse table records that do not parse go to, as written ("ops.payments_dlq");
  // empty: none, such a record fails the batch.
  std::string dead_letter_table;
  // Fail a batch instead when more than this share of its records are dead letters.
  std::optional<double> max_dead_letter_fraction;
  // kAvro: the schema registry the writer schemas are read from.
  std::string schema_registry_url;

  // Parsed records without a schema option: the columns come from a sample of them.
  bool InfersSchema() const { return format != ValueFormat::kRaw && schema.empty(); }
};

// Whether `name` (any case) is one of RecordOptions': valueFormat, schema, deadLetterTable,
// maxDeadLetterFraction, schemaRegistryUrl.
bool IsRecordOption(std::string_view name);

// The record options among `given` ((name, value) pairs, names IsRecordOption's).
// InvalidArgument naming the option: an unknown format, a schema that does not parse, a
// schema without json or csv, a dead-letter table for raw records (which
// cannot fail to parse), a dead-letter table name that is not one, a fraction outside
// [0, 1] or without a dead-letter table.
Result<RecordOptions> ParseRecordOptions(const std::vector<std::pair<std::string, std::string>>& given);

// The schema text ("id BIGINT, name VARCHAR, ...", as the schema option takes it) of JSON
// object records `values`: each top-level field (but one named "" or holding a NUL; names
// differing in case only are one) in the order first seen, BOOLEAN, BIGINT,
// DOUBLE (integers and fractions mixed) or VARCHAR (strings, nested values, anything
// mixed, and fields only ever null). Values that are not JSON objects are passed over (they
// are dead letters later). InvalidArgument when none is one.
Result<std::string> InferJsonSchema(const std::vector<std::string_view>& values);

// The schema text of CSV records `values` (one line each, no header): columns _c0, _c1, ...
// as many as the first record that is CSV has fields, each BOOLEAN (true/false in any
// case), BIGINT, DOUBLE (integers and fractions mixed) or VARCHAR (anything else, anything
// mixed, and columns only ever empty). Records that are not CSV or have another field count
// are passed over (they are dead letters later). InvalidArgument when none is CSV.
Result<std::string> InferCsvSchema(const std::vector<std::string_view>& values);

// InferCsvSchema for kCsv, InferJsonSchema for kJson, InferAvroSchema (with the options'
// registry) for kAvro.
Result<std::string> InferRecordSchema(const RecordOptions& options,
                                      const std::vector<std::string_view>& values);

// Whether `n` is in the range of an integer column of `kind` (kInt8 ... kInt64).
bool IntegerFits(RecordColumn::Kind kind, int64_t n);

// The parser of one value format (json, csv or avro) into a schema's cells.
class RecordParser {
 public:
  virtual ~RecordParser() = default;

  const RecordSchema& schema() const { return schema_; }

  // Parses one record into `cells` (every column set). InvalidArgument with the reason when
  // it does not parse or fit ("not valid JSON", "column amount: \"abc\" is not a
  // decimal(12,2)", "column id is NOT NULL but the record has none"); the cells are then
  // unspecified.
  virtual Status Parse(std::string_view bytes, CellSink& cells) = 0;
  // Parse into RecordCells, one per column (`cells` resized).
  Status Parse(std::string_view bytes, std::vector<RecordCell>* cells);

 protected:
  explicit RecordParser(RecordSchema schema) : schema_(std::move(schema)) {}

  // What a record gave a column: the parsers keep one per column for CheckNotNull.
  enum Given : uint8_t { kAbsent, kNull, kValue };
  // InvalidArgument naming the first NOT NULL column `given` does not hold a value for,
  // else OK.
  Status CheckNotNull(const std::vector<Given>& given) const;

 private:
  RecordSchema schema_;
};

// The parser of `options.format`. REQUIRES: the format is json, csv or avro (with the URL
// ParseRecordOptions checked).
std::unique_ptr<RecordParser> MakeRecordParser(const RecordOptions& options);

class JsonRecordParser final : public RecordParser {
 public:
  explicit JsonRecordParser(RecordSchema schema);
  ~JsonRecordParser() override;
  JsonRecordParser(const JsonRecordParser&) = delete;
  JsonRecordParser& operator=(const JsonRecordParser&) = delete;

  using RecordParser::Parse;
  Status Parse(std::string_view bytes, CellSink& cells) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class CsvRecordParser final : public RecordParser {
 public:
  explicit CsvRecordParser(RecordSchema schema) : RecordParser(std::move(schema)) {}

  using RecordParser::Parse;
  Status Parse(std::string_view bytes, CellSink& cells) override;

 private:
  std::vector<std::string> fields_;
  std::vector<bool> quoted_;
  std::vector<Given> given_;
};

}  // namespace basin::stream
