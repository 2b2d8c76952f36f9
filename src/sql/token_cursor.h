// TokenCursor: a position in one statement's tokens, with the small vocabulary Basin's
// statement parsers need (keywords, names, literals, and the raw text of expressions and
// queries, which Basin hands to DuckDB unparsed).
//
// Errors are InvalidArgument "syntax error at or near 'X' (offset N): expected ...".
//
// Thread safety: one thread at a time.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "sql/lexer.h"

namespace basin::sql {

class TokenCursor {
 public:
  // REQUIRES: `tokens` are Tokenize(text)'s; `text` outlives the cursor.
  TokenCursor(std::string_view text, std::vector<Token> tokens);
  static Result<TokenCursor> Of(std::string_view text);

  bool AtEnd() const { return pos_ >= tokens_.size(); }
  size_t position() const { return pos_; }
  void Reset(size_t position) { pos_ = position; }
  // The token `ahead` tokens on; an empty identifier past the end.
  const Token& Peek(size_t ahead = 0) const;

  // Whether the next tokens are these unquoted keywords (case-insensitive); Accept also
  // consumes them.
  bool PeekKeywords(std::initializer_list<std::string_view> words) const;
  bool AcceptKeywords(std::initializer_list<std::string_view> words);
  Status ExpectKeywords(std::initializer_list<std::string_view> words);
  // Punctuation or operator tokens: "(", ")", ",", "=", ".", "*".
  bool PeekSymbol(std::string_view symbol) const;
  bool AcceptSymbol(std::string_view symbol);
  Status ExpectSymbol(std::string_view symbol);

  // An identifier, quoted or not (unquoted ones as written: callers lower-case names where
  // the catalog wants it).
  Result<std::string> Identifier(std::string_view what);
  // name [. name]*: ["s", "t"].
  Result<std::vector<std::string>> QualifiedName(std::string_view what);
  Result<std::string> StringLiteral(std::string_view what);
  Result<int64_t> Integer(std::string_view what);
  // A number (possibly with a fraction) as written.
  Result<double> Number(std::string_view what);

  // The raw text from the next token up to, not including, the first token at paren depth
  // 0 that is one of `stop_keywords` (unquoted, case-insensitive), a ',' when
  // `stop_at_comma`, or a ')' closing a parenthesis opened before it; the cursor moves to
  // that token. InvalidArgument naming `what` when the text is empty.
  Result<std::string> TextUntil(std::string_view what, std::initializer_list<std::string_view> stop_keywords,
                                bool stop_at_comma = false);
  // The raw text of every remaining token; the cursor moves to the end.
  std::string Rest();
  // Text of tokens [from, to) as written in the statement.
  std::string TextBetween(size_t from_token, size_t to_token) const;

  // InvalidArgument unless every token was consumed.
  Status ExpectEnd();
  // InvalidArgument "syntax error at or near '<next token>' (offset N): expected <what>".
  Status Error(std::string_view expected) const;

 private:
  std::string_view text_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
};

}  // namespace basin::sql
