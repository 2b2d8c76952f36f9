#include "engine/duckdb/table_filters.h"

#include "duckdb/planner/expression/bound_comparison_expression.hpp"
#include "duckdb/planner/expression/bound_conjunction_expression.hpp"
#include "duckdb/planner/expression/bound_constant_expression.hpp"
#include "duckdb/planner/expression/bound_operator_expression.hpp"
#include "duckdb/planner/filter/conjunction_filter.hpp"
#include "duckdb/planner/filter/constant_filter.hpp"
#include "duckdb/planner/filter/dynamic_filter.hpp"
#include "duckdb/planner/filter/in_filter.hpp"
#include "duckdb/planner/filter/optional_filter.hpp"
#include "duckdb/planner/filter/struct_filter.hpp"

namespace basin::engine::duckdb_ext {

namespace {

delta::Predicate Unknown(const duckdb::TableFilter& filter, const delta::ColumnPath& path) {
  return delta::Predicate::Unknown(filter.ToString(delta::ColumnPathToString(path)));
}

delta::Predicate Convert(const duckdb::TableFilter& filter, const delta::ColumnPath& path) {
  switch (filter.filter_type) {
    case duckdb::TableFilterType::CONSTANT_COMPARISON: {
      auto& constant = filter.Cast<duckdb::ConstantFilter>();
      auto op = ToCompareOp(constant.comparison_type);
      auto literal = ToLiteral(constant.constant);
      if (!op || !literal) return Unknown(filter, path);
      return delta::Predicate::Compare(*op, path, *literal);
    }
    case duckdb::TableFilterType::IS_NULL:
      return delta::Predicate::IsNull(delta::Predicate::Column(path));
    case duckdb::TableFilterType::IS_NOT_NULL:
      return delta::Predicate::IsNotNull(delta::Predicate::Column(path));
    case duckdb::TableFilterType::IN_FILTER: {
      std::vector<delta::Literal> values;
      for (const duckdb::Value& value : filter.Cast<duckdb::InFilter>().values) {
        auto literal = ToLiteral(value);
        if (!literal) return Unknown(filter, path);
        values.push_back(std::move(*literal));
      }
      return delta::Predicate::In(delta::Predicate::Column(path), std::move(values));
    }
    case duckdb::TableFilterType::CONJUNCTION_AND:
    case duckdb::TableFilterType::CONJUNCTION_OR: {
      std::vector<delta::Predicate> children;
      for (const auto& child : static_cast<const duckdb::ConjunctionFilter&>(filter).child_filters) {
        children.push_back(Convert(*child, path));
      }
      return filter.filter_type == duckdb::TableFilterType::CONJUNCTION_AND
                 ? delta::Predicate::And(std::move(children))
                 : delta::Predicate::Or(std::move(children));
    }
    case duckdb::TableFilterType::STRUCT_EXTRACT: {
      auto& field = filter.Cast<duckdb::StructFilter>();
      delta::ColumnPath child_path = path;
      child_path.push_back(field.child_name);
      return Convert(*field.child_filter, child_path);
    }
    case duckdb::TableFilterType::OPTIONAL_FILTER: {
      // Implied by the query's other filters, so true of every row the query keeps.
      auto& optional = filter.Cast<duckdb::OptionalFilter>();
      if (!optional.child_filter) return delta::Predicate::Unknown();
      return Convert(*optional.child_filter, path);
    }
    case duckdb::TableFilterType::DYNAMIC_FILTER: {
      auto& dynamic = filter.Cast<duckdb::DynamicFilter>();
      if (!dynamic.filter_data) return delta::Predicate::Unknown();
      std::lock_guard<std::mutex> lock(dynamic.filter_data->lock);
      if (!dynamic.filter_data->initialized || !dynamic.filter_data->filter)
        return delta::Predicate::Unknown();
      return Convert(*dynamic.filter_data->filter, path);
    }
    default:
      return Unknown(filter, path);
  }
}

using ColumnOf = std::function<std::optional<delta::ColumnPath>(const duckdb::BoundColumnRefExpression&)>;

std::optional<delta::ColumnPath> ColumnOfExpression(const duckdb::Expression& expression,
                                                    const ColumnOf& column_of) {
  if (expression.GetExpressionClass() != duckdb::ExpressionClass::BOUND_COLUMN_REF) return std::nullopt;
  return column_of(expression.Cast<duckdb::BoundColumnRefExpression>());
}

std::optional<delta::Literal> ConstantOf(const duckdb::Expression& expression) {
  if (expression.GetExpressionClass() != duckdb::ExpressionClass::BOUND_CONSTANT) return std::nullopt;
  return ToLiteral(expression.Cast<duckdb::BoundConstantExpression>().value);
}

delta::Predicate ConvertExpression(const duckdb::Expression& expression, const ColumnOf& column_of) {
  auto unknown = [&] { return delta::Predicate::Unknown(expression.ToString()); };
  switch (expression.GetExpressionClass()) {
    case duckdb::ExpressionClass::BOUND_COMPARISON: {
      auto& comparison = expression.Cast<duckdb::BoundComparisonExpression>();
      std::optional<delta::CompareOp> op = ToCompareOp(comparison.GetExpressionType());
      if (!op) return unknown();
      if (auto column = ColumnOfExpression(*comparison.left, column_of)) {
        if (auto literal = ConstantOf(*comparison.right))
          return delta::Predicate::Compare(*op, *column, *literal);
      }
      if (auto column = ColumnOfExpression(*comparison.right, column_of)) {
        if (auto literal = ConstantOf(*comparison.left)) {
          return delta::Predicate::Compare(delta::FlipCompareOp(*op), *column, *literal);
        }
      }
      return unknown();
    }
    case duckdb::ExpressionClass::BOUND_CONJUNCTION: {
      auto& conjunction = expression.Cast<duckdb::BoundConjunctionExpression>();
      std::vector<delta::Predicate> children;
      for (const auto& child : conjunction.children) children.push_back(ConvertExpression(*child, column_of));
      if (conjunction.GetExpressionType() == duckdb::ExpressionType::CONJUNCTION_AND) {
        return delta::Predicate::And(std::move(children));
      }
      if (conjunction.GetExpressionType() == duckdb::ExpressionType::CONJUNCTION_OR) {
        return delta::Predicate::Or(std::move(children));
      }
      return unknown();
    }
    case duckdb::ExpressionClass::BOUND_OPERATOR: {
      auto& op = expression.Cast<duckdb::BoundOperatorExpression>();
      if (op.children.empty()) return unknown();
      switch (op.GetExpressionType()) {
        case duckdb::ExpressionType::OPERATOR_NOT:
          return delta::Predicate::Not(ConvertExpression(*op.children[0], column_of));
        case duckdb::ExpressionType::OPERATOR_IS_NULL:
        case duckdb::ExpressionType::OPERATOR_IS_NOT_NULL: {
          auto column = ColumnOfExpression(*op.children[0], column_of);
          if (!column) return unknown();
          return op.GetExpressionType() == duckdb::ExpressionType::OPERATOR_IS_NULL
                     ? delta::Predicate::IsNull(delta::Predicate::Column(*column))
                     : delta::Predicate::IsNotNull(delta::Predicate::Column(*column));
        }
        case duckdb::ExpressionType::COMPARE_IN: {
          auto column = ColumnOfExpression(*op.children[0], column_of);
          if (!column) return unknown();
          std::vector<delta::Literal> values;
          for (size_t i = 1; i < op.children.size(); i++) {
            auto literal = ConstantOf(*op.children[i]);
            if (!literal) return unknown();
            values.push_back(std::move(*literal));
          }
          return delta::Predicate::In(delta::Predicate::Column(*column), std::move(values));
        }
        default:
          return unknown();
      }
    }
    default:
      return unknown();
  }
}

}  // namespace

delta::Predicate ToPredicate(const duckdb::Expression& expression, const ColumnOf& column_of) {
  return ConvertExpression(expression, column_of);
}

std::optional<delta::CompareOp> ToCompareOp(duckdb::ExpressionType type) {
  switch (type) {
    case duckdb::ExpressionType::COMPARE_EQUAL:
      return delta::CompareOp::kEqual;
    case duckdb::ExpressionType::COMPARE_NOTEQUAL:
      return delta::CompareOp::kNotEqual;
    case duckdb::ExpressionType::COMPARE_LESSTHAN:
      return delta::CompareOp::kLess;
    case duckdb::ExpressionType::COMPARE_LESSTHANOREQUALTO:
      return delta::CompareOp::kLessOrEqual;
    case duckdb::ExpressionType::COMPARE_GREATERTHAN:
      return delta::CompareOp::kGreater;
    case duckdb::ExpressionType::COMPARE_GREATERTHANOREQUALTO:
      return delta::CompareOp::kGreaterOrEqual;
    default:
      return std::nullopt;
  }
}

delta::Int128 UnscaledDecimal(const duckdb::Value& value) {
  switch (value.type().InternalType()) {
    case duckdb::PhysicalType::INT16:
      return value.GetValueUnsafe<int16_t>();
    case duckdb::PhysicalType::INT32:
      return value.GetValueUnsafe<int32_t>();
    case duckdb::PhysicalType::INT64:
      return value.GetValueUnsafe<int64_t>();
    default: {
      const duckdb::hugeint_t wide = value.GetValueUnsafe<duckdb::hugeint_t>();
      return static_cast<delta::Int128>(
          static_cast<unsigned __int128>(static_cast<uint64_t>(wide.upper)) << 64 | wide.lower);
    }
  }
}

std::optional<delta::Literal> ToLiteral(const duckdb::Value& value) {
  if (value.IsNull()) return std::nullopt;
  const duckdb::LogicalType& type = value.type();
  switch (type.id()) {
    case duckdb::LogicalTypeId::BOOLEAN:
      return delta::Literal::Boolean(duckdb::BooleanValue::Get(value));
    case duckdb::LogicalTypeId::TINYINT:
      return delta::Literal::Byte(duckdb::TinyIntValue::Get(value));
    case duckdb::LogicalTypeId::SMALLINT:
      return delta::Literal::Short(duckdb::SmallIntValue::Get(value));
    case duckdb::LogicalTypeId::INTEGER:
      return delta::Literal::Int(duckdb::IntegerValue::Get(value));
    case duckdb::LogicalTypeId::BIGINT:
      return delta::Literal::Long(duckdb::BigIntValue::Get(value));
    case duckdb::LogicalTypeId::FLOAT:
      return delta::Literal::Float(duckdb::FloatValue::Get(value));
    case duckdb::LogicalTypeId::DOUBLE:
      return delta::Literal::Double(duckdb::DoubleValue::Get(value));
    case duckdb::LogicalTypeId::DECIMAL: {
      int width = duckdb::DecimalType::GetWidth(type);
      int scale = duckdb::DecimalType::GetScale(type);
      return delta::Literal::Decimal(UnscaledDecimal(value), width, scale);
    }
    case duckdb::LogicalTypeId::VARCHAR:
      return delta::Literal::String(duckdb::StringValue::Get(value));
    case duckdb::LogicalTypeId::BLOB:
      return delta::Literal::Binary(duckdb::StringValue::Get(value));
    case duckdb::LogicalTypeId::DATE:
      return delta::Literal::Date(duckdb::DateValue::Get(value).days);
    case duckdb::LogicalTypeId::TIMESTAMP_TZ:
      return delta::Literal::Timestamp(value.GetValue<duckdb::timestamp_tz_t>().value);
    case duckdb::LogicalTypeId::TIMESTAMP:
      return delta::Literal::TimestampNtz(duckdb::TimestampValue::Get(value).value);
    default:
      return std::nullopt;
  }
}

delta::Predicate ToPredicate(
    const duckdb::TableFilterSet& filters,
    const std::function<std::optional<delta::ColumnPath>(duckdb::idx_t)>& column_of) {
  std::vector<delta::Predicate> terms;
  for (const auto& [key, filter] : filters.filters) {
    std::optional<delta::ColumnPath> path = column_of(key);
    if (!path) continue;
    terms.push_back(Convert(*filter, *path));
  }
  return delta::Predicate::And(std::move(terms));
}

}  // namespace basin::engine::duckdb_ext
