// Basin's own SQL functions inside DuckDB, registered through the C API.
//
// basin_variant_to_json(group) -> VARCHAR: the JSON text (engine/variant.h) of a Parquet
// Variant group as DuckDB reads it when the file does not mark it VARIANT (Spark's files):
// STRUCT(metadata BLOB, value BLOB[, typed_value ...]), fields found by name. Shredded
// typed_value columns (VariantShredding.md: a primitive, a struct of {value, typed_value}
// field groups, or a list of {value, typed_value} elements, nested) are merged back with
// value. A NULL group gives NULL; a group with neither value nor typed_value gives JSON
// null. Malformed data, or value and typed_value that conflict, fails the query with a
// message naming the defect.
//
// Thread safety: DuckDB keeps functions in the database's catalog, shared by all its
// connections; RegisterBasinFunctions may be called for every connection, concurrently.
#pragma once

#include "basin/status.h"
#include "engine/duckdb.h"

// DuckDB's vector handle (duckdb.h).
struct _duckdb_vector;  // NOLINT(bugprone-reserved-identifier)
typedef struct _duckdb_vector* duckdb_vector;  // NOLINT

namespace basin::engine {

inline constexpr char kVariantToJsonFunction[] = "basin_variant_to_json";

// Makes Basin's functions callable on `conn` (and every connection of its database).
// Internal when DuckDB refuses the registration.
Status RegisterBasinFunctions(Connection& conn);

// basin_variant_to_json over the first `rows` rows of `group` (a flat STRUCT vector of
// Variant groups), into `output` (VARCHAR). Corruption or InvalidArgument naming the defect.
Status VariantVectorToJson(duckdb_vector group, uint64_t rows, duckdb_vector output);

}  // namespace basin::engine
