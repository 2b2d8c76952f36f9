// PostgreSQL's types as Basin shows DuckDB's types to PostgreSQL clients: the OIDs, names
// and sizes of pg_type, which DuckDB type a column of each is sent as, and format_type's
// spelling. The server's RowDescription (server/pg/types.h) and the pg_catalog views
// (engine/pg_catalog.h) both read them here, so a client that matches a result column's
// type OID against pg_attribute.atttypid or pg_type finds the same type.
//
// Thread safety: functions without state.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace basin::engine {

// PostgreSQL's type OIDs (pg_type.oid) that Basin sends or accepts.
enum class PgOid : int32_t {
  kBool = 16,
  kBytea = 17,
  kInt8 = 20,
  kInt2 = 21,
  kInt4 = 23,
  kText = 25,
  kJson = 114,
  kFloat4 = 700,
  kFloat8 = 701,
  kUnknown = 705,
  kBoolArray = 1000,
  kInt2Array = 1005,
  kInt4Array = 1007,
  kInt8Array = 1016,
  kFloat4Array = 1021,
  kFloat8Array = 1022,
  kVarchar = 1043,
  kDate = 1082,
  kTime = 1083,
  kTimestamp = 1114,
  kTimestampArray = 1115,
  kDateArray = 1182,
  kTimestamptz = 1184,
  kTimestamptzArray = 1185,
  kInterval = 1186,
  kNumericArray = 1231,
  kTimetz = 1266,
  kNumeric = 1700,
  kUuid = 2950,
};

// One row of pg_type.
struct PgTypeInfo {
  PgOid oid;
  std::string_view name;      // typname: "int8", "_int8"
  std::string_view sql_name;  // what format_type writes: "bigint", "bigint[]"
  int16_t length;             // typlen: bytes, -1 for variable length, -2 for C strings
  char category;              // typcategory: 'N' numeric, 'S' string, 'A' array...
  int32_t element;            // typelem: the element type of an array type, else 0
  int32_t array;              // typarray: the array type of this type, else 0
};

// Every type of PgOid, in OID order.
std::span<const PgTypeInfo> PgTypes();

// The type of `oid`, or nullptr when it is not one of PgTypes().
const PgTypeInfo* FindPgType(int64_t oid);

// A DuckDB column's type as a PostgreSQL client sees it: pg_attribute.atttypid and
// atttypmod.
struct PgColumnType {
  PgOid oid = PgOid::kText;
  int32_t typmod = -1;  // numeric(p, s): ((p << 16) | s) + 4, as PostgreSQL keeps it
};

// The PostgreSQL type of a DuckDB type name ("BIGINT", "DECIMAL(12,2)", "INTEGER[]"). Lists
// of a type with a PostgreSQL array form are that array; other lists, and types PostgreSQL
// has no counterpart for (STRUCT, MAP, UNION), are text.
PgColumnType PgColumnTypeOf(std::string_view duckdb_type);

// PostgreSQL's format_type(oid, typmod): "bigint", "numeric(12,2)", "timestamp without time
// zone"; "???" for an OID that is not one of PgTypes(), as PostgreSQL writes it.
std::string FormatPgType(int64_t oid, int32_t typmod);

}  // namespace basin::engine
