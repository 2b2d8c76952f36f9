// How Basin's result columns look to a PostgreSQL client: each DuckDB type's type OID and
// size, and its values in PostgreSQL's text format, converted from DuckDB's rendering
// (basin::RowStream cells), which differs for booleans, bytea, floats' infinities and
// intervals. A type PostgreSQL has no counterpart for (STRUCT, MAP, UNION, lists of text)
// is sent as text in DuckDB's rendering.
//
// Thread safety: functions without state.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "basin/status.h"
#include "engine/pg_types.h"

namespace basin::server::pg {

// PostgreSQL's type OIDs (pg_type.oid) that Basin sends or accepts: the pg_catalog views
// show the same (engine/pg_types.h).
using Oid = engine::PgOid;

struct PgType {
  Oid oid = Oid::kText;
  int16_t size = -1;  // pg_type.typlen: bytes, -1 for variable length
  // How a value of the DuckDB type is converted to the PostgreSQL text form.
  enum class Text { kAsIs, kBool, kBytea, kFloat, kInterval, kArray } text = Text::kAsIs;
};

// The PostgreSQL type a DuckDB type name ("BIGINT", "DECIMAL(12,2)", "INTEGER[]") is sent as.
PgType PgTypeOf(std::string_view duckdb_type);

// `cell`, as DuckDB renders a value of a column sent as `type`, in PostgreSQL's text format.
std::string ToPgText(const PgType& type, std::string cell);

// The binary format (format code 1) of a value given in text format, for the types whose
// binary form Basin sends (integers, floats, bool, text, bytea given as text, and those of
// binary_types.h: date, time, timestamp, timestamptz, interval, numeric, uuid, and
// one-dimensional arrays of those with an array type); NotImplemented
// for the others, so that a client asking for them learns which column.
Result<std::string> ToPgBinary(const PgType& type, const std::string& text);

// The name PostgreSQL gives `oid` (for errors and catalog answers).
std::string_view PgTypeName(Oid oid);

// A parameter value sent by a client (text, or binary for `oid`) as a SQL literal DuckDB
// reads as that type: a CAST for typed ones; for an untyped one (oid 0), a CAST to
// `inferred` (a DuckDB type name, Session::Describe), or a quoted string without it.
Result<std::string> ParameterLiteral(int32_t oid, const std::optional<std::string>& value, bool binary,
                                     const std::string& inferred = "");

}  // namespace basin::server::pg
