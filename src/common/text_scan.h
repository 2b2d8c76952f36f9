// Reading fixed-format text (log file names, dates and times) from the front of a
// string_view: each function consumes what it matched and leaves `text` alone otherwise.
//
// Thread safety: functions of their arguments.
#pragma once

#include <cctype>
#include <cstdint>
#include <string_view>

namespace basin {

// Parses exactly `width` decimal digits at the front of `text` and removes them; false
// (text unchanged) when fewer digits are there or the number exceeds int64.
inline bool TakeDigits(std::string_view& text, size_t width, int64_t* out) {
  if (text.size() < width) return false;
  int64_t v = 0;
  for (size_t i = 0; i < width; i++) {
    const char c = text[i];
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    if (v > (INT64_MAX - (c - '0')) / 10) return false;
    v = v * 10 + (c - '0');
  }
  *out = v;
  text.remove_prefix(width);
  return true;
}

// Removes `literal` from the front of `text`; false (text unchanged) when it is not there.
inline bool TakeLiteral(std::string_view& text, std::string_view literal) {
  if (!text.starts_with(literal)) return false;
  text.remove_prefix(literal.size());
  return true;
}

}  // namespace basin
