// The pieces several table statements share: property lists, name lists, column
// definitions, constraints, time travel (rules.h).
#include "common/strings.h"
#include "sql/grammar/rules.h"
#include "sql/grammar/slots.h"
#include "sql/type_names.h"

namespace basin::sql::grammar {

Result<std::map<std::string, std::string>> PropertyList(TokenStream& tokens, bool with_values) {
  std::map<std::string, std::string> out;
  RETURN_IF_ERROR(tokens.ExpectSymbol("("));
  do {
    std::string key;
    if (!tokens.AtEnd() && tokens.Peek().kind == engine::SqlTokenKind::kString) {
      ASSIGN_OR_RETURN(key, tokens.StringLiteral("a property name"));
    } else {
      ASSIGN_OR_RETURN(std::vector<std::string> parts, tokens.QualifiedName("a property name"));
      key = JoinName(parts);
    }
    std::string value;
    if (with_values) {
      tokens.AcceptSymbol("=");
      ASSIGN_OR_RETURN(value, tokens.LiteralValue("a property value"));
    }
    if (out.count(key)) return Status::InvalidArgument("table property " + key + " is given twice");
    out[key] = value;
  } while (tokens.AcceptSymbol(","));
  RETURN_IF_ERROR(tokens.ExpectSymbol(")"));
  return out;
}

Result<std::vector<std::string>> NameList(TokenStream& tokens, std::string_view what) {
  RETURN_IF_ERROR(tokens.ExpectSymbol("("));
  std::vector<std::string> out;
  do {
    ASSIGN_OR_RETURN(std::string name, tokens.Name(what));
    out.push_back(std::move(name));
  } while (tokens.AcceptSymbol(","));
  RETURN_IF_ERROR(tokens.ExpectSymbol(")"));
  return out;
}

Result<std::vector<std::string>> OptionallyParenthesizedNames(TokenStream& tokens, std::string_view what) {
  if (tokens.PeekSymbol("(")) return NameList(tokens, what);
  std::vector<std::string> out;
  do {
    ASSIGN_OR_RETURN(std::string name, tokens.Name(what));
    out.push_back(std::move(name));
  } while (tokens.AcceptSymbol(","));
  return out;
}

Result<ColumnDefinition> ParseColumnDefinition(TokenStream& tokens, bool type_optional) {
  ColumnDefinition out;
  delta::StructField& field = out.field;
  ASSIGN_OR_RETURN(field.name, tokens.Name("a column name"));
  const bool typeless =
      type_optional && (tokens.AtEnd() || tokens.PeekSymbol(",") || tokens.PeekSymbol(")") ||
                        tokens.PeekWords({"COMMENT"}) || tokens.PeekWords({"NOT", "NULL"}));
  if (!typeless) {
    ASSIGN_OR_RETURN(field.type, ParseColumnType(tokens));
  }
  for (;;) {
    if (tokens.AcceptWords({"NOT", "NULL"})) {
      field.nullable = false;
    } else if (tokens.AcceptWords({"NULL"})) {
      field.nullable = true;
    } else if (tokens.AcceptWords({"GENERATED", "ALWAYS", "AS"}) || tokens.AcceptWords({"AS"})) {
      ASSIGN_OR_RETURN(std::string expr, ParenthesizedExpression(tokens, "a generation expression"));
      field.metadata["delta.generationExpression"] = expr;
      // DuckDB's spelling may say how the value is kept; Delta always stores it.
      tokens.AcceptWords({"STORED"});
    } else if (tokens.AcceptWords({"COMMENT"})) {
      ASSIGN_OR_RETURN(std::string comment, tokens.StringLiteral("a comment string"));
      field.metadata["comment"] = comment;
    } else if (tokens.PeekWords({"DEFAULT"}) || tokens.PeekWords({"PRIMARY", "KEY"}) ||
               tokens.PeekWords({"UNIQUE"}) || tokens.PeekWords({"REFERENCES"})) {
      const std::string option = AsciiLower(std::string(tokens.TextOf(tokens.Peek())));
      out.unsupported = Status::NotImplemented("column " + field.name + ": " + option +
                                               " is not supported on Delta tables (NOT NULL, GENERATED "
                                               "ALWAYS AS (...), COMMENT and CONSTRAINT ... "
                                               "CHECK are)");
      // Read past it so the rest of the statement still parses (DuckDB may run it).
      tokens.Reset(tokens.position() + 1);
      if (option == "default") {
        const SlotEnds before_option = BeforeWords({{"NOT", "NULL"},
                                                    {"NULL"},
                                                    {"GENERATED"},
                                                    {"COMMENT"},
                                                    {"PRIMARY"},
                                                    {"UNIQUE"},
                                                    {"REFERENCES"},
                                                    {"CHECK"},
                                                    {"AS"}});
        auto ends = [&](const TokenStream& t, size_t i) {
          return t.IsSymbolAt(i, ",") || before_option(t, i);
        };
        RETURN_IF_ERROR(ReadSlot(tokens, engine::SqlSlot::kExpression, "a default value", ends,
                                 [] { return Status::OK(); }));
      } else if (option == "primary") {
        tokens.AcceptWords({"KEY"});
      } else if (option == "references") {
        RETURN_IF_ERROR(tokens.QualifiedName("a table name"));
        if (tokens.PeekSymbol("(")) RETURN_IF_ERROR(NameList(tokens, "a column name"));
      }
    } else {
      return out;
    }
  }
}

Result<TableElements> ParseTableElements(TokenStream& tokens, bool pipeline_table) {
  TableElements out;
  RETURN_IF_ERROR(tokens.ExpectSymbol("("));
  do {
    if (tokens.AcceptWords({"CONSTRAINT"})) {
      ASSIGN_OR_RETURN(std::string name, tokens.Name("a constraint name"));
      if (pipeline_table && tokens.AcceptWords({"EXPECT"})) {
        Expectation expectation;
        expectation.name = name;
        ASSIGN_OR_RETURN(expectation.condition, ParenthesizedExpression(tokens, "an expectation"));
        if (tokens.AcceptWords({"ON", "VIOLATION"})) {
          if (tokens.AcceptWords({"DROP", "ROW"})) {
            expectation.on_violation = Expectation::OnViolation::kDropRow;
          } else if (tokens.AcceptWords({"FAIL", "UPDATE"})) {
            expectation.on_violation = Expectation::OnViolation::kFailUpdate;
          } else if (tokens.AcceptWords({"QUARANTINE"})) {
            expectation.on_violation = Expectation::OnViolation::kQuarantine;
          } else {
            return tokens.Error("DROP ROW, FAIL UPDATE or QUARANTINE");
          }
        }
        out.expectations.push_back(std::move(expectation));
        continue;
      }
      RETURN_IF_ERROR(tokens.ExpectWords({"CHECK"}));
      ASSIGN_OR_RETURN(std::string expr, ParenthesizedExpression(tokens, "a CHECK expression"));
      if (!out.checks.emplace(AsciiLower(name), expr).second) {
        return Status::InvalidArgument("CHECK constraint " + name + " is given twice");
      }
    } else if (tokens.PeekWords({"CHECK"})) {
      return tokens.Error("a named constraint: CONSTRAINT name CHECK (...)");
    } else if (tokens.PeekWords({"PRIMARY", "KEY"}) || tokens.PeekWords({"UNIQUE"}) ||
               tokens.PeekWords({"FOREIGN", "KEY"})) {
      return Status::NotImplemented(AsciiLower(std::string(tokens.TextOf(tokens.Peek()))) +
                                    " keys are not supported on Delta tables");
    } else {
      ASSIGN_OR_RETURN(ColumnDefinition column, ParseColumnDefinition(tokens, pipeline_table));
      if (out.unsupported.ok()) out.unsupported = column.unsupported;
      out.columns.push_back(std::move(column.field));
    }
  } while (tokens.AcceptSymbol(","));
  RETURN_IF_ERROR(tokens.ExpectSymbol(")"));
  return out;
}

Result<TableClauses> ParseTableClauses(TokenStream& tokens, bool warehouse_table) {
  TableClauses out;
  for (;;) {
    if (warehouse_table && tokens.AcceptWords({"USING"})) {
      ASSIGN_OR_RETURN(std::string format, tokens.Name("a table format"));
      if (AsciiLower(format) != "delta") {
        return Status::InvalidArgument("Basin creates Delta tables only, not USING " + format);
      }
    } else if (warehouse_table && tokens.AcceptWords({"LOCATION"})) {
      ASSIGN_OR_RETURN(out.location, tokens.StringLiteral("a location string"));
    } else if (tokens.AcceptWords({"PARTITIONED", "BY"})) {
      ASSIGN_OR_RETURN(out.partition_columns, NameList(tokens, "a partition column"));
    } else if (tokens.AcceptWords({"TBLPROPERTIES"})) {
      ASSIGN_OR_RETURN(auto properties, PropertyList(tokens, true));
      for (auto& [key, value] : properties) {
        if (!out.properties.emplace(key, value).second) {
          return Status::InvalidArgument("table property " + key + " is given twice");
        }
      }
    } else if (tokens.AcceptWords({"COMMENT"})) {
      ASSIGN_OR_RETURN(out.comment, tokens.StringLiteral("a comment string"));
    } else {
      return out;
    }
  }
}

Result<TimeTravel> ParseTimeTravel(TokenStream& tokens) {
  TimeTravel out;
  if (tokens.AcceptWords({"VERSION", "AS", "OF"})) {
    ASSIGN_OR_RETURN(out.version, tokens.Integer("a version number"));
  } else if (tokens.AcceptWords({"TIMESTAMP", "AS", "OF"})) {
    ASSIGN_OR_RETURN(out.timestamp, tokens.StringLiteral("a timestamp string"));
  }
  return out;
}

}  // namespace basin::sql::grammar
