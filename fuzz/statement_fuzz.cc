// libFuzzer target: arbitrary text as SQL to Basin's statement reading: DuckDB's tokens
// with their ranges, the script splitter, the shell's completeness check, the slot checks,
// the time-travel and STREAM rewrites (both: the calls kept, and read from one relation), and Basin's grammar
// on every statement of the script. Any of them may refuse the text; a crash, a hang, a sanitizer report, or
// a result that breaks its contract (a range outside the input, statements that overlap or are not the
// script's text, a parse error without a line and column) is a bug.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/sql_text.h"
#include "sql/grammar/desugar.h"
#include "sql/grammar/parse.h"

namespace {

using basin::engine::SqlToken;

void Check(bool invariant) {
  if (!invariant) __builtin_trap();
}

bool IsSpanOf(std::string_view input, size_t begin, size_t end) { return begin < end && end <= input.size(); }

// Tokens lie inside the input, in order, never overlapping.
void CheckTokens(std::string_view input, const std::vector<SqlToken>& tokens) {
  size_t previous_end = 0;
  for (const SqlToken& t : tokens) {
    Check(IsSpanOf(input, t.begin, t.end) && t.begin >= previous_end);
    previous_end = t.end;
  }
}

// Statements are the script's own text, in order, never overlapping, never empty; and
// each is parsed by the grammar, whose syntax errors name a line and column.
void CheckScript(std::string_view input) {
  const std::vector<basin::engine::ScriptStatement> statements = basin::engine::SplitSqlScript(input);
  size_t previous_end = 0;
  for (const auto& statement : statements) {
    Check(!statement.text.empty() && statement.offset >= previous_end);
    Check(input.substr(statement.offset, statement.text.size()) == statement.text);
    previous_end = statement.offset + statement.text.size();
    auto parsed = basin::sql::grammar::ParseStatement(input, statement);
    if (parsed.ok()) {
      Check(parsed->text == statement.text);
      for (const auto& stream : parsed->streams) Check(stream.offset < parsed->duckdb_sql.size());
    } else if (parsed.status().code() == basin::ErrorCode::kInvalidArgument &&
               parsed.status().message().find("syntax error") != std::string::npos) {
      Check(parsed.status().message().starts_with("line "));
    }
  }
}

void CheckSlots(std::string_view input) {
  using basin::engine::SqlSlot;
  for (SqlSlot slot : {SqlSlot::kExpression, SqlSlot::kExpressionList, SqlSlot::kQuery, SqlSlot::kType}) {
    if (auto error = basin::engine::CheckSqlSlot(input, slot)) Check(error->offset <= input.size());
  }
}

// Both rewrites: the STREAM calls kept, and a stateful stream's, every source read from one
// relation (which leaves no STREAM source behind, and a relation for each).
void CheckDesugar(std::string_view input, const std::vector<SqlToken>& tokens) {
  for (std::string_view relation : {std::string_view(), std::string_view("basin_stream_input")}) {
    std::optional<basin::sql::grammar::Desugared> desugared =
        basin::sql::grammar::Desugar(input, tokens, relation);
    if (!desugared) continue;
    for (const auto& stream : desugared->streams) {
      Check(stream.offset < desugared->sql.size() && !stream.source.empty() && !stream.relation.empty());
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  auto tokens = basin::engine::TokenizeSql(input);
  if (tokens.ok()) {
    CheckTokens(input, tokens.value());
    CheckDesugar(input, tokens.value());
  } else {
    Check(tokens.error().offset <= input.size());
  }
  if (basin::engine::IsCompleteSqlInput(input)) Check(tokens.ok());
  CheckScript(input);
  CheckSlots(input);
  return 0;
}
