#include "server/http/console_routes.h"

#include <string>
#include <string_view>

#include "server/http/console_files.h"
#include "server/http/result_encoding.h"

namespace basin::server::http {
namespace {

constexpr std::string_view kIndex = "index.html";

// Scripts, styles, images and API calls from the server itself only: no inline script or
// style, no other origin, no framing. The console is written to need nothing more.
constexpr char kContentSecurityPolicy[] =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

std::string_view ContentType(std::string_view path) {
  if (path.ends_with(".html")) return "text/html; charset=utf-8";
  if (path.ends_with(".js")) return "text/javascript; charset=utf-8";
  if (path.ends_with(".css")) return "text/css; charset=utf-8";
  if (path.ends_with(".svg")) return "image/svg+xml";
  return "application/octet-stream";
}

// The embedded file named `path` exactly, so no path reaches anything else.
const EmbeddedFile* FindFile(std::string_view path) {
  for (const EmbeddedFile& file : ConsoleFiles())
    if (file.path == path) return &file;
  return nullptr;
}

void SendFile(httplib::Response& response, std::string_view path) {
  const EmbeddedFile* file = FindFile(path);
  if (file == nullptr) {
    SendError(response, Status::NotFound("the console has no file " + std::string(path)));
    return;
  }
  response.status = 200;
  response.set_header("Content-Security-Policy", kContentSecurityPolicy);
  response.set_header("X-Content-Type-Options", "nosniff");
  response.set_header("Referrer-Policy", "no-referrer");
  // Revalidated on every load, so that a new binary's console is never mixed with an old one.
  response.set_header("Cache-Control", "no-cache");
  response.set_content(file->bytes.data(), file->bytes.size(), std::string(ContentType(path)));
}

}  // namespace

void AddConsoleRoutes(httplib::Server& server) {
  const auto index = [](const httplib::Request&, httplib::Response& response) { SendFile(response, kIndex); };
  server.Get("/", index);
  server.Get("/console/?", index);
  server.Get("/console/(.+)", [](const httplib::Request& request, httplib::Response& response) {
    SendFile(response, request.matches[1].str());
  });
}

}  // namespace basin::server::http
