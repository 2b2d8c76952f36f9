// What a stateful stream keeps between its micro-batches, and the relation its statement
// reads in place of its STREAM source (stream/stateful.h, stream/changes.h).
//
// State of batch N is in the checkpoint's state/ folder: <N>.json (a JSON object: "rows",
// the row count, and what the stream adds) and <N>.parquet (the rows, when there are any),
// written before the batch's statement runs, so a batch that committed has its state, and a
// batch run again recomputes the same from the state of batch N - 1 and its recorded range.
// Older states are deleted as newer ones are written.
//
// Thread safety: one thread (the runner's).
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "basin/object_store.h"
#include "basin/status.h"
#include "engine/duckdb.h"
#include "engine/store_registry.h"
#include "stream/source.h"

namespace basin::stream {

class DeadLetterWriter;

// The temporary relation (a table or a view) a stateful stream's statement reads in place
// of its source.
inline constexpr char kStreamInput[] = "basin_stream_input";

// Fills kStreamInput before each batch's statement runs, and drops it after.
class StatefulInput {
 public:
  virtual ~StatefulInput() = default;
  // Fills kStreamInput for batch `read.batch_id` from the source (which must be reading the
  // batch, with STREAM sources allowed) and the previous batch's state, and writes this
  // batch's state. Rows set aside go with `dead_letters` to `read.dead_letter_table`.
  virtual Status Prepare(BatchRead& read, DeadLetterWriter& dead_letters) = 0;
  // Drops kStreamInput and what else Prepare() left for the statement; called once the
  // statement ran or failed, and after a Prepare() that failed.
  virtual Status Finish() = 0;
};

// The state objects of a stream's batches, in `store` (the checkpoint's state/ folder).
class BatchStateFiles {
 public:
  BatchStateFiles(engine::Connection& conn, std::shared_ptr<ObjectStore> store, std::string where);

  // Batch `batch_id`'s JSON object (nullopt when batch_id < 0: no batch before), its rows
  // appended to `table` (which exists, shaped as they are; empty: the object only). Corruption when it is
  // missing or not an object with "rows".
  Result<std::optional<nlohmann::json>> Load(int64_t batch_id, const std::string& table);

  // The newest batch with a state in the folder; nullopt when it holds none.
  Result<std::optional<int64_t>> Latest();

  // Writes batch `batch_id`'s state: the rows of `rows_sql` (none when nullopt) and `meta`
  // with their count in "rows"; deletes the state two batches back (the one before stays: a
  // batch run again starts from it).
  Status Save(int64_t batch_id, nlohmann::json meta, const std::optional<std::string>& rows_sql);

 private:
  engine::Connection& conn_;
  std::shared_ptr<ObjectStore> store_;
  engine::StoreHandle handle_;  // store_ as basin:// URLs
  std::string where_;
};

}  // namespace basin::stream
