// ASCII case folding for identifiers, keywords and property values, which Delta, Spark and
// DuckDB compare case-insensitively. Bytes outside ASCII are left as they are.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace basin {

std::string AsciiLower(std::string text);

bool EqualsIgnoreCase(std::string_view a, std::string_view b);

}  // namespace basin
