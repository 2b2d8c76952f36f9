// AUTO CDC (docs/pipelines.md, "AUTO CDC"): the change events of a source table applied to a
// target table by key, in the order SEQUENCE BY gives them, whatever order they arrive in.
//
// A flow is a stream (stream/runner.h, StreamRunner::OpenCdc) whose statement is a MERGE INTO
// the target reading the relation kStreamInput, which CdcApplier::Prepare fills with each
// batch's changes to the target: so the batch commits once, with the stream's txn, and a
// batch run again after a crash recomputes the same changes from the state of the batch
// before (stream/batch_state.h).
//
// Type 1 (the target holds each key's latest row): the state holds every key's latest
// sequence and whether it was deleted (a tombstone, kept `tombstone_retention_ms` after the
// delete was applied), and the highest sequence of a truncate (the floor). A change whose
// sequence is not above its key's (or the floor) is late and dropped: a late update never
// overwrites a newer row, a late delete never removes one, and while its tombstone is kept
// a late insert never resurrects a deleted key. A truncate deletes every row whose latest
// change is older than it. With IGNORE NULL UPDATES, a NULL leaves the column as it was
// (unless the key was deleted since); a late change is still dropped whole.
//
// Type 2 (the target holds every version of each key, __START_AT to __END_AT, the current
// one with __END_AT NULL): a batch rebuilds the versions of the keys it touches from the
// versions the target holds, the deletes the state keeps (every delete, for the retention;
// those that closed a version are read from the target too) and the batch's changes, sorted
// by sequence: an upsert starts a version unless it repeats the tracked columns of the one
// before (then it updates that version in place), and a version ends where the next change
// of its key is. Late changes land where their sequence puts them.
//
// Two changes of one key with the same sequence are one: the first applied is kept (in one
// batch, a delete). A change with a NULL sequence or a NULL key is an error naming the key.
//
// Thread safety: one thread (the runner's).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "basin/clock.h"
#include "basin/object_store.h"
#include "basin/status.h"
#include "engine/duckdb.h"
#include "sql/grammar/statement.h"
#include "stream/batch_state.h"

namespace basin::stream {

// The columns of a type 2 target that say when a version was current.
inline constexpr char kStartAtColumn[] = "__START_AT";
inline constexpr char kEndAtColumn[] = "__END_AT";

inline constexpr int64_t kDefaultTombstoneRetentionMs = int64_t{2} * 24 * 3600 * 1000;

struct CdcFlow {
  std::string target;  // the target table as SQL names it: "schema"."table"
  std::string source;  // the source table likewise
  std::vector<std::string> keys;
  std::string sequence_by;                   // SQL expression over a source row
  std::optional<std::string> delete_when;    // SQL condition over a source row
  std::optional<std::string> truncate_when;  // type 1 only
  bool ignore_null_updates = false;
  std::optional<sql::grammar::ColumnSelection> columns;  // nullopt: every column of the source
  int scd_type = 1;
  std::optional<sql::grammar::ColumnSelection> track_history;  // type 2; nullopt: every column
  int64_t tombstone_retention_ms = kDefaultTombstoneRetentionMs;
};

// A flow checked against its source's columns.
struct CdcPlan {
  CdcFlow flow;
  std::vector<std::string> columns;  // the target's data columns, as the source names them
  std::vector<std::string> tracked;  // type 2: the columns whose change starts a version
  std::string statement;             // the MERGE a stream runs, reading STREAM(source)
  // Type 1: what orders a key's changes, from a change's kSequence and kDelete columns (a
  // delete after an upsert of the same sequence): one number when the sequence is an
  // integer, which DuckDB compares faster than the struct it is otherwise.
  std::string order;
};

// The query whose columns the target is created with: the selected columns, then for type 2
// __START_AT and __END_AT, typed as the sequence.
std::string CdcTargetQuery(const CdcFlow& flow);

// InvalidArgument naming what, when a key or tracked column is not among the selected
// columns, a selected column has a name the flow needs (__START_AT, __END_AT, basin_cdc_*),
// or a type 2 flow truncates.
Result<CdcPlan> PlanCdc(engine::Connection& conn, const CdcFlow& flow);

class CdcApplier : public StatefulInput {
 public:
  // The applier of `plan` whose batches read the STREAM source's `relation` (as DuckDB reads
  // it), with its state in `store` (the checkpoint's state/ folder).
  CdcApplier(engine::Connection& conn, CdcPlan plan, std::string relation, std::shared_ptr<ObjectStore> store,
             std::shared_ptr<const Clock> clock, std::string where);
  ~CdcApplier() override;
  CdcApplier(const CdcApplier&) = delete;
  CdcApplier& operator=(const CdcApplier&) = delete;

  // StatefulInput: fills kStreamInput with the rows the MERGE applies (the flow's columns,
  // basin_cdc_action 'upsert' or 'delete', basin_cdc_reset; for type 2 __START_AT and
  // __END_AT). InvalidArgument naming the key for a change with a NULL sequence or key.
  Status Prepare(BatchRead& read, DeadLetterWriter& dead_letters) override;
  Status Finish() override;

 private:
  // Fills state_table_ with type 1's state after batch `batch_id` - 1: the one in memory
  // (with the changes of that batch when it was the last one prepared, which committed since
  // the next batch runs), else read back from the checkpoint.
  Status TakeType1State(int64_t batch_id);
  // Reduces a type 1 `state` table holding rows written since the full state of batch `base`
  // to the one the last batch of them (at `now_ms`) kept: each key's row from the latest
  // batch that wrote it, the highest floor, and neither the keys below it nor the tombstones
  // past their retention.
  Status ReduceType1State(const std::string& state, int64_t base, int64_t now_ms);
  // Fill kStreamInput and save batch `batch_id`'s state, from `state` (the batch before's).
  Status PrepareType1(int64_t batch_id, int64_t now_ms, const std::string& state);
  Status PrepareType2(int64_t batch_id, int64_t now_ms, const std::string& state);
  // A SELECT of no rows shaped as the state (with the columns `more` lists), from the batch.
  std::string StateShape(const std::string& more) const;
  // Whether a type 1 state's row is a tombstone past its retention at `now_ms`, in SQL.
  std::string Expired(int64_t now_ms) const;
  // Whether the rows of `table` (alias a) and `other` (alias b) have equal keys, in SQL.
  std::string SameKeys(const std::string& a, const std::string& b) const;
  // The keys, as `alias.key` (or bare when alias is empty), comma-separated.
  std::string Keys(const std::string& alias) const;

  engine::Connection& conn_;
  CdcPlan plan_;
  std::string relation_;
  BatchStateFiles files_;
  std::shared_ptr<const Clock> clock_;
  std::string where_;
  // Type 1: the state kept in memory between batches (as StreamState keeps its own), named
  // per applier, since a session may run several flows' streams.
  std::string state_table_;
  // Type 1's tables of each key's outcome and of the floor, kept after a batch: its changes
  // (`changes_`, a query of them, from when it ran at `waiting_now_ms_`) join the state when
  // the next batch starts.
  std::string latest_table_;
  std::string floor_table_;
  std::string changes_;
  int64_t waiting_now_ms_ = 0;
  KeptState kept_;
};

}  // namespace basin::stream
