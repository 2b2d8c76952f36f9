#include "engine/stream_calls.h"

#include <exception>
#include <map>
#include <string>

#include "duckdb.hpp"
#include "duckdb/common/string_util.hpp"
#include "duckdb/parser/expression/function_expression.hpp"
#include "duckdb/parser/expression/subquery_expression.hpp"
#include "duckdb/parser/parsed_expression_iterator.hpp"
#include "duckdb/parser/parser.hpp"
#include "duckdb/parser/query_node.hpp"
#include "duckdb/parser/query_node/set_operation_node.hpp"
#include "duckdb/parser/statement/delete_statement.hpp"
#include "duckdb/parser/statement/insert_statement.hpp"
#include "duckdb/parser/statement/merge_into_statement.hpp"
#include "duckdb/parser/statement/select_statement.hpp"
#include "duckdb/parser/statement/update_statement.hpp"
#include "duckdb/parser/tableref/basetableref.hpp"
#include "duckdb/parser/tableref/joinref.hpp"
#include "duckdb/parser/tableref/subqueryref.hpp"
#include "duckdb/parser/tableref/table_function_ref.hpp"
#include "engine/duckdb/stream_source_call.h"

namespace basin::engine {

namespace {

// Walks a statement's query nodes, table references and expressions (subqueries included).
class StreamCallFinder {
 public:
  bool found() const { return found_; }

  void Statement(duckdb::SQLStatement& statement) {
    switch (statement.type) {
      case duckdb::StatementType::SELECT_STATEMENT:
        Node(*statement.Cast<duckdb::SelectStatement>().node);
        break;
      case duckdb::StatementType::INSERT_STATEMENT: {
        auto& insert = statement.Cast<duckdb::InsertStatement>();
        Ctes(insert.cte_map);
        if (insert.select_statement) Node(*insert.select_statement->node);
        break;
      }
      case duckdb::StatementType::MERGE_INTO_STATEMENT: {
        auto& merge = statement.Cast<duckdb::MergeIntoStatement>();
        Ctes(merge.cte_map);
        if (merge.source) Ref(*merge.source);
        break;
      }
      case duckdb::StatementType::UPDATE_STATEMENT: {
        auto& update = statement.Cast<duckdb::UpdateStatement>();
        Ctes(update.cte_map);
        if (update.from_table) Ref(*update.from_table);
        break;
      }
      case duckdb::StatementType::DELETE_STATEMENT: {
        auto& del = statement.Cast<duckdb::DeleteStatement>();
        Ctes(del.cte_map);
        for (auto& ref : del.using_clauses) Ref(*ref);
        break;
      }
      default:
        break;
    }
  }

 private:
  void Ctes(duckdb::CommonTableExpressionMap& ctes) {
    for (auto& entry : ctes.map) Node(*entry.second->query->node);
  }

  void Node(duckdb::QueryNode& node) {
    Ctes(node.cte_map);
    duckdb::ParsedExpressionIterator::EnumerateQueryNodeChildren(
        node, [&](duckdb::unique_ptr<duckdb::ParsedExpression>& child) { Expression(*child); },
        [&](duckdb::TableRef& ref) { Check(ref); });
  }

  // A table reference with its children (EnumerateTableRefChildren reports each).
  void Ref(duckdb::TableRef& ref) {
    duckdb::ParsedExpressionIterator::EnumerateTableRefChildren(
        ref, [&](duckdb::unique_ptr<duckdb::ParsedExpression>& child) { Expression(*child); },
        [&](duckdb::TableRef& child) { Check(child); });
  }

  void Expression(duckdb::ParsedExpression& expression) {
    if (expression.GetExpressionClass() == duckdb::ExpressionClass::SUBQUERY) {
      Node(*expression.Cast<duckdb::SubqueryExpression>().subquery->node);
    }
    duckdb::ParsedExpressionIterator::EnumerateChildren(
        expression, [&](duckdb::ParsedExpression& child) { Expression(child); });
  }

  void Check(duckdb::TableRef& ref) {
    if (ref.type == duckdb::TableReferenceType::BASE_TABLE) {  // STREAM f('x')
      auto& table = ref.Cast<duckdb::BaseTableRef>();
      if (duckdb::StringUtil::Lower(table.table_name) == "stream" && table.schema_name.empty() &&
          table.catalog_name.empty() && !ref.alias.empty() && !ref.column_name_alias.empty()) {
        found_ = true;
      }
      return;
    }
    if (ref.type != duckdb::TableReferenceType::TABLE_FUNCTION) return;
    auto& function = *ref.Cast<duckdb::TableFunctionRef>().function;
    if (function.GetExpressionClass() != duckdb::ExpressionClass::FUNCTION) return;
    auto& call = function.Cast<duckdb::FunctionExpression>();
    if (duckdb::StringUtil::Lower(call.function_name) == "stream" && call.schema.empty() &&
        !call.children.empty() &&  // STREAM(t [, option => value ...])
        call.children[0]->GetExpressionClass() == duckdb::ExpressionClass::COLUMN_REF) {
      found_ = true;
    }
  }

  bool found_ = false;
};

// Counts the STREAM sources (calls with basin_stream_source) of a query and finds where two
// meet other than by a set operation: a join with sources on both sides, or a query whose
// FROM holds one and whose expressions' subqueries another. A CTE counts where it is named.
class StreamJoinFinder {
 public:
  bool joined() const { return joined_; }

  int Node(duckdb::QueryNode& node) {
    Ctes(node.cte_map);
    int count = 0;
    switch (node.type) {
      case duckdb::QueryNodeType::SET_OPERATION_NODE: {
        auto& set = node.Cast<duckdb::SetOperationNode>();
        count = Node(*set.left) + Node(*set.right);
        break;
      }
      case duckdb::QueryNodeType::SELECT_NODE: {
        int from = 0, expressions = 0;
        duckdb::ParsedExpressionIterator::EnumerateQueryNodeChildren(
            node,
            [&](duckdb::unique_ptr<duckdb::ParsedExpression>& child) { expressions += Expression(*child); },
            [&](duckdb::TableRef& ref) { from += Ref(ref); });
        Meet(from, expressions);
        count = from + expressions;
        break;
      }
      default:  // a recursive CTE: its parts as one
        duckdb::ParsedExpressionIterator::EnumerateQueryNodeChildren(
            node, [&](duckdb::unique_ptr<duckdb::ParsedExpression>& child) { count += Expression(*child); },
            [&](duckdb::TableRef& ref) { count += Ref(ref); });
        break;
    }
    return count;
  }

 private:
  // The CTEs' counts, kept by name for where they are named.
  void Ctes(duckdb::CommonTableExpressionMap& ctes) {
    for (auto& entry : ctes.map)
      ctes_[duckdb::StringUtil::Lower(entry.first)] = Node(*entry.second->query->node);
  }

  int Ref(duckdb::TableRef& ref) {
    switch (ref.type) {
      case duckdb::TableReferenceType::TABLE_FUNCTION:
        return duckdb_ext::IsStreamSourceCall(*ref.Cast<duckdb::TableFunctionRef>().function) ? 1 : 0;
      case duckdb::TableReferenceType::JOIN: {
        auto& join = ref.Cast<duckdb::JoinRef>();
        const int left = Ref(*join.left), right = Ref(*join.right);
        Meet(left, right);
        const int condition = join.condition ? Expression(*join.condition) : 0;
        Meet(left + right, condition);
        return left + right + condition;
      }
      case duckdb::TableReferenceType::SUBQUERY:
        return Node(*ref.Cast<duckdb::SubqueryRef>().subquery->node);
      case duckdb::TableReferenceType::BASE_TABLE: {
        auto& table = ref.Cast<duckdb::BaseTableRef>();
        auto it = ctes_.find(duckdb::StringUtil::Lower(table.table_name));
        return table.schema_name.empty() && it != ctes_.end() ? it->second : 0;
      }
      default:
        return 0;
    }
  }

  int Expression(duckdb::ParsedExpression& expression) {
    int count = 0;
    if (expression.GetExpressionClass() == duckdb::ExpressionClass::SUBQUERY) {
      count += Node(*expression.Cast<duckdb::SubqueryExpression>().subquery->node);
    }
    duckdb::ParsedExpressionIterator::EnumerateChildren(
        expression, [&](duckdb::ParsedExpression& child) { count += Expression(child); });
    return count;
  }

  void Meet(int a, int b) { joined_ = joined_ || (a > 0 && b > 0); }

  std::map<std::string, int> ctes_;
  bool joined_ = false;
};

}  // namespace

bool duckdb_ext::IsStreamSourceCall(duckdb::ParsedExpression& function) {
  if (function.GetExpressionClass() != duckdb::ExpressionClass::FUNCTION) return false;
  for (auto& child : function.Cast<duckdb::FunctionExpression>().children) {
    if (duckdb::StringUtil::CIEquals(child->GetAlias(), kStreamSourceParameter)) return true;
  }
  return false;
}

bool JoinsStreamSources(std::string_view query) {
  duckdb::Parser parser;
  try {
    parser.ParseQuery(std::string(query));
  } catch (const std::exception&) {
    return false;
  }
  StreamJoinFinder finder;
  for (auto& statement : parser.statements) {
    if (statement->type == duckdb::StatementType::SELECT_STATEMENT) {
      finder.Node(*statement->Cast<duckdb::SelectStatement>().node);
    }
  }
  return finder.joined();
}

bool ReadsStreamMarker(std::string_view sql) {
  duckdb::Parser parser;
  try {
    parser.ParseQuery(std::string(sql));
  } catch (const std::exception&) {
    return false;
  }
  StreamCallFinder finder;
  for (auto& statement : parser.statements) finder.Statement(*statement);
  return finder.found();
}

}  // namespace basin::engine
