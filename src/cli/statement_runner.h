// StatementRunner: runs SQL text through a Session one statement at a time and prints each
// row-returning statement's result as soon as it is done. Shared by `basin sql` (batch)
// and the interactive shell.
//
// Results go to `out`; timing and data-skipping lines go to `err` so that stdout holds
// only data. Thread safety: one thread at a time, like the Session it drives.
#pragma once

#include <ostream>
#include <string_view>

#include "basin/session.h"
#include "cli/output_format.h"

namespace basin::cli {

class QueryMonitor;

struct RunnerSettings {
  OutputFormat format = OutputFormat::kTable;
  bool show_timing = false;    // "Run Time: 0.012 s" after each statement
  bool show_stats = false;     // "Files: 3 of 40 read (37 skipped by data skipping)"
  bool show_progress = false;  // progress line for slow statements (stderr must be a terminal)
};

class StatementRunner {
 public:
  StatementRunner(Session& session, RunnerSettings settings, std::ostream& out, std::ostream& err);
  ~StatementRunner();
  StatementRunner(const StatementRunner&) = delete;
  StatementRunner& operator=(const StatementRunner&) = delete;

  // Runs the statements in `text` in order and stops at the first failure, whose status
  // names the statement and its line when `text` holds several.
  Status Run(std::string_view text);

  RunnerSettings& settings() { return settings_; }

 private:
  Status RunOne(std::string_view script, const StatementText& statement);
  // Prints the result (reading a streamed one to its end) and the notices and stats.
  Status Report(StatementResult& result);

  Session& session_;
  QueryMonitor* monitor_ = nullptr;  // the running statement's, for command progress
  RunnerSettings settings_;
  std::ostream& out_;
  std::ostream& err_;
};

}  // namespace basin::cli
