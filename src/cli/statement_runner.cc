#include "cli/statement_runner.h"

#include <fmt/format.h>

#include <chrono>

#include "cli/query_monitor.h"

namespace basin::cli {

StatementRunner::StatementRunner(Session& session, RunnerSettings settings, std::ostream& out,
                                 std::ostream& err)
    : session_(session), settings_(settings), out_(out), err_(err) {
  session_.SetProgressCallback([this](const CommandProgress& progress) {
    if (monitor_ != nullptr) monitor_->SetPhase(progress);
  });
}

StatementRunner::~StatementRunner() { session_.SetProgressCallback(nullptr); }

Status StatementRunner::Run(std::string_view text) {
  const std::vector<StatementText> statements = SplitStatements(text);
  for (size_t i = 0; i < statements.size(); i++) {
    Status status = RunOne(text, statements[i]);
    if (status.ok()) continue;
    if (statements.size() == 1) return status;
    return status.WithContext(fmt::format("statement {} (line {})", i + 1, statements[i].line));
  }
  return Status::OK();
}

Status StatementRunner::RunOne(std::string_view script, const StatementText& statement) {
  auto start = std::chrono::steady_clock::now();
  Result<StatementResult> result = [&] {
    QueryMonitor monitor(session_, MonitorOptions{.show_progress = settings_.show_progress});
    monitor_ = &monitor;
    auto executed = session_.ExecuteStatement(script, statement, /*stream=*/true);
    // Rows are printed as they come, while the monitor still watches the query.
    if (executed.ok()) {
      Status printed = Report(*executed);
      if (!printed.ok()) executed = printed;
    }
    monitor_ = nullptr;
    return executed;
  }();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  RETURN_IF_ERROR(result);
  if (settings_.show_timing) err_ << fmt::format("Run Time: {:.3f} s\n", seconds) << std::flush;
  return Status::OK();
}

Status StatementRunner::Report(StatementResult& result) {
  for (const std::string& notice : result.notices) err_ << "Notice: " << notice << "\n";
  size_t files_read = result.files_read;
  size_t files_total = result.files_total;
  if (result.rows) {
    if (result.returns_rows) {
      RETURN_IF_ERROR(WriteStream(*result.rows, settings_.format, out_));
    } else {
      std::vector<Row> rows;
      while (true) {
        ASSIGN_OR_RETURN(bool more, result.rows->Next(&rows));
        if (!more) break;
      }
    }
    result.rows.reset();
    ScanStats stats = session_.TakeScanStats();
    files_read = stats.files_read;
    files_total = stats.files_total;
  } else if (result.returns_rows) {
    WriteResult(result.result, settings_.format, out_);
  }
  if (settings_.show_stats && files_total > 0) {
    err_ << fmt::format("Files: {} of {} read ({} skipped by data skipping)\n", files_read, files_total,
                        files_total - files_read)
         << std::flush;
  }
  return Status::OK();
}

}  // namespace basin::cli
