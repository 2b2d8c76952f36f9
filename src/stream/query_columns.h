// QueryColumns: the columns of the queries a stream's batches write from, described by
// DuckDB once and again only when something they depend on may have changed. A write plans
// its rows from its source query's columns (commands::Write); binding the query for them
// (DuckDB's prepare) is a fixed cost of every batch, which a one-record batch feels.
//
// A query's columns are kept when it reads nothing but its STREAM sources
// (engine::ReadsOnlyStreamSources), by the sources' keys (BatchSource::ColumnsKey): the
// statement's text and the sources' keys then fix its columns. A query that reads tables,
// views or other table functions (whose columns may change between batches), or whose
// sources give no key, is described every time.
//
// Thread safety: one thread (the runner's).
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "basin/status.h"
#include "engine/duckdb.h"

namespace basin::stream {

class QueryColumns {
 public:
  using Describe = std::function<Result<std::vector<engine::ColumnType>>(const std::string& query)>;

  explicit QueryColumns(Describe describe) : describe_(std::move(describe)) {}

  // `query`'s columns, its sources' keys being `sources_key` (nullopt: a source gave none).
  // The describer's error when it fails (nothing is kept then).
  Result<std::vector<engine::ColumnType>> Of(const std::string& query,
                                             const std::optional<std::vector<std::string>>& sources_key);

 private:
  // Bounds both maps: a stream writes from one query (a few with dead letters), whose
  // sources' keys change at most once (a schema inferred).
  static constexpr size_t kKept = 16;
  struct Query {
    bool only_streams = false;
    std::map<std::vector<std::string>, std::vector<engine::ColumnType>> columns;  // by sources' keys
  };

  const Describe describe_;
  std::map<std::string, Query> queries_;  // by text
};

}  // namespace basin::stream
