// Columns holding Delta `variant` values, at any depth (a variant, an array of them, a
// struct or map with variant fields): files store each variant as a Parquet group
// STRUCT(metadata BLOB, value BLOB[, typed_value ...]), and Basin presents it as JSON text
// (engine/functions.h). The scan reads such a column as the file stores it and converts it
// with DecodeVariants.
//
// Thread safety: functions of their arguments; the expression they build is immutable.
#pragma once

#include "delta/schema.h"
#include "duckdb.hpp"
#include "duckdb/planner/expression.hpp"

namespace basin::engine::duckdb_ext {

// Whether `type` is, or holds somewhere, a variant.
bool ContainsVariant(const delta::DataType& type);

// `stored` (the column as a file stores it) converted to the type Basin reads `type` as:
// variant groups become their JSON text, struct fields are matched by name, fields the
// file lacks are NULL, and other values are cast to their logical types.
duckdb::unique_ptr<duckdb::Expression> DecodeVariants(duckdb::unique_ptr<duckdb::Expression> stored,
                                                      delta::DataTypePtr type, bool column_mapping);

}  // namespace basin::engine::duckdb_ext
