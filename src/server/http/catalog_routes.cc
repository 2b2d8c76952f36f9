#include "server/http/catalog_routes.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "basin/snapshot.h"
#include "basin/table.h"
#include "basin/warehouse.h"
#include "common/strings.h"
#include "server/http/lineage_route.h"
#include "server/http/result_encoding.h"
#include "server/http/url_names.h"

namespace basin::server::http {
namespace {

using json = nlohmann::json;

constexpr int64_t kFilesPageSize = 1000;

// The result of the one statement `sql`, run as `user`.
Result<QueryResult> Query(const HttpContext& context, const std::string& user, const std::string& sql) {
  ASSIGN_OR_RETURN(std::unique_ptr<Session> session, context.OpenSession(user));
  ASSIGN_OR_RETURN(std::vector<StatementResult> results, session->Execute(sql));
  return std::move(results.back().result);
}

// Each row as an object keyed by column name.
json RowObjects(const QueryResult& result) {
  json objects = json::array();
  for (const Row& row : result.rows) {
    json object = json::object();
    for (size_t i = 0; i < row.size(); ++i)
      object[result.column_names[i]] = CellJson(result.column_types[i], row[i]);
    objects.push_back(std::move(object));
  }
  return objects;
}

// The first column's cells.
json FirstColumn(const QueryResult& result) {
  json cells = json::array();
  for (const Row& row : result.rows) cells.push_back(row[0] ? json(*row[0]) : json());
  return cells;
}

// Runs `answer` and sends its JSON, or its error.
void Answer(httplib::Response& response, const std::function<Result<json>()>& answer) {
  Result<json> body = answer();
  if (!body.ok()) return SendError(response, body.status());
  SendJson(response, 200, *body);
}

Result<json> Schemas(const HttpContext& context, const std::string& user) {
  ASSIGN_OR_RETURN(QueryResult result, Query(context, user,
                                             "SELECT schema_name FROM information_schema.schemata "
                                             "WHERE catalog_name = current_database() ORDER BY schema_name"));
  return json{{"schemas", FirstColumn(result)}};
}

Result<json> SchemaTables(const HttpContext& context, const std::string& user, const std::string& schema) {
  RETURN_IF_ERROR(CheckIdentifier(schema, "a schema name"));
  ASSIGN_OR_RETURN(QueryResult schemas, Query(context, user,
                                              "SELECT schema_name FROM information_schema.schemata WHERE "
                                              "catalog_name = current_database() AND schema_name = " +
                                                  QuoteLiteral(schema)));
  if (schemas.rows.empty()) return Status::NotFound("no schema " + schema);
  ASSIGN_OR_RETURN(QueryResult tables,
                   Query(context, user,
                         "SELECT table_name FROM information_schema.tables WHERE table_catalog = "
                         "current_database() AND table_schema = " +
                             QuoteLiteral(schema) + " ORDER BY table_name"));
  return json{{"schema", schema}, {"tables", FirstColumn(tables)}};
}

Result<json> TableColumns(const HttpContext& context, const std::string& user, const std::string& text) {
  ASSIGN_OR_RETURN(TableName name, ParseTableName(text));
  ASSIGN_OR_RETURN(QueryResult described, Query(context, user, "DESCRIBE " + name.Sql()));
  json columns = json::array();
  for (const json& column : RowObjects(described)) {
    columns.push_back({{"name", column["col_name"]},
                       {"type", column["data_type"]},
                       {"nullable", column["nullable"] == true || column["nullable"] == "true"}});
  }
  return json{{"table", text}, {"columns", std::move(columns)}};
}

Result<json> TableHistory(const HttpContext& context, const std::string& user, const std::string& text) {
  ASSIGN_OR_RETURN(TableName name, ParseTableName(text));
  ASSIGN_OR_RETURN(QueryResult history, Query(context, user, "DESCRIBE HISTORY " + name.Sql()));
  return json{{"table", text}, {"history", RowObjects(history)}};
}

Result<int64_t> PageParameter(const httplib::Request& request, const char* parameter, int64_t otherwise,
                              int64_t max) {
  if (!request.has_param(parameter)) return otherwise;
  const std::string text = request.get_param_value(parameter);
  json number = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!number.is_number_unsigned() || number.get<int64_t>() > max) {
    return Status::InvalidArgument(std::string("?") + parameter + "= must be a number from 0 to " +
                                   std::to_string(max) + ", got '" + text + "'");
  }
  return number.get<int64_t>();
}

// The files of the latest snapshot, sorted by path, `page_size` a page. The user's session
// first reads the table (no rows), so that a user who may not read it gets its error.
Result<json> TableFiles(const HttpContext& context, const httplib::Request& request, const std::string& user,
                        const std::string& text) {
  ASSIGN_OR_RETURN(TableName name, ParseTableName(text));
  ASSIGN_OR_RETURN(int64_t page, PageParameter(request, "page", 0, INT32_MAX));
  ASSIGN_OR_RETURN(int64_t page_size,
                   PageParameter(request, "page_size", kFilesPageSize, context.limits.max_page_size));
  if (page_size == 0) return Status::InvalidArgument("?page_size= must be at least 1");
  RETURN_IF_ERROR(Query(context, user, "SELECT * FROM " + name.Sql() + " LIMIT 0").status());
  ASSIGN_OR_RETURN(Warehouse warehouse, Warehouse::Open(context.warehouse.empty() ? "." : context.warehouse));
  ASSIGN_OR_RETURN(Table table,
                   warehouse.GetTable(name.schema ? *name.schema + "." + name.table : name.table));
  ASSIGN_OR_RETURN(Snapshot snapshot, table.LatestSnapshot());
  std::vector<DataFile> files = snapshot.files();
  std::sort(files.begin(), files.end(), [](const DataFile& a, const DataFile& b) { return a.path < b.path; });
  const auto begin =
      static_cast<size_t>(std::min<int64_t>(page * page_size, static_cast<int64_t>(files.size())));
  const size_t end = std::min(files.size(), begin + static_cast<size_t>(page_size));
  json listed = json::array();
  for (size_t i = begin; i < end; ++i) {
    listed.push_back({{"path", files[i].path},
                      {"size_bytes", files[i].size_bytes},
                      {"rows", files[i].num_records ? json(*files[i].num_records) : json()}});
  }
  json body = {{"table", text},
               {"version", snapshot.version()},
               {"num_files", files.size()},
               {"page", page},
               {"files", std::move(listed)}};
  if (end < files.size()) {
    body["next"] = "/api/v1/tables/" + text + "/files?page=" + std::to_string(page + 1) +
                   "&page_size=" + std::to_string(page_size);
  }
  return body;
}

}  // namespace

void AddCatalogRoutes(httplib::Server& server, const HttpContext& context) {
  const std::string tables = kTableNamePattern;
  server.Get("/api/v1/schemas", WithUser(context, [&context](const auto&, auto& response, const auto& user) {
               Answer(response, [&] { return Schemas(context, user); });
             }));
  server.Get("/api/v1/schemas/(.+)/tables",
             WithUser(context, [&context](const auto& request, auto& response, const auto& user) {
               Answer(response, [&] { return SchemaTables(context, user, request.matches[1]); });
             }));
  server.Get(tables + "/history",
             WithUser(context, [&context](const auto& request, auto& response, const auto& user) {
               Answer(response, [&] { return TableHistory(context, user, request.matches[1]); });
             }));
  server.Get(tables + "/files",
             WithUser(context, [&context](const auto& request, auto& response, const auto& user) {
               Answer(response, [&] { return TableFiles(context, request, user, request.matches[1]); });
             }));
  server.Get(tables + "/lineage",
             WithUser(context, [&context](const auto& request, auto& response, const auto& user) {
               Answer(response, [&] { return TableLineage(context, user, request.matches[1]); });
             }));
  server.Get(tables, WithUser(context, [&context](const auto& request, auto& response, const auto& user) {
               Answer(response, [&] { return TableColumns(context, user, request.matches[1]); });
             }));
}

}  // namespace basin::server::http
