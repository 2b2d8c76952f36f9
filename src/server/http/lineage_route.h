// The lineage route of the HTTP API (docs/server.md "Lineage", docs/lineage.md):
//   GET /api/v1/tables/{name}/lineage
// answers the edges of basin_system.lineage upstream and downstream of the table, up to
// kLineageMaxHops hops each way, as
//   {"table": "default.t", "max_hops": 5,
//    "nodes": [{"table", "distance"}],   distance < 0 upstream, > 0 downstream, 0 the table
//    "edges": [{"source", "target", "operation", "first_seen"}]}
// The user needs SELECT on the table (403, or 404 for no such table, as the other table
// routes). Tables the user may not SELECT, and tables that no longer exist, are left out
// with their edges, and the graph is not followed through them. The lineage table itself is
// read with the process's rights, after the user's check: a user needs no grant on
// basin_system.
//
// Thread safety: runs on the server's worker threads and shares nothing.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "server/http/http_context.h"

namespace basin::server::http {

inline constexpr int kLineageMaxHops = 5;

// The lineage of the table `name` (`schema.table` or `table`, as the path gives it) for `user`.
Result<nlohmann::json> TableLineage(const HttpContext& context, const std::string& user,
                                    const std::string& name);

}  // namespace basin::server::http
