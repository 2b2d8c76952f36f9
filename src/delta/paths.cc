#include "delta/paths.h"

#include <cctype>

namespace basin::delta {

namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// "s3:", "file:", "abfss:"... RFC 3986: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":".
size_t SchemeLength(std::string_view path) {
  if (path.empty() || !std::isalpha(static_cast<unsigned char>(path[0]))) return 0;
  for (size_t i = 1; i < path.size(); i++) {
    char c = path[i];
    if (c == ':') return i;
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '+' && c != '-' && c != '.') return 0;
  }
  return 0;
}

}  // namespace

std::string PercentDecode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); i++) {
    if (text[i] == '%' && i + 2 < text.size()) {
      int hi = HexValue(text[i + 1]);
      int lo = HexValue(text[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
        continue;
      }
    }
    out += text[i];
  }
  return out;
}

std::string DecodeDataPath(const std::string& log_path) {
  // Most paths have neither escapes nor a scheme.
  if (log_path.find_first_of("%:") == std::string::npos) return log_path;
  std::string_view path = log_path;
  size_t scheme = SchemeLength(path);
  // A one-letter "scheme" is a Windows drive letter, not a URI.
  if (scheme > 1 && path.substr(0, scheme) == "file") {
    std::string_view rest = path.substr(scheme + 1);
    if (rest.substr(0, 2) == "//") {
      // file://host/path or file:///path: drop the authority.
      size_t slash = rest.find('/', 2);
      rest = slash == std::string_view::npos ? std::string_view("/") : rest.substr(slash);
    }
    return PercentDecode(rest);
  }
  return PercentDecode(path);
}

bool IsAbsoluteDataPath(const std::string& decoded_path) {
  if (!decoded_path.empty() && decoded_path[0] == '/') return true;
  return SchemeLength(decoded_path) > 1;
}

}  // namespace basin::delta
