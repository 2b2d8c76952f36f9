// Snapshot: a Delta table as it was at one version: its schema, partitioning, properties
// and the data files that hold its rows. Obtained from Table (table.h).
//
// Thread safety: immutable; copies are cheap handles on the same state and may be used from
// any number of threads at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace basin {

// One top-level column of a table's schema.
struct Column {
  std::string name;
  // The type as Delta's log spells it: "long", "string", "decimal(10,2)",
  // "struct<a: long, b: array<string>>".
  std::string type;
  bool nullable = true;
  // The column's name in the data files: the same as `name` unless the table uses column
  // mapping (Snapshot::column_mapping()).
  std::string physical_name;
};

// One data file of the snapshot.
struct DataFile {
  std::string path;  // relative to the table's location (or an absolute URI), as in the log
  int64_t size_bytes = 0;
  // Rows in the file that are live (deletion vectors subtracted); nullopt when the file has
  // no statistics.
  std::optional<int64_t> num_records;
};

class Snapshot {
 public:
  // The table's location, as it was opened.
  const std::string& location() const;
  int64_t version() const;
  // When the version was committed: its in-commit timestamp when the table has them, else
  // the commit file's modification time. Milliseconds since the Unix epoch, UTC.
  int64_t timestamp_ms() const;

  // metaData.id, .name and .description.
  const std::string& table_id() const;
  const std::optional<std::string>& name() const;
  const std::optional<std::string>& description() const;

  // The protocol: minimum reader and writer versions, and the table features (nullopt
  // below reader version 3 / writer version 7, where features do not exist).
  int min_reader_version() const;
  int min_writer_version() const;
  const std::optional<std::vector<std::string>>& reader_features() const;
  const std::optional<std::vector<std::string>>& writer_features() const;

  std::vector<Column> columns() const;
  // Whether data files name columns by physical name (column mapping "name" or "id").
  bool column_mapping() const;
  const std::vector<std::string>& partition_columns() const;
  // The table's properties (metaData.configuration), e.g. delta.appendOnly.
  const std::map<std::string, std::string>& properties() const;

  size_t num_files() const;
  // Every live data file, in no particular order.
  std::vector<DataFile> files() const;
  // Live rows, from the files' statistics; nullopt when a file has none.
  std::optional<int64_t> num_records() const;
  int64_t size_bytes() const;

  // Internal: snapshots come from Table.
  struct Impl;
  explicit Snapshot(std::shared_ptr<const Impl> impl);

 private:
  std::shared_ptr<const Impl> impl_;
};

}  // namespace basin
