#include "stream/cdc.h"

#include <fmt/format.h>

#include <utility>

#include "common/strings.h"
#include "engine/duckdb.h"

namespace basin::stream {
namespace {

// The temporary tables a batch is prepared in.
constexpr char kBatch[] = "temp.basin_cdc_batch";        // the batch's changes, projected
constexpr char kState[] = "temp.basin_cdc_state";        // type 2: the state of the batch before
constexpr char kFloor[] = "temp.basin_cdc_floor";        // type 1: the truncate floors (+ _<n>)
constexpr char kEvents[] = "temp.basin_cdc_events";      // type 2: the touched keys' changes
constexpr char kLatest[] = "temp.basin_cdc_latest";      // type 1: each key's outcome (+ _<n>)
constexpr char kHistory[] = "temp.basin_cdc_history";    // type 2: the touched keys' versions
constexpr char kVersions[] = "temp.basin_cdc_versions";  // type 2: their versions rebuilt

// Columns the flow adds to a change, its state and the MERGE's input.
constexpr char kSequence[] = "basin_cdc_sequence";
constexpr char kDelete[] = "basin_cdc_delete";
constexpr char kTruncate[] = "basin_cdc_truncate";
constexpr char kDeleted[] = "basin_cdc_deleted";  // state: the key's latest change deleted it
constexpr char kAtMs[] = "basin_cdc_at_ms";       // state: when the change was applied
constexpr char kIsFloor[] = "basin_cdc_floor";    // state: a truncate's sequence, no key
constexpr char kAction[] = "basin_cdc_action";    // 'upsert' or 'delete'
constexpr char kReset[] = "basin_cdc_reset";      // the key was deleted since the target's row
constexpr char kBatchId[] = "basin_cdc_batch";    // type 1 state: the batch that wrote the row

// CREATE OR REPLACE TEMP TABLE `table` (one of the above) AS `query`.
std::string CreateTemp(const std::string& table, const std::string& query) {
  return "CREATE OR REPLACE TEMP TABLE " + table.substr(5) + " AS " + query;
}

std::string Join(const std::vector<std::string>& parts, const std::string& separator) {
  return fmt::format("{}", fmt::join(parts, separator));
}

std::vector<std::string> Quoted(const std::vector<std::string>& names, const std::string& alias = "") {
  std::vector<std::string> out;
  for (const std::string& name : names)
    out.push_back((alias.empty() ? "" : alias + ".") + QuoteIdentifier(name));
  return out;
}

// The selected columns of a source row, as a SELECT list.
std::string Projection(const std::optional<sql::grammar::ColumnSelection>& columns) {
  if (!columns) return "*";
  if (columns->all_except) return "* EXCLUDE (" + Join(Quoted(columns->columns), ", ") + ")";
  return Join(Quoted(columns->columns), ", ");
}

bool Contains(const std::vector<std::string>& names, const std::string& name) {
  for (const std::string& each : names) {
    if (EqualsIgnoreCase(each, name)) return true;
  }
  return false;
}

// `columns` without `removed`.
std::vector<std::string> Without(const std::vector<std::string>& columns,
                                 const std::vector<std::string>& removed) {
  std::vector<std::string> out;
  for (const std::string& column : columns) {
    if (!Contains(removed, column)) out.push_back(column);
  }
  return out;
}

// A change's columns: the selected ones, its sequence, whether it deletes and truncates.
std::string ChangeRows(const CdcFlow& flow, const std::string& relation) {
  return "SELECT " + Projection(flow.columns) + ", (" + flow.sequence_by + ") AS " + kSequence +
         ", coalesce((" + flow.delete_when.value_or("false") + "), false) AS " + kDelete + ", coalesce((" +
         flow.truncate_when.value_or("false") + "), false) AS " + kTruncate + " FROM " + relation;
}

// CdcPlan::order for a sequence of DuckDB type `type`.
std::string OrderOfChanges(const std::string& type) {
  const engine::IntegerType* integer = engine::FindIntegerType(type);
  if (integer != nullptr && integer->bits <= 64) {  // sequence * 2 + 1 fits a HUGEINT
    return std::string("(") + kSequence + "::HUGEINT * 2 + " + kDelete + "::INTEGER)";
  }
  return std::string("{'s': ") + kSequence + ", 'd': " + kDelete + "}";
}

// The MERGE a stream runs for `plan`, reading STREAM(source).
std::string MergeStatement(const CdcPlan& plan) {
  const CdcFlow& flow = plan.flow;
  const bool type2 = flow.scd_type == 2;
  std::vector<std::string> on;
  for (const std::string& key : plan.flow.keys)
    on.push_back("t." + QuoteIdentifier(key) + " = s." + QuoteIdentifier(key));
  if (type2) on.push_back(std::string("t.") + kStartAtColumn + " = s." + kStartAtColumn);
  std::vector<std::string> sets;
  for (const std::string& column : Without(plan.columns, flow.keys)) {
    const std::string quoted = QuoteIdentifier(column);
    sets.push_back(quoted + " = " +
                   (flow.ignore_null_updates && !type2
                        ? std::string("CASE WHEN s.") + kReset + " THEN s." + quoted + " ELSE coalesce(s." +
                              quoted + ", t." + quoted + ") END"
                        : "s." + quoted));
  }
  std::vector<std::string> inserted = plan.columns;
  if (type2) {
    sets.push_back(std::string(kEndAtColumn) + " = s." + kEndAtColumn);
    inserted.push_back(kStartAtColumn);
    inserted.push_back(kEndAtColumn);
  }
  std::string merge = "MERGE INTO " + flow.target + " AS t USING (SELECT * FROM STREAM(" + flow.source +
                      ")) AS s ON " + Join(on, " AND ") + " WHEN MATCHED AND s." + kAction +
                      " = 'delete' THEN DELETE";
  if (!sets.empty()) merge += " WHEN MATCHED THEN UPDATE SET " + Join(sets, ", ");
  return merge + " WHEN NOT MATCHED AND s." + kAction + " = 'upsert' THEN INSERT (" +
         Join(Quoted(inserted), ", ") + ") VALUES (" + Join(Quoted(inserted, "s"), ", ") + ")";
}

}  // namespace

std::string CdcTargetQuery(const CdcFlow& flow) {
  std::string query = "SELECT " + Projection(flow.columns);
  if (flow.scd_type == 2) {
    query += ", (" + flow.sequence_by + ") AS " + kStartAtColumn + ", (" + flow.sequence_by + ") AS " +
             kEndAtColumn;
  }
  return query + " FROM " + flow.source;
}

Result<CdcPlan> PlanCdc(engine::Connection& conn, const CdcFlow& flow) {
  CdcPlan plan;
  plan.flow = flow;
  if (flow.scd_type == 2 && flow.truncate_when) {
    return Status::InvalidArgument("APPLY AS TRUNCATE WHEN is for SCD type 1: a type 2 target keeps history");
  }
  if (flow.scd_type != 2 && flow.track_history) {
    return Status::InvalidArgument("TRACK HISTORY ON is for SCD type 2 (STORED AS SCD TYPE 2)");
  }
  ASSIGN_OR_RETURN(std::vector<engine::ColumnType> described,
                   conn.DescribeQuery("SELECT " + Projection(flow.columns) + ", (" + flow.sequence_by +
                                      ") AS " + kSequence + " FROM " + flow.source));
  plan.order = OrderOfChanges(described.back().type_name);
  described.pop_back();
  for (const engine::ColumnType& column : described) {
    if (AsciiLower(column.name).rfind("basin_cdc_", 0) == 0 ||
        (flow.scd_type == 2 &&
         (EqualsIgnoreCase(column.name, kStartAtColumn) || EqualsIgnoreCase(column.name, kEndAtColumn)))) {
      return Status::InvalidArgument(
          "the column " + column.name +
          " has a name AUTO CDC gives its own columns: leave it out with COLUMNS * "
          "EXCEPT (" +
          column.name + ")");
    }
    plan.columns.push_back(column.name);
  }
  for (const std::string& key : flow.keys) {
    if (!Contains(plan.columns, key)) {
      return Status::InvalidArgument("the key column " + key + " is not among the columns the flow writes (" +
                                     Join(plan.columns, ", ") + ")");
    }
  }
  plan.tracked = plan.columns;
  if (flow.track_history) {
    for (const std::string& column : flow.track_history->columns) {
      if (!Contains(plan.columns, column)) {
        return Status::InvalidArgument("TRACK HISTORY ON names " + column +
                                       ", which is not among the columns the flow writes");
      }
    }
    plan.tracked = flow.track_history->all_except ? Without(plan.columns, flow.track_history->columns)
                                                  : flow.track_history->columns;
  }
  plan.statement = MergeStatement(plan);
  return plan;
}

CdcApplier::CdcApplier(engine::Connection& conn, CdcPlan plan, std::string relation,
                       std::shared_ptr<ObjectStore> store, std::shared_ptr<const Clock> clock,
                       std::string where)
    : conn_(conn),
      plan_(std::move(plan)),
      relation_(std::move(relation)),
      files_(conn, std::move(store), where),
      clock_(std::move(clock)),
      where_(std::move(where)) {
  state_table_ = KeptTableName("temp.basin_cdc_kept");
  latest_table_ = KeptTableName(kLatest);
  floor_table_ = KeptTableName(kFloor);
}

CdcApplier::~CdcApplier() {
  for (const std::string& table : {state_table_, latest_table_, floor_table_})
    (void)conn_.Execute("DROP TABLE IF EXISTS " + table);
}

std::string CdcApplier::SameKeys(const std::string& a, const std::string& b) const {
  std::vector<std::string> same;
  for (const std::string& key : plan_.flow.keys) {
    same.push_back(a + "." + QuoteIdentifier(key) + " = " + b + "." + QuoteIdentifier(key));
  }
  return Join(same, " AND ");
}

std::string CdcApplier::Keys(const std::string& alias) const {
  return Join(Quoted(plan_.flow.keys, alias), ", ");
}

Status CdcApplier::Prepare(BatchRead& read, DeadLetterWriter& /*dead_letters*/) {
  const std::string where = where_ + " batch " + std::to_string(read.batch_id);
  RETURN_IF_ERROR(conn_.Execute(CreateTemp(kBatch, ChangeRows(plan_.flow, relation_))));
  // A change with no sequence or no key cannot be placed.
  std::vector<std::string> key_fields;
  std::vector<std::string> null_keys;
  for (const std::string& key : plan_.flow.keys) {
    key_fields.push_back(QuoteLiteral(key) + ": " + QuoteIdentifier(key));
    null_keys.push_back(QuoteIdentifier(key) + " IS NULL");
  }
  ASSIGN_OR_RETURN(
      engine::QueryResult unplaced,
      conn_.Query("SELECT CAST(to_json({" + Join(key_fields, ", ") + "}) AS VARCHAR), " + kSequence +
                  " IS NULL FROM " + kBatch + " WHERE " + kSequence + " IS NULL OR (NOT " + kTruncate +
                  " AND (" + Join(null_keys, " OR ") + ")) LIMIT 1"));
  if (!unplaced.rows.empty()) {
    const std::string key = unplaced.at(0, 0).value_or("?");
    if (unplaced.at(0, 1).value_or("") == "true") {
      return Status::InvalidArgument(where + ": the change of key " + key +
                                     " has a NULL sequence (SEQUENCE BY " + plan_.flow.sequence_by +
                                     "): every change needs one to be ordered");
    }
    return Status::InvalidArgument(where + ": a change has a NULL key " + key + " (KEYS (" +
                                   Join(plan_.flow.keys, ", ") + "))");
  }
  const int64_t now_ms = clock_->NowMs();
  // Type 1's state is kept between batches; type 2's is read back every batch.
  Status prepared;
  if (plan_.flow.scd_type == 1) {
    prepared = TakeType1State(read.batch_id);
    if (prepared.ok()) prepared = PrepareType1(read.batch_id, now_ms, state_table_);
  } else {
    prepared = conn_.Execute(CreateTemp(kState, StateShape("")));
    if (prepared.ok()) prepared = files_.Load(read.batch_id - 1, kState).status();
    if (prepared.ok()) prepared = PrepareType2(read.batch_id, now_ms, kState);
  }
  prepared = prepared.WithContext(where);
  // The tables the input view reads stay until Finish().
  for (const char* table : {kBatch, kEvents}) {
    Status dropped = conn_.Execute(std::string("DROP TABLE IF EXISTS ") + table);
    if (prepared.ok()) prepared = dropped;
  }
  return prepared;
}

std::string CdcApplier::StateShape(const std::string& more) const {
  return "SELECT " + Keys("") + ", " + kSequence + ", true AS " + kDeleted + ", 0::BIGINT AS " + kAtMs +
         ", false AS " + kIsFloor + more + " FROM " + kBatch + " LIMIT 0";
}

std::string CdcApplier::Expired(int64_t now_ms) const {
  return std::string("NOT ") + kIsFloor + " AND " + kDeleted + " AND " + kAtMs + " < " +
         std::to_string(now_ms - plan_.flow.tombstone_retention_ms);
}

Status CdcApplier::TakeType1State(int64_t batch_id) {
  const int64_t previous = batch_id - 1;
  auto join = [&]() -> Status {
    RETURN_IF_ERROR(conn_.Execute("INSERT INTO " + state_table_ + " BY NAME " + changes_));
    return ReduceType1State(state_table_, previous - 1, waiting_now_ms_);
  };
  // The tables the changes are made of are made again by the batch.
  ASSIGN_OR_RETURN(bool held, kept_.Start(batch_id, join, [] { return Status::OK(); }));
  if (held) return Status::OK();
  // Read back: its rows say which batch wrote them (the state may hold changes).
  RETURN_IF_ERROR(
      conn_.Execute(CreateTemp(state_table_, StateShape(", 0::BIGINT AS " + std::string(kBatchId)))));
  ASSIGN_OR_RETURN(std::optional<nlohmann::json> state, files_.Load(previous, state_table_));
  if (state && state->contains("base")) {
    if (!state->value("nowMs", nlohmann::json()).is_number_integer()) {
      return Status::Corruption("the state of the batch before holds changes without \"nowMs\"");
    }
    RETURN_IF_ERROR(
        ReduceType1State(state_table_, (*state)["base"].get<int64_t>(), (*state)["nowMs"].get<int64_t>()));
  }
  kept_.Hold(previous);
  return Status::OK();
}

Status CdcApplier::ReduceType1State(const std::string& state, int64_t base, int64_t now_ms) {
  // The latest batch's row of each key the changes after `base` hold (a full state written
  // by an earlier Basin has no batches: its rows are older than any change), and the
  // highest floor.
  const std::string changed_keys = "(SELECT " + Keys("") + " FROM " + state + " WHERE NOT " + kIsFloor +
                                   " AND " + kBatchId + " > " + std::to_string(base) + ")";
  RETURN_IF_ERROR(
      conn_.Execute("DELETE FROM " + state + " WHERE rowid IN (SELECT rowid FROM (SELECT s.rowid, " +
                    "row_number() OVER (PARTITION BY " + Keys("s") + " ORDER BY coalesce(s." + kBatchId +
                    ", -1) DESC) AS n FROM " + state + " AS s SEMI JOIN " + changed_keys + " AS c ON " +
                    SameKeys("c", "s") + " WHERE NOT s." + kIsFloor + ") WHERE n > 1)"));
  RETURN_IF_ERROR(conn_.Execute("DELETE FROM " + state + " WHERE rowid IN (SELECT rowid FROM " + state +
                                " WHERE " + kIsFloor + " QUALIFY row_number() OVER (ORDER BY " + kSequence +
                                " DESC) > 1)"));
  RETURN_IF_ERROR(conn_.Execute("DELETE FROM " + state + " WHERE NOT " + kIsFloor + " AND " + kSequence +
                                " < (SELECT max(" + kSequence + ") FROM " + state + " WHERE " + kIsFloor +
                                ")"));
  return conn_.Execute("DELETE FROM " + state + " WHERE " + Expired(now_ms));
}

Status CdcApplier::Finish() {
  Status finished = conn_.Execute(std::string("DROP VIEW IF EXISTS temp.") + kStreamInput);
  for (const char* table : {kBatch, kState, kEvents, kHistory, kVersions}) {
    Status dropped = conn_.Execute(std::string("DROP TABLE IF EXISTS ") + table);
    if (finished.ok()) finished = dropped;
  }
  return finished;
}

Status CdcApplier::PrepareType1(int64_t batch_id, int64_t now_ms, const std::string& state) {
  const CdcFlow& flow = plan_.flow;
  const std::string sequence = kSequence;
  // The floor the state had, and the batch's latest truncate when it is above it.
  RETURN_IF_ERROR(conn_.Execute(CreateTemp(
      floor_table_, std::string("SELECT previous, CASE WHEN ") +
                        "previous IS NULL OR truncated > previous THEN truncated END AS truncated, " +
                        "greatest(previous, truncated) AS floor FROM (SELECT (SELECT max(" + sequence +
                        ") FROM " + state + " WHERE " + kIsFloor + ") AS previous, (SELECT max(" + sequence +
                        ") FROM " + kBatch + " WHERE " + kTruncate + ") AS truncated)")));
  // The changes newer than their key's last one and the floor.
  const std::string floor_value = "(SELECT floor FROM " + floor_table_ + ")";
  const std::string events = "(SELECT b.* FROM " + std::string(kBatch) + " AS b ANTI JOIN (SELECT * FROM " +
                             state + " WHERE NOT " + kIsFloor + ") AS s ON " + SameKeys("s", "b") +
                             " AND b." + sequence + " <= s." + sequence + " WHERE NOT b." + kTruncate +
                             " AND (" + floor_value + " IS NULL OR b." + sequence + " > " + floor_value +
                             "))";
  // Each key's outcome: deleted when its latest change deletes, otherwise the values of its
  // latest change; with IGNORE NULL UPDATES, each column's last non-NULL value since the
  // key's latest delete (which takes a window over the key's changes).
  const std::string& order = plan_.order;
  std::vector<std::string> values;
  for (const std::string& column : Without(plan_.columns, flow.keys)) {
    const std::string quoted = QuoteIdentifier(column);
    values.push_back(flow.ignore_null_updates
                         ? "arg_max(" + quoted + ", " + sequence + ") FILTER (WHERE NOT " + kDelete +
                               " AND (last_delete IS NULL OR " + sequence + " > last_delete)) AS " + quoted
                         : "arg_max_null(" + quoted + ", " + order + ") AS " + quoted);
  }
  const std::string keys = Keys("");
  const std::string changes = flow.ignore_null_updates
                                  ? "(SELECT *, max(CASE WHEN " + std::string(kDelete) + " THEN " + sequence +
                                        " END) OVER (PARTITION BY " + keys + ") AS last_delete FROM " +
                                        events + ")"
                                  : events;
  RETURN_IF_ERROR(conn_.Execute(
      CreateTemp(latest_table_, "SELECT " + keys + ", " + (values.empty() ? "" : Join(values, ", ") + ", ") +
                                    "max(" + sequence + ") AS " + sequence + ", arg_max(" + kDelete + ", " +
                                    order + ") AS " + kDelete + ", bool_or(" + kDelete + ") AS " + kReset +
                                    " FROM " + changes + " GROUP BY " + keys)));
  // The state's keys the batch did not change (its floor aside).
  const std::string unchanged = "(SELECT s.* FROM " + state + " AS s ANTI JOIN " + latest_table_ +
                                " AS l ON " + SameKeys("l", "s") + " WHERE NOT s." + kIsFloor + ")";
  // What the MERGE applies: each key's outcome, and a truncate's deletes of the keys whose
  // latest change is older than it.
  std::string input = "SELECT * EXCLUDE (" + sequence + ", " + kDelete + "), CASE WHEN " + kDelete +
                      " THEN 'delete' ELSE 'upsert' END AS " + kAction + " FROM " + latest_table_;
  if (flow.truncate_when) {
    input += " UNION ALL BY NAME SELECT " + Keys("s") + ", 'delete' AS " + kAction + ", true AS " + kReset +
             " FROM " + unchanged + " AS s, " + floor_table_ + " AS f WHERE NOT s." + kDeleted + " AND s." +
             sequence + " < f.truncated";
  }
  RETURN_IF_ERROR(conn_.Execute(std::string("CREATE OR REPLACE TEMP VIEW ") + kStreamInput + " AS " + input));
  // The state: keys not changed (but those a truncate removed, and tombstones past their
  // retention), the changed keys' latest changes, and the floor.
  const std::string kept = "SELECT s.* FROM " + unchanged + " AS s, " + floor_table_ +
                           " AS f WHERE NOT coalesce(s." + sequence + " < f.truncated, false) AND NOT (" +
                           Expired(now_ms) + ")";
  const std::string written = std::to_string(now_ms) + "::BIGINT AS " + kAtMs + ", " +
                              std::to_string(batch_id) + "::BIGINT AS " + kBatchId;
  const std::string latest = "SELECT " + keys + ", " + sequence + ", " + kDelete + " AS " + kDeleted + ", " +
                             written + ", false AS " + kIsFloor + " FROM " + latest_table_;
  const std::string floor = "SELECT floor AS " + sequence + ", " + written + ", true AS " + kIsFloor +
                            " FROM " + floor_table_ + " WHERE floor IS NOT NULL";
  // The state written is what the batch changed (its keys' rows and the floor), or all it keeps.
  ASSIGN_OR_RETURN(engine::QueryResult counted,
                   conn_.Query(std::string("SELECT (SELECT count(*) FROM ") + latest_table_ +
                               ") + (SELECT count(*) FROM " + floor_table_ + " WHERE floor IS NOT NULL)"));
  // The batch's changes join the state in memory when the next batch starts
  // (TakeType1State), from the tables they are made of, kept until then.
  changes_ = latest + " UNION ALL BY NAME " + floor;
  RETURN_IF_ERROR(files_.SaveChanges(batch_id, {{"nowMs", now_ms}},
                                     std::stoll(counted.at(0, 0).value_or("0")), changes_,
                                     kept + " UNION ALL BY NAME " + changes_));
  waiting_now_ms_ = now_ms;
  kept_.Wait(batch_id);
  return Status::OK();
}

Status CdcApplier::PrepareType2(int64_t batch_id, int64_t now_ms, const std::string& state) {
  const CdcFlow& flow = plan_.flow;
  const std::string sequence = kSequence;
  const std::string keys = Keys("");
  const std::vector<std::string> values = Without(plan_.columns, flow.keys);
  const std::string start = kStartAtColumn;
  const std::string end = kEndAtColumn;
  const std::string touched = "(SELECT DISTINCT " + keys + " FROM " + kBatch + ")";
  // The versions the target holds of the keys the batch changes.
  RETURN_IF_ERROR(conn_.Execute(CreateTemp(kHistory, "SELECT t.* FROM " + flow.target + " AS t SEMI JOIN " +
                                                         touched + " AS b ON " + SameKeys("t", "b"))));
  // Every change of those keys, one per sequence (the first applied: the target's and the
  // state's before the batch's): the versions' starts, the deletes that ended versions,
  // the state's deletes and upserts that repeated a version (with its values), and the
  // batch's changes.
  const std::string kept_state =
      "(SELECT * FROM " + state + " AS s SEMI JOIN " + touched + " AS b ON " + SameKeys("s", "b") + ")";
  const std::string changes =
      "SELECT * EXCLUDE (origin) FROM (SELECT " + start + " AS " + sequence + ", false AS " + kDelete +
      ", 0 AS origin, * EXCLUDE (" + start + ", " + end + ") FROM " + kHistory +
      " UNION ALL BY NAME SELECT " + Keys("h") + ", h." + end + " AS " + sequence + ", true AS " + kDelete +
      ", 0 AS origin FROM " + kHistory + " AS h WHERE h." + end +
      " IS NOT NULL AND NOT EXISTS (SELECT 1 FROM " + kHistory + " AS n WHERE " + SameKeys("n", "h") +
      " AND n." + start + " = h." + end + ") UNION ALL BY NAME SELECT " + Keys("s") + ", s." + sequence +
      ", true AS " + kDelete + ", 0 AS origin FROM " + kept_state + " AS s WHERE s." + kDeleted +
      " UNION ALL BY NAME SELECT h.* EXCLUDE (" + start + ", " + end + "), s." + sequence + ", false AS " +
      kDelete + ", 0 AS origin FROM " + kept_state + " AS s JOIN " + kHistory + " AS h ON " +
      SameKeys("s", "h") + " AND h." + start + " <= s." + sequence + " AND (h." + end + " IS NULL OR s." +
      sequence + " < h." + end + ") WHERE NOT s." + kDeleted + " UNION ALL BY NAME SELECT * EXCLUDE (" +
      kTruncate + "), 1 AS origin FROM " + kBatch + ") QUALIFY row_number() OVER (PARTITION BY " + keys +
      ", " + sequence + " ORDER BY origin, " + kDelete + " DESC) = 1";
  // With IGNORE NULL UPDATES, a NULL takes the value the key had before (since its last delete).
  std::string filled = changes;
  if (flow.ignore_null_updates && !values.empty()) {
    std::vector<std::string> replaced;
    for (const std::string& column : values) {
      const std::string quoted = QuoteIdentifier(column);
      replaced.push_back("coalesce(" + quoted + ", last_value(" + quoted +
                         " IGNORE NULLS) OVER (PARTITION BY " + keys + ", life ORDER BY " + sequence +
                         " ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)) AS " + quoted);
    }
    filled = "SELECT * EXCLUDE (life) REPLACE (" + Join(replaced, ", ") + ") FROM (SELECT *, sum(CAST(" +
             kDelete + " AS BIGINT)) OVER (PARTITION BY " + keys + " ORDER BY " + sequence +
             " ROWS UNBOUNDED PRECEDING) AS life FROM (" + changes + "))";
  }
  // A version starts at an upsert after a delete, or one that changes the tracked columns;
  // the others repeat the version before (the state keeps their sequences, so that a late
  // change between them splits the version there).
  const std::string tracked = "row(" + Join(Quoted(plan_.tracked), ", ") + ")";
  const std::string window = "PARTITION BY " + keys + " ORDER BY " + sequence;
  const std::string marked = "SELECT *, " + std::string(kDelete) + " OR coalesce(lag(" + kDelete +
                             ") OVER (" + window + "), true) OR lag(" + tracked + ") OVER (" + window +
                             ") IS DISTINCT FROM " + tracked + " AS starts FROM (" + filled + ")";
  RETURN_IF_ERROR(
      conn_.Execute(CreateTemp(kEvents, "SELECT *, sum(CAST(starts AS BIGINT)) OVER (" + window +
                                            " ROWS UNBOUNDED PRECEDING) AS version FROM (" + marked + ")")));
  // A version takes its last upsert's values and ends where the next version or delete starts.
  std::vector<std::string> last_values;
  for (const std::string& column : values) {
    last_values.push_back("arg_max_null(" + QuoteIdentifier(column) + ", " + sequence + ") AS " +
                          QuoteIdentifier(column));
  }
  const std::string versions = "SELECT " + keys + ", " +
                               (last_values.empty() ? "" : Join(last_values, ", ") + ", ") + "bool_or(" +
                               kDelete + ") AS deletes, min(" + sequence + ") AS " + start + " FROM " +
                               kEvents + " GROUP BY " + keys + ", version";
  RETURN_IF_ERROR(conn_.Execute(CreateTemp(
      kVersions, "SELECT * EXCLUDE (deletes) FROM (SELECT *, lead(" + start + ") OVER (PARTITION BY " + keys +
                     " ORDER BY " + start + ") AS " + end + " FROM (" + versions + ")) WHERE NOT deletes")));
  // What the MERGE applies: the versions that are new or changed, and the deletes of the
  // versions no longer there.
  std::vector<std::string> compared_v = Quoted(values, "v");
  std::vector<std::string> compared_h = Quoted(values, "h");
  compared_v.push_back("v." + end);
  compared_h.push_back("h." + end);
  RETURN_IF_ERROR(conn_.Execute(
      std::string("CREATE OR REPLACE TEMP VIEW ") + kStreamInput + " AS SELECT v.*, 'upsert' AS " + kAction +
      " FROM " + kVersions + " AS v LEFT JOIN " + kHistory + " AS h ON " + SameKeys("v", "h") + " AND v." +
      start + " = h." + start + " WHERE h." + start + " IS NULL OR row(" + Join(compared_v, ", ") +
      ") IS DISTINCT FROM row(" + Join(compared_h, ", ") + ") UNION ALL BY NAME SELECT " + Keys("h") +
      ", h." + start + ", 'delete' AS " + kAction + " FROM " + kHistory +
      " AS h WHERE NOT EXISTS (SELECT 1 FROM " + kVersions + " AS v WHERE " + SameKeys("v", "h") + " AND v." +
      start + " = h." + start + ")"));
  // The state: the other keys' deletes and repeats within the retention, and the touched
  // keys' (their retention starts again).
  return files_.Save(batch_id, {},
                     "SELECT s.* FROM " + state + " AS s WHERE s." + kAtMs +
                         " >= " + std::to_string(now_ms - flow.tombstone_retention_ms) +
                         " AND NOT EXISTS (SELECT 1 FROM " + touched + " AS b WHERE " + SameKeys("b", "s") +
                         ") UNION ALL BY NAME SELECT " + keys + ", " + sequence + ", " + kDelete + " AS " +
                         kDeleted + ", " + std::to_string(now_ms) + "::BIGINT AS " + kAtMs + ", false AS " +
                         kIsFloor + " FROM " + kEvents + " WHERE " + kDelete + " OR NOT starts");
}

}  // namespace basin::stream
