// Decimal numbers as text and as unscaled 128-bit integers: statistics in the Delta log,
// and record fields a stream parses, are exact decimals written as JSON numbers or strings.
//
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string_view>

#include "delta/predicate.h"

namespace basin::delta {

// 10^n for 0 <= n <= 38.
Int128 PowerOfTen(int n);

// unscaled * 10^(to - from): `unscaled` at scale `from` brought to scale `to`, when that is
// exact and below 10^38 in magnitude; nullopt otherwise.
std::optional<Int128> Rescale(Int128 unscaled, int from, int to);

// The exact value of a decimal number text ("-12.5", "1.25E+2") times 10^scale, when that
// is an integer below 10^38 in magnitude; nullopt otherwise.
std::optional<Int128> ParseDecimalText(std::string_view text, int scale);

}  // namespace basin::delta
