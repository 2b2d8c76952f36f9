#include <algorithm>
#include <atomic>
#include <map>

#include "commands/dml_internal.h"
#include "commands/maintenance_internal.h"
#include "commands/table_features.h"
#include "common/uuid.h"
#include "delta/deletion_vector.h"
#include "delta/protocol.h"
#include "delta/skipping.h"

namespace basin::commands::dml {

namespace {

using engine::QuoteIdentifier;
using engine::QuoteLiteral;
using nlohmann::json;

constexpr const char* kChangeTypeColumn = "_change_type";

const std::string kFile = QuoteIdentifier(engine::kScanFileColumn);
const std::string kRow = QuoteIdentifier(engine::kScanRowIndexColumn);
const std::string kAction = QuoteIdentifier(kActionColumn);

// A value's text for an error message, cut short so one bad row cannot flood it.
std::string ValueText(const std::string& expr) {
  return "COALESCE(left(CAST(" + expr + " AS VARCHAR), 100), 'NULL')";
}

int64_t ToInt(const std::optional<std::string>& cell) { return cell ? std::stoll(*cell) : 0; }

// The file's stats with tightBounds false: min/max still bound the live rows, but no
// longer tightly once a DV hides some. Unreadable stats are dropped rather than trusted.
std::optional<std::string> LooseStats(const std::optional<std::string>& stats_text) {
  if (!stats_text) return std::nullopt;
  json stats = json::parse(*stats_text, nullptr, false);
  if (stats.is_discarded() || !stats.is_object()) return std::nullopt;
  stats["tightBounds"] = false;
  return stats.dump();
}

int64_t SumRecords(const std::vector<delta::AddFile>& adds) {
  int64_t total = 0;
  for (const auto& add : adds) total += delta::StatsNumRecords(add).value_or(0);
  return total;
}

int64_t SumBytes(const std::vector<delta::AddFile>& adds) {
  int64_t total = 0;
  for (const auto& add : adds) total += add.size;
  return total;
}

// The snapshot index of each file the change table touches, with its changed positions as
// [first, last] runs (consecutive positions collapse, so a bulk delete is a few rows).
struct TouchedFile {
  size_t index = 0;
  std::string read_path;  // as the scan named it
  std::vector<std::pair<int64_t, int64_t>> runs;
};

Result<std::vector<TouchedFile>> TouchedFiles(engine::Connection& conn, const engine::ScanPlan& candidates,
                                              const std::string& changes, bool with_runs,
                                              const std::string& where) {
  std::string sql;
  if (with_runs) {
    sql = "SELECT " + kFile + ", min(" + kRow + "), max(" + kRow + ") FROM (SELECT " + kFile + ", " + kRow +
          ", " + kRow + " - row_number() OVER (PARTITION BY " + kFile + " ORDER BY " + kRow +
          ") AS __basin_run FROM " + changes + " WHERE " + kFile + " IS NOT NULL) GROUP BY " + kFile +
          ", __basin_run ORDER BY 1, 2";
  } else {
    sql = "SELECT DISTINCT " + kFile + " FROM " + changes + " WHERE " + kFile + " IS NOT NULL ORDER BY 1";
  }
  ASSIGN_OR_RETURN(engine::QueryResult result, conn.Query(sql));
  std::vector<TouchedFile> touched;
  for (const auto& row : result.rows) {
    const std::string& path = row[0].value_or("");
    if (touched.empty() || touched.back().read_path != path) {
      auto it = candidates.file_index_by_path.find(path);
      if (it == candidates.file_index_by_path.end()) {
        return Status::Internal(where + ": changed row in " + path + ", which the command did not read");
      }
      touched.push_back(TouchedFile{it->second, path, {}});
    }
    if (with_runs) touched.back().runs.emplace_back(ToInt(row[1]), ToInt(row[2]));
  }
  return touched;
}

// The rows `add`'s data file holds, counting those its deletion vector hides, for a file
// whose statistics lack numRecords.
Result<int64_t> PhysicalRows(engine::Connection& conn, const delta::Snapshot& snapshot,
                             const delta::AddFile& add) {
  auto file = std::make_shared<delta::Snapshot>();
  file->version = snapshot.version;
  file->protocol = snapshot.protocol;
  file->metadata = snapshot.metadata;
  file->schema = snapshot.schema;
  file->store = snapshot.store;
  file->table_root = snapshot.table_root;
  delta::AddFile whole = add;
  whole.deletion_vector.reset();
  file->files = delta::FileList(std::vector<delta::AddFile>{std::move(whole)});
  ASSIGN_OR_RETURN(engine::ScanPlan plan, engine::BuildScanSql(file, conn));
  ASSIGN_OR_RETURN(engine::QueryResult count, conn.Query("SELECT count(*) FROM (" + plan.sql + ")"));
  return ToInt(count.at(0, 0));
}

// Marks the touched files' changed rows deleted in deletion vectors: one new DV file holds
// every DV of the commit. Files left without live rows are removed instead.
Status WriteDeletionVectors(const DmlTable& table, const std::vector<TouchedFile>& touched,
                            delta::Transaction& txn, AppliedChanges& applied) {
  const delta::Snapshot& snapshot = *table.snapshot;
  engine::Connection& conn = *table.ctx->conn;
  delta::DeletionVectorDescriptor file_descriptor;
  file_descriptor.storage_type = 'u';
  file_descriptor.path_or_inline_dv = delta::EncodeDeletionVectorPath("", NewUuidBytes());
  std::string dv_file;
  for (const TouchedFile& file : touched) {
    const delta::AddFile& add = snapshot.files[file.index];
    const std::string context = table.where + " file " + add.path;
    std::vector<uint64_t> deleted;
    bool had_dv = add.deletion_vector.has_value() && add.deletion_vector->cardinality > 0;
    if (had_dv) {
      ASSIGN_OR_RETURN(deleted, delta::LoadDeletionVector(*snapshot.store, *add.deletion_vector, context));
    }
    for (const auto& [first, last] : file.runs) {
      for (int64_t pos = first; pos <= last; pos++) deleted.push_back(static_cast<uint64_t>(pos));
    }
    std::sort(deleted.begin(), deleted.end());
    deleted.erase(std::unique(deleted.begin(), deleted.end()), deleted.end());

    std::optional<int64_t> physical_rows = delta::StatsNumRecords(add);
    if (!physical_rows) {
      ASSIGN_OR_RETURN(physical_rows, PhysicalRows(conn, snapshot, add));
    }
    txn.Remove(delta::RemoveOf(add));
    if (static_cast<int64_t>(deleted.size()) >= *physical_rows) {
      applied.removed_files++;
      applied.removed_bytes += add.size;
      if (had_dv) applied.deletion_vectors_removed++;
      continue;
    }
    std::string bitmap = delta::SerializeRoaringBitmapArray(deleted);
    std::string encoded = delta::EncodeDeletionVectorFile(bitmap);
    // The file's version byte comes once; each further DV starts at its size field.
    if (!dv_file.empty()) encoded.erase(0, 1);
    delta::DeletionVectorDescriptor dv = file_descriptor;
    dv.offset = static_cast<int32_t>(dv_file.empty() ? 1 : dv_file.size());
    dv.size_in_bytes = static_cast<int32_t>(bitmap.size());
    dv.cardinality = static_cast<int64_t>(deleted.size());
    dv_file += encoded;

    delta::AddFile marked = add;
    marked.deletion_vector = dv;
    marked.data_change = true;
    marked.stats = LooseStats(delta::StatsJson(add));
    marked.parsed_stats.reset();
    txn.Add(std::move(marked));
    if (had_dv) {
      applied.deletion_vectors_updated++;
    } else {
      applied.deletion_vectors_added++;
    }
  }
  if (dv_file.empty()) return Status::OK();
  ASSIGN_OR_RETURN(std::string key, delta::DeletionVectorKey(file_descriptor));
  return snapshot.store->Put(key, dv_file).WithContext(table.where + ": writing deletion vector file " + key);
}

// Writes change feed rows (see WriteChangeRows) and adds their cdc actions to `txn`.
Status WriteChangeFiles(const DmlTable& table, const std::string& rows_sql, delta::Transaction& txn,
                        AppliedChanges& applied) {
  ASSIGN_OR_RETURN(std::vector<delta::CdcFile> files,
                   WriteChangeRows(*table.ctx->conn, table.target, rows_sql));
  for (delta::CdcFile& file : files) {
    txn.AddChangeFile(std::move(file));
    applied.added_change_files++;
  }
  return Status::OK();
}

std::atomic<uint64_t> temp_counter{0};

}  // namespace

TempTables::~TempTables() {
  for (auto it = names_.rbegin(); it != names_.rend(); ++it) {
    // Best effort: a leftover temporary table goes away with the connection anyway.
    (void)conn_.Execute("DROP TABLE IF EXISTS " + *it);
  }
}

std::string TempTables::NewTable(std::string_view what) {
  std::string name =
      "temp.main." +
      QuoteIdentifier("__basin_dml_" + std::to_string(temp_counter.fetch_add(1)) + "_" + std::string(what));
  names_.push_back(name);
  return name;
}

void TempTables::Adopt(const engine::ScanPlan& plan) { scans_.push_back(plan.registration); }

Result<DmlTable> OpenDmlTable(const CommandContext& ctx, std::shared_ptr<const delta::Snapshot> snapshot,
                              DmlMode mode, std::string_view operation, bool changes_rows) {
  DmlTable table;
  table.ctx = &ctx;
  table.where = "table " + snapshot->table_root + " version " + std::to_string(snapshot->version);
  RETURN_IF_ERROR(delta::CheckWritable(snapshot->protocol, snapshot->schema, table.where));
  const delta::Metadata& metadata = snapshot->metadata;
  if (changes_rows && TablePropertyIsTrue(metadata, "delta.appendOnly")) {
    return Status::InvalidArgument(std::string(operation) + " cannot change or delete rows of " +
                                   table.where + ": it is append-only (delta.appendOnly=true)");
  }
  table.deletion_vectors =
      mode == DmlMode::kDeletionVectors ||
      (mode == DmlMode::kTableDefault && TablePropertyIsTrue(metadata, "delta.enableDeletionVectors"));
  if (table.deletion_vectors && !(snapshot->protocol.HasReaderFeature("deletionVectors") &&
                                  snapshot->protocol.HasWriterFeature("deletionVectors"))) {
    return Status::InvalidArgument(std::string(operation) + " with deletion vectors on " + table.where +
                                   ": its protocol lacks the deletionVectors feature (set "
                                   "delta.enableDeletionVectors = true first)");
  }
  table.change_data_feed = TablePropertyIsTrue(metadata, "delta.enableChangeDataFeed");
  table.target.store = snapshot->store;
  table.target.table_root = snapshot->table_root;
  table.target.protocol = snapshot->protocol;
  table.target.metadata = metadata;
  table.target.schema = snapshot->schema;
  table.target.file_layout = ctx.file_layout;
  table.snapshot = std::move(snapshot);
  return table;
}

delta::Predicate PredicateOf(const std::string& expression, const delta::Snapshot& snapshot,
                             const engine::PredicateScope& scope) {
  auto predicate = engine::ParsePredicate(expression, snapshot.schema, scope);
  return predicate.ok() ? *predicate : delta::Predicate();
}

Candidates SelectCandidates(const delta::Snapshot& snapshot, delta::Predicate predicate) {
  Candidates candidates;
  candidates.files = delta::FilesMatching(snapshot, predicate);
  candidates.predicate = std::move(predicate);
  return candidates;
}

Result<engine::ScanPlan> ScanWithPositions(const DmlTable& table, const std::vector<size_t>& files,
                                           TempTables& temps) {
  engine::ScanOptions options;
  options.file_indexes = files;
  options.row_positions = true;
  auto plan = engine::BuildScanSql(table.snapshot, *table.ctx->conn, options);
  if (!plan.ok()) return plan.status();
  temps.Adopt(*plan);
  return plan;
}

std::string ColumnsFrom(const delta::StructType& schema, const delta::StructType& available,
                        std::string_view qualifier) {
  std::string out;
  for (const delta::StructField& field : schema.fields) {
    if (!out.empty()) out += ", ";
    if (available.Find(field.name) != nullptr) {
      out += std::string(qualifier) + "." + QuoteIdentifier(field.name);
    } else {
      out += "CAST(NULL AS " + field.type->ToDuckDBType() + ")";
    }
    out += " AS " + QuoteIdentifier(field.name);
  }
  return out;
}

Status CheckGeneratedAssignments(const DmlTable& table, const std::string& changes,
                                 std::string_view operation, const GeneratedAssignments& assigned) {
  if (assigned.empty()) return Status::OK();
  const delta::StructType& schema = table.target.schema;
  // The new rows as they would be stored: every column cast to its type, so the
  // expression sees what a later read of the row would.
  std::string casts;
  for (const delta::StructField& field : schema.fields) {
    const std::string name = QuoteIdentifier(field.name);
    casts +=
        (casts.empty() ? "" : ", ") + ("CAST(" + name + " AS " + field.type->ToDuckDBType() + ") AS " + name);
  }
  for (const auto& [column, rows] : assigned) {
    const delta::StructField* field = schema.Find(column);
    std::optional<std::string> generation = field == nullptr ? std::nullopt : field->GenerationExpression();
    if (!generation) continue;
    const std::string name = QuoteIdentifier(field->name);
    const std::string computed = "CAST((" + *generation + ") AS " + field->type->ToDuckDBType() + ")";
    auto differing = table.ctx->conn->Query(
        "SELECT " + ValueText(name) + ", " + ValueText(computed) + " FROM (SELECT * REPLACE (" + casts +
        ") FROM " + changes + " WHERE " + kAction + " IN ('update', 'insert') AND (" + rows +
        ")) AS __basin_new WHERE " + name + " IS DISTINCT FROM " + computed + " LIMIT 1");
    if (!differing.ok()) return differing.status().WithContext(std::string(operation) + " " + table.where);
    if (differing->row_count() == 0) continue;
    return Status::InvalidArgument(std::string(operation) + " " + table.where + ": column " + field->name +
                                   " is generated as (" + *generation + "); the value given, " +
                                   differing->at(0, 0).value_or("NULL") + ", is not " +
                                   differing->at(0, 1).value_or("NULL"));
  }
  return Status::OK();
}

Status RemoveWholeFiles(const DmlTable& table, const std::vector<size_t>& files, bool with_change_data,
                        TempTables& temps, delta::Transaction& txn, AppliedChanges& applied) {
  for (size_t index : files) {
    const delta::AddFile& add = table.snapshot->files[index];
    txn.Remove(delta::RemoveOf(add));
    applied.removed_files++;
    applied.removed_bytes += add.size;
    applied.deleted_rows += delta::StatsNumRecords(add).value_or(0);
    if (add.deletion_vector) {
      applied.deleted_rows -= add.deletion_vector->cardinality;
      applied.deletion_vectors_removed++;
    }
  }
  if (!with_change_data || files.empty()) return Status::OK();
  ASSIGN_OR_RETURN(engine::ScanPlan scan, ScanWithPositions(table, files, temps));
  return WriteChangeFiles(table,
                          "SELECT " + ColumnsFrom(table.target.schema, table.snapshot->schema, "__basin_r") +
                              ", 'delete' AS " + kChangeTypeColumn + " FROM (" + scan.sql + ") AS __basin_r",
                          txn, applied);
}

Result<AppliedChanges> ApplyChanges(const DmlTable& table, const engine::ScanPlan& candidates,
                                    const std::string& changes, bool with_values, TempTables& temps,
                                    delta::Transaction& txn) {
  engine::Connection& conn = *table.ctx->conn;
  const delta::StructType& schema = table.target.schema;
  AppliedChanges applied;
  ASSIGN_OR_RETURN(engine::QueryResult counts,
                   conn.Query("SELECT " + kAction + ", count(*) FROM " + changes + " GROUP BY ALL"));
  for (const auto& row : counts.rows) {
    const std::string action = row[0].value_or("");
    int64_t n = ToInt(row[1]);
    if (action == "delete") applied.deleted_rows = n;
    if (action == "update") applied.updated_rows = n;
    if (action == "insert") applied.inserted_rows = n;
  }
  if (applied.deleted_rows + applied.updated_rows + applied.inserted_rows == 0) return applied;

  table.ctx->Report("writing", 0);
  ASSIGN_OR_RETURN(std::vector<TouchedFile> touched,
                   TouchedFiles(conn, candidates, changes, table.deletion_vectors, table.where));
  std::string touched_scan;
  if (!touched.empty() && (!table.deletion_vectors || table.change_data_feed)) {
    std::vector<size_t> indexes;
    for (const TouchedFile& file : touched) indexes.push_back(file.index);
    ASSIGN_OR_RETURN(engine::ScanPlan plan, ScanWithPositions(table, indexes, temps));
    touched_scan = "(" + plan.sql + ")";
  }
  const std::string changed_positions = "(SELECT " + kFile + ", " + kRow + ", " + kAction + " FROM " +
                                        changes + " WHERE " + kFile + " IS NOT NULL)";
  const std::string on_position =
      " ON __basin_r." + kFile + " = __basin_c." + kFile + " AND __basin_r." + kRow + " = __basin_c." + kRow;
  const std::string new_rows = with_values && applied.updated_rows + applied.inserted_rows > 0
                                   ? "SELECT " + ColumnsFrom(schema, schema, "__basin_c") + " FROM " +
                                         changes + " AS __basin_c WHERE " + kAction +
                                         " IN ('update', 'insert')"
                                   : "";

  std::string rows_sql = new_rows;
  if (table.deletion_vectors) {
    RETURN_IF_ERROR(WriteDeletionVectors(table, touched, txn, applied));
  } else {
    for (const TouchedFile& file : touched) {
      const delta::AddFile& add = table.snapshot->files[file.index];
      txn.Remove(delta::RemoveOf(add));
      applied.removed_files++;
      applied.removed_bytes += add.size;
      if (add.deletion_vector) applied.deletion_vectors_removed++;
    }
    if (!touched.empty()) {
      std::string kept = "SELECT " + ColumnsFrom(schema, table.snapshot->schema, "__basin_r") + " FROM " +
                         touched_scan + " AS __basin_r ANTI JOIN " + changed_positions + " AS __basin_c" +
                         on_position;
      rows_sql = rows_sql.empty() ? kept : kept + "\nUNION ALL " + rows_sql;
    }
  }
  if (!rows_sql.empty()) {
    ASSIGN_OR_RETURN(std::string stored, StoredRowsSql(table.target, rows_sql));
    ASSIGN_OR_RETURN(std::vector<delta::AddFile> adds, WriteRows(conn, table.target, stored));
    applied.added_files += static_cast<int64_t>(adds.size());
    applied.added_bytes += SumBytes(adds);
    if (!table.deletion_vectors) {
      applied.copied_rows = SumRecords(adds) - applied.updated_rows - applied.inserted_rows;
    }
    for (delta::AddFile& add : adds) txn.Add(std::move(add));
  }

  if (table.change_data_feed) {
    std::vector<std::string> pieces;
    if (!touched.empty()) {
      pieces.push_back("SELECT " + ColumnsFrom(schema, table.snapshot->schema, "__basin_r") +
                       ", CASE __basin_c." + kAction +
                       " WHEN 'delete' THEN 'delete' ELSE 'update_preimage' END AS " + kChangeTypeColumn +
                       " FROM " + touched_scan + " AS __basin_r JOIN " + changed_positions + " AS __basin_c" +
                       on_position);
    }
    if (!new_rows.empty()) {
      pieces.push_back("SELECT " + ColumnsFrom(schema, schema, "__basin_c") + ", CASE " + kAction +
                       " WHEN 'update' THEN 'update_postimage' ELSE 'insert' END AS " + kChangeTypeColumn +
                       " FROM " + changes + " AS __basin_c WHERE " + kAction + " IN ('update', 'insert')");
    }
    std::string cdc_sql;
    for (const std::string& piece : pieces) cdc_sql += (cdc_sql.empty() ? "" : "\nUNION ALL ") + piece;
    if (!cdc_sql.empty()) RETURN_IF_ERROR(WriteChangeFiles(table, cdc_sql, txn, applied));
  }
  return applied;
}

std::optional<CommandResult> AlreadyCommitted(const CommandContext& ctx, const delta::Snapshot& snapshot) {
  if (!ctx.txn_id) return std::nullopt;
  auto it = snapshot.set_transactions.find(ctx.txn_id->app_id);
  if (it == snapshot.set_transactions.end() || it->second.version < ctx.txn_id->version) return std::nullopt;
  CommandResult result;
  result.commit.version = snapshot.version;
  result.commit.skipped = true;
  result.notices.push_back("write skipped: table " + snapshot.table_root + " already has transaction " +
                           ctx.txn_id->app_id + " version " + std::to_string(it->second.version));
  return result;
}

Result<CommandResult> CommitDml(const DmlTable& table, const Candidates& candidates, delta::Transaction& txn,
                                std::string operation, json parameters, json metrics) {
  const CommandContext& ctx = *table.ctx;
  std::vector<delta::AddFile> read;
  read.reserve(candidates.files.size());
  for (size_t index : candidates.files) read.push_back(table.snapshot->files[index]);
  txn.ReadFiles(read);
  txn.ReadPredicate(candidates.predicate);
  if (table.new_protocol) txn.UpdateProtocol(*table.new_protocol);
  if (table.new_metadata) txn.UpdateMetadata(*table.new_metadata);
  txn.SetOperation(std::move(operation), std::move(parameters));
  return CommitCommand(ctx, txn, std::move(metrics), table.where);
}

json FileMetrics(const AppliedChanges& applied) {
  return json{{"numAddedFiles", applied.added_files},
              {"numRemovedFiles", applied.removed_files},
              {"numAddedBytes", applied.added_bytes},
              {"numRemovedBytes", applied.removed_bytes},
              {"numAddedChangeFiles", applied.added_change_files},
              {"numDeletionVectorsAdded", applied.deletion_vectors_added},
              {"numDeletionVectorsRemoved", applied.deletion_vectors_removed},
              {"numDeletionVectorsUpdated", applied.deletion_vectors_updated},
              {"numCopiedRows", applied.copied_rows}};
}

}  // namespace basin::commands::dml
