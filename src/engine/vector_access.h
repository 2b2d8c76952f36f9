// Reading DuckDB result and argument vectors through the C API: RAII for logical types and
// typed access to a row's cell. For src/engine and the layers above it that read or write
// DuckDB vectors (table functions).
//
// Thread safety: functions of their arguments; a vector is read by one thread at a time.
#pragma once

#include <duckdb.h>

#include <cstring>
#include <string>
#include <string_view>

#include "basin/status.h"
#include "engine/duckdb.h"

namespace basin::engine {

// The cell at `row` of a flat vector, as QueryResult and QueryValues render it.
Result<Value> CellAt(duckdb_vector vector, idx_t row);
// DuckDB's name of a type: "BIGINT", "DECIMAL(10,2)", "STRUCT(a INTEGER)".
std::string DuckDbTypeName(duckdb_logical_type type);
// A DuckDB error as Basin's Status (a Basin error carried through DuckDB keeps its code).
Status StatusFromDuckDbError(const char* error, duckdb_error_type type);

// Owns a duckdb_logical_type for one scope.
struct LogicalTypeGuard {
  duckdb_logical_type type;
  ~LogicalTypeGuard() { duckdb_destroy_logical_type(&type); }
};

// Owns a duckdb_value (nullptr: none) for one scope.
struct ValueGuard {
  duckdb_value value;
  ~ValueGuard() {
    if (value != nullptr) duckdb_destroy_value(&value);
  }
};

// Cells from a vector's data and validity pointers (duckdb_vector_get_data, _validity),
// for readers that look those up once per chunk rather than once per cell.
inline bool ValidIn(const uint64_t* validity, idx_t row) {
  return validity == nullptr || ((validity[row / 64] >> (row % 64)) & 1) != 0;
}

// The fixed-width cell at `row`, copied out (vector data need not be aligned for T).
template <typename T>
T CellIn(const void* data, idx_t row) {
  T out;
  std::memcpy(&out, static_cast<const char*>(data) + row * sizeof(T), sizeof(T));
  return out;
}

// A VARCHAR or BLOB cell. Views the vector's own memory: a string of up to 12 bytes is
// stored inside its duckdb_string_t, a longer one behind its pointer.
inline std::string_view BytesIn(const void* data, idx_t row) {
  const auto* s = static_cast<const duckdb_string_t*>(data) + row;
  const uint32_t length = s->value.inlined.length;
  return {length <= sizeof(s->value.inlined.inlined) ? s->value.inlined.inlined : s->value.pointer.ptr, length};
}

inline bool RowIsValid(duckdb_vector vector, idx_t row) { return ValidIn(duckdb_vector_get_validity(vector), row); }

template <typename T>
T At(duckdb_vector vector, idx_t row) {
  return CellIn<T>(duckdb_vector_get_data(vector), row);
}

inline std::string_view BytesAt(duckdb_vector vector, idx_t row) {
  return BytesIn(duckdb_vector_get_data(vector), row);
}

// Makes the cell at `row` of an output vector NULL.
inline void SetRowNull(duckdb_vector vector, idx_t row) {
  duckdb_vector_ensure_validity_writable(vector);
  duckdb_validity_set_row_invalid(duckdb_vector_get_validity(vector), row);
}

inline std::string StructChildName(duckdb_logical_type struct_type, idx_t index) {
  char* raw = duckdb_struct_type_child_name(struct_type, index);
  std::string name = raw;
  duckdb_free(raw);
  return name;
}

}  // namespace basin::engine
