#include "sql/pg_settings.h"

#include <algorithm>

#include "basin/duration.h"
#include "basin/version.h"
#include "common/strings.h"

namespace basin::sql {
namespace {

struct PgSetting {
  std::string_view name;  // PostgreSQL's spelling: the column SHOW names
  std::string_view description;
  std::string_view value;                   // fixed, unless one of the two below
  std::string_view duckdb_expression = {};  // its value in the session, as DuckDB computes it
  bool statement_timeout = false;
  bool reported = false;  // sent as a ParameterStatus at startup
};

constexpr PgSetting kSettings[] = {
    {"client_encoding", "The client's character set (always UTF8).", "UTF8", {}, false, true},
    {"DateStyle", "How dates are written.", "ISO, MDY", {}, false, true},
    {"default_transaction_isolation",
     "The isolation level of each new transaction: every statement reads the latest commits.",
     "read committed"},
    {"integer_datetimes", "Timestamps are 64-bit integers.", "on", {}, false, true},
    {"IntervalStyle", "How intervals are written.", "postgres", {}, false, true},
    {"search_path", "The schemas unqualified names are looked up in.", "",
     "array_to_string(current_schemas(false), ', ')"},
    {"server_encoding", "The database's character set (always UTF8).", "UTF8", {}, false, true},
    {"server_version", "The PostgreSQL version Basin's protocol follows.", "", {}, false, true},
    {"server_version_num", "The PostgreSQL version Basin's protocol follows, as a number.", "160000"},
    {"standard_conforming_strings",
     "Backslashes in '...' strings are ordinary characters.",
     "on",
     {},
     false,
     true},
    {"statement_timeout", "Statements running longer are cancelled (0: no limit).", "", {}, true},
    {"TimeZone", "The time zone timestamps with time zone are shown in.", "", "current_setting('TimeZone')"},
    {"transaction_isolation",
     "The current transaction's isolation level: every statement reads the latest commits.",
     "read committed"},
    {"transaction_read_only", "Whether the current transaction is read-only.", "off"},
};

const PgSetting* FindSetting(std::string_view name) {
  for (const PgSetting& setting : kSettings) {
    if (EqualsIgnoreCase(setting.name, name)) return &setting;
  }
  return nullptr;
}

Result<std::string> ValueOf(engine::Connection& conn, const PgSetting& setting,
                            int64_t statement_timeout_ms) {
  if (setting.statement_timeout) return FormatDurationMs(statement_timeout_ms);
  if (setting.name == "server_version") return PgServerVersion();
  if (setting.duckdb_expression.empty()) return std::string(setting.value);
  ASSIGN_OR_RETURN(engine::QueryResult result,
                   conn.Query("SELECT " + std::string(setting.duckdb_expression)));
  if (result.row_count() != 1 || result.column_count() != 1 || !result.at(0, 0)) return std::string();
  return *result.at(0, 0);
}

engine::QueryResult TextColumns(std::vector<std::string> names) {
  engine::QueryResult result;
  result.column_types.assign(names.size(), "VARCHAR");
  result.column_names = std::move(names);
  return result;
}

Result<engine::QueryResult> ShowAll(engine::Connection& conn, int64_t statement_timeout_ms) {
  engine::QueryResult all = TextColumns({"name", "setting", "description"});
  for (const PgSetting& setting : kSettings) {
    ASSIGN_OR_RETURN(std::string value, ValueOf(conn, setting, statement_timeout_ms));
    all.rows.push_back({std::string(setting.name), std::move(value), std::string(setting.description)});
  }
  ASSIGN_OR_RETURN(engine::QueryResult duckdb,
                   conn.Query("SELECT name, value, description FROM duckdb_settings()"));
  for (auto& row : duckdb.rows) {
    if (row[0] && FindSetting(*row[0]) == nullptr) all.rows.push_back(std::move(row));
  }
  std::sort(all.rows.begin(), all.rows.end(), [](const auto& a, const auto& b) {
    return AsciiLower(a[0].value_or("")) < AsciiLower(b[0].value_or(""));
  });
  return all;
}

}  // namespace

std::string PgServerVersion() { return std::string("16.0 (Basin ") + kVersion + ")"; }

std::vector<std::pair<std::string, std::string>> PgReportedSettings() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const PgSetting& setting : kSettings) {
    if (!setting.reported) continue;
    out.emplace_back(setting.name, setting.name == "server_version" ? PgServerVersion() : setting.value);
  }
  return out;
}

Result<std::optional<engine::QueryResult>> ShowSetting(engine::Connection& conn, std::string_view name,
                                                       int64_t statement_timeout_ms) {
  if (EqualsIgnoreCase(name, "all")) {
    ASSIGN_OR_RETURN(engine::QueryResult all, ShowAll(conn, statement_timeout_ms));
    return std::optional<engine::QueryResult>(std::move(all));
  }
  if (const PgSetting* setting = FindSetting(name)) {
    engine::QueryResult result = TextColumns({std::string(setting->name)});
    ASSIGN_OR_RETURN(std::string value, ValueOf(conn, *setting, statement_timeout_ms));
    result.rows.push_back({std::move(value)});
    return std::optional<engine::QueryResult>(std::move(result));
  }
  ASSIGN_OR_RETURN(engine::QueryResult duckdb,
                   conn.Query("SELECT name, value FROM duckdb_settings() WHERE lower(name) = lower(" +
                              QuoteLiteral(name) + ")"));
  if (duckdb.row_count() != 1 || !duckdb.at(0, 0)) return std::optional<engine::QueryResult>();
  engine::QueryResult result = TextColumns({*duckdb.at(0, 0)});
  result.rows.push_back({duckdb.at(0, 1)});
  return std::optional<engine::QueryResult>(std::move(result));
}

}  // namespace basin::sql
