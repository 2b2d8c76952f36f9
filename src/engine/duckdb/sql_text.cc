// engine/sql_text.h on DuckDB's parser (its C++ API: Parser::Tokenize, Parser::ParseQuery
// and the syntax tree classes of duckdb/parser/).
#include "engine/sql_text.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <exception>

#include "duckdb.hpp"
#include "duckdb/common/enums/statement_type.hpp"
#include "duckdb/common/error_data.hpp"
#include "duckdb/parser/expression/cast_expression.hpp"
#include "duckdb/parser/expression/columnref_expression.hpp"
#include "duckdb/parser/expression/constant_expression.hpp"
#include "duckdb/parser/keyword_helper.hpp"
#include "duckdb/parser/parser.hpp"
#include "duckdb/parser/query_node/select_node.hpp"
#include "duckdb/parser/statement/copy_statement.hpp"
#include "duckdb/parser/statement/delete_statement.hpp"
#include "duckdb/parser/statement/insert_statement.hpp"
#include "duckdb/parser/statement/merge_into_statement.hpp"
#include "duckdb/parser/statement/select_statement.hpp"
#include "duckdb/parser/statement/set_statement.hpp"
#include "duckdb/parser/statement/transaction_statement.hpp"
#include "duckdb/parser/statement/update_statement.hpp"
#include "duckdb/parser/tableref/basetableref.hpp"
#include "duckdb/parser/tableref/showref.hpp"

namespace basin::engine {

namespace {

using duckdb::SimplifiedToken;
using duckdb::SimplifiedTokenType;

// DuckDB's error as a syntax error: its message without the "Parser Error: " prefix, at
// the position it names (0 when it names none), less `prefix_size` bytes of text Basin
// put in front of the caller's.
SqlSyntaxError SyntaxErrorFrom(const std::exception& ex, size_t prefix_size = 0) {
  duckdb::ErrorData error(ex);
  SqlSyntaxError out;
  out.message = error.RawMessage();
  auto position = error.ExtraInfo().find("position");
  if (position != error.ExtraInfo().end()) {
    size_t at = std::strtoull(position->second.c_str(), nullptr, 10);
    out.offset = at > prefix_size ? at - prefix_size : 0;
  }
  return out;
}

// `text` with the Unicode spaces DuckDB's parser replaces by ' ' (Parser::StripUnicodeSpaces,
// which shortens the text) replaced by as many ' ' as they have bytes, so offsets stay.
std::string SameLengthText(std::string_view text) {
  std::string original(text);
  std::string stripped;
  if (!duckdb::Parser::StripUnicodeSpaces(original, stripped)) return original;
  std::string out;
  out.reserve(original.size());
  size_t j = 0;
  for (size_t i = 0; i < original.size();) {
    if (j < stripped.size() && original[i] == stripped[j]) {
      out += original[i++];
      j++;
      continue;
    }
    // A replaced space: U+00A0 is two bytes (C2 A0), the others three.
    const size_t width =
        std::min<size_t>(static_cast<unsigned char>(original[i]) == 0xC2 ? 2 : 3, original.size() - i);
    out.append(width, ' ');
    i += width;
    j++;
  }
  return out;
}

std::vector<SimplifiedToken> RawTokens(const std::string& text) {
  try {
    return duckdb::Parser::Tokenize(text);
  } catch (const std::exception&) {
    return {};
  }
}

SqlTokenKind KindOf(SimplifiedTokenType type, char first) {
  switch (type) {
    case SimplifiedTokenType::SIMPLIFIED_TOKEN_IDENTIFIER:
      return SqlTokenKind::kIdentifier;
    case SimplifiedTokenType::SIMPLIFIED_TOKEN_NUMERIC_CONSTANT:
      return SqlTokenKind::kNumber;
    case SimplifiedTokenType::SIMPLIFIED_TOKEN_STRING_CONSTANT:
      return SqlTokenKind::kString;
    case SimplifiedTokenType::SIMPLIFIED_TOKEN_KEYWORD: {
      // The scanner's multi-character operators (::, ->, .., **, //) are "keywords" to
      // the simplified tokenizer: their token numbers lie in the keywords' range.
      const auto c = static_cast<unsigned char>(first);
      return std::isalpha(c) || c == '_' || c >= 0x80 ? SqlTokenKind::kKeyword : SqlTokenKind::kOperator;
    }
    default:
      return SqlTokenKind::kOperator;
  }
}

bool IsWordByte(unsigned char c) { return std::isalnum(c) || c == '_' || c == '$' || c >= 0x80; }

// Where the token starting at `begin` ends, by the lexical rules of DuckDB's scanner for
// its kind; `limit` is where the next token starts. A guess that TokenizeSql checks
// against the scanner itself (and corrects when wrong), so it only has to be right in
// practice, never trusted.
size_t GuessTokenEnd(const std::string& s, size_t begin, size_t limit, SimplifiedTokenType type) {
  auto at = [&](size_t i) -> unsigned char { return i < s.size() ? static_cast<unsigned char>(s[i]) : 0; };
  size_t i = begin;
  const unsigned char c = at(i);
  if (type == SimplifiedTokenType::SIMPLIFIED_TOKEN_STRING_CONSTANT) {
    bool escapes = false;
    if ((c == 'E' || c == 'e') && at(i + 1) == '\'') {
      escapes = true;
      i++;
    } else if (std::strchr("XxBbNn", c) != nullptr && c != 0 && at(i + 1) == '\'') {
      i++;
    } else if ((c == 'U' || c == 'u') && at(i + 1) == '&' && at(i + 2) == '\'') {
      i += 2;
    }
    if (at(i) == '$') {
      const size_t tag_end = s.find('$', i + 1);
      if (tag_end == std::string::npos) return limit;
      const std::string tag = s.substr(i, tag_end - i + 1);
      const size_t close = s.find(tag, tag_end + 1);
      return close == std::string::npos ? limit : std::min(limit, close + tag.size());
    }
    // 'a''b', with E'\'' escapes; 'a' <newline> 'b' continues the same constant.
    while (at(i) == '\'') {
      i++;
      while (i < limit) {
        if (escapes && at(i) == '\\') {
          i += 2;
        } else if (at(i) == '\'' && at(i + 1) == '\'') {
          i += 2;
        } else if (at(i) == '\'') {
          break;
        } else {
          i++;
        }
      }
      if (i >= limit) return limit;
      const size_t end = i + 1;
      size_t j = end;
      bool newline = false;
      while (j < limit && std::strchr(" \t\n\r\f", at(j)) != nullptr && at(j) != 0) {
        newline = newline || at(j) == '\n' || at(j) == '\r';
        j++;
      }
      if (!newline || at(j) != '\'' || j >= limit) return end;
      i = j;
    }
    return std::min(limit, i);
  }
  if (c == '"' || ((c == 'U' || c == 'u') && at(i + 1) == '&' && at(i + 2) == '"')) {
    i = s.find('"', i) + 1;
    while (i < limit) {
      if (at(i) == '"' && at(i + 1) == '"') {
        i += 2;
      } else if (at(i) == '"') {
        return i + 1;
      } else {
        i++;
      }
    }
    return limit;
  }
  if (type == SimplifiedTokenType::SIMPLIFIED_TOKEN_NUMERIC_CONSTANT) {
    while (i < limit && (std::isalnum(at(i)) || at(i) == '_' || at(i) == '.' ||
                         ((at(i) == '+' || at(i) == '-') && (at(i - 1) == 'e' || at(i - 1) == 'E')))) {
      i++;
    }
    return std::max(i, begin + 1);
  }
  if (IsWordByte(c) && c != '$') {
    while (i < limit && IsWordByte(at(i))) i++;
    return i;
  }
  if (c == '$' || c == '?') {  // parameters: $1, $name, ?, ?1
    i++;
    while (i < limit && IsWordByte(at(i)) && at(i) != '$') i++;
    return i;
  }
  if (std::strchr("(),;[]{}", c) != nullptr) return begin + 1;
  if (c == '.' || c == ':') {
    if (at(i + 1) == c || (c == ':' && at(i + 1) == '=')) return begin + 2;
    return begin + 1;
  }
  // An operator: the longest run of operator characters, cut before a comment, without
  // trailing '+' / '-' unless it holds a character SQL's own operators lack.
  static constexpr std::string_view kOperatorChars = "~!@#^&|`?+-*/%<>=";
  while (i < limit && kOperatorChars.find(static_cast<char>(at(i))) != std::string_view::npos && at(i) != 0) {
    if (i > begin && ((at(i) == '-' && at(i + 1) == '-') || (at(i) == '/' && at(i + 1) == '*'))) break;
    if (i > begin && at(i) == '*' && at(i - 1) == '/') {
      i--;
      break;
    }
    i++;
  }
  size_t n = i - begin;
  if (n > 1 && (at(begin + n - 1) == '+' || at(begin + n - 1) == '-')) {
    bool unusual = false;
    for (size_t k = begin; k < begin + n; k++)
      unusual = unusual || std::strchr("~!@#^&|`?%", at(k)) != nullptr;
    if (!unusual) {
      while (n > 1 && (at(begin + n - 1) == '+' || at(begin + n - 1) == '-')) n--;
    }
  }
  return begin + std::max<size_t>(n, 1);
}

// Whether s[begin, end) is exactly one token of `type` to DuckDB's scanner, and nothing it
// cannot read (the scanner drops what follows an unterminated string: a sentinel token
// after the text shows it read to the end).
// Kinds, not the scanner's token types, are compared: `->` alone is the scanner's lambda
// arrow, `->/*` its generic operator `->`.
bool IsOneToken(const std::string& s, size_t begin, size_t end, SimplifiedTokenType type) {
  const std::string text = s.substr(begin, end - begin) + "\nx";
  auto tokens = RawTokens(text);
  return tokens.size() == 2 && tokens[0].start == 0 &&
         KindOf(tokens[0].type, text[0]) == KindOf(type, text[0]) && tokens[1].start == text.size() - 1;
}

// Whether s[begin, end) holds only whitespace and complete comments.
bool IsGap(const std::string& s, size_t begin, size_t end) {
  std::string gap = s.substr(begin, end - begin) + "\nx";
  auto tokens = RawTokens(gap);
  return tokens.size() == 1 && tokens[0].start == gap.size() - 1;
}

// Every token's text is what the scanner reads as that one token, and what lies between
// tokens is whitespace and comments: two scans of the whole text, whatever its length.
bool EndsAgreeWithScanner(const std::string& s, const std::vector<SimplifiedToken>& raw,
                          const std::vector<SqlToken>& tokens) {
  std::string joined;
  std::vector<size_t> starts;
  std::string blanked = s;
  for (const SqlToken& t : tokens) {
    starts.push_back(joined.size());
    joined.append(s, t.begin, t.end - t.begin);
    joined += ' ';
    std::fill(blanked.begin() + static_cast<std::ptrdiff_t>(t.begin),
              blanked.begin() + static_cast<std::ptrdiff_t>(t.end), ' ');
  }
  auto again = RawTokens(joined);
  if (again.size() != tokens.size()) return false;
  for (size_t k = 0; k < again.size(); k++) {
    const char first = s[tokens[k].begin];
    if (again[k].start != starts[k] || KindOf(again[k].type, first) != KindOf(raw[k].type, first))
      return false;
  }
  return IsGap(blanked, 0, blanked.size());
}

// The first end after which the token alone is one token and `rest_is_fine` holds for
// the text after it.
template <typename Predicate>
std::optional<size_t> SearchTokenEnd(const std::string& s, size_t begin, size_t limit,
                                     SimplifiedTokenType type, Predicate rest_is_fine) {
  for (size_t end = begin + 1; end <= limit; end++) {
    if (IsOneToken(s, begin, end, type) && rest_is_fine(end)) return end;
  }
  return std::nullopt;
}

// DuckDB's tokens, and where the text its scanner cannot read begins, if it has such.
struct Scan {
  std::vector<SqlToken> tokens;
  std::optional<size_t> unreadable_from;
};

size_t SkipSpaces(const std::string& s, size_t at) {
  while (at < s.size() && std::isspace(static_cast<unsigned char>(s[at]))) at++;
  return at;
}

Scan ScanText(const std::string& s) {
  const std::vector<SimplifiedToken> raw = RawTokens(s);
  Scan out;
  std::vector<SqlToken>& tokens = out.tokens;
  tokens.reserve(raw.size());
  for (size_t k = 0; k < raw.size(); k++) {
    const size_t begin = raw[k].start;
    const size_t limit = k + 1 < raw.size() ? raw[k + 1].start : s.size();
    SqlToken token;
    token.kind = KindOf(raw[k].type, s[begin]);
    token.begin = begin;
    token.end = std::clamp(GuessTokenEnd(s, begin, limit, raw[k].type), begin + 1, limit);
    tokens.push_back(token);
  }
  if (EndsAgreeWithScanner(s, raw, tokens)) return out;
  // Some guess was wrong, or the scanner stopped early (it drops everything after text it
  // cannot read): check each token on its own.
  for (size_t k = 0; k + 1 < tokens.size(); k++) {
    SqlToken& t = tokens[k];
    const size_t limit = tokens[k + 1].begin;
    auto gap_to_next = [&](size_t end) { return IsGap(s, end, limit); };
    if (IsOneToken(s, t.begin, t.end, raw[k].type) && gap_to_next(t.end)) continue;
    // Between two tokens the scanner read there is always an end.
    t.end = SearchTokenEnd(s, t.begin, limit, raw[k].type, gap_to_next).value_or(limit);
  }
  auto gap_to_end = [&](size_t end) { return IsGap(s, end, s.size()); };
  if (tokens.empty()) {
    if (!gap_to_end(0)) out.unreadable_from = SkipSpaces(s, 0);
    return out;
  }
  SqlToken& last = tokens.back();
  if (IsOneToken(s, last.begin, last.end, raw.back().type) && gap_to_end(last.end)) return out;
  if (auto end = SearchTokenEnd(s, last.begin, s.size(), raw.back().type, gap_to_end)) {
    last.end = *end;
    return out;
  }
  // What follows the last token is not whitespace and comments: the scanner stopped there.
  auto nothing_readable = [&](size_t end) { return RawTokens(s.substr(end)).empty(); };
  last.end =
      SearchTokenEnd(s, last.begin, s.size(), raw.back().type, nothing_readable).value_or(last.begin + 1);
  out.unreadable_from = SkipSpaces(s, last.end);
  return out;
}

// The scanner's error for s[from, ...), which it cannot read.
SqlSyntaxError ScannerError(const std::string& s, size_t from) {
  try {
    duckdb::Parser parser;
    parser.ParseQuery(s.substr(from));
  } catch (const std::exception& ex) {
    SqlSyntaxError error = SyntaxErrorFrom(ex);
    error.offset += from;
    return error;
  }
  return SqlSyntaxError{"cannot read the text from here on", from};
}

const duckdb::SelectNode* PlainSelectNode(const duckdb::SQLStatement& statement) {
  if (statement.type != duckdb::StatementType::SELECT_STATEMENT) return nullptr;
  const auto& select = statement.Cast<duckdb::SelectStatement>();
  if (!select.node || select.node->type != duckdb::QueryNodeType::SELECT_NODE) return nullptr;
  return &select.node->Cast<duckdb::SelectNode>();
}

// What keeps "SELECT <text>" from being just a list of expressions, if anything.
std::optional<std::string> NotJustExpressions(const duckdb::SelectNode& node) {
  if (node.from_table && node.from_table->type != duckdb::TableReferenceType::EMPTY_FROM)
    return "a FROM clause";
  if (node.where_clause) return "a WHERE clause";
  if (!node.groups.group_expressions.empty() || !node.groups.grouping_sets.empty())
    return "a GROUP BY clause";
  if (node.having) return "a HAVING clause";
  if (node.qualify) return "a QUALIFY clause";
  if (node.sample) return "a sample";
  if (!node.modifiers.empty()) return "DISTINCT, ORDER BY or LIMIT";
  if (!node.cte_map.map.empty()) return "a WITH clause";
  for (const auto& expression : node.select_list) {
    if (!expression->alias.empty()) return "an alias (" + expression->alias + ")";
    if (expression->GetExpressionClass() == duckdb::ExpressionClass::STAR) return "a star";
  }
  return std::nullopt;
}

std::optional<SqlSyntaxError> ParseSlot(const std::string& text, SqlSlot slot) {
  static constexpr std::string_view kSelect = "SELECT ";
  static constexpr std::string_view kCast = "SELECT CAST(NULL AS ";
  std::string sql;
  size_t prefix = 0;
  switch (slot) {
    case SqlSlot::kExpression:
    case SqlSlot::kExpressionList:
      sql = std::string(kSelect) + text + "\n";
      prefix = kSelect.size();
      break;
    case SqlSlot::kQuery:
      sql = text + "\n";
      break;
    case SqlSlot::kType:
      sql = std::string(kCast) + text + "\n)";
      prefix = kCast.size();
      break;
  }
  duckdb::Parser parser;
  try {
    parser.ParseQuery(sql);
  } catch (const std::exception& ex) {
    SqlSyntaxError error = SyntaxErrorFrom(ex, prefix);
    error.offset = std::min(error.offset, text.size());
    return error;
  }
  if (parser.statements.size() != 1) {
    return SqlSyntaxError{
        parser.statements.empty() ? "expected SQL, found nothing" : "expected one statement", 0};
  }
  const duckdb::SQLStatement& statement = *parser.statements[0];
  if (slot == SqlSlot::kQuery) {
    if (statement.type != duckdb::StatementType::SELECT_STATEMENT) {
      return SqlSyntaxError{"expected a query (SELECT, VALUES, WITH, FROM or TABLE), not a " +
                                duckdb::StatementTypeToString(statement.type) + " statement",
                            0};
    }
    return std::nullopt;
  }
  const duckdb::SelectNode* node = PlainSelectNode(statement);
  const char* expected = slot == SqlSlot::kType ? "a type" : "an expression";
  if (node == nullptr) return SqlSyntaxError{std::string("expected ") + expected + ", not a query", 0};
  if (auto extra = NotJustExpressions(*node)) {
    return SqlSyntaxError{std::string("expected ") + expected + ", found " + *extra, 0};
  }
  if (slot == SqlSlot::kExpression && node->select_list.size() != 1) {
    return SqlSyntaxError{"expected one expression, found " + std::to_string(node->select_list.size()), 0};
  }
  if (slot == SqlSlot::kType) {
    const auto& only = node->select_list;
    bool is_cast = only.size() == 1 && only[0]->GetExpressionClass() == duckdb::ExpressionClass::CAST &&
                   only[0]->Cast<duckdb::CastExpression>().child->GetExpressionClass() ==
                       duckdb::ExpressionClass::CONSTANT;
    if (!is_cast) return SqlSyntaxError{"expected a type", 0};
  }
  return std::nullopt;
}

// --- syntax trees ---

// DuckDB's rendering of an expression, without the parentheses it puts around a whole
// comparison, conjunction or operator ("(t.id = s.id)" -> "t.id = s.id"), when the text
// inside them is the same expression.
std::string Text(const duckdb::ParsedExpression* expression) {
  if (expression == nullptr) return "";
  std::string text = expression->ToString();
  if (text.size() < 2 || text.front() != '(' || text.back() != ')') return text;
  std::string inner = text.substr(1, text.size() - 2);
  duckdb::Parser parser;
  try {
    parser.ParseQuery("SELECT " + inner + "\n");
  } catch (const std::exception&) {
    return text;
  }
  const duckdb::SelectNode* node =
      parser.statements.size() == 1 ? PlainSelectNode(*parser.statements[0]) : nullptr;
  if (node == nullptr || NotJustExpressions(*node) || node->select_list.size() != 1 ||
      node->select_list[0]->ToString() != text) {
    return text;
  }
  return inner;
}

std::vector<std::string> Texts(const duckdb::vector<duckdb::unique_ptr<duckdb::ParsedExpression>>& list) {
  std::vector<std::string> out;
  for (const auto& expression : list) out.push_back(Text(expression.get()));
  return out;
}

std::vector<SqlAssignment> Assignments(const duckdb::UpdateSetInfo& info) {
  std::vector<SqlAssignment> out;
  for (size_t i = 0; i < info.columns.size() && i < info.expressions.size(); i++) {
    out.push_back({info.columns[i], Text(info.expressions[i].get())});
  }
  return out;
}

SqlTableName TableName(const duckdb::BaseTableRef& ref) {
  return {ref.catalog_name, ref.schema_name, ref.table_name};
}

SqlTarget Target(const duckdb::TableRef& ref) {
  SqlTarget out;
  out.alias = ref.alias;
  if (ref.type == duckdb::TableReferenceType::BASE_TABLE)
    out.name = TableName(ref.Cast<duckdb::BaseTableRef>());
  return out;
}

SqlInsert ReadInsert(const duckdb::InsertStatement& statement) {
  SqlInsert out;
  out.ctes = statement.cte_map.ToString();
  out.target = {statement.catalog, statement.schema, statement.table};
  out.columns.assign(statement.columns.begin(), statement.columns.end());
  out.by_name = statement.column_order == duckdb::InsertColumnOrder::INSERT_BY_NAME;
  if (statement.select_statement) out.query = statement.select_statement->ToString();
  out.default_values = statement.default_values;
  if (statement.on_conflict_info) {
    switch (statement.on_conflict_info->action_type) {
      case duckdb::OnConflictAction::NOTHING:
        out.on_conflict = SqlInsert::OnConflict::kNothing;
        break;
      case duckdb::OnConflictAction::UPDATE:
        out.on_conflict = SqlInsert::OnConflict::kUpdate;
        break;
      case duckdb::OnConflictAction::REPLACE:
        out.on_conflict = SqlInsert::OnConflict::kReplace;
        break;
      case duckdb::OnConflictAction::THROW:
        break;
    }
  }
  out.returning = Texts(statement.returning_list);
  return out;
}

SqlUpdate ReadUpdate(const duckdb::UpdateStatement& statement) {
  SqlUpdate out;
  out.ctes = statement.cte_map.ToString();
  if (statement.table) out.target = Target(*statement.table);
  if (statement.set_info) {
    out.assignments = Assignments(*statement.set_info);
    out.where = Text(statement.set_info->condition.get());
  }
  if (statement.from_table) out.from = statement.from_table->ToString();
  out.returning = Texts(statement.returning_list);
  return out;
}

SqlDelete ReadDelete(const duckdb::DeleteStatement& statement) {
  SqlDelete out;
  out.ctes = statement.cte_map.ToString();
  if (statement.table) out.target = Target(*statement.table);
  for (const auto& ref : statement.using_clauses) out.using_tables.push_back(ref->ToString());
  out.where = Text(statement.condition.get());
  out.returning = Texts(statement.returning_list);
  return out;
}

SqlMergeAction ReadMergeAction(duckdb::MergeActionCondition when, const duckdb::MergeIntoAction& action) {
  SqlMergeAction out;
  switch (when) {
    case duckdb::MergeActionCondition::WHEN_MATCHED:
      out.when = SqlMergeAction::When::kMatched;
      break;
    case duckdb::MergeActionCondition::WHEN_NOT_MATCHED_BY_SOURCE:
      out.when = SqlMergeAction::When::kNotMatchedBySource;
      break;
    case duckdb::MergeActionCondition::WHEN_NOT_MATCHED_BY_TARGET:
      out.when = SqlMergeAction::When::kNotMatchedByTarget;
      break;
  }
  out.condition = Text(action.condition.get());
  out.by_name = action.column_order == duckdb::InsertColumnOrder::INSERT_BY_NAME;
  switch (action.action_type) {
    case duckdb::MergeActionType::MERGE_UPDATE:
      out.kind = SqlMergeAction::Kind::kUpdate;
      out.update_star = !action.update_info;
      if (action.update_info) out.assignments = Assignments(*action.update_info);
      break;
    case duckdb::MergeActionType::MERGE_DELETE:
      out.kind = SqlMergeAction::Kind::kDelete;
      break;
    case duckdb::MergeActionType::MERGE_INSERT:
      out.kind = SqlMergeAction::Kind::kInsert;
      out.default_values = action.default_values;
      out.insert_columns.assign(action.insert_columns.begin(), action.insert_columns.end());
      out.insert_values = Texts(action.expressions);
      out.insert_star = out.insert_values.empty() && !out.default_values;
      break;
    case duckdb::MergeActionType::MERGE_DO_NOTHING:
      out.kind = SqlMergeAction::Kind::kDoNothing;
      break;
    case duckdb::MergeActionType::MERGE_ERROR:
      out.kind = SqlMergeAction::Kind::kError;
      if (!action.expressions.empty()) out.error_message = Text(action.expressions[0].get());
      break;
  }
  return out;
}

SqlMerge ReadMerge(const duckdb::MergeIntoStatement& statement) {
  SqlMerge out;
  out.ctes = statement.cte_map.ToString();
  if (statement.target) out.target = Target(*statement.target);
  if (statement.source) {
    out.source_alias = statement.source->alias;
    if (statement.source->type == duckdb::TableReferenceType::BASE_TABLE) {
      out.source_table = TableName(statement.source->Cast<duckdb::BaseTableRef>());
    }
    if (statement.source->column_name_alias.empty()) {
      auto unaliased = statement.source->Copy();
      unaliased->alias.clear();
      out.source = unaliased->ToString();
    } else {
      // `USING (VALUES ...) AS s(a, b)`: the column names need their alias, so the aliased
      // reference becomes a subquery's FROM.
      out.source = "(SELECT * FROM " + statement.source->ToString() + ")";
    }
  }
  out.on = Text(statement.join_condition.get());
  out.using_columns.assign(statement.using_columns.begin(), statement.using_columns.end());
  // std::map: WHEN MATCHED, WHEN NOT MATCHED BY SOURCE, WHEN NOT MATCHED BY TARGET.
  for (const auto& [when, actions] : statement.actions) {
    for (const auto& action : actions) out.actions.push_back(ReadMergeAction(when, *action));
  }
  out.returning = Texts(statement.returning_list);
  return out;
}

// A COPY option's or a SET's value as text: a constant's value, a bare word's name, a cast
// constant's value as cast (HEADER TRUE arrives as CAST('t' AS BOOLEAN)); otherwise DuckDB's
// rendering.
std::optional<std::string> OptionValue(const duckdb::ParsedExpression* value) {
  if (value == nullptr) return std::nullopt;
  switch (value->GetExpressionClass()) {
    case duckdb::ExpressionClass::CONSTANT:
      return value->Cast<duckdb::ConstantExpression>().value.ToString();
    case duckdb::ExpressionClass::COLUMN_REF:
      return value->Cast<duckdb::ColumnRefExpression>().GetColumnName();
    case duckdb::ExpressionClass::CAST: {
      const auto& cast = value->Cast<duckdb::CastExpression>();
      if (cast.child->GetExpressionClass() != duckdb::ExpressionClass::CONSTANT) break;
      duckdb::Value cast_value;
      std::string error;
      if (cast.child->Cast<duckdb::ConstantExpression>().value.DefaultTryCastAs(cast.cast_type, cast_value,
                                                                                &error)) {
        return cast_value.ToString();
      }
      break;
    }
    default:
      break;
  }
  return value->ToString();
}

SqlCopy ReadCopy(const duckdb::CopyStatement& statement) {
  const duckdb::CopyInfo& info = *statement.info;
  SqlCopy out;
  out.from = info.is_from;
  if (!info.file_path_expression) out.file = info.file_path;
  if (info.select_statement) {
    out.query = info.select_statement->ToString();
  } else {
    std::string columns;
    for (const std::string& column : info.select_list) {
      columns += (columns.empty() ? "" : ", ") + duckdb::KeywordHelper::WriteOptionallyQuoted(column);
    }
    std::string table;
    for (const std::string* part : {&info.catalog, &info.schema, &info.table}) {
      if (!part->empty())
        table += (table.empty() ? "" : ".") + duckdb::KeywordHelper::WriteOptionallyQuoted(*part);
    }
    out.query = "SELECT " + (columns.empty() ? std::string("*") : columns) + " FROM " + table;
  }
  for (const auto& [name, value] : info.parsed_options)
    out.options.emplace_back(name, OptionValue(value.get()));
  return out;
}

SqlTransaction ReadTransaction(const duckdb::TransactionStatement& statement) {
  switch (statement.info->type) {
    case duckdb::TransactionType::COMMIT:
      return {SqlTransaction::Kind::kCommit};
    case duckdb::TransactionType::ROLLBACK:
      return {SqlTransaction::Kind::kRollback};
    default:
      return {SqlTransaction::Kind::kBegin};
  }
}

SqlSet ReadSet(const duckdb::SetStatement& statement) {
  SqlSet out;
  out.name = statement.name;
  out.global = statement.scope == duckdb::SetScope::GLOBAL;
  out.variable = statement.scope == duckdb::SetScope::VARIABLE;
  if (statement.set_type == duckdb::SetType::SET) {
    out.value = OptionValue(statement.Cast<duckdb::SetVariableStatement>().value.get());
  }
  return out;
}

// SHOW name, as DuckDB reads it: a DESCRIBE of `SELECT * FROM name`, or for PostgreSQL's
// SHOW TRANSACTION ISOLATION LEVEL and SHOW TIME ZONE, of the name alone.
std::optional<SqlShow> ReadShow(const duckdb::SQLStatement& statement) {
  const duckdb::SelectNode* outer = PlainSelectNode(statement);
  if (outer == nullptr || !outer->from_table ||
      outer->from_table->type != duckdb::TableReferenceType::SHOW_REF)
    return std::nullopt;
  const auto& show = outer->from_table->Cast<duckdb::ShowRef>();
  if (show.show_type != duckdb::ShowType::DESCRIBE) return std::nullopt;
  if (!show.query) {
    // DuckDB's name of SHOW ALL [TABLES] begins with "__"; it names no setting.
    if (show.table_name.empty() || show.table_name.starts_with("__") || !show.schema_name.empty())
      return std::nullopt;
    return SqlShow{show.table_name};
  }
  if (show.query->type != duckdb::QueryNodeType::SELECT_NODE) return std::nullopt;
  const auto& inner = show.query->Cast<duckdb::SelectNode>();
  if (!inner.from_table || inner.from_table->type != duckdb::TableReferenceType::BASE_TABLE)
    return std::nullopt;
  const auto& table = inner.from_table->Cast<duckdb::BaseTableRef>();
  if (!table.schema_name.empty() || !table.catalog_name.empty()) return std::nullopt;
  return SqlShow{table.table_name};
}

DuckDbStatement ReadStatement(const duckdb::SQLStatement& statement) {
  DuckDbStatement out;
  out.type = duckdb::StatementTypeToString(statement.type);
  switch (statement.type) {
    case duckdb::StatementType::INSERT_STATEMENT:
      out.dml = ReadInsert(statement.Cast<duckdb::InsertStatement>());
      break;
    case duckdb::StatementType::UPDATE_STATEMENT:
      out.dml = ReadUpdate(statement.Cast<duckdb::UpdateStatement>());
      break;
    case duckdb::StatementType::DELETE_STATEMENT:
      out.dml = ReadDelete(statement.Cast<duckdb::DeleteStatement>());
      break;
    case duckdb::StatementType::MERGE_INTO_STATEMENT:
      out.dml = ReadMerge(statement.Cast<duckdb::MergeIntoStatement>());
      break;
    case duckdb::StatementType::COPY_STATEMENT:
      out.dml = ReadCopy(statement.Cast<duckdb::CopyStatement>());
      break;
    case duckdb::StatementType::TRANSACTION_STATEMENT:
      out.dml = ReadTransaction(statement.Cast<duckdb::TransactionStatement>());
      break;
    case duckdb::StatementType::SET_STATEMENT:
      out.dml = ReadSet(statement.Cast<duckdb::SetStatement>());
      break;
    case duckdb::StatementType::SELECT_STATEMENT:
      if (std::optional<SqlShow> show = ReadShow(statement)) out.dml = std::move(*show);
      break;
    default:
      break;
  }
  return out;
}

// Statement boundaries of a script DuckDB parses whole: each statement's text is a piece
// of the script from just after the ';' before it; the last runs to the end of the script.
std::optional<std::vector<std::pair<size_t, size_t>>> ParsedPieces(const std::string& s) {
  duckdb::Parser parser;
  try {
    parser.ParseQuery(s);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  std::vector<std::pair<size_t, size_t>> out;
  size_t from = 0;
  for (const auto& statement : parser.statements) {
    const size_t at = s.find(statement->query, from);
    if (at == std::string::npos) return std::nullopt;
    out.emplace_back(at, at + statement->query.size());
    from = at + statement->query.size();
  }
  return out;
}

bool IsSemicolon(const std::string& s, const SqlToken& t) {
  return t.kind == SqlTokenKind::kOperator && t.end == t.begin + 1 && s[t.begin] == ';';
}

}  // namespace

SqlParse<std::vector<SqlToken>> TokenizeSql(std::string_view text) {
  const std::string s = SameLengthText(text);
  Scan scan = ScanText(s);
  if (scan.unreadable_from) return ScannerError(s, *scan.unreadable_from);
  return std::move(scan.tokens);
}

std::optional<std::string> SqlStringValue(std::string_view literal) {
  duckdb::Parser parser;
  try {
    parser.ParseQuery("SELECT " + SameLengthText(literal) + "\n");
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (parser.statements.size() != 1) return std::nullopt;
  const duckdb::SelectNode* node = PlainSelectNode(*parser.statements[0]);
  if (node == nullptr || NotJustExpressions(*node) || node->select_list.size() != 1) return std::nullopt;
  const auto& expression = *node->select_list[0];
  if (expression.GetExpressionClass() != duckdb::ExpressionClass::CONSTANT) return std::nullopt;
  const duckdb::Value& value = expression.Cast<duckdb::ConstantExpression>().value;
  if (value.type().id() != duckdb::LogicalTypeId::VARCHAR || value.IsNull()) return std::nullopt;
  return duckdb::StringValue::Get(value);
}

std::vector<ScriptStatement> SplitSqlScript(std::string_view script) {
  const std::string s = SameLengthText(script);
  const Scan scan = ScanText(s);
  const std::vector<SqlToken>& tokens = scan.tokens;
  std::vector<std::pair<size_t, size_t>> pieces;
  if (auto parsed = scan.unreadable_from ? std::nullopt : ParsedPieces(s)) {
    pieces = std::move(*parsed);
  } else {
    size_t from = 0;
    for (const SqlToken& t : tokens) {
      if (!IsSemicolon(s, t)) continue;
      pieces.emplace_back(from, t.begin);
      from = t.end;
    }
    pieces.emplace_back(from, s.size());
  }

  std::vector<ScriptStatement> out;
  size_t k = 0;
  for (size_t p = 0; p < pieces.size(); p++) {
    const auto [from, to] = pieces[p];
    size_t begin = std::string::npos;
    size_t end = 0;
    for (; k < tokens.size() && tokens[k].begin < to; k++) {
      if (tokens[k].begin < from || IsSemicolon(s, tokens[k])) continue;
      if (begin == std::string::npos) begin = tokens[k].begin;
      end = tokens[k].end;
    }
    if (p + 1 == pieces.size() && scan.unreadable_from) {
      // The unreadable rest belongs to the last statement, whose parse reports it.
      if (begin == std::string::npos) begin = *scan.unreadable_from;
      end = s.size();
      while (end > begin && std::isspace(static_cast<unsigned char>(s[end - 1]))) end--;
    }
    if (begin == std::string::npos || end <= begin) continue;
    out.push_back({std::string(script.substr(begin, end - begin)), begin});
  }
  return out;
}

bool IsCompleteSqlInput(std::string_view text) {
  const std::string s = SameLengthText(text);
  const Scan scan = ScanText(s);
  const std::vector<SqlToken>& tokens = scan.tokens;
  if (scan.unreadable_from || tokens.empty() || !IsSemicolon(s, tokens.back())) return false;
  return std::any_of(tokens.begin(), tokens.end(), [&](const SqlToken& t) { return !IsSemicolon(s, t); });
}

SqlPosition PositionInText(std::string_view text, size_t offset) {
  SqlPosition out;
  offset = std::min(offset, text.size());
  for (size_t i = 0; i < offset; i++) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      out.line++;
      out.column = 1;
    } else if ((c & 0xC0) != 0x80) {  // not a UTF-8 continuation byte
      out.column++;
    }
  }
  return out;
}

std::string DescribePosition(std::string_view text, size_t offset) {
  SqlPosition at = PositionInText(text, offset);
  return "line " + std::to_string(at.line) + ", column " + std::to_string(at.column);
}

std::optional<SqlSyntaxError> CheckSqlSlot(std::string_view text, SqlSlot slot) {
  return ParseSlot(SameLengthText(text), slot);
}

std::vector<std::string> SqlTableName::Parts() const {
  std::vector<std::string> out;
  if (!catalog.empty()) out.push_back(catalog);
  if (!schema.empty()) out.push_back(schema);
  out.push_back(table);
  return out;
}

SqlParse<std::vector<DuckDbStatement>> ParseWithDuckDb(std::string_view sql) {
  duckdb::Parser parser;
  try {
    parser.ParseQuery(SameLengthText(sql));
    std::vector<DuckDbStatement> out;
    for (const auto& statement : parser.statements) out.push_back(ReadStatement(*statement));
    return out;
  } catch (const std::exception& ex) {
    return SyntaxErrorFrom(ex);
  }
}

std::optional<std::string> CopyQueryToParquetSql(std::string_view query_sql, std::string_view url) {
  duckdb::Parser parser;
  try {
    parser.ParseQuery(SameLengthText(query_sql));
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (parser.statements.size() != 1 ||
      parser.statements[0]->type != duckdb::StatementType::SELECT_STATEMENT) {
    return std::nullopt;
  }
  duckdb::CopyStatement copy;
  copy.info->is_from = false;
  copy.info->file_path = std::string(url);
  copy.info->format = "parquet";
  copy.info->is_format_auto_detected = false;
  copy.info->select_statement = std::move(parser.statements[0]->Cast<duckdb::SelectStatement>().node);
  return copy.ToString();
}

}  // namespace basin::engine
