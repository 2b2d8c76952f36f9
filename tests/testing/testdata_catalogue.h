// The catalogue of the Delta tables in the shared test data (<testdata>/delta/<source>/<case>/)
// and what each holds at its latest version, transcribed once from testdata/README.md
// ("Delta cases (63)") for every suite that reads them.
//
// Thread safety: the catalogue is built on first use and never changes; safe from any thread.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "basin/error_codes.h"

namespace basin::testing {

// Where the README's row count can be checked. A table written without stats has no
// numRecords in its log, so only the Parquet footers of its active files (less the rows
// their deletion vectors delete) count its rows.
enum class RowCountSource { kLog, kFooters };

// What a conforming reader gets from a test table at its latest version: `rows` live rows,
// or, when `error` is set, a refusal with that code (rows is then 0).
struct DeltaTableExpectation {
  int64_t rows = 0;
  RowCountSource rows_from = RowCountSource::kLog;
  std::optional<ErrorCode> error;
};

// Every Delta test table, keyed "<source>/<case>" (e.g. "dat/basic_append").
const std::map<std::string, DeltaTableExpectation>& DeltaTestTables();

// The table root inside a case folder: <case>/delta when it holds the _delta_log (the
// golden and DAT layouts, with expected rows beside it), else the case folder itself.
std::filesystem::path DeltaTableRoot(const std::filesystem::path& case_dir);

}  // namespace basin::testing
