// Reading checkpoints (PROTOCOL.md "Checkpoints", "V2 Spec", "Sidecar Files"): classic and
// multi-part Parquet files, V2 top-level files (JSON or Parquet) and their sidecars.
//
// JSON files are parsed by ParseCommitFile like commits; Parquet files are read through a
// ParquetLogIO (delta/parquet_io.h), which types their columns straight into actions.
// Every failure is Corruption (or the store's IOError) naming the file.
//
// Thread safety: stateless functions; `io` allows concurrent calls.
#pragma once

#include <string>
#include <vector>

#include "basin/object_store.h"
#include "basin/status.h"
#include "delta/actions.h"
#include "delta/log_segment.h"
#include "delta/parquet_io.h"

namespace basin::delta {

// The actions of a checkpoint's top-level files (every part of a multi-part one). For V2
// checkpoints these include `sidecar` actions; read those with ReadSidecars().
Result<std::vector<Action>> ReadCheckpointFiles(ObjectStore& store, ParquetLogIO& io,
                                                const CheckpointFiles& checkpoint);

// The add/remove actions of the sidecar files named by `sidecars` (paths relative to
// _delta_log/_sidecars/, or absolute local paths and file: URIs), appended to `out`.
Status ReadSidecars(ObjectStore& store, ParquetLogIO& io, const std::vector<Sidecar>& sidecars,
                    std::vector<Action>* out);

}  // namespace basin::delta
