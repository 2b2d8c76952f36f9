#include "sql/grammar/slots.h"

#include "engine/stream_calls.h"
#include "sql/grammar/desugar.h"

namespace basin::sql::grammar {

namespace {

bool IsSyntaxError(const Status& status) {
  return status.code() == ErrorCode::kInvalidArgument && status.message() == TokenStream::kSyntaxErrorMarker;
}

// The span's text as DuckDB reads it (desugared if need be), or DuckDB's error on it.
engine::SqlParse<Slot> CheckSpan(const TokenStream& tokens, size_t from, size_t to, engine::SqlSlot kind) {
  Slot slot;
  slot.sql = tokens.TextBetween(from, to);
  slot.written = slot.sql;
  std::optional<engine::SqlSyntaxError> error = engine::CheckSqlSlot(slot.sql, kind);
  // DuckDB reads STREAM(t) in a query as a call of a table function `stream`, STREAM f('x')
  // as the table stream aliased.
  const bool stream_call = !error && kind == engine::SqlSlot::kQuery && HasStreamCall(tokens, from, to) &&
                           engine::ReadsStreamMarker(slot.sql);
  if (!error && !stream_call) return slot;
  const size_t base = tokens.OffsetOf(from);
  std::vector<engine::SqlToken> span(tokens.tokens().begin() + static_cast<std::ptrdiff_t>(from),
                                     tokens.tokens().begin() + static_cast<std::ptrdiff_t>(to));
  for (engine::SqlToken& t : span) {
    t.begin -= base;
    t.end -= base;
  }
  if (std::optional<Desugared> desugared = Desugar(slot.sql, span)) {
    if (!engine::CheckSqlSlot(desugared->sql, kind))
      return Slot{desugared->sql, desugared->streams, slot.sql};
  }
  if (!error) return slot;
  error->offset += base;
  return *error;
}

}  // namespace

Result<Slot> ReadSlot(TokenStream& tokens, engine::SqlSlot kind, std::string_view what, const SlotEnds& ends,
                      const SlotRest& rest) {
  const size_t start = tokens.position();
  if (tokens.AtEnd() || tokens.ClosesGroupAt(start)) return tokens.Error(what);
  int depth = 0;
  for (size_t i = start;; i++) {
    const bool group_end = i >= tokens.size() || (depth == 0 && tokens.ClosesGroupAt(i));
    if (i > start && depth == 0 && (group_end || ends(tokens, i))) {
      engine::SqlParse<Slot> slot = CheckSpan(tokens, start, i, kind);
      if (!slot.ok()) {
        (void)tokens.ErrorAt(slot.error().offset, slot.error().message);
      } else {
        tokens.Reset(i);
        Status after = rest();
        if (after.ok()) return std::move(slot.value());
        if (!IsSyntaxError(after)) return after;
      }
    }
    if (group_end) break;
    if (tokens.OpensGroupAt(i)) depth++;
    if (tokens.ClosesGroupAt(i)) depth--;
  }
  tokens.Reset(start);
  return Status::InvalidArgument(std::string(TokenStream::kSyntaxErrorMarker));
}

SlotEnds BeforeWords(std::vector<std::vector<std::string>> sequences) {
  return [sequences = std::move(sequences)](const TokenStream& tokens, size_t index) {
    for (const auto& words : sequences) {
      bool all = true;
      for (size_t k = 0; k < words.size() && all; k++) all = tokens.IsWordAt(index + k, words[k]);
      if (all) return true;
    }
    return false;
  };
}

SlotEnds BeforeComma() {
  return [](const TokenStream& tokens, size_t index) { return tokens.IsSymbolAt(index, ","); };
}

SlotEnds AtGroupEnd() {
  return [](const TokenStream&, size_t) { return false; };
}

Result<std::string> ParenthesizedExpression(TokenStream& tokens, std::string_view what) {
  RETURN_IF_ERROR(tokens.ExpectSymbol("("));
  ASSIGN_OR_RETURN(Slot slot, ReadSlot(tokens, engine::SqlSlot::kExpression, what, AtGroupEnd(),
                                       [&] { return tokens.ExpectSymbol(")"); }));
  return std::move(slot.sql);
}

Result<Query> QueryToEnd(TokenStream& tokens, std::string_view what) {
  ASSIGN_OR_RETURN(Slot slot, ReadSlot(tokens, engine::SqlSlot::kQuery, what, AtGroupEnd(),
                                       [&] { return tokens.ExpectEnd(); }));
  return Query{std::move(slot.sql), std::move(slot.streams), std::move(slot.written)};
}

}  // namespace basin::sql::grammar
