// A small SQL lexer: enough of DuckDB's lexical rules (strings, E'' strings, quoted
// identifiers, -- and /* */ comments, $tag$ dollar quotes) to split statement text on ';'
// and to find delta_scan(...) calls outside strings and comments, with their exact spans.
//
// Thread safety: functions of their arguments.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace basin::sql {

struct Token {
  enum class Kind { kIdentifier, kQuotedIdentifier, kString, kNumber, kOperator, kPunctuation };
  Kind kind;
  std::string text;  // identifiers and strings unquoted/unescaped; others as written
  size_t begin = 0;  // byte offsets in the input
  size_t end = 0;
};

// Tokens of `text`, without whitespace and comments. InvalidArgument (naming the byte
// offset) for an unterminated string, identifier, comment or dollar quote.
Result<std::vector<Token>> Tokenize(std::string_view text);

struct Statement {
  std::string text;  // from its first token to its last, without the ';'
  int line = 1;      // 1-based line of its first token in the input
};

// The statements in `text`, split on ';' outside strings and comments, empty ones dropped.
// InvalidArgument for an unterminated string, identifier, comment or dollar quote.
Result<std::vector<Statement>> SplitStatements(std::string_view text);

// True when `text` holds at least one statement and nothing but whitespace and comments
// follows its last top-level ';': what an interactive shell waits for before running input.
// Input that ends inside a string or comment is not complete.
bool IsCompleteInput(std::string_view text);

// delta_scan('path' [, version => N | , timestamp => '...'])
struct DeltaScanCall {
  size_t begin = 0;  // offset of "delta_scan"
  size_t end = 0;    // one past the closing ')'
  std::string path;
  std::optional<int64_t> version;
  std::optional<std::string> timestamp;
};

// Every delta_scan call in one statement, in order. InvalidArgument for a call whose
// arguments are not of the forms above.
Result<std::vector<DeltaScanCall>> FindDeltaScanCalls(std::string_view statement);

}  // namespace basin::sql
