#include "commands/partition_predicate.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string_view>

#include "common/strings.h"
#include "engine/scan.h"

namespace basin::commands {

namespace {

using engine::QuoteIdentifier;
using engine::QuoteLiteral;
using nlohmann::json;

// DuckDB functions whose value differs between rows with equal arguments.
bool IsVolatile(const std::string& function) {
  static constexpr std::array<std::string_view, 8> kVolatile = {
      "random", "gen_random_uuid", "uuid", "uuidv4", "uuidv7", "nextval", "currval", "setseed"};
  const std::string name = AsciiLower(function);
  return std::find(kVolatile.begin(), kVolatile.end(), name) != kVolatile.end();
}

bool IsPartitionColumn(const delta::Snapshot& snapshot, const std::string& name) {
  const delta::StructField* field = snapshot.schema.Find(name);
  return field != nullptr &&
         std::any_of(snapshot.metadata.partition_columns.begin(), snapshot.metadata.partition_columns.end(),
                     [&](const std::string& p) { return snapshot.schema.Find(p) == field; });
}

}  // namespace

json ExpressionTree(engine::Connection& conn, const std::string& expression) {
  auto r = conn.Query("SELECT json_serialize_sql(" + QuoteLiteral("SELECT 1 WHERE " + expression) + ")");
  if (!r.ok() || r->row_count() != 1 || !r->at(0, 0)) return nullptr;
  json tree = json::parse(*r->at(0, 0), nullptr, false);
  if (tree.is_discarded() || !tree.is_object() || tree.value("error", true) != false) return nullptr;
  const json& statements = tree["statements"];
  if (!statements.is_array() || statements.size() != 1) return nullptr;
  const json& node = statements[0]["node"];
  return node.is_object() && node.contains("where_clause") ? node["where_clause"] : json(nullptr);
}

bool DecidedByPartitionValues(const json& tree, const delta::Snapshot& snapshot,
                              const engine::PredicateScope& scope) {
  if (tree.is_array()) {
    return std::all_of(tree.begin(), tree.end(),
                       [&](const json& child) { return DecidedByPartitionValues(child, snapshot, scope); });
  }
  if (!tree.is_object()) return true;
  const std::string node_class = tree.value("class", "");
  if (node_class == "SUBQUERY") return false;
  if (node_class == "FUNCTION" && IsVolatile(tree.value("function_name", ""))) return false;
  if (node_class == "COLUMN_REF") {
    const json& names = tree["column_names"];
    if (!names.is_array() || names.empty() || names.size() > 2 ||
        !std::all_of(names.begin(), names.end(), [](const json& n) { return n.is_string(); })) {
      return false;
    }
    if (names.size() == 2) {
      const std::string qualifier = AsciiLower(names[0].get<std::string>());
      if (std::none_of(scope.qualifiers.begin(), scope.qualifiers.end(),
                       [&](const std::string& q) { return AsciiLower(q) == qualifier; })) {
        return false;
      }
    }
    return IsPartitionColumn(snapshot, names.back().get<std::string>());
  }
  for (const auto& [key, child] : tree.items()) {
    if (!DecidedByPartitionValues(child, snapshot, scope)) return false;
  }
  return true;
}

Result<std::vector<size_t>> FilesWherePartitionsSatisfy(engine::Connection& conn,
                                                        const delta::Snapshot& snapshot,
                                                        const std::vector<size_t>& files,
                                                        const std::string& predicate,
                                                        const std::string& alias) {
  std::vector<size_t> satisfied;
  if (files.empty()) return satisfied;
  const bool mapped = delta::ColumnMappingEnabled(snapshot.metadata);
  std::vector<const delta::StructField*> columns;
  for (const std::string& name : snapshot.metadata.partition_columns) {
    const delta::StructField* field = snapshot.schema.Find(name);
    if (field == nullptr) {
      return Status::Corruption("table " + snapshot.table_root + " version " +
                                std::to_string(snapshot.version) + ": partition column '" + name +
                                "' is not in the schema");
    }
    columns.push_back(field);
  }
  std::string rows;
  for (size_t index : files) {
    rows += (rows.empty() ? "(" : ", (") + std::to_string(index);
    const delta::PartitionValues& values = snapshot.files[index].partition_values;
    for (const delta::StructField* field : columns) {
      // Keyed by physical name under column mapping, else by name (case-insensitively, as Spark).
      const std::string key = AsciiLower(mapped ? field->PhysicalName() : field->name);
      std::optional<std::string> value;
      for (const auto& [name, v] : values) {
        if (AsciiLower(name) == key) value = v;
      }
      rows += ", " + engine::PartitionValueSql(*field->type, value);
    }
    rows += ")";
  }
  std::string names = "__basin_file_index";
  for (const delta::StructField* field : columns) names += ", " + QuoteIdentifier(field->name);
  ASSIGN_OR_RETURN(
      engine::QueryResult result,
      conn.Query("SELECT __basin_file_index FROM (VALUES " + rows + ") AS " + QuoteIdentifier(alias) + "(" +
                 names + ") WHERE COALESCE((" + predicate + "), FALSE) ORDER BY 1"));
  for (const auto& row : result.rows) satisfied.push_back(std::stoull(row[0].value_or("0")));
  return satisfied;
}

}  // namespace basin::commands
