#include "pipeline/event_log.h"

#include <fmt/format.h>

#include <utility>

#include "common/strings.h"
#include "sql/grammar/parse.h"
#include "sql/statements.h"
#include "stream/source.h"

namespace basin::pipeline {
namespace {

constexpr char kColumns[] =
    "update_id VARCHAR, sequence BIGINT, event_time TIMESTAMP, event_type VARCHAR, level VARCHAR, flow "
    "VARCHAR, "
    "dataset VARCHAR, batch_id BIGINT, rows_in BIGINT, rows_written BIGINT, dead_letters BIGINT, quarantined "
    "BIGINT, duration_ms BIGINT, backlog BIGINT, expectation VARCHAR, action VARCHAR, passed_rows BIGINT, "
    "failed_rows BIGINT, source VARCHAR, refresh VARCHAR, outcome VARCHAR, message VARCHAR";

std::string Text(const std::string& value) { return value.empty() ? "NULL" : QuoteLiteral(value); }
std::string Number(const std::optional<int64_t>& value) { return value ? std::to_string(*value) : "NULL"; }

}  // namespace

std::string EventLogTableName(const std::string& pipeline) { return pipeline + "_event_log"; }

Result<std::unique_ptr<EventLog>> EventLog::Open(sql::Session& session, const std::string& schema,
                                                 const std::string& pipeline, std::string update_id,
                                                 std::shared_ptr<const Clock> clock) {
  const std::string table = QuoteIdentifier(schema) + "." + QuoteIdentifier(EventLogTableName(pipeline));
  ASSIGN_OR_RETURN(std::optional<catalog::TableEntry> existing,
                   sql::LookupTarget(session.context(), {"", schema, EventLogTableName(pipeline)}));
  if (!existing) {  // made on the first run
    RETURN_IF_ERROR(session
                        .Execute("CREATE TABLE IF NOT EXISTS " + table + " (" + kColumns + ") COMMENT " +
                                 QuoteLiteral("the event log of pipeline " + pipeline) +
                                 " TBLPROPERTIES ('basin.pipeline' = " + QuoteLiteral(pipeline) + ")")
                        .status()
                        .WithContext("the event log " + schema + "." + EventLogTableName(pipeline)));
  }
  return std::unique_ptr<EventLog>(new EventLog(session, table, std::move(update_id), std::move(clock),
                                                std::make_shared<std::atomic<int64_t>>(0)));
}

Status EventLog::Append(const std::vector<Event>& events, const std::optional<delta::SetTransaction>& txn) {
  if (!txn) {
    for (const Event& event : events) held_.push_back(Row(event));
    return Status::OK();
  }
  RETURN_IF_ERROR(CommitDeferred());
  return CommitWithHeld(Rows(events), *txn);
}

Status EventLog::AppendDeferred(const std::vector<Event>& events, const delta::SetTransaction& txn) {
  RETURN_IF_ERROR(CommitDeferred());
  deferred_ = Deferred{Rows(events), txn};
  return Status::OK();
}

Status EventLog::Flush() {
  if (deferred_) return CommitDeferred();
  if (held_.empty()) return Status::OK();
  RETURN_IF_ERROR(Commit(held_, std::nullopt).status());
  held_.clear();
  return Status::OK();
}

Status EventLog::CommitDeferred() {
  if (!deferred_) return Status::OK();
  Deferred deferred = std::move(*deferred_);
  deferred_.reset();
  return CommitWithHeld(std::move(deferred.rows), deferred.txn);
}

Status EventLog::CommitWithHeld(std::vector<std::string> rows, const delta::SetTransaction& txn) {
  // When the txn had landed already (a batch run again), nothing of the commit is written,
  // and the events held go in a commit of their own.
  const size_t held = held_.size();
  rows.insert(rows.begin(), std::make_move_iterator(held_.begin()), std::make_move_iterator(held_.end()));
  held_.clear();
  ASSIGN_OR_RETURN(int64_t written, Commit(rows, txn));
  if (written > 0 || held == 0) return Status::OK();
  rows.resize(held);
  return Commit(rows, std::nullopt).status();
}

std::vector<std::string> EventLog::Rows(const std::vector<Event>& events) {
  std::vector<std::string> rows;
  rows.reserve(events.size());
  for (const Event& event : events) rows.push_back(Row(event));
  return rows;
}

std::string EventLog::Row(const Event& e) {
  return fmt::format(
      "({}, {}, epoch_ms({}), {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {})",
      QuoteLiteral(update_id_), (*sequence_)++, clock_->NowMs(), Text(e.type), Text(e.level), Text(e.flow),
      Text(e.dataset), Number(e.batch_id), Number(e.rows_in), Number(e.rows_written), Number(e.dead_letters),
      Number(e.quarantined), Number(e.duration_ms), Number(e.backlog), Text(e.expectation), Text(e.action),
      Number(e.passed_rows), Number(e.failed_rows), Text(e.source), Text(e.refresh), Text(e.outcome),
      Text(e.message));
}

Result<int64_t> EventLog::Commit(const std::vector<std::string>& rows,
                                 const std::optional<delta::SetTransaction>& txn) {
  if (rows.empty()) return 0;
  ASSIGN_OR_RETURN(sql::grammar::ParsedStatement insert,
                   sql::grammar::ParseStatement("INSERT INTO " + table_ + " VALUES " +
                                                fmt::format("{}", fmt::join(rows, ", "))));
  Result<sql::StatementResult> result = session_.ExecuteParsed(insert, txn);
  if (!result.ok()) return result.status().WithContext("the event log");
  return stream::ReportedInteger(result->result, "num_affected_rows").value_or(0);
}

}  // namespace basin::pipeline
