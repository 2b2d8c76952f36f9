// MERGE INTO: one DuckDB query joins the source with the candidate target rows, picks for
// each joined row the first clause of its kind whose condition holds, and computes the new
// values; the result becomes the change table that dml::ApplyChanges applies.
#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "commands/dml.h"
#include "commands/dml_internal.h"
#include "commands/partition_predicate.h"
#include "commands/table_features.h"
#include "common/strings.h"
#include "engine/parquet_writer.h"

namespace basin::commands {

namespace {

using engine::QuoteIdentifier;
using engine::QuoteLiteral;
using nlohmann::json;
using Kind = MergeClause::Kind;

constexpr const char* kSourceRowColumn = "__basin_source_row";
constexpr const char* kClauseColumn = "__basin_clause";

bool IsMatched(Kind kind) { return kind == Kind::kMatchedUpdate || kind == Kind::kMatchedDelete; }
bool IsBySource(Kind kind) {
  return kind == Kind::kNotMatchedBySourceUpdate || kind == Kind::kNotMatchedBySourceDelete;
}
bool IsUpdate(Kind kind) { return kind == Kind::kMatchedUpdate || kind == Kind::kNotMatchedBySourceUpdate; }
bool IsDelete(Kind kind) { return kind == Kind::kMatchedDelete || kind == Kind::kNotMatchedBySourceDelete; }

const char* ActionOf(Kind kind) {
  if (IsUpdate(kind)) return "update";
  if (IsDelete(kind)) return "delete";
  return "insert";
}

// The merge as the query sees it: aliases, the source's columns, and per clause the
// value of every target column it sets.
struct MergePlan {
  std::string target;  // quoted alias of the target rows
  std::string source;  // quoted alias of the source rows
  std::string target_name, source_name;
  std::map<std::string, std::string> source_columns;  // lower-case -> as the source names it
  // Per clause: column (schema name) -> value expression; absent columns keep their old
  // value (updates) or are NULL (inserts). Generated columns not set are recomputed when
  // stored; set ones must equal their expression (dml::CheckGeneratedAssignments).
  std::vector<std::map<std::string, std::string>> values;
};

std::optional<std::string> SourceColumn(const MergePlan& plan, const std::string& name) {
  auto it = plan.source_columns.find(AsciiLower(name));
  if (it == plan.source_columns.end()) return std::nullopt;
  return it->second;
}

// MERGE WITH SCHEMA EVOLUTION: source columns that UPDATE SET * / INSERT * would carry, or
// that a clause assigns by name, and the target lacks, are added at the end (nullable).
Status EvolveSchema(engine::Connection& conn, const std::string& source_table, const MergeRequest& request,
                    dml::DmlTable& table) {
  ASSIGN_OR_RETURN(delta::StructType source_schema,
                   engine::InferDeltaSchema(conn, "SELECT * FROM " + source_table));
  bool star = std::any_of(request.clauses.begin(), request.clauses.end(),
                          [](const MergeClause& c) { return c.star; });
  std::set<std::string> named;
  for (const MergeClause& clause : request.clauses) {
    for (const auto& [column, value] : clause.assignments) named.insert(AsciiLower(column));
    for (const std::string& column : clause.insert_columns) named.insert(AsciiLower(column));
  }
  delta::StructType schema = table.target.schema;
  bool changed = false;
  for (const delta::StructField& field : source_schema.fields) {
    if (schema.Find(field.name) != nullptr || (!star && named.count(AsciiLower(field.name)) == 0)) continue;
    delta::StructField added = field;
    added.nullable = true;
    added.metadata = json::object();
    schema.fields.push_back(std::move(added));
    changed = true;
  }
  if (!changed) return Status::OK();
  delta::Metadata metadata = table.target.metadata;
  AssignColumnMapping(schema, metadata.configuration);
  metadata.schema_string = delta::SchemaToJson(schema).dump();
  ASSIGN_OR_RETURN(delta::Protocol protocol, RequiredProtocol(metadata, schema, table.target.protocol));
  table.target.schema = schema;
  table.target.metadata = metadata;
  table.target.protocol = protocol;
  table.new_metadata = std::move(metadata);
  table.new_protocol = std::move(protocol);
  return Status::OK();
}

// What each clause sets, checked against the (possibly evolved) schema and the source.
Status ResolveClauses(const MergeRequest& request, const dml::DmlTable& table, MergePlan& plan) {
  const delta::StructType& schema = table.target.schema;
  const std::string where = "MERGE into " + table.where;
  for (const MergeClause& clause : request.clauses) {
    std::map<std::string, std::string> values;
    auto set = [&](const std::string& column, const std::string& value) -> Status {
      const delta::StructField* field = schema.Find(column);
      if (field == nullptr) return Status::InvalidArgument(where + ": no column named '" + column + "'");
      if (!values.emplace(field->name, "(" + value + ")").second) {
        return Status::InvalidArgument(where + ": column '" + field->name +
                                       "' is set more than once in a clause");
      }
      return Status::OK();
    };
    if (clause.star) {
      if (clause.kind != Kind::kMatchedUpdate && clause.kind != Kind::kNotMatchedInsert) {
        return Status::InvalidArgument(where +
                                       ": only WHEN MATCHED ... UPDATE SET * and WHEN NOT MATCHED ... "
                                       "INSERT * take '*'");
      }
      for (const delta::StructField& field : schema.fields) {
        std::optional<std::string> source = SourceColumn(plan, field.name);
        if (source) {
          RETURN_IF_ERROR(set(field.name, plan.source + "." + QuoteIdentifier(*source)));
        } else if (!request.schema_evolution && !field.GenerationExpression()) {
          return Status::InvalidArgument(where + ": the source has no column '" + field.name + "' for " +
                                         (clause.kind == Kind::kMatchedUpdate ? "UPDATE SET *" : "INSERT *"));
        }
      }
    } else if (clause.kind == Kind::kNotMatchedInsert) {
      if (clause.insert_columns.size() != clause.insert_values.size()) {
        return Status::InvalidArgument(where + ": INSERT names " +
                                       std::to_string(clause.insert_columns.size()) + " columns but gives " +
                                       std::to_string(clause.insert_values.size()) + " values");
      }
      for (size_t i = 0; i < clause.insert_columns.size(); i++) {
        RETURN_IF_ERROR(set(clause.insert_columns[i], clause.insert_values[i]));
      }
    } else if (IsUpdate(clause.kind)) {
      if (clause.assignments.empty())
        return Status::InvalidArgument(where + ": UPDATE SET needs an assignment");
      for (const auto& [column, value] : clause.assignments) RETURN_IF_ERROR(set(column, value));
    }
    plan.values.push_back(std::move(values));
  }
  return Status::OK();
}

// Which side of the join a column reference belongs to: 't', 's' or '?'.
char SideOf(const MergePlan& plan, const dml::DmlTable& table, const json& node) {
  if (!node.is_object() || node.value("class", "") != "COLUMN_REF") return '?';
  const json& names = node["column_names"];
  if (!names.is_array() || names.empty() || !names[0].is_string()) return '?';
  std::string first = names[0].get<std::string>();
  if (names.size() >= 2 && AsciiLower(first) == AsciiLower(plan.target_name)) return 't';
  if (names.size() >= 2 && AsciiLower(first) == AsciiLower(plan.source_name)) return 's';
  bool in_target = table.snapshot->schema.Find(first) != nullptr;
  bool in_source = SourceColumn(plan, first).has_value();
  if (in_target && !in_source) return 't';
  if (in_source && !in_target) return 's';
  return '?';
}

std::string ColumnRefSql(const json& node) {
  std::string out;
  for (const json& name : node["column_names"]) {
    out += (out.empty() ? "" : ".") + QuoteIdentifier(name.get<std::string>());
  }
  return out;
}

void Conjuncts(const json& node, std::vector<const json*>& out) {
  if (node.is_object() && node.value("type", "") == "CONJUNCTION_AND" && node.contains("children")) {
    for (const json& child : node["children"]) Conjuncts(child, out);
    return;
  }
  out.push_back(&node);
}

// For each ON conjunct `target_col = source_col`, the target column must lie within the
// source column's [min, max] for a row to match: a predicate that prunes target files.
// Sets `no_match` when a key column has no non-null source value (nothing can match).
Result<std::vector<std::string>> KeyRanges(engine::Connection& conn, const MergePlan& plan,
                                           const dml::DmlTable& table, const json& on_tree,
                                           const std::string& source_table, bool& no_match) {
  static const std::vector<std::string> kNumberTypes = {"TINYINT", "SMALLINT", "INTEGER", "BIGINT",
                                                        "DECIMAL", "FLOAT",    "DOUBLE"};
  std::vector<const json*> conjuncts;
  Conjuncts(on_tree, conjuncts);
  std::vector<std::string> ranges;
  for (const json* conjunct : conjuncts) {
    if (conjunct->value("type", "") != "COMPARE_EQUAL" || !conjunct->contains("left")) continue;
    const json* target = &(*conjunct)["left"];
    const json* source = &(*conjunct)["right"];
    if (SideOf(plan, table, *target) == 's') std::swap(target, source);
    if (SideOf(plan, table, *target) != 't' || SideOf(plan, table, *source) != 's') continue;
    const std::string key = ColumnRefSql(*source);
    ASSIGN_OR_RETURN(
        engine::QueryResult bounds,
        conn.Query("SELECT CAST(min(" + key + ") AS VARCHAR), CAST(max(" + key +
                   ") AS VARCHAR), typeof(min(" + key + ")) FROM " + source_table + " AS " + plan.source));
    const auto& low = bounds.at(0, 0);
    const auto& high = bounds.at(0, 1);
    if (!low || !high) {
      no_match = true;
      return ranges;
    }
    // Constants as the skipping evaluator compares them: bare numbers and strings, typed
    // strings for dates and timestamps.
    const std::string type = bounds.at(0, 2).value_or("");
    auto literal = [&](const std::string& text) -> std::optional<std::string> {
      if (type == "VARCHAR") return QuoteLiteral(text);
      if (type == "DATE" || type.rfind("TIMESTAMP", 0) == 0)
        return "CAST(" + QuoteLiteral(text) + " AS " + type + ")";
      bool number = std::any_of(kNumberTypes.begin(), kNumberTypes.end(),
                                [&](const std::string& t) { return type.rfind(t, 0) == 0; });
      if (!number || text.find_first_not_of("0123456789.-+e") != std::string::npos) return std::nullopt;
      return text;
    };
    std::optional<std::string> lower = literal(*low), upper = literal(*high);
    if (!lower || !upper) continue;
    ranges.push_back(ColumnRefSql(*target) + " BETWEEN " + *lower + " AND " + *upper);
  }
  return ranges;
}

// operationParameters as Delta writes them: clause lists as JSON text.
json OperationParameters(const MergeRequest& request) {
  json matched = json::array(), not_matched = json::array(), by_source = json::array();
  for (const MergeClause& clause : request.clauses) {
    json entry = {{"actionType", std::string(ActionOf(clause.kind)) + (clause.star ? "*" : "")}};
    if (!clause.condition.empty()) entry["predicate"] = clause.condition;
    if (IsMatched(clause.kind)) {
      matched.push_back(entry);
    } else if (IsBySource(clause.kind)) {
      by_source.push_back(entry);
    } else {
      not_matched.push_back(entry);
    }
  }
  return json{{"predicate", request.on},
              {"matchedPredicates", matched.dump()},
              {"notMatchedPredicates", not_matched.dump()},
              {"notMatchedBySourcePredicates", by_source.dump()}};
}

// The generated columns the clauses set, with the change table rows of those clauses.
dml::GeneratedAssignments GeneratedAssignments(const dml::DmlTable& table, const MergePlan& plan) {
  dml::GeneratedAssignments assigned;
  for (const delta::StructField& field : table.target.schema.fields) {
    if (!field.GenerationExpression()) continue;
    std::string clauses;
    for (size_t i = 0; i < plan.values.size(); i++) {
      if (plan.values[i].count(field.name) > 0) clauses += (clauses.empty() ? "" : ", ") + std::to_string(i);
    }
    if (!clauses.empty()) assigned[field.name] = QuoteIdentifier(kClauseColumn) + " IN (" + clauses + ")";
  }
  return assigned;
}

// The query computing, per joined row, the clause that applies and the new values.
std::string ChangesSql(const MergeRequest& request, const dml::DmlTable& table, const MergePlan& plan,
                       const std::string& target_scan, const std::string& source_table) {
  const std::string file = QuoteIdentifier(engine::kScanFileColumn);
  const std::string row = QuoteIdentifier(engine::kScanRowIndexColumn);
  const std::string clause_column = QuoteIdentifier(kClauseColumn);
  const std::string target_present = plan.target + "." + row + " IS NOT NULL";
  const std::string source_present = plan.source + "." + QuoteIdentifier(kSourceRowColumn) + " IS NOT NULL";

  bool inserts = false, by_source = false;
  // The first clause whose guard holds applies. Each value repeats the guards in order
  // rather than reading the picked clause back by its alias: DuckDB refuses a select-list
  // alias inside expressions that hold subqueries, and a lateral subquery cannot hold the
  // lambdas a condition may use.
  std::vector<std::string> guards;
  std::string pick = "CASE";
  std::string action = "CASE " + clause_column;
  for (size_t i = 0; i < request.clauses.size(); i++) {
    const MergeClause& clause = request.clauses[i];
    std::string guard = IsMatched(clause.kind)    ? target_present + " AND " + source_present
                        : IsBySource(clause.kind) ? target_present + " AND NOT (" + source_present + ")"
                                                  : source_present + " AND NOT (" + target_present + ")";
    inserts |= clause.kind == Kind::kNotMatchedInsert;
    by_source |= IsBySource(clause.kind);
    if (!clause.condition.empty()) guard += " AND (" + clause.condition + ")";
    pick += " WHEN " + guard + " THEN " + std::to_string(i);
    action += " WHEN " + std::to_string(i) + " THEN '" + ActionOf(clause.kind) + "'";
    guards.push_back(std::move(guard));
  }
  pick += " END";
  action += " END";

  std::string inner = "SELECT " + plan.target + "." + file + " AS " + file + ", " + plan.target + "." + row +
                      " AS " + row + ", " + pick + " AS " + clause_column;
  for (const delta::StructField& field : table.target.schema.fields) {
    const std::string column = QuoteIdentifier(field.name);
    const bool old_column = table.snapshot->schema.Find(field.name) != nullptr;
    std::string value = "CASE";
    bool any = false;
    for (size_t i = 0; i < request.clauses.size(); i++) {
      const MergeClause& clause = request.clauses[i];
      std::string chosen = "NULL";  // deleted rows: the value is never stored
      auto it = plan.values[i].find(field.name);
      if (it != plan.values[i].end()) {
        chosen = it->second;
        any = true;
      } else if (IsUpdate(clause.kind) && old_column) {
        chosen = plan.target + "." + column;
        any = true;
      }
      value += " WHEN " + guards[i] + " THEN " + chosen;
    }
    value += " END";
    if (!any) value = "CAST(NULL AS " + field.type->ToDuckDBType() + ")";
    inner += ", " + value + " AS " + column;
  }

  const char* join = inserts && by_source ? "FULL OUTER JOIN"
                     : inserts            ? "RIGHT OUTER JOIN"
                     : by_source          ? "LEFT OUTER JOIN"
                                          : "JOIN";
  inner += " FROM (" + target_scan + ") AS " + plan.target + " " + join + " (SELECT *, true AS " +
           QuoteIdentifier(kSourceRowColumn) + " FROM " + source_table + ") AS " + plan.source + " ON (" +
           request.on + ")";
  // The clause is picked in the inner level; the outer one names its action.
  return "SELECT *, " + action + " AS " + QuoteIdentifier(dml::kActionColumn) + " FROM (" + inner +
         ") AS __basin_joined WHERE " + clause_column + " IS NOT NULL";
}

// A target row matched by several source rows may not be updated or deleted (which source
// row would win is undefined), except by a lone unconditional WHEN MATCHED THEN DELETE,
// where deleting it once is unambiguous.
Status CheckSingleMatches(engine::Connection& conn, const MergeRequest& request, const dml::DmlTable& table,
                          const engine::ScanPlan& scan, const std::string& changes) {
  const std::string file = QuoteIdentifier(engine::kScanFileColumn);
  const std::string row = QuoteIdentifier(engine::kScanRowIndexColumn);
  ASSIGN_OR_RETURN(engine::QueryResult duplicate,
                   conn.Query("SELECT " + file + ", " + row + ", count(*) FROM " + changes + " WHERE " +
                              file + " IS NOT NULL GROUP BY ALL HAVING count(*) > 1 LIMIT 1"));
  if (duplicate.row_count() == 0) return Status::OK();
  std::vector<const MergeClause*> matched;
  for (const MergeClause& clause : request.clauses) {
    if (IsMatched(clause.kind)) matched.push_back(&clause);
  }
  if (matched.size() == 1 && matched[0]->kind == Kind::kMatchedDelete && matched[0]->condition.empty()) {
    return conn.Execute("DELETE FROM " + changes + " WHERE " + file +
                        " IS NOT NULL AND rowid NOT IN (SELECT min(rowid) FROM " + changes + " WHERE " +
                        file + " IS NOT NULL GROUP BY " + file + ", " + row + ")");
  }
  std::string path = duplicate.at(0, 0).value_or("");
  auto it = scan.file_index_by_path.find(path);
  if (it != scan.file_index_by_path.end()) path = table.snapshot->files[it->second].path;
  return Status::InvalidArgument(
      "MERGE into " + table.where + ": target row " + duplicate.at(0, 1).value_or("") + " of file " + path +
      " matched " + duplicate.at(0, 2).value_or("") +
      " source rows, and a MATCHED clause would update or delete it more than once; "
      "make the source rows unique per target row");
}

// With ctx.set_aside_refused: the updates and inserts of `changes` that the table's NOT NULL
// and CHECK constraints refuse go to it, then leave `changes`, so an update refused leaves
// its target row as it was and an insert refused adds nothing.
Status SetAsideRefusedChanges(const CommandContext& ctx, const dml::DmlTable& table,
                              const std::string& changes) {
  const std::string refused = RefusedCondition(table.target);
  if (!ctx.set_aside_refused || refused.empty()) return Status::OK();
  const std::string written = QuoteIdentifier(dml::kActionColumn) + " IN ('update', 'insert')";
  const delta::StructType& schema = table.target.schema;
  RETURN_IF_ERROR(ctx.set_aside_refused(
      RefusedRowsSql(table.target, "SELECT " + dml::ColumnsFrom(schema, schema, "__basin_c") + " FROM " +
                                       changes + " AS __basin_c WHERE " + written)));
  return ctx.conn->Execute("DELETE FROM " + changes + " WHERE " + written + " AND (" + refused + ")");
}

}  // namespace

Result<CommandResult> Merge(const CommandContext& ctx, std::shared_ptr<const delta::Snapshot> snapshot,
                            const MergeRequest& request) {
  if (request.clauses.empty()) return Status::InvalidArgument("MERGE needs at least one WHEN clause");
  if (request.on.empty()) return Status::InvalidArgument("MERGE needs an ON condition");
  if (auto skipped = dml::AlreadyCommitted(ctx, *snapshot)) return *skipped;
  const bool changes_rows =
      std::any_of(request.clauses.begin(), request.clauses.end(),
                  [](const MergeClause& c) { return c.kind != Kind::kNotMatchedInsert; });
  ASSIGN_OR_RETURN(dml::DmlTable table,
                   dml::OpenDmlTable(ctx, std::move(snapshot), request.mode, "MERGE", changes_rows));
  engine::Connection& conn = *ctx.conn;
  dml::TempTables temps(conn);

  // The source is read once: its rows feed pruning, the join and the metrics alike.
  const std::string source_table = temps.NewTable("source");
  RETURN_IF_ERROR_CTX(
      conn.Execute("CREATE TEMP TABLE " + source_table + " AS SELECT * FROM (" + request.source_sql + ")"),
      "MERGE into " + table.where + ": reading the source");
  MergePlan plan;
  plan.target_name = request.target_alias.empty() ? "__basin_target" : request.target_alias;
  plan.source_name = request.source_alias.empty() ? "__basin_source" : request.source_alias;
  plan.target = QuoteIdentifier(plan.target_name);
  plan.source = QuoteIdentifier(plan.source_name);
  ASSIGN_OR_RETURN(std::vector<engine::ColumnType> source_columns,
                   conn.DescribeQuery("SELECT * FROM " + source_table));
  for (const engine::ColumnType& column : source_columns)
    plan.source_columns.emplace(AsciiLower(column.name), column.name);
  if (request.schema_evolution) RETURN_IF_ERROR(EvolveSchema(conn, source_table, request, table));
  RETURN_IF_ERROR(ResolveClauses(request, table, plan));

  // Without NOT MATCHED BY SOURCE clauses only target rows the ON condition can hold for
  // matter; prune by its target-only parts and by the source's key ranges.
  const bool by_source = std::any_of(request.clauses.begin(), request.clauses.end(),
                                     [](const MergeClause& c) { return IsBySource(c.kind); });
  engine::PredicateScope scope;
  if (!request.target_alias.empty()) scope.qualifiers.push_back(request.target_alias);
  scope.other_qualifiers.push_back(plan.source_name);
  delta::Predicate predicate;  // unknown: every target row
  bool no_match = false;
  if (!by_source) {
    std::vector<delta::Predicate> terms = {dml::PredicateOf(request.on, *table.snapshot, scope)};
    json on_tree = ExpressionTree(conn, request.on);
    if (!on_tree.is_null()) {
      ASSIGN_OR_RETURN(std::vector<std::string> ranges,
                       KeyRanges(conn, plan, table, on_tree, source_table, no_match));
      for (const std::string& range : ranges)
        terms.push_back(dml::PredicateOf(range, *table.snapshot, scope));
    }
    predicate = delta::Predicate::And(std::move(terms));
  }
  dml::Candidates candidates = dml::SelectCandidates(*table.snapshot, std::move(predicate));
  if (no_match) candidates.files.clear();
  ctx.Report("scanning", 0, static_cast<int64_t>(candidates.files.size()));

  ASSIGN_OR_RETURN(engine::ScanPlan scan, dml::ScanWithPositions(table, candidates.files, temps));
  const std::string changes = temps.NewTable("changes");
  RETURN_IF_ERROR_CTX(conn.Execute("CREATE TEMP TABLE " + changes + " AS " +
                                   ChangesSql(request, table, plan, scan.sql, source_table)),
                      "MERGE into " + table.where);
  RETURN_IF_ERROR(CheckSingleMatches(conn, request, table, scan, changes));
  RETURN_IF_ERROR(
      dml::CheckGeneratedAssignments(table, changes, "MERGE into", GeneratedAssignments(table, plan)));

  RETURN_IF_ERROR(SetAsideRefusedChanges(ctx, table, changes));

  delta::Transaction txn(table.snapshot, ctx.txn_options);
  ASSIGN_OR_RETURN(dml::AppliedChanges applied, dml::ApplyChanges(table, scan, changes, true, temps, txn));

  ASSIGN_OR_RETURN(engine::QueryResult per_clause,
                   conn.Query("SELECT " + QuoteIdentifier(kClauseColumn) + ", count(*) FROM " + changes +
                              " GROUP BY ALL"));
  ASSIGN_OR_RETURN(engine::QueryResult source_rows, conn.Query("SELECT count(*) FROM " + source_table));
  int64_t matched_updated = 0, matched_deleted = 0, by_source_updated = 0, by_source_deleted = 0;
  for (const auto& row : per_clause.rows) {
    Kind kind = request.clauses.at(std::stoul(row[0].value_or("0"))).kind;
    int64_t n = std::stoll(row[1].value_or("0"));
    if (kind == Kind::kMatchedUpdate) matched_updated += n;
    if (kind == Kind::kMatchedDelete) matched_deleted += n;
    if (kind == Kind::kNotMatchedBySourceUpdate) by_source_updated += n;
    if (kind == Kind::kNotMatchedBySourceDelete) by_source_deleted += n;
  }
  json metrics = {
      {"numSourceRows", std::stoll(source_rows.at(0, 0).value_or("0"))},
      {"numTargetRowsInserted", applied.inserted_rows},
      {"numTargetRowsUpdated", applied.updated_rows},
      {"numTargetRowsMatchedUpdated", matched_updated},
      {"numTargetRowsNotMatchedBySourceUpdated", by_source_updated},
      {"numTargetRowsDeleted", applied.deleted_rows},
      {"numTargetRowsMatchedDeleted", matched_deleted},
      {"numTargetRowsNotMatchedBySourceDeleted", by_source_deleted},
      {"numTargetRowsCopied", applied.copied_rows},
      {"numOutputRows", applied.inserted_rows + applied.updated_rows + applied.copied_rows},
      {"numTargetFilesBeforeSkipping", static_cast<int64_t>(table.snapshot->files.size())},
      {"numTargetFilesAfterSkipping", static_cast<int64_t>(candidates.files.size())},
      {"numTargetFilesAdded", applied.added_files},
      {"numTargetFilesRemoved", applied.removed_files},
      {"numTargetBytesAdded", applied.added_bytes},
      {"numTargetBytesRemoved", applied.removed_bytes},
      {"numTargetChangeFilesAdded", applied.added_change_files},
      {"numTargetDeletionVectorsAdded", applied.deletion_vectors_added},
      {"numTargetDeletionVectorsRemoved", applied.deletion_vectors_removed},
      {"numTargetDeletionVectorsUpdated", applied.deletion_vectors_updated},
  };
  return dml::CommitDml(table, candidates, txn, "MERGE", OperationParameters(request), std::move(metrics));
}

}  // namespace basin::commands
