#include "stream/record_columns.h"

#include <cstdint>
#include <cstring>
#include <string>

#include "engine/vector_access.h"

namespace basin::stream {
namespace {

using Kind = RecordColumn::Kind;

duckdb_logical_type TypeOf(const RecordColumn& column) {
  switch (column.kind) {
    case Kind::kBoolean:
      return duckdb_create_logical_type(DUCKDB_TYPE_BOOLEAN);
    case Kind::kInt8:
      return duckdb_create_logical_type(DUCKDB_TYPE_TINYINT);
    case Kind::kInt16:
      return duckdb_create_logical_type(DUCKDB_TYPE_SMALLINT);
    case Kind::kInt32:
      return duckdb_create_logical_type(DUCKDB_TYPE_INTEGER);
    case Kind::kInt64:
      return duckdb_create_logical_type(DUCKDB_TYPE_BIGINT);
    case Kind::kFloat:
      return duckdb_create_logical_type(DUCKDB_TYPE_FLOAT);
    case Kind::kDouble:
      return duckdb_create_logical_type(DUCKDB_TYPE_DOUBLE);
    case Kind::kDecimal:
      return duckdb_create_decimal_type(static_cast<uint8_t>(column.precision),
                                        static_cast<uint8_t>(column.scale));
    case Kind::kString:
      return duckdb_create_logical_type(DUCKDB_TYPE_VARCHAR);
    case Kind::kBinary:
      return duckdb_create_logical_type(DUCKDB_TYPE_BLOB);
    case Kind::kDate:
      return duckdb_create_logical_type(DUCKDB_TYPE_DATE);
    case Kind::kTimestamp:
      return duckdb_create_logical_type(DUCKDB_TYPE_TIMESTAMP_TZ);
    case Kind::kTimestampNtz:
      return duckdb_create_logical_type(DUCKDB_TYPE_TIMESTAMP);
  }
  return duckdb_create_logical_type(DUCKDB_TYPE_VARCHAR);
}

}  // namespace

void AddRecordColumns(duckdb_bind_info info, const RecordSchema& schema) {
  for (const RecordColumn& column : schema) {
    engine::LogicalTypeGuard type{TypeOf(column)};
    duckdb_bind_add_result_column(info, column.name.c_str(), type.type);
  }
}

RecordChunk::RecordChunk(const RecordSchema& schema) {
  std::vector<duckdb_logical_type> types;
  for (const RecordColumn& column : schema) types.push_back(TypeOf(column));
  chunk = duckdb_create_data_chunk(types.data(), types.size());
  for (duckdb_logical_type& type : types) duckdb_destroy_logical_type(&type);
}

RecordChunk& RecordChunk::operator=(RecordChunk&& other) noexcept {
  if (this != &other) {
    if (chunk != nullptr) duckdb_destroy_data_chunk(&chunk);
    chunk = other.chunk;
    other.chunk = nullptr;
  }
  return *this;
}

RecordChunk::~RecordChunk() {
  if (chunk != nullptr) duckdb_destroy_data_chunk(&chunk);
}

void ReferenceRows(duckdb_data_chunk output, duckdb_data_chunk from, idx_t count) {
  for (idx_t c = 0; c < duckdb_data_chunk_get_column_count(from); c++) {
    duckdb_vector_reference_vector(duckdb_data_chunk_get_vector(output, c),
                                   duckdb_data_chunk_get_vector(from, c));
  }
  duckdb_data_chunk_set_size(output, count);
}

RecordChunkRows::RecordChunkRows(duckdb_data_chunk chunk, const RecordSchema& schema) {
  columns_.reserve(schema.size());
  for (size_t c = 0; c < schema.size(); c++) {
    duckdb_vector vector = duckdb_data_chunk_get_vector(chunk, c);
    columns_.push_back(
        Column{vector, duckdb_vector_get_data(vector), nullptr, schema[c].kind, schema[c].precision});
  }
}

template <typename T>
void RecordChunkRows::Put(size_t c, T value) {
  Column& column = columns_[c];
  std::memcpy(static_cast<char*>(column.data) + row_ * sizeof(T), &value, sizeof(T));
  if (column.validity != nullptr) duckdb_validity_set_row_valid(column.validity, row_);
}

void RecordChunkRows::SetNull(size_t c) {
  Column& column = columns_[c];
  if (column.validity == nullptr) {
    duckdb_vector_ensure_validity_writable(column.vector);
    column.validity = duckdb_vector_get_validity(column.vector);
  }
  duckdb_validity_set_row_invalid(column.validity, row_);
}

void RecordChunkRows::SetInt(size_t c, int64_t value) {
  switch (columns_[c].kind) {
    case Kind::kInt8:
      return Put(c, static_cast<int8_t>(value));
    case Kind::kInt16:
      return Put(c, static_cast<int16_t>(value));
    case Kind::kInt32:
    case Kind::kDate:
      return Put(c, static_cast<int32_t>(value));
    default:  // kInt64, timestamps
      return Put(c, value);
  }
}

void RecordChunkRows::SetDouble(size_t c, double value) {
  if (columns_[c].kind == Kind::kFloat) return Put(c, static_cast<float>(value));
  Put(c, value);
}

// A decimal's unscaled value in the width DuckDB keeps DECIMAL(p, s) in.
void RecordChunkRows::SetDecimal(size_t c, __int128 unscaled) {
  const int precision = columns_[c].precision;
  if (precision <= 4) return Put(c, static_cast<int16_t>(unscaled));
  if (precision <= 9) return Put(c, static_cast<int32_t>(unscaled));
  if (precision <= 18) return Put(c, static_cast<int64_t>(unscaled));
  const auto bits = static_cast<unsigned __int128>(unscaled);
  Put(c, duckdb_hugeint{static_cast<uint64_t>(bits), static_cast<int64_t>(bits >> 64)});
}

// A string this short is kept whole in its cell (duckdb_string_t, DuckDB's string_t), the
// bytes after it zero; a longer one in the vector's string heap.
constexpr size_t kInlinedBytes = sizeof(duckdb_string_t::value.inlined.inlined);

void RecordChunkRows::SetText(size_t c, std::string_view text) {
  Column& column = columns_[c];
  if (text.size() <= kInlinedBytes) {
    // Written in place: the C API's assign call is a fifth of a JSON record's parse.
    duckdb_string_t cell{};
    cell.value.inlined.length = static_cast<uint32_t>(text.size());
    if (!text.empty()) std::memcpy(cell.value.inlined.inlined, text.data(), text.size());
    static_cast<duckdb_string_t*>(column.data)[row_] = cell;
  } else {
    duckdb_vector_assign_string_element_len(column.vector, row_, text.data(), text.size());
  }
  if (column.validity != nullptr) duckdb_validity_set_row_valid(column.validity, row_);
}

}  // namespace basin::stream
