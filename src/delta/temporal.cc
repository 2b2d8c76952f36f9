#include "delta/temporal.h"

#include <cctype>
#include <cstdio>

#include "common/text_scan.h"

namespace basin::delta {

namespace {

std::optional<int64_t> DatePart(std::string_view& s) {
  int64_t year, month, day;
  if (!TakeDigits(s, 4, &year) || !TakeLiteral(s, "-") || !TakeDigits(s, 2, &month) || !TakeLiteral(s, "-") ||
      !TakeDigits(s, 2, &day) || month < 1 || month > 12 || day < 1 || day > 31) {
    return std::nullopt;
  }
  return DaysFromCivil(year, month, day);
}

// a / b rounded towards negative infinity. REQUIRES: b > 0.
int64_t FloorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

}  // namespace

// H. Hinnant's algorithms (public domain), as in C++20's <chrono>.
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

void CivilFromDays(int64_t z, int64_t* y, int64_t* m, int64_t* d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp + (mp < 10 ? 3 : -9);
  *y = yoe + era * 400 + (*m <= 2);
}

std::optional<int64_t> ParseDate(std::string_view text) {
  auto days = DatePart(text);
  if (!days || !text.empty()) return std::nullopt;
  return days;
}

std::optional<int64_t> ParseTimestampMicros(std::string_view s) {
  auto days = DatePart(s);
  if (!days) return std::nullopt;
  int64_t micros = *days * kMicrosPerDay;
  if (s.empty()) return micros;
  if (!TakeLiteral(s, " ") && !TakeLiteral(s, "T")) return std::nullopt;
  int64_t hour, minute, second = 0;
  if (!TakeDigits(s, 2, &hour) || !TakeLiteral(s, ":") || !TakeDigits(s, 2, &minute)) return std::nullopt;
  if (TakeLiteral(s, ":") && !TakeDigits(s, 2, &second)) return std::nullopt;
  if (hour > 23 || minute > 59 || second > 60) return std::nullopt;
  micros += ((hour * 60 + minute) * 60 + second) * 1'000'000;
  if (TakeLiteral(s, ".")) {
    size_t digits = 0;
    int64_t scale = 100'000;
    while (!s.empty() && std::isdigit(static_cast<unsigned char>(s[0]))) {
      micros += (s[0] - '0') * scale;  // digits past microseconds add nothing (scale is 0)
      scale /= 10;
      digits++;
      s.remove_prefix(1);
    }
    if (digits == 0 || digits > 9) return std::nullopt;
  }
  if (s.empty() || ((s[0] == 'Z' || s[0] == 'z') && s.size() == 1)) return micros;
  if (s[0] != '+' && s[0] != '-') return std::nullopt;
  const int64_t sign = s[0] == '+' ? 1 : -1;
  s.remove_prefix(1);
  int64_t offset_hours, offset_minutes = 0;
  if (!TakeDigits(s, 2, &offset_hours)) return std::nullopt;
  TakeLiteral(s, ":");
  if (!s.empty() && !TakeDigits(s, 2, &offset_minutes)) return std::nullopt;
  if (!s.empty()) return std::nullopt;
  return micros - sign * (offset_hours * 60 + offset_minutes) * 60 * 1'000'000;
}

std::string FormatDate(int64_t days) {
  int64_t y, m, d;
  CivilFromDays(days, &y, &m, &d);
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%04lld-%02lld-%02lld", static_cast<long long>(y),
                static_cast<long long>(m), static_cast<long long>(d));
  return buf;
}

std::string FormatTimestampMicros(int64_t micros, char separator) {
  const int64_t days = FloorDiv(micros, kMicrosPerDay);
  const int64_t in_day = micros - days * kMicrosPerDay;
  const int64_t seconds = in_day / 1'000'000;
  int64_t fraction = in_day % 1'000'000;
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%s%c%02lld:%02lld:%02lld", FormatDate(days).c_str(), separator,
                static_cast<long long>(seconds / 3600), static_cast<long long>(seconds / 60 % 60),
                static_cast<long long>(seconds % 60));
  std::string out = buf;
  if (fraction != 0) {
    std::snprintf(buf, sizeof(buf), ".%06lld", static_cast<long long>(fraction));
    std::string digits = buf;
    while (digits.back() == '0') digits.pop_back();
    out += digits;
  }
  return out;
}

}  // namespace basin::delta
