// Avro values in Confluent's wire format (valueFormat => 'avro', schemaRegistryUrl => ...):
// a zero magic byte, the writer schema's id in the registry (4 bytes, big-endian), then the
// record in Avro's binary encoding. The writer schema is fetched once per id
// (stream/avro/schema_registry.h) and the record decoded with avro-c.
//
// A record's top-level fields fill the columns of their names (the exact name, else the
// first that matches ignoring case); a field the writer schema lacks, or a null, is NULL.
// Conversions are exact: booleans from boolean; integers from int and long in the column's
// range; floating point from int, long, float and double; decimals from Avro decimals
// (bytes or fixed) of no larger scale, and from int and long; strings from string and enum
// (any other value as avro-c's JSON text of it); binary from bytes and fixed; dates from int
// (logical type date) or an ISO-8601 string; timestamps from long with logical type
// timestamp-millis or timestamp-micros (local-timestamp-* for timestamp_ntz columns) or an
// ISO-8601 string. A union takes its branch's value.
//
// Thread safety: a parser is used by one thread at a time.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "stream/record_format.h"

namespace basin::stream {

class SchemaRegistry;

class AvroRecordParser final : public RecordParser {
 public:
  AvroRecordParser(RecordSchema schema, std::shared_ptr<SchemaRegistry> registry);
  ~AvroRecordParser() override;
  AvroRecordParser(const AvroRecordParser&) = delete;
  AvroRecordParser& operator=(const AvroRecordParser&) = delete;

  // InvalidArgument for a record that is not in the wire format, names a schema id the
  // registry does not have, does not decode, or does not fit; IOError (not the record's
  // fault) when the registry cannot be reached.
  using RecordParser::Parse;
  Status Parse(std::string_view bytes, CellSink& cells) override;

 private:
  struct Writer;
  Result<Writer*> WriterOf(int32_t id);

  std::shared_ptr<SchemaRegistry> registry_;
  std::map<int32_t, std::unique_ptr<Writer>> writers_;
  std::vector<Given> given_;
};

// The schema text (as the schema option takes it) that the writer schema of the first of
// `values` in the wire format gives: a column per top-level field, in order, BOOLEAN, INT,
// BIGINT, FLOAT, DOUBLE, DECIMAL(p,s), STRING (string, enum, and any other type, read as
// JSON text), BINARY, DATE, TIMESTAMP or TIMESTAMP_NTZ by its type and logical type, NOT
// NULL unless it is a union with null. InvalidArgument when no value is in the wire format or
// its schema is not a record; IOError when the registry cannot be reached.
Result<std::string> InferAvroSchema(const std::vector<std::string_view>& values, SchemaRegistry& registry);

}  // namespace basin::stream
