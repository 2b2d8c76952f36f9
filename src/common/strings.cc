#include "common/strings.h"

#include <algorithm>
#include <cctype>

namespace basin {

namespace {

char LowerChar(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

}  // namespace

std::string AsciiLower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), LowerChar);
  return text;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(),
                                            [](char x, char y) { return LowerChar(x) == LowerChar(y); });
}

namespace {

std::string Quoted(std::string_view s, char quote) {
  std::string out(1, quote);
  for (char ch : s) {
    if (ch == quote) out += quote;
    out += ch;
  }
  out += quote;
  return out;
}

}  // namespace

std::string QuoteLiteral(std::string_view s) { return Quoted(s, '\''); }
std::string QuoteIdentifier(std::string_view s) { return Quoted(s, '"'); }

std::string HexEncode(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char b : bytes) {
    out += kDigits[b >> 4];
    out += kDigits[b & 15];
  }
  return out;
}

}  // namespace basin
