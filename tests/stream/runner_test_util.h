// What the stream runner's tests share: two counts of a sink table (rows, and distinct keys
// among them) from one query, a query's first column, and an available-now run that adds
// input after its first batch.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sql/session.h"
#include "storage/faulty_object_store.h"
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

// Runs batches while `faulty` (the checkpoint's store) fails one call in six at random, half
// the time after the write took effect; `open` opens the stream's runner, again after every
// third failed batch, as a restarted process would. Before each attempt `feed(attempt)`
// may add input, and returns whether more is still to come. Ends when a batch finds nothing to read
// and nothing more comes, or after `max_batches` batches, or 2,000 attempts. Every failure
// must be an injected one. The failures.
inline int RunThroughCheckpointFaults(
    FaultyObjectStore& faulty, const std::function<Result<std::unique_ptr<stream::StreamRunner>>()>& open,
    const std::function<bool(uint64_t attempt)>& feed, int max_batches = std::numeric_limits<int>::max()) {
  std::unique_ptr<stream::StreamRunner> runner;
  int failures = 0, batches = 0;
  for (uint64_t attempt = 1; attempt < 2'000 && batches < max_batches; attempt++) {
    const bool more = feed(attempt);
    faulty.SetOptions(
        {.failure_probability = 1.0 / 6, .seed = attempt, .fail_after_write = attempt % 2 == 0});
    if (!runner) {
      Result<std::unique_ptr<stream::StreamRunner>> opened = open();
      if (!opened.ok()) {
        EXPECT_NE(opened.status().message().find("injected fault"), std::string::npos)
            << opened.status().ToString();
        failures++;
        continue;
      }
      runner = std::move(opened).value();
    }
    Result<std::optional<stream::BatchCommit>> ran = runner->RunBatch();
    if (!ran.ok()) {
      EXPECT_NE(ran.status().message().find("injected fault"), std::string::npos) << ran.status().ToString();
      failures++;
      if (attempt % 3 == 0) runner.reset();
      continue;
    }
    if (*ran) batches++;
    if (!*ran && !more) break;
  }
  faulty.SetOptions({});
  return failures;
}

}  // namespace basin::testing
