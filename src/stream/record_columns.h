// A record schema's columns in a DuckDB table function's output (C API): the result
// columns a source binds, and parsed records written into an output chunk's rows.
//
// Types: boolean BOOLEAN, byte..long TINYINT..BIGINT, float FLOAT, double DOUBLE,
// decimal(p,s) DECIMAL(p,s), string VARCHAR, binary BLOB, date DATE, timestamp TIMESTAMP
// WITH TIME ZONE, timestamp_ntz TIMESTAMP, as Basin reads Delta tables.
//
// Thread safety: functions; a chunk is written by one thread.
#pragma once

#include <duckdb.h>

#include <string_view>
#include <vector>

#include "stream/record_format.h"

namespace basin::stream {

// Adds one result column per schema column, in order.
void AddRecordColumns(duckdb_bind_info info, const RecordSchema& schema);

// A chunk with a column per schema column, of the types AddRecordColumns gives them, that
// RecordChunkRows fill (on any thread: a read's own, for the statement to take whole).
struct RecordChunk {
  explicit RecordChunk(const RecordSchema& schema);
  RecordChunk(RecordChunk&& other) noexcept : chunk(other.chunk) { other.chunk = nullptr; }
  RecordChunk& operator=(RecordChunk&& other) noexcept;
  ~RecordChunk();

  duckdb_data_chunk chunk;
};

// Hands `from`'s first `count` rows to `output` without copying them: its vectors then
// share `from`'s data, which outlives `from`.
void ReferenceRows(duckdb_data_chunk output, duckdb_data_chunk from, idx_t count);

// A CellSink into row `row()` of `chunk` (an output chunk of AddRecordColumns' columns, or a
// RecordChunk), whose vectors it looks up once. Every column of a row it is set for is set
// (the parser's contract), so a row a refused record half set is overwritten by the next.
class RecordChunkRows final : public CellSink {
 public:
  RecordChunkRows(duckdb_data_chunk chunk, const RecordSchema& schema);

  idx_t row() const { return row_; }
  void set_row(idx_t row) { row_ = row; }

  void SetNull(size_t c) override;
  void SetBool(size_t c, bool value) override { Put(c, static_cast<uint8_t>(value)); }
  void SetInt(size_t c, int64_t value) override;
  void SetDouble(size_t c, double value) override;
  void SetDecimal(size_t c, __int128 unscaled) override;
  void SetText(size_t c, std::string_view text) override;

 private:
  struct Column {
    duckdb_vector vector;
    void* data;
    uint64_t* validity = nullptr;  // once a row of the column was set NULL
    RecordColumn::Kind kind;
    int precision;
  };
  template <typename T>
  void Put(size_t c, T value);

  std::vector<Column> columns_;
  idx_t row_ = 0;
};

}  // namespace basin::stream
