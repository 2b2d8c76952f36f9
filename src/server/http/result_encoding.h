// How the HTTP API writes results: cells as JSON values by their DuckDB type, errors as
// {"error": {"code", "sqlstate", "message"}} with the HTTP status of the error code's table
// (basin/error_codes.h). CSV lines are server/copy_lines.h's.
//
// Thread safety: pure functions.
#pragma once

#include <httplib.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "basin/session.h"
#include "basin/status.h"

namespace basin::server::http {

// A cell of a column of DuckDB type `type` ("BIGINT", "DECIMAL(10,2)"): null for NULL,
// a number for integers (up to 64 bits) and finite floats, true/false for booleans, the text
// DuckDB writes otherwise (decimals, dates, times, huge integers, infinities, nested values).
nlohmann::json CellJson(const std::string& type, const std::optional<std::string>& cell);
// [{"name", "type"}] of a result's columns.
nlohmann::json ColumnsJson(const std::vector<std::string>& names, const std::vector<std::string>& types);

void SendJson(httplib::Response& response, int http_status, const nlohmann::json& body);
// {"error": {"code", "sqlstate", "message"}} of `error`.
// REQUIRES: !error.ok().
nlohmann::json ErrorJson(const Status& error);
// `error`'s code, SQLSTATE and message, with its code's HTTP status.
// REQUIRES: !error.ok().
void SendError(httplib::Response& response, const Status& error);

}  // namespace basin::server::http
