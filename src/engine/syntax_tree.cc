#include "engine/syntax_tree.h"

#include "common/strings.h"

namespace basin::engine::tree {

const json& Field(const json& node, std::string_view key) {
  static const json kNone;
  if (!node.is_object()) return kNone;
  auto it = node.find(key);
  return it == node.end() ? kNone : *it;
}

std::string Text(const json& node, std::string_view key) {
  const json& text = Field(node, key);
  return text.is_string() ? text.get<std::string>() : std::string();
}

std::string ColumnName(const json& node) {
  const json& names = Field(node, "column_names");
  if (Text(node, "class") != "COLUMN_REF" || !names.is_array() || names.empty() ||
      !names.back().is_string()) {
    return "";
  }
  return names.back().get<std::string>();
}

Result<json> Serialize(Connection& conn, const std::string& sql) {
  ASSIGN_OR_RETURN(QueryResult parsed, conn.Query("SELECT json_serialize_sql(" + QuoteLiteral(sql) + ")"));
  json tree = json::parse(parsed.at(0, 0).value_or("{}"), nullptr, /*allow_exceptions=*/false);
  if (tree.is_discarded() || !tree.is_object()) {
    return Status::InvalidArgument("DuckDB gave no syntax tree for: " + sql);
  }
  if (tree.value("error", true) || !Field(tree, "statements").is_array()) {
    return Status::InvalidArgument(Text(tree, "error_message").empty() ? "DuckDB cannot parse: " + sql
                                                                       : Text(tree, "error_message"));
  }
  return tree;
}

Result<std::string> Deserialize(Connection& conn, const json& tree) {
  ASSIGN_OR_RETURN(QueryResult sql,
                   conn.Query("SELECT json_deserialize_sql(" + QuoteLiteral(tree.dump()) + "::JSON)"));
  return sql.at(0, 0).value_or("");
}

namespace {

// `node` without what does not change its meaning: aliases and places in the text.
json Bare(const json& node) {
  if (node.is_array()) {
    json out = json::array();
    for (const json& element : node) out.push_back(Bare(element));
    return out;
  }
  if (!node.is_object()) return node;
  json out = json::object();
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (it.key() == "alias" || it.key() == "query_location") continue;
    out[it.key()] = Bare(it.value());
  }
  return out;
}

}  // namespace

bool SameExpression(const json& a, const json& b) { return Bare(a) == Bare(b); }

}  // namespace basin::engine::tree
