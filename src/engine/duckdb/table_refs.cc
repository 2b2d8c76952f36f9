#include "engine/table_refs.h"

#include <algorithm>
#include <exception>
#include <set>
#include <string>

#include "duckdb.hpp"
#include "duckdb/common/string_util.hpp"
#include "duckdb/parser/expression/constant_expression.hpp"
#include "duckdb/parser/expression/function_expression.hpp"
#include "duckdb/parser/expression/subquery_expression.hpp"
#include "duckdb/parser/parsed_expression_iterator.hpp"
#include "duckdb/parser/parser.hpp"
#include "duckdb/parser/query_node.hpp"
#include "duckdb/parser/query_node/cte_node.hpp"
#include "duckdb/parser/query_node/recursive_cte_node.hpp"
#include "duckdb/parser/query_node/select_node.hpp"
#include "duckdb/parser/query_node/set_operation_node.hpp"
#include "duckdb/parser/statement/select_statement.hpp"
#include "duckdb/parser/tableref/basetableref.hpp"
#include "duckdb/parser/tableref/expressionlistref.hpp"
#include "duckdb/parser/tableref/joinref.hpp"
#include "duckdb/parser/tableref/pivotref.hpp"
#include "duckdb/parser/tableref/subqueryref.hpp"
#include "duckdb/parser/tableref/table_function_ref.hpp"
#include "engine/duckdb/stream_source_call.h"
#include "engine/stream_calls.h"

namespace basin::engine {

namespace {

// Walks query nodes, table references and expressions, with the CTE names in scope. The
// walk is its own (not ParsedExpressionIterator's, which descends into subqueries by
// itself), so that each subquery sees exactly the CTEs around it.
class TableRefFinder {
 public:
  const std::vector<SqlTableName>& tables() const { return tables_; }
  // Whether a table, a view or a table function other than a STREAM source was met.
  bool reads_beside_streams() const { return reads_beside_streams_; }

  void Node(duckdb::QueryNode& node, std::vector<std::string> ctes) {
    // A CTE sees the CTEs named before it and itself (when recursive); the node sees all.
    for (auto& entry : node.cte_map.map) {
      ctes.push_back(duckdb::StringUtil::Lower(entry.first));
      Node(*entry.second->query->node, ctes);
    }
    switch (node.type) {
      case duckdb::QueryNodeType::SELECT_NODE: {
        auto& select = node.Cast<duckdb::SelectNode>();
        if (select.from_table) Ref(*select.from_table, ctes);
        for (auto& expression : select.select_list) Expression(*expression, ctes);
        for (auto& expression : select.groups.group_expressions) Expression(*expression, ctes);
        for (auto* expression : {&select.where_clause, &select.having, &select.qualify}) {
          if (*expression) Expression(**expression, ctes);
        }
        break;
      }
      case duckdb::QueryNodeType::SET_OPERATION_NODE: {
        auto& set = node.Cast<duckdb::SetOperationNode>();
        Node(*set.left, ctes);
        Node(*set.right, ctes);
        break;
      }
      case duckdb::QueryNodeType::RECURSIVE_CTE_NODE: {
        auto& recursive = node.Cast<duckdb::RecursiveCTENode>();
        ctes.push_back(duckdb::StringUtil::Lower(recursive.ctename));
        Node(*recursive.left, ctes);
        Node(*recursive.right, ctes);
        break;
      }
      case duckdb::QueryNodeType::CTE_NODE: {
        auto& cte = node.Cast<duckdb::CTENode>();
        ctes.push_back(duckdb::StringUtil::Lower(cte.ctename));
        Node(*cte.query, ctes);
        Node(*cte.child, ctes);
        break;
      }
      default:
        break;
    }
    duckdb::ParsedExpressionIterator::EnumerateQueryNodeModifiers(
        node, [&](duckdb::unique_ptr<duckdb::ParsedExpression>& child) { Expression(*child, ctes); });
  }

 private:
  void Ref(duckdb::TableRef& ref, const std::vector<std::string>& ctes) {
    switch (ref.type) {
      case duckdb::TableReferenceType::BASE_TABLE:
        Table(ref.Cast<duckdb::BaseTableRef>(), ctes);
        break;
      case duckdb::TableReferenceType::SUBQUERY:
        Node(*ref.Cast<duckdb::SubqueryRef>().subquery->node, ctes);
        break;
      case duckdb::TableReferenceType::JOIN: {
        auto& join = ref.Cast<duckdb::JoinRef>();
        Ref(*join.left, ctes);
        Ref(*join.right, ctes);
        if (join.condition) Expression(*join.condition, ctes);
        break;
      }
      case duckdb::TableReferenceType::TABLE_FUNCTION: {
        auto& function = ref.Cast<duckdb::TableFunctionRef>();
        if (!duckdb_ext::IsStreamSourceCall(*function.function)) reads_beside_streams_ = true;
        TableRead(function);
        Expression(*function.function, ctes);
        break;
      }
      case duckdb::TableReferenceType::EXPRESSION_LIST:
        for (auto& row : ref.Cast<duckdb::ExpressionListRef>().values) {
          for (auto& value : row) Expression(*value, ctes);
        }
        break;
      case duckdb::TableReferenceType::PIVOT:
        Ref(*ref.Cast<duckdb::PivotRef>().source, ctes);
        break;
      default:
        break;
    }
  }

  void Expression(duckdb::ParsedExpression& expression, const std::vector<std::string>& ctes) {
    if (expression.GetExpressionClass() == duckdb::ExpressionClass::SUBQUERY) {
      Node(*expression.Cast<duckdb::SubqueryExpression>().subquery->node, ctes);
    }
    duckdb::ParsedExpressionIterator::EnumerateChildren(
        expression, [&](duckdb::ParsedExpression& child) { Expression(child, ctes); });
  }

  void Table(duckdb::BaseTableRef& table, const std::vector<std::string>& ctes) {
    const std::string lower = duckdb::StringUtil::Lower(table.table_name);
    const bool unqualified = table.schema_name.empty() && table.catalog_name.empty();
    if (unqualified && std::find(ctes.begin(), ctes.end(), lower) != ctes.end()) return;
    reads_beside_streams_ = true;
    Add({table.catalog_name, table.schema_name, table.table_name});
  }

  // The table a STREAM(t) source or a change feed reads: the name its call holds as a
  // string, as DuckDB reads a qualified name.
  void TableRead(duckdb::TableFunctionRef& ref) {
    if (ref.function->GetExpressionClass() != duckdb::ExpressionClass::FUNCTION) return;
    auto& call = ref.function->Cast<duckdb::FunctionExpression>();
    const std::string function = duckdb::StringUtil::Lower(call.function_name);
    if (function != kStreamTableFunction && function != kStreamChangesFunction && function != "table_changes")
      return;
    if (call.children.empty() || call.children[0]->GetExpressionClass() != duckdb::ExpressionClass::CONSTANT)
      return;
    const duckdb::Value& value = call.children[0]->Cast<duckdb::ConstantExpression>().value;
    if (value.type().id() != duckdb::LogicalTypeId::VARCHAR || value.IsNull()) return;
    const duckdb::QualifiedName name = duckdb::QualifiedName::Parse(duckdb::StringValue::Get(value));
    Add({name.catalog, name.schema, name.name});
  }

  void Add(SqlTableName name) {
    const std::string key = duckdb::StringUtil::Lower(name.catalog + "." + name.schema + "." + name.table);
    if (seen_.insert(key).second) tables_.push_back(std::move(name));
  }

  std::set<std::string> seen_;
  std::vector<SqlTableName> tables_;
  bool reads_beside_streams_ = false;
};

// `query`'s tables, walked by a TableRefFinder.
Result<TableRefFinder> FindTableRefs(std::string_view query) {
  duckdb::Parser parser;
  try {
    parser.ParseQuery(std::string(query));
  } catch (const std::exception& error) {
    return Status::InvalidArgument(duckdb::ErrorData(error).RawMessage());
  }
  if (parser.statements.size() != 1 ||
      parser.statements[0]->type != duckdb::StatementType::SELECT_STATEMENT) {
    return Status::InvalidArgument("expected one query, got: " + std::string(query));
  }
  TableRefFinder finder;
  finder.Node(*parser.statements[0]->Cast<duckdb::SelectStatement>().node, {});
  return finder;
}

}  // namespace

Result<std::vector<SqlTableName>> TablesReadBy(std::string_view query) {
  ASSIGN_OR_RETURN(TableRefFinder finder, FindTableRefs(query));
  return finder.tables();
}

Result<bool> ReadsOnlyStreamSources(std::string_view query) {
  ASSIGN_OR_RETURN(TableRefFinder finder, FindTableRefs(query));
  return !finder.reads_beside_streams();
}

}  // namespace basin::engine
