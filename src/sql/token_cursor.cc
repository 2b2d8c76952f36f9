#include "sql/token_cursor.h"

#include <cctype>
#include <charconv>

namespace basin::sql {

namespace {

bool IsWord(const Token& t, std::string_view word) {
  if (t.kind != Token::Kind::kIdentifier || t.text.size() != word.size()) return false;
  for (size_t i = 0; i < word.size(); i++) {
    if (std::toupper(static_cast<unsigned char>(t.text[i])) !=
        std::toupper(static_cast<unsigned char>(word[i])))
      return false;
  }
  return true;
}

bool IsSymbol(const Token& t, std::string_view symbol) {
  return (t.kind == Token::Kind::kPunctuation || t.kind == Token::Kind::kOperator) && t.text == symbol;
}

std::string JoinWords(std::initializer_list<std::string_view> words) {
  std::string out;
  for (std::string_view w : words) {
    if (!out.empty()) out += ' ';
    out += w;
  }
  return out;
}

}  // namespace

TokenCursor::TokenCursor(std::string_view text, std::vector<Token> tokens)
    : text_(text), tokens_(std::move(tokens)) {}

Result<TokenCursor> TokenCursor::Of(std::string_view text) {
  ASSIGN_OR_RETURN(std::vector<Token> tokens, Tokenize(text));
  return TokenCursor(text, std::move(tokens));
}

const Token& TokenCursor::Peek(size_t ahead) const {
  static const Token kEnd{Token::Kind::kIdentifier, "", 0, 0};
  return pos_ + ahead < tokens_.size() ? tokens_[pos_ + ahead] : kEnd;
}

bool TokenCursor::PeekKeywords(std::initializer_list<std::string_view> words) const {
  size_t i = 0;
  for (std::string_view w : words) {
    if (!IsWord(Peek(i++), w)) return false;
  }
  return true;
}

bool TokenCursor::AcceptKeywords(std::initializer_list<std::string_view> words) {
  if (!PeekKeywords(words)) return false;
  pos_ += words.size();
  return true;
}

Status TokenCursor::ExpectKeywords(std::initializer_list<std::string_view> words) {
  if (AcceptKeywords(words)) return Status::OK();
  return Error(JoinWords(words));
}

bool TokenCursor::PeekSymbol(std::string_view symbol) const { return IsSymbol(Peek(), symbol); }

bool TokenCursor::AcceptSymbol(std::string_view symbol) {
  if (!PeekSymbol(symbol)) return false;
  pos_++;
  return true;
}

Status TokenCursor::ExpectSymbol(std::string_view symbol) {
  if (AcceptSymbol(symbol)) return Status::OK();
  return Error("'" + std::string(symbol) + "'");
}

Result<std::string> TokenCursor::Identifier(std::string_view what) {
  const Token& t = Peek();
  if (AtEnd() || (t.kind != Token::Kind::kIdentifier && t.kind != Token::Kind::kQuotedIdentifier))
    return Error(what);
  pos_++;
  return t.text;
}

Result<std::vector<std::string>> TokenCursor::QualifiedName(std::string_view what) {
  std::vector<std::string> parts;
  ASSIGN_OR_RETURN(std::string first, Identifier(what));
  parts.push_back(std::move(first));
  while (AcceptSymbol(".")) {
    ASSIGN_OR_RETURN(std::string next, Identifier(what));
    parts.push_back(std::move(next));
  }
  return parts;
}

Result<std::string> TokenCursor::StringLiteral(std::string_view what) {
  if (AtEnd() || Peek().kind != Token::Kind::kString) return Error(what);
  return tokens_[pos_++].text;
}

Result<int64_t> TokenCursor::Integer(std::string_view what) {
  bool negative = AcceptSymbol("-");
  const Token& t = Peek();
  int64_t value = 0;
  if (AtEnd() || t.kind != Token::Kind::kNumber) return Error(what);
  auto [end, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), value);
  if (ec != std::errc() || end != t.text.data() + t.text.size()) return Error(what);
  pos_++;
  return negative ? -value : value;
}

Result<double> TokenCursor::Number(std::string_view what) {
  const Token& t = Peek();
  if (AtEnd() || t.kind != Token::Kind::kNumber) return Error(what);
  char* end = nullptr;
  double value = std::strtod(t.text.c_str(), &end);
  if (end != t.text.c_str() + t.text.size()) return Error(what);
  pos_++;
  return value;
}

Result<std::string> TokenCursor::TextUntil(std::string_view what,
                                           std::initializer_list<std::string_view> stop_keywords,
                                           bool stop_at_comma) {
  size_t start = pos_;
  int depth = 0;
  while (!AtEnd()) {
    const Token& t = Peek();
    if (t.kind == Token::Kind::kPunctuation) {
      if (t.text == "(" || t.text == "[" || t.text == "{") {
        depth++;
      } else if (t.text == ")" || t.text == "]" || t.text == "}") {
        if (depth == 0) break;
        depth--;
      } else if (t.text == "," && depth == 0 && stop_at_comma) {
        break;
      }
    } else if (depth == 0 && t.kind == Token::Kind::kIdentifier) {
      bool stop = false;
      for (std::string_view w : stop_keywords) stop = stop || IsWord(t, w);
      if (stop) break;
    }
    pos_++;
  }
  if (pos_ == start) return Error(what);
  return TextBetween(start, pos_);
}

std::string TokenCursor::Rest() {
  std::string out = TextBetween(pos_, tokens_.size());
  pos_ = tokens_.size();
  return out;
}

std::string TokenCursor::TextBetween(size_t from_token, size_t to_token) const {
  if (from_token >= to_token || from_token >= tokens_.size()) return "";
  to_token = std::min(to_token, tokens_.size());
  size_t begin = tokens_[from_token].begin;
  size_t end = tokens_[to_token - 1].end;
  return std::string(text_.substr(begin, end - begin));
}

Status TokenCursor::ExpectEnd() {
  if (AtEnd()) return Status::OK();
  return Error("the end of the statement");
}

Status TokenCursor::Error(std::string_view expected) const {
  if (AtEnd()) {
    return Status::InvalidArgument("syntax error at the end of the statement: expected " +
                                   std::string(expected));
  }
  const Token& t = Peek();
  return Status::InvalidArgument("syntax error at or near '" +
                                 std::string(text_.substr(t.begin, t.end - t.begin)) + "' (offset " +
                                 std::to_string(t.begin) + "): expected " + std::string(expected));
}

}  // namespace basin::sql
