// The flow routes of the HTTP API: the streams and pipelines the server runs (server/flows.h,
// docs/server.md "Streams and pipelines"):
//   GET  /api/v1/flows                 every flow's status
//   GET  /api/v1/flows/{name}          one flow's
//   POST /api/v1/flows/{name}/stop     stops it after its batch in flight; answers once stopped
//   POST /api/v1/flows/{name}/start    starts it again from its checkpoint
// Any user with a token reads them; stopping and starting are for admin users until grants
// cover flows. {name} is only compared with the flows' names, never used as a path or SQL.
//
// Thread safety: the handlers run on the server's worker threads; the flow set is safe for
// many threads.
#pragma once

#include <httplib.h>

#include <nlohmann/json.hpp>

#include "server/flows.h"
#include "server/http/http_context.h"

namespace basin::server::http {

// A flow's status as the routes answer it.
nlohmann::json FlowJson(const FlowStatus& flow);

void AddFlowRoutes(httplib::Server& server, const HttpContext& context);

}  // namespace basin::server::http
