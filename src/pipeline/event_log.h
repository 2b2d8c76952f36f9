// A pipeline's event log (docs/pipelines.md, "Event log"): a Delta table of the pipeline's
// schema named `<pipeline>_event_log`, made on the first run and owned by the pipeline,
// that every run appends to and SQL reads like any table:
//
//   SELECT flow, sum(rows_written) FROM sales_event_log WHERE event_type = 'flow_progress' GROUP BY ALL;
//
// One row per event, its kind in event_type:
// - update_start / update_end: a run (its update_id), its trigger and, at the end, its
//   outcome (completed, failed, cancelled), duration and error;
// - lineage: a table a flow reads (source) and the dataset it writes, with the flow's name;
// - flow_progress: a micro-batch of a streaming flow (batch_id, rows_in, rows_written,
//   dead_letters, quarantined, duration_ms, backlog: the records its source held beyond the
//   batch), or a materialized view's refresh (refresh: incremental, full or unchanged, and
//   why in message), or an INSERT INTO ONCE flow's load;
// - expectation: per flow_progress, each expectation of the table: passed_rows, failed_rows
//   and the action taken (warn, drop row, fail update, quarantine);
// - error: a flow that failed, and why.
// A streaming batch's expectation events commit before the batch, with txn(<the flow's
// stream id>/expectations, batch id), and its flow_progress event after it, with txn(<stream
// id>/events, batch id): a batch run again after a crash adds them at most once.
//
// Thread safety: one thread, the session's; Fork() gives another thread its own.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "basin/clock.h"
#include "basin/status.h"
#include "delta/actions.h"
#include "sql/session.h"

namespace basin::pipeline {

struct Event {
  std::string type;            // update_start, update_end, lineage, flow_progress, expectation, error
  std::string level = "INFO";  // INFO, WARN (expectations with failed rows), ERROR
  std::string flow;
  std::string dataset;
  std::optional<int64_t> batch_id;
  std::optional<int64_t> rows_in, rows_written, dead_letters, quarantined, duration_ms, backlog;
  std::string expectation, action;
  std::optional<int64_t> passed_rows, failed_rows;
  std::string source;   // lineage: the table read
  std::string refresh;  // materialized views: incremental, full, unchanged
  std::string outcome;  // update_end: completed, failed, cancelled
  std::string message;
};

// The event log table's name in the pipeline's schema.
std::string EventLogTableName(const std::string& pipeline);

class EventLog {
 public:
  // The log of pipeline `pipeline` in `schema`, created when absent (with the table property
  // basin.pipeline = `pipeline`); its events carry `update_id`.
  static Result<std::unique_ptr<EventLog>> Open(sql::Session& session, const std::string& schema,
                                                const std::string& pipeline, std::string update_id,
                                                std::shared_ptr<const Clock> clock);

  // Appends `events`: with `txn`, in one commit carrying it with the events held and
  // deferred (only those when a commit with that txn landed already); without, they are held
  // until the next commit, so that a run's own events cost no commit of their own.
  Status Append(const std::vector<Event>& events,
                const std::optional<delta::SetTransaction>& txn = std::nullopt);
  // Appends `events` with `txn` in the log's next commit (Flush(), or the next Append() or
  // AppendDeferred()), with the events held then: a batch's flow_progress and the next
  // event share a commit. A crash before then loses them.
  Status AppendDeferred(const std::vector<Event>& events, const delta::SetTransaction& txn);
  // Commits the events held and deferred, if any.
  Status Flush();
  const std::string& update_id() const { return update_id_; }

  // The same update's log, appended to through `session` (another thread's): its events
  // numbered in one sequence with this log's.
  std::unique_ptr<EventLog> Fork(sql::Session& session) const {
    return std::unique_ptr<EventLog>(new EventLog(session, table_, update_id_, clock_, sequence_));
  }

 private:
  EventLog(sql::Session& session, std::string table, std::string update_id,
           std::shared_ptr<const Clock> clock, std::shared_ptr<std::atomic<int64_t>> sequence)
      : session_(session),
        table_(std::move(table)),
        update_id_(std::move(update_id)),
        clock_(std::move(clock)),
        sequence_(std::move(sequence)) {}

  sql::Session& session_;
  const std::string table_;  // quoted
  const std::string update_id_;
  const std::shared_ptr<const Clock> clock_;
  const std::shared_ptr<std::atomic<int64_t>> sequence_;  // events appended in this update
  std::vector<std::string> held_;  // rows (SQL) of events appended without a txn, not yet committed
  struct Deferred {
    std::vector<std::string> rows;
    delta::SetTransaction txn;
  };
  std::optional<Deferred> deferred_;  // AppendDeferred's, not yet committed

  // The row of `event`, numbered and stamped now.
  std::string Row(const Event& event);
  std::vector<std::string> Rows(const std::vector<Event>& events);
  Status CommitDeferred();
  // Commits `rows` and the events held with `txn`.
  Status CommitWithHeld(std::vector<std::string> rows, const delta::SetTransaction& txn);
  // Commits `rows`: the rows written (0 when `txn` had landed already).
  Result<int64_t> Commit(const std::vector<std::string>& rows,
                         const std::optional<delta::SetTransaction>& txn);
};

}  // namespace basin::pipeline
