#include "sql/grammar/token_stream.h"

#include <charconv>

#include "common/strings.h"

namespace basin::sql::grammar {

using engine::SqlToken;
using engine::SqlTokenKind;

TokenStream::TokenStream(std::string_view text, std::vector<SqlToken> tokens)
    : text_(text), tokens_(std::move(tokens)) {
  end_token_.kind = SqlTokenKind::kOperator;
  end_token_.begin = text_.size();
  end_token_.end = text_.size();
}

const SqlToken& TokenStream::At(size_t index) const {
  return index < tokens_.size() ? tokens_[index] : end_token_;
}

std::string_view TokenStream::TextOf(const SqlToken& token) const {
  return text_.substr(token.begin, token.end - token.begin);
}

std::string TokenStream::TextBetween(size_t from, size_t to) const {
  to = std::min(to, tokens_.size());
  if (from >= to) return "";
  return std::string(text_.substr(tokens_[from].begin, tokens_[to - 1].end - tokens_[from].begin));
}

bool TokenStream::IsWordAt(size_t index, std::string_view word) const {
  if (index >= tokens_.size()) return false;
  const SqlToken& t = tokens_[index];
  if (t.kind != SqlTokenKind::kKeyword && t.kind != SqlTokenKind::kIdentifier) return false;
  return EqualsIgnoreCase(TextOf(t), word);  // a quoted name never equals a bare word
}

bool TokenStream::IsSymbolAt(size_t index, std::string_view symbol) const {
  if (index >= tokens_.size()) return false;
  const SqlToken& t = tokens_[index];
  return t.kind == SqlTokenKind::kOperator && TextOf(t) == symbol;
}

bool TokenStream::IsNameAt(size_t index) const {
  if (index >= tokens_.size()) return false;
  const SqlTokenKind kind = tokens_[index].kind;
  return kind == SqlTokenKind::kIdentifier || kind == SqlTokenKind::kKeyword;
}

bool TokenStream::OpensGroupAt(size_t index) const {
  return IsSymbolAt(index, "(") || IsSymbolAt(index, "[") || IsSymbolAt(index, "{");
}

bool TokenStream::ClosesGroupAt(size_t index) const {
  return IsSymbolAt(index, ")") || IsSymbolAt(index, "]") || IsSymbolAt(index, "}");
}

bool TokenStream::PeekWords(std::initializer_list<std::string_view> words) const {
  size_t i = pos_;
  for (std::string_view w : words) {
    if (!IsWordAt(i++, w)) return false;
  }
  return true;
}

bool TokenStream::AcceptWords(std::initializer_list<std::string_view> words) {
  if (!PeekWords(words)) return false;
  pos_ += words.size();
  return true;
}

Status TokenStream::ExpectWords(std::initializer_list<std::string_view> words) {
  if (AcceptWords(words)) return Status::OK();
  std::string joined;
  for (std::string_view w : words) joined += (joined.empty() ? "" : " ") + std::string(w);
  return Error(joined);
}

bool TokenStream::AcceptSymbol(std::string_view symbol) {
  if (!PeekSymbol(symbol)) return false;
  pos_++;
  return true;
}

Status TokenStream::ExpectSymbol(std::string_view symbol) {
  if (AcceptSymbol(symbol)) return Status::OK();
  return Error("'" + std::string(symbol) + "'");
}

Result<std::string> TokenStream::Name(std::string_view what) {
  if (!IsNameAt(pos_)) return Error(what);
  return NameAt(pos_++);
}

std::string TokenStream::NameAt(size_t index) const {
  std::string_view raw = TextOf(At(index));
  if (raw.size() < 2 || raw.front() != '"') return std::string(raw);
  // "a""b" -> a"b
  std::string out;
  for (size_t i = 1; i + 1 < raw.size(); i++) {
    out += raw[i];
    if (raw[i] == '"') i++;
  }
  return out;
}

Result<std::vector<std::string>> TokenStream::QualifiedName(std::string_view what) {
  std::vector<std::string> parts;
  do {
    ASSIGN_OR_RETURN(std::string part, Name(what));
    parts.push_back(std::move(part));
  } while (AcceptSymbol("."));
  return parts;
}

Result<std::string> TokenStream::StringLiteral(std::string_view what) {
  if (AtEnd() || Peek().kind != SqlTokenKind::kString) return Error(what);
  std::optional<std::string> value = engine::SqlStringValue(TextOf(Peek()));
  if (!value) return Error(what);
  pos_++;
  return *value;
}

Result<int64_t> TokenStream::Integer(std::string_view what) {
  const size_t start = pos_;
  const bool negative = AcceptSymbol("-");
  const SqlToken& t = Peek();
  std::string_view digits = TextOf(t);
  int64_t value = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (AtEnd() || t.kind != SqlTokenKind::kNumber || ec != std::errc() ||
      end != digits.data() + digits.size()) {
    pos_ = start;
    return Error(what);
  }
  pos_++;
  return negative ? -value : value;
}

Result<double> TokenStream::Number(std::string_view what) {
  const SqlToken& t = Peek();
  if (AtEnd() || t.kind != SqlTokenKind::kNumber) return Error(what);
  std::string digits(TextOf(t));
  char* end = nullptr;
  double value = std::strtod(digits.c_str(), &end);
  if (end != digits.c_str() + digits.size()) return Error(what);
  pos_++;
  return value;
}

Result<std::string> TokenStream::LiteralValue(std::string_view what) {
  if (!AtEnd() && Peek().kind == SqlTokenKind::kString) return StringLiteral(what);
  const size_t start = pos_;
  const bool negative = AcceptSymbol("-");
  const SqlToken& t = Peek();
  const bool word = !negative && (t.kind == SqlTokenKind::kIdentifier || t.kind == SqlTokenKind::kKeyword);
  if (AtEnd() || !(t.kind == SqlTokenKind::kNumber || word)) {
    pos_ = start;
    return Error(what);
  }
  pos_++;
  return (negative ? "-" : "") + std::string(TextOf(t));
}

size_t TokenStream::GroupEnd(size_t open) const {
  int depth = 0;
  for (size_t i = open; i < tokens_.size(); i++) {
    if (OpensGroupAt(i)) depth++;
    if (ClosesGroupAt(i) && --depth == 0) return i;
  }
  return tokens_.size();
}

Status TokenStream::ExpectEnd() {
  if (AtEnd()) return Status::OK();
  return Error("the end of the statement");
}

Status TokenStream::Error(std::string_view expected) const {
  std::string near =
      AtEnd() ? "at the end of the statement" : "at or near \"" + std::string(TextOf(Peek())) + "\"";
  return ErrorAt(Peek().begin, "syntax error " + near + ": expected " + std::string(expected));
}

Status TokenStream::ErrorAt(size_t offset, std::string message) const {
  if (!furthest_ || offset > furthest_->offset)
    furthest_ = engine::SqlSyntaxError{std::move(message), offset};
  return Status::InvalidArgument(std::string(kSyntaxErrorMarker));
}

}  // namespace basin::sql::grammar
