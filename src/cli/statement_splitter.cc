#include "cli/statement_splitter.h"

#include <cctype>
#include <optional>

namespace basin::cli {

namespace {

// Walks SQL text and reports which bytes are "code" (outside literals and comments).
class SqlScanner {
 public:
  explicit SqlScanner(std::string_view text) : text_(text) {}

  bool done() const { return pos_ >= text_.size(); }
  size_t pos() const { return pos_; }

  // Skips one token: a literal, a comment or a single code byte. Returns true when the
  // skipped byte is a top-level ';' and sets `significant` when the token is not a comment
  // or whitespace.
  bool Next(bool& significant) {
    char ch = text_[pos_];
    significant = true;
    if (ch == '\'' || ch == '"') {
      SkipQuoted(ch);
    } else if (ch == '-' && Peek(1) == '-') {
      significant = false;
      SkipTo("\n", 0);
    } else if (ch == '/' && Peek(1) == '*') {
      significant = false;
      SkipTo("*/", 2);
    } else if (ch == '$' && DollarTagLength() > 0) {
      size_t tag_length = DollarTagLength();
      std::string tag(text_.substr(pos_, tag_length));
      pos_ += tag_length;
      SkipTo(tag, tag_length);
    } else {
      significant = std::isspace(static_cast<unsigned char>(ch)) == 0;
      pos_++;
      return ch == ';';
    }
    return false;
  }

 private:
  char Peek(size_t ahead) const { return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0'; }

  // 'it''s' and "a""b": a doubled quote stays inside the literal.
  void SkipQuoted(char quote) {
    pos_++;
    while (pos_ < text_.size()) {
      if (text_[pos_++] != quote) continue;
      if (pos_ < text_.size() && text_[pos_] == quote) {
        pos_++;
      } else {
        return;
      }
    }
  }

  // Moves past the next `end` (keeping `skip` bytes already consumed), or to the end.
  void SkipTo(std::string_view end, size_t skip) {
    size_t found = text_.find(end, pos_ + skip);
    pos_ = found == std::string_view::npos ? text_.size() : found + end.size();
  }

  // Length of "$tag$" or "$$" starting at pos_, 0 when this '$' starts none (e.g. "$1").
  size_t DollarTagLength() const {
    size_t i = pos_ + 1;
    while (i < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[i])) != 0 || text_[i] == '_')) {
      if (i == pos_ + 1 && std::isdigit(static_cast<unsigned char>(text_[i])) != 0) return 0;
      i++;
    }
    return i < text_.size() && text_[i] == '$' ? i + 1 - pos_ : 0;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

std::string_view Trim(std::string_view text) {
  size_t begin = 0;
  size_t end = text.size();
  while (begin < end && std::isspace(static_cast<unsigned char>(text[begin])) != 0) begin++;
  while (end > begin && std::isspace(static_cast<unsigned char>(text[end - 1])) != 0) end--;
  return text.substr(begin, end - begin);
}

int LineAt(std::string_view text, size_t pos) {
  int line = 1;
  for (size_t i = 0; i < pos && i < text.size(); i++) line += text[i] == '\n' ? 1 : 0;
  return line;
}

}  // namespace

std::vector<SqlStatement> SplitStatements(std::string_view text) {
  std::vector<SqlStatement> statements;
  SqlScanner scanner(text);
  // Leading comments are dropped with the whitespace: a statement starts at its first token.
  std::optional<size_t> first_significant;
  auto finish = [&](size_t end) {
    if (first_significant) {
      std::string_view body = text.substr(*first_significant, end - *first_significant);
      statements.push_back({std::string(Trim(body)), LineAt(text, *first_significant)});
    }
    first_significant.reset();
  };
  while (!scanner.done()) {
    size_t token_start = scanner.pos();
    bool significant = false;
    bool is_semicolon = scanner.Next(significant);
    if (is_semicolon) {
      finish(token_start);
    } else if (significant && !first_significant) {
      first_significant = token_start;
    }
  }
  finish(text.size());
  return statements;
}

bool IsCompleteInput(std::string_view text) {
  SqlScanner scanner(text);
  bool seen_statement = false;
  bool pending = false;  // significant text after the last ';'
  while (!scanner.done()) {
    bool significant = false;
    if (scanner.Next(significant)) {
      seen_statement = seen_statement || pending;
      pending = false;
    } else if (significant) {
      pending = true;
    }
  }
  return seen_statement && !pending;
}

}  // namespace basin::cli
