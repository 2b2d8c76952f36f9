// The web console (docs/console.md): `GET /` and `GET /console/...` answer the files of
// web/console/ from memory, without a token (they hold no data; the console's calls to the
// API carry the user's token), each with its Content-Type and a Content-Security-Policy
// that allows only the console's own scripts, styles and calls.
//
// Thread safety: the routes read immutable data.
#pragma once

#include <httplib.h>

namespace basin::server::http {

void AddConsoleRoutes(httplib::Server& server);

}  // namespace basin::server::http
