#include "engine/duckdb/table_changes_function.h"

#include "duckdb/main/extension/extension_loader.hpp"
#include "duckdb/parser/parser.hpp"
#include "duckdb/parser/qualified_name.hpp"
#include "duckdb/parser/statement/select_statement.hpp"
#include "duckdb/parser/tableref/subqueryref.hpp"
#include "engine/duckdb/client_state.h"
#include "engine/duckdb/errors.h"

namespace basin::engine::duckdb_ext {

namespace {

constexpr char kFunctionName[] = "table_changes";

duckdb::unique_ptr<duckdb::TableRef> BindReplace(duckdb::ClientContext& context,
                                                 duckdb::TableFunctionBindInput& input) {
  auto& state = GetClientState(context);
  if (!state.lakehouse || !state.lakehouse->table_changes) {
    throw duckdb::BinderException(
        "table_changes: this connection has no warehouse to read change feeds from");
  }
  for (const duckdb::Value& value : input.inputs) {
    if (value.IsNull()) throw duckdb::BinderException("table_changes: arguments must not be NULL");
  }
  duckdb::QualifiedName name = duckdb::QualifiedName::Parse(duckdb::StringValue::Get(input.inputs[0]));
  std::vector<std::string> parts;
  for (const std::string* part : {&name.catalog, &name.schema, &name.name}) {
    if (!part->empty()) parts.push_back(*part);
  }
  int64_t start = input.inputs[1].GetValue<int64_t>();
  std::optional<int64_t> end;
  if (input.inputs.size() > 2) end = input.inputs[2].GetValue<int64_t>();

  auto feed = state.lakehouse->table_changes(parts, start, end);
  if (!feed.ok()) ThrowStatus(feed.status());
  state.KeepUntilQueryEnd(feed->keepalive);

  duckdb::Parser parser;
  parser.ParseQuery(feed->sql);
  if (parser.statements.size() != 1 ||
      parser.statements[0]->type != duckdb::StatementType::SELECT_STATEMENT) {
    throw duckdb::InternalException("table_changes: the change feed is not one query");
  }
  auto select =
      duckdb::unique_ptr_cast<duckdb::SQLStatement, duckdb::SelectStatement>(std::move(parser.statements[0]));
  return duckdb::make_uniq<duckdb::SubqueryRef>(std::move(select), kFunctionName);
}

}  // namespace

void RegisterTableChanges(duckdb::DatabaseInstance& db) {
  duckdb::TableFunctionSet set(kFunctionName);
  for (size_t arguments : {2, 3}) {
    duckdb::vector<duckdb::LogicalType> types = {duckdb::LogicalType::VARCHAR, duckdb::LogicalType::BIGINT};
    if (arguments == 3) types.push_back(duckdb::LogicalType::BIGINT);
    duckdb::TableFunction function(kFunctionName, types, nullptr, nullptr);
    function.bind_replace = BindReplace;
    set.AddFunction(function);
  }
  duckdb::ExtensionLoader loader(db, "basin");
  loader.RegisterFunction(set);
}

}  // namespace basin::engine::duckdb_ext
