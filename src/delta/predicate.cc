#include "delta/predicate.h"

#include <cassert>
#include <charconv>
#include <cmath>
#include <cstring>

#include "common/strings.h"
#include "delta/temporal.h"

namespace basin::delta {

namespace {

bool IsPlainIdentifier(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

template <typename T>
std::string ShortestText(T value) {
  if (std::isnan(value)) return "'NaN'";
  if (std::isinf(value)) return value > 0 ? "'Infinity'" : "'-Infinity'";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(value);
}

}  // namespace

std::string ColumnPathToString(const ColumnPath& path) {
  std::string out;
  for (const std::string& name : path) {
    if (!out.empty()) out += '.';
    out += IsPlainIdentifier(name) ? name : QuoteIdentifier(name);
  }
  return out;
}

std::string Int128ToString(Int128 value) {
  if (value == 0) return "0";
  const bool negative = value < 0;
  // Digits from the magnitude as unsigned, so the most negative value works too.
  unsigned __int128 magnitude =
      negative ? static_cast<unsigned __int128>(-(value + 1)) + 1 : static_cast<unsigned __int128>(value);
  std::string digits;
  while (magnitude != 0) {
    digits += static_cast<char>('0' + static_cast<int>(magnitude % 10));
    magnitude /= 10;
  }
  if (negative) digits += '-';
  return std::string(digits.rbegin(), digits.rend());
}

// --- Literal ---

Literal Literal::Boolean(bool value) { return Integral(Type::kBoolean, value ? 1 : 0); }

Literal Literal::Integral(Type type, int64_t value) {
  Literal l;
  l.type_ = type;
  l.integer_ = value;
  return l;
}

Literal Literal::Byte(int8_t value) { return Integral(Type::kByte, value); }
Literal Literal::Short(int16_t value) { return Integral(Type::kShort, value); }
Literal Literal::Int(int32_t value) { return Integral(Type::kInt, value); }
Literal Literal::Long(int64_t value) { return Integral(Type::kLong, value); }
Literal Literal::Date(int32_t days_since_epoch) { return Integral(Type::kDate, days_since_epoch); }
Literal Literal::Timestamp(int64_t micros_since_epoch) {
  return Integral(Type::kTimestamp, micros_since_epoch);
}
Literal Literal::TimestampNtz(int64_t micros_since_epoch) {
  return Integral(Type::kTimestampNtz, micros_since_epoch);
}

Literal Literal::Float(float value) {
  Literal l;
  l.type_ = Type::kFloat;
  l.real_ = value;
  return l;
}

Literal Literal::Double(double value) {
  Literal l;
  l.type_ = Type::kDouble;
  l.real_ = value;
  return l;
}

Literal Literal::Decimal(Int128 unscaled, int precision, int scale) {
  assert(precision >= 1 && precision <= 38 && scale >= 0 && scale <= precision);
  Literal l;
  l.type_ = Type::kDecimal;
  l.integer_ = unscaled;
  l.precision_ = static_cast<uint8_t>(precision);
  l.scale_ = static_cast<uint8_t>(scale);
  return l;
}

Literal Literal::String(std::string value) {
  Literal l;
  l.type_ = Type::kString;
  l.bytes_ = std::move(value);
  return l;
}

Literal Literal::Binary(std::string bytes) {
  Literal l;
  l.type_ = Type::kBinary;
  l.bytes_ = std::move(bytes);
  return l;
}

std::string Literal::TypeName() const {
  switch (type_) {
    case Type::kBoolean:
      return "boolean";
    case Type::kByte:
      return "byte";
    case Type::kShort:
      return "short";
    case Type::kInt:
      return "integer";
    case Type::kLong:
      return "long";
    case Type::kFloat:
      return "float";
    case Type::kDouble:
      return "double";
    case Type::kDecimal:
      return "decimal(" + std::to_string(precision_) + "," + std::to_string(scale_) + ")";
    case Type::kString:
      return "string";
    case Type::kBinary:
      return "binary";
    case Type::kDate:
      return "date";
    case Type::kTimestamp:
      return "timestamp";
    case Type::kTimestampNtz:
      return "timestamp_ntz";
  }
  return "unknown";
}

std::string Literal::ToString() const {
  switch (type_) {
    case Type::kBoolean:
      return integer_ != 0 ? "TRUE" : "FALSE";
    case Type::kByte:
    case Type::kShort:
    case Type::kInt:
    case Type::kLong:
      return std::to_string(int_value());
    case Type::kFloat:
      return ShortestText(static_cast<float>(real_));
    case Type::kDouble:
      return ShortestText(real_);
    case Type::kDecimal: {
      std::string digits = Int128ToString(integer_ < 0 ? -integer_ : integer_);
      if (scale_ > 0) {
        if (digits.size() <= scale_) digits.insert(0, scale_ + 1 - digits.size(), '0');
        digits.insert(digits.size() - scale_, ".");
      }
      return (integer_ < 0 ? "-" : "") + digits;
    }
    case Type::kString:
      return QuoteLiteral(bytes_);
    case Type::kBinary: {
      static constexpr char kHex[] = "0123456789ABCDEF";
      std::string out = "X'";
      for (unsigned char c : bytes_) {
        out += kHex[c >> 4];
        out += kHex[c & 15];
      }
      return out + "'";
    }
    case Type::kDate:
      return "DATE '" + FormatDate(int_value()) + "'";
    case Type::kTimestamp:
      return "TIMESTAMPTZ '" + FormatTimestampMicros(int_value()) + "+00'";
    case Type::kTimestampNtz:
      return "TIMESTAMP '" + FormatTimestampMicros(int_value()) + "'";
  }
  return "?";
}

bool Literal::operator==(const Literal& other) const {
  if (type_ != other.type_ || precision_ != other.precision_ || scale_ != other.scale_) return false;
  if (is_floating()) return std::memcmp(&real_, &other.real_, sizeof(real_)) == 0;
  return integer_ == other.integer_ && bytes_ == other.bytes_;
}

// --- comparison operators ---

const char* CompareOpSymbol(CompareOp op) {
  switch (op) {
    case CompareOp::kEqual:
      return "=";
    case CompareOp::kNotEqual:
      return "<>";
    case CompareOp::kLess:
      return "<";
    case CompareOp::kLessOrEqual:
      return "<=";
    case CompareOp::kGreater:
      return ">";
    case CompareOp::kGreaterOrEqual:
      return ">=";
  }
  return "?";
}

CompareOp FlipCompareOp(CompareOp op) {
  switch (op) {
    case CompareOp::kLess:
      return CompareOp::kGreater;
    case CompareOp::kLessOrEqual:
      return CompareOp::kGreaterOrEqual;
    case CompareOp::kGreater:
      return CompareOp::kLess;
    case CompareOp::kGreaterOrEqual:
      return CompareOp::kLessOrEqual;
    case CompareOp::kEqual:
    case CompareOp::kNotEqual:
      break;
  }
  return op;
}

CompareOp NegateCompareOp(CompareOp op) {
  switch (op) {
    case CompareOp::kEqual:
      return CompareOp::kNotEqual;
    case CompareOp::kNotEqual:
      return CompareOp::kEqual;
    case CompareOp::kLess:
      return CompareOp::kGreaterOrEqual;
    case CompareOp::kLessOrEqual:
      return CompareOp::kGreater;
    case CompareOp::kGreater:
      return CompareOp::kLessOrEqual;
    case CompareOp::kGreaterOrEqual:
      return CompareOp::kLess;
  }
  return op;
}

// --- Predicate ---

struct Predicate::Node {
  Kind kind = Kind::kUnknown;
  CompareOp op = CompareOp::kEqual;
  ColumnPath column;
  std::vector<Literal> values;  // kLiteral: one; kIn: the list
  std::vector<Predicate> children;
  std::string text;  // kUnknown
};

Predicate Predicate::Make(Node node) { return Predicate(std::make_shared<const Node>(std::move(node))); }

Predicate::Predicate() {
  static const std::shared_ptr<const Node> kUnknownNode = std::make_shared<const Node>();
  node_ = kUnknownNode;
}

Predicate Predicate::Column(ColumnPath path) {
  Node node;
  node.kind = Kind::kColumn;
  node.column = std::move(path);
  return Make(std::move(node));
}

Predicate Predicate::Constant(Literal value) {
  Node node;
  node.kind = Kind::kLiteral;
  node.values.push_back(std::move(value));
  return Make(std::move(node));
}

Predicate Predicate::Compare(CompareOp op, Predicate left, Predicate right) {
  Node node;
  node.kind = Kind::kCompare;
  node.op = op;
  node.children = {std::move(left), std::move(right)};
  return Make(std::move(node));
}

Predicate Predicate::Compare(CompareOp op, ColumnPath column, Literal value) {
  return Compare(op, Column(std::move(column)), Constant(std::move(value)));
}

Predicate Predicate::IsNull(Predicate operand) {
  Node node;
  node.kind = Kind::kIsNull;
  node.children = {std::move(operand)};
  return Make(std::move(node));
}

Predicate Predicate::IsNotNull(Predicate operand) {
  Node node;
  node.kind = Kind::kIsNotNull;
  node.children = {std::move(operand)};
  return Make(std::move(node));
}

Predicate Predicate::In(Predicate operand, std::vector<Literal> values) {
  Node node;
  node.kind = Kind::kIn;
  node.children = {std::move(operand)};
  node.values = std::move(values);
  return Make(std::move(node));
}

namespace {

std::vector<Predicate> Flattened(Predicate::Kind kind, std::vector<Predicate> children) {
  std::vector<Predicate> out;
  out.reserve(children.size());
  for (Predicate& child : children) {
    if (child.kind() == kind) {
      out.insert(out.end(), child.children().begin(), child.children().end());
    } else {
      out.push_back(std::move(child));
    }
  }
  return out;
}

}  // namespace

Predicate Predicate::And(std::vector<Predicate> children) {
  Node node;
  node.kind = Kind::kAnd;
  node.children = Flattened(Kind::kAnd, std::move(children));
  if (node.children.size() == 1) return node.children[0];
  return Make(std::move(node));
}

Predicate Predicate::Or(std::vector<Predicate> children) {
  Node node;
  node.kind = Kind::kOr;
  node.children = Flattened(Kind::kOr, std::move(children));
  if (node.children.size() == 1) return node.children[0];
  return Make(std::move(node));
}

Predicate Predicate::Not(Predicate child) {
  Node node;
  node.kind = Kind::kNot;
  node.children = {std::move(child)};
  return Make(std::move(node));
}

Predicate Predicate::Unknown(std::string text) {
  Node node;
  node.kind = Kind::kUnknown;
  node.text = std::move(text);
  return Make(std::move(node));
}

Predicate::Kind Predicate::kind() const { return node_->kind; }

const ColumnPath& Predicate::column_path() const {
  assert(kind() == Kind::kColumn);
  return node_->column;
}

const Literal& Predicate::literal() const {
  assert(kind() == Kind::kLiteral);
  return node_->values.front();
}

CompareOp Predicate::op() const {
  assert(kind() == Kind::kCompare);
  return node_->op;
}

const std::vector<Predicate>& Predicate::children() const { return node_->children; }

const std::vector<Literal>& Predicate::in_values() const {
  assert(kind() == Kind::kIn);
  return node_->values;
}

const std::string& Predicate::unknown_text() const { return node_->text; }

std::string Predicate::ToString() const {
  const auto& children = node_->children;
  auto joined = [&](const char* separator, const char* empty) {
    if (children.empty()) return std::string(empty);
    std::string out = "(";
    for (size_t i = 0; i < children.size(); i++) {
      if (i > 0) out += separator;
      out += children[i].ToString();
    }
    return out + ")";
  };
  switch (kind()) {
    case Kind::kColumn:
      return ColumnPathToString(node_->column);
    case Kind::kLiteral:
      return node_->values.front().ToString();
    case Kind::kCompare:
      return children[0].ToString() + " " + CompareOpSymbol(node_->op) + " " + children[1].ToString();
    case Kind::kIsNull:
      return children[0].ToString() + " IS NULL";
    case Kind::kIsNotNull:
      return children[0].ToString() + " IS NOT NULL";
    case Kind::kIn: {
      std::string out = children[0].ToString() + " IN (";
      for (size_t i = 0; i < node_->values.size(); i++) {
        if (i > 0) out += ", ";
        out += node_->values[i].ToString();
      }
      return out + ")";
    }
    case Kind::kAnd:
      return joined(" AND ", "TRUE");
    case Kind::kOr:
      return joined(" OR ", "FALSE");
    case Kind::kNot: {
      const std::string inner = children[0].ToString();
      return "NOT " + (inner.front() == '(' ? inner : "(" + inner + ")");
    }
    case Kind::kUnknown:
      return "unknown(" + node_->text + ")";
  }
  return "?";
}

}  // namespace basin::delta
