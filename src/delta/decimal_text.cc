#include "delta/decimal_text.h"

#include <array>
#include <charconv>

namespace basin::delta {

Int128 PowerOfTen(int n) {
  // Looked up: parsing a decimal value takes two.
  static constexpr std::array<Int128, 39> kPowers = [] {
    std::array<Int128, 39> powers{};
    powers[0] = 1;
    for (size_t i = 1; i < powers.size(); i++) powers[i] = powers[i - 1] * 10;
    return powers;
  }();
  return kPowers[n];
}

std::optional<Int128> Rescale(Int128 unscaled, int from, int to) {
  if (unscaled == 0) return Int128{0};
  int shift = to - from;
  for (; shift < 0; shift++) {
    if (unscaled % 10 != 0) return std::nullopt;
    unscaled /= 10;
  }
  const Int128 limit = PowerOfTen(38) / 10;
  for (; shift > 0; shift--) {
    if (unscaled >= limit || unscaled <= -limit) return std::nullopt;
    unscaled *= 10;
  }
  return unscaled;
}

std::optional<Int128> ParseDecimalText(std::string_view text, int scale) {
  size_t i = 0;
  bool negative = false;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) negative = text[i++] == '-';
  Int128 digits = 0;
  int digit_count = 0;  // significant digits kept in `digits`
  int exponent = 0;     // value = digits * 10^exponent
  bool any_digit = false, in_fraction = false;
  for (; i < text.size(); i++) {
    char c = text[i];
    if (c == '.' && !in_fraction) {
      in_fraction = true;
      continue;
    }
    if (c < '0' || c > '9') break;
    any_digit = true;
    if (digits == 0 && c == '0') {
      if (in_fraction) exponent--;
      continue;
    }
    if (++digit_count > 38) return std::nullopt;
    digits = digits * 10 + (c - '0');
    if (in_fraction) exponent--;
  }
  if (!any_digit) return std::nullopt;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    size_t j = i + 1;
    if (j < text.size() && text[j] == '+') j++;
    int e = 0;
    auto [end, ec] = std::from_chars(text.data() + j, text.data() + text.size(), e);
    if (ec != std::errc() || end != text.data() + text.size() || e > 100 || e < -100) return std::nullopt;
    exponent += e;
  } else if (i != text.size()) {
    return std::nullopt;
  }
  auto rescaled = Rescale(digits, -exponent, scale);
  if (!rescaled) return std::nullopt;
  return negative ? -*rescaled : *rescaled;
}

}  // namespace basin::delta
