// StreamState: what a stream whose source has a `WATERMARK col DELAY OF interval`, or whose
// sink is complete (INSERT OVERWRITE) over Kafka or files, keeps between its micro-batches
// (docs/streams.md, "Watermarks and state", "Complete sinks").
//
// The statement of such a stream reads the relation kStreamInput in place of its source
// (grammar::ReplaceStreamSources), which Prepare() fills before each batch's statement runs:
//
// - The batch's rows are read from the source once, into a temporary table.
// - With a watermark, a row whose event time is behind the watermark the previous batch left, or that has no
//   event time, is late: it is counted, and committed to the source's dead-letter table
//   when there is one ("<stream id>/late-rows" txn), and never read by the statement.
// - The watermark becomes the latest event time seen, less the delay (it never goes back).
// - The statement's query, as DuckDB's parser reads it, decides the rest:
//   - `SELECT DISTINCT ON (columns) ... FROM <source>`: a row whose key an earlier batch
//     emitted is dropped, so each key is emitted once while it is within the watermark. The
//     state holds the keys emitted, with their event times, until the watermark passes their
//     event time plus the delay.
//   - `GROUP BY window(col, size)` over the watermark column: the statement reads the rows
//     of the windows the new watermark closes (a window's end at or before it), from this
//     batch and the state, so each window's result is written once, complete. The state
//     holds the rows of the windows still open. With `window(col, size, slide)` (hopping
//     windows, which overlap), the statement reads each row once for every window holding
//     it that the watermark closed since the batch before, the window in a column
//     basin_window (engine/stream_calls.h); a row stays until its last window closes.
//   - A complete sink: the statement reads every row the source gave, in every batch (the
//     state holds them all), and rewrites the sink from them.
//   - Otherwise the statement reads the batch's rows that are on time. A GROUP BY without
//     window(...), and SELECT DISTINCT without ON, are refused: each batch would emit
//     partial results.
//
// Its state is kept per batch (stream/batch_state.h): the keys or rows, and the watermark.
// Between batches of one run it stays in a temporary table, and each batch writes the keys
// or rows it added (the rows the watermark passed are dropped when a state is read back), so
// that a batch's cost follows its own rows, not all the state holds.
//
// Thread safety: one thread (the runner's).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "basin/object_store.h"
#include "basin/status.h"
#include "engine/duckdb.h"
#include "sql/grammar/statement.h"
#include "stream/batch_state.h"
#include "stream/source.h"

namespace basin::stream {

struct StatePlan;  // what the query keeps (stateful.cc)

class StreamState : public StatefulInput {
 public:
  // What `query` (the statement's query, reading kStreamInput in place of `source`) keeps
  // between batches, for a `complete` sink or not, with its state in `store` (the
  // checkpoint's state/ folder). InvalidArgument, naming what, for a query whose results a
  // watermark cannot bound (see above).
  // REQUIRES: source.watermark or complete.
  static Result<std::unique_ptr<StreamState>> Open(engine::Connection& conn,
                                                   const sql::grammar::StreamSource& source,
                                                   const std::string& query, bool complete,
                                                   std::shared_ptr<ObjectStore> store, std::string where);
  ~StreamState() override;

  // StatefulInput: the late rows (counted in `read`) are set aside.
  Status Prepare(BatchRead& read, DeadLetterWriter& dead_letters) override;
  Status Finish() override;

 private:
  StreamState(engine::Connection& conn, std::unique_ptr<StatePlan> plan, std::shared_ptr<ObjectStore> store,
              std::string where);

  // The watermark the batch before `batch_id` left (nullopt: none yet), with its state in
  // the state table: kept from that batch in this run, or read back from the folder.
  Result<std::optional<int64_t>> LoadState(int64_t batch_id);
  // Drops the rows `watermark` passed from the state table.
  Status Evict(std::optional<int64_t> watermark);
  // Keeps the rows of `rows_sql` as the batch's changes to the state, in the changes table.
  Status AddChanges(const std::string& rows_sql);
  // The state table with the batch's changes (when AddChanges() made some), as SQL to read.
  std::string StateWithChanges() const;
  // Writes batch `batch_id`'s state: `watermark` and the changes AddChanges() made (none
  // when it was not called). They join the state table when the next batch starts.
  Status SaveState(int64_t batch_id, std::optional<int64_t> watermark);
  // Fills kStreamInput from the state table and `on_time` (the batch's rows not late), then
  // saves batch `batch_id`'s state; `previous` is the watermark before the batch.
  Status FillInput(int64_t batch_id, std::optional<int64_t> previous, std::optional<int64_t> watermark,
                   const std::string& on_time);

  engine::Connection& conn_;
  std::unique_ptr<StatePlan> plan_;
  BatchStateFiles files_;
  std::string where_;
  // The temporary tables of the state and of a batch's changes, named for this stream (a
  // session may run several).
  std::string state_table_;
  std::string changes_table_;
  bool changed_ = false;  // AddChanges() filled changes_table_ in this batch
  // The batch whose state state_table_ holds, with the watermark it left, and the changes of
  // the last batch whose state was written (in changes_table_, when `changed`), with its
  // watermark.
  KeptState kept_;
  std::optional<int64_t> state_watermark_;
  struct Pending {
    std::optional<int64_t> watermark;
    bool changed = false;
  };
  Pending pending_;
};

}  // namespace basin::stream
