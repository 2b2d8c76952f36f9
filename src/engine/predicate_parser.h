// SQL boolean expressions (a WHERE clause, a MERGE condition, REPLACE WHERE) as Basin's
// predicate type (delta/predicate.h), for data skipping and conflict detection.
//
// DuckDB's parser reads the text (no connection, no query: microseconds), and its syntax
// tree is translated: column references (this table's, resolved against its schema),
// constants and casts of constants, comparisons, BETWEEN, IN, IS [NOT] NULL, AND, OR, NOT.
// Everything else (functions, subqueries, columns of other tables, columns compared with
// columns) becomes an unknown node, which may hold for any row. Constants take the type of
// the column they are compared with, converted with DuckDB's own casts: a string literal
// as DuckDB casts it implicitly ('2024-01-31' for a date column), other constants only
// where the conversion is exact (5 for a long column, not 5.5); otherwise the comparison
// is unknown. Timestamps without a time zone are read as UTC, Basin's session time zone.
//
// Implemented with DuckDB's C++ API in engine/duckdb/ (docs/duckdb-integration.md).
//
// Thread safety: functions of their arguments.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "basin/status.h"
#include "delta/predicate.h"
#include "delta/schema.h"

namespace basin::engine {

// Which column references in an expression are one table's.
struct PredicateScope {
  // Names that qualify this table's columns (its alias, or the table name): "t" in t.col.
  std::vector<std::string> qualifiers;
  // Names of the other tables in the same FROM; a.b with `a` among them is not ours.
  std::vector<std::string> other_qualifiers;
};

// The predicate `where_sql` (one boolean SQL expression) states about the table whose
// columns are `schema`. InvalidArgument, with DuckDB's message, when it does not parse as
// one expression.
Result<delta::Predicate> ParsePredicate(std::string_view where_sql, const delta::StructType& schema,
                                        const PredicateScope& scope = {});

// As ParsePredicate for an expression in the form json_serialize_sql() gives it (a WHERE
// clause of the session's syntax trees). What does not read back as a DuckDB expression
// is unknown.
delta::Predicate PredicateFromSyntaxTree(const nlohmann::json& expression, const delta::StructType& schema,
                                         const PredicateScope& scope = {});

}  // namespace basin::engine
