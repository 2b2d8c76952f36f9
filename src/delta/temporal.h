// Dates and timestamps as the Delta log writes them (PROTOCOL.md "Partition Value
// Serialization", "Per-file Statistics"): days since 1970-01-01 and microseconds since
// the epoch, proleptic Gregorian calendar, UTC.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace basin::delta {

inline constexpr int64_t kMicrosPerDay = int64_t{86'400} * 1'000'000;

// Days since 1970-01-01 of year/month/day (no range check of the day in its month).
int64_t DaysFromCivil(int64_t year, int64_t month, int64_t day);
void CivilFromDays(int64_t days, int64_t* year, int64_t* month, int64_t* day);

// "YYYY-MM-DD" -> days since 1970-01-01; nullopt for anything else.
std::optional<int64_t> ParseDate(std::string_view text);

// "YYYY-MM-DD[( |T)HH:MM[:SS[.f{1,9}]]][Z|z|+HH[:MM]|-HH[:MM]]" -> microseconds since the
// epoch. Without an offset the text is read as UTC (Basin's session time zone and the
// protocol's); digits past microseconds are dropped. nullopt for anything else.
std::optional<int64_t> ParseTimestampMicros(std::string_view text);

// "2024-01-31"
std::string FormatDate(int64_t days);
// "2024-01-31 12:00:00", with ".ffffff" (trailing zeros dropped) when there are fractional
// seconds. `separator` goes between date and time (' ' or 'T').
std::string FormatTimestampMicros(int64_t micros, char separator = ' ');

}  // namespace basin::delta
