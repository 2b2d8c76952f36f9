#include "server/http/result_encoding.h"

#include <cassert>
#include <charconv>
#include <cmath>
#include <cstdlib>

namespace basin::server::http {
namespace {

using json = nlohmann::json;

bool IsOneOf(const std::string& type, std::initializer_list<std::string_view> names) {
  for (std::string_view name : names) {
    if (type == name) return true;
  }
  return false;
}

template <typename Integer>
std::optional<json> ParsedInteger(const std::string& text) {
  Integer value{};
  const char* end = text.data() + text.size();
  auto [stop, error] = std::from_chars(text.data(), end, value);
  if (error != std::errc() || stop != end) return std::nullopt;
  return json(value);
}

}  // namespace

json CellJson(const std::string& type, const std::optional<std::string>& cell) {
  if (!cell) return nullptr;
  const std::string& text = *cell;
  if (IsOneOf(type, {"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "UTINYINT", "USMALLINT", "UINTEGER"})) {
    if (std::optional<json> value = ParsedInteger<int64_t>(text)) return *value;
  } else if (type == "UBIGINT") {
    if (std::optional<json> value = ParsedInteger<uint64_t>(text)) return *value;
  } else if (IsOneOf(type, {"FLOAT", "DOUBLE"})) {
    char* end = nullptr;
    const double value = std::strtod(text.c_str(), &end);
    if (end == text.c_str() + text.size() && std::isfinite(value)) return value;
  } else if (type == "BOOLEAN") {
    if (text == "true" || text == "false") return text == "true";
  }
  return text;
}

json ColumnsJson(const std::vector<std::string>& names, const std::vector<std::string>& types) {
  json columns = json::array();
  for (size_t i = 0; i < names.size(); ++i) columns.push_back({{"name", names[i]}, {"type", types[i]}});
  return columns;
}

void SendJson(httplib::Response& response, int http_status, const json& body) {
  response.status = http_status;
  response.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

json ErrorJson(const Status& error) {
  assert(!error.ok());
  const ErrorCodeInfo& info = GetErrorCodeInfo(error.code());
  return {{"error",
           {{"code", std::string(info.name)},
            {"sqlstate", std::string(info.sqlstate)},
            {"message", error.message()}}}};
}

void SendError(httplib::Response& response, const Status& error) {
  SendJson(response, GetErrorCodeInfo(error.code()).http_status, ErrorJson(error));
}

}  // namespace basin::server::http
