// Basin's INSERT forms, the ones DuckDB's grammar lacks (rules.h): WITH SCHEMA EVOLUTION,
// OVERWRITE, INTO TABLE, PARTITION (...), REPLACE WHERE.
#include "sql/grammar/rules.h"
#include "sql/grammar/slots.h"

namespace basin::sql::grammar {

namespace {

bool AtQueryStart(const TokenStream& tokens, size_t index) {
  for (std::string_view word : {"SELECT", "WITH", "VALUES", "FROM", "TABLE"}) {
    if (tokens.IsWordAt(index, word)) return true;
  }
  return tokens.IsSymbolAt(index, "(");
}

Result<std::vector<PartitionValue>> PartitionClause(TokenStream& tokens) {
  std::vector<PartitionValue> out;
  RETURN_IF_ERROR(tokens.ExpectSymbol("("));
  do {
    PartitionValue spec;
    ASSIGN_OR_RETURN(spec.column, tokens.Name("a partition column"));
    if (tokens.AcceptSymbol("=")) {
      ASSIGN_OR_RETURN(Slot value, ReadSlot(tokens, engine::SqlSlot::kExpression, "a partition value",
                                            BeforeComma(), [] { return Status::OK(); }));
      spec.value = std::move(value.sql);
    }
    out.push_back(std::move(spec));
  } while (tokens.AcceptSymbol(","));
  RETURN_IF_ERROR(tokens.ExpectSymbol(")"));
  return out;
}

engine::SqlTableName TableName(const QualifiedName& parts) {
  engine::SqlTableName out;
  out.table = parts.back();
  if (parts.size() >= 2) out.schema = parts[parts.size() - 2];
  if (parts.size() >= 3) out.catalog = parts[parts.size() - 3];
  return out;
}

// The query (or VALUES) that ends the statement.
Status RowsToEnd(TokenStream& tokens, Insert& insert) {
  if (!AtQueryStart(tokens, tokens.position())) return tokens.Error("a query or VALUES");
  ASSIGN_OR_RETURN(Query query, QueryToEnd(tokens, "a query or VALUES"));
  insert.insert.query = std::move(query.sql);
  insert.query_streams = std::move(query.streams);
  return Status::OK();
}

}  // namespace

Result<StatementBody> ParseBasinInsert(TokenStream& tokens) {
  Insert insert;
  insert.schema_evolution = tokens.AcceptWords({"WITH", "SCHEMA", "EVOLUTION"});
  if (tokens.AcceptWords({"OVERWRITE"})) {
    insert.overwrite = true;
  } else {
    RETURN_IF_ERROR(tokens.ExpectWords({"INTO"}));
  }
  tokens.AcceptWords({"TABLE"});
  ASSIGN_OR_RETURN(QualifiedName name, tokens.QualifiedName("a table name"));
  if (name.size() > 3) return tokens.Error("a table name of at most three parts");
  insert.insert.target = TableName(name);
  if (tokens.AcceptWords({"PARTITION"})) {
    ASSIGN_OR_RETURN(insert.partitions, PartitionClause(tokens));
  }
  if (tokens.PeekSymbol("(") && !AtQueryStart(tokens, tokens.position() + 1)) {
    ASSIGN_OR_RETURN(insert.insert.columns, NameList(tokens, "a column name"));
  }
  if (tokens.AcceptWords({"BY", "NAME"})) {
    insert.insert.by_name = true;
  } else {
    tokens.AcceptWords({"BY", "POSITION"});
  }
  if (insert.insert.by_name && !insert.insert.columns.empty()) {
    return Status::InvalidArgument("INSERT ... BY NAME cannot also name its columns");
  }
  if (!insert.overwrite && tokens.AcceptWords({"REPLACE", "WHERE"})) {
    auto before_rows = [](const TokenStream& t, size_t i) { return AtQueryStart(t, i); };
    ASSIGN_OR_RETURN(Slot predicate, ReadSlot(tokens, engine::SqlSlot::kExpression, "a predicate",
                                              before_rows, [&] { return RowsToEnd(tokens, insert); }));
    insert.replace_where = std::move(predicate.sql);
  } else {
    RETURN_IF_ERROR(RowsToEnd(tokens, insert));
  }
  return StatementBody(std::move(insert));
}

}  // namespace basin::sql::grammar
