// `basin demo-data PATH` (hidden): generates the demo's events table, a plain Delta table
// partitioned by day and built over several commits so that history, time travel and
// data skipping have something to show:
//   v0  CREATE TABLE with the first third of the days
//   v1  WRITE (append) the second third
//   v2  WRITE (append) the last third
//   v3  DELETE the first day (its files are removed)
#include <fmt/format.h>

#include <chrono>
#include <filesystem>

#include "cli/commands.h"
#include "cli/output_format.h"
#include "delta/commit_writer.h"
#include "engine/parquet_writer.h"

namespace basin::cli {

namespace {

constexpr int kDays = 30;
constexpr int kAppendCommits = 3;
constexpr const char* kFirstDay = "2024-06-01";

// Rows of days [first_day, end_day): event ids are consecutive, so each file covers an id
// and time range of its own and the files' min/max statistics can skip them.
std::string EventsSql(int64_t rows_per_day, int first_day, int end_day) {
  return fmt::format(
      "SELECT i AS event_id, "
      "(TIMESTAMPTZ '{0} 00:00:00+00' + to_microseconds((i * 86400000000 // {1})::BIGINT)) AS ts, "
      "(hash(i) % 5000)::INTEGER AS user_id, "
      "['view', 'view', 'view', 'click', 'click', 'purchase'][1 + (hash(i // 7) % 6)::INTEGER] AS "
      "event_type, "
      "['DE', 'FR', 'US', 'JP', 'BR'][1 + (hash(i // 3) % 5)::INTEGER] AS country, "
      "round(((hash(i * 31) % 20000) / 100.0)::DOUBLE, 2) AS amount, "
      "(DATE '{0}' + (i // {1})::INTEGER) AS day "
      "FROM range({2}, {3}) t(i)",
      kFirstDay, rows_per_day, first_day * rows_per_day, end_day * rows_per_day);
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

class DemoTableWriter {
 public:
  DemoTableWriter(engine::Connection& conn, std::shared_ptr<ObjectStore> store, int64_t rows_per_day)
      : conn_(conn), store_(std::move(store)), rows_per_day_(rows_per_day) {}

  Status WriteAll() {
    int days_per_commit = kDays / kAppendCommits;
    for (int commit = 0; commit < kAppendCommits; commit++) {
      RETURN_IF_ERROR(Append(commit * days_per_commit, (commit + 1) * days_per_commit));
    }
    return DeleteFirstDay();
  }

 private:
  Status Append(int first_day, int end_day) {
    std::string select_sql = EventsSql(rows_per_day_, first_day, end_day);
    engine::WriteOptions options;
    options.partition_columns = {"day"};
    ASSIGN_OR_RETURN(std::vector<delta::AddFile> files,
                     engine::WriteDataFiles(conn_, select_sql, *store_, options));
    int64_t rows = rows_per_day_ * (end_day - first_day);
    std::vector<delta::Action> actions;
    if (version_ == 0) {
      actions.emplace_back(
          WithMetrics(delta::MakeCommitInfo(NowMs(), "CREATE TABLE AS SELECT",
                                            {{"partitionBy", R"(["day"])"}, {"mode", "ErrorIfExists"}}),
                      files, rows));
      delta::Protocol protocol;  // reader 1 / writer 2: readable by every Delta reader
      actions.emplace_back(protocol);
      ASSIGN_OR_RETURN(delta::Metadata metadata, MakeMetadata(select_sql));
      actions.emplace_back(std::move(metadata));
    } else {
      actions.emplace_back(
          WithMetrics(delta::MakeCommitInfo(NowMs(), "WRITE", {{"mode", "Append"}}), files, rows));
    }
    for (delta::AddFile& file : files) {
      if (file.partition_values["day"] == kFirstDay) first_day_files_.push_back(file);
      actions.emplace_back(std::move(file));
    }
    return Commit(actions);
  }

  // Spark's write metrics, as strings like Spark writes them, so DESCRIBE HISTORY has
  // something to show.
  static delta::CommitInfo WithMetrics(delta::CommitInfo info, const std::vector<delta::AddFile>& files,
                                       int64_t rows) {
    int64_t bytes = 0;
    for (const delta::AddFile& file : files) bytes += file.size;
    info.raw["operationMetrics"] = {{"numFiles", std::to_string(files.size())},
                                    {"numOutputRows", std::to_string(rows)},
                                    {"numOutputBytes", std::to_string(bytes)}};
    info.raw["isBlindAppend"] = true;
    return info;
  }

  Status DeleteFirstDay() {
    int64_t now_ms = NowMs();
    std::vector<delta::Action> actions;
    delta::CommitInfo info = delta::MakeCommitInfo(
        now_ms, "DELETE", {{"predicate", fmt::format(R"x(["(day = '{}')"])x", kFirstDay)}});
    info.raw["operationMetrics"] = {{"numRemovedFiles", std::to_string(first_day_files_.size())},
                                    {"numDeletedRows", std::to_string(rows_per_day_)}};
    actions.emplace_back(std::move(info));
    for (const delta::AddFile& file : first_day_files_) {
      delta::RemoveFile remove;
      remove.path = file.path;
      remove.deletion_timestamp = now_ms;
      remove.extended_file_metadata = true;
      remove.partition_values = file.partition_values;
      remove.size = file.size;
      actions.emplace_back(std::move(remove));
    }
    return Commit(actions);
  }

  Result<delta::Metadata> MakeMetadata(const std::string& select_sql) {
    ASSIGN_OR_RETURN(delta::StructType schema, engine::InferDeltaSchema(conn_, select_sql));
    ASSIGN_OR_RETURN(engine::QueryResult uuid, conn_.Query("SELECT gen_random_uuid()::VARCHAR"));
    delta::Metadata metadata;
    metadata.id = uuid.at(0, 0).value_or("");
    metadata.name = "events";
    metadata.description = "Generated by basin demo-data";
    metadata.schema_string = delta::SchemaToJson(schema).dump();
    metadata.partition_columns = {"day"};
    metadata.created_time = NowMs();
    return metadata;
  }

  Status Commit(const std::vector<delta::Action>& actions) {
    RETURN_IF_ERROR(delta::WriteCommit(*store_, version_, actions));
    version_++;
    return Status::OK();
  }

  engine::Connection& conn_;
  std::shared_ptr<ObjectStore> store_;
  const int64_t rows_per_day_;
  int64_t version_ = 0;
  std::vector<delta::AddFile> first_day_files_;
};

Status WriteDemoTable(const DemoDataOptions& options) {
  if (options.rows < kDays) return Status::InvalidArgument(fmt::format("--rows must be at least {}", kDays));
  if (std::filesystem::exists(std::filesystem::path(options.table_path) / "_delta_log")) {
    return Status::AlreadyExists("a Delta table already exists at '" + options.table_path + "'");
  }
  ASSIGN_OR_RETURN(std::shared_ptr<ObjectStore> store, OpenLocalObjectStore(options.table_path));
  ASSIGN_OR_RETURN(std::shared_ptr<engine::Database> db, engine::Database::Open());
  ASSIGN_OR_RETURN(std::unique_ptr<engine::Connection> conn, engine::Connection::Open(db));
  DemoTableWriter writer(*conn, store, options.rows / kDays);
  return writer.WriteAll();
}

}  // namespace

int RunDemoDataCommand(const DemoDataOptions& options) {
  return ExitStatus(WriteDemoTable(options));
}

}  // namespace basin::cli
