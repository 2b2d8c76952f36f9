// Finding Basin's table references in statement text, so the session can replace them by
// scans: warehouse table names (`t`, `s.t`, with `VERSION AS OF n`, `TIMESTAMP AS OF
// '...'` or DuckDB's `[alias] AT (VERSION => n)` / `AT (TIMESTAMP => '...')`),
// delta_scan(...) and table_changes('name', start [, end]) calls.
//
// TRANSITIONAL: this splices scans into SQL text; the warehouse as a DuckDB catalog
// (docs/duckdb-integration.md) replaces it, and DuckDB's binder resolves the names.
//
// Names are found through DuckDB's syntax tree (json_serialize_sql) where DuckDB can
// serialize the statement (SELECTs), so only real table references are touched: not
// columns, CTE names, strings or comments. Other statements fall back to the names that
// follow FROM, JOIN, USING and INTO.
//
// Thread safety: functions; the Connection is used by one thread at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "engine/duckdb.h"

namespace basin::sql {

// The folder of the warehouse table `name` (one or two parts), nullopt when there is none.
using TableLocationLookup =
    std::function<Result<std::optional<std::string>>(const std::vector<std::string>& name)>;

// delta_scan('path' [, version => N | , timestamp => '...'])
struct DeltaScanCall {
  size_t begin = 0;  // offset of "delta_scan"
  size_t end = 0;    // one past the closing ')'
  std::string path;
  std::optional<int64_t> version;
  std::optional<std::string> timestamp;
};

// Every delta_scan call in one statement, in order. InvalidArgument for a call whose
// arguments are not of the forms above, or text DuckDB's scanner cannot read.
Result<std::vector<DeltaScanCall>> FindDeltaScanCalls(std::string_view statement);

// `sql` with every reference to a warehouse table replaced by delta_scan('<folder>'
// [, version => n | timestamp => '...']) AS "<name>" (the alias is kept when the statement
// gives one). Time travel on a name that is not a warehouse table is NotFound naming it.
Result<std::string> RewriteTableNames(const std::string& sql, engine::Connection& conn,
                                      const TableLocationLookup& lookup);

struct TableChangesCall {
  size_t begin = 0;  // offset of "table_changes"
  size_t end = 0;    // one past ')'
  std::vector<std::string> name;
  int64_t start_version = 0;
  std::optional<int64_t> end_version;
};

// Every table_changes('name', start [, end]) call in `sql`. InvalidArgument for other
// argument forms.
Result<std::vector<TableChangesCall>> FindTableChangesCalls(std::string_view sql);

}  // namespace basin::sql
