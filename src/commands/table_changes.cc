#include "commands/table_changes.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "delta/actions.h"
#include "delta/log_segment.h"
#include "delta/paths.h"
#include "delta/protocol.h"
#include "delta/snapshot.h"
#include "engine/parquet_log_io.h"
#include "engine/scan.h"

namespace basin::commands {

namespace {

using engine::QuoteIdentifier;
using engine::QuoteLiteral;

constexpr char kChangeType[] = "_change_type";

bool ChangeDataFeedEnabled(const delta::Metadata& metadata) {
  auto it = metadata.configuration.find("delta.enableChangeDataFeed");
  if (it == metadata.configuration.end()) return false;
  std::string value = it->second;
  std::transform(value.begin(), value.end(), value.begin(), [](unsigned char c) { return std::tolower(c); });
  return value == "true";
}

delta::AddFile AsFile(const delta::RemoveFile& remove) {
  delta::AddFile file;
  file.path = remove.path;
  file.partition_values = remove.partition_values;
  file.size = remove.size.value_or(0);
  file.deletion_vector = remove.deletion_vector;
  return file;
}

delta::AddFile AsFile(const delta::CdcFile& cdc) {
  delta::AddFile file;
  file.path = cdc.path;
  file.partition_values = cdc.partition_values;
  file.size = cdc.size;
  return file;
}

// Builds the feed's SQL: one scan per kind of change per commit, over files read through
// engine::BuildScanSql (so column mapping, partition values, type widening and deletion
// vectors are handled as for table reads).
class ChangesBuilder {
 public:
  ChangesBuilder(engine::Connection& conn, std::shared_ptr<ObjectStore> store, std::string table_root)
      : conn_(conn), store_(std::move(store)), table_root_(std::move(table_root)) {}

  // The table as of the end version: its schema and metadata shape every scan.
  void SetShape(const delta::Protocol& protocol, const delta::Metadata& metadata,
                const delta::StructType& schema) {
    protocol_ = protocol;
    metadata_ = metadata;
    schema_ = schema;
  }

  // The rows of `files` (logical columns, plus _change_type when `with_change_type`).
  Result<std::string> Scan(int64_t version, std::vector<delta::AddFile> files, bool with_change_type) {
    auto files_snapshot_ptr = std::make_shared<delta::Snapshot>();
    delta::Snapshot& files_snapshot = *files_snapshot_ptr;
    files_snapshot.version = version;
    files_snapshot.protocol = protocol_;
    files_snapshot.metadata = metadata_;
    files_snapshot.schema = schema_;
    if (with_change_type) {
      delta::StructField change_type;
      change_type.name = kChangeType;
      auto type = std::make_shared<delta::DataType>();
      type->primitive = "string";
      change_type.type = std::move(type);
      files_snapshot.schema.fields.push_back(std::move(change_type));
    }
    files_snapshot.files = std::move(files);
    files_snapshot.store = store_;
    files_snapshot.table_root = table_root_;
    ASSIGN_OR_RETURN(engine::ScanPlan plan, engine::BuildScanSql(std::move(files_snapshot_ptr), conn_));
    scans_.push_back(plan.registration);
    return plan.sql;
  }

  // Adds the rows `rows_sql` gives (logical columns, then _change_type when `change_type`
  // is empty) as changes of `version`.
  void AddPiece(const std::string& rows_sql, const std::string& change_type, int64_t version,
                int64_t timestamp_ms) {
    std::string change = change_type.empty() ? QuoteIdentifier(kChangeType) : QuoteLiteral(change_type);
    pieces_.push_back(
        "SELECT " + ColumnList() + ", CAST(" + change + " AS VARCHAR) AS _change_type, CAST(" +
        std::to_string(version) +
        " AS BIGINT) AS _commit_version, (TIMESTAMPTZ '1970-01-01 00:00:00+00' + to_microseconds(" +
        std::to_string(timestamp_ms) + " * 1000)) AS _commit_timestamp FROM (" + rows_sql +
        ") AS __basin_changes");
  }

  // Adds the rows `rows_sql` gives (logical columns) as they are, with no change columns.
  void AddRows(const std::string& rows_sql) {
    pieces_.push_back("SELECT " + ColumnList() + " FROM (" + rows_sql + ") AS __basin_changes");
  }

  // The pieces' union; with no piece, no rows with the table's columns (and the change
  // columns when `change_columns`).
  ChangesScan Finish(bool change_columns = true) {
    ChangesScan scan;
    if (pieces_.empty()) {
      std::string sql;
      for (const delta::StructField& f : schema_.fields) {
        sql += (sql.empty() ? "SELECT " : ", ") + ("CAST(NULL AS " + f.type->ToDuckDBType() + ") AS ") +
               QuoteIdentifier(f.name);
      }
      if (change_columns) {
        sql +=
            ", CAST(NULL AS VARCHAR) AS _change_type, CAST(NULL AS BIGINT) AS _commit_version, "
            "CAST(NULL AS TIMESTAMPTZ) AS _commit_timestamp";
      }
      scan.sql = sql + " WHERE false";
    } else {
      for (size_t i = 0; i < pieces_.size(); i++) scan.sql += (i > 0 ? "\nUNION ALL " : "") + pieces_[i];
    }
    scan.scans = std::move(scans_);
    return scan;
  }

 private:
  std::string ColumnList() const {
    std::string list;
    for (const delta::StructField& f : schema_.fields)
      list += (list.empty() ? "" : ", ") + QuoteIdentifier(f.name);
    return list;
  }

  engine::Connection& conn_;
  std::shared_ptr<ObjectStore> store_;
  std::string table_root_;
  delta::Protocol protocol_;
  delta::Metadata metadata_;
  delta::StructType schema_;
  std::vector<std::string> pieces_;
  std::vector<std::shared_ptr<const engine::RegisteredScan>> scans_;
};

struct Commit {
  int64_t version = 0;
  int64_t timestamp_ms = 0;
  std::vector<delta::Action> actions;
};

Result<Commit> ReadCommit(ObjectStore& store, const std::string& table_root, int64_t version,
                          const ObjectInfo& object) {
  ASSIGN_OR_RETURN(std::string content, store.Get(object.key));
  Commit commit;
  commit.version = version;
  commit.timestamp_ms = object.modification_time_ms;
  ASSIGN_OR_RETURN(commit.actions, delta::ParseCommitFile(content, table_root + ": " + object.key));
  for (const delta::Action& action : commit.actions) {
    if (const auto* info = std::get_if<delta::CommitInfo>(&action); info && info->in_commit_timestamp) {
      commit.timestamp_ms = *info->in_commit_timestamp;
    }
  }
  return commit;
}

// The changes of one commit: its _change_data files when it has any, else inserts and
// deletes derived from its data-changing adds and removes. An add and a remove of the same
// file are a deletion vector change: rows hidden by the new DV but not the old are deletes,
// rows the old DV hid but the new one does not are inserts.
Status AddCommitChanges(ChangesBuilder& builder, const Commit& commit) {
  std::vector<delta::AddFile> cdc_files, added, removed, paired_old, paired_new;
  std::map<std::string, const delta::AddFile*> adds_by_path;
  for (const delta::Action& action : commit.actions) {
    if (const auto* cdc = std::get_if<delta::CdcFile>(&action)) cdc_files.push_back(AsFile(*cdc));
    if (const auto* add = std::get_if<delta::AddFile>(&action); add && add->data_change) {
      adds_by_path.emplace(delta::DecodeDataPath(add->path), add);
    }
  }
  if (!cdc_files.empty()) {
    ASSIGN_OR_RETURN(std::string rows, builder.Scan(commit.version, std::move(cdc_files), true));
    builder.AddPiece(rows, "", commit.version, commit.timestamp_ms);
    return Status::OK();
  }
  for (const delta::Action& action : commit.actions) {
    const auto* remove = std::get_if<delta::RemoveFile>(&action);
    if (remove == nullptr || !remove->data_change) continue;
    auto pair = adds_by_path.find(delta::DecodeDataPath(remove->path));
    if (pair == adds_by_path.end()) {
      removed.push_back(AsFile(*remove));
      continue;
    }
    paired_old.push_back(AsFile(*remove));
    paired_new.push_back(*pair->second);
    adds_by_path.erase(pair);
  }
  for (const delta::Action& action : commit.actions) {
    const auto* add = std::get_if<delta::AddFile>(&action);
    if (add != nullptr && add->data_change && adds_by_path.count(delta::DecodeDataPath(add->path)) > 0) {
      added.push_back(*add);
    }
  }
  if (!added.empty()) {
    ASSIGN_OR_RETURN(std::string rows, builder.Scan(commit.version, std::move(added), false));
    builder.AddPiece(rows, "insert", commit.version, commit.timestamp_ms);
  }
  if (!removed.empty()) {
    ASSIGN_OR_RETURN(std::string rows, builder.Scan(commit.version, std::move(removed), false));
    builder.AddPiece(rows, "delete", commit.version, commit.timestamp_ms);
  }
  if (!paired_old.empty()) {
    ASSIGN_OR_RETURN(std::string before, builder.Scan(commit.version, std::move(paired_old), false));
    ASSIGN_OR_RETURN(std::string after, builder.Scan(commit.version, std::move(paired_new), false));
    builder.AddPiece("(" + before + ") EXCEPT ALL (" + after + ")", "delete", commit.version,
                     commit.timestamp_ms);
    builder.AddPiece("(" + after + ") EXCEPT ALL (" + before + ")", "insert", commit.version,
                     commit.timestamp_ms);
  }
  return Status::OK();
}

// Versions `first`..`last` of the log in `listing` must all be there: NotFound naming
// the first missing one otherwise.
Status RequireCommits(const delta::LogListing& listing, int64_t first, int64_t last,
                      const std::string& table) {
  for (int64_t v = first; v <= last; v++) {
    if (listing.commits.count(v) == 0) {
      return Status::NotFound(table + ": commit " + std::to_string(v) +
                              " is no longer in the log (removed by log cleanup); the earliest is " +
                              std::to_string(listing.commits.empty() ? listing.latest_version()
                                                                     : listing.commits.begin()->first));
    }
  }
  return Status::OK();
}

Result<ChangesScan> BuildChanges(ChangesBuilder& builder, engine::Connection& conn,
                                 const std::shared_ptr<ObjectStore>& store, const std::string& table_root,
                                 int64_t start_version, std::optional<int64_t> end_version) {
  const std::string table = "table_changes(" + table_root + ")";
  if (start_version < 0) {
    return Status::InvalidArgument(table + ": the start version must not be negative, got " +
                                   std::to_string(start_version));
  }
  ASSIGN_OR_RETURN(delta::LogListing listing, delta::ListLog(*store));
  if (listing.empty()) return Status::NotFound(table + ": no Delta table at " + table_root);
  const int64_t latest = listing.latest_version();
  const int64_t end = end_version.value_or(latest);
  if (start_version > end) {
    return Status::InvalidArgument(table + ": the start version " + std::to_string(start_version) +
                                   " is after the end version " + std::to_string(end));
  }
  if (end > latest) {
    return Status::NotFound(table + ": version " + std::to_string(end) + " does not exist; the latest is " +
                            std::to_string(latest));
  }
  RETURN_IF_ERROR(RequireCommits(listing, start_version, end, table));

  delta::SnapshotOptions options;
  options.version = start_version;
  engine::DuckDBParquetLogIO log_io;
  ASSIGN_OR_RETURN(std::shared_ptr<delta::Snapshot> first,
                   delta::LoadSnapshot(store, table_root, log_io, options));
  delta::Protocol protocol = first->protocol;
  delta::Metadata metadata = first->metadata;

  // First pass: the feed must be on at every version, and the end version's schema
  // shapes the result. Commits are read again, one at a time, to build the scans.
  for (int64_t v = start_version; v <= end; v++) {
    ASSIGN_OR_RETURN(Commit commit, ReadCommit(*store, table_root, v, listing.commits.at(v)));
    for (const delta::Action& action : commit.actions) {
      if (const auto* m = std::get_if<delta::Metadata>(&action)) metadata = *m;
      if (const auto* p = std::get_if<delta::Protocol>(&action)) protocol = *p;
    }
    RETURN_IF_ERROR(
        delta::ValidateReadProtocol(protocol, "table " + table_root + " version " + std::to_string(v)));
    if (!ChangeDataFeedEnabled(metadata)) {
      return Status::InvalidArgument(table + ": the change data feed is not enabled at version " +
                                     std::to_string(v) +
                                     " (set the table property delta.enableChangeDataFeed = true)");
    }
  }
  ASSIGN_OR_RETURN(delta::StructType schema, delta::ParseSchema(metadata.schema_string));
  builder.SetShape(protocol, metadata, schema);
  for (int64_t v = start_version; v <= end; v++) {
    ASSIGN_OR_RETURN(Commit commit, ReadCommit(*store, table_root, v, listing.commits.at(v)));
    RETURN_IF_ERROR(AddCommitChanges(builder, commit));
  }
  return builder.Finish();
}

}  // namespace

Result<ChangesScan> AppendedRowsSql(engine::Connection& conn, std::shared_ptr<const delta::Snapshot> end,
                                    int64_t start_version, bool skip_change_commits) {
  const std::string table = "STREAM(" + end->table_root + ")";
  if (start_version < 0 || start_version > end->version + 1) {
    return Status::InvalidArgument(table + ": versions " + std::to_string(start_version) + " to " +
                                   std::to_string(end->version) + " are not a range");
  }
  // The end version's columns shape the rows (older files read with the columns they lack
  // as NULL). Commits are read by key: no listing of the log.
  ChangesBuilder builder(conn, end->store, end->table_root);
  builder.SetShape(end->protocol, end->metadata, end->schema);
  std::vector<std::string> skipped;
  for (int64_t v = start_version; v <= end->version; v++) {
    const std::string key = delta::CommitKey(v);
    Result<std::string> content = end->store->Get(key);
    if (!content.ok() && content.status().IsNotFound()) {
      return Status::NotFound(table + ": commit " + std::to_string(v) +
                              " is no longer in the log (removed by log cleanup)");
    }
    RETURN_IF_ERROR(content.status());
    ASSIGN_OR_RETURN(std::vector<delta::Action> actions,
                     delta::ParseCommitFile(*content, end->table_root + ": " + key));
    std::vector<delta::AddFile> added;
    bool changed = false;
    std::string operation = "a change";
    for (const delta::Action& action : actions) {
      if (const auto* add = std::get_if<delta::AddFile>(&action); add && add->data_change)
        added.push_back(*add);
      if (const auto* remove = std::get_if<delta::RemoveFile>(&action); remove && remove->data_change) {
        changed = true;
      }
      if (const auto* info = std::get_if<delta::CommitInfo>(&action); info && info->operation) {
        operation = *info->operation;
      }
    }
    if (changed && skip_change_commits) {
      skipped.push_back("version " + std::to_string(v) + " (" + operation + ")");
      continue;
    }
    if (changed) {
      return Status::InvalidArgument(
          table + ": version " + std::to_string(v) + " (" + operation +
          ") removed or rewrote rows, and a stream of a table reads appended rows only; skip such "
          "commits with STREAM(t, skipChangeCommits => true), or start a new stream after it with "
          "STREAM(t, startingVersion => " +
          std::to_string(v + 1) + ")");
    }
    if (added.empty()) continue;
    ASSIGN_OR_RETURN(std::string rows, builder.Scan(v, std::move(added), false));
    builder.AddRows(rows);
  }
  ChangesScan scan = builder.Finish(/*change_columns=*/false);
  scan.skipped_commits = std::move(skipped);
  return scan;
}

Result<ChangesScan> TableChangesSql(engine::Connection& conn, std::shared_ptr<ObjectStore> store,
                                    const std::string& table_root, int64_t start_version,
                                    std::optional<int64_t> end_version) {
  ChangesBuilder builder(conn, store, table_root);
  return BuildChanges(builder, conn, store, table_root, start_version, end_version);
}

}  // namespace basin::commands
