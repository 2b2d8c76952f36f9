#include "delta/parsed_stats.h"

#include <bit>
#include <cassert>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "delta/temporal.h"

namespace basin::delta {

namespace {

// Strings live in one buffer per leaf, addressed by (offset << kLengthBits) | length.
constexpr int kLengthBits = 24;
constexpr uint64_t kMaxStringLength = (uint64_t{1} << kLengthBits) - 1;

void AppendJsonString(std::string_view s, std::string& out) {
  out += '"';
  for (char ch : s) {
    const auto u = static_cast<unsigned char>(ch);
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (u < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", u);
      out += buf;
    } else {
      out += ch;
    }
  }
  out += '"';
}

}  // namespace

size_t ParsedStats::AddLeaf(Leaf leaf) {
  assert(!leaf.path.empty());
  if (leaf.path.size() == 1 && leaf.path[0] == "numRecords" && leaf.kind == Kind::kInteger) {
    num_records_ = leaves_.size();
  }
  leaves_.push_back(std::move(leaf));
  Values& values = values_.emplace_back();
  values.valid.assign(num_rows_, 0);
  if (leaves_.back().kind == Kind::kDecimal) {
    values.wide.assign(num_rows_, 0);
  } else {
    values.bits.assign(num_rows_, 0);
  }
  return leaves_.size() - 1;
}

uint32_t ParsedStats::AddRows(size_t n) {
  const size_t rows = num_rows_ + n;
  for (size_t i = 0; i < leaves_.size(); i++) {
    Values& values = values_[i];
    values.valid.resize(rows, 0);
    if (leaves_[i].kind == Kind::kDecimal) {
      values.wide.resize(rows, 0);
    } else {
      values.bits.resize(rows, 0);
    }
  }
  const auto first = static_cast<uint32_t>(num_rows_);
  num_rows_ = static_cast<uint32_t>(rows);
  return first;
}

void ParsedStats::SetInteger(size_t leaf, uint32_t row, int64_t value) {
  values_[leaf].bits[row] = value;
  values_[leaf].valid[row] = 1;
}

void ParsedStats::SetReal(size_t leaf, uint32_t row, double value) {
  values_[leaf].bits[row] = std::bit_cast<int64_t>(value);
  values_[leaf].valid[row] = 1;
}

void ParsedStats::SetDecimal(size_t leaf, uint32_t row, Int128 unscaled) {
  values_[leaf].wide[row] = unscaled;
  values_[leaf].valid[row] = 1;
}

void ParsedStats::SetString(size_t leaf, uint32_t row, std::string_view value) {
  if (value.size() > kMaxStringLength) return;  // left NULL: no statistic is this long
  Values& values = values_[leaf];
  values.bits[row] = static_cast<int64_t>((static_cast<uint64_t>(values.strings.size()) << kLengthBits) |
                                          value.size());
  values.strings.append(value);
  values.valid[row] = 1;
}

void ParsedStats::ShrinkToFit() {
  for (Values& values : values_) {
    values.valid.shrink_to_fit();
    values.bits.shrink_to_fit();
    values.wide.shrink_to_fit();
    values.strings.shrink_to_fit();
  }
}

double ParsedStats::Real(size_t leaf, uint32_t row) const {
  return std::bit_cast<double>(values_[leaf].bits[row]);
}

std::string_view ParsedStats::String(size_t leaf, uint32_t row) const {
  const auto bits = static_cast<uint64_t>(values_[leaf].bits[row]);
  return std::string_view(values_[leaf].strings).substr(bits >> kLengthBits, bits & kMaxStringLength);
}

std::optional<int64_t> ParsedStats::NumRecords(uint32_t row) const {
  if (!num_records_ || !Valid(*num_records_, row)) return std::nullopt;
  return Integer(*num_records_, row);
}

std::string ParsedStats::Json(uint32_t row) const {
  std::string out = "{";
  std::vector<std::string_view> open;  // the objects open below the root, outermost first
  std::vector<bool> empty{true};       // per open object, the root's first: nothing in it yet
  auto separate = [&] {
    if (!empty.back()) out += ',';
    empty.back() = false;
  };
  char buf[64];
  for (size_t i = 0; i < leaves_.size(); i++) {
    const Leaf& leaf = leaves_[i];
    if (!Valid(i, row)) continue;
    const double real = leaf.kind == Kind::kFloat || leaf.kind == Kind::kDouble ? Real(i, row) : 0;
    if (!std::isfinite(real)) continue;
    // Close the objects this leaf is not in, then open the ones it is in.
    size_t common = 0;
    while (common < open.size() && common + 1 < leaf.path.size() && open[common] == leaf.path[common]) common++;
    for (; open.size() > common; open.pop_back(), empty.pop_back()) out += '}';
    for (size_t depth = common; depth + 1 < leaf.path.size(); depth++) {
      separate();
      AppendJsonString(leaf.path[depth], out);
      out += ":{";
      open.push_back(leaf.path[depth]);
      empty.push_back(true);
    }
    separate();
    AppendJsonString(leaf.path.back(), out);
    out += ':';
    switch (leaf.kind) {
      case Kind::kBoolean:
        out += Integer(i, row) != 0 ? "true" : "false";
        break;
      case Kind::kInteger:
        out.append(buf, std::to_chars(buf, buf + sizeof(buf), Integer(i, row)).ptr);
        break;
      case Kind::kFloat:
      case Kind::kDouble:
        // The shortest text that reads back as the same double: exact for a float too, so
        // that a column widened to double since keeps a bound that holds.
        out.append(buf, std::to_chars(buf, buf + sizeof(buf), real).ptr);
        break;
      case Kind::kDecimal:
        out += Literal::Decimal(Decimal(i, row), 38, leaf.scale).ToString();
        break;
      case Kind::kString:
        AppendJsonString(String(i, row), out);
        break;
      case Kind::kDate:
        // Digits and dashes (and colons below): nothing to escape.
        out += '"';
        out += FormatDate(Integer(i, row));
        out += '"';
        break;
      case Kind::kTimestamp:
      case Kind::kTimestampNtz:
        out += '"';
        out += FormatTimestampMicros(Integer(i, row), 'T');
        if (leaf.kind == Kind::kTimestamp) out += 'Z';
        out += '"';
        break;
    }
  }
  for (; !open.empty(); open.pop_back()) out += '}';
  out += '}';
  return out;
}

size_t ParsedStats::MemoryBytes() const {
  size_t bytes = sizeof(*this) + leaves_.capacity() * sizeof(Leaf) + values_.capacity() * sizeof(Values);
  for (const Values& values : values_) {
    bytes += values.valid.capacity() + values.bits.capacity() * sizeof(int64_t) +
             values.wide.capacity() * sizeof(Int128) + values.strings.capacity();
  }
  return bytes;
}

}  // namespace basin::delta
