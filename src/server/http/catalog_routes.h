// The catalog routes of the HTTP API, answered by SQL on a session of the token's user so
// that the user's grants decide what is visible (docs/server.md "HTTP API"):
//   GET /api/v1/schemas
//   GET /api/v1/schemas/{schema}/tables
//   GET /api/v1/tables/{name}            columns: name, type, nullable
//   GET /api/v1/tables/{name}/history    DESCRIBE HISTORY
//   GET /api/v1/tables/{name}/files      the latest snapshot's data files, paged
//   GET /api/v1/tables/{name}/lineage    its edges upstream and downstream (lineage_route.h)
// {name} is `schema.table` or `table`; names are checked (url_names.h) and quoted.
//
// Thread safety: the handlers run on the server's worker threads and share nothing.
#pragma once

#include <httplib.h>

#include "server/http/http_context.h"

namespace basin::server::http {

// The pattern of a table route's {name}: anything up to the route's own suffix, so that
// odd names (`..`, decoded slashes) reach ParseTableName and are refused with 400.
inline constexpr char kTableNamePattern[] = "/api/v1/tables/(.+)";

void AddCatalogRoutes(httplib::Server& server, const HttpContext& context);

}  // namespace basin::server::http
