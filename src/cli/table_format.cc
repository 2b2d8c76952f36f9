// The "table" output format: an ASCII box sized to its contents.
#include <algorithm>

#include "cli/output_format.h"

namespace basin::cli {

namespace {

// Wider cells are cut so that one long value does not push every row off the screen.
constexpr size_t kMaxCellWidth = 80;

// Width in terminal columns, counting one per UTF-8 code point (continuation bytes add
// nothing). East Asian wide characters are under-counted; that only skews alignment.
size_t DisplayWidth(std::string_view text) {
  return static_cast<size_t>(std::count_if(
      text.begin(), text.end(), [](char ch) { return (static_cast<unsigned char>(ch) & 0xC0) != 0x80; }));
}

// The first `width` code points of `text`.
std::string_view PrefixOfWidth(std::string_view text, size_t width) {
  size_t seen = 0;
  for (size_t i = 0; i < text.size(); i++) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80 && seen++ == width) return text.substr(0, i);
  }
  return text;
}

// One line per cell: control characters are escaped, long values are shortened.
std::string CellText(const std::optional<std::string>& cell) {
  if (!cell) return "NULL";
  std::string out;
  for (char ch : *cell) {
    switch (ch) {
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        out += ch;
    }
  }
  if (DisplayWidth(out) <= kMaxCellWidth) return out;
  return std::string(PrefixOfWidth(out, kMaxCellWidth - 1)) + "…";
}

std::string Pad(const std::string& text, size_t width, bool right_align) {
  std::string padding(width - DisplayWidth(text), ' ');
  return right_align ? padding + text : text + padding;
}

void WriteRule(const std::vector<size_t>& widths, std::ostream& out) {
  out << '+';
  for (size_t width : widths) out << std::string(width + 2, '-') << '+';
  out << '\n';
}

void WriteRow(const std::vector<std::string>& cells, const std::vector<size_t>& widths,
              const std::vector<bool>& right_align, std::ostream& out) {
  out << '|';
  for (size_t c = 0; c < cells.size(); c++) out << ' ' << Pad(cells[c], widths[c], right_align[c]) << " |";
  out << '\n';
}

}  // namespace

void WriteTable(const QueryResult& result, std::ostream& out, bool footer, size_t hidden_rows) {
  std::vector<std::string> header(result.column_names.begin(), result.column_names.end());
  std::vector<std::vector<std::string>> body;
  body.reserve(result.row_count());
  for (const auto& row : result.rows) {
    std::vector<std::string> cells;
    cells.reserve(row.size());
    for (const auto& cell : row) cells.push_back(CellText(cell));
    body.push_back(std::move(cells));
  }
  std::vector<size_t> widths(header.size());
  std::vector<bool> right_align(header.size());
  for (size_t c = 0; c < header.size(); c++) {
    widths[c] = DisplayWidth(header[c]);
    for (const auto& cells : body) widths[c] = std::max(widths[c], DisplayWidth(cells[c]));
    right_align[c] = IsNumericType(result.column_types[c]);
  }
  WriteRule(widths, out);
  WriteRow(header, widths, std::vector<bool>(header.size(), false), out);
  WriteRule(widths, out);
  for (const auto& cells : body) WriteRow(cells, widths, right_align, out);
  if (!body.empty()) WriteRule(widths, out);
  if (!footer) return;
  const size_t total = body.size() + hidden_rows;
  out << '(' << total << (total == 1 ? " row" : " rows");
  if (hidden_rows > 0) out << ", the first " << body.size() << " shown; --format csv prints them all";
  out << ")\n";
}

}  // namespace basin::cli
