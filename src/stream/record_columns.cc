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

// Row `row` of a vector's `data`, as T.
template <typename T>
void Put(void* data, idx_t row, T value) {
  std::memcpy(static_cast<char*>(data) + row * sizeof(T), &value, sizeof(T));
}

// A decimal's unscaled value in the width DuckDB keeps DECIMAL(p, s) in.
void PutDecimal(void* data, idx_t row, int precision, __int128 unscaled) {
  if (precision <= 4) return Put(data, row, static_cast<int16_t>(unscaled));
  if (precision <= 9) return Put(data, row, static_cast<int32_t>(unscaled));
  if (precision <= 18) return Put(data, row, static_cast<int64_t>(unscaled));
  const auto bits = static_cast<unsigned __int128>(unscaled);
  Put(data, row, duckdb_hugeint{static_cast<uint64_t>(bits), static_cast<int64_t>(bits >> 64)});
}

}  // namespace

void AddRecordColumns(duckdb_bind_info info, const RecordSchema& schema) {
  for (const RecordColumn& column : schema) {
    engine::LogicalTypeGuard type{TypeOf(column)};
    duckdb_bind_add_result_column(info, column.name.c_str(), type.type);
  }
}

void SetRecordRows(duckdb_data_chunk output, const RecordSchema& schema, const std::vector<RecordCell>* rows,
                   size_t count) {
  for (size_t c = 0; c < schema.size(); c++) {
    duckdb_vector vector = duckdb_data_chunk_get_vector(output, c);
    void* data = duckdb_vector_get_data(vector);
    const RecordColumn& column = schema[c];
    for (size_t r = 0; r < count; r++) {
      const RecordCell& cell = rows[r][c];
      const auto row = static_cast<idx_t>(r);
      if (std::holds_alternative<std::monostate>(cell)) {
        engine::SetRowNull(vector, row);
        continue;
      }
      switch (column.kind) {
        case Kind::kBoolean:
          Put(data, row, std::get<bool>(cell));
          break;
        case Kind::kInt8:
          Put(data, row, static_cast<int8_t>(std::get<int64_t>(cell)));
          break;
        case Kind::kInt16:
          Put(data, row, static_cast<int16_t>(std::get<int64_t>(cell)));
          break;
        case Kind::kInt32:
        case Kind::kDate:
          Put(data, row, static_cast<int32_t>(std::get<int64_t>(cell)));
          break;
        case Kind::kInt64:
        case Kind::kTimestamp:
        case Kind::kTimestampNtz:
          Put(data, row, std::get<int64_t>(cell));
          break;
        case Kind::kFloat:
          Put(data, row, static_cast<float>(std::get<double>(cell)));
          break;
        case Kind::kDouble:
          Put(data, row, std::get<double>(cell));
          break;
        case Kind::kDecimal:
          PutDecimal(data, row, column.precision, std::get<__int128>(cell));
          break;
        case Kind::kString:
        case Kind::kBinary: {
          const std::string& text = std::get<std::string>(cell);
          duckdb_vector_assign_string_element_len(vector, row, text.data(), text.size());
          break;
        }
      }
    }
  }
  duckdb_data_chunk_set_size(output, count);
}

}  // namespace basin::stream
