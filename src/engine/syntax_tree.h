// DuckDB's syntax trees as JSON (json_serialize_sql / json_deserialize_sql): how layers above
// the engine read and rewrite a query by its structure, never by its text. A tree is what
// DuckDB's parser made of the SQL; a rewritten tree goes back to SQL through DuckDB, so the
// SQL that runs is always DuckDB's own rendering.
//
// Thread safety: functions; `conn` is used by one thread at a time.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "basin/status.h"
#include "engine/duckdb.h"

namespace basin::engine::tree {

using json = nlohmann::json;

// `node`'s member `key`; null when it has none (a tree DuckDB printed differently).
const json& Field(const json& node, std::string_view key);
// `node`'s member `key` when it is a string; "" otherwise.
std::string Text(const json& node, std::string_view key);
// The last name of a COLUMN_REF node; "" for another node.
std::string ColumnName(const json& node);

// The tree of `sql` (one or more statements), as json_serialize_sql gives it:
// {"error": false, "statements": [{"node": ...}, ...]}. InvalidArgument with DuckDB's
// message when DuckDB cannot parse it.
Result<json> Serialize(Connection& conn, const std::string& sql);
// The SQL of `tree` (as Serialize gives it), rendered by DuckDB.
Result<std::string> Deserialize(Connection& conn, const json& tree);

// Whether `a` and `b` are the same expression, whatever their aliases and places in the text.
bool SameExpression(const json& a, const json& b);

}  // namespace basin::engine::tree
