// Deciding a predicate over partition columns from partition values alone. Every row of a
// file shares the file's partition values, so such a predicate holds for all of its rows
// or for none, and a command can act on whole files without reading them.
//
// Thread safety: functions; `conn` is used by one thread at a time.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "basin/status.h"
#include "delta/schema.h"
#include "delta/snapshot.h"
#include "engine/duckdb.h"
#include "engine/predicate_parser.h"

namespace basin::commands {

// The syntax tree of the boolean SQL expression (json_serialize_sql's where clause), or
// null when DuckDB cannot parse it on its own (the command's query then reports why).
nlohmann::json ExpressionTree(engine::Connection& conn, const std::string& expression);

// Whether `tree` (a json_serialize_sql expression) has the same value for every row of a
// file: it references only partition columns of `snapshot` (unqualified, or qualified by
// one of scope.qualifiers), and no subquery or function whose value changes per row
// (random(), uuid(), nextval(), ...).
bool DecidedByPartitionValues(const nlohmann::json& tree, const delta::Snapshot& snapshot,
                              const engine::PredicateScope& scope);

// Those of `files` (indexes into snapshot.files, kept in order) whose partition values
// make `predicate` true (NULL counts as false). DuckDB evaluates it over one row per file
// holding the partition columns under their logical names, in a relation named `alias`.
// Errors: the query's, e.g. InvalidArgument when the predicate names another column.
Result<std::vector<size_t>> FilesWherePartitionsSatisfy(engine::Connection& conn,
                                                        const delta::Snapshot& snapshot,
                                                        const std::vector<size_t>& files,
                                                        const std::string& predicate,
                                                        const std::string& alias);

}  // namespace basin::commands
