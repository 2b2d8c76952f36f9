// delta::ParquetLogIO on DuckDB: how Basin reads and writes the Parquet files of a Delta
// log (checkpoint parts, V2 top-level files, sidecars).
//
// Reading runs read_parquet over the file and converts DuckDB's result vectors straight
// into actions: structs, maps and lists are walked through the C API, nothing is rendered
// as text and parsed again. `stats_parsed` (checkpoints written with writeStatsAsStruct)
// is kept typed, in one delta::ParsedStats per file that its adds point into, when the
// file has no `stats` text; `partitionValues_parsed` becomes partition value text when the
// partitionValues map is absent. Whichever of the two forms
// the file does not need is left out of the query.
//
// Writing serializes the actions and has DuckDB type them with from_json() against the
// protocol's checkpoint schema, then COPY them to Parquet.
//
// DuckDB reads and writes the files as basin:// URLs of the store (engine/store_registry.h):
// every byte goes through the ObjectStore, whatever its backend.
//
// Reads and writes run on DuckDB databases of this object's own, opened on first use. While
// a query runs, DuckDB's calling thread spins waiting for its workers, which on a busy
// machine costs a scan several times its time (measured: 100,000 checkpoint rows in 0.07 s
// with one thread, 0.16 to 1 s with two, on a loaded 2-core host). Writes have one thread:
// a checkpoint is background work (delta/checkpoint_worker.h), and with a thread per core
// it took every core from the statements and stream batches it ran beside (every tenth
// one-record batch of stream_batch_bench twice as slow).
//
// Thread safety: each call opens its own connection, so calls may run on any threads at
// once.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "basin/object_store.h"
#include "basin/status.h"
#include "delta/parquet_io.h"
#include "engine/duckdb.h"

namespace basin::engine {

class DuckDBParquetLogIO final : public delta::ParquetLogIO {
 public:
  // An error opening a database is returned by the read or write that needed it.
  DuckDBParquetLogIO() = default;

  // Where written files are staged before the one Put that stores them: by default a
  // memory store per write; tests give a local folder to watch writes in progress.
  void set_staging_store(std::shared_ptr<ObjectStore> staging) { staging_ = std::move(staging); }

  Status ReadActions(ObjectStore& store, const std::string& key, std::vector<delta::Action>* out) override;
  Status WriteActions(ObjectStore& store, const std::string& key, std::span<const delta::Action> actions,
                      delta::CheckpointColumns columns) override;

 private:
  // `*db`, opened with `threads` when it is not yet.
  Result<std::shared_ptr<Database>> OwnDatabase(std::shared_ptr<Database>* db, int threads);

  std::mutex mutex_;
  std::shared_ptr<Database> reading_db_;  // GUARDED_BY(mutex_)
  std::shared_ptr<Database> writing_db_;  // GUARDED_BY(mutex_)
  std::shared_ptr<ObjectStore> staging_;  // null: memory
};

}  // namespace basin::engine
