#include "commands/write.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "commands/partition_predicate.h"
#include "commands/table_features.h"
#include "delta/protocol.h"
#include "delta/skipping.h"
#include "engine/predicate_parser.h"
#include "engine/refused_rows.h"
#include "engine/scan.h"

namespace basin::commands {

namespace {

using engine::QuoteIdentifier;
using engine::QuoteLiteral;
using nlohmann::json;

// Beyond this many partitions, a dynamic partition overwrite records that it read the
// whole table instead of one predicate term per partition.
constexpr size_t kMaxPartitionTerms = 256;

const char* ModeName(WriteMode mode) {
  switch (mode) {
    case WriteMode::kAppend:
      return "INSERT INTO";
    case WriteMode::kOverwrite:
      return "INSERT OVERWRITE";
    case WriteMode::kDynamicPartitionOverwrite:
      return "INSERT OVERWRITE (dynamic partitions)";
    case WriteMode::kReplaceWhere:
      return "REPLACE WHERE";
  }
  return "write";
}

int64_t NumRecords(const delta::AddFile& add) { return delta::StatsNumRecords(add).value_or(0); }

const delta::StructField* PartitionField(const delta::Snapshot& table, const std::string& key) {
  for (const std::string& name : table.metadata.partition_columns) {
    const delta::StructField* field = table.schema.Find(name);
    if (field != nullptr && (field->PhysicalName() == key || field->name == key)) return field;
  }
  return nullptr;
}

// What an overwrite takes away: files removed whole, and files rewritten without the rows
// it replaces.
struct Replaced {
  std::vector<size_t> removed;
  std::vector<size_t> rewritten;
  int64_t deleted_rows = 0;
};

// REPLACE WHERE: which files hold rows matching `predicate`. Partition values decide when
// the predicate is over partition columns only; otherwise the candidate files that skipping
// keeps are read, counting matching and other rows per file.
Result<Replaced> FilesToReplace(engine::Connection& conn, const delta::Snapshot& table,
                                const std::string& predicate, const delta::Predicate& parsed) {
  Replaced replaced;
  std::vector<size_t> candidates = delta::FilesMatching(table, parsed);
  if (candidates.empty()) return replaced;
  const std::string condition = "COALESCE((" + predicate + "), FALSE)";
  const json tree = ExpressionTree(conn, predicate);
  if (!tree.is_null() && DecidedByPartitionValues(tree, table, {})) {
    ASSIGN_OR_RETURN(replaced.removed,
                     FilesWherePartitionsSatisfy(conn, table, candidates, predicate, "__basin_partitions"));
    for (size_t index : replaced.removed) replaced.deleted_rows += NumRecords(table.files[index]);
    return replaced;
  }
  engine::ScanOptions options;
  options.file_indexes = candidates;
  options.row_positions = true;
  ASSIGN_OR_RETURN(engine::ScanPlan scan, engine::BuildScanSql(table, conn, options));
  const std::string file = QuoteIdentifier(engine::kScanFileColumn);
  auto counted =
      conn.Query("SELECT " + file + ", count(*) FILTER (WHERE " + condition +
                 "), count(*) FILTER (WHERE NOT " + condition + ") FROM (" + scan.sql + ") GROUP BY " + file);
  if (!counted.ok()) return counted.status();
  for (const auto& row : counted->rows) {
    auto index = scan.file_index_by_path.find(row[0].value_or(""));
    if (index == scan.file_index_by_path.end()) {
      return Status::Internal(table.table_root + ": scan returned unknown file " + row[0].value_or("NULL"));
    }
    const int64_t matching = std::stoll(row[1].value_or("0"));
    const int64_t others = std::stoll(row[2].value_or("0"));
    if (matching == 0) continue;
    replaced.deleted_rows += matching;
    (others == 0 ? replaced.removed : replaced.rewritten).push_back(index->second);
  }
  std::sort(replaced.removed.begin(), replaced.removed.end());
  std::sort(replaced.rewritten.begin(), replaced.rewritten.end());
  return replaced;
}

// Dynamic partition overwrite: the files in the partitions `adds` write into, and the
// predicate (SQL over partition columns) naming those partitions.
std::vector<size_t> FilesInPartitions(const delta::Snapshot& table, const std::vector<delta::AddFile>& adds,
                                      std::string& partitions_sql) {
  std::set<delta::PartitionValues> partitions;
  for (const delta::AddFile& add : adds) partitions.insert(add.partition_values);
  std::vector<size_t> files;
  for (size_t i = 0; i < table.files.size(); i++) {
    if (partitions.count(table.files[i].partition_values) > 0) files.push_back(i);
  }
  partitions_sql.clear();
  if (partitions.size() > kMaxPartitionTerms) return files;
  for (const delta::PartitionValues& values : partitions) {
    std::string term;
    for (const auto& [key, value] : values) {
      const delta::StructField* field = PartitionField(table, key);
      if (field == nullptr) continue;
      const std::string column = QuoteIdentifier(field->name);
      term += (term.empty() ? "" : " AND ") +
              (value ? column + " = " + engine::PartitionValueSql(*field->type, value) : column + " IS NULL");
    }
    partitions_sql += (partitions_sql.empty() ? "(" : " OR (") + (term.empty() ? "TRUE" : term) + ")";
  }
  return files;
}

std::string JsonList(const std::vector<std::string>& items) { return json(items).dump(); }

// REPLACE WHERE's change data: the replaced rows as deletes, the new rows as inserts.
Result<std::vector<delta::CdcFile>> WriteReplacedChanges(engine::Connection& conn,
                                                         const delta::Snapshot& table,
                                                         const WriteTarget& target, const Replaced& replaced,
                                                         const std::string& predicate,
                                                         const std::vector<delta::AddFile>& adds) {
  engine::ScanOptions old_files;
  old_files.file_indexes = replaced.removed;
  old_files.file_indexes->insert(old_files.file_indexes->end(), replaced.rewritten.begin(),
                                 replaced.rewritten.end());
  ASSIGN_OR_RETURN(engine::ScanPlan old_scan, engine::BuildScanSql(table, conn, old_files));
  std::string rows = "SELECT *, 'delete' AS _change_type FROM (" + old_scan.sql + ") WHERE COALESCE((" +
                     predicate + "), FALSE)";
  // The new rows, read back from the files just written, under the (maybe evolved) schema.
  delta::Snapshot written = table;
  written.files = adds;
  written.metadata = target.metadata;
  written.schema = target.schema;
  written.protocol = target.protocol;
  engine::ScanPlan new_scan;
  if (!adds.empty()) {
    auto planned = engine::BuildScanSql(written, conn);
    if (!planned.ok()) {
      return planned.status();
    }
    new_scan = std::move(*planned);
    rows += "\nUNION ALL BY NAME SELECT *, 'insert' AS _change_type FROM (" + new_scan.sql + ")";
  }
  auto changes = WriteChangeRows(conn, target, rows);
  return changes;
}

// Writes the planned rows but those the table's constraints refuse, which basin_refuse keeps
// aside as the rows are read (engine/refused_rows.h), then hands to ctx.set_aside_refused:
// the rows are read once, and written as they are read.
Result<std::vector<delta::AddFile>> WriteRefusingRows(const CommandContext& ctx, const WriteTarget& target,
                                                      const PlannedRows& planned, const RowShape& shape) {
  engine::Connection& conn = *ctx.conn;
  engine::RefusedRows refused;
  ASSIGN_OR_RETURN(
      std::vector<delta::AddFile> written,
      WriteRows(conn, target,
                AcceptedRowsSql(target, RefusingRowsSql(target, planned.logical_rows_sql, refused.token()),
                                // Refused rows are gone by now; leaving them out again would add a
                                // filter that DuckDB runs before basin_refuse, which would keep none.
                                shape.row_condition, /*leave_refused_out=*/false)));
  const std::vector<std::pair<std::string, std::string>> rows = refused.Take();
  if (rows.empty()) return written;
  constexpr char kRefused[] = "basin_refused_rows";
  RETURN_IF_ERROR(conn.Execute(std::string("CREATE OR REPLACE TEMP TABLE ") + kRefused +
                               " (value VARCHAR, error VARCHAR)"));
  Status staged = [&]() -> Status {
    ASSIGN_OR_RETURN(auto appender, engine::Appender::Open(conn, "temp", kRefused));
    for (const auto& [value, error] : rows) {
      RETURN_IF_ERROR(appender->Append(std::string_view(value)));
      RETURN_IF_ERROR(appender->Append(std::string_view(error)));
      RETURN_IF_ERROR(appender->EndRow());
    }
    return appender->Close();
  }();
  if (staged.ok()) staged = ctx.set_aside_refused(std::string("SELECT value, error FROM temp.") + kRefused);
  Status dropped = conn.Execute(std::string("DROP TABLE IF EXISTS temp.") + kRefused);
  RETURN_IF_ERROR(staged);
  RETURN_IF_ERROR(dropped);
  return written;
}

// Writes the planned rows. With ctx.expectations for the table, the rows are checked against
// them first (some may be left out or quarantined, or the write fail); with
// ctx.set_aside_refused, those the table's constraints refuse go to it, and the rest are
// written: without expectations in one pass (WriteRefusingRows), with them read once into a
// temporary table each step reads.
Result<std::vector<delta::AddFile>> WriteAccepted(const CommandContext& ctx, const WriteTarget& target,
                                                  const PlannedRows& planned, const RowShape& shape) {
  engine::Connection& conn = *ctx.conn;
  const TableExpectations* expectations =
      ctx.expectations && ctx.expectations->table_root == target.table_root ? ctx.expectations.get()
                                                                            : nullptr;
  const bool set_aside = ctx.set_aside_refused && !RefusedCondition(target).empty();
  if (!set_aside && expectations == nullptr) return WriteRows(conn, target, planned.stored_rows_sql);
  if (expectations == nullptr) return WriteRefusingRows(ctx, target, planned, shape);
  constexpr char kRows[] = "temp.basin_write_rows";
  RETURN_IF_ERROR(conn.Execute(std::string("CREATE OR REPLACE TEMP TABLE basin_write_rows AS ") +
                               planned.logical_rows_sql));
  Result<std::string> rows = std::string("SELECT * FROM ") + kRows;
  if (expectations != nullptr) rows = ApplyExpectations(conn, *expectations, kRows, ctx.txn_id);
  Status set_aside_status =
      rows.ok() && set_aside ? ctx.set_aside_refused(RefusedRowsSql(target, *rows)) : rows.status();
  Result<std::vector<delta::AddFile>> written =
      set_aside_status.ok()
          ? WriteRows(conn, target, AcceptedRowsSql(target, *rows, shape.row_condition, set_aside))
          : Result<std::vector<delta::AddFile>>(set_aside_status);
  Status dropped = conn.Execute(std::string("DROP TABLE IF EXISTS ") + kRows);
  if (written.ok() && !dropped.ok()) return dropped;
  return written;
}

}  // namespace

Result<CommandResult> Write(const CommandContext& ctx, std::shared_ptr<const delta::Snapshot> table,
                            const WriteRequest& request) {
  engine::Connection& conn = *ctx.conn;
  const std::string where = "table " + table->table_root;
  RETURN_IF_ERROR(delta::CheckWritable(table->protocol, table->schema, where));
  WriteMode mode = request.mode;
  if (mode == WriteMode::kDynamicPartitionOverwrite && table->metadata.partition_columns.empty()) {
    mode = WriteMode::kOverwrite;  // as Spark: every row is in the one partition
  }
  if (mode != WriteMode::kAppend && TablePropertyIsTrue(table->metadata, "delta.appendOnly")) {
    return Status::InvalidArgument(where + " is append-only (delta.appendOnly = true): " + ModeName(mode) +
                                   " would remove rows");
  }
  if (mode == WriteMode::kReplaceWhere && request.replace_where.empty()) {
    return Status::InvalidArgument(where + ": REPLACE WHERE needs a predicate");
  }

  if (ctx.txn_id) {
    auto it = table->set_transactions.find(ctx.txn_id->app_id);
    if (it != table->set_transactions.end() && it->second.version >= ctx.txn_id->version) {
      CommandResult result;
      result.commit.skipped = true;
      result.commit.version = table->version;
      result.notices.push_back("skipped: " + where + " already has version " +
                               std::to_string(it->second.version) + " of application '" + ctx.txn_id->app_id +
                               "' (asked to write version " + std::to_string(ctx.txn_id->version) + ")");
      return result;
    }
  }

  WriteTarget target{table->store,    table->table_root, table->protocol,
                     table->metadata, table->schema,     ctx.file_layout};
  RowShape shape = request.shape;
  if (mode == WriteMode::kReplaceWhere) shape.row_condition = request.replace_where;
  ctx.Report("planning", 0);
  ASSIGN_OR_RETURN(std::vector<engine::ColumnType> source, ctx.describe_source
                                                               ? ctx.describe_source(request.source_sql)
                                                               : conn.DescribeQuery(request.source_sql));
  ASSIGN_OR_RETURN(PlannedRows planned, PlanDescribedRows(target, request.source_sql, source, shape));
  delta::Transaction txn(table, ctx.txn_options);
  if (planned.new_metadata) {
    target.metadata = *planned.new_metadata;
    ASSIGN_OR_RETURN(target.schema, delta::ParseSchema(target.metadata.schema_string));
    txn.UpdateMetadata(*planned.new_metadata);
  }
  if (planned.new_protocol) {
    target.protocol = *planned.new_protocol;
    txn.UpdateProtocol(*planned.new_protocol);
  }

  Replaced replaced;
  json parameters = {{"mode", mode == WriteMode::kAppend ? "Append" : "Overwrite"},
                     {"partitionBy", JsonList(table->metadata.partition_columns)}};
  if (mode == WriteMode::kOverwrite) {
    txn.ReadWholeTable();
    for (size_t i = 0; i < table->files.size(); i++) replaced.removed.push_back(i);
    for (const delta::AddFile& add : table->files) replaced.deleted_rows += NumRecords(add);
  } else if (mode == WriteMode::kReplaceWhere) {
    parameters["predicate"] = JsonList({request.replace_where});
    ASSIGN_OR_RETURN(delta::Predicate parsed, engine::ParsePredicate(request.replace_where, table->schema));
    ctx.Report("scanning", 0);
    ASSIGN_OR_RETURN(replaced, FilesToReplace(conn, *table, request.replace_where, parsed));
    txn.ReadPredicate(parsed);
  }

  ctx.Report("writing", 0);
  ASSIGN_OR_RETURN(std::vector<delta::AddFile> adds, WriteAccepted(ctx, target, planned, shape));
  int64_t output_rows = 0, output_bytes = 0;
  for (const delta::AddFile& add : adds) {
    output_rows += NumRecords(add);
    output_bytes += add.size;
  }

  if (mode == WriteMode::kDynamicPartitionOverwrite) {
    parameters["dynamicPartitionOverwrite"] = "true";
    std::string partitions_sql;
    replaced.removed = FilesInPartitions(*table, adds, partitions_sql);
    for (size_t index : replaced.removed) replaced.deleted_rows += NumRecords(table->files[index]);
    if (partitions_sql.empty()) {
      if (!adds.empty()) txn.ReadWholeTable();
    } else {
      ASSIGN_OR_RETURN(delta::Predicate parsed, engine::ParsePredicate(partitions_sql, table->schema));
      txn.ReadPredicate(parsed);
    }
  }

  // Rows of partly replaced files that stay: written again, their old files removed.
  int64_t copied_rows = 0;
  std::vector<delta::AddFile> copies;
  if (!replaced.rewritten.empty()) {
    ctx.Report("rewriting", 0, static_cast<int64_t>(replaced.rewritten.size()));
    engine::ScanOptions options;
    options.file_indexes = replaced.rewritten;
    ASSIGN_OR_RETURN(engine::ScanPlan scan, engine::BuildScanSql(*table, conn, options));
    auto stored = StoredRowsSql(target, "SELECT * FROM (" + scan.sql + ") WHERE NOT COALESCE((" +
                                            request.replace_where + "), FALSE)");
    auto written =
        stored.ok() ? WriteRows(conn, target, *stored) : Result<std::vector<delta::AddFile>>(stored.status());
    if (!written.ok())
      return written.status().WithContext(where + ": rewriting files REPLACE WHERE keeps rows of");
    copies = std::move(*written);
    for (const delta::AddFile& add : copies) copied_rows += NumRecords(add);
  }

  // On a change data feed table, rewritten files would read as deletes and inserts of the
  // rows they keep: the commit says what changed instead (readers then use only that).
  if (!replaced.rewritten.empty() && TablePropertyIsTrue(target.metadata, "delta.enableChangeDataFeed")) {
    ctx.Report("writing change data", 0);
    ASSIGN_OR_RETURN(std::vector<delta::CdcFile> changes,
                     WriteReplacedChanges(conn, *table, target, replaced, request.replace_where, adds));
    for (delta::CdcFile& change : changes) txn.AddChangeFile(std::move(change));
  }

  std::vector<delta::AddFile> read;
  int64_t removed_bytes = 0;
  for (const auto* list : {&replaced.removed, &replaced.rewritten}) {
    for (size_t index : *list) {
      const delta::AddFile& file = table->files[index];
      read.push_back(file);
      txn.Remove(delta::RemoveOf(file));
      removed_bytes += file.size;
    }
  }
  txn.ReadFiles(read);
  for (delta::AddFile& add : adds) txn.Add(std::move(add));
  for (delta::AddFile& add : copies) txn.Add(std::move(add));

  json metrics = {{"numFiles", static_cast<int64_t>(adds.size() + copies.size())},
                  {"numOutputRows", output_rows},
                  {"numOutputBytes", output_bytes}};
  if (mode != WriteMode::kAppend) {
    metrics["numRemovedFiles"] = static_cast<int64_t>(read.size());
    metrics["numRemovedBytes"] = removed_bytes;
    metrics["numDeletedRows"] = replaced.deleted_rows;
    metrics["numCopiedRows"] = copied_rows;
  }
  txn.SetOperation("WRITE", parameters);
  return CommitCommand(ctx, txn, std::move(metrics), where);
}

}  // namespace basin::commands
