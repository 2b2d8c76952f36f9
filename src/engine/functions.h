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
// window(event_time, size) -> STRUCT(start, "end"): Spark's tumbling window, a macro of each
// connection (CreateBasinMacros): the
// `size`-long window (an interval as text, '1 minute') holding `event_time`, aligned to the
// Unix epoch, as `GROUP BY window(ts, '1 minute')` uses it (the grammar quotes the name, a
// keyword DuckDB reserves). Streams keep such windows' rows until their watermark closes
// them (stream/stateful.h). The hopping form, window(event_time, size, slide), is computed
// by such streams only (a batch query gets an error saying so).
//
// DuckDB keeps functions in the database's catalog, shared by all its connections:
// Database::Open registers them once, and every connection of that database can call them.
#pragma once

#include "basin/status.h"

// DuckDB's vector handle (duckdb.h).
struct _duckdb_vector;                                 // NOLINT(bugprone-reserved-identifier)
typedef struct _duckdb_vector* duckdb_vector;          // NOLINT
struct _duckdb_connection;                             // NOLINT(bugprone-reserved-identifier)
typedef struct _duckdb_connection* duckdb_connection;  // NOLINT

namespace basin::engine {

inline constexpr char kVariantToJsonFunction[] = "basin_variant_to_json";

// Makes Basin's functions (basin_variant_to_json, basin_refuse of engine/refused_rows.h)
// callable on every connection of `conn`'s database. Internal when
// DuckDB refuses the registration (as it does when they are registered already).
Status RegisterBasinFunctions(duckdb_connection conn);

// Makes Basin's macros (window) callable on `conn`. Macros are created in the connection's
// temporary schema, which every name lookup searches, whatever catalog the connection uses.
Status CreateBasinMacros(duckdb_connection conn);

// basin_variant_to_json over the first `rows` rows of `group` (a flat STRUCT vector of
// Variant groups), into `output` (VARCHAR). Corruption or InvalidArgument naming the defect.
Status VariantVectorToJson(duckdb_vector group, uint64_t rows, duckdb_vector output);

}  // namespace basin::engine
