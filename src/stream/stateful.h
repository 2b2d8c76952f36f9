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

  // The watermark the batch before `batch_id` left (nullopt: none yet), with its state's rows
  // loaded into the state table.
  Result<std::optional<int64_t>> LoadState(int64_t batch_id);
  // Writes batch `batch_id`'s state: the rows of `rows_sql` (none when nullopt) and
  // `watermark`; deletes the state two batches back.
  Status SaveState(int64_t batch_id, std::optional<int64_t> watermark,
                   const std::optional<std::string>& rows_sql);
  // Fills kStreamInput from the state table and `on_time` (the batch's rows not late), then
  // saves batch `batch_id`'s state; `previous` is the watermark before the batch.
  Status FillInput(int64_t batch_id, std::optional<int64_t> previous, std::optional<int64_t> watermark,
                   const std::string& on_time);

  engine::Connection& conn_;
  std::unique_ptr<StatePlan> plan_;
  BatchStateFiles files_;
  std::string where_;
};

}  // namespace basin::stream
