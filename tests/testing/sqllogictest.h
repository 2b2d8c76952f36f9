// A sqllogictest parser and runner: SQL behaviour specified in readable .test files
// (tests/sql/<area>/<topic>.test), run against a basin::sql::Session. The format is
// specified in docs/sqllogictest.md.
//
// A Script is parsed once (loops are expanded then); RunScript executes it against a fresh
// Session on the given warehouse folder and returns every failure instead of asserting, so
// the runner itself can be tested on scripts that must fail.
//
// Thread safety: functions of their arguments; a Script is an immutable value.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "basin/status.h"

namespace basin::testing::slt {

enum class SortMode { kNoSort, kRowSort, kValueSort };

struct Record {
  enum class Kind {
    kStatementOk,
    kStatementError,
    kQuery,
    kRestart,
    kConnect,
    kRequire,
    kPipelineFile,
    kPipelineRun
  };
  Kind kind = Kind::kStatementOk;
  int line = 0;           // 1-based line of the record's header in its file
  std::string iteration;  // "i=3" inside loops, for failure messages; "" outside
  std::string sql;        // kStatementOk, kStatementError, kQuery; variables not yet substituted
                          // kPipelineFile: the file's text

  // kStatementError, kPipelineRun with `fails`: the code to expect (any code when absent) and
  // a substring of the message.
  bool fails = false;  // kPipelineRun: the run must fail
  std::optional<ErrorCode> error_code;
  std::optional<std::string> error_substring;

  // kQuery
  std::string column_types;  // one letter per column: I integer, R floating/decimal, T anything
  SortMode sort = SortMode::kNoSort;
  std::vector<std::string> expected_lines;  // after "----"; none means the query returns no rows

  std::string requirement;  // kRequire: "testdata"
  std::string user;         // kConnect: the session's user; "" for the warehouse's owner

  std::string file;                       // kPipelineFile: its name in the pipeline's folder
  std::vector<std::string> full_refresh;  // kPipelineRun: datasets to recompute ("all": every one)
};

struct Script {
  std::string name;  // the file name shown in failures
  std::vector<Record> records;
};

// Parses a .test file's text. InvalidArgument naming `name:line` for a malformed record.
Result<Script> ParseScript(std::string_view text, std::string name);
Result<Script> ParseScriptFile(const std::filesystem::path& path, std::string name);

struct RunOptions {
  std::string warehouse_dir;  // ${WAREHOUSE}; SessionOptions.warehouse_dir (a folder or memory://<name>)
  std::optional<std::filesystem::path> testdata;  // ${TESTDATA}; absent skips `require testdata`
};

struct RunReport {
  size_t records_run = 0;
  std::vector<std::string> failures;       // each "name:line: what", then SQL, expected and actual
  std::optional<std::string> skip_reason;  // set when a `require` was not met
};

// Runs every record in order, continuing past failures.
RunReport RunScript(const Script& script, const RunOptions& options);

// The tests/sql folder of the source tree these tests were built from.
std::filesystem::path SqlTestRoot();

// Every *.test file under `root`, sorted.
std::vector<std::filesystem::path> FindTestFiles(const std::filesystem::path& root);

}  // namespace basin::testing::slt
