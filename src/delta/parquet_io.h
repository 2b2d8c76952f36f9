// The Parquet files of a Delta log: checkpoint parts, V2 checkpoint top-level files and
// sidecars (PROTOCOL.md "Checkpoints", "V2 Spec", "Sidecar Files", "Checkpoint Schema").
//
// delta/ has no Parquet codec: it reads and writes these files through this interface,
// which engine/ implements with DuckDB (engine/parquet_log_io.h) and tests may fake. That
// keeps the Delta layer free of the SQL engine.
//
// Thread safety: implementations allow concurrent calls from any thread (snapshots of
// many tables load at once).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "basin/object_store.h"
#include "basin/status.h"
#include "delta/actions.h"

namespace basin::delta {

// The action columns a checkpoint Parquet file is written with, each in the protocol's
// checkpoint schema (add.stats a JSON string; partitionValues, tags, configuration and
// format.options MAP(VARCHAR, VARCHAR); deletionVector a struct).
enum class CheckpointColumns {
  kClassic,     // txn, add, remove, metaData, protocol, domainMetadata
  kSidecar,     // add, remove
  kV2TopLevel,  // checkpointMetadata, txn, add, remove, metaData, protocol, domainMetadata, sidecar
};

// The column names of `columns`, in file order.
std::span<const char* const> CheckpointColumnNames(CheckpointColumns columns);

class ParquetLogIO {
 public:
  virtual ~ParquetLogIO() = default;

  // Appends to `out` the actions of the Parquet log file at `key` in `store`, in row order,
  // one per row that holds one of add, remove, metaData, protocol, txn, domainMetadata,
  // checkpointMetadata and sidecar (other columns are ignored). An add's stats are its
  // `stats` string or, when that is absent, its `stats_parsed` struct kept typed
  // (AddFile::parsed_stats, one ParsedStats for the file's adds); an
  // add's or remove's partition values are its `partitionValues` map or, when that column
  // is absent, its `partitionValues_parsed` struct in the protocol's text form.
  // Errors: Corruption naming `key` when the file is missing, is not Parquet, or holds no
  // action column, or a required field is null; the store's errors otherwise.
  virtual Status ReadActions(ObjectStore& store, const std::string& key, std::vector<Action>* out) = 0;

  // Writes `actions` (of the kinds `columns` holds) as one Parquet file at `key` in
  // `store`, replacing any, with one Put: readers see all of it or none.
  virtual Status WriteActions(ObjectStore& store, const std::string& key, std::span<const Action> actions,
                              CheckpointColumns columns) = 0;
};

}  // namespace basin::delta
