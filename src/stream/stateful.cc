#include "stream/stateful.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "common/strings.h"
#include "engine/stream_calls.h"
#include "engine/syntax_tree.h"
#include "stream/dead_letters.h"

namespace basin::stream {
namespace {

using json = nlohmann::json;

// The temporary tables a batch is prepared in: the source's rows, the state (their names
// take a number for each StreamState), and what the batch adds to it.
constexpr char kBatchTable[] = "basin_stream_batch";
constexpr char kStateTable[] = "basin_stream_state";
constexpr char kChangesTable[] = "basin_stream_changes";
// The state table's column of a key's event time (microseconds since the epoch).
constexpr char kEventTimeColumn[] = "basin_event_time";

using engine::tree::ColumnName;
using engine::tree::Field;
using engine::tree::Text;

// `SELECT * FROM (subquery)` and nothing else: the node a CTE or a MERGE's USING wraps a query in.
const json* UnwrappedSubquery(const json& node) {
  const json& list = Field(node, "select_list");
  const bool plain_star = list.size() == 1 && Text(list[0], "class") == "STAR" &&
                          Field(list[0], "exclude_list").empty() && Field(list[0], "replace_list").empty();
  if (!plain_star || !Field(node, "where_clause").is_null() || !Field(node, "group_expressions").empty() ||
      !Field(node, "modifiers").empty() || !Field(node, "having").is_null() ||
      !Field(node, "qualify").is_null()) {
    return nullptr;
  }
  const json& from = Field(node, "from_table");
  if (Text(from, "type") != "SUBQUERY") return nullptr;
  return &Field(Field(from, "subquery"), "node");
}

}  // namespace

// What the statement's query keeps, as its syntax tree says.
struct StatePlan {
  enum class Kind { kOnTime, kDedup, kWindow, kAll };
  Kind kind = Kind::kOnTime;
  std::string relation;            // the source, as DuckDB reads it
  std::string event_time;          // the watermark column, quoted; empty without a WATERMARK
  std::string delay;               // SQL: INTERVAL 10 SECONDS
  bool delay_has_months = false;   // the delay counts months, whose length varies
  bool window_has_months = false;  // so does the window's size or slide
  std::vector<std::string> keys;   // kDedup: the DISTINCT ON columns, quoted
  std::string emitted_keys;        // kDedup: the query of the keys (and event time) the statement emits
  std::string window_size;         // kWindow: SQL text ('1 minute')
  std::string window_slide;        // kWindow, hopping: SQL text; empty for a tumbling window

  // SQL: whether a row of the batch table (alias b) is late for `watermark`.
  std::string Late(std::optional<int64_t> watermark) const {
    if (event_time.empty()) return "false";
    std::string late = "b." + event_time + " IS NULL";
    if (watermark) late += " OR epoch_us(b." + event_time + ") < " + std::to_string(*watermark);
    return "(" + late + ")";
  }
  // SQL: whether a row of the state (its table's columns, unqualified) is one `watermark`
  // passed, which no later batch needs; empty when none is.
  std::string Evicted(std::optional<int64_t> watermark) const {
    if (!watermark) return "";
    const std::string at = std::to_string(*watermark);
    if (kind == Kind::kDedup) {
      // A key stays while the watermark is within the delay of its event time. Without months,
      // that is an event time from the watermark less the delay on (one comparison a key).
      if (!delay_has_months) {
        return std::string(kEventTimeColumn) + " < epoch_us(make_timestamp(" + at + ") - (" + delay + "))";
      }
      return "make_timestamp(" + std::string(kEventTimeColumn) + ") + (" + delay + ") < make_timestamp(" +
             at + ")";
    }
    // A row stays until the last window holding it closes.
    if (kind == Kind::kWindow) return Closed(*watermark);
    return "";
  }
  // SQL: whether every window holding a row of the state ended by `watermark`. Without
  // months, windows start every Step() from the epoch, so that is an event time before the
  // start after the one of the watermark less the size (one comparison a row).
  std::string Closed(int64_t watermark) const {
    const std::string at = std::to_string(watermark);
    if (window_has_months) return LastWindowEnd() + " <= " + at;
    const std::string step = "CAST(" + Step() + " AS INTERVAL)";
    return "epoch_us(" + event_time + ") < epoch_us(time_bucket(" + step + ", make_timestamp(" + at +
           ") - CAST(" + window_size + " AS INTERVAL), TIMESTAMP '1970-01-01') + " + step + ")";
  }
  // SQL: the end of the last window holding a row, in microseconds.
  std::string LastWindowEnd() const {
    return "epoch_us(time_bucket(CAST(" + Step() + " AS INTERVAL), " + event_time +
           ", TIMESTAMP '1970-01-01') + CAST(" + window_size + " AS INTERVAL))";
  }
  // The interval between window starts.
  const std::string& Step() const { return window_slide.empty() ? window_size : window_slide; }
  // SQL: the rows of `state` once for each hopping window holding them (in the column
  // basin_window) that ends in (after, until].
  std::string HoppingRows(const std::string& state, std::optional<int64_t> after, int64_t until) const {
    const std::string size = "CAST(" + window_size + " AS INTERVAL)";
    const std::string slide = "CAST(" + window_slide + " AS INTERVAL)";
    const std::string end = "epoch_us(w + " + size + ")";
    // Without months, only a row before the first window start after `until` less the size
    // and the slide, plus them, has a window ending by `until`: the others are not expanded.
    std::string rows = state;
    if (!window_has_months && until != INT64_MIN) {
      rows = "(SELECT * FROM " + state + " WHERE epoch_us(" + event_time + ") < epoch_us(time_bucket(" +
             slide + ", make_timestamp(" + std::to_string(until) + ") - " + size + " - " + slide +
             ", TIMESTAMP '1970-01-01') + " + slide + " + " + size + "))";
    }
    return "SELECT s.*, {'start': w, 'end': w + " + size + "} AS " + engine::kHoppingWindowColumn + " FROM " +
           rows + " AS s, unnest(generate_series(time_bucket(" + slide + ", s." + event_time + " - " + size +
           ", TIMESTAMP '1970-01-01'), time_bucket(" + slide + ", s." + event_time +
           ", TIMESTAMP '1970-01-01'), " + slide + ")) AS hop(w) WHERE w + " + size + " > s." + event_time +
           (after ? " AND " + end + " > " + std::to_string(*after) : "") + " AND " + end +
           " <= " + std::to_string(until);
  }
};

StreamState::StreamState(engine::Connection& conn, std::unique_ptr<StatePlan> plan,
                         std::shared_ptr<ObjectStore> store, std::string where)
    : conn_(conn), plan_(std::move(plan)), files_(conn, std::move(store), where), where_(std::move(where)) {
  state_table_ = KeptTableName(std::string("temp.") + kStateTable);
  changes_table_ = KeptTableName(std::string("temp.") + kChangesTable);
}

StreamState::~StreamState() {
  for (const std::string& table : {state_table_, changes_table_})
    (void)conn_.Execute("DROP TABLE IF EXISTS " + table);
}

namespace {

// SELECT DISTINCT ON (keys) in `node` (of `tree`, the query's syntax tree): the keys, and the
// query of the keys the statement emits.
Status PlanDeduplication(engine::Connection& conn, const json& tree, const json& node,
                         const sql::grammar::StreamSource& source, const std::string& where,
                         StatePlan& plan) {
  const std::string watermark = "WATERMARK " + source.watermark->column.back();
  for (const json& modifier : Field(node, "modifiers")) {
    if (Text(modifier, "type") != "DISTINCT_MODIFIER") continue;
    const json& targets = Field(modifier, "distinct_on_targets");
    if (targets.empty()) {
      return Status::InvalidArgument(where + ": SELECT DISTINCT over a stream with a " + watermark +
                                     " would de-duplicate each batch alone; write SELECT DISTINCT ON "
                                     "(key columns) to drop a key seen within the watermark");
    }
    const json& from = Field(node, "from_table");
    if (Text(from, "type") != "BASE_TABLE" || Text(from, "table_name") != kStreamInput) {
      return Status::InvalidArgument(where + ": SELECT DISTINCT ON (...) de-duplicates the stream's " +
                                     "source itself: read it directly, not through a join or a subquery");
    }
    json select_list = json::array();
    for (const json& target : targets) {
      const std::string name = ColumnName(target);
      if (name.empty()) {
        return Status::InvalidArgument(where + ": the keys of SELECT DISTINCT ON (...) over a stream are " +
                                       "columns of its source");
      }
      plan.keys.push_back(QuoteIdentifier(name));
      select_list.push_back(target);
    }
    select_list.push_back({{"class", "COLUMN_REF"},
                           {"type", "COLUMN_REF"},
                           {"alias", kEventTimeColumn},
                           {"query_location", 0},
                           {"column_names", {source.watermark->column.back()}}});
    json keys_tree = tree;
    json keys_node = node;
    keys_node["select_list"] = std::move(select_list);
    keys_tree["statements"][0]["node"] = std::move(keys_node);
    ASSIGN_OR_RETURN(plan.emitted_keys, engine::tree::Deserialize(conn, keys_tree));
    plan.kind = StatePlan::Kind::kDedup;
  }
  return Status::OK();
}

// GROUP BY window(ts, size[, slide]) in `node`: the window's size and slide.
Status PlanWindows(const json& node, const sql::grammar::StreamSource& source, const std::string& where,
                   StatePlan& plan) {
  const json& groups = Field(node, "group_expressions");
  for (const json& group : groups) {
    // window(ts, size), or basin_hop(basin_window, ts, size, slide) for window(ts, size, slide).
    const std::string function = Text(group, "class") == "FUNCTION" ? Text(group, "function_name") : "";
    if (function != "window" && function != engine::kHopFunction) continue;
    const bool hopping = function == engine::kHopFunction;
    const json& arguments = Field(group, "children");
    std::vector<std::string> constants;  // size, slide
    for (size_t a = hopping ? 2 : 1; a < arguments.size(); a++) {
      const json& argument = arguments[a];
      if (Text(argument, "class") != "CONSTANT" ||
          Text(Field(Field(argument, "value"), "type"), "id") != "VARCHAR")
        break;
      constants.push_back(QuoteLiteral(Text(Field(argument, "value"), "value")));
    }
    const size_t event_time_at = hopping ? 1 : 0;
    if (arguments.size() != event_time_at + 1 + (hopping ? 2 : 1) ||
        constants.size() != arguments.size() - event_time_at - 1 ||
        ColumnName(arguments[event_time_at]) != source.watermark->column.back()) {
      return Status::InvalidArgument(where + ": a stream's GROUP BY window(...) is window(" +
                                     source.watermark->column.back() + ", 'size'[, 'slide']), over its " +
                                     "WATERMARK column with constant sizes");
    }
    plan.window_size = constants[0];
    if (hopping) plan.window_slide = constants[1];
    plan.kind = StatePlan::Kind::kWindow;
  }
  return Status::OK();
}

}  // namespace

namespace {

// Whether the SQL interval `interval` counts months (or years), whose length varies.
Result<bool> HasMonths(engine::Connection& conn, const std::string& interval, const std::string& where) {
  Result<engine::QueryResult> months =
      conn.Query("SELECT datepart('year', d) * 12 + datepart('month', d) FROM (SELECT CAST(" + interval +
                 " AS INTERVAL) AS d)");
  if (!months.ok()) return months.status().WithContext(where + ": the interval " + interval);
  return months->at(0, 0).value_or("0") != "0";
}

}  // namespace

Result<std::unique_ptr<StreamState>> StreamState::Open(engine::Connection& conn,
                                                       const sql::grammar::StreamSource& source,
                                                       const std::string& query, bool complete,
                                                       std::shared_ptr<ObjectStore> store,
                                                       std::string where) {
  auto plan = std::make_unique<StatePlan>();
  plan->relation = source.relation;
  if (source.watermark) {
    plan->event_time = QuoteIdentifier(source.watermark->column.back());
    plan->delay = source.watermark->delay;
    ASSIGN_OR_RETURN(plan->delay_has_months, HasMonths(conn, plan->delay, where));
  }
  if (complete) {  // the statement aggregates everything: nothing to read from the query
    plan->kind = StatePlan::Kind::kAll;
    return std::unique_ptr<StreamState>(
        new StreamState(conn, std::move(plan), std::move(store), std::move(where)));
  }
  const std::string watermark = "WATERMARK " + source.watermark->column.back();
  Result<json> parsed = engine::tree::Serialize(conn, query);
  if (!parsed.ok() || parsed->at("statements").size() != 1) {
    return Status::InvalidArgument(where + ": the query reading the stream with a " + watermark +
                                   " is not one SELECT DuckDB can read: " + query);
  }
  json tree = std::move(parsed).value();
  const json* node = &Field(tree["statements"][0], "node");
  while (Text(*node, "type") == "SELECT_NODE") {
    const json* inner = UnwrappedSubquery(*node);
    if (inner == nullptr) break;
    node = inner;
  }
  if (Text(*node, "type") != "SELECT_NODE") {
    return std::unique_ptr<StreamState>(
        new StreamState(conn, std::move(plan), std::move(store), std::move(where)));
  }
  RETURN_IF_ERROR(PlanDeduplication(conn, tree, *node, source, where, *plan));
  RETURN_IF_ERROR(PlanWindows(*node, source, where, *plan));
  if (plan->kind == StatePlan::Kind::kWindow) {
    ASSIGN_OR_RETURN(const bool size_has_months, HasMonths(conn, plan->window_size, where));
    ASSIGN_OR_RETURN(const bool slide_has_months, plan->window_slide.empty()
                                                      ? Result<bool>(false)
                                                      : HasMonths(conn, plan->window_slide, where));
    plan->window_has_months = size_has_months || slide_has_months;
  }
  const json& groups = Field(*node, "group_expressions");
  if (!groups.empty() && plan->kind != StatePlan::Kind::kWindow) {
    return Status::InvalidArgument(where + ": a stream's GROUP BY with a " + watermark +
                                   " groups by window(" + source.watermark->column.back() +
                                   ", 'size'), so that each window is written once, when the "
                                   "watermark closes it");
  }
  return std::unique_ptr<StreamState>(
      new StreamState(conn, std::move(plan), std::move(store), std::move(where)));
}

Result<std::optional<int64_t>> StreamState::LoadState(int64_t batch_id) {
  const int64_t previous = batch_id - 1;
  auto join = [&]() -> Status {
    if (pending_.changed) {
      RETURN_IF_ERROR(
          conn_.Execute("INSERT INTO " + state_table_ + " BY NAME SELECT * FROM " + changes_table_));
    }
    RETURN_IF_ERROR(Evict(pending_.watermark));
    state_watermark_ = pending_.watermark;
    return Status::OK();
  };
  ASSIGN_OR_RETURN(bool held, kept_.Start(batch_id, join, [&] {
    return conn_.Execute("DROP TABLE IF EXISTS " + changes_table_);
  }));
  if (held) return state_watermark_;
  const StatePlan& p = *plan_;
  // The state table, empty, shaped from the batch's rows.
  const std::string columns = p.kind == StatePlan::Kind::kDedup
                                  ? fmt::format("{}", fmt::join(p.keys, ", ")) + ", epoch_us(" +
                                        p.event_time + ") AS " + kEventTimeColumn
                                  : "*";
  RETURN_IF_ERROR(conn_.Execute("CREATE OR REPLACE TEMP TABLE " + state_table_ + " AS SELECT " + columns +
                                " FROM temp." + kBatchTable + " LIMIT 0"));
  ASSIGN_OR_RETURN(std::optional<json> state, files_.Load(previous, state_table_));
  std::optional<int64_t> watermark;
  if (state && state->contains("watermark") && !(*state)["watermark"].is_null()) {
    if (!(*state)["watermark"].is_number_integer()) {
      return Status::Corruption(where_ + ": state of batch " + std::to_string(previous) +
                                " has a watermark that is not an integer");
    }
    watermark = (*state)["watermark"].get<int64_t>();
  }
  // A state of changes holds rows its watermark passed since its base.
  RETURN_IF_ERROR(Evict(watermark));
  kept_.Hold(previous);
  state_watermark_ = watermark;
  return watermark;
}

Status StreamState::Evict(std::optional<int64_t> watermark) {
  const std::string evicted = plan_->Evicted(watermark);
  if (evicted.empty()) return Status::OK();
  return conn_.Execute("DELETE FROM " + state_table_ + " WHERE " + evicted);
}

Status StreamState::AddChanges(const std::string& rows_sql) {
  RETURN_IF_ERROR(conn_.Execute("CREATE OR REPLACE TEMP TABLE " + changes_table_ + " AS " + rows_sql));
  changed_ = true;
  return Status::OK();
}

std::string StreamState::StateWithChanges() const {
  if (!changed_) return state_table_;
  return "(SELECT * FROM " + state_table_ + " UNION ALL BY NAME SELECT * FROM " + changes_table_ + ")";
}

Status StreamState::SaveState(int64_t batch_id, std::optional<int64_t> watermark) {
  const json meta = {{"watermark", watermark ? json(*watermark) : json()}};
  if (!changed_) {
    RETURN_IF_ERROR(files_.Save(batch_id, meta, std::nullopt));  // only the watermark is kept
  } else {
    const std::string evicted = plan_->Evicted(watermark);
    ASSIGN_OR_RETURN(engine::QueryResult counted, conn_.Query("SELECT count(*) FROM " + changes_table_));
    RETURN_IF_ERROR(files_.SaveChanges(
        batch_id, meta, std::stoll(counted.at(0, 0).value_or("0")), "SELECT * FROM " + changes_table_,
        "SELECT * FROM " + StateWithChanges() + (evicted.empty() ? "" : " WHERE NOT (" + evicted + ")")));
  }
  pending_ = Pending{watermark, changed_};
  kept_.Wait(batch_id);
  return Status::OK();
}

Status StreamState::Prepare(BatchRead& read, DeadLetterWriter& dead_letters) {
  const StatePlan& p = *plan_;
  const std::string where = where_ + " batch " + std::to_string(read.batch_id);
  RETURN_IF_ERROR(conn_.Execute(std::string("CREATE OR REPLACE TEMP TABLE ") + kBatchTable +
                                " AS SELECT * FROM " + p.relation));
  ASSIGN_OR_RETURN(std::optional<int64_t> previous, LoadState(read.batch_id));
  const std::string batch = std::string("temp.") + kBatchTable + " AS b";
  std::optional<int64_t> watermark = previous;
  if (!p.event_time.empty()) {
    ASSIGN_OR_RETURN(engine::QueryResult figures,
                     conn_.Query("SELECT count(*) FILTER (WHERE " + p.Late(previous) + "), epoch_us(max(b." +
                                 p.event_time + ") - (" + p.delay + ")) FROM " + batch));
    read.late_rows = std::stoll(figures.at(0, 0).value_or("0"));
    if (figures.at(0, 1))
      watermark = std::max<int64_t>(previous.value_or(INT64_MIN), std::stoll(*figures.at(0, 1)));
  }
  if (read.late_rows > 0 && !read.dead_letter_table.empty()) {
    const std::string behind = previous ? "' is behind the watermark ' || CAST(make_timestamp(" +
                                              std::to_string(*previous) + ") AS VARCHAR)"
                                        : "''";
    RETURN_IF_ERROR(dead_letters.WriteRows(read.dead_letter_table, "/late-rows", read,
                                           "SELECT CAST(to_json(b) AS VARCHAR) AS value, CASE WHEN b." +
                                               p.event_time + " IS NULL THEN 'late: no event time in " +
                                               p.event_time + "' ELSE 'late: event time ' || CAST(b." +
                                               p.event_time + " AS VARCHAR) || " + behind +
                                               " END AS error FROM " + batch + " WHERE " + p.Late(previous)));
  }
  const std::string on_time = "SELECT b.* FROM " + batch + " WHERE NOT " + p.Late(previous);
  Status prepared = FillInput(read.batch_id, previous, watermark, on_time).WithContext(where);
  // What the statement reads stays, and the state for the next batch; the batch's rows are
  // read already.
  Status dropped = conn_.Execute(std::string("DROP TABLE IF EXISTS temp.") + kBatchTable);
  return prepared.ok() ? dropped : prepared;
}

Status StreamState::Finish() {
  return conn_.Execute(std::string("DROP TABLE IF EXISTS temp.") + kStreamInput);
}

Status StreamState::FillInput(int64_t batch_id, std::optional<int64_t> previous,
                              std::optional<int64_t> watermark, const std::string& on_time) {
  const StatePlan& p = *plan_;
  const std::string input = std::string("CREATE OR REPLACE TEMP TABLE ") + kStreamInput + " AS ";
  const std::string& state = state_table_;
  changed_ = false;
  switch (p.kind) {
    case StatePlan::Kind::kOnTime:
      RETURN_IF_ERROR(conn_.Execute(input + on_time));
      break;
    case StatePlan::Kind::kDedup: {
      std::string seen;
      for (const std::string& key : p.keys) {
        seen += std::string(seen.empty() ? "" : " AND ") + "s." + key + " IS NOT DISTINCT FROM b." + key;
      }
      RETURN_IF_ERROR(conn_.Execute(input + on_time + " AND NOT EXISTS (SELECT 1 FROM " + state +
                                    " AS s WHERE " + seen + ")"));
      // The keys the statement emits, none of which the state held.
      RETURN_IF_ERROR(AddChanges("SELECT " + fmt::format("{}", fmt::join(p.keys, ", ")) + ", epoch_us(" +
                                 kEventTimeColumn + ") AS " + kEventTimeColumn + " FROM (" + p.emitted_keys +
                                 ")"));
      break;
    }
    case StatePlan::Kind::kAll:
      RETURN_IF_ERROR(AddChanges(on_time));
      RETURN_IF_ERROR(conn_.Execute(input + "SELECT * FROM " + StateWithChanges()));
      break;
    case StatePlan::Kind::kWindow: {
      RETURN_IF_ERROR(AddChanges(on_time));
      // The windows the watermark closed since the batch before are read, each once.
      const std::string rows = StateWithChanges();
      std::string closed_rows =
          "SELECT * FROM " + rows + " WHERE " + (watermark ? p.Closed(*watermark) : std::string("false"));
      if (!p.window_slide.empty()) closed_rows = p.HoppingRows(rows, previous, watermark.value_or(INT64_MIN));
      RETURN_IF_ERROR(conn_.Execute(input + closed_rows));
      break;
    }
  }
  return SaveState(batch_id, watermark);
}

}  // namespace basin::stream
