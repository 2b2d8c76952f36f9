// Pipeline DDL in the Lakeflow (Databricks) spelling (rules.h): streaming tables,
// materialized views and flows. Parsed only: the pipelines issue runs them.
#include "sql/grammar/rules.h"
#include "sql/grammar/slots.h"

namespace basin::sql::grammar {

namespace {

// The clauses after the table elements, in any order, then [AS query].
Status PipelineClauses(TokenStream& tokens, PipelineTable& table, bool query_required) {
  ASSIGN_OR_RETURN(TableClauses clauses, ParseTableClauses(tokens, /*warehouse_table=*/false));
  table.partition_columns = std::move(clauses.partition_columns);
  table.properties = std::move(clauses.properties);
  table.comment = std::move(clauses.comment);
  if (tokens.AcceptWords({"AS"})) {
    ASSIGN_OR_RETURN(table.query, QueryToEnd(tokens, "a query after AS"));
  } else if (query_required) {
    return tokens.Error("AS query");
  }
  return tokens.ExpectEnd();
}

// cols | (cols) | * EXCEPT (cols)
Result<ColumnSelection> Selection(TokenStream& tokens) {
  ColumnSelection out;
  if (tokens.AcceptSymbol("*")) {
    out.all_except = true;
    RETURN_IF_ERROR(tokens.ExpectWords({"EXCEPT"}));
    ASSIGN_OR_RETURN(out.columns, NameList(tokens, "a column name"));
    return out;
  }
  ASSIGN_OR_RETURN(out.columns, OptionallyParenthesizedNames(tokens, "a column name"));
  return out;
}

// The clauses of AUTO CDC after KEYS (...), from clause `stage` on, in their fixed order.
// Each expression ends before a later clause; the slots call back into this for the rest.
Status AutoCdcClauses(TokenStream& tokens, AutoCdcFlow& flow, int stage) {
  const SlotEnds before_clause =
      BeforeWords({{"APPLY", "AS"}, {"SEQUENCE", "BY"}, {"COLUMNS"}, {"STORED", "AS"}, {"TRACK", "HISTORY"}});
  auto expression = [&](std::optional<std::string>& out, std::string_view what, int next) -> Status {
    ASSIGN_OR_RETURN(Slot slot, ReadSlot(tokens, engine::SqlSlot::kExpression, what, before_clause,
                                         [&] { return AutoCdcClauses(tokens, flow, next); }));
    out = std::move(slot.sql);
    return Status::OK();
  };
  if (stage <= 0) {
    flow.apply_as_delete.reset();
    if (tokens.AcceptWords({"APPLY", "AS", "DELETE", "WHEN"})) {
      return expression(flow.apply_as_delete, "a delete condition", 1);
    }
  }
  if (stage <= 1) {
    flow.apply_as_truncate.reset();
    if (tokens.AcceptWords({"APPLY", "AS", "TRUNCATE", "WHEN"})) {
      return expression(flow.apply_as_truncate, "a truncate condition", 2);
    }
  }
  if (stage <= 2) {
    RETURN_IF_ERROR(tokens.ExpectWords({"SEQUENCE", "BY"}));
    std::optional<std::string> sequence_by;
    RETURN_IF_ERROR(expression(sequence_by, "a sequencing expression", 3));
    flow.sequence_by = std::move(*sequence_by);
    return Status::OK();
  }
  flow.columns.reset();
  flow.track_history.reset();
  flow.scd_type = 1;
  if (tokens.AcceptWords({"COLUMNS"})) {
    ASSIGN_OR_RETURN(flow.columns, Selection(tokens));
  }
  if (tokens.AcceptWords({"STORED", "AS", "SCD", "TYPE"})) {
    ASSIGN_OR_RETURN(int64_t type, tokens.Integer("1 or 2"));
    if (type != 1 && type != 2) return Status::InvalidArgument("STORED AS SCD TYPE must be 1 or 2");
    flow.scd_type = static_cast<int>(type);
  }
  if (tokens.AcceptWords({"TRACK", "HISTORY", "ON"})) {
    ASSIGN_OR_RETURN(flow.track_history, Selection(tokens));
  }
  return tokens.ExpectEnd();
}

Result<AutoCdcFlow> AutoCdc(TokenStream& tokens) {
  AutoCdcFlow flow;
  RETURN_IF_ERROR(tokens.ExpectWords({"INTO"}));
  ASSIGN_OR_RETURN(flow.target, tokens.QualifiedName("a target table"));
  RETURN_IF_ERROR(tokens.ExpectWords({"FROM"}));
  if (tokens.AcceptWords({"STREAM"})) {
    flow.source_is_stream = true;
    const bool parenthesized = tokens.AcceptSymbol("(");
    ASSIGN_OR_RETURN(flow.source, tokens.QualifiedName("a source table"));
    if (parenthesized) RETURN_IF_ERROR(tokens.ExpectSymbol(")"));
  } else {
    ASSIGN_OR_RETURN(flow.source, tokens.QualifiedName("a source table"));
  }
  RETURN_IF_ERROR(tokens.ExpectWords({"KEYS"}));
  ASSIGN_OR_RETURN(flow.keys, NameList(tokens, "a key column"));
  flow.ignore_null_updates = tokens.AcceptWords({"IGNORE", "NULL", "UPDATES"});
  RETURN_IF_ERROR(AutoCdcClauses(tokens, flow, 0));
  return flow;
}

}  // namespace

Result<StatementBody> ParsePipelineTable(TokenStream& tokens, bool or_refresh, bool materialized_view) {
  PipelineTable table;
  table.or_refresh = or_refresh;
  ASSIGN_OR_RETURN(table.name, tokens.QualifiedName("a table name"));
  if (tokens.PeekSymbol("(")) {
    ASSIGN_OR_RETURN(TableElements elements, ParseTableElements(tokens, /*pipeline_table=*/true));
    RETURN_IF_ERROR(elements.unsupported);
    table.columns = std::move(elements.columns);
    table.checks = std::move(elements.checks);
    table.expectations = std::move(elements.expectations);
  }
  RETURN_IF_ERROR(PipelineClauses(tokens, table, /*query_required=*/materialized_view));
  if (materialized_view) return StatementBody(CreateMaterializedView{std::move(table)});
  return StatementBody(CreateStreamingTable{std::move(table)});
}

Result<StatementBody> ParseCreateFlow(TokenStream& tokens) {
  CreateFlow create;
  ASSIGN_OR_RETURN(create.name, tokens.Name("a flow name"));
  RETURN_IF_ERROR(tokens.ExpectWords({"AS"}));
  if (tokens.AcceptWords({"AUTO", "CDC"})) {
    ASSIGN_OR_RETURN(create.flow, AutoCdc(tokens));
    return StatementBody(std::move(create));
  }
  RETURN_IF_ERROR(tokens.ExpectWords({"INSERT", "INTO"}));
  InsertFlow flow;
  flow.once = tokens.AcceptWords({"ONCE"});
  ASSIGN_OR_RETURN(flow.target, tokens.QualifiedName("a target table"));
  RETURN_IF_ERROR(tokens.ExpectWords({"BY", "NAME"}));
  ASSIGN_OR_RETURN(flow.query, QueryToEnd(tokens, "a query"));
  create.flow = std::move(flow);
  return StatementBody(std::move(create));
}

}  // namespace basin::sql::grammar
