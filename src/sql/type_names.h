// Column types as CREATE TABLE and ALTER TABLE ADD COLUMNS spell them, in Spark's or
// DuckDB's words (INT, BIGINT, STRING, VARCHAR, DECIMAL(p,s), TIMESTAMP, TIMESTAMP_NTZ,
// ARRAY<T>, STRUCT<a: T>, MAP<K, V>, STRUCT(a T), MAP(K, V), T[]), parsed into Delta types.
// TIMESTAMP is Delta's `timestamp` (an instant, as in Spark); TIMESTAMP_NTZ and DuckDB's
// TIMESTAMP WITHOUT TIME ZONE / DATETIME are `timestamp_ntz`.
//
// Thread safety: functions of their arguments.
#pragma once

#include "basin/status.h"
#include "delta/schema.h"
#include "sql/grammar/token_stream.h"

namespace basin::sql {

// Reads one type at the stream's position. A syntax error ("expected a column type"), or
// InvalidArgument naming an unknown or malformed type, otherwise.
Result<delta::DataTypePtr> ParseColumnType(grammar::TokenStream& tokens);

enum class TypeSpelling {
  // As users write it in Spark SQL: "bigint", "decimal(10,2)", "array<string>",
  // "struct<a:int,b:string>", "map<string,int>", "timestamp_ntz" (DESCRIBE shows this).
  kSql,
  // As the Delta protocol names it: "long", "struct<a: integer, b: string>",
  // "map<string, integer>" (`basin describe` and the public Snapshot show this).
  kDelta,
};
std::string DeltaTypeName(const delta::DataType& type, TypeSpelling spelling = TypeSpelling::kSql);

}  // namespace basin::sql
