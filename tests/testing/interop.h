// Interop checks for the Delta tables tests write: tests/interop/check_table.mjs reads the
// table with code that shares none with Basin (node, hyparquet, DuckDB's node bindings) and
// checks the log replay, every active file's row count and stats against its data, DuckDB's
// read_parquet row counts, and the live row count after deletion vectors. One node process
// per table, about half a second.
//
// The npm modules come from scripts/setup.sh (--print-node-modules prints their folder);
// they are found through $BASIN_NODE_MODULES, else the BASIN_NODE_MODULES CMake variable,
// else the setup script's default cache folder. Without node or the modules, tests skip
// locally and fail in CI (CI=true): use ASSERT_INTEROP or SKIP_OR_FAIL_WITHOUT_INTEROP.
//
// Thread safety: functions; each call runs its own process.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "basin/status.h"
#include "testing/test_util.h"

namespace basin::testing {

struct InteropOptions {
  // Checked against sum(numRecords - deletionVector.cardinality) over the active files.
  std::optional<int64_t> expected_live_rows;
  // Every active file must carry stats with numRecords (Basin always writes them; many
  // older Spark tables have none).
  bool require_stats = true;
};

// Why the checker cannot run here (no node on PATH, modules missing), or nullopt.
std::optional<std::string> InteropUnavailableReason();

// Runs the checker on the table at `table_dir` and returns its one-line JSON summary
// (files, numRecords, liveRows, duckdbRows, statsValuesChecked, checkpoint, ...).
// Corruption, naming the table and quoting the checker's report (file and column of every
// mismatch), when the table and its files disagree or the log cannot be replayed;
// NotFound when node or the modules are missing; Internal when the checker cannot run.
Result<nlohmann::json> RunInteropChecker(const std::string& table_dir, const InteropOptions& options = {});

// RunInteropChecker with stats required, for the tables Basin writes.
Status CheckInterop(const std::string& table_dir, std::optional<int64_t> expected_live_rows = {});

// The node_modules folder of the npm packages scripts/setup.sh installs.
std::filesystem::path NodeModulesDir();
// `program` as found on $PATH, or nullopt.
std::optional<std::filesystem::path> FindOnPath(const std::string& program);

struct ProcessOutput {
  int exit_code = -1;
  std::string out;
  std::string err;
};
// Runs argv (argv[0] a path) with extra environment entries, collecting stdout and stderr;
// Internal when it cannot start, or when it runs past five minutes (it is killed).
Result<ProcessOutput> RunProcess(const std::vector<std::string>& argv,
                                 const std::vector<std::string>& extra_env);

// Whether this is a CI run (CI=true), where a missing prerequisite is a failure, not a skip.
bool InCi();

}  // namespace basin::testing

// In a test body: skips the test (locally) or fails it (CI=true) when the interop checker
// cannot run, printing why.
#define SKIP_OR_FAIL_WITHOUT_INTEROP()                                                        \
  do {                                                                                        \
    if (auto _why = ::basin::testing::InteropUnavailableReason()) {                           \
      if (::basin::testing::InCi()) FAIL() << "interop checker unavailable in CI: " << *_why; \
      GTEST_SKIP() << "interop checker unavailable (" << *_why << "); skipping";              \
    }                                                                                         \
  } while (0)

// ASSERT_INTEROP(table_dir) or ASSERT_INTEROP(table_dir, expected_live_rows): in a test
// body, asserts that CheckInterop passes (skipping or failing as above without node).
#define ASSERT_INTEROP(...)                                 \
  do {                                                      \
    SKIP_OR_FAIL_WITHOUT_INTEROP();                         \
    ASSERT_OK(::basin::testing::CheckInterop(__VA_ARGS__)); \
  } while (0)
