#include "pipeline/view_refresh.h"

#include <fmt/format.h>

#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "commands/table_changes.h"
#include "common/strings.h"
#include "engine/lakehouse.h"
#include "engine/syntax_tree.h"
#include "sql/grammar/parse.h"
#include "sql/statements.h"
#include "stream/batch_state.h"
#include "stream/source.h"

namespace basin::pipeline {

const char* ViewRefreshModeName(ViewRefresh::Mode mode) {
  switch (mode) {
    case ViewRefresh::Mode::kUnchanged:
      return "unchanged";
    case ViewRefresh::Mode::kIncremental:
      return "incremental";
    case ViewRefresh::Mode::kFull:
      return "full";
  }
  return "?";
}

namespace {

using json = nlohmann::json;
using engine::tree::Field;
using engine::tree::Text;

// What a refresh reads and writes on the session's connection, dropped when it ends.
constexpr char kChangesView[] = "basin_view_changes";  // the rows the changed table appended
constexpr char kStateTable[] = "basin_view_state";     // the groups' partials the last refresh left
constexpr char kNextTable[] = "basin_view_next";       // the groups' partials after this one

// How an aggregate's partial columns combine: each a column of the state.
struct PartialColumn {
  // SQL combining the column's partials ({} stands for the column): sum({}), min({}), or
  // for the distinct values of a count(DISTINCT ...), list_distinct(flatten(list({}))).
  std::string combine;
};

// An aggregate's value from its partial columns.
struct FinalValue {
  enum class Kind { kCount, kValue, kAverage, kCountDistinct };
  Kind kind = Kind::kValue;
  size_t column = 0;  // its (first) partial column; an average's count is the next
};

struct ViewPlan {
  enum class Kind { kFull, kAppend, kAggregate };
  Kind kind = Kind::kFull;
  std::string reason;  // kFull: why
  json tree;           // the query's (statements[0].node is its SELECT)
  // kAggregate:
  size_t groups = 0;                    // the partial query's first columns, __g<i>
  std::vector<PartialColumn> partials;  // then these, __p<j>
  json partial_node;                    // the partial query's SELECT, FROM to be set
  // The view's columns (__c<i>) from kNextTable, each aggregate a placeholder
  // {"basin_final": k} for finals[k]'s value.
  json final_tree;
  std::vector<FinalValue> finals;
};

// A join above a table of the FROM clause, and the table's side of it.
struct JoinSide {
  std::string join_type;  // INNER, LEFT, RIGHT, OUTER, SEMI, ANTI
  bool left = false;
};

// Calls `visit` for each BASE_TABLE of `from` (made of BASE_TABLE and JOIN nodes), in order,
// with the joins above it; InvalidArgument naming the first other node (a table function, a
// subquery), or a join kind it cannot refresh through.
Status ForEachTable(json& from, std::vector<JoinSide>& joins,
                    const std::function<Status(json& table, const std::vector<JoinSide>& joins)>& visit) {
  const std::string type = Text(from, "type");
  if (type == "BASE_TABLE") return visit(from, joins);
  if (type == "JOIN") {
    const std::string kind = Text(from, "ref_type");
    if (kind != "REGULAR" && kind != "NATURAL" && kind != "CROSS") {
      return Status::InvalidArgument("it has an " + kind + " join");
    }
    for (const bool left : {true, false}) {
      joins.push_back({Text(from, "join_type"), left});
      Status visited = ForEachTable(from[left ? "left" : "right"], joins, visit);
      joins.pop_back();
      RETURN_IF_ERROR(visited);
    }
    return Status::OK();
  }
  if (type == "TABLE_FUNCTION") {
    const std::string function = Text(Field(from, "function"), "function_name");
    return Status::InvalidArgument("it reads " +
                                   (function.empty() ? "a table function" : function + "(...)"));
  }
  if (type == "EMPTY") return Status::InvalidArgument("it reads no table");
  return Status::InvalidArgument("it reads a " + AsciiLower(type) + " in FROM");
}

// Whether `node` holds an object whose "class" is `cls`.
bool Holds(const json& node, std::string_view cls) {
  if (node.is_object() && Text(node, "class") == cls) return true;
  if (!node.is_structured()) return false;
  for (const json& child : node) {
    if (Holds(child, cls)) return true;
  }
  return false;
}

bool IsAggregate(const json& node, const std::set<std::string>& aggregates) {
  return Text(node, "class") == "FUNCTION" && aggregates.count(Text(node, "function_name")) > 0;
}

bool HoldsAggregate(const json& node, const std::set<std::string>& aggregates) {
  if (IsAggregate(node, aggregates)) return true;
  if (!node.is_structured()) return false;
  for (const json& child : node) {
    if (HoldsAggregate(child, aggregates)) return true;
  }
  return false;
}

json ColumnRef(const std::string& name, const std::string& alias = "") {
  return {{"class", "COLUMN_REF"},
          {"type", "COLUMN_REF"},
          {"alias", alias},
          {"query_location", 0},
          {"column_names", json::array({name})}};
}

// A text for `expression` in reasons: its alias, or its column's name.
std::string Named(const json& expression) {
  if (!Text(expression, "alias").empty()) return Text(expression, "alias");
  if (!engine::tree::ColumnName(expression).empty()) return engine::tree::ColumnName(expression);
  return Text(expression, "class") == "FUNCTION" ? Text(expression, "function_name") + "(...)"
                                                 : "an expression";
}

class AggregatePlanner {
 public:
  AggregatePlanner(engine::Connection& conn, const std::set<std::string>& aggregates, ViewPlan& plan)
      : conn_(conn), aggregates_(aggregates), plan_(plan) {}

  // Fills plan_'s aggregate part from `node`, the query's SELECT; InvalidArgument with the
  // reason it cannot refresh incrementally.
  Status Plan(const json& node) {
    const json& select = Field(node, "select_list");
    // The groups: GROUP BY ALL's are the select list's entries without aggregates.
    std::vector<json> groups;
    if (Text(node, "aggregate_handling") == "FORCE_AGGREGATES") {
      for (const json& entry : select) {
        if (!HoldsAggregate(entry, aggregates_)) groups.push_back(entry);
      }
    } else {
      if (Field(node, "group_sets").size() > 1) {
        return Status::InvalidArgument("it groups by GROUPING SETS, ROLLUP or CUBE");
      }
      for (const json& group : Field(node, "group_expressions")) {
        const json& position = Field(Field(group, "value"), "value");
        if (Text(group, "class") == "CONSTANT" && position.is_number_integer()) {  // GROUP BY 2
          const int64_t at = position.get<int64_t>();
          if (at < 1 || at > static_cast<int64_t>(select.size())) {
            return Status::InvalidArgument("it groups by a position past its columns");
          }
          groups.push_back(select[at - 1]);
        } else {
          groups.push_back(group);
        }
      }
    }
    json partial_select = json::array();
    for (size_t g = 0; g < groups.size(); g++) {
      json column = groups[g];
      column["alias"] = "__g" + std::to_string(g);
      partial_select.push_back(std::move(column));
    }
    plan_.groups = groups.size();
    // The view's columns over the combined partials.
    json final_select = json::array();
    for (size_t i = 0; i < select.size(); i++) {
      const json& entry = select[i];
      if (Text(entry, "class") == "STAR") return Status::InvalidArgument("it selects * with GROUP BY");
      json column;
      if (HoldsAggregate(entry, aggregates_)) {
        column = entry;
        RETURN_IF_ERROR(Decompose(column, partial_select));
        if (Holds(column, "COLUMN_REF")) {
          return Status::InvalidArgument(Named(entry) + " uses a column outside its aggregates");
        }
      } else {
        for (size_t g = 0; g < groups.size() && column.is_null(); g++) {
          if (engine::tree::SameExpression(entry, groups[g])) column = ColumnRef("__g" + std::to_string(g));
        }
        if (column.is_null())
          return Status::InvalidArgument(Named(entry) + " is an expression over its groups");
      }
      column["alias"] = "__c" + std::to_string(i);
      final_select.push_back(std::move(column));
    }

    plan_.partial_node = node;
    plan_.partial_node["select_list"] = std::move(partial_select);
    plan_.partial_node["group_expressions"] = json::array();
    plan_.partial_node["group_sets"] = json::array();
    plan_.partial_node["aggregate_handling"] = "FORCE_AGGREGATES";

    json final_tree = plan_.tree;
    json& final_node = final_tree["statements"][0]["node"];
    final_node["select_list"] = std::move(final_select);
    final_node["from_table"] = {{"type", "BASE_TABLE"},
                                {"alias", ""},
                                {"sample", nullptr},
                                {"query_location", 0},
                                {"schema_name", "main"},
                                {"table_name", kNextTable},
                                {"column_name_alias", json::array()},
                                {"catalog_name", "temp"},
                                {"at_clause", nullptr}};
    final_node["where_clause"] = nullptr;
    final_node["group_expressions"] = json::array();
    final_node["group_sets"] = json::array();
    final_node["aggregate_handling"] = "STANDARD_HANDLING";
    plan_.final_tree = std::move(final_tree);
    return Status::OK();
  }

 private:
  // Replaces each aggregate call in `expression` by a placeholder for its final value, its
  // partials added to `partial_select`.
  Status Decompose(json& expression, json& partial_select) {
    if (IsAggregate(expression, aggregates_)) {
      const std::string function = Text(expression, "function_name");
      const bool counts = function == "count" || function == "count_star";
      const bool average = function == "avg" || function == "mean";
      if (!counts && !average && function != "sum" && function != "min" && function != "max") {
        return Status::InvalidArgument(function + "(...) does not combine from partial results");
      }
      const bool distinct = Field(expression, "distinct") == true;
      if (distinct && function != "count") {
        return Status::InvalidArgument(function + "(DISTINCT ...) does not combine from partial results");
      }
      if (!Field(Field(expression, "order_bys"), "orders").empty() ||
          Field(expression, "export_state") == true) {
        return Status::InvalidArgument(function + "(...) has an ORDER BY or exports its state");
      }
      auto partial = [&](const std::string& name, const std::string& combine) {
        const std::string column = "__p" + std::to_string(plan_.partials.size());
        json call = expression;
        if (!name.empty()) call["function_name"] = name;
        call["alias"] = column;
        partial_select.push_back(std::move(call));
        plan_.partials.push_back({combine});
      };
      FinalValue value;
      if (distinct) {  // each group's distinct values, kept: the state grows with them
        value = {FinalValue::Kind::kCountDistinct, plan_.partials.size()};
        partial("list", "list_distinct(flatten(list({})))");
      } else if (counts) {
        value = {FinalValue::Kind::kCount, plan_.partials.size()};
        partial("", "sum({})");
      } else if (average) {
        value = {FinalValue::Kind::kAverage, plan_.partials.size()};
        partial("sum", "sum({})");
        partial("count", "sum({})");
      } else {
        value = {FinalValue::Kind::kValue, plan_.partials.size()};
        partial("", function + "({})");
      }
      plan_.finals.push_back(value);
      expression = {{"basin_final", plan_.finals.size() - 1}};
      return Status::OK();
    }
    if (expression.is_structured()) {
      for (json& child : expression) RETURN_IF_ERROR(Decompose(child, partial_select));
    }
    return Status::OK();
  }

  engine::Connection& conn_;
  const std::set<std::string>& aggregates_;
  ViewPlan& plan_;
};

// The names of DuckDB's aggregate functions, read once per process (listing the functions
// takes milliseconds).
Result<const std::set<std::string>*> AggregateFunctions(engine::Connection& conn) {
  static std::mutex mu;
  static std::set<std::string>* names = nullptr;  // GUARDED_BY(mu); never freed
  std::lock_guard<std::mutex> lock(mu);
  if (names == nullptr) {
    ASSIGN_OR_RETURN(engine::QueryResult functions,
                     conn.Query("SELECT DISTINCT function_name FROM duckdb_functions() WHERE function_type = "
                                "'aggregate'"));
    auto read = std::make_unique<std::set<std::string>>();
    for (size_t r = 0; r < functions.row_count(); r++) read->insert(functions.at(r, 0).value_or(""));
    names = read.release();
  }
  return names;
}

// How `query` refreshes, as its syntax tree says.
Result<ViewPlan> PlanView(engine::Connection& conn, const std::string& query) {
  ViewPlan plan;
  ASSIGN_OR_RETURN(plan.tree, engine::tree::Serialize(conn, query));
  auto full = [&plan](std::string reason) -> Result<ViewPlan> {
    plan.kind = ViewPlan::Kind::kFull;
    plan.reason = std::move(reason);
    return std::move(plan);
  };
  if (plan.tree["statements"].size() != 1) return full("its query is not one SELECT");
  const json& node = plan.tree["statements"][0]["node"];
  if (Text(node, "type") != "SELECT_NODE") return full("its query is a set operation");
  if (!Field(Field(node, "cte_map"), "map").empty()) return full("it has a WITH clause");
  for (const json& modifier : Field(node, "modifiers")) {
    const std::string type = Text(modifier, "type");
    return full(type == "DISTINCT_MODIFIER" ? "it has DISTINCT"
                : type == "ORDER_MODIFIER"  ? "it has ORDER BY"
                                            : "it has LIMIT");
  }
  if (!Field(node, "having").is_null()) return full("it has HAVING");
  if (!Field(node, "qualify").is_null()) return full("it has QUALIFY");
  if (!Field(node, "sample").is_null()) return full("it has USING SAMPLE");
  if (Holds(node, "SUBQUERY")) return full("it has a subquery");
  if (Holds(node, "WINDOW")) return full("it has a window function");
  std::vector<JoinSide> joins;
  json from = Field(node, "from_table");
  Status tables = ForEachTable(from, joins, [](json& table, const std::vector<JoinSide>&) -> Status {
    if (!Field(table, "at_clause").is_null()) {
      return Status::InvalidArgument("it reads " + Text(table, "table_name") + " at a fixed version");
    }
    if (!Field(table, "sample").is_null()) {
      return Status::InvalidArgument("it samples " + Text(table, "table_name"));
    }
    return Status::OK();
  });
  if (!tables.ok()) return full(tables.message());

  ASSIGN_OR_RETURN(const std::set<std::string>* functions, AggregateFunctions(conn));
  const std::set<std::string>& aggregates = *functions;
  const bool aggregating = Text(node, "aggregate_handling") == "FORCE_AGGREGATES" ||
                           !Field(node, "group_expressions").empty() ||
                           HoldsAggregate(Field(node, "select_list"), aggregates);
  if (!aggregating) {
    plan.kind = ViewPlan::Kind::kAppend;
    return plan;
  }
  Status planned = AggregatePlanner(conn, aggregates, plan).Plan(node);
  if (!planned.ok()) return full(planned.message());
  plan.kind = ViewPlan::Kind::kAggregate;
  return plan;
}

// A table the view reads: a BASE_TABLE of its FROM clause.
struct Input {
  std::string name;                                 // as written, for messages
  std::string location;                             // the warehouse table's
  std::shared_ptr<const delta::Snapshot> snapshot;  // its latest
  std::vector<JoinSide> joins;
};

json VersionConstant(int64_t version) {
  return {{"class", "CONSTANT"},
          {"type", "VALUE_CONSTANT"},
          {"alias", ""},
          {"query_location", 0},
          {"value",
           {{"type", {{"id", "BIGINT"}, {"type_info", nullptr}}}, {"is_null", false}, {"value", version}}}};
}

// Whether a table on `joins`' sides may have changed for the join's result to change only by
// the rows its new rows join: the preserved side of outer, semi and anti joins.
bool AppendsThrough(const std::vector<JoinSide>& joins) {
  for (const JoinSide& join : joins) {
    if (join.join_type == "INNER") continue;
    if ((join.join_type == "LEFT" || join.join_type == "SEMI" || join.join_type == "ANTI") && join.left)
      continue;
    if (join.join_type == "RIGHT" && !join.left) continue;
    return false;
  }
  return true;
}

class Refresh {
 public:
  Refresh(sql::Session& session, const ViewTarget& view, ViewPlan plan)
      : session_(session),
        conn_(session.connection()),
        view_(view),
        plan_(std::move(plan)),
        quoted_(QuoteIdentifier(view.name.schema) + "." + QuoteIdentifier(view.name.table)),
        files_(conn_, view.state, "materialized view " + view.name.table) {}

  Result<ViewRefresh> Run() {
    if (plan_.kind == ViewPlan::Kind::kFull) return Whole(plan_.reason);
    Status read = ReadInputs();
    if (!read.ok()) {
      if (read.code() != ErrorCode::kInvalidArgument) return read;
      plan_.kind = ViewPlan::Kind::kFull;
      return Whole(read.message());
    }
    std::string reason;
    ASSIGN_OR_RETURN(std::optional<json> previous, Previous(reason));
    if (!previous) return Rebuild(reason);
    // Which tables changed since the refresh the state is of.
    std::set<std::string> changed;
    std::optional<size_t> at;
    const json& recorded = (*previous)["inputs"];
    for (size_t i = 0; i < inputs_.size(); i++) {
      const int64_t version = recorded[i]["version"].get<int64_t>();
      if (version > inputs_[i].snapshot->version)
        return Rebuild(inputs_[i].name + " is older than at the last refresh");
      if (version == inputs_[i].snapshot->version) continue;
      if (changed.count(inputs_[i].location) > 0)
        return Rebuild("it reads " + inputs_[i].name + " twice, and it changed");
      changed.insert(inputs_[i].location);
      at = i;
    }
    if (!at) return ViewRefresh{ViewRefresh::Mode::kUnchanged, "no table it reads changed", 0};
    if (changed.size() > 1) {
      std::vector<std::string> names;
      for (size_t i = 0; i < inputs_.size(); i++) {
        if (recorded[i]["version"].get<int64_t>() != inputs_[i].snapshot->version)
          names.push_back(inputs_[i].name);
      }
      return Rebuild(fmt::format("{} changed: more than one table it reads", fmt::join(names, " and ")));
    }
    const Input& input = inputs_[*at];
    if (!AppendsThrough(input.joins)) {
      return Rebuild(input.name + " changed, and it is on the side of a join whose other rows it changes");
    }
    const int64_t from = recorded[*at]["version"].get<int64_t>() + 1;
    ASSIGN_OR_RETURN(commands::ChangesScan appended,
                     commands::AppendedRowsSql(conn_, input.snapshot, from, /*skip_change_commits=*/true));
    if (!appended.skipped_commits.empty()) {
      return Rebuild(input.name + " " + appended.skipped_commits.front() + " removed or rewrote rows");
    }
    const std::string what =
        input.name + " versions " + std::to_string(from) + " to " + std::to_string(input.snapshot->version);
    Status viewed =
        conn_.Execute(std::string("CREATE OR REPLACE TEMP VIEW ") + kChangesView + " AS " + appended.sql);
    Result<int64_t> rows = viewed.ok() ? Incremental(*at, *previous) : Result<int64_t>(viewed);
    Status dropped = conn_.Execute(std::string("DROP VIEW IF EXISTS temp.") + kChangesView);
    ASSIGN_OR_RETURN(int64_t written, std::move(rows));
    RETURN_IF_ERROR(dropped);
    return ViewRefresh{ViewRefresh::Mode::kIncremental, what, written};
  }

 private:
  // Every table the query reads, at its latest version; InvalidArgument for one that is not
  // a Delta table of the warehouse.
  Status ReadInputs() {
    std::vector<JoinSide> joins;
    json from = plan_.tree["statements"][0]["node"]["from_table"];
    return ForEachTable(from, joins, [this](json& table, const std::vector<JoinSide>& above) -> Status {
      std::vector<std::string> parts;
      for (const char* part : {"catalog_name", "schema_name", "table_name"}) {
        if (!Text(table, part).empty()) parts.push_back(Text(table, part));
      }
      const std::string name = sql::grammar::JoinName(parts);
      ASSIGN_OR_RETURN(engine::ResolvedTableName resolved, engine::ResolveTableName(conn_, parts));
      if (resolved.kind != engine::ResolvedTableName::Kind::kWarehouse) {
        return Status::InvalidArgument("it reads " + name + ", which is no Delta table of the warehouse");
      }
      ASSIGN_OR_RETURN(auto snapshot, session_.context().LoadTable(resolved.warehouse_entry.location));
      inputs_.push_back({name, resolved.warehouse_entry.location, std::move(snapshot), above});
      return Status::OK();
    });
  }

  // The state of the last refresh when this one may start from it; nullopt with the reason
  // when it may not.
  Result<std::optional<json>> Previous(std::string& reason) {
    ASSIGN_OR_RETURN(latest_, files_.Latest());
    if (!latest_) {
      reason = "first refresh";
      return std::optional<json>();
    }
    ASSIGN_OR_RETURN(std::optional<json> state, files_.Load(*latest_, ""));
    const json& inputs = (*state)["inputs"];
    bool same_inputs = inputs.is_array() && inputs.size() == inputs_.size();
    for (size_t i = 0; same_inputs && i < inputs_.size(); i++) {
      same_inputs =
          inputs[i].value("location", "") == inputs_[i].location && inputs[i]["version"].is_number_integer();
    }
    ASSIGN_OR_RETURN(std::optional<int64_t> version, ViewVersion());
    ASSIGN_OR_RETURN(std::string columns, Columns());
    if (state->value("query", "") != view_.query) {
      reason = "its query changed";
    } else if (state->value("columns", "") != columns) {
      reason = "its query's columns changed";
    } else if (!same_inputs) {
      reason = "the tables it reads are not those of the last refresh";
    } else if (!version || !(*state)["viewVersion"].is_number_integer() ||
               (*state)["viewVersion"].get<int64_t>() != *version) {
      reason = "its table is not as the last refresh left it";
    } else {
      return state;
    }
    return std::optional<json>();
  }

  // The query's columns, described once per refresh.
  Result<const std::vector<engine::ColumnType>*> QueryColumns() {
    if (!columns_) {
      ASSIGN_OR_RETURN(std::vector<engine::ColumnType> columns, conn_.DescribeQuery(view_.query));
      columns_ = std::move(columns);
    }
    return &*columns_;
  }

  // The query's columns and their types, as text: "region VARCHAR, n BIGINT".
  Result<std::string> Columns() {
    ASSIGN_OR_RETURN(const std::vector<engine::ColumnType>* columns, QueryColumns());
    std::vector<std::string> described;
    for (const engine::ColumnType& column : *columns)
      described.push_back(column.name + " " + column.type_name);
    return fmt::format("{}", fmt::join(described, ", "));
  }

  // The latest version of the view's table; nullopt when it does not exist.
  Result<std::optional<int64_t>> ViewVersion() {
    ASSIGN_OR_RETURN(std::optional<catalog::TableEntry> entry,
                     sql::LookupTarget(session_.context(), view_.name));
    if (!entry) return std::optional<int64_t>();
    ASSIGN_OR_RETURN(auto snapshot, session_.context().LoadTable(entry->location));
    return std::optional<int64_t>(snapshot->version);
  }

  // The query's tree with every table read at the version found, and table `changed` (when
  // given) replaced by the rows it appended.
  json Pinned(std::optional<size_t> changed) const {
    json tree = plan_.tree;
    std::vector<JoinSide> joins;
    size_t i = 0;
    (void)ForEachTable(tree["statements"][0]["node"]["from_table"], joins,
                       [&](json& table, const std::vector<JoinSide>&) -> Status {
                         if (changed && i == *changed) {
                           if (Text(table, "alias").empty()) table["alias"] = Text(table, "table_name");
                           table["catalog_name"] = "temp";
                           table["schema_name"] = "main";
                           table["table_name"] = kChangesView;
                         } else {
                           table["at_clause"] = {{"unit", "VERSION"},
                                                 {"expr", VersionConstant(inputs_[i].snapshot->version)}};
                         }
                         i++;
                         return Status::OK();
                       });
    return tree;
  }

  // The partial aggregates of `tree`'s FROM and WHERE, as SQL.
  Result<std::string> PartialSql(const json& tree) {
    json partial = tree;
    json node = plan_.partial_node;
    node["from_table"] = tree["statements"][0]["node"]["from_table"];
    partial["statements"][0]["node"] = std::move(node);
    return engine::tree::Deserialize(conn_, partial);
  }

  // Fills kNextTable with the state's partials (kStateTable, shaped as `columns`) combined
  // with those of `partial_sql`.
  Status Combine(const std::string& partial_sql) {
    std::vector<std::string> select;
    for (size_t g = 0; g < plan_.groups; g++) select.push_back("__g" + std::to_string(g));
    for (size_t p = 0; p < plan_.partials.size(); p++) {
      const std::string column = "__p" + std::to_string(p);
      select.push_back("CAST(" + fmt::format(fmt::runtime(plan_.partials[p].combine), column) + " AS " +
                       state_types_[p] + ") AS " + column);
    }
    return conn_.Execute(std::string("CREATE OR REPLACE TEMP TABLE ") + kNextTable + " AS SELECT " +
                         fmt::format("{}", fmt::join(select, ", ")) + " FROM (SELECT * FROM temp." +
                         kStateTable + " UNION ALL BY NAME SELECT * FROM (" + partial_sql +
                         ")) GROUP BY ALL");
  }

  // kStateTable, empty, with the partial query's columns (its wide integers as DECIMAL(38,0),
  // which Parquet keeps exactly).
  // The previous refresh's, kept in its state, when `previous` has them (its query and
  // columns are this one's): no describing.
  Status CreateStateTable(const std::string& partial_sql, const json* previous = nullptr) {
    state_definitions_.clear();
    state_types_.clear();
    if (previous != nullptr && (*previous)["stateColumns"].is_array() &&
        (*previous)["stateTypes"].is_array()) {
      for (const json& definition : (*previous)["stateColumns"])
        state_definitions_.push_back(definition.get<std::string>());
      for (const json& type : (*previous)["stateTypes"]) state_types_.push_back(type.get<std::string>());
    } else {
      ASSIGN_OR_RETURN(std::vector<engine::ColumnType> columns, conn_.DescribeQuery(partial_sql));
      for (size_t c = 0; c < columns.size(); c++) {
        std::string type = columns[c].type_name;
        if (type == "HUGEINT" || type == "UHUGEINT") type = "DECIMAL(38,0)";
        if (c >= plan_.groups) state_types_.push_back(type);
        state_definitions_.push_back(QuoteIdentifier(columns[c].name) + " " + type);
      }
    }
    return conn_.Execute(std::string("CREATE OR REPLACE TEMP TABLE ") + kStateTable + " (" +
                         fmt::format("{}", fmt::join(state_definitions_, ", ")) + ")");
  }

  // The view's rows from kNextTable, with the query's column names and types (the previous
  // refresh's SQL when `previous` has it).
  Result<std::string> FinalSql(const json* previous = nullptr) {
    if (previous != nullptr && (*previous)["finalSql"].is_string()) {
      final_sql_ = (*previous)["finalSql"].get<std::string>();
      return final_sql_;
    }
    json tree = plan_.final_tree;
    if (!plan_.finals.empty()) {
      std::vector<std::string> values;
      for (const FinalValue& value : plan_.finals) values.push_back(FinalValueSql(value));
      ASSIGN_OR_RETURN(json parsed, engine::tree::Serialize(
                                        conn_, "SELECT " + fmt::format("{}", fmt::join(values, ", "))));
      const json& trees = parsed["statements"][0]["node"]["select_list"];
      std::function<void(json&)> substitute = [&](json& node) {
        if (node.is_object() && node.contains("basin_final")) {
          node = trees.at(node["basin_final"].get<size_t>());
        } else if (node.is_structured()) {
          for (json& child : node) substitute(child);
        }
      };
      for (json& column : tree["statements"][0]["node"]["select_list"]) {
        const std::string alias = Text(column, "alias");
        substitute(column);
        column["alias"] = alias;
      }
    }
    ASSIGN_OR_RETURN(std::string final_sql, engine::tree::Deserialize(conn_, tree));
    ASSIGN_OR_RETURN(const std::vector<engine::ColumnType>* columns, QueryColumns());
    std::vector<std::string> select;
    for (size_t c = 0; c < columns->size(); c++) {
      select.push_back("CAST(__c" + std::to_string(c) + " AS " + (*columns)[c].type_name + ") AS " +
                       QuoteIdentifier((*columns)[c].name));
    }
    final_sql_ = "SELECT " + fmt::format("{}", fmt::join(select, ", ")) + " FROM (" + final_sql + ")";
    return final_sql_;
  }

  // SQL of an aggregate's value over its partial columns in kNextTable. An average is the
  // exact quotient, rounded once to a double: a decimal sum's unscaled integer over the count
  // times ten to its scale (DuckDB's own avg divides in long double, and its result can
  // differ from this one in the last binary digit).
  std::string FinalValueSql(const FinalValue& value) const {
    std::string column = "__p" + std::to_string(value.column);
    switch (value.kind) {
      case FinalValue::Kind::kCount:
        return "coalesce(" + column + ", 0)";
      case FinalValue::Kind::kCountDistinct:  // list_distinct left no NULL in it
        return "coalesce(len(" + column + "), 0)";
      case FinalValue::Kind::kValue:
        return column;
      case FinalValue::Kind::kAverage:
        break;
    }
    const std::string count = "__p" + std::to_string(value.column + 1);
    const std::string& type = state_types_[value.column];
    int scale = 0;
    if (type.rfind("DECIMAL(", 0) == 0 && type.find(',') != std::string::npos) {
      scale = std::atoi(type.c_str() + type.find(',') + 1);
    }
    if (scale == 0) return "CAST(" + column + " AS DOUBLE) / nullif(" + count + ", 0)";
    const std::string power = "1" + std::string(scale, '0');
    return "CAST(CAST(" + column + " * " + power + " AS HUGEINT) AS DOUBLE) / CAST(nullif(" + count +
           ", 0) * " + power + " AS DOUBLE)";
  }

  Status DropTemporaries() {
    return conn_.Execute(std::string("DROP TABLE IF EXISTS temp.") + kStateTable +
                         "; DROP TABLE IF EXISTS temp." + kNextTable);
  }

  // The view recomputed whole from `query` (the view's, or its pinned rewrite), no state kept.
  Result<ViewRefresh> Whole(const std::string& reason) {
    ASSIGN_OR_RETURN(int64_t rows, view_.replace(view_.query));
    return ViewRefresh{ViewRefresh::Mode::kFull, reason, rows};
  }

  // The view recomputed whole from the tables at the versions found, and its state written.
  Result<ViewRefresh> Rebuild(const std::string& reason) {
    const json pinned = Pinned(std::nullopt);
    int64_t rows = 0;
    if (plan_.kind == ViewPlan::Kind::kAppend) {
      ASSIGN_OR_RETURN(std::string sql, engine::tree::Deserialize(conn_, pinned));
      ASSIGN_OR_RETURN(rows, view_.replace(sql));
    } else {
      ASSIGN_OR_RETURN(std::string partial, PartialSql(pinned));
      Result<int64_t> replaced = [&]() -> Result<int64_t> {
        RETURN_IF_ERROR(CreateStateTable(partial));
        RETURN_IF_ERROR(Combine(partial));
        ASSIGN_OR_RETURN(std::string final_sql, FinalSql());
        return view_.replace(final_sql);
      }();
      if (!replaced.ok()) {
        (void)DropTemporaries();
        return replaced.status();
      }
      rows = *replaced;
    }
    RETURN_IF_ERROR(SaveState());
    return ViewRefresh{ViewRefresh::Mode::kFull, reason, rows};
  }

  // The rows input `changed` appended (kChangesView) brought into the view.
  Result<int64_t> Incremental(size_t changed, const json& previous) {
    const json tree = Pinned(changed);
    if (plan_.kind == ViewPlan::Kind::kAppend) {
      ASSIGN_OR_RETURN(std::string rows_sql, engine::tree::Deserialize(conn_, tree));
      ASSIGN_OR_RETURN(sql::grammar::ParsedStatement insert,
                       sql::grammar::ParseStatement("INSERT INTO " + quoted_ + " BY NAME " + rows_sql));
      ASSIGN_OR_RETURN(sql::StatementResult result, session_.ExecuteParsed(insert));
      RETURN_IF_ERROR(SaveState());
      return stream::ReportedInteger(result.result, "num_affected_rows").value_or(0);
    }
    ASSIGN_OR_RETURN(std::string partial, PartialSql(tree));
    Result<int64_t> rows = [&]() -> Result<int64_t> {
      RETURN_IF_ERROR(CreateStateTable(partial, &previous));
      RETURN_IF_ERROR(files_.Load(*latest_, std::string("temp.") + kStateTable).status());
      RETURN_IF_ERROR(Combine(partial));
      ASSIGN_OR_RETURN(std::string final_sql, FinalSql(&previous));
      ASSIGN_OR_RETURN(sql::grammar::ParsedStatement overwrite,
                       sql::grammar::ParseStatement("INSERT OVERWRITE " + quoted_ + " " + final_sql));
      ASSIGN_OR_RETURN(sql::StatementResult result, session_.ExecuteParsed(overwrite));
      RETURN_IF_ERROR(SaveState(stream::ReportedInteger(result.result, "version")));
      return stream::ReportedInteger(result.result, "num_affected_rows").value_or(0);
    }();
    Status dropped = DropTemporaries();
    if (rows.ok()) RETURN_IF_ERROR(dropped);
    return rows;
  }

  // This refresh's state: the query, the versions read, the view's version now (`written`:
  // the version its commit reported; looked up when nullopt), and (aggregate) kNextTable's
  // partials.
  Status SaveState(std::optional<int64_t> written = std::nullopt) {
    std::optional<int64_t> version = written;
    if (!version) {
      ASSIGN_OR_RETURN(version, ViewVersion());
    }
    json inputs = json::array();
    for (const Input& input : inputs_)
      inputs.push_back({{"location", input.location}, {"version", input.snapshot->version}});
    ASSIGN_OR_RETURN(std::string columns, Columns());
    json meta = {{"query", view_.query},
                 {"columns", columns},
                 {"inputs", std::move(inputs)},
                 {"viewVersion", version ? json(*version) : json()}};
    std::optional<std::string> rows;
    if (plan_.kind == ViewPlan::Kind::kAggregate) {
      rows = std::string("SELECT * FROM temp.") + kNextTable;
      // What the next refresh would otherwise describe again.
      meta["stateColumns"] = state_definitions_;
      meta["stateTypes"] = state_types_;
      meta["finalSql"] = final_sql_;
    }
    RETURN_IF_ERROR(files_.Save(latest_ ? *latest_ + 1 : 0, std::move(meta), rows));
    return plan_.kind == ViewPlan::Kind::kAggregate ? DropTemporaries() : Status::OK();
  }

  sql::Session& session_;
  engine::Connection& conn_;
  const ViewTarget& view_;
  ViewPlan plan_;
  const std::string quoted_;
  stream::BatchStateFiles files_;
  std::vector<Input> inputs_;
  std::optional<int64_t> latest_;                           // the newest state's refresh number
  std::vector<std::string> state_types_;                    // the partial columns' types in the state
  std::vector<std::string> state_definitions_;              // every state column: "name TYPE"
  std::string final_sql_;                                   // FinalSql()
  std::optional<std::vector<engine::ColumnType>> columns_;  // QueryColumns()
};

// The plan of `query`, made once per process (it depends on the query's text alone).
Result<ViewPlan> CachedPlan(engine::Connection& conn, const std::string& query) {
  static std::mutex mu;
  static auto* plans = new std::map<std::string, ViewPlan>();  // GUARDED_BY(mu); never freed
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = plans->find(query);
    if (it != plans->end()) return it->second;
  }
  ASSIGN_OR_RETURN(ViewPlan plan, PlanView(conn, query));
  std::lock_guard<std::mutex> lock(mu);
  if (plans->size() >= 256) plans->clear();  // bounded: pipelines have tens of views
  plans->emplace(query, plan);
  return plan;
}

}  // namespace

Result<ViewRefresh> RefreshView(sql::Session& session, const ViewTarget& view) {
  ViewPlan plan;
  if (view.always_full.empty()) {
    ASSIGN_OR_RETURN(plan, CachedPlan(session.connection(), view.query));
  } else {
    plan.reason = view.always_full;
  }
  return Refresh(session, view, std::move(plan)).Run();
}

}  // namespace basin::pipeline
