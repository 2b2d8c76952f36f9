// What a stateful stream keeps between its micro-batches, and the relation its statement
// reads in place of its STREAM source (stream/stateful.h, stream/changes.h).
//
// State of batch N is in the checkpoint's state/ folder: <N>.json (a JSON object: "rows",
// the row count, and what the stream adds) and <N>.parquet (the rows, when there are any),
// written before the batch's statement runs, so a batch that committed has its state, and a
// batch run again recomputes the same from the state of batch N - 1 and its recorded range.
//
// A state is full (its rows are the state), or holds changes: the rows batch N added to the
// state of batch N - 1, with "base": S, the batch of the last full state. Its state is then
// what a stream reduces the rows of state S and of the changes of batches S + 1 to N to
// (stream/stateful.h: those its watermark has not passed), so that a batch writes what it
// added, not all the state holds. A full state is written again once the changes since the
// last would hold more than half its rows (or after kMaxChangedBatches), which bounds what a
// restart reads to about one and a half times the state; a small state is always written
// full. States no batch may start from
// again are deleted as newer ones are written.
//
// Thread safety: one thread (the runner's).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

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

// `table` (temp.<name>) with a number of its own in the process: the name of a temporary
// table a stateful input keeps between batches, as a session may run several streams.
std::string KeptTableName(const std::string& table);

// Which batch's state a run holds in memory (a temporary table), and the batch whose
// changes wait to join it. A batch's changes join the state when the next batch starts,
// which says that batch committed; the same batch run again (after a failure) starts from
// the state as it was, not read back.
class KeptState {
 public:
  // Batch `batch_id` starts. When the changes waiting are batch_id - 1's and follow the state
  // held, `join` adds them; `discard` then drops them, joined or not. Whether the state held
  // is batch_id - 1's: when it is not, the caller reads it back and says Hold(batch_id - 1).
  Result<bool> Start(int64_t batch_id, const std::function<Status()>& join,
                     const std::function<Status()>& discard);
  // The state held is batch `batch_id`'s.
  void Hold(int64_t batch_id) { held_ = batch_id; }
  // Batch `batch_id`'s changes wait to join the state.
  void Wait(int64_t batch_id) { waiting_ = batch_id; }

 private:
  std::optional<int64_t> held_;  // unset while none is known, or while its rows change
  std::optional<int64_t> waiting_;
};

// The state objects of a stream's batches, in `store` (the checkpoint's state/ folder).
class BatchStateFiles {
 public:
  BatchStateFiles(engine::Connection& conn, std::shared_ptr<ObjectStore> store, std::string where);

  // Batch `batch_id`'s JSON object (nullopt when batch_id < 0: no batch before), its rows
  // appended to `table` (which exists, shaped as they are; empty: the object only): for a
  // state of changes, the rows of its base and of every change since, for the caller to
  // reduce. Corruption when one is missing or not an object with "rows".
  Result<std::optional<nlohmann::json>> Load(int64_t batch_id, const std::string& table);

  // The newest batch with a state in the folder; nullopt when it holds none.
  Result<std::optional<int64_t>> Latest();

  // Writes batch `batch_id`'s full state: the rows of `rows_sql` (none when nullopt) and
  // `meta` with their count in "rows". When the state before was the last one loaded or
  // written, deletes the states no batch starts from any more (the one before stays: a batch
  // run again starts from it).
  Status Save(int64_t batch_id, nlohmann::json meta, const std::optional<std::string>& rows_sql);

  // Writes batch `batch_id`'s state as the `changes` rows of `changes_sql` (what the batch
  // added to the state of the batch before, which was the last one loaded or written), or as the
  // full state `full_sql` when the last full state is small (kMinRowsForChanges), when the
  // changes since it would hold more than half its rows or span kMaxChangedBatches, or when
  // the state before is not known; deletes as Save does.
  Status SaveChanges(int64_t batch_id, nlohmann::json meta, int64_t changes, const std::string& changes_sql,
                     const std::string& full_sql);

  // Batches of changes after a full state before one is written again.
  static constexpr int64_t kMaxChangedBatches = 64;
  // A full state smaller than this is written again rather than followed by changes: it
  // costs little to write, and one object reads back faster than several.
  static constexpr int64_t kMinRowsForChanges = 50'000;

 private:
  // Where a batch's state stands: its base (itself for a full state), the rows of the base,
  // and those of the changes since, with the batches that made some.
  struct Chain {
    int64_t batch_id = 0;
    int64_t base = 0;
    int64_t base_rows = 0;
    int64_t changed_rows = 0;
    std::vector<int64_t> changed;
  };

  // The chain of the batch before `batch_id` when it is known: the last state loaded or
  // written, or the one before it (batch_id written again).
  std::optional<Chain> ChainBefore(int64_t batch_id) const;
  // Records that the state after `before` is `chain` (nullopt while it is being written).
  void Written(std::optional<Chain> before, std::optional<Chain> chain);
  // Writes the rows of `rows_sql` as batch `batch_id`'s Parquet file (none when there are
  // none), then `meta` with their count; returns the count.
  Result<int64_t> Write(int64_t batch_id, nlohmann::json meta, const std::optional<std::string>& rows_sql);
  // Deletes the states before the base of `before` (the chain of the batch before the one
  // just written), which no batch starts from any more.
  Status DeleteBefore(const std::optional<Chain>& before);

  engine::Connection& conn_;
  std::shared_ptr<ObjectStore> store_;
  engine::StoreHandle handle_;  // store_ as basin:// URLs
  std::string where_;
  std::optional<Chain> last_;              // of the last state loaded or written
  std::optional<Chain> before_last_;       // of the batch before it, when known
  std::optional<int64_t> deleted_before_;  // the states before it are deleted (by this object)
};

}  // namespace basin::stream
