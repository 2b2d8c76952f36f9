#include "server/pg/binary_types.h"

#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <vector>

namespace basin::server::pg {
namespace {

constexpr int64_t kMicrosPerSecond = 1'000'000;
constexpr int64_t kMicrosPerDay = 86'400 * kMicrosPerSecond;
// Days from 1970-01-01 (the civil algorithm's epoch) to 2000-01-01 (PostgreSQL's).
constexpr int64_t kPostgresEpochDays = 10'957;

Status NotA(Oid oid, std::string_view text) {
  return Status::InvalidArgument("'" + std::string(text) + "' is not a " + std::string(PgTypeName(oid)) +
                                 " value");
}

// The days <chrono> counts, since 1970-01-01: from 32767 BC (year -32767) to 32767-12-31.
constexpr int64_t kMaxYear = 32767;
constexpr int64_t kFirstDay = -12'687'429;
constexpr int64_t kLastDay = 11'248'737;

// Days since 1970-01-01 of a proleptic Gregorian date (year 0 is 1 BC), and back.
int64_t DaysFromCivil(int64_t year, int64_t month, int64_t day) {
  const std::chrono::year_month_day date{std::chrono::year{static_cast<int>(year)},
                                         std::chrono::month{static_cast<unsigned>(month)},
                                         std::chrono::day{static_cast<unsigned>(day)}};
  return std::chrono::sys_days{date}.time_since_epoch().count();
}

struct Civil {
  int64_t year, month, day;
};
Civil CivilFromDays(int64_t days) {
  const std::chrono::year_month_day date{std::chrono::sys_days{std::chrono::days{days}}};
  return {static_cast<int>(date.year()), static_cast<unsigned>(date.month()),
          static_cast<unsigned>(date.day())};
}

// Reads the text of a value left to right.
class Cursor {
 public:
  explicit Cursor(std::string_view text) : text_(text) {}
  bool done() const { return at_ == text_.size(); }
  bool Skip(std::string_view what) {
    if (text_.substr(at_, what.size()) != what) return false;
    at_ += what.size();
    return true;
  }
  char Peek() const { return done() ? '\0' : text_[at_]; }
  // Unsigned decimal digits; nullopt when there are none.
  std::optional<int64_t> Number() {
    if (Peek() < '0' || Peek() > '9') return std::nullopt;
    int64_t value = 0;
    const char* begin = text_.data() + at_;
    const auto [end, ec] = std::from_chars(begin, text_.data() + text_.size(), value);
    if (ec != std::errc()) return std::nullopt;
    at_ += static_cast<size_t>(end - begin);
    return value;
  }
  // ".ffffff": the fraction in microseconds (0 when absent; digits past them dropped).
  std::optional<int64_t> Fraction() {
    if (!Skip(".")) return 0;
    int64_t value = 0;
    size_t digits = 0;
    for (; !done() && text_[at_] >= '0' && text_[at_] <= '9'; at_++, digits++) {
      if (digits < 6) value = value * 10 + (text_[at_] - '0');
    }
    if (digits == 0) return std::nullopt;
    for (; digits < 6; digits++) value *= 10;
    return value;
  }

 private:
  std::string_view text_;
  size_t at_ = 0;
};

// "YYYY-MM-DD" as days since 2000-01-01 (a " (BC)" after it is read by the caller).
std::optional<int64_t> ReadDate(Cursor& in) {
  std::optional<int64_t> year = in.Number();
  if (!year || !in.Skip("-")) return std::nullopt;
  std::optional<int64_t> month = in.Number();
  if (!month || !in.Skip("-")) return std::nullopt;
  std::optional<int64_t> day = in.Number();
  if (!day || *year > kMaxYear || *month < 1 || *month > 12 || *day < 1 || *day > 31) return std::nullopt;
  const bool bc = in.Skip(" (BC)");
  return DaysFromCivil(bc ? 1 - *year : *year, *month, *day) - kPostgresEpochDays;
}

// "HH:MM:SS[.ffffff]" in microseconds.
std::optional<int64_t> ReadTime(Cursor& in) {
  std::optional<int64_t> hours = in.Number();
  if (!hours || !in.Skip(":")) return std::nullopt;
  std::optional<int64_t> minutes = in.Number();
  if (!minutes || !in.Skip(":")) return std::nullopt;
  std::optional<int64_t> seconds = in.Number();
  std::optional<int64_t> fraction = seconds ? in.Fraction() : std::nullopt;
  if (!fraction) return std::nullopt;
  return ((*hours * 60 + *minutes) * 60 + *seconds) * kMicrosPerSecond + *fraction;
}

// "+HH[:MM[:SS]]" or "-HH...", in seconds east of UTC.
std::optional<int64_t> ReadOffset(Cursor& in) {
  const int64_t sign = in.Skip("-") ? -1 : (in.Skip("+") ? 1 : 0);
  if (sign == 0) return std::nullopt;
  std::optional<int64_t> hours = in.Number();
  if (!hours) return std::nullopt;
  int64_t seconds = *hours * 3600;
  for (int64_t unit : {60, 1}) {
    if (!in.Skip(":")) break;
    std::optional<int64_t> part = in.Number();
    if (!part) return std::nullopt;
    seconds += *part * unit;
  }
  return sign * seconds;
}

Result<std::string> EncodeDate(std::string_view text) {
  if (text == "infinity") return BigEndian(static_cast<uint32_t>(std::numeric_limits<int32_t>::max()));
  if (text == "-infinity") return BigEndian(static_cast<uint32_t>(std::numeric_limits<int32_t>::min()));
  Cursor in(text);
  std::optional<int64_t> days = ReadDate(in);
  if (!days || !in.done()) return NotA(Oid::kDate, text);
  return BigEndian(static_cast<uint32_t>(static_cast<int32_t>(*days)));
}

Result<std::string> EncodeTimestamp(Oid oid, std::string_view text) {
  if (text == "infinity") return BigEndian(static_cast<uint64_t>(std::numeric_limits<int64_t>::max()));
  if (text == "-infinity") return BigEndian(static_cast<uint64_t>(std::numeric_limits<int64_t>::min()));
  Cursor in(text);
  std::optional<int64_t> days = ReadDate(in);
  std::optional<int64_t> time = days && in.Skip(" ") ? ReadTime(in) : std::nullopt;
  if (!time) return NotA(oid, text);
  int64_t offset_seconds = 0;
  if (oid == Oid::kTimestamptz) {
    std::optional<int64_t> offset = ReadOffset(in);
    if (!offset) return NotA(oid, text);
    offset_seconds = *offset;
  }
  if (!in.done()) return NotA(oid, text);
  return BigEndian(static_cast<uint64_t>(*days * kMicrosPerDay + *time - offset_seconds * kMicrosPerSecond));
}

Result<std::string> EncodeTime(std::string_view text) {
  Cursor in(text);
  std::optional<int64_t> time = ReadTime(in);
  if (!time || !in.done()) return NotA(Oid::kTime, text);
  return BigEndian(static_cast<uint64_t>(*time));
}

// PostgreSQL's interval text: "[-]N year[s] [-]N mon[s] [-]N day[s] [-]HH:MM:SS[.f]", any part left out.
Result<std::string> EncodeInterval(std::string_view text) {
  int64_t months = 0, days = 0, micros = 0;
  Cursor in(text);
  while (!in.done()) {
    const bool negative = in.Skip("-");
    if (!negative) in.Skip("+");
    Cursor probe = in;
    std::optional<int64_t> number = probe.Number();
    if (number && probe.Peek() == ':') {
      std::optional<int64_t> time = ReadTime(in);
      if (!time) return NotA(Oid::kInterval, text);
      micros += negative ? -*time : *time;
    } else {
      number = in.Number();
      if (!number || !in.Skip(" ")) return NotA(Oid::kInterval, text);
      const int64_t value = negative ? -*number : *number;
      if (in.Skip("years") || in.Skip("year")) {
        months += 12 * value;
      } else if (in.Skip("mons") || in.Skip("mon")) {
        months += value;
      } else if (in.Skip("days") || in.Skip("day")) {
        days += value;
      } else {
        return NotA(Oid::kInterval, text);
      }
    }
    if (!in.done() && !in.Skip(" ")) return NotA(Oid::kInterval, text);
  }
  return BigEndian(static_cast<uint64_t>(micros)) +
         BigEndian(static_cast<uint32_t>(static_cast<int32_t>(days))) +
         BigEndian(static_cast<uint32_t>(static_cast<int32_t>(months)));
}

constexpr uint16_t kNumericPositive = 0x0000;
constexpr uint16_t kNumericNegative = 0x4000;
constexpr uint16_t kNumericNaN = 0xC000;

Result<std::string> EncodeNumeric(std::string_view text) {
  auto header = [](size_t ndigits, int weight, uint16_t sign, size_t dscale) {
    return BigEndian(static_cast<uint16_t>(ndigits)) +
           BigEndian(static_cast<uint16_t>(static_cast<int16_t>(weight))) + BigEndian(sign) +
           BigEndian(static_cast<uint16_t>(dscale));
  };
  if (text == "NaN") return header(0, 0, kNumericNaN, 0);
  const bool negative = !text.empty() && text[0] == '-';
  std::string_view digits = negative || (!text.empty() && text[0] == '+') ? text.substr(1) : text;
  const size_t point = digits.find('.');
  std::string whole(digits.substr(0, point));
  std::string fraction(point == std::string_view::npos ? std::string_view() : digits.substr(point + 1));
  if ((whole.empty() && fraction.empty()) ||
      (whole + fraction).find_first_not_of("0123456789") != std::string::npos) {
    return NotA(Oid::kNumeric, text);
  }
  const size_t dscale = fraction.size();
  // Groups of four digits, aligned on the decimal point.
  whole.insert(0, (4 - whole.size() % 4) % 4, '0');
  fraction.append((4 - fraction.size() % 4) % 4, '0');
  std::vector<uint16_t> groups;
  const std::string all = whole + fraction;
  for (size_t i = 0; i < all.size(); i += 4)
    groups.push_back(static_cast<uint16_t>(std::stoi(all.substr(i, 4))));
  int weight = static_cast<int>(whole.size() / 4) - 1;
  size_t first = 0;
  while (first < groups.size() && groups[first] == 0) {
    first++;
    weight--;
  }
  size_t last = groups.size();
  while (last > first && groups[last - 1] == 0) last--;
  if (first == last) return header(0, 0, kNumericPositive, dscale);
  std::string out = header(last - first, weight, negative ? kNumericNegative : kNumericPositive, dscale);
  for (size_t i = first; i < last; i++) out += BigEndian(groups[i]);
  return out;
}

Result<std::string> EncodeUuid(std::string_view text) {
  std::string bytes;
  int high = -1;
  for (const char c : text) {
    if (c == '-') continue;
    const int digit = c >= '0' && c <= '9'   ? c - '0'
                      : c >= 'a' && c <= 'f' ? c - 'a' + 10
                      : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                             : -1;
    if (digit < 0) return NotA(Oid::kUuid, text);
    if (high < 0) {
      high = digit;
    } else {
      bytes.push_back(static_cast<char>(high * 16 + digit));
      high = -1;
    }
  }
  if (bytes.size() != 16 || high >= 0) return NotA(Oid::kUuid, text);
  return bytes;
}

std::string Format(const char* pattern, auto... values) {
  char buffer[96];
  const int length = std::snprintf(buffer, sizeof(buffer), pattern, values...);
  return std::string(buffer, static_cast<size_t>(length));
}

Result<std::string> DateText(int64_t days) {
  if (days + kPostgresEpochDays > kLastDay || days + kPostgresEpochDays < kFirstDay) {
    return Status::InvalidArgument("a binary date or timestamp past the year " + std::to_string(kMaxYear));
  }
  const Civil date = CivilFromDays(days + kPostgresEpochDays);
  const bool bc = date.year <= 0;
  return Format("%04lld-%02lld-%02lld%s", static_cast<long long>(bc ? 1 - date.year : date.year),
                static_cast<long long>(date.month), static_cast<long long>(date.day), bc ? " (BC)" : "");
}

std::string TimeText(int64_t micros) {
  const int64_t seconds = micros / kMicrosPerSecond;
  return Format("%02lld:%02lld:%02lld.%06lld", static_cast<long long>(seconds / 3600),
                static_cast<long long>(seconds / 60 % 60), static_cast<long long>(seconds % 60),
                static_cast<long long>(micros % kMicrosPerSecond));
}

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - (a % b != 0 && (a < 0) != (b < 0)); }

Status WrongSize(Oid oid, size_t expected, size_t got) {
  return Status::InvalidArgument("a binary " + std::string(PgTypeName(oid)) + " parameter is " +
                                 std::to_string(expected) + " bytes, got " + std::to_string(got));
}

Result<std::string> DecodeNumeric(std::string_view bytes) {
  if (bytes.size() < 8)
    return Status::InvalidArgument("a binary numeric parameter is shorter than its header");
  const size_t ndigits = FromBigEndian<uint16_t>(bytes.substr(0, 2));
  const int weight = static_cast<int16_t>(FromBigEndian<uint16_t>(bytes.substr(2, 2)));
  const uint16_t sign = FromBigEndian<uint16_t>(bytes.substr(4, 2));
  const size_t dscale = FromBigEndian<uint16_t>(bytes.substr(6, 2));
  if (sign == kNumericNaN) return std::string("NaN");
  if (bytes.size() != 8 + 2 * ndigits || (sign != kNumericPositive && sign != kNumericNegative)) {
    return Status::InvalidArgument("a binary numeric parameter is malformed");
  }
  std::string whole, fraction;
  for (int group = std::max(weight, 0); group >= -static_cast<int>((dscale + 3) / 4); group--) {
    const int index = weight - group;
    uint16_t value = 0;
    if (index >= 0 && static_cast<size_t>(index) < ndigits) {
      value = FromBigEndian<uint16_t>(bytes.substr(8 + 2 * static_cast<size_t>(index), 2));
    }
    if (value > 9999) return Status::InvalidArgument("a binary numeric parameter has a digit over 9999");
    (group >= 0 ? whole : fraction) += Format("%04u", static_cast<unsigned>(value));
  }
  const size_t nonzero = whole.find_first_not_of('0');
  whole = nonzero == std::string::npos ? "0" : whole.substr(nonzero);
  fraction.resize(dscale);
  return (sign == kNumericNegative ? "-" : "") + whole + (dscale > 0 ? "." + fraction : "");
}

}  // namespace

bool HasBinaryLayout(Oid oid) {
  switch (oid) {
    case Oid::kDate:
    case Oid::kTime:
    case Oid::kTimestamp:
    case Oid::kTimestamptz:
    case Oid::kInterval:
    case Oid::kNumeric:
    case Oid::kUuid:
      return true;
    default:
      return false;
  }
}

Result<std::string> EncodeBinary(Oid oid, std::string_view text) {
  switch (oid) {
    case Oid::kDate:
      return EncodeDate(text);
    case Oid::kTime:
      return EncodeTime(text);
    case Oid::kTimestamp:
    case Oid::kTimestamptz:
      return EncodeTimestamp(oid, text);
    case Oid::kInterval:
      return EncodeInterval(text);
    case Oid::kNumeric:
      return EncodeNumeric(text);
    case Oid::kUuid:
      return EncodeUuid(text);
    default:
      return Status::InvalidArgument("type " + std::string(PgTypeName(oid)) + " has no binary layout here");
  }
}

Result<std::string> DecodeBinary(Oid oid, std::string_view bytes) {
  switch (oid) {
    case Oid::kDate: {
      if (bytes.size() != 4) return WrongSize(oid, 4, bytes.size());
      const int32_t days = static_cast<int32_t>(FromBigEndian<uint32_t>(bytes));
      if (days == std::numeric_limits<int32_t>::max()) return std::string("infinity");
      if (days == std::numeric_limits<int32_t>::min()) return std::string("-infinity");
      return DateText(days);
    }
    case Oid::kTime: {
      if (bytes.size() != 8) return WrongSize(oid, 8, bytes.size());
      const int64_t micros = static_cast<int64_t>(FromBigEndian<uint64_t>(bytes));
      if (micros < 0 || micros > kMicrosPerDay)
        return Status::InvalidArgument("a binary time is out of range");
      return TimeText(micros);
    }
    case Oid::kTimestamp:
    case Oid::kTimestamptz: {
      if (bytes.size() != 8) return WrongSize(oid, 8, bytes.size());
      const int64_t micros = static_cast<int64_t>(FromBigEndian<uint64_t>(bytes));
      if (micros == std::numeric_limits<int64_t>::max()) return std::string("infinity");
      if (micros == std::numeric_limits<int64_t>::min()) return std::string("-infinity");
      const int64_t days = FloorDiv(micros, kMicrosPerDay);
      // (DuckDB writes and reads a BC timestamp's era after its date.)
      ASSIGN_OR_RETURN(std::string date, DateText(days));
      return date + " " + TimeText(micros - days * kMicrosPerDay) + (oid == Oid::kTimestamptz ? "+00" : "");
    }
    case Oid::kInterval: {
      if (bytes.size() != 16) return WrongSize(oid, 16, bytes.size());
      const int64_t micros = static_cast<int64_t>(FromBigEndian<uint64_t>(bytes.substr(0, 8)));
      const int32_t days = static_cast<int32_t>(FromBigEndian<uint32_t>(bytes.substr(8, 4)));
      const int32_t months = static_cast<int32_t>(FromBigEndian<uint32_t>(bytes.substr(12, 4)));
      return std::to_string(months) + " months " + std::to_string(days) + " days " + std::to_string(micros) +
             " microseconds";
    }
    case Oid::kNumeric:
      return DecodeNumeric(bytes);
    case Oid::kUuid: {
      if (bytes.size() != 16) return WrongSize(oid, 16, bytes.size());
      std::string text;
      for (size_t i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10) text.push_back('-');
        text += Format("%02x", static_cast<unsigned>(static_cast<unsigned char>(bytes[i])));
      }
      return text;
    }
    default:
      return Status::InvalidArgument("type " + std::string(PgTypeName(oid)) + " has no binary layout here");
  }
}

}  // namespace basin::server::pg
