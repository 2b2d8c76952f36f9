// The statements routes of the HTTP API (docs/server.md "HTTP API"):
//   POST   /api/v1/statements        {"statement", "parameters"?, "wait"?, "page_size"?}
//   GET    /api/v1/statements/{id}   ?page=n: the result's pages, in order; polls while running
//   DELETE /api/v1/statements/{id}   cancels a running statement or drops its result
// With `Accept: text/csv`, POST streams the whole result as CSV instead.
//
// Thread safety: the handlers run on the server's worker threads; their state is the
// context's registry.
#pragma once

#include <httplib.h>

#include "server/http/http_context.h"

namespace basin::server::http {

void AddStatementRoutes(httplib::Server& server, const HttpContext& context);

}  // namespace basin::server::http
