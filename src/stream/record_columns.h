// A record schema's columns in a DuckDB table function's output (C API): the result
// columns a source binds, and a parsed row written into an output chunk.
//
// Types: boolean BOOLEAN, byte..long TINYINT..BIGINT, float FLOAT, double DOUBLE,
// decimal(p,s) DECIMAL(p,s), string VARCHAR, binary BLOB, date DATE, timestamp TIMESTAMP
// WITH TIME ZONE, timestamp_ntz TIMESTAMP, as Basin reads Delta tables.
//
// Thread safety: functions; a chunk is written by one thread.
#pragma once

#include <duckdb.h>

#include <vector>

#include "stream/record_format.h"

namespace basin::stream {

// Adds one result column per schema column, in order.
void AddRecordColumns(duckdb_bind_info info, const RecordSchema& schema);

// Writes rows[0, count) (each a record parser's cells, one per column of `schema`) into the
// first `count` rows of `output`, and sets its size. REQUIRES: count <= duckdb_vector_size().
void SetRecordRows(duckdb_data_chunk output, const RecordSchema& schema, const std::vector<RecordCell>* rows,
                   size_t count);

}  // namespace basin::stream
