#include "sql/statement_timeout.h"

#include <chrono>

namespace basin::sql {
namespace {

// A statement's rows, read while its deadline holds.
class GuardedStream final : public engine::QueryStream {
 public:
  GuardedStream(StatementTimeout& timeout, uint64_t started, std::unique_ptr<engine::QueryStream> rows)
      : timeout_(timeout), started_(started), rows_(std::move(rows)) {}
  ~GuardedStream() override { (void)timeout_.Finish(started_, Status::OK()); }

  const std::vector<std::string>& column_names() const override { return rows_->column_names(); }
  const std::vector<std::string>& column_types() const override { return rows_->column_types(); }
  Result<bool> Next(std::vector<std::vector<std::optional<std::string>>>* rows) override {
    Result<bool> more = rows_->Next(rows);
    if (!more.ok()) return timeout_.Finish(started_, more.status());
    if (!*more) (void)timeout_.Finish(started_, Status::OK());
    return more;
  }

 private:
  StatementTimeout& timeout_;
  const uint64_t started_;
  std::unique_ptr<engine::QueryStream> rows_;
};

}  // namespace

StatementTimeout::StatementTimeout(engine::Connection& conn, int64_t default_ms)
    : default_ms_(default_ms), ms_(default_ms), watchdog_([&conn] { conn.Interrupt(); }) {}

uint64_t StatementTimeout::Start() {
  if (ms_ <= 0) return 0;
  return watchdog_.Arm(std::chrono::milliseconds(ms_));
}

Status StatementTimeout::Finish(uint64_t started, Status status) {
  if (started == 0) return status;
  watchdog_.Disarm(started);
  if (status.code() == ErrorCode::kCancelled && watchdog_.expired(started)) {
    return Status::Cancelled("canceling statement due to statement timeout");
  }
  return status;
}

std::unique_ptr<engine::QueryStream> StatementTimeout::Guard(uint64_t started,
                                                             std::unique_ptr<engine::QueryStream> rows) {
  if (started == 0) return rows;
  return std::make_unique<GuardedStream>(*this, started, std::move(rows));
}

}  // namespace basin::sql
