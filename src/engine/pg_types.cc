#include "engine/pg_types.h"

#include <charconv>
#include <optional>

namespace basin::engine {
namespace {

constexpr int32_t Id(PgOid oid) { return static_cast<int32_t>(oid); }

// PostgreSQL's own values for these types (its pg_type.dat).
constexpr PgTypeInfo kTypes[] = {
    {PgOid::kBool, "bool", "boolean", 1, 'B', 0, Id(PgOid::kBoolArray)},
    {PgOid::kBytea, "bytea", "bytea", -1, 'U', 0, 0},
    {PgOid::kInt8, "int8", "bigint", 8, 'N', 0, Id(PgOid::kInt8Array)},
    {PgOid::kInt2, "int2", "smallint", 2, 'N', 0, Id(PgOid::kInt2Array)},
    {PgOid::kInt4, "int4", "integer", 4, 'N', 0, Id(PgOid::kInt4Array)},
    {PgOid::kText, "text", "text", -1, 'S', 0, 0},
    {PgOid::kJson, "json", "json", -1, 'U', 0, 0},
    {PgOid::kFloat4, "float4", "real", 4, 'N', 0, Id(PgOid::kFloat4Array)},
    {PgOid::kFloat8, "float8", "double precision", 8, 'N', 0, Id(PgOid::kFloat8Array)},
    {PgOid::kUnknown, "unknown", "unknown", -2, 'X', 0, 0},
    {PgOid::kBoolArray, "_bool", "boolean[]", -1, 'A', Id(PgOid::kBool), 0},
    {PgOid::kInt2Array, "_int2", "smallint[]", -1, 'A', Id(PgOid::kInt2), 0},
    {PgOid::kInt4Array, "_int4", "integer[]", -1, 'A', Id(PgOid::kInt4), 0},
    {PgOid::kInt8Array, "_int8", "bigint[]", -1, 'A', Id(PgOid::kInt8), 0},
    {PgOid::kFloat4Array, "_float4", "real[]", -1, 'A', Id(PgOid::kFloat4), 0},
    {PgOid::kFloat8Array, "_float8", "double precision[]", -1, 'A', Id(PgOid::kFloat8), 0},
    {PgOid::kVarchar, "varchar", "character varying", -1, 'S', 0, 0},
    {PgOid::kDate, "date", "date", 4, 'D', 0, Id(PgOid::kDateArray)},
    {PgOid::kTime, "time", "time without time zone", 8, 'D', 0, 0},
    {PgOid::kTimestamp, "timestamp", "timestamp without time zone", 8, 'D', 0, Id(PgOid::kTimestampArray)},
    {PgOid::kTimestampArray, "_timestamp", "timestamp without time zone[]", -1, 'A', Id(PgOid::kTimestamp),
     0},
    {PgOid::kDateArray, "_date", "date[]", -1, 'A', Id(PgOid::kDate), 0},
    {PgOid::kTimestamptz, "timestamptz", "timestamp with time zone", 8, 'D', 0, Id(PgOid::kTimestamptzArray)},
    {PgOid::kTimestamptzArray, "_timestamptz", "timestamp with time zone[]", -1, 'A', Id(PgOid::kTimestamptz),
     0},
    {PgOid::kInterval, "interval", "interval", 16, 'T', 0, 0},
    {PgOid::kNumericArray, "_numeric", "numeric[]", -1, 'A', Id(PgOid::kNumeric), 0},
    {PgOid::kTimetz, "timetz", "time with time zone", 12, 'D', 0, 0},
    {PgOid::kNumeric, "numeric", "numeric", -1, 'N', 0, Id(PgOid::kNumericArray)},
    {PgOid::kUuid, "uuid", "uuid", 16, 'U', 0, 0},
};

// Which PostgreSQL type a scalar DuckDB type is sent as. Lists become the array type of it
// (typarray) when PostgreSQL's form of it is made, else text.
struct Scalar {
  std::string_view duckdb;
  PgOid oid;
};

constexpr Scalar kScalars[] = {
    {"BOOLEAN", PgOid::kBool},
    {"TINYINT", PgOid::kInt2},
    {"SMALLINT", PgOid::kInt2},
    {"UTINYINT", PgOid::kInt2},
    {"INTEGER", PgOid::kInt4},
    {"USMALLINT", PgOid::kInt4},
    {"BIGINT", PgOid::kInt8},
    {"UINTEGER", PgOid::kInt8},
    {"HUGEINT", PgOid::kNumeric},
    {"UBIGINT", PgOid::kNumeric},
    {"UHUGEINT", PgOid::kNumeric},
    {"FLOAT", PgOid::kFloat4},
    {"DOUBLE", PgOid::kFloat8},
    {"VARCHAR", PgOid::kText},
    {"BLOB", PgOid::kBytea},
    {"JSON", PgOid::kJson},
    {"DATE", PgOid::kDate},
    {"TIME", PgOid::kTime},
    {"TIME WITH TIME ZONE", PgOid::kTimetz},
    {"TIMESTAMP", PgOid::kTimestamp},
    {"TIMESTAMP_S", PgOid::kTimestamp},
    {"TIMESTAMP_MS", PgOid::kTimestamp},
    {"TIMESTAMP_NS", PgOid::kTimestamp},
    {"TIMESTAMP WITH TIME ZONE", PgOid::kTimestamptz},
    {"INTERVAL", PgOid::kInterval},
    {"UUID", PgOid::kUuid},
};

constexpr std::string_view kDecimal = "DECIMAL";
constexpr int32_t kVarHeaderSize = 4;  // PostgreSQL's VARHDRSZ, added to numeric's typmod

// DECIMAL(p,s)'s typmod; -1 when the name does not give both.
int32_t DecimalTypmod(std::string_view duckdb_type) {
  std::string_view rest = duckdb_type.substr(kDecimal.size());
  int32_t precision = 0, scale = 0;
  if (!rest.starts_with("(")) return -1;
  auto [after_precision, error] = std::from_chars(rest.data() + 1, rest.data() + rest.size(), precision);
  if (error != std::errc() || after_precision == rest.data() + rest.size() || *after_precision != ',')
    return -1;
  auto [end, scale_error] = std::from_chars(after_precision + 1, rest.data() + rest.size(), scale);
  if (scale_error != std::errc() || end == rest.data() + rest.size() || *end != ')') return -1;
  return ((precision << 16) | scale) + kVarHeaderSize;
}

std::optional<PgOid> ScalarOid(std::string_view duckdb_type) {
  if (duckdb_type.starts_with(kDecimal)) return PgOid::kNumeric;
  for (const Scalar& scalar : kScalars) {
    if (scalar.duckdb == duckdb_type) return scalar.oid;
  }
  return std::nullopt;
}

}  // namespace

std::span<const PgTypeInfo> PgTypes() { return kTypes; }

const PgTypeInfo* FindPgType(int64_t oid) {
  for (const PgTypeInfo& type : kTypes) {
    if (Id(type.oid) == oid) return &type;
  }
  return nullptr;
}

PgColumnType PgColumnTypeOf(std::string_view duckdb_type) {
  if (duckdb_type.ends_with("[]")) {
    std::string_view element = duckdb_type.substr(0, duckdb_type.size() - 2);
    while (element.ends_with("[]")) element.remove_suffix(2);
    std::optional<PgOid> scalar = ScalarOid(element);
    const PgTypeInfo* type = scalar ? FindPgType(Id(*scalar)) : nullptr;
    if (type == nullptr || type->array == 0) return PgColumnType{};
    return PgColumnType{static_cast<PgOid>(type->array), -1};
  }
  std::optional<PgOid> scalar = ScalarOid(duckdb_type);
  if (!scalar) return PgColumnType{};
  const int32_t typmod =
      *scalar == PgOid::kNumeric && duckdb_type.starts_with(kDecimal) ? DecimalTypmod(duckdb_type) : -1;
  return PgColumnType{*scalar, typmod};
}

std::string FormatPgType(int64_t oid, int32_t typmod) {
  const PgTypeInfo* type = FindPgType(oid);
  if (type == nullptr) return "???";
  std::string name(type->sql_name);
  if (type->oid == PgOid::kNumeric && typmod >= kVarHeaderSize) {
    const int32_t packed = typmod - kVarHeaderSize;
    name += "(" + std::to_string(packed >> 16) + "," + std::to_string(packed & 0xffff) + ")";
  }
  return name;
}

}  // namespace basin::engine
