// Delta types as DuckDB sees them: logical types for the catalog and the scan, column
// definitions that map files' physical columns to the table's logical ones, and partition
// values as typed constants.
//
// Thread safety: functions of their arguments.
#pragma once

#include <optional>
#include <string>

#include "delta/schema.h"
#include "duckdb.hpp"
#include "duckdb/common/multi_file/multi_file_data.hpp"

namespace basin::engine::duckdb_ext {

// The DuckDB type Basin reads `type` as (delta::DataType::ToDuckDBType, as a type).
duckdb::LogicalType ToLogicalType(const delta::DataType& type);

// The scan's definition of table column `field`: its logical name and type, and, where
// the files name it differently (column mapping: the physical name, at every nesting
// level), the name to find it by in a file. A column missing from a file reads as NULL.
duckdb::MultiFileColumnDefinition ColumnDefinition(const delta::StructField& field, bool column_mapping);
// The same for a value of `type` named `name` in the table and `file_name` in files.
duckdb::MultiFileColumnDefinition TypeDefinition(const std::string& name, const std::string& file_name,
                                                 const delta::DataType& type, bool column_mapping);

// A serialized partition value (PROTOCOL.md "Partition Value Serialization") as a value of
// `type`: NULL when absent, and when empty for types other than string. InvalidInput
// (thrown, DuckDB's way inside the scan) naming `where` when the text does not parse.
duckdb::Value PartitionValue(duckdb::ClientContext& context, const delta::DataType& type,
                             const std::optional<std::string>& serialized, const std::string& where);

}  // namespace basin::engine::duckdb_ext
