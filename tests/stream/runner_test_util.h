// What the stream runner's tests share: two counts of a sink table (rows, and distinct keys
// among them) from one query, a query's first column, and an available-now run that adds
// input after its first batch.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "sql/session.h"
#include "stream/runner.h"

namespace basin::testing {

// The two integers of the one row `query` returns ({-1, -1}, and a test failure, when it fails).
inline std::pair<int64_t, int64_t> TwoCounts(sql::Session& session, const std::string& query) {
  auto result = session.Execute(query);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  if (!result.ok()) return {-1, -1};
  const auto& row = result->back().result;
  return {std::stoll(*row.at(0, 0)), std::stoll(*row.at(0, 1))};
}

// The first column of what `query` returns, NULL as "NULL" (empty, and a test failure, when
// it fails).
inline std::vector<std::string> FirstColumn(sql::Session& session, const std::string& query) {
  auto result = session.Execute(query);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  std::vector<std::string> cells;
  if (!result.ok()) return cells;
  for (const auto& row : result->back().result.rows) cells.push_back(row.at(0).value_or("NULL"));
  return cells;
}

// Runs `runner` with trigger available-now; `after_first_batch` runs once the first batch
// committed (input arriving while the run goes on). The rows out of each batch.
inline std::vector<int64_t> RunAvailableNow(stream::StreamRunner& runner,
                                            const std::function<void()>& after_first_batch) {
  std::vector<int64_t> batches;
  stream::RunOptions options;
  options.trigger = stream::Trigger::kAvailableNow;
  options.on_batch = [&](const std::optional<stream::BatchCommit>& commit) {
    if (!commit) return;
    batches.push_back(commit->rows_out);
    if (batches.size() == 1) after_first_batch();
  };
  Status run = runner.Run(options);
  EXPECT_TRUE(run.ok()) << run.ToString();
  return batches;
}

}  // namespace basin::testing
