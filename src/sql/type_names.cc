#include "sql/type_names.h"

#include <algorithm>
#include <cctype>
#include <memory>

namespace basin::sql {

namespace {

std::string Upper(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::toupper(c); });
  return text;
}

delta::DataTypePtr Primitive(const std::string& name, int precision = 0, int scale = 0) {
  auto type = std::make_shared<delta::DataType>();
  type->primitive = name;
  type->precision = precision;
  type->scale = scale;
  return type;
}

// Nested Spark types close with '>', which DuckDB's scanner joins with the closing
// brackets of enclosing types (">>"); `pending_close_` counts the ones already read.
class TypeParser {
 public:
  explicit TypeParser(grammar::TokenStream& tokens) : tokens_(tokens) {}

  Result<delta::DataTypePtr> Parse() {
    ASSIGN_OR_RETURN(delta::DataTypePtr type, ParseType());
    if (pending_close_ > 0) return tokens_.Error("a column type (unbalanced '>')");
    return type;
  }

 private:
  Result<delta::DataTypePtr> ParseType() {
    ASSIGN_OR_RETURN(delta::DataTypePtr type, ParseBaseType());
    // DuckDB's list suffix: INT[], INT[][].
    while (pending_close_ == 0 && tokens_.PeekSymbol("[")) {
      tokens_.AcceptSymbol("[");
      RETURN_IF_ERROR(tokens_.ExpectSymbol("]"));
      auto array = std::make_shared<delta::DataType>();
      array->kind = delta::DataType::Kind::kArray;
      array->element_type = std::move(type);
      type = std::move(array);
    }
    return type;
  }

  Status ExpectOpenAngle() {
    if (tokens_.AcceptSymbol("<")) return Status::OK();
    return tokens_.Error("'<'");
  }

  Status ExpectCloseAngle() {
    if (pending_close_ > 0) {
      pending_close_--;
      return Status::OK();
    }
    const std::string_view t = tokens_.TextOf(tokens_.Peek());
    if (!tokens_.AtEnd() && tokens_.Peek().kind == engine::SqlTokenKind::kOperator && !t.empty() &&
        t.find_first_not_of('>') == std::string_view::npos) {
      pending_close_ = static_cast<int>(t.size()) - 1;
      tokens_.Reset(tokens_.position() + 1);
      return Status::OK();
    }
    return tokens_.Error("'>'");
  }

  // An optional "(n)" or "(n, m)" after a type name.
  Result<std::vector<int64_t>> TypeArguments() {
    std::vector<int64_t> args;
    if (!tokens_.AcceptSymbol("(")) return args;
    do {
      ASSIGN_OR_RETURN(int64_t value, tokens_.Integer("a number"));
      args.push_back(value);
    } while (tokens_.AcceptSymbol(","));
    RETURN_IF_ERROR(tokens_.ExpectSymbol(")"));
    return args;
  }

  Result<delta::DataTypePtr> Decimal() {
    const size_t at = tokens_.position();
    ASSIGN_OR_RETURN(std::vector<int64_t> args, TypeArguments());
    // Spark's default; DuckDB's would be (18,3), but Spark's spelling is what DECIMAL alone
    // means in Delta DDL.
    int64_t precision = args.empty() ? 10 : args[0];
    int64_t scale = args.size() > 1 ? args[1] : 0;
    if (args.size() > 2 || precision < 1 || precision > 38 || scale < 0 || scale > precision) {
      tokens_.Reset(at);
      return tokens_.Error("DECIMAL(precision, scale) with 1 <= precision <= 38 and 0 <= scale <= precision");
    }
    return Primitive("decimal", static_cast<int>(precision), static_cast<int>(scale));
  }

  Result<delta::StructField> StructField(bool spark_style) {
    delta::StructField field;
    ASSIGN_OR_RETURN(field.name, tokens_.Name("a field name"));
    if (spark_style) tokens_.AcceptSymbol(":");
    ASSIGN_OR_RETURN(field.type, ParseType());
    if (pending_close_ == 0 && tokens_.AcceptWords({"NOT", "NULL"})) field.nullable = false;
    if (pending_close_ == 0 && tokens_.AcceptWords({"COMMENT"})) {
      ASSIGN_OR_RETURN(std::string comment, tokens_.StringLiteral("a comment string"));
      field.metadata["comment"] = comment;
    }
    return field;
  }

  Result<delta::DataTypePtr> ParseBaseType() {
    const size_t at = tokens_.position();
    const std::string word(tokens_.TextOf(tokens_.Peek()));
    if (!tokens_.IsNameAt(at) || word.front() == '"') return tokens_.Error("a column type");
    const std::string name = Upper(word);
    tokens_.Reset(at + 1);

    if (name == "ARRAY" || name == "LIST") {
      RETURN_IF_ERROR(ExpectOpenAngle());
      auto array = std::make_shared<delta::DataType>();
      array->kind = delta::DataType::Kind::kArray;
      ASSIGN_OR_RETURN(array->element_type, ParseType());
      RETURN_IF_ERROR(ExpectCloseAngle());
      return delta::DataTypePtr(array);
    }
    if (name == "MAP") {
      auto map = std::make_shared<delta::DataType>();
      map->kind = delta::DataType::Kind::kMap;
      const bool spark_style = !tokens_.PeekSymbol("(");
      if (spark_style) {
        RETURN_IF_ERROR(ExpectOpenAngle());
      } else {
        tokens_.AcceptSymbol("(");
      }
      ASSIGN_OR_RETURN(map->key_type, ParseType());
      RETURN_IF_ERROR(tokens_.ExpectSymbol(","));
      ASSIGN_OR_RETURN(map->value_type, ParseType());
      if (spark_style) {
        RETURN_IF_ERROR(ExpectCloseAngle());
      } else {
        RETURN_IF_ERROR(tokens_.ExpectSymbol(")"));
      }
      return delta::DataTypePtr(map);
    }
    if (name == "STRUCT" || name == "ROW") {
      auto st = std::make_shared<delta::DataType>();
      st->kind = delta::DataType::Kind::kStruct;
      const bool spark_style = !tokens_.PeekSymbol("(");
      if (spark_style) {
        RETURN_IF_ERROR(ExpectOpenAngle());
      } else {
        tokens_.AcceptSymbol("(");
      }
      do {
        ASSIGN_OR_RETURN(delta::StructField field, StructField(spark_style));
        st->struct_type.fields.push_back(std::move(field));
      } while (pending_close_ == 0 && tokens_.AcceptSymbol(","));
      if (spark_style) {
        RETURN_IF_ERROR(ExpectCloseAngle());
      } else {
        RETURN_IF_ERROR(tokens_.ExpectSymbol(")"));
      }
      return delta::DataTypePtr(st);
    }
    if (name == "DECIMAL" || name == "NUMERIC" || name == "DEC") return Decimal();
    if (name == "VARCHAR" || name == "CHAR" || name == "CHARACTER" || name == "NVARCHAR") {
      tokens_.AcceptWords({"VARYING"});
      RETURN_IF_ERROR(TypeArguments().status());  // a length: Delta strings have none
      return Primitive("string");
    }
    if (name == "DOUBLE") {
      tokens_.AcceptWords({"PRECISION"});
      return Primitive("double");
    }
    if (name == "TIMESTAMP") {
      if (tokens_.AcceptWords({"WITH", "TIME", "ZONE"})) return Primitive("timestamp");
      if (tokens_.AcceptWords({"WITHOUT", "TIME", "ZONE"})) return Primitive("timestamp_ntz");
      return Primitive("timestamp");
    }
    static const std::pair<const char*, const char*> kNames[] = {
        {"BOOLEAN", "boolean"},
        {"BOOL", "boolean"},
        {"TINYINT", "byte"},
        {"BYTE", "byte"},
        {"INT1", "byte"},
        {"SMALLINT", "short"},
        {"SHORT", "short"},
        {"INT2", "short"},
        {"INT", "integer"},
        {"INTEGER", "integer"},
        {"INT4", "integer"},
        {"SIGNED", "integer"},
        {"BIGINT", "long"},
        {"LONG", "long"},
        {"INT8", "long"},
        {"FLOAT", "float"},
        {"REAL", "float"},
        {"FLOAT4", "float"},
        {"FLOAT8", "double"},
        {"STRING", "string"},
        {"TEXT", "string"},
        {"BINARY", "binary"},
        {"BLOB", "binary"},
        {"BYTEA", "binary"},
        {"VARBINARY", "binary"},
        {"DATE", "date"},
        {"TIMESTAMPTZ", "timestamp"},
        {"TIMESTAMP_LTZ", "timestamp"},
        {"TIMESTAMP_NTZ", "timestamp_ntz"},
        {"DATETIME", "timestamp_ntz"},
    };
    for (const auto& [spelling, delta_name] : kNames) {
      if (name == spelling) return Primitive(delta_name);
    }
    tokens_.Reset(at);
    return Status::InvalidArgument(
        "unknown column type '" + word +
        "'; Delta tables store BOOLEAN, TINYINT, SMALLINT, INT, BIGINT, FLOAT, DOUBLE, "
        "DECIMAL(p,s), STRING, BINARY, DATE, TIMESTAMP, TIMESTAMP_NTZ, ARRAY, MAP "
        "and STRUCT");
  }

  grammar::TokenStream& tokens_;
  int pending_close_ = 0;
};

}  // namespace

Result<delta::DataTypePtr> ParseColumnType(grammar::TokenStream& tokens) {
  return TypeParser(tokens).Parse();
}

std::string DeltaTypeName(const delta::DataType& type, TypeSpelling spelling) {
  const bool sql = spelling == TypeSpelling::kSql;
  const std::string comma = sql ? "," : ", ";
  switch (type.kind) {
    case delta::DataType::Kind::kArray:
      return "array<" + DeltaTypeName(*type.element_type, spelling) + ">";
    case delta::DataType::Kind::kMap:
      return "map<" + DeltaTypeName(*type.key_type, spelling) + comma +
             DeltaTypeName(*type.value_type, spelling) + ">";
    case delta::DataType::Kind::kStruct: {
      std::string out = "struct<";
      for (size_t i = 0; i < type.struct_type.fields.size(); i++) {
        const auto& field = type.struct_type.fields[i];
        out += (i ? comma : "") + field.name + (sql ? ":" : ": ") + DeltaTypeName(*field.type, spelling);
      }
      return out + ">";
    }
    case delta::DataType::Kind::kPrimitive:
      break;
  }
  if (type.primitive == "decimal") {
    return "decimal(" + std::to_string(type.precision) + "," + std::to_string(type.scale) + ")";
  }
  if (!sql) return type.primitive;
  if (type.primitive == "long") return "bigint";
  if (type.primitive == "integer") return "int";
  if (type.primitive == "short") return "smallint";
  if (type.primitive == "byte") return "tinyint";
  return type.primitive;
}

}  // namespace basin::sql
