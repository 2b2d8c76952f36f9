// Basin's own predicate over the columns of a Delta table: what data skipping evaluates
// against partition values and file statistics (delta/skipping.h), and what a transaction
// records as the rows it read (delta/conflict_checker.h).
//
// A Predicate is an expression tree: column references (by logical path), typed literals,
// comparisons, IS [NOT] NULL, IN (literals), AND, OR, NOT, and an "unknown" node standing
// for anything else (a function call, a subquery...), which may be true for any row. A
// tree holding unknown nodes is still useful: `a = 1 AND lower(b) = 'x'` skips on `a`.
// Building one from SQL text is engine/'s job (engine/predicate_parser.h).
//
// Literals are typed as Delta primitive types. Comparisons follow SQL: a comparison with
// NULL is never true, so NOT (a < 5) holds exactly where a >= 5.
//
// Thread safety: immutable values; a Predicate shares its nodes, so copies are cheap and
// may be read from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace basin::delta {

// A column by its logical path: {"a"}, or {"s", "x"} for field x of struct column s.
using ColumnPath = std::vector<std::string>;

// Two's complement 128-bit integer: decimal unscaled values up to 38 digits.
using Int128 = __int128;

// "a", "s.x", with names that are not plain identifiers double-quoted ("my col".x).
std::string ColumnPathToString(const ColumnPath& path);

// The decimal text of `value` ("-12345").
std::string Int128ToString(Int128 value);

// A constant of a Delta primitive type.
class Literal {
 public:
  enum class Type : uint8_t {
    kBoolean,
    kByte,
    kShort,
    kInt,
    kLong,
    kFloat,
    kDouble,
    kDecimal,
    kString,
    kBinary,
    kDate,          // days since 1970-01-01
    kTimestamp,     // microseconds since the epoch, UTC
    kTimestampNtz,  // microseconds since the epoch of a wall-clock time without time zone
  };

  static Literal Boolean(bool value);
  static Literal Byte(int8_t value);
  static Literal Short(int16_t value);
  static Literal Int(int32_t value);
  static Literal Long(int64_t value);
  static Literal Float(float value);
  static Literal Double(double value);
  // unscaled * 10^-scale, e.g. Decimal(1234, 10, 2) is 12.34 of type decimal(10,2).
  // REQUIRES: 1 <= precision <= 38, 0 <= scale <= precision.
  static Literal Decimal(Int128 unscaled, int precision, int scale);
  static Literal String(std::string value);
  static Literal Binary(std::string bytes);
  static Literal Date(int32_t days_since_epoch);
  static Literal Timestamp(int64_t micros_since_epoch);
  static Literal TimestampNtz(int64_t micros_since_epoch);

  Type type() const { return type_; }
  // kBoolean (0 or 1), kByte .. kLong, kDate, kTimestamp, kTimestampNtz.
  int64_t int_value() const { return static_cast<int64_t>(integer_); }
  // kFloat (widened exactly) and kDouble.
  double float_value() const { return real_; }
  // kDecimal.
  Int128 unscaled() const { return integer_; }
  int precision() const { return precision_; }
  int scale() const { return scale_; }
  // kString (UTF-8) and kBinary.
  const std::string& bytes() const { return bytes_; }

  bool is_integer() const { return type_ >= Type::kByte && type_ <= Type::kLong; }
  bool is_floating() const { return type_ == Type::kFloat || type_ == Type::kDouble; }

  // The Delta type name: "long", "decimal(10,2)", "timestamp_ntz".
  std::string TypeName() const;
  // SQL text for messages and tests: TRUE, 5, 12.34, 'it''s', X'0AFF', DATE '2024-01-31',
  // TIMESTAMPTZ '2024-01-31 12:00:00+00', TIMESTAMP '2024-01-31 12:00:00'.
  std::string ToString() const;

  // Same type (decimals: same precision and scale) and same value; floating values
  // compare by bit pattern, so NaN equals NaN.
  bool operator==(const Literal& other) const;

 private:
  Literal() = default;
  static Literal Integral(Type type, int64_t value);

  Type type_ = Type::kBoolean;
  uint8_t precision_ = 0, scale_ = 0;
  Int128 integer_ = 0;
  double real_ = 0;
  std::string bytes_;
};

enum class CompareOp : uint8_t { kEqual, kNotEqual, kLess, kLessOrEqual, kGreater, kGreaterOrEqual };

// "=", "<>", "<", "<=", ">", ">="
const char* CompareOpSymbol(CompareOp op);
// The operator with its operands swapped: a < b is b > a.
CompareOp FlipCompareOp(CompareOp op);
// The operator of NOT (a op b) over non-null operands: NOT (a < b) is a >= b.
CompareOp NegateCompareOp(CompareOp op);

class Predicate {
 public:
  enum class Kind : uint8_t {
    kColumn,     // a value: the column at column_path()
    kLiteral,    // a value: literal()
    kCompare,    // children()[0] op() children()[1]
    kIsNull,     // children()[0] IS NULL
    kIsNotNull,  // children()[0] IS NOT NULL
    kIn,         // children()[0] IN (in_values())
    kAnd,        // all children() hold; none: true
    kOr,         // some child holds; none: false
    kNot,        // children()[0] does not hold
    kUnknown,    // may hold for any row; unknown_text() says what it stood for
  };

  // Unknown, with no text: a predicate that rules nothing out.
  Predicate();

  static Predicate Column(ColumnPath path);
  static Predicate Constant(Literal value);
  static Predicate Compare(CompareOp op, Predicate left, Predicate right);
  static Predicate IsNull(Predicate operand);
  static Predicate IsNotNull(Predicate operand);
  static Predicate In(Predicate operand, std::vector<Literal> values);
  // A single child is returned as it is; nested ANDs (ORs) are flattened.
  static Predicate And(std::vector<Predicate> children);
  static Predicate Or(std::vector<Predicate> children);
  static Predicate Not(Predicate child);
  // `text` describes what Basin could not model, for messages ("lower(name) = 'x'").
  static Predicate Unknown(std::string text = "");

  // Shorthands for column <op> literal.
  static Predicate Compare(CompareOp op, ColumnPath column, Literal value);

  Kind kind() const;
  // REQUIRES: kind() is kColumn.
  const ColumnPath& column_path() const;
  // REQUIRES: kind() is kLiteral.
  const Literal& literal() const;
  // REQUIRES: kind() is kCompare.
  CompareOp op() const;
  // kCompare: {left, right}; kIsNull, kIsNotNull, kIn, kNot: {operand}; kAnd, kOr: the
  // terms; empty for the others.
  const std::vector<Predicate>& children() const;
  // REQUIRES: kind() is kIn.
  const std::vector<Literal>& in_values() const;
  // kUnknown: what it stands for (may be empty).
  const std::string& unknown_text() const;

  bool is_unknown() const { return kind() == Kind::kUnknown; }

  // SQL-like text for messages and tests: (a = 5 AND s.x IS NULL), NOT (b IN ('x', 'y')),
  // unknown(lower(name) = 'x').
  std::string ToString() const;

 private:
  struct Node;
  explicit Predicate(std::shared_ptr<const Node> node) : node_(std::move(node)) {}
  static Predicate Make(Node node);

  std::shared_ptr<const Node> node_;  // never null
};

}  // namespace basin::delta
