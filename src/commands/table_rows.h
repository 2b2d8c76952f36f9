// Turning incoming rows into the rows a Delta table stores, and writing them as data
// files. Every write path (INSERT, CTAS, UPDATE, MERGE, OPTIMIZE) goes through here, so
// schema enforcement, NOT NULL, CHECK constraints (delta.constraints.<name>) and generated
// columns (field metadata delta.generationExpression) are enforced in one place.
//
// Checks run inside the same DuckDB query that writes the files (a failing row raises an
// error naming the column or constraint and the offending value), so the rows are read
// once and nothing is committed when a check fails.
//
// Thread safety: functions; the Connection is used by one thread at a time.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "basin/object_store.h"
#include "basin/status.h"
#include "delta/actions.h"
#include "delta/schema.h"
#include "engine/duckdb.h"
#include "engine/parquet_writer.h"

namespace basin::commands {

// How incoming rows are matched to the table's columns.
struct RowShape {
  // Match source columns to table columns by name (INSERT ... BY NAME, MERGE INSERT *),
  // else by position.
  bool by_name = false;
  // INSERT INTO t (a, b): the source gives exactly these columns (by position); the other
  // columns get NULL, or their generation expression.
  std::optional<std::vector<std::string>> columns;
  // Source columns the table lacks are added to the schema (at the end, nullable), and
  // column types are widened where type widening allows (byte->short->int->long,
  // float->double, int->double, date->timestamp_ntz, decimal precision/scale increase).
  // Without it, either is InvalidArgument naming the column.
  bool schema_evolution = false;
  // Every row must make this condition (SQL over the table's logical columns) true, else
  // the write fails naming it and the row: REPLACE WHERE's rule that new rows lie inside
  // what they replace.
  std::optional<std::string> row_condition;
};

// The table a write goes to: its current protocol, metadata and schema (possibly about to
// change), and where its files live.
struct WriteTarget {
  std::shared_ptr<ObjectStore> store;  // rooted at the table folder
  std::string table_root;              // for messages
  delta::Protocol protocol;
  delta::Metadata metadata;
  delta::StructType schema;  // parsed metadata.schema_string
  // How its data files are laid out (CommandContext::file_layout).
  engine::FileLayout file_layout;
};

struct PlannedRows {
  // Produces the table's columns in schema order, named by physical name, typed as the
  // table stores them, with every constraint checked (raising an error from DuckDB).
  std::string stored_rows_sql;
  // The same rows before the NOT NULL and CHECK constraints and under logical names, for
  // RefusedRowsSql and AcceptedRowsSql.
  std::string logical_rows_sql;
  // Set when schema evolution changed the schema: the metadata (and, when the change
  // needs a feature, protocol) the transaction must commit with the files.
  std::optional<delta::Metadata> new_metadata;
  std::optional<delta::Protocol> new_protocol;
};

// Plans writing the rows `source_sql` produces into `target`. InvalidArgument naming the
// column for: a column count that does not match (by position: every column, or every
// column but the generated ones), a source column the table lacks (without evolution), a
// column given twice, a type that cannot be stored (a string into an integer column, a
// double into an integer column, a timestamp into a date column, ...).
//
// Types convert as Spark's store assignment does, minus the lossy cases: integers to any
// numeric type, decimals and floats to decimals and floats, dates and timestamps to
// timestamps, and strings to dates and timestamps; a value that does not fit or parse
// fails the write naming the column and the value. Generated columns not given are
// computed; given ones must equal their expression. NULLs into NOT NULL columns (also
// nested struct fields) and rows failing a CHECK constraint fail the write, naming the
// column or constraint and the row's values. `source_sql` is run once, when the returned
// SQL is.
Result<PlannedRows> PlanRows(engine::Connection& conn, const WriteTarget& target,
                             const std::string& source_sql, const RowShape& shape = {});
// As PlanRows, with `source_sql`'s columns already described (`source`, as
// engine::Connection::DescribeQuery gives them).
Result<PlannedRows> PlanDescribedRows(const WriteTarget& target, const std::string& source_sql,
                                      const std::vector<engine::ColumnType>& source,
                                      const RowShape& shape = {});

// Rows that break `target`'s top-level NOT NULL columns or CHECK constraints, of
// `logical_rows_sql` (PlannedRows::logical_rows_sql): value (the row as JSON text), error
// (the first constraint it breaks: "NOT NULL constraint violated for column: id", "CHECK
// constraint positive (amount > 0) violated"). Empty when the table has no such constraint.
std::string RefusedRowsSql(const WriteTarget& target, const std::string& logical_rows_sql);

// The rows of `logical_rows_sql` that break none of the constraints RefusedRowsSql names,
// each one that breaks one handed, as it is read, to basin_refuse(`token`, value, error)
// (engine/refused_rows.h) with the value and error RefusedRowsSql gives it. Empty when the
// table has no such constraint.
std::string RefusingRowsSql(const WriteTarget& target, const std::string& logical_rows_sql, int64_t token);

// SQL: whether a row (its columns under their logical names) breaks a constraint
// RefusedRowsSql names. Empty when the table has no such constraint.
std::string RefusedCondition(const WriteTarget& target);

// Stored rows of `logical_rows_sql` as PlannedRows::stored_rows_sql has them. With
// `leave_refused_out`, the rows RefusedRowsSql lists are left out instead of failing the
// write (NOT NULL struct fields and `row_condition` still fail it).
std::string AcceptedRowsSql(const WriteTarget& target, const std::string& logical_rows_sql,
                            const std::optional<std::string>& row_condition, bool leave_refused_out);

// As PlanRows for rows that already have every table column under its logical name, in
// any order (UPDATE and MERGE build them): adds the checks, casts (plain CASTs: a value
// that does not convert fails the write) and physical names. Generated columns are
// recomputed from the row (so an UPDATE of the columns they depend on updates them); the
// values the rows carry for them are ignored.
Result<std::string> StoredRowsSql(const WriteTarget& target, const std::string& logical_rows_sql);

// Writes stored rows (from PlanRows or StoredRowsSql) as new data files of `target`:
// partitioned by its partition columns (values encoded as the protocol says), files of
// unpartitioned tables rolled over at delta.targetFileSize (default 128 MiB; DuckDB cannot
// rotate partitioned files), stats for the first
// delta.dataSkippingNumIndexedCols (default 32) leaf columns. The AddFiles have
// dataChange = true. A check failing while writing is InvalidArgument naming it.
Result<std::vector<delta::AddFile>> WriteRows(engine::Connection& conn, const WriteTarget& target,
                                              const std::string& stored_rows_sql);

// Writes change data feed rows (every table column under its logical name, in any order,
// plus _change_type: 'insert', 'delete', 'update_preimage', 'update_postimage') as files
// under _change_data/, partitioned like the data (PROTOCOL.md "Change Data Files"), with
// the same checks and physical names as WriteRows. Returns their cdc actions (paths
// relative to the table root, dataChange false).
Result<std::vector<delta::CdcFile>> WriteChangeRows(engine::Connection& conn, const WriteTarget& target,
                                                    const std::string& logical_rows_sql);

// The logical-name SELECT list that reads stored (physical) columns back under logical
// names: "\"col-1a2b\" AS \"id\", ...", for commands that read files directly.
std::string LogicalColumnsSql(const delta::StructType& schema);

}  // namespace basin::commands
