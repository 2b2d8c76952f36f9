// Durations as PostgreSQL's time settings take and show them (statement_timeout): what
// `SET statement_timeout` and `basin serve --statement-timeout` read, in one parser.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "basin/status.h"

namespace basin {

// Milliseconds: a number alone is milliseconds ("5000", "1.5"), or a number with one of the
// units us, ms, s, min, h, d, with or without a space ("5s", "2 min"). Fractions round to
// the nearest millisecond. InvalidArgument, saying what is accepted, for anything else and
// for values below 0 or above 2147483647 ms (PostgreSQL's range).
Result<int64_t> ParseDurationMs(std::string_view text);

// As PostgreSQL's SHOW writes it: in the largest unit that divides it exactly ("5s",
// "1min", "1500ms"); "0" for none.
std::string FormatDurationMs(int64_t ms);

}  // namespace basin
