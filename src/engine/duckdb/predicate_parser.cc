// engine/predicate_parser.h on DuckDB's C++ API: Parser::ParseExpressionList and the
// parsed expression classes of DuckDB 1.4.
#include "engine/predicate_parser.h"

#include <cstring>

#include "common/strings.h"
#include "duckdb/common/error_data.hpp"
#include "duckdb/common/serializer/deserializer.hpp"
#include "duckdb/common/types/date.hpp"
#include "duckdb/common/types/timestamp.hpp"
#include "duckdb/common/types/value.hpp"
#include "duckdb/parser/expression/list.hpp"
#include "duckdb/parser/parser.hpp"
#include "engine/duckdb/table_filters.h"

namespace basin::engine {

namespace {

using delta::Literal;
using delta::Predicate;

// The DuckDB type a Delta primitive column is read as (delta::DataType::ToDuckDBType);
// nullopt for types literals are not made for (nested, void, variant).
std::optional<duckdb::LogicalType> LogicalTypeOf(const delta::DataType& type) {
  if (type.kind != delta::DataType::Kind::kPrimitive) return std::nullopt;
  const std::string& p = type.primitive;
  if (p == "boolean") return duckdb::LogicalType::BOOLEAN;
  if (p == "byte") return duckdb::LogicalType::TINYINT;
  if (p == "short") return duckdb::LogicalType::SMALLINT;
  if (p == "integer") return duckdb::LogicalType::INTEGER;
  if (p == "long") return duckdb::LogicalType::BIGINT;
  if (p == "float") return duckdb::LogicalType::FLOAT;
  if (p == "double") return duckdb::LogicalType::DOUBLE;
  if (p == "decimal") {
    return duckdb::LogicalType::DECIMAL(static_cast<uint8_t>(type.precision),
                                        static_cast<uint8_t>(type.scale));
  }
  if (p == "string") return duckdb::LogicalType::VARCHAR;
  if (p == "binary") return duckdb::LogicalType::BLOB;
  if (p == "date") return duckdb::LogicalType::DATE;
  if (p == "timestamp") return duckdb::LogicalType::TIMESTAMP_TZ;
  if (p == "timestamp_ntz") return duckdb::LogicalType::TIMESTAMP;
  return std::nullopt;
}

bool IsNumeric(const duckdb::LogicalType& type) { return type.IsNumeric(); }

bool IsTemporal(const duckdb::LogicalType& type) {
  switch (type.id()) {
    case duckdb::LogicalTypeId::DATE:
    case duckdb::LogicalTypeId::TIMESTAMP:
    case duckdb::LogicalTypeId::TIMESTAMP_TZ:
    case duckdb::LogicalTypeId::TIMESTAMP_SEC:
    case duckdb::LogicalTypeId::TIMESTAMP_MS:
    case duckdb::LogicalTypeId::TIMESTAMP_NS:
      return true;
    default:
      return false;
  }
}

// `value` (already of `type`'s DuckDB type) as a Delta literal.
std::optional<Literal> LiteralOf(const duckdb::Value& value, const delta::DataType& type) {
  const std::string& p = type.primitive;
  if (p == "boolean") return Literal::Boolean(value.GetValue<bool>());
  if (p == "byte") return Literal::Byte(value.GetValue<int8_t>());
  if (p == "short") return Literal::Short(value.GetValue<int16_t>());
  if (p == "integer") return Literal::Int(value.GetValue<int32_t>());
  if (p == "long") return Literal::Long(value.GetValue<int64_t>());
  if (p == "float") return Literal::Float(value.GetValue<float>());
  if (p == "double") return Literal::Double(value.GetValue<double>());
  if (p == "string") return Literal::String(duckdb::StringValue::Get(value));
  if (p == "binary") return Literal::Binary(duckdb::StringValue::Get(value));
  if (p == "date") {
    const auto date = value.GetValueUnsafe<duckdb::date_t>();
    if (!duckdb::Date::IsFinite(date)) return std::nullopt;
    return Literal::Date(date.days);
  }
  if (p == "timestamp" || p == "timestamp_ntz") {
    const duckdb::timestamp_t ts = p == "timestamp" ? value.GetValueUnsafe<duckdb::timestamp_tz_t>()
                                                    : value.GetValueUnsafe<duckdb::timestamp_t>();
    if (!duckdb::Timestamp::IsFinite(ts)) return std::nullopt;
    return p == "timestamp" ? Literal::Timestamp(ts.value) : Literal::TimestampNtz(ts.value);
  }
  if (p == "decimal") {
    return Literal::Decimal(duckdb_ext::UnscaledDecimal(value), type.precision, type.scale);
  }
  return std::nullopt;
}

// A constant operand: its value after any casts written around it, and whether it is a
// bare string literal (which DuckDB casts implicitly to the type it is compared with).
struct Constant {
  duckdb::Value value;
  bool string_literal = false;
};

std::optional<Constant> ConstantOf(const duckdb::ParsedExpression& e) {
  if (e.GetExpressionClass() == duckdb::ExpressionClass::CONSTANT) {
    const auto& constant = e.Cast<duckdb::ConstantExpression>();
    return Constant{constant.value, constant.value.type().id() == duckdb::LogicalTypeId::VARCHAR};
  }
  if (e.GetExpressionClass() == duckdb::ExpressionClass::CAST) {
    const auto& cast = e.Cast<duckdb::CastExpression>();
    auto child = ConstantOf(*cast.child);
    if (!child) return std::nullopt;
    duckdb::Value cast_value;
    std::string error;
    if (!child->value.DefaultTryCastAs(cast.cast_type, cast_value, &error)) return std::nullopt;
    return Constant{std::move(cast_value), false};
  }
  return std::nullopt;
}

// `constant` as a literal of `type`, when DuckDB compares the column with that value.
std::optional<Literal> LiteralFor(const Constant& constant, const delta::DataType& type) {
  auto target = LogicalTypeOf(type);
  if (!target || constant.value.IsNull()) return std::nullopt;
  const duckdb::LogicalType& source = constant.value.type();
  duckdb::Value converted;
  std::string error;
  if (source == *target) {
    converted = constant.value;
  } else if (constant.string_literal) {
    // What the binder does with a string literal compared with a column of another type.
    if (!constant.value.DefaultTryCastAs(*target, converted, &error)) return std::nullopt;
  } else if (source.id() == duckdb::LogicalTypeId::DATE && IsTemporal(*target)) {
    // A date is its midnight (UTC): exact as a timestamp.
    if (!constant.value.DefaultTryCastAs(*target, converted, &error)) return std::nullopt;
  } else if ((IsNumeric(source) && IsNumeric(*target)) || (IsTemporal(source) && IsTemporal(*target))) {
    // Exact conversions only: the value must survive the way back.
    duckdb::Value back;
    if (!constant.value.DefaultTryCastAs(*target, converted, &error) ||
        !converted.DefaultTryCastAs(source, back, &error) || !(back == constant.value)) {
      return std::nullopt;
    }
  } else {
    return std::nullopt;
  }
  return LiteralOf(converted, type);
}

bool Contains(const std::vector<std::string>& names, const std::string& name) {
  return std::any_of(names.begin(), names.end(),
                     [&](const std::string& n) { return EqualsIgnoreCase(n, name); });
}

// A column of this table an expression refers to.
struct ResolvedColumn {
  delta::ColumnPath path;  // logical names as the schema spells them
  const delta::DataType* type = nullptr;
};

class Converter {
 public:
  Converter(const delta::StructType& schema, const PredicateScope& scope) : schema_(schema), scope_(scope) {}

  Predicate Convert(const duckdb::ParsedExpression& e) {
    switch (e.GetExpressionClass()) {
      case duckdb::ExpressionClass::CONJUNCTION: {
        const auto& conjunction = e.Cast<duckdb::ConjunctionExpression>();
        std::vector<Predicate> children;
        for (const auto& child : conjunction.children) children.push_back(Convert(*child));
        if (e.GetExpressionType() == duckdb::ExpressionType::CONJUNCTION_AND) return Predicate::And(children);
        if (e.GetExpressionType() == duckdb::ExpressionType::CONJUNCTION_OR) return Predicate::Or(children);
        break;
      }
      case duckdb::ExpressionClass::COMPARISON: {
        const auto& comparison = e.Cast<duckdb::ComparisonExpression>();
        const std::optional<delta::CompareOp> op = duckdb_ext::ToCompareOp(e.GetExpressionType());
        if (!op) break;
        if (auto p = Compare(*op, *comparison.left, *comparison.right)) return *p;
        break;
      }
      case duckdb::ExpressionClass::BETWEEN: {
        const auto& between = e.Cast<duckdb::BetweenExpression>();
        auto lower = Compare(delta::CompareOp::kGreaterOrEqual, *between.input, *between.lower);
        auto upper = Compare(delta::CompareOp::kLessOrEqual, *between.input, *between.upper);
        if (!lower && !upper) break;
        return Predicate::And({lower ? *lower : Unknown(e), upper ? *upper : Unknown(e)});
      }
      case duckdb::ExpressionClass::OPERATOR:
        if (auto p = Operator(e.Cast<duckdb::OperatorExpression>())) return *p;
        break;
      case duckdb::ExpressionClass::CONSTANT:
      case duckdb::ExpressionClass::CAST: {
        // TRUE and FALSE reach here as CAST('t' AS BOOLEAN).
        auto constant = ConstantOf(e);
        if (constant && constant->value.type().id() == duckdb::LogicalTypeId::BOOLEAN &&
            !constant->value.IsNull()) {
          return Predicate::Constant(Literal::Boolean(constant->value.GetValue<bool>()));
        }
        break;
      }
      case duckdb::ExpressionClass::COLUMN_REF: {
        auto column = Resolve(e);
        if (column && column->type->kind == delta::DataType::Kind::kPrimitive &&
            column->type->primitive == "boolean") {
          return Predicate::Column(column->path);
        }
        break;
      }
      default:
        break;
    }
    return Unknown(e);
  }

 private:
  static Predicate Unknown(const duckdb::ParsedExpression& e) { return Predicate::Unknown(e.ToString()); }

  std::optional<ResolvedColumn> Resolve(const duckdb::ParsedExpression& e) const {
    if (e.GetExpressionClass() != duckdb::ExpressionClass::COLUMN_REF) return std::nullopt;
    std::vector<std::string> names = e.Cast<duckdb::ColumnRefExpression>().column_names;
    if (names.empty()) return std::nullopt;
    if (names.size() >= 2 && Contains(scope_.qualifiers, names[0])) {
      names.erase(names.begin());
    } else if (names.size() >= 2 && Contains(scope_.other_qualifiers, names[0])) {
      return std::nullopt;
    }
    ResolvedColumn out;
    const delta::StructType* fields = &schema_;
    for (size_t i = 0; i < names.size(); i++) {
      if (fields == nullptr) return std::nullopt;
      const delta::StructField* field = fields->Find(names[i]);
      if (field == nullptr) return std::nullopt;
      out.path.push_back(field->name);
      out.type = field->type.get();
      fields = field->type->kind == delta::DataType::Kind::kStruct ? &field->type->struct_type : nullptr;
    }
    return out;
  }

  // column <op> constant, in either order; nullopt when it is not of that shape or the
  // constant does not convert.
  std::optional<Predicate> Compare(delta::CompareOp op, const duckdb::ParsedExpression& left,
                                   const duckdb::ParsedExpression& right) const {
    const duckdb::ParsedExpression* column_side = &left;
    const duckdb::ParsedExpression* constant_side = &right;
    if (column_side->GetExpressionClass() != duckdb::ExpressionClass::COLUMN_REF) {
      std::swap(column_side, constant_side);
      op = delta::FlipCompareOp(op);
    }
    auto column = Resolve(*column_side);
    auto constant = ConstantOf(*constant_side);
    if (!column || !constant) return std::nullopt;
    auto literal = LiteralFor(*constant, *column->type);
    if (!literal) return std::nullopt;
    return Predicate::Compare(op, column->path, std::move(*literal));
  }

  std::optional<Predicate> Operator(const duckdb::OperatorExpression& e) {
    const auto& children = e.children;
    switch (e.GetExpressionType()) {
      case duckdb::ExpressionType::OPERATOR_NOT:
        if (children.size() != 1) return std::nullopt;
        return Predicate::Not(Convert(*children[0]));
      case duckdb::ExpressionType::OPERATOR_IS_NULL:
      case duckdb::ExpressionType::OPERATOR_IS_NOT_NULL: {
        if (children.size() != 1) return std::nullopt;
        auto column = Resolve(*children[0]);
        if (!column) return std::nullopt;
        Predicate operand = Predicate::Column(column->path);
        return e.GetExpressionType() == duckdb::ExpressionType::OPERATOR_IS_NULL
                   ? Predicate::IsNull(operand)
                   : Predicate::IsNotNull(operand);
      }
      case duckdb::ExpressionType::COMPARE_IN:
      case duckdb::ExpressionType::COMPARE_NOT_IN: {
        if (children.size() < 2) return std::nullopt;
        auto column = Resolve(*children[0]);
        if (!column) return std::nullopt;
        std::vector<Literal> values;
        for (size_t i = 1; i < children.size(); i++) {
          auto constant = ConstantOf(*children[i]);
          if (!constant) return std::nullopt;
          auto literal = LiteralFor(*constant, *column->type);
          if (!literal) return std::nullopt;
          values.push_back(std::move(*literal));
        }
        Predicate in = Predicate::In(Predicate::Column(column->path), std::move(values));
        return e.GetExpressionType() == duckdb::ExpressionType::COMPARE_IN ? in : Predicate::Not(in);
      }
      default:
        return std::nullopt;
    }
  }

  const delta::StructType& schema_;
  const PredicateScope& scope_;
};

// Reads a ParsedExpression back from the JSON json_serialize_sql() wrote, as DuckDB's
// JSON deserializer does (json extension), over nlohmann::json values. Throws DuckDB's
// exceptions on a shape it does not expect.
class SyntaxTreeDeserializer final : public duckdb::Deserializer {
 public:
  explicit SyntaxTreeDeserializer(const nlohmann::json& root) {
    deserialize_enum_from_string = true;
    stack_.push_back(Frame{&root, 0});
  }

 private:
  struct Frame {
    const nlohmann::json* value;
    size_t next;  // arrays: the next element
  };

  [[noreturn]] void Fail(const std::string& what) const {
    throw duckdb::SerializationException("syntax tree: " + what +
                                         (tag_ ? std::string(" at '") + tag_ + "'" : ""));
  }

  // In an object, the value of the current property; in an array, the next element.
  const nlohmann::json& Next() {
    Frame& frame = stack_.back();
    if (frame.value->is_object()) {
      auto it = frame.value->find(tag_);
      if (it == frame.value->end()) Fail("missing property");
      return *it;
    }
    if (frame.value->is_array()) {
      if (frame.next >= frame.value->size()) Fail("list too short");
      return (*frame.value)[frame.next++];
    }
    Fail("not an object or list");
  }

  template <typename T>
  T Number() {
    const nlohmann::json& v = Next();
    if (!v.is_number()) Fail("expected a number");
    return v.get<T>();
  }

  void OnPropertyBegin(const duckdb::field_id_t, const char* tag) final { tag_ = tag; }
  void OnPropertyEnd() final {}
  bool OnOptionalPropertyBegin(const duckdb::field_id_t, const char* tag) final {
    const nlohmann::json& parent = *stack_.back().value;
    const bool present = parent.is_object() && parent.contains(tag);
    if (present) tag_ = tag;
    return present;
  }
  void OnOptionalPropertyEnd(bool) final {}
  void OnObjectBegin() final {
    const nlohmann::json& v = Next();
    if (!v.is_object()) Fail("expected an object");
    stack_.push_back(Frame{&v, 0});
  }
  void OnObjectEnd() final { stack_.pop_back(); }
  duckdb::idx_t OnListBegin() final {
    const nlohmann::json& v = Next();
    if (!v.is_array()) Fail("expected a list");
    stack_.push_back(Frame{&v, 0});
    return v.size();
  }
  void OnListEnd() final { stack_.pop_back(); }
  bool OnNullableBegin() final {
    Frame& frame = stack_.back();
    const size_t next = frame.next;
    const bool present = !Next().is_null();
    frame.next = next;  // the value itself is read next
    return present;
  }
  void OnNullableEnd() final {}

  bool ReadBool() final {
    const nlohmann::json& v = Next();
    if (!v.is_boolean()) Fail("expected a boolean");
    return v.get<bool>();
  }
  int8_t ReadSignedInt8() final { return Number<int8_t>(); }
  uint8_t ReadUnsignedInt8() final { return Number<uint8_t>(); }
  int16_t ReadSignedInt16() final { return Number<int16_t>(); }
  uint16_t ReadUnsignedInt16() final { return Number<uint16_t>(); }
  int32_t ReadSignedInt32() final { return Number<int32_t>(); }
  uint32_t ReadUnsignedInt32() final { return Number<uint32_t>(); }
  int64_t ReadSignedInt64() final { return Number<int64_t>(); }
  uint64_t ReadUnsignedInt64() final { return Number<uint64_t>(); }
  float ReadFloat() final { return Number<float>(); }
  double ReadDouble() final { return Number<double>(); }
  duckdb::hugeint_t ReadHugeInt() final {
    duckdb::hugeint_t out;
    OnObjectBegin();
    ReadProperty(100, "upper", out.upper);
    ReadProperty(101, "lower", out.lower);
    OnObjectEnd();
    return out;
  }
  duckdb::uhugeint_t ReadUhugeInt() final {
    duckdb::uhugeint_t out;
    OnObjectBegin();
    ReadProperty(100, "upper", out.upper);
    ReadProperty(101, "lower", out.lower);
    OnObjectEnd();
    return out;
  }
  std::string ReadString() final {
    const nlohmann::json& v = Next();
    if (!v.is_string()) Fail("expected a string");
    return v.get<std::string>();
  }
  void ReadDataPtr(duckdb::data_ptr_t& ptr, duckdb::idx_t count) final {
    const std::string bytes = ReadString();
    if (bytes.size() != count) Fail("unexpected data length");
    std::memcpy(ptr, bytes.data(), count);
  }

  std::vector<Frame> stack_;
  const char* tag_ = nullptr;
};

}  // namespace

Result<delta::Predicate> ParsePredicate(std::string_view where_sql, const delta::StructType& schema,
                                        const PredicateScope& scope) {
  duckdb::vector<duckdb::unique_ptr<duckdb::ParsedExpression>> expressions;
  try {
    expressions = duckdb::Parser::ParseExpressionList(std::string(where_sql));
  } catch (const std::exception& e) {
    return Status::InvalidArgument("cannot parse predicate '" + std::string(where_sql) +
                                   "': " + duckdb::ErrorData(e).Message());
  }
  if (expressions.size() != 1) {
    return Status::InvalidArgument("cannot parse predicate '" + std::string(where_sql) +
                                   "': not one expression");
  }
  return Converter(schema, scope).Convert(*expressions[0]);
}

delta::Predicate PredicateFromSyntaxTree(const nlohmann::json& expression, const delta::StructType& schema,
                                         const PredicateScope& scope) {
  duckdb::unique_ptr<duckdb::ParsedExpression> parsed;
  try {
    SyntaxTreeDeserializer deserializer(expression);
    parsed = duckdb::ParsedExpression::Deserialize(deserializer);
  } catch (const std::exception&) {
    return Predicate::Unknown("a syntax tree DuckDB could not read back");
  }
  if (!parsed) return Predicate::Unknown();
  return Converter(schema, scope).Convert(*parsed);
}

}  // namespace basin::engine
