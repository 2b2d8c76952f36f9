// The interactive shell of `basin sql`: line editing and history (libedit), statements
// that end with ';' and may span lines, dot commands (.help, .quit, .format, .timer,
// .stats), and Ctrl-C that interrupts the running statement instead of the shell.
//
// Thread safety: runs on the main thread; owns the terminal while it runs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/statement_runner.h"

namespace basin::cli {

class Shell {
 public:
  // `history_path` empty: no history file.
  Shell(StatementRunner& runner, std::string history_path);

  // Reads and runs input until .quit or end of input. Errors are printed, not returned:
  // the shell carries on after a failed statement.
  void Run();

 private:
  enum class DotResult { kContinue, kQuit };

  // One complete input (statements ending with ';', or a dot command), or nullopt at end
  // of input.
  std::optional<std::string> ReadInput();
  DotResult RunDotCommand(const std::string& line);
  // .format, .timer, .stats; InvalidArgument with the usage for anything else.
  Status ApplySetting(const std::vector<std::string>& words);
  void RunStatements(const std::string& input);
  void PrintHelp() const;
  void RememberInput(const std::string& input);

  StatementRunner& runner_;
  std::string history_path_;
};

// "$HOME/.basin_history", or empty when HOME is unset.
std::string DefaultHistoryPath();

}  // namespace basin::cli
