#include "server/copy_lines.h"

namespace basin::server {
namespace {

// Text format: backslash, the control characters and the delimiter escaped with a backslash.
void AppendText(const CopyFormat& format, const std::string& value, std::string& out) {
  for (const char c : value) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\v':
        out += "\\v";
        break;
      default:
        if (c == format.delimiter) out.push_back('\\');
        out.push_back(c);
    }
  }
}

// CSV: quoted when the value holds the delimiter, the quote, a line break, when it reads as
// the NULL string, or when it is "\." alone on a line (the end marker of COPY FROM).
void AppendCsv(const CopyFormat& format, const std::string& value, bool alone, std::string& out) {
  const bool quoted =
      value == format.null_string || (alone && value == "\\.") ||
      value.find_first_of(std::string{format.delimiter, format.quote, '\n', '\r'}) != std::string::npos;
  if (!quoted) {
    out += value;
    return;
  }
  out.push_back(format.quote);
  for (const char c : value) {
    if (c == format.quote || c == format.escape) out.push_back(format.escape);
    out.push_back(c);
  }
  out.push_back(format.quote);
}

void AppendValue(const CopyFormat& format, const std::string& value, bool alone, std::string& out) {
  if (format.kind == CopyFormat::Kind::kCsv) {
    AppendCsv(format, value, alone, out);
  } else {
    AppendText(format, value, out);
  }
}

}  // namespace

std::string CopyLine(const CopyFormat& format, const Row& cells) {
  std::string line;
  for (size_t c = 0; c < cells.size(); c++) {
    if (c > 0) line.push_back(format.delimiter);
    if (cells[c]) {
      AppendValue(format, *cells[c], cells.size() == 1, line);
    } else {
      line += format.null_string;
    }
  }
  line.push_back('\n');
  return line;
}

std::string CopyHeaderLine(const CopyFormat& format, const std::vector<std::string>& names) {
  return CopyLine(format, Row(names.begin(), names.end()));
}

}  // namespace basin::server
