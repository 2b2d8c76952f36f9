// Writing Delta data files: DuckDB runs `COPY (select) TO ... (FORMAT parquet, RETURN_STATS)`
// and Basin turns what it returns into `add` actions with Delta statistics (numRecords,
// minValues, maxValues, nullCount) and serialized partition values.
//
// Column names in the files are the names the SELECT produces; for a table with column
// mapping, the caller aliases columns to their physical names, and partition values and
// stats then use those names too (as the protocol wants).
//
// Thread safety: functions; the Connection is used by one thread at a time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "basin/object_store.h"
#include "basin/status.h"
#include "delta/actions.h"
#include "delta/schema.h"
#include "engine/duckdb.h"

namespace basin::engine {

// How a write's data files are laid out where it departs from the defaults: a stream's
// batch writes files that its sink's compaction rewrites with the defaults.
struct FileLayout {
  // Parquet row groups of at most this many rows; nullopt: DuckDB's size.
  std::optional<int64_t> row_group_rows;
  // DuckDB's Parquet bloom filters on dictionary-encoded columns (for equality filters):
  // hashing every distinct value again, they were a twentieth of a Kafka stream's time.
  bool bloom_filters = true;
};

struct WriteOptions {
  // Hive-style folders (col=value/) in this order; these columns are not stored in files.
  std::vector<std::string> partition_columns;
  // Files of about this many bytes (delta.targetFileSize). A file over one and a half times
  // the target (DuckDB rolls over only between row groups, and never in a partitioned
  // write) is rewritten as files of the target size with smaller row groups.
  std::optional<int64_t> target_file_size_bytes;
  FileLayout layout;
  // Min/max/null statistics for the first N leaf columns (delta.dataSkippingNumIndexedCols).
  int num_indexed_cols = 32;
  // When set, statistics for exactly these columns instead (delta.dataSkippingStatsColumns):
  // paths of file column names; a struct's path stands for all its leaves.
  std::optional<std::vector<std::vector<std::string>>> stats_columns;
  // The column types of the rows written, when the caller knows them (StoredColumnTypes);
  // else WriteDataFiles asks DuckDB (a query's binding and planning, per write).
  std::optional<std::vector<ColumnType>> columns;
};

// The column types of rows stored as `schema` says (each column cast to
// DataType::ToDuckDBType(), named by its physical name, nested fields too, when `physical`),
// as Connection::DescribeQuery gives them. A nested column's type_name is Delta's spelling
// of it, which only messages use.
std::vector<ColumnType> StoredColumnTypes(const delta::StructType& schema, bool physical);

// Writes the rows of `select_sql` as new uniquely named Parquet files under the root of
// `table_store` and returns one AddFile (data_change = true) per file, with its relative
// URL-encoded path, size, modification time, partition values and stats JSON. DuckDB
// writes the files through the store (basin:// URLs, engine/store_registry.h), each new
// key written in place and durable when DuckDB closes it; nothing is staged elsewhere.
// Zero rows produce no files. Errors name the statement and the store.
Result<std::vector<delta::AddFile>> WriteDataFiles(Connection& conn, const std::string& select_sql,
                                                   ObjectStore& table_store,
                                                   const WriteOptions& options = {});

// The Delta schema of the rows `select_sql` produces (all fields nullable), for creating a
// table from a query (HUGEINT as decimal(38,0)). Unsupported, naming the column, for DuckDB
// types Delta lacks (unsigned integers, INTERVAL, TIME, UUID, UNION, ENUM is read as string).
Result<delta::StructType> InferDeltaSchema(Connection& conn, const std::string& select_sql);
// The same for columns already described (a query whose sources only a stream can bind).
Result<delta::StructType> DeltaSchemaOf(const std::vector<ColumnType>& columns);

// The Delta type of one DuckDB column type, as InferDeltaSchema maps it; `where` names the
// column in the Unsupported error.
Result<delta::DataTypePtr> DeltaTypeOf(const ColumnType& column, const std::string& where);

}  // namespace basin::engine
