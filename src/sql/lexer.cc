#include "sql/lexer.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "common/strings.h"

namespace basin::sql {

namespace {

bool IsIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || (c & 0x80); }
bool IsIdentChar(char c) {
  return IsIdentStart(c) || std::isdigit(static_cast<unsigned char>(c)) || c == '$';
}

Status Unterminated(const char* what, size_t at) {
  return Status::InvalidArgument(std::string("unterminated ") + what + " starting at offset " +
                                 std::to_string(at));
}

}  // namespace

Result<std::vector<Token>> Tokenize(std::string_view s) {
  std::vector<Token> out;
  size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    size_t start = i;
    if (std::isspace(static_cast<unsigned char>(c))) {
      i++;
    } else if (c == '-' && i + 1 < s.size() && s[i + 1] == '-') {
      while (i < s.size() && s[i] != '\n') i++;
    } else if (c == '/' && i + 1 < s.size() && s[i + 1] == '*') {
      size_t close = s.find("*/", i + 2);
      if (close == std::string_view::npos) return Unterminated("comment", start);
      i = close + 2;
    } else if (c == '\'' || ((c == 'E' || c == 'e') && i + 1 < s.size() && s[i + 1] == '\'')) {
      // E'...' strings take backslash escapes; plain ones only '' for a quote.
      bool escapes = c != '\'';
      i += escapes ? 2 : 1;
      std::string value;
      while (true) {
        if (i >= s.size()) return Unterminated("string", start);
        if (s[i] == '\'') {
          if (i + 1 < s.size() && s[i + 1] == '\'') {
            value += '\'';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        if (escapes && s[i] == '\\' && i + 1 < s.size()) {
          char e = s[i + 1];
          value += e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e;
          i += 2;
          continue;
        }
        value += s[i++];
      }
      out.push_back({Token::Kind::kString, std::move(value), start, i});
    } else if (c == '"') {
      i++;
      std::string value;
      while (true) {
        if (i >= s.size()) return Unterminated("quoted identifier", start);
        if (s[i] == '"') {
          if (i + 1 < s.size() && s[i + 1] == '"') {
            value += '"';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        value += s[i++];
      }
      out.push_back({Token::Kind::kQuotedIdentifier, std::move(value), start, i});
    } else if (c == '$' && (i + 1 >= s.size() || !std::isdigit(static_cast<unsigned char>(s[i + 1])))) {
      // $tag$ ... $tag$ (a '$' followed by a digit is a prepared-statement parameter).
      size_t tag_end = i + 1;
      while (tag_end < s.size() && s[tag_end] != '$' && IsIdentChar(s[tag_end])) tag_end++;
      if (tag_end >= s.size() || s[tag_end] != '$') {
        out.push_back({Token::Kind::kOperator, "$", start, i + 1});
        i++;
        continue;
      }
      std::string_view tag = s.substr(i, tag_end - i + 1);
      size_t close = s.find(tag, tag_end + 1);
      if (close == std::string_view::npos) return Unterminated("dollar-quoted string", start);
      out.push_back({Token::Kind::kString, std::string(s.substr(tag_end + 1, close - tag_end - 1)), start,
                     close + tag.size()});
      i = close + tag.size();
    } else if (IsIdentStart(c)) {
      while (i < s.size() && IsIdentChar(s[i])) i++;
      out.push_back({Token::Kind::kIdentifier, std::string(s.substr(start, i - start)), start, i});
    } else if (std::isdigit(static_cast<unsigned char>(c)) ||
               (c == '.' && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1])))) {
      while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '.' || s[i] == '_'))
        i++;
      out.push_back({Token::Kind::kNumber, std::string(s.substr(start, i - start)), start, i});
    } else if (c == '(' || c == ')' || c == ',' || c == ';' || c == '[' || c == ']' || c == '{' || c == '}') {
      i++;
      out.push_back({Token::Kind::kPunctuation, std::string(1, c), start, i});
    } else {
      // Operators: "=>", ":=", "::", "<=", ... kept as runs of operator characters.
      static const std::string_view kOperatorChars = "+-*/<>=~!@#%^&|`?:.";
      while (i < s.size() && kOperatorChars.find(s[i]) != std::string_view::npos) {
        if (i > start && s[i] == '-' && i + 1 < s.size() && s[i + 1] == '-') break;
        i++;
      }
      if (i == start) i++;  // any other byte stands alone
      out.push_back({Token::Kind::kOperator, std::string(s.substr(start, i - start)), start, i});
    }
  }
  return out;
}

Result<std::vector<Statement>> SplitStatements(std::string_view text) {
  ASSIGN_OR_RETURN(std::vector<Token> tokens, Tokenize(text));
  std::vector<Statement> out;
  size_t begin = std::string_view::npos;
  size_t last_end = 0;
  int line = 1;
  size_t line_counted_to = 0;
  auto flush = [&]() {
    if (begin == std::string_view::npos) return;
    line += static_cast<int>(std::count(text.begin() + line_counted_to, text.begin() + begin, '\n'));
    line_counted_to = begin;
    out.push_back({std::string(text.substr(begin, last_end - begin)), line});
    begin = std::string_view::npos;
  };
  for (const Token& t : tokens) {
    if (t.kind == Token::Kind::kPunctuation && t.text == ";") {
      flush();
      continue;
    }
    if (begin == std::string_view::npos) begin = t.begin;
    last_end = t.end;
  }
  flush();
  return out;
}

bool IsCompleteInput(std::string_view text) {
  auto tokens = Tokenize(text);
  if (!tokens.ok() || tokens->empty()) return false;
  const Token& last = tokens->back();
  return last.kind == Token::Kind::kPunctuation && last.text == ";" && tokens->size() > 1;
}

Result<std::vector<DeltaScanCall>> FindDeltaScanCalls(std::string_view statement) {
  ASSIGN_OR_RETURN(std::vector<Token> tokens, Tokenize(statement));
  std::vector<DeltaScanCall> out;
  for (size_t i = 0; i + 1 < tokens.size(); i++) {
    if (tokens[i].kind != Token::Kind::kIdentifier || !EqualsIgnoreCase(tokens[i].text, "delta_scan") ||
        tokens[i + 1].text != "(" || tokens[i + 1].kind != Token::Kind::kPunctuation) {
      continue;
    }
    DeltaScanCall call;
    call.begin = tokens[i].begin;
    auto bad = [&](const std::string& why) {
      size_t stop = std::min(statement.size(), call.begin + 80);
      return Status::InvalidArgument("bad delta_scan call at offset " + std::to_string(call.begin) + " (" +
                                     std::string(statement.substr(call.begin, stop - call.begin)) +
                                     "): " + why);
    };
    size_t j = i + 2;
    if (j >= tokens.size() || tokens[j].kind != Token::Kind::kString)
      return bad("the first argument must be a path string");
    call.path = tokens[j++].text;
    while (j < tokens.size() && tokens[j].text == ",") {
      j++;
      if (j + 2 >= tokens.size() || tokens[j].kind != Token::Kind::kIdentifier ||
          (tokens[j + 1].text != "=>" && tokens[j + 1].text != ":=")) {
        return bad("expected version => N or timestamp => '...'");
      }
      std::string name = tokens[j].text;
      const Token& value = tokens[j + 2];
      j += 3;
      if (EqualsIgnoreCase(name, "version")) {
        int64_t v = -1;
        auto [end, ec] = std::from_chars(value.text.data(), value.text.data() + value.text.size(), v);
        if (value.kind != Token::Kind::kNumber || ec != std::errc() ||
            end != value.text.data() + value.text.size()) {
          return bad("version must be a non-negative integer, got " + value.text);
        }
        if (call.version) return bad("version is given twice");
        call.version = v;
      } else if (EqualsIgnoreCase(name, "timestamp")) {
        if (value.kind != Token::Kind::kString)
          return bad("timestamp must be a string such as '2024-06-01 12:00:00'");
        if (call.timestamp) return bad("timestamp is given twice");
        call.timestamp = value.text;
      } else {
        return bad("unknown argument '" + name + "' (expected version or timestamp)");
      }
    }
    if (j >= tokens.size() || tokens[j].text != ")") return bad("expected ')'");
    if (call.version && call.timestamp) return bad("give version or timestamp, not both");
    call.end = tokens[j].end;
    out.push_back(std::move(call));
    i = j;
  }
  return out;
}

}  // namespace basin::sql
