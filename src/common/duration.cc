#include "basin/duration.h"

#include <charconv>
#include <cmath>
#include <limits>

namespace basin {
namespace {

struct Unit {
  std::string_view name;
  double ms;
};
// Largest first: FormatDurationMs picks the first that divides.
constexpr Unit kUnits[] = {{"d", 86'400'000}, {"h", 3'600'000}, {"min", 60'000},
                           {"s", 1000},       {"ms", 1},        {"us", 0.001}};

std::string_view Trim(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  return text;
}

}  // namespace

Result<int64_t> ParseDurationMs(std::string_view text) {
  const std::string_view value = Trim(text);
  auto invalid = [&](const std::string& why) {
    return Status::InvalidArgument(
        "\"" + std::string(text) + "\" is not a duration" + why +
        ": write milliseconds (5000) or a number with a unit: us, ms, s, min, h or "
        "d (5s, 2 min)");
  };
  double amount = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), amount);
  if (ec != std::errc() || !std::isfinite(amount)) return invalid("");
  const std::string_view unit = Trim(value.substr(static_cast<size_t>(end - value.data())));
  double ms = amount;
  if (!unit.empty()) {
    const Unit* found = nullptr;
    for (const Unit& candidate : kUnits) {
      if (candidate.name == unit) found = &candidate;
    }
    if (found == nullptr) return invalid(" (unknown unit \"" + std::string(unit) + "\")");
    ms = amount * found->ms;
  }
  ms = std::round(ms);
  if (ms < 0 || ms > std::numeric_limits<int32_t>::max())
    return invalid(" (out of range 0 .. 2147483647 ms)");
  return static_cast<int64_t>(ms);
}

std::string FormatDurationMs(int64_t ms) {
  if (ms == 0) return "0";
  for (const Unit& unit : kUnits) {
    const auto size = static_cast<int64_t>(unit.ms);
    if (size >= 1 && ms % size == 0) return std::to_string(ms / size) + std::string(unit.name);
  }
  return std::to_string(ms) + "ms";  // not reached: every count divides by 1 ms
}

}  // namespace basin
