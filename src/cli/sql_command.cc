// `basin sql`: where the statements come from, and running them.
#include <unistd.h>

#include <iostream>
#include <iterator>

#include "cli/command_support.h"
#include "cli/commands.h"
#include "cli/query_monitor.h"
#include "cli/shell.h"
#include "cli/statement_runner.h"

namespace basin::cli {

namespace {

std::string ReadStdin() {
  return {std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>()};
}

Result<RunnerSettings> MakeRunnerSettings(const SqlCommandOptions& options) {
  RunnerSettings settings;
  ASSIGN_OR_RETURN(settings.format, ParseOutputFormat(options.format));
  settings.show_stats = options.show_stats;
  settings.show_timing = options.show_timing;
  settings.show_progress = isatty(STDERR_FILENO) != 0;
  return settings;
}

Status RunSql(const SqlCommandOptions& options) {
  ASSIGN_OR_RETURN(RunnerSettings settings, MakeRunnerSettings(options));
  ASSIGN_OR_RETURN(std::unique_ptr<Session> session, Session::Open({.warehouse = options.warehouse_dir,
                                                                    .data_skipping = options.data_skipping,
                                                                    .track_progress = settings.show_progress,
                                                                    .user = options.user}));
  StatementRunner runner(*session, settings, std::cout, std::cerr);
  if (!options.command.empty()) return runner.Run(options.command);
  if (!options.file.empty()) {
    ASSIGN_OR_RETURN(std::string text, ReadSqlFile(options.file));
    return runner.Run(text);
  }
  if (isatty(STDIN_FILENO) != 0) {
    Shell shell(runner, DefaultHistoryPath());
    shell.Run();
    return Status::OK();
  }
  return runner.Run(ReadStdin());
}

}  // namespace

int RunSqlCommand(const SqlCommandOptions& options) { return ExitStatus(RunSql(options)); }

}  // namespace basin::cli
