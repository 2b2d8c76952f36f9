#include "cli/shell.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <vector>

// libedit's readline compatibility header; after <cstdio>, which it needs.
#include <editline/readline.h>

#include "basin/session.h"
#include "cli/query_monitor.h"

namespace basin::cli {

namespace {

constexpr const char* kPrompt = "basin> ";
constexpr const char* kContinuationPrompt = "  ...> ";
constexpr int kHistoryEntries = 1000;

constexpr const char* kHelp = R"(Enter SQL statements ending with ';' (they may span several lines).
Delta tables are read with delta_scan('path' [, version => N | timestamp => '...']);
DESCRIBE HISTORY delta_scan('path') and DESCRIBE DETAIL delta_scan('path') describe them.

.help                      show this text
.quit, .exit               leave the shell (or press Ctrl-D)
.format table|csv|json     how results are printed
.timer on|off              print each statement's run time
.stats on|off              print how many data files each scan read (data skipping)

Ctrl-C stops the running statement; at the prompt it discards the input being typed.
)";

// readline() hands out malloc'd lines.
std::optional<std::string> ReadLine(const char* prompt) {
  char* raw = readline(prompt);
  if (raw == nullptr) return std::nullopt;
  std::string line(raw);
  std::free(raw);
  return line;
}

std::vector<std::string> Words(const std::string& line) {
  std::istringstream stream(line);
  std::vector<std::string> words;
  for (std::string word; stream >> word;) words.push_back(word);
  return words;
}

Result<bool> ParseOnOff(const std::vector<std::string>& words) {
  if (words.size() == 2 && words[1] == "on") return true;
  if (words.size() == 2 && words[1] == "off") return false;
  return Status::InvalidArgument("usage: " + words[0] + " on|off");
}

bool IsBlank(const std::string& text) { return text.find_first_not_of(" \t\r\n") == std::string::npos; }

}  // namespace

std::string DefaultHistoryPath() {
  const char* home = std::getenv("HOME");
  return home != nullptr && *home != '\0' ? std::string(home) + "/.basin_history" : std::string();
}

Shell::Shell(StatementRunner& runner, std::string history_path)
    : runner_(runner), history_path_(std::move(history_path)) {}

void Shell::Run() {
  InstallInterruptHandler();
  using_history();
  stifle_history(kHistoryEntries);
  if (!history_path_.empty()) read_history(history_path_.c_str());
  std::cout << "Basin shell. Statements end with ';'. Type .help for help, .quit to leave.\n";
  while (std::optional<std::string> input = ReadInput()) {
    RememberInput(*input);
    if (input->starts_with(".")) {
      if (RunDotCommand(*input) == DotResult::kQuit) break;
      continue;
    }
    RunStatements(*input);
  }
  std::cout << '\n';
}

std::optional<std::string> Shell::ReadInput() {
  std::string input;
  ClearInterruptRequest();
  while (true) {
    std::optional<std::string> line = ReadLine(input.empty() ? kPrompt : kContinuationPrompt);
    // libedit ends readline() on SIGINT as on end of input; the flag tells them apart.
    if (InterruptRequested()) {  // Ctrl-C while typing: start over
      ClearInterruptRequest();
      input.clear();
      std::cout << std::endl;
      continue;
    }
    if (!line) return std::nullopt;
    if (input.empty()) {
      if (IsBlank(*line)) continue;
      if (line->starts_with(".")) return *line;
    }
    input += input.empty() ? *line : "\n" + *line;
    if (IsCompleteInput(input)) return input;
  }
}

Shell::DotResult Shell::RunDotCommand(const std::string& line) {
  std::vector<std::string> words = Words(line);
  if (words[0] == ".quit" || words[0] == ".exit") return DotResult::kQuit;
  if (words[0] == ".help") {
    PrintHelp();
    return DotResult::kContinue;
  }
  Status status = ApplySetting(words);
  if (!status.ok()) WriteError(status, std::cerr);
  return DotResult::kContinue;
}

Status Shell::ApplySetting(const std::vector<std::string>& words) {
  RunnerSettings& settings = runner_.settings();
  const std::string& command = words[0];
  if (command == ".format") {
    if (words.size() != 2) return Status::InvalidArgument("usage: .format table|csv|json");
    ASSIGN_OR_RETURN(settings.format, ParseOutputFormat(words[1]));
  } else if (command == ".timer") {
    ASSIGN_OR_RETURN(settings.show_timing, ParseOnOff(words));
  } else if (command == ".stats") {
    ASSIGN_OR_RETURN(settings.show_stats, ParseOnOff(words));
  } else {
    return Status::InvalidArgument("unknown command '" + command + "' (try .help)");
  }
  return Status::OK();
}

void Shell::RunStatements(const std::string& input) {
  ClearInterruptRequest();
  Status status = runner_.Run(input);
  if (!status.ok()) WriteError(status, std::cerr);
}

void Shell::PrintHelp() const { std::cout << kHelp << std::flush; }

void Shell::RememberInput(const std::string& input) {
  add_history(input.c_str());
  if (!history_path_.empty()) write_history(history_path_.c_str());
}

}  // namespace basin::cli
