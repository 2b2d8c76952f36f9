#include "delta/skipping.h"

#include <cassert>
#include <cmath>
#include <optional>

#include "delta/decimal_text.h"
#include "delta/file_stats.h"

namespace basin::delta {

namespace {

// A predicate resolved against one index: NOT pushed down to the leaves, columns as index
// columns, literals as values of the columns' families. Whatever cannot be judged is
// kAlways.
struct Bound {
  enum class Kind { kAlways, kNever, kCompare, kIsNull, kIsNotNull, kIn, kNotIn, kAnd, kOr };
  Kind kind = Kind::kAlways;
  size_t column = 0;
  CompareOp op = CompareOp::kEqual;
  std::vector<StatsValue> values;  // kCompare: one; kIn, kNotIn: the list
  std::vector<Bound> children;     // kAnd, kOr
};

constexpr int64_t kMaxExactDouble = int64_t{1} << 53;

// `literal` as a value of `column`'s family; nullopt when the two do not compare exactly.
std::optional<StatsValue> ValueFor(const FileStatsIndex& index, size_t column, const Literal& literal) {
  StatsValue out;
  switch (index.family(column)) {
    case StatsFamily::kNone:
      return std::nullopt;
    case StatsFamily::kBoolean:
      if (literal.type() != Literal::Type::kBoolean) return std::nullopt;
      out.integer = literal.int_value();
      return out;
    case StatsFamily::kInteger:
      if (!literal.is_integer()) return std::nullopt;
      out.integer = literal.int_value();
      return out;
    case StatsFamily::kFloat:
      if (literal.is_floating()) {
        if (std::isnan(literal.float_value())) return std::nullopt;
        out.real = literal.float_value();
        return out;
      }
      if (literal.is_integer() && literal.int_value() >= -kMaxExactDouble &&
          literal.int_value() <= kMaxExactDouble) {
        out.real = static_cast<double>(literal.int_value());
        return out;
      }
      return std::nullopt;
    case StatsFamily::kDecimal: {
      const int scale = index.type(column).scale;
      std::optional<Int128> unscaled;
      if (literal.type() == Literal::Type::kDecimal) {
        unscaled = Rescale(literal.unscaled(), literal.scale(), scale);
      } else if (literal.is_integer()) {
        unscaled = Rescale(literal.int_value(), 0, scale);
      }
      if (!unscaled) return std::nullopt;
      out.integer = *unscaled;
      return out;
    }
    case StatsFamily::kString:
      if (literal.type() != Literal::Type::kString) return std::nullopt;
      out.bytes = literal.bytes();
      return out;
    case StatsFamily::kDate:
      if (literal.type() != Literal::Type::kDate) return std::nullopt;
      out.integer = literal.int_value();
      return out;
    case StatsFamily::kTimestamp: {
      const bool ntz = index.type(column).primitive == "timestamp_ntz";
      if (literal.type() != (ntz ? Literal::Type::kTimestampNtz : Literal::Type::kTimestamp))
        return std::nullopt;
      out.integer = literal.int_value();
      return out;
    }
  }
  return std::nullopt;
}

// -1, 0 or 1 as a is below, equal to or above b.
int Compare(StatsFamily family, const StatsValue& a, const StatsValue& b) {
  switch (family) {
    case StatsFamily::kFloat:
      return (a.real > b.real) - (a.real < b.real);
    case StatsFamily::kString: {
      const int c = a.bytes.compare(b.bytes);
      return (c > 0) - (c < 0);
    }
    default:
      return (a.integer > b.integer) - (a.integer < b.integer);
  }
}

class Binder {
 public:
  explicit Binder(const FileStatsIndex& index) : index_(index) {}

  Bound Bind(const Predicate& p, bool negated) {
    using Kind = Predicate::Kind;
    switch (p.kind()) {
      case Kind::kAnd:
      case Kind::kOr: {
        // NOT (a AND b) is NOT a OR NOT b, and the other way round.
        const bool all = (p.kind() == Kind::kAnd) != negated;
        Bound out;
        out.kind = all ? Bound::Kind::kAnd : Bound::Kind::kOr;
        for (const Predicate& child : p.children()) out.children.push_back(Bind(child, negated));
        return out;
      }
      case Kind::kNot:
        return Bind(p.children()[0], !negated);
      case Kind::kCompare:
        return BindCompare(p, negated);
      case Kind::kIsNull:
      case Kind::kIsNotNull: {
        auto column = ColumnOf(p.children()[0]);
        if (!column) return Always();
        Bound out;
        out.kind = (p.kind() == Kind::kIsNull) != negated ? Bound::Kind::kIsNull : Bound::Kind::kIsNotNull;
        out.column = *column;
        return out;
      }
      case Kind::kIn: {
        auto column = ColumnOf(p.children()[0]);
        if (!column) return Always();
        Bound out;
        out.kind = negated ? Bound::Kind::kNotIn : Bound::Kind::kIn;
        out.column = *column;
        for (const Literal& literal : p.in_values()) {
          auto value = ValueFor(index_, *column, literal);
          // IN: a value that cannot be judged may match. NOT IN: its `<> value` term is
          // just not checked.
          if (!value && !negated) return Always();
          if (value) out.values.push_back(*value);
        }
        return out;
      }
      case Kind::kLiteral:
        if (p.literal().type() != Literal::Type::kBoolean) return Always();
        return (p.literal().int_value() != 0) != negated ? Always() : Never();
      case Kind::kColumn: {
        // A boolean column used as a condition: col = TRUE (NOT col: col = FALSE).
        auto column = ColumnOf(p);
        if (!column || index_.family(*column) != StatsFamily::kBoolean) return Always();
        Bound out;
        out.kind = Bound::Kind::kCompare;
        out.column = *column;
        out.op = CompareOp::kEqual;
        StatsValue value;
        value.integer = negated ? 0 : 1;
        out.values.push_back(value);
        return out;
      }
      case Kind::kUnknown:
        break;
    }
    return Always();
  }

 private:
  static Bound Always() { return Bound(); }
  static Bound Never() {
    Bound out;
    out.kind = Bound::Kind::kNever;
    return out;
  }

  std::optional<size_t> ColumnOf(const Predicate& p) const {
    if (p.kind() != Predicate::Kind::kColumn) return std::nullopt;
    return index_.FindColumn(p.column_path());
  }

  Bound BindCompare(const Predicate& p, bool negated) {
    const Predicate* column_side = &p.children()[0];
    const Predicate* literal_side = &p.children()[1];
    CompareOp op = p.op();
    if (column_side->kind() != Predicate::Kind::kColumn) {
      std::swap(column_side, literal_side);
      op = FlipCompareOp(op);
    }
    if (literal_side->kind() != Predicate::Kind::kLiteral) return Always();
    auto column = ColumnOf(*column_side);
    if (!column) return Always();
    auto value = ValueFor(index_, *column, literal_side->literal());
    if (!value) return Always();
    Bound out;
    out.kind = Bound::Kind::kCompare;
    out.column = *column;
    // Comparisons with NULL are never true, so NOT (a < v) holds exactly where a >= v.
    out.op = negated ? NegateCompareOp(op) : op;
    out.values.push_back(*value);
    return out;
  }

  const FileStatsIndex& index_;
};

// May some value in [min, max] of `c` compare to `v` as `op` says?
bool RangeMayMatch(const ColumnSummary& c, CompareOp op, const StatsValue& v) {
  if (c.AllNull()) return false;  // comparisons with NULL are never true
  // kUnknown satisfies every test: an unknown bound cannot exclude anything.
  constexpr int kUnknown = 99;
  const int lo = c.min ? Compare(c.family, *c.min, v) : kUnknown;  // min vs v
  const int hi = c.max ? Compare(c.family, *c.max, v) : kUnknown;  // max vs v
  auto at_most = [](int cmp, int bound) { return cmp == kUnknown || cmp <= bound; };
  auto at_least = [](int cmp, int bound) { return cmp == kUnknown || cmp >= bound; };
  switch (op) {
    case CompareOp::kEqual:
      return at_most(lo, 0) && at_least(hi, 0);
    case CompareOp::kNotEqual:
      return !(lo == 0 && hi == 0);
    case CompareOp::kLess:
      return at_most(lo, -1);
    case CompareOp::kLessOrEqual:
      return at_most(lo, 0);
    case CompareOp::kGreater:
      return at_least(hi, 1);
    case CompareOp::kGreaterOrEqual:
      return at_least(hi, 0);
  }
  return true;
}

bool MayMatch(const FileStatsIndex& index, size_t file, const Bound& b) {
  // A file added to the snapshot after its index was built is not judged (see
  // Snapshot::stats_index()).
  if (file >= index.num_files()) return true;
  switch (b.kind) {
    case Bound::Kind::kAlways:
      return true;
    case Bound::Kind::kNever:
      return false;
    case Bound::Kind::kAnd:
      for (const Bound& child : b.children) {
        if (!MayMatch(index, file, child)) return false;
      }
      return true;
    case Bound::Kind::kOr:
      for (const Bound& child : b.children) {
        if (MayMatch(index, file, child)) return true;
      }
      return false;
    default:
      break;
  }
  std::optional<ColumnSummary> summary = index.Summary(file, b.column);
  if (!summary) return true;
  switch (b.kind) {
    case Bound::Kind::kCompare:
      return RangeMayMatch(*summary, b.op, b.values[0]);
    case Bound::Kind::kIsNull:
      return !summary->null_count || *summary->null_count > 0;
    case Bound::Kind::kIsNotNull:
      return !summary->AllNull();
    case Bound::Kind::kIn:
      for (const StatsValue& v : b.values) {
        if (RangeMayMatch(*summary, CompareOp::kEqual, v)) return true;
      }
      return false;
    case Bound::Kind::kNotIn:
      if (summary->AllNull()) return false;
      for (const StatsValue& v : b.values) {
        if (!RangeMayMatch(*summary, CompareOp::kNotEqual, v)) return false;
      }
      return true;
    default:
      return true;
  }
}

}  // namespace

std::vector<size_t> FilesMatching(const Snapshot& snapshot, const Predicate& predicate) {
  std::vector<size_t> out;
  if (predicate.is_unknown()) {
    out.reserve(snapshot.files.size());
    for (size_t i = 0; i < snapshot.files.size(); i++) out.push_back(i);
    return out;
  }
  const FileStatsIndex& index = snapshot.stats_index();
  assert(index.num_files() == snapshot.files.size() && "files changed after the stats index was built");
  const Bound bound = Binder(index).Bind(predicate, false);
  for (size_t i = 0; i < snapshot.files.size(); i++) {
    if (MayMatch(index, i, bound)) out.push_back(i);
  }
  return out;
}

bool FileMayMatch(const Snapshot& snapshot, size_t file_index, const Predicate& predicate) {
  if (predicate.is_unknown()) return true;
  const FileStatsIndex& index = snapshot.stats_index();
  return MayMatch(index, file_index, Binder(index).Bind(predicate, false));
}

bool FileMayMatch(const Snapshot& snapshot, const AddFile& file, const Predicate& predicate) {
  if (predicate.is_unknown()) return true;
  auto index = FileStatsIndex::Build(FileStatsIndex::MakeLayout(snapshot.schema, snapshot.metadata),
                                     FileList(std::vector<AddFile>{file}));
  return MayMatch(*index, 0, Binder(*index).Bind(predicate, false));
}

}  // namespace basin::delta
