// DuckDB's scan filters as Basin predicates: what data skipping evaluates against each
// file's partition values and statistics (delta/skipping.h).
//
// A TableFilterSet is what DuckDB pushes into a scan: per column, comparisons with
// constants, IS [NOT] NULL, IN lists, AND/OR of those, filters on struct fields, optional
// filters (implied by others, such as the IN list a join derives), and dynamic filters
// whose bounds a join fills in while the query runs. Everything else becomes an unknown
// predicate, which rules nothing out.
//
// Thread safety: functions of their arguments (a dynamic filter's data is read under its
// lock).
#pragma once

#include <functional>
#include <optional>

#include "delta/predicate.h"
#include "duckdb.hpp"
#include "duckdb/planner/expression/bound_columnref_expression.hpp"
#include "duckdb/planner/table_filter.hpp"

namespace basin::engine::duckdb_ext {

// The comparison an expression type stands for; nullopt for other types.
std::optional<delta::CompareOp> ToCompareOp(duckdb::ExpressionType type);

// The unscaled integer of the DECIMAL `value`, whatever width DuckDB stores it in.
// REQUIRES: value.type() is a DECIMAL and the value is not NULL.
delta::Int128 UnscaledDecimal(const duckdb::Value& value);

// `value` as a literal of the Delta type DuckDB's `value.type()` reads as; nullopt for
// NULL and for types Delta has no literal for.
std::optional<delta::Literal> ToLiteral(const duckdb::Value& value);

// The conjunction of `filters`; `column_of(key)` gives the logical path of the column a
// filter's key names, or nullopt when the key is not a table column (a virtual column).
delta::Predicate ToPredicate(const duckdb::TableFilterSet& filters,
                             const std::function<std::optional<delta::ColumnPath>(duckdb::idx_t)>& column_of);

// A bound filter expression the optimizer could not turn into table filters (an OR across
// columns, say) as a predicate: comparisons of a column with a constant, IS [NOT] NULL, IN
// lists, AND, OR and NOT; anything else is unknown. `column_of(ref)` gives the logical
// path of the table column a column reference names, or nullopt when it names none.
delta::Predicate ToPredicate(
    const duckdb::Expression& expression,
    const std::function<std::optional<delta::ColumnPath>(const duckdb::BoundColumnRefExpression&)>&
        column_of);

}  // namespace basin::engine::duckdb_ext
