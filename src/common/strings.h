// ASCII case folding for identifiers, keywords and property values, which Delta, Spark and
// DuckDB compare case-insensitively (bytes outside ASCII are left as they are), SQL
// quoting, and bytes as hexadecimal text.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace basin {

std::string AsciiLower(std::string text);

bool EqualsIgnoreCase(std::string_view a, std::string_view b);

// 'it''s' — a SQL string literal.
std::string QuoteLiteral(std::string_view s);
// "a""b" — a SQL identifier.
std::string QuoteIdentifier(std::string_view s);

// Each byte as two lower-case hexadecimal digits.
std::string HexEncode(std::string_view bytes);

}  // namespace basin
