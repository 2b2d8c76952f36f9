// File-level data skipping: which files of a snapshot MAY hold rows matching a predicate,
// judged from each file's Delta statistics (numRecords, minValues, maxValues, nullCount;
// physical column names under column mapping) and partition values.
//
// Predicates are DuckDB syntax trees as json_serialize_sql() gives them. Understood:
// column <op> constant (=, <>, <, <=, >, >=, either operand order), BETWEEN, IN (...),
// IS [NOT] NULL, AND, OR. Anything else, missing statistics, NaN, or a constant whose type
// does not match the column, keeps the file: skipping never drops a file that could match.
//
// Thread safety: functions of their arguments.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"
#include "delta/snapshot.h"
#include "engine/duckdb.h"

namespace basin::engine {

// How column references in the predicate name this table's columns.
struct SkippingScope {
  // Names that qualify this table's columns (its alias, or the table name): "t" in t.col.
  std::vector<std::string> qualifiers;
  // Names of the other tables in the same FROM; a.b with `a` among them is not ours.
  std::vector<std::string> other_qualifiers;
};

// Indexes into snapshot.files of the files that may contain rows for which `predicate`
// is true, in increasing order.
std::vector<size_t> FilesMatching(const delta::Snapshot& snapshot, const nlohmann::json& predicate,
                                  const SkippingScope& scope = {});

// Each file's stats JSON parsed, indexed like snapshot.files (null when absent or
// unreadable). Parsing dominates skipping, so callers running many predicates against one
// snapshot parse once and use the overload below.
using ParsedStats = std::vector<nlohmann::json>;
ParsedStats ParseFileStats(const delta::Snapshot& snapshot);

// FilesMatching with `stats` from ParseFileStats(snapshot).
std::vector<size_t> FilesMatching(const delta::Snapshot& snapshot, const ParsedStats& stats,
                                  const nlohmann::json& predicate, const SkippingScope& scope = {});

// Whether `file` may contain rows for which `predicate` is true, judged as FilesMatching
// judges, with the schema, partition columns and column mapping of `snapshot`. `file` need
// not be one of snapshot.files: conflict detection asks this of files that concurrent
// commits added. A null predicate matches every file.
bool FileMayMatch(const delta::Snapshot& snapshot, const delta::AddFile& file,
                  const nlohmann::json& predicate, const SkippingScope& scope = {});

// The syntax tree of `where_sql` (a boolean SQL expression) as json_serialize_sql() gives
// it: the form FilesMatching takes. InvalidArgument, with DuckDB's message, when DuckDB
// cannot parse it.
Result<nlohmann::json> ParsePredicate(Connection& conn, const std::string& where_sql);

// Convenience for tests and tools: ParsePredicate, then FilesMatching with unqualified
// column names.
Result<std::vector<size_t>> FilesMatchingWhere(Connection& conn, const delta::Snapshot& snapshot,
                                               const std::string& where_sql);

}  // namespace basin::engine
