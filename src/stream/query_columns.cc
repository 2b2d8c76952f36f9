#include "stream/query_columns.h"

#include <utility>

#include "engine/table_refs.h"

namespace basin::stream {

Result<std::vector<engine::ColumnType>> QueryColumns::Of(
    const std::string& query, const std::optional<std::vector<std::string>>& sources_key) {
  auto found = queries_.find(query);
  if (found == queries_.end()) {
    if (queries_.size() >= kKept) queries_.clear();
    // A text DuckDB's parser refuses is not kept: describing it gives the error.
    Result<bool> only_streams = engine::ReadsOnlyStreamSources(query);
    found = queries_.emplace(query, Query{only_streams.ok() && *only_streams, {}}).first;
  }
  Query& kept = found->second;
  if (!kept.only_streams || !sources_key) return describe_(query);
  auto known = kept.columns.find(*sources_key);
  if (known != kept.columns.end()) return known->second;
  ASSIGN_OR_RETURN(std::vector<engine::ColumnType> columns, describe_(query));
  if (kept.columns.size() >= kKept) kept.columns.clear();
  kept.columns.emplace(*sources_key, columns);
  return columns;
}

}  // namespace basin::stream
