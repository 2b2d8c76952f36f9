// Splits SQL text into statements at top-level semicolons, so that the CLI can run and
// print them one at a time and the shell knows when a statement is complete.
//
// Semicolons inside 'string literals', "quoted identifiers", $tag$dollar-quoted$tag$
// strings, -- line comments and /* block comments */ do not end a statement.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace basin::cli {

struct SqlStatement {
  std::string text;  // without the terminating ';', trimmed
  int line = 1;      // 1-based line of the statement's first character in the input
};

// Statements in order; text that is only whitespace and comments is dropped. The last
// statement does not need a ';'.
std::vector<SqlStatement> SplitStatements(std::string_view text);

// True when `text` holds at least one statement and everything after its last top-level
// ';' is whitespace or comments: what the shell waits for before running the input.
bool IsCompleteInput(std::string_view text);

}  // namespace basin::cli
