// Reading checkpoints (PROTOCOL.md "Checkpoints", "V2 Spec", "Sidecar Files"): classic and
// multi-part Parquet files, V2 top-level files (JSON or Parquet) and their sidecars.
//
// Parquet files are read by DuckDB on `conn`: each row is rendered as JSON (structs as
// objects, MAPs as objects) and parsed by ParseAction, so checkpoints and commits share
// one parser. Stores without local files (memory) are copied into a temporary file first.
// Every failure is Corruption (or the store's IOError) naming the file.
//
// Thread safety: `conn` is used by one thread at a time, so is each call.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "delta/actions.h"
#include "delta/log_segment.h"
#include "engine/duckdb.h"
#include "storage/object_store.h"

namespace basin::delta {

// The actions of a checkpoint's top-level files (every part of a multi-part one). For V2
// checkpoints these include `sidecar` actions; read those with ReadSidecars().
Result<std::vector<Action>> ReadCheckpointFiles(ObjectStore& store, engine::Connection& conn,
                                                const CheckpointFiles& checkpoint);

// The add/remove actions of the sidecar files named by `sidecars` (paths relative to
// _delta_log/_sidecars/, or absolute URIs), appended to `out`.
Status ReadSidecars(ObjectStore& store, engine::Connection& conn, const std::vector<Sidecar>& sidecars,
                    std::vector<Action>* out);

// The actions of one Parquet log file (a checkpoint part or a sidecar) at `key`.
Status ReadParquetActions(ObjectStore& store, engine::Connection& conn, const std::string& key,
                          std::vector<Action>* out);

}  // namespace basin::delta
