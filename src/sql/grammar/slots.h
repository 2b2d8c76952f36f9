// Slots: the places in Basin's statements that hold DuckDB SQL (an expression, a query).
// The grammar delimits a slot, and DuckDB's parser decides whether the span is one:
//
// A slot starting at the stream's position may end before any token at bracket depth 0
// that `ends` accepts (a Basin clause keyword that cannot continue a DuckDB expression
// there, such as ZORDER BY), before the bracket that closes a group opened before the
// slot, or at the end of the statement. The candidate ends are tried shortest first: the
// span must be one `kind` for DuckDB's parser (after Desugar when DuckDB refuses the
// span as written), and then `rest` must parse what follows. The first end for which both
// hold is the slot; when none does, the error that got furthest is the statement's.
//
// Thread safety: functions of their arguments.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "basin/status.h"
#include "engine/sql_text.h"
#include "sql/grammar/statement.h"
#include "sql/grammar/token_stream.h"

namespace basin::sql::grammar {

struct Slot {
  std::string sql;                    // what DuckDB parses
  std::vector<StreamSource> streams;  // offsets into `sql`
  std::string written;                // the slot's text as written (STREAM markers kept)
};

// Whether a slot may end before token `index`.
using SlotEnds = std::function<bool(const TokenStream& tokens, size_t index)>;
// Parses what follows a slot; a syntax error (TokenStream::Error) makes the slot try its
// next end, any other error is final.
using SlotRest = std::function<Status()>;

Result<Slot> ReadSlot(TokenStream& tokens, engine::SqlSlot kind, std::string_view what, const SlotEnds& ends,
                      const SlotRest& rest);

// Ends before any of these word sequences ({{"ZORDER", "BY"}, {"SEQUENCE", "BY"}}).
SlotEnds BeforeWords(std::vector<std::vector<std::string>> sequences);
// Ends before a ',' (and at the end of the group).
SlotEnds BeforeComma();
// Ends only at the end of the group or statement.
SlotEnds AtGroupEnd();

// ( expression ): the expression's text.
Result<std::string> ParenthesizedExpression(TokenStream& tokens, std::string_view what);
// A query running to the end of the statement.
Result<Query> QueryToEnd(TokenStream& tokens, std::string_view what);

}  // namespace basin::sql::grammar
