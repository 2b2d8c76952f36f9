// The web console's files (web/console/: HTML, CSS, JavaScript), built into the binary:
// cmake/EmbedFiles.cmake turns each into a byte array of a generated .cc, so `basin serve`
// needs no files beside it and nothing is built when it runs.
//
// Thread safety: immutable data.
#pragma once

#include <span>
#include <string_view>

namespace basin::server::http {

struct EmbeddedFile {
  std::string_view path;  // under web/console/, e.g. "app.js"
  std::string_view bytes;
};

// Every file of web/console/, in the order the build lists them.
std::span<const EmbeddedFile> ConsoleFiles();

}  // namespace basin::server::http
