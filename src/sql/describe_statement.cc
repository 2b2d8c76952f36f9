#include "sql/describe_statement.h"

#include <charconv>
#include <optional>

#include "engine/syntax_tree.h"
#include "sql/grammar/parse.h"
#include "sql/statements.h"

namespace basin::sql {
namespace {

namespace tree = engine::tree;
using json = nlohmann::json;

// The rows of `node` when it is a VALUES list, through `SELECT * FROM (...)` wrappers.
const json* ValuesRows(const json& node) {
  const json* current = &node;
  for (int depth = 0; depth < 4; depth++) {
    if (tree::Text(*current, "type") != "SELECT_NODE") return nullptr;
    const json& from = tree::Field(*current, "from_table");
    const std::string kind = tree::Text(from, "type");
    if (kind == "EXPRESSION_LIST") {
      const json& rows = tree::Field(from, "values");
      return rows.is_array() ? &rows : nullptr;
    }
    const json& select = tree::Field(*current, "select_list");
    const bool star = select.is_array() && select.size() == 1 && tree::Text(select[0], "class") == "STAR";
    if (kind != "SUBQUERY" || !star) return nullptr;
    current = &tree::Field(tree::Field(from, "subquery"), "node");
  }
  return nullptr;
}

std::optional<size_t> ParameterIndex(const json& cell) {
  if (tree::Text(cell, "class") != "PARAMETER") return std::nullopt;
  const std::string identifier = tree::Text(cell, "identifier");
  size_t number = 0;
  const auto [end, ec] = std::from_chars(identifier.data(), identifier.data() + identifier.size(), number);
  if (ec != std::errc() || end != identifier.data() + identifier.size() || number == 0) return std::nullopt;
  return number - 1;
}

// The types of the target's columns an INSERT's VALUES fill, by position.
Result<std::vector<std::string>> FilledColumnTypes(Session& session, const engine::SqlInsert& insert,
                                                   size_t width) {
  ASSIGN_OR_RETURN(std::optional<catalog::TableEntry> entry, LookupTarget(session.context(), insert.target));
  if (!entry) return std::vector<std::string>();
  ASSIGN_OR_RETURN(auto snapshot, session.context().LoadTable(entry->location));
  std::vector<std::string> types;
  if (!insert.columns.empty()) {
    for (const std::string& name : insert.columns) {
      std::string type;
      for (const delta::StructField& field : snapshot->schema.fields) {
        if (field.name == name) type = field.type->ToDuckDBType();
      }
      types.push_back(type);
    }
    return types;
  }
  std::vector<std::string> all, stored;
  for (const delta::StructField& field : snapshot->schema.fields) {
    all.push_back(field.type->ToDuckDBType());
    if (!field.GenerationExpression()) stored.push_back(all.back());
  }
  return width == stored.size() ? stored : all;  // generated columns may be left out
}

// The types of the parameters of `parsed`, whose DuckDB's binder gave `types`.
Result<std::vector<std::string>> ParameterTypes(Session& session, const grammar::ParsedStatement& parsed,
                                                std::vector<std::string> types) {
  const auto* insert = std::get_if<grammar::Insert>(&parsed.body);
  if (insert == nullptr || insert->insert.by_name || insert->insert.query.empty()) return types;
  Result<json> serialized = tree::Serialize(session.connection(), insert->insert.query);
  if (!serialized.ok()) return types;
  const json& statements = tree::Field(*serialized, "statements");
  if (!statements.is_array() || statements.size() != 1) return types;
  const json* rows = ValuesRows(tree::Field(statements[0], "node"));
  if (rows == nullptr || rows->empty() || !(*rows)[0].is_array()) return types;
  ASSIGN_OR_RETURN(std::vector<std::string> columns,
                   FilledColumnTypes(session, insert->insert, (*rows)[0].size()));
  for (const json& row : *rows) {
    if (!row.is_array()) continue;
    for (size_t i = 0; i < row.size() && i < columns.size(); i++) {
      const std::optional<size_t> index = ParameterIndex(row[i]);
      if (!index || columns[i].empty()) continue;
      if (types.size() <= *index) types.resize(*index + 1);
      types[*index] = columns[i];
    }
  }
  return types;
}

}  // namespace

Result<basin::StatementDescription> DescribeStatement(Session& session, std::string_view statement) {
  ASSIGN_OR_RETURN(grammar::ParsedStatement parsed, grammar::ParseStatement(statement));
  // Binding reads tables: the user's grants decide, as for running the statement.
  RETURN_IF_ERROR(session.context().governor().BeginStatement());
  basin::StatementDescription out;
  out.command = CommandOf(parsed);
  std::optional<engine::Connection::PreparedShape> shape =
      session.connection().DescribePrepared(parsed.duckdb_sql);
  if (shape && shape->columns_known && std::holds_alternative<grammar::DuckDbStatement>(parsed.body)) {
    out.columns_known = true;
    out.column_names = shape->column_names;
    out.column_types = shape->column_types;
  }
  ASSIGN_OR_RETURN(out.parameter_types,
                   ParameterTypes(session, parsed,
                                  shape ? std::move(shape->parameter_types) : std::vector<std::string>()));
  return out;
}

}  // namespace basin::sql
