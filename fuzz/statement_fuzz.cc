// libFuzzer target: arbitrary text as SQL to Basin's own statement reading: the lexer,
// statement splitting, the shell's completeness check, the delta_scan and table_changes
// call finders, the warehouse-name rewrite, and every TokenCursor operation from every
// token (up to kMaxStarts of them). Any of them may refuse the text; a crash, a hang, a
// sanitizer report, or a result that breaks its contract (a span outside the input, a cursor
// past its tokens, a parse that disagrees with the lexer) is a bug.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/duckdb.h"
#include "sql/lexer.h"
#include "sql/table_references.h"
#include "sql/token_cursor.h"

namespace {

using basin::sql::Token;
using basin::sql::TokenCursor;

// Every cursor operation runs from each of the first kMaxStarts tokens (and the end), so one
// input costs O(kMaxStarts * tokens), not O(tokens^2).
constexpr size_t kMaxStarts = 64;

void Check(bool invariant) {
  if (!invariant) __builtin_trap();
}

bool IsSpanOf(std::string_view input, size_t begin, size_t end) { return begin < end && end <= input.size(); }

void CheckTokens(std::string_view input, const std::vector<Token>& tokens) {
  size_t previous_end = 0;
  for (const Token& t : tokens) {
    Check(IsSpanOf(input, t.begin, t.end) && t.begin >= previous_end);
    previous_end = t.end;
  }
}

void CheckSplit(std::string_view input, bool tokenized) {
  auto statements = basin::sql::SplitStatements(input);
  Check(statements.ok() == tokenized);
  if (!statements.ok()) return;
  const int lines = 1 + static_cast<int>(std::count(input.begin(), input.end(), '\n'));
  int previous_line = 1;
  for (const auto& statement : *statements) {
    Check(!statement.text.empty() && input.find(statement.text) != std::string_view::npos);
    Check(statement.line >= previous_line && statement.line <= lines);
    previous_line = statement.line;
  }
}

void CheckCallFinders(std::string_view input) {
  if (auto calls = basin::sql::FindDeltaScanCalls(input); calls.ok()) {
    for (const auto& call : *calls) {
      Check(IsSpanOf(input, call.begin, call.end));
      Check(!call.version || *call.version >= 0);
      Check(!(call.version && call.timestamp));
    }
  }
  if (auto calls = basin::sql::FindTableChangesCalls(input); calls.ok()) {
    for (const auto& call : *calls) {
      Check(IsSpanOf(input, call.begin, call.end));
      Check(call.name.size() == 1 || call.name.size() == 2);
    }
  }
}

// Each operation from `start`; the cursor must stay within its tokens and every text it
// returns must be the input's.
void ExerciseCursor(std::string_view input, TokenCursor& cursor, size_t start, size_t token_count) {
  auto within = [&] { Check(cursor.position() <= token_count); };
  auto from_input = [&](const std::string& text) { Check(text.size() <= input.size()); };

  cursor.Reset(start);
  (void)cursor.Peek();
  (void)cursor.Peek(3);
  (void)cursor.PeekKeywords({"VERSION", "AS", "OF"});
  Check(!cursor.Error("anything").ok());
  if (cursor.AtEnd()) Check(cursor.ExpectEnd().ok());

  const std::vector<std::vector<std::string_view>> keyword_runs = {
      {"CREATE", "TABLE"}, {"IF", "NOT", "EXISTS"}, {"WHEN", "NOT", "MATCHED"}, {"AS"}};
  for (const auto& run : keyword_runs) {
    cursor.Reset(start);
    // initializer_list cannot be built from a vector: the runs are spelled out by length.
    bool accepted = run.size() == 1   ? cursor.AcceptKeywords({run[0]})
                    : run.size() == 2 ? cursor.AcceptKeywords({run[0], run[1]})
                                      : cursor.AcceptKeywords({run[0], run[1], run[2]});
    Check(cursor.position() == (accepted ? start + run.size() : start));
    within();
  }
  cursor.Reset(start);
  (void)cursor.ExpectKeywords({"MERGE", "INTO"});
  within();

  for (std::string_view symbol : {"(", ")", ",", "=", ".", "*"}) {
    cursor.Reset(start);
    (void)cursor.PeekSymbol(symbol);
    (void)cursor.AcceptSymbol(symbol);
    (void)cursor.ExpectSymbol(symbol);
    within();
  }

  cursor.Reset(start);
  if (auto name = cursor.Identifier("a name"); name.ok()) Check(cursor.position() == start + 1);
  cursor.Reset(start);
  if (auto name = cursor.QualifiedName("a table name"); name.ok()) Check(!name->empty());
  within();
  cursor.Reset(start);
  (void)cursor.StringLiteral("a string");
  within();
  cursor.Reset(start);
  (void)cursor.Integer("a version");
  within();
  cursor.Reset(start);
  (void)cursor.Number("a number");
  within();

  cursor.Reset(start);
  if (auto text = cursor.TextUntil("an expression", {"WHEN", "THEN", "ON", "USING", "WHERE"}); text.ok()) {
    Check(!text->empty() && cursor.position() > start);
    from_input(*text);
  }
  within();
  cursor.Reset(start);
  if (auto text = cursor.TextUntil("a value", {}, /*stop_at_comma=*/true); text.ok()) from_input(*text);
  within();

  for (size_t to : {start, start + 1, start + 2, token_count, token_count + 5}) {
    from_input(cursor.TextBetween(start, to));
  }
  cursor.Reset(start);
  from_input(cursor.Rest());
  Check(cursor.AtEnd() && cursor.ExpectEnd().ok());
}

void CheckCursor(std::string_view input, const std::vector<Token>& tokens) {
  TokenCursor cursor(input, tokens);
  const size_t starts = std::min(tokens.size(), kMaxStarts);
  for (size_t start = 0; start < starts; start++) ExerciseCursor(input, cursor, start, tokens.size());
  ExerciseCursor(input, cursor, tokens.size(), tokens.size());
}

// One in-memory DuckDB for the whole run: the rewrite asks DuckDB's parser where tables are.
basin::engine::Connection& Duck() {
  static std::shared_ptr<basin::engine::Database> db = [] {
    basin::engine::DatabaseOptions options;
    options.threads = 1;
    auto opened = basin::engine::Database::Open(options);
    Check(opened.ok());
    return *opened;
  }();
  static std::unique_ptr<basin::engine::Connection> conn = [] {
    auto opened = basin::engine::Connection::Open(db);
    Check(opened.ok());
    return std::move(*opened);
  }();
  return *conn;
}

void CheckRewrite(std::string_view input) {
  // Names of even length are warehouse tables, the rest DuckDB's, so both paths run.
  auto lookup = [](const std::vector<std::string>& name) -> basin::Result<std::optional<std::string>> {
    if (name.back().size() % 2 == 1) return std::optional<std::string>();
    return std::optional<std::string>("/warehouse/" + name.back());
  };
  (void)basin::sql::RewriteTableNames(std::string(input), Duck(), lookup);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  auto tokens = basin::sql::Tokenize(input);
  if (tokens.ok()) CheckTokens(input, *tokens);
  CheckSplit(input, tokens.ok());
  if (basin::sql::IsCompleteInput(input)) Check(tokens.ok());
  CheckCallFinders(input);
  if (tokens.ok()) CheckCursor(input, *tokens);
  CheckRewrite(input);
  return 0;
}
