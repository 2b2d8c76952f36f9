// TokenStream: a position in one statement's tokens (DuckDB's, engine/sql_text.h) with the
// vocabulary Basin's grammar is written in: words, symbols, names, literals, bracketed
// groups, and syntax errors that remember the furthest point any attempt reached.
//
// Words match unquoted identifiers and keywords, case-insensitively; a quoted identifier
// ("zorder") is never a word, only a name.
//
// Thread safety: one thread at a time.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "basin/status.h"
#include "engine/sql_text.h"

namespace basin::sql::grammar {

class TokenStream {
 public:
  // REQUIRES: `tokens` are TokenizeSql(text)'s; `text` outlives the stream.
  TokenStream(std::string_view text, std::vector<engine::SqlToken> tokens);

  std::string_view text() const { return text_; }
  const std::vector<engine::SqlToken>& tokens() const { return tokens_; }
  size_t size() const { return tokens_.size(); }
  size_t position() const { return pos_; }
  void Reset(size_t position) { pos_ = position; }
  bool AtEnd() const { return pos_ >= tokens_.size(); }

  // The token `ahead` tokens on; past the end, an empty token at the end of the text.
  const engine::SqlToken& Peek(size_t ahead = 0) const { return At(pos_ + ahead); }
  const engine::SqlToken& At(size_t index) const;
  std::string_view TextOf(const engine::SqlToken& token) const;
  // The text from token `from` to the end of token `to - 1`, as written (comments
  // between them included); "" when from >= to.
  std::string TextBetween(size_t from, size_t to) const;
  // Byte offset where token `index` starts (the end of the text past the last token).
  size_t OffsetOf(size_t index) const { return At(index).begin; }

  bool IsWordAt(size_t index, std::string_view word) const;
  bool IsSymbolAt(size_t index, std::string_view symbol) const;
  // Whether token `index` can be a name: an identifier (quoted or not) or a keyword.
  bool IsNameAt(size_t index) const;
  // Whether token `index` opens ("(", "[", "{") or closes a bracketed group.
  bool OpensGroupAt(size_t index) const;
  bool ClosesGroupAt(size_t index) const;

  // Whether the next tokens are these words; Accept also consumes them.
  bool PeekWords(std::initializer_list<std::string_view> words) const;
  bool AcceptWords(std::initializer_list<std::string_view> words);
  Status ExpectWords(std::initializer_list<std::string_view> words);
  bool PeekSymbol(std::string_view symbol) const { return IsSymbolAt(pos_, symbol); }
  bool AcceptSymbol(std::string_view symbol);
  Status ExpectSymbol(std::string_view symbol);

  // A name: unquoted as written, quoted ones without their quotes.
  Result<std::string> Name(std::string_view what);
  // The name token `index` holds. REQUIRES: IsNameAt(index).
  std::string NameAt(size_t index) const;
  // name [. name]*
  Result<std::vector<std::string>> QualifiedName(std::string_view what);
  // A string constant's value ('it''s' -> it's).
  Result<std::string> StringLiteral(std::string_view what);
  Result<int64_t> Integer(std::string_view what);  // [-]digits
  Result<double> Number(std::string_view what);
  // A literal value as table properties and settings take it: a string's value, a
  // number or a word as written ([-] for numbers).
  Result<std::string> LiteralValue(std::string_view what);

  // The index of the bracket closing the one at `open` ("(", "[" or "{"), or size() when
  // it is not closed.
  size_t GroupEnd(size_t open) const;

  Status ExpectEnd();

  // A syntax error at the next token: "syntax error at or near "X": expected <what>". It
  // is recorded (see furthest_error()) and returned as a status whose message is
  // kSyntaxErrorMarker: ParseStatement replaces it with the furthest error, with its
  // line and column.
  Status Error(std::string_view expected) const;
  // A syntax error at byte `offset` of the text, with a message of its own.
  Status ErrorAt(size_t offset, std::string message) const;
  // The syntax error that got furthest into the statement, of every attempt so far.
  const std::optional<engine::SqlSyntaxError>& furthest_error() const { return furthest_; }

  static constexpr std::string_view kSyntaxErrorMarker = "syntax error";

 private:
  std::string_view text_;
  std::vector<engine::SqlToken> tokens_;
  engine::SqlToken end_token_;
  size_t pos_ = 0;
  mutable std::optional<engine::SqlSyntaxError> furthest_;
};

}  // namespace basin::sql::grammar
