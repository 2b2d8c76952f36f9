// OPTIMIZE, VACUUM, RESTORE and SET / RESET basin.<name> (rules.h).
#include "common/strings.h"
#include "sql/grammar/rules.h"
#include "sql/grammar/slots.h"

namespace basin::sql::grammar {

namespace {

// [ZORDER BY (a, b) | ZORDER BY a, b] and the end of the statement.
Status ZOrderAndEnd(TokenStream& tokens, Optimize& optimize) {
  optimize.request.zorder_by.clear();
  if (tokens.AcceptWords({"ZORDER", "BY"})) {
    ASSIGN_OR_RETURN(optimize.request.zorder_by,
                     OptionallyParenthesizedNames(tokens, "a column to Z-order by"));
  }
  return tokens.ExpectEnd();
}

}  // namespace

Result<StatementBody> ParseOptimize(TokenStream& tokens) {
  Optimize optimize;
  ASSIGN_OR_RETURN(optimize.name, tokens.QualifiedName("a table name"));
  if (tokens.AcceptWords({"WHERE"})) {
    ASSIGN_OR_RETURN(Slot where, ReadSlot(tokens, engine::SqlSlot::kExpression,
                                          "a predicate on partition columns", BeforeWords({{"ZORDER", "BY"}}),
                                          [&] { return ZOrderAndEnd(tokens, optimize); }));
    optimize.request.where = std::move(where.sql);
  } else {
    RETURN_IF_ERROR(ZOrderAndEnd(tokens, optimize));
  }
  return StatementBody(std::move(optimize));
}

BodyOrDuckDb ParseVacuum(TokenStream& tokens) {
  // VACUUM, VACUUM ANALYZE t, VACUUM FULL...: DuckDB's.
  if (tokens.AtEnd() || tokens.PeekWords({"ANALYZE"}) || tokens.PeekWords({"FULL"}) ||
      tokens.PeekWords({"VERBOSE"}) || tokens.PeekSymbol("(")) {
    return std::optional<StatementBody>();
  }
  Vacuum vacuum;
  ASSIGN_OR_RETURN(vacuum.name, tokens.QualifiedName("a table name"));
  if (tokens.AcceptWords({"RETAIN"})) {
    ASSIGN_OR_RETURN(double hours, tokens.Number("a number of hours"));
    RETURN_IF_ERROR(tokens.ExpectWords({"HOURS"}));
    vacuum.request.retain_hours = hours;
  }
  vacuum.request.dry_run = tokens.AcceptWords({"DRY", "RUN"});
  // VACUUM t (a, b): DuckDB's column list.
  if (tokens.PeekSymbol("(") && !vacuum.request.retain_hours && !vacuum.request.dry_run) {
    return std::optional<StatementBody>();
  }
  RETURN_IF_ERROR(tokens.ExpectEnd());
  return std::optional<StatementBody>(std::move(vacuum));
}

Result<StatementBody> ParseRestore(TokenStream& tokens) {
  Restore restore;
  tokens.AcceptWords({"TABLE"});
  ASSIGN_OR_RETURN(restore.name, tokens.QualifiedName("a table name"));
  tokens.AcceptWords({"TO"});
  ASSIGN_OR_RETURN(TimeTravel at, ParseTimeTravel(tokens));
  if (!at.version && !at.timestamp) return tokens.Error("VERSION AS OF or TIMESTAMP AS OF");
  restore.request.version = at.version;
  restore.request.timestamp = at.timestamp;
  RETURN_IF_ERROR(tokens.ExpectEnd());
  return StatementBody(std::move(restore));
}

BodyOrDuckDb ParseSetting(TokenStream& tokens) {
  const bool reset = tokens.AcceptWords({"RESET", "BASIN"});
  if (!reset && !tokens.AcceptWords({"SET", "BASIN"})) return std::optional<StatementBody>();
  if (!tokens.AcceptSymbol(".")) return std::optional<StatementBody>();  // SET basin = ...: DuckDB's
  Setting setting;
  ASSIGN_OR_RETURN(std::string name, tokens.Name("a setting name after basin."));
  setting.name = AsciiLower(name);
  if (!reset) {
    if (!tokens.AcceptSymbol("=") && !tokens.AcceptWords({"TO"})) return tokens.Error("'=' or TO");
    ASSIGN_OR_RETURN(setting.value, tokens.LiteralValue("a value"));
  }
  RETURN_IF_ERROR(tokens.ExpectEnd());
  return std::optional<StatementBody>(std::move(setting));
}

}  // namespace basin::sql::grammar
