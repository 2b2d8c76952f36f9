// PostgreSQL's run-time settings as a Basin session shows them: SHOW name and SHOW ALL
// answer as PostgreSQL does (pgjdbc asks SHOW TRANSACTION ISOLATION LEVEL), and the pg
// server reports the same values at startup (ParameterStatus). Most are fixed, as Basin
// behaves (UTF8, ISO dates, read committed: each statement reads the latest commits);
// statement_timeout is the session's; search_path and TimeZone are DuckDB's.
//
// Thread safety: functions; ShowSetting uses the connection as its session's thread does.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "basin/status.h"
#include "engine/duckdb.h"

namespace basin::sql {

// What server_version says: "16.0 (Basin <version>)".
std::string PgServerVersion();

// The settings PostgreSQL reports to a client at startup, with their fixed values
// (server_version, encodings, DateStyle, IntervalStyle, integer_datetimes,
// standard_conforming_strings).
std::vector<std::pair<std::string, std::string>> PgReportedSettings();

// SHOW `name` (any case): one row with one column named as PostgreSQL names the setting;
// for "all", a row (name, setting, description) per setting, DuckDB's included. DuckDB's
// settings (threads, application_name...) are shown too. nullopt when `name` is no
// setting: DuckDB's SHOW then describes the table so named.
Result<std::optional<engine::QueryResult>> ShowSetting(engine::Connection& conn, std::string_view name,
                                                       int64_t statement_timeout_ms);

}  // namespace basin::sql
