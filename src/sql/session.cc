#include "sql/session.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <list>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <utility>

#include "basin/duration.h"
#include "commands/table_changes.h"
#include "common/strings.h"
#include "delta/checkpoint_worker.h"
#include "delta/history.h"
#include "delta/log_segment.h"
#include "delta/snapshot.h"
#include "engine/lakehouse.h"
#include "engine/scan.h"
#include "sql/copy_format.h"
#include "sql/grammar/parse.h"
#include "sql/lineage.h"
#include "sql/pg_settings.h"
#include "sql/statement_timeout.h"
#include "sql/statements.h"

namespace basin::sql {

namespace {

using nlohmann::json;

// The store of the Delta table at `location` (a folder or URL); NotFound when it has no log.
Result<std::shared_ptr<ObjectStore>> OpenTableStore(const std::string& location) {
  ASSIGN_OR_RETURN(std::shared_ptr<ObjectStore> store, OpenStoreAt(location));
  ASSIGN_OR_RETURN(bool has_log, store->HasObjectsWithPrefix(std::string(delta::kLogFolder)));
  if (!has_log) return Status::NotFound("no Delta table at " + location + " (no _delta_log folder)");
  return store;
}

std::string FormatMs(int64_t ms) {
  // DuckDB's rendering of TIMESTAMP WITH TIME ZONE in UTC, so history rows read like query rows.
  std::string text = delta::FormatTimestampMs(ms);  // "2024-01-31 12:00:00.000 UTC"
  if (text.size() > 4 && text.compare(text.size() - 4, 4, " UTC") == 0) text.resize(text.size() - 4);
  return text + "+00";
}

std::string JoinList(const std::optional<std::vector<std::string>>& items) {
  json out = json::array();
  if (items) {
    for (const auto& item : *items) out.push_back(item);
  }
  return out.dump();
}

// A Delta table by location, with the version DESCRIBE DETAIL shows.
struct DescribedTable {
  std::string path;
  std::optional<int64_t> version;
  std::optional<std::string> timestamp;
};

template <class... Handlers>
struct Overloaded : Handlers... {
  using Handlers::operator()...;
};
template <class... Handlers>
Overloaded(Handlers...) -> Overloaded<Handlers...>;

// A feed's query, with what it reads kept alive as long as the query runs.
engine::Lakehouse::ChangeFeed FeedOf(commands::ChangesScan scan) {
  auto scans = std::make_shared<const std::vector<std::shared_ptr<const engine::RegisteredScan>>>(
      std::move(scan.scans));
  return engine::Lakehouse::ChangeFeed{std::move(scan.sql), std::move(scans)};
}

}  // namespace

struct Session::Impl : public SessionContext {
  SessionOptions options;
  std::shared_ptr<catalog::Warehouse> warehouse_;
  std::shared_ptr<engine::Database> db;
  std::unique_ptr<engine::Connection> conn_;
  std::unique_ptr<Governor> governor_;               // uses conn_
  std::shared_ptr<engine::SnapshotCache> snapshots;  // shared with the lakehouse catalog
  std::map<std::string, std::string> settings;       // SET basin.<name>
  std::function<void(const commands::Progress&)> progress;
  bool streams_allowed_ = false;
  bool block_failed_ = false;                      // a statement failed in the open transaction block
  std::map<int64_t, TableStream*> table_streams_;  // by STREAM source (engine/stream_calls.h)
  std::map<int64_t, FilesStream*> files_streams_;
  std::function<Status(const std::string&)> set_aside_refused_;  // for the next write
  std::function<Status()> commit_gate_;                          // for every write until cleared
  engine::FileLayout file_layout_;                               // for every write until changed
  std::function<Result<std::vector<engine::ColumnType>>(const std::string&)> describe_source_;  // ditto
  std::shared_ptr<const commands::TableExpectations> expectations_;  // for every write until cleared
  std::unique_ptr<StatementTimeout> timeout_;                        // interrupts conn_, so after it
  std::shared_ptr<LineageRecorder> lineage_;                         // with SessionOptions::record_lineage
  std::set<std::string> reads_;  // the warehouse tables the statement read, "schema.table"
  // Writes the checkpoints commits make due. Last, so that it is destroyed first: its
  // destructor waits for them, which need the database and the snapshot cache's log IO.
  delta::CheckpointWorker checkpoints;

  // --- SessionContext ---

  bool streams_allowed() const override { return streams_allowed_; }

  engine::Connection& conn() override { return *conn_; }
  const catalog::Warehouse& warehouse() const override { return *warehouse_; }

  Result<std::optional<catalog::TableEntry>> LookupTable(
      const std::vector<std::string>& name_parts) override {
    ASSIGN_OR_RETURN(catalog::TableName name, catalog::MakeTableName(name_parts));
    return warehouse_->Lookup(name);
  }

  Result<std::optional<catalog::TableEntry>> ResolveTable(
      const std::vector<std::string>& name_parts) override {
    ASSIGN_OR_RETURN(engine::ResolvedTableName resolved, engine::ResolveTableName(*conn_, name_parts));
    if (resolved.kind != engine::ResolvedTableName::Kind::kWarehouse)
      return std::optional<catalog::TableEntry>();
    return std::optional<catalog::TableEntry>(std::move(resolved.warehouse_entry));
  }

  Result<catalog::TableEntry> GetTable(const std::vector<std::string>& name_parts) override {
    ASSIGN_OR_RETURN(catalog::TableName name, catalog::MakeTableName(name_parts));
    return warehouse_->Get(name);
  }

  Result<std::shared_ptr<const delta::Snapshot>> LoadTable(
      const std::string& location, const delta::SnapshotOptions& snapshot_options) override {
    ASSIGN_OR_RETURN(auto store,
                     snapshots->StoreOf(location, [this](const std::string& at) { return OpenStore(at); }));
    return snapshots->Get(store, location, snapshot_options);
  }

  commands::CommandContext MakeCommandContext() override {
    commands::CommandContext ctx;
    ctx.conn = conn_.get();
    ctx.txn_options.checkpoint_io = &snapshots->log_io();
    ctx.txn_options.checkpoint_worker = &checkpoints;
    // Lost races are retried as long as the winners do not conflict: a busy table must not
    // turn a blind append into an error after a handful of attempts.
    ctx.txn_options.max_attempts = 1000;
    // Ctrl-C (Connection::Interrupt) also stops a commit waiting to retry.
    ctx.txn_options.cancellation = &conn_->cancellation();
    ctx.progress = progress;
    ctx.set_aside_refused = std::exchange(set_aside_refused_, nullptr);
    ctx.before_commit = commit_gate_;
    ctx.file_layout = file_layout_;
    ctx.describe_source = describe_source_;
    ctx.expectations = expectations_;
    auto app = settings.find("txn_app_id");
    auto version = settings.find("txn_version");
    if (app != settings.end() && version != settings.end()) {
      // TrySetting accepted only values that parse.
      int64_t number = 0;
      std::from_chars(version->second.data(), version->second.data() + version->second.size(), number);
      ctx.txn_id = delta::SetTransaction{app->second, number, std::nullopt};
      settings.erase(version);  // one write per version: the next needs a new one
    }
    return ctx;
  }

  void WaitForCheckpoints() override { checkpoints.Drain(); }

  Governor& governor() override { return *governor_; }

  std::optional<std::string> Setting(const std::string& name) const override {
    auto it = settings.find(name);
    if (it == settings.end()) return std::nullopt;
    return it->second;
  }

  // --- snapshots ---

  // Where the table at `path` is: relative paths are under the warehouse folder.
  std::string TableLocation(const std::string& path) const {
    bool relative = !path.empty() && path[0] != '/' && path.find(':') == std::string::npos;
    if (!relative || options.warehouse_dir.empty()) return path;
    return options.warehouse_dir + "/" + path;
  }

  Result<std::shared_ptr<ObjectStore>> OpenStore(const std::string& path) const {
    std::string location = TableLocation(path);
    auto store = OpenTableStore(location);
    if (!store.ok()) return store.status().WithContext("table " + path);
    return store;
  }

  // --- query resolution ---

  // For lineage: the statement read warehouse table `name`.
  void NoteRead(const catalog::TableName& name) {
    if (lineage_) reads_.insert(name.ToString());
  }

  // What the binder asks before it reads a table by name or delta_scan's path: the user's
  // SELECT on it, then the read noted for lineage. A path is looked up once, and only when
  // the grant check or lineage needs its table.
  Status AuthorizeRead(const std::optional<catalog::TableName>& table, const std::string& location) {
    if (table) {
      RETURN_IF_ERROR(governor_->RequireOnTable(security::Privilege::kSelect, *table));
      NoteRead(*table);
      return Status::OK();
    }
    if (governor_->access().admin() && !lineage_) return Status::OK();
    ASSIGN_OR_RETURN(std::optional<catalog::TableEntry> entry, governor_->TableAt(location));
    RETURN_IF_ERROR(governor_->RequireReadOf(entry, "delta_scan('" + location + "')"));
    if (entry) NoteRead(entry->name);
    return Status::OK();
  }

  // After a write committed: its edges from the tables it read, into the lineage table. A
  // failure is the statement's notice: its rows are committed.
  void RecordLineage(const grammar::ParsedStatement& parsed, StatementResult& result) {
    if (!lineage_ || reads_.empty()) return;
    std::optional<WrittenTable> written = WrittenTableOf(parsed);
    if (!written) return;
    Result<std::optional<catalog::TableEntry>> target = LookupTable(written->name_parts);
    if (!target.ok() || !*target) return;  // a DuckDB table, not the warehouse's
    const std::string target_name = (*target)->name.ToString();
    std::vector<LineageEdge> edges;
    for (const std::string& source : reads_) {
      if (source != target_name) edges.push_back({source, target_name, written->operation});
    }
    if (edges.empty()) return;
    Status recorded = lineage_->Record(edges, options.user, warehouse_->clock()->NowMs());
    if (!recorded.ok()) result.notices.push_back("lineage was not recorded: " + recorded.ToString());
  }

  // The change feed table_changes(...) reads (engine/duckdb/table_changes_function.h).
  Result<engine::Lakehouse::ChangeFeed> ChangeFeed(const std::vector<std::string>& table,
                                                   int64_t start_version,
                                                   std::optional<int64_t> end_version) {
    ASSIGN_OR_RETURN(catalog::TableEntry entry, GetTable(table));
    RETURN_IF_ERROR(governor_->RequireOnTable(security::Privilege::kSelect, entry.name));
    NoteRead(entry.name);
    ASSIGN_OR_RETURN(auto store, OpenStore(entry.location));
    ASSIGN_OR_RETURN(commands::ChangesScan scan,
                     commands::TableChangesSql(*conn_, store, entry.location, start_version, end_version));
    return FeedOf(std::move(scan));
  }

  // What read_files(folder, ...) reads: every file of the folder, or the running stream's
  // batch of them.
  Result<engine::Lakehouse::ChangeFeed> ReadFiles(const std::string& folder,
                                                  const std::map<std::string, std::string>& options,
                                                  std::optional<int64_t> source) {
    RETURN_IF_ERROR(governor_->RequireAdmin("read_files('" + folder + "')"));
    ASSIGN_OR_RETURN(ReadFilesRequest request, ParseReadFilesRequest(folder, options));
    ASSIGN_OR_RETURN(std::shared_ptr<ObjectStore> store, OpenStoreAt(folder));
    if (source) {
      FilesStream* stream = InstalledStream(files_streams_, *source);
      if (stream == nullptr) {
        return Status::InvalidArgument("STREAM read_files('" + folder +
                                       "', ...) is read by a running stream: run the statement with basin "
                                       "stream run");
      }
      ASSIGN_OR_RETURN(FilesStreamRead read, stream->Read(request, store));
      return ReadFilesFeed(request, store, read.files, read.schema);
    }
    if (!request.dead_letter_table.empty()) {
      return Status::InvalidArgument("read_files('" + folder +
                                     "'): deadLetterTable is for STREAM read_files(...), whose batches "
                                     "commit dead letters once each");
    }
    ASSIGN_OR_RETURN(std::vector<InputFile> files, ListInputFiles(*store));
    return ReadFilesFeed(request, store, files, request.schema);
  }

  // What basin_stream_table(...) reads (STREAM(table), engine/duckdb/table_changes_function.h),
  // or with `changes_from`, basin_stream_changes(...) (STREAM table_changes(table, start)).
  Result<engine::Lakehouse::ChangeFeed> StreamTable(const std::vector<std::string>& table,
                                                    std::optional<int64_t> changes_from,
                                                    std::optional<int64_t> source) {
    TableStream* stream = source ? InstalledStream(table_streams_, *source) : nullptr;
    if (stream == nullptr) {
      const std::string name = table.empty() ? std::string() : table.back();
      return Status::InvalidArgument(
          (changes_from ? "STREAM table_changes(" + name + ", ...)" : "STREAM(" + name + ")") +
          " is read by a running stream: run the statement with basin stream run");
    }
    ASSIGN_OR_RETURN(catalog::TableEntry entry, GetTable(table));
    RETURN_IF_ERROR(governor_->RequireOnTable(security::Privilege::kSelect, entry.name));
    NoteRead(entry.name);
    ASSIGN_OR_RETURN(TableStreamRead read, stream->Read(entry, changes_from));
    delta::SnapshotOptions at;  // latest for kNothing
    if (read.kind != TableStreamRead::Kind::kNothing) at.version = read.end_version;
    ASSIGN_OR_RETURN(std::shared_ptr<const delta::Snapshot> end, LoadTable(entry.location, at));
    if (read.kind != TableStreamRead::Kind::kNothing) stream->ReadUpTo(end->timestamp_ms);
    if (read.kind == TableStreamRead::Kind::kSnapshot) {
      ASSIGN_OR_RETURN(engine::ScanPlan plan, engine::BuildScanSql(end, *conn_));
      return engine::Lakehouse::ChangeFeed{std::move(plan.sql), std::move(plan.registration)};
    }
    if (changes_from) {
      // For nothing, the latest commit's changes give the columns, and no row is read.
      const bool nothing = read.kind == TableStreamRead::Kind::kNothing;
      ASSIGN_OR_RETURN(commands::ChangesScan scan,
                       commands::TableChangesSql(*conn_, end->store, entry.location,
                                                 nothing ? end->version : read.start_version, end->version));
      if (nothing) scan.sql = "SELECT * FROM (" + scan.sql + ") WHERE false";
      return FeedOf(std::move(scan));
    }
    const int64_t start =
        read.kind == TableStreamRead::Kind::kNothing ? end->version + 1 : read.start_version;
    ASSIGN_OR_RETURN(commands::ChangesScan scan,
                     commands::AppendedRowsSql(*conn_, end, start, read.skip_change_commits));
    return FeedOf(std::move(scan));
  }

  // The batch installed for STREAM source number `source`, while streams are allowed.
  template <typename Stream>
  Stream* InstalledStream(const std::map<int64_t, Stream*>& streams, int64_t source) const {
    auto it = streams.find(source);
    return streams_allowed_ && it != streams.end() ? it->second : nullptr;
  }

  // --- statements ---

  // The table DESCRIBE HISTORY / DETAIL is about: a delta_scan's, or the warehouse table
  // a name resolves to by DuckDB's rules.
  Result<DescribedTable> DescribedScan(
      const std::variant<grammar::QualifiedName, grammar::DeltaScanArguments>& table) {
    DescribedTable call;
    if (const auto* scan = std::get_if<grammar::DeltaScanArguments>(&table)) {
      RETURN_IF_ERROR(
          governor_->RequireReadAt(TableLocation(scan->path), "delta_scan('" + scan->path + "')"));
      call.path = scan->path;
      call.version = scan->at.version;
      call.timestamp = scan->at.timestamp;
      return call;
    }
    const grammar::QualifiedName& name = std::get<grammar::QualifiedName>(table);
    ASSIGN_OR_RETURN(std::optional<catalog::TableEntry> entry, ResolveTable(name));
    if (!entry) {
      ASSIGN_OR_RETURN(catalog::TableEntry found, GetTable(name));  // NotFound naming it
      entry = std::move(found);
    }
    RETURN_IF_ERROR(governor_->RequireOnTable(security::Privilege::kSelect, entry->name));
    call.path = entry->location;
    return call;
  }

  Result<StatementResult> DescribeHistory(const std::string& statement, const std::string& path,
                                          std::optional<size_t> limit) {
    StatementResult out;
    out.statement = statement;
    out.returns_rows = true;
    engine::QueryResult& r = out.result;
    ASSIGN_OR_RETURN(auto store, OpenStore(path));
    auto commits = delta::ReadHistory(store, limit.value_or(0));
    if (!commits.ok()) return commits.status().WithContext("table " + path);
    r.column_names = {"version",          "timestamp", "operation", "operationParameters",
                      "operationMetrics", "engineInfo"};
    r.column_types = {"BIGINT", "TIMESTAMP WITH TIME ZONE", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR"};
    for (const delta::CommitSummary& c : *commits) {
      auto dump = [](const json& j) -> std::optional<std::string> {
        if (j.is_null()) return std::nullopt;
        return j.dump();
      };
      r.rows.push_back({std::to_string(c.version), FormatMs(c.timestamp_ms), c.operation,
                        dump(c.operation_parameters), dump(c.operation_metrics), c.engine_info});
    }
    return out;
  }

  Result<std::optional<StatementResult>> DescribeDetail(const std::string& statement,
                                                        const DescribedTable& call) {
    StatementResult out;
    out.statement = statement;
    out.returns_rows = true;
    engine::QueryResult& r = out.result;
    delta::SnapshotOptions snapshot_options;
    snapshot_options.version = call.version;
    snapshot_options.timestamp = call.timestamp;
    const std::string folder = TableLocation(call.path);
    ASSIGN_OR_RETURN(std::shared_ptr<const delta::Snapshot> snapshot, LoadTable(folder, snapshot_options));
    r.column_names = {"location",       "version",        "minReaderVersion", "minWriterVersion",
                      "readerFeatures", "writerFeatures", "partitionColumns", "numFiles",
                      "sizeInBytes",    "numRecords",     "schema",           "properties"};
    r.column_types = {"VARCHAR", "BIGINT", "INTEGER", "INTEGER", "VARCHAR", "VARCHAR",
                      "VARCHAR", "BIGINT", "BIGINT",  "BIGINT",  "VARCHAR", "VARCHAR"};
    int64_t records = snapshot->num_records();
    json properties = json::object();
    for (const auto& [key, value] : snapshot->metadata.configuration) properties[key] = value;
    r.rows.push_back(
        {folder, std::to_string(snapshot->version), std::to_string(snapshot->protocol.min_reader_version),
         std::to_string(snapshot->protocol.min_writer_version), JoinList(snapshot->protocol.reader_features),
         JoinList(snapshot->protocol.writer_features), JoinList(snapshot->metadata.partition_columns),
         std::to_string(snapshot->files.size()), std::to_string(snapshot->size_bytes()),
         records >= 0 ? std::optional<std::string>(std::to_string(records)) : std::nullopt,
         snapshot->metadata.schema_string, properties.dump()});
    out.files_total = snapshot->files.size();
    return std::optional<StatementResult>(std::move(out));
  }

  Result<StatementResult> ApplySetting(const std::string& statement, const grammar::Setting& setting) {
    const grammar::Setting* change = &setting;
    int64_t number = 0;
    if (change->name == "txn_version" && change->value &&
        (change->value->empty() || change->value->find_first_not_of("0123456789") != std::string::npos ||
         std::from_chars(change->value->data(), change->value->data() + change->value->size(), number).ec !=
             std::errc())) {
      return Status::InvalidArgument("basin.txn_version must be a non-negative integer, got '" +
                                     *change->value + "'");
    }
    if (change->value) {
      settings[change->name] = *change->value;
    } else {
      settings.erase(change->name);
    }
    StatementResult out;
    out.statement = statement;
    return out;
  }

  // SET / RESET statement_timeout; nullopt for the settings DuckDB keeps.
  StatementOutcome ApplySetVariable(const std::string& statement, const engine::SqlSet& set) {
    if (!EqualsIgnoreCase(set.name, "statement_timeout") || set.variable)
      return std::optional<StatementResult>();
    if (set.global) {
      return Status::NotImplemented(
          "SET GLOBAL statement_timeout is not supported: SET it in the session, or give basin serve "
          "--statement-timeout");
    }
    std::optional<int64_t> ms;
    if (set.value) {
      Result<int64_t> parsed = ParseDurationMs(*set.value);
      if (!parsed.ok())
        return parsed.status().WithContext("invalid value for parameter \"statement_timeout\"");
      ms = *parsed;
    }
    timeout_->Set(ms);
    StatementResult out;
    out.statement = statement;
    return std::optional<StatementResult>(std::move(out));
  }

  // SHOW of a setting; nullopt when `name` is none (DuckDB's SHOW describes a table).
  StatementOutcome ShowVariable(const std::string& statement, const std::string& name) {
    ASSIGN_OR_RETURN(std::optional<engine::QueryResult> shown, ShowSetting(*conn_, name, timeout_->ms()));
    if (!shown) return std::optional<StatementResult>();
    StatementResult out;
    out.statement = statement;
    out.returns_rows = true;
    out.result = std::move(*shown);
    return std::optional<StatementResult>(std::move(out));
  }

  // The statement handlers by kind of statement; nullopt for DuckDB's statements.
  StatementOutcome Dispatch(const grammar::ParsedStatement& parsed) {
    using Out = std::optional<StatementResult>;
    const std::string& text = parsed.text;
    auto some = [](Result<StatementResult> result) -> StatementOutcome {
      if (!result.ok()) return result.status();
      return Out(std::move(*result));
    };
    auto later = [](const char* what, const char* issue) -> StatementOutcome {
      return NotYetRun(what, issue);
    };
    return std::visit(
        Overloaded{
            [](const grammar::DuckDbStatement&) -> StatementOutcome { return Out(); },
            [&](const grammar::CreateTable& s) { return RunCreateTable(*this, text, s); },
            [&](const grammar::DropTable& s) { return RunDropTable(*this, text, s); },
            [&](const grammar::AlterTable& s) { return RunAlterTable(*this, text, s); },
            [&](const grammar::ShowTables& s) { return RunShowTables(*this, text, s); },
            [&](const grammar::DescribeTable& s) { return RunDescribeTable(*this, text, s); },
            [&](const grammar::ShowTblProperties& s) { return RunShowTblProperties(*this, text, s); },
            [&](const grammar::DescribeHistory& s) -> StatementOutcome {
              ASSIGN_OR_RETURN(DescribedTable call, DescribedScan(s.table));
              std::optional<size_t> limit;
              if (s.limit) limit = static_cast<size_t>(*s.limit);
              return some(DescribeHistory(text, call.path, limit));
            },
            [&](const grammar::DescribeDetail& s) -> StatementOutcome {
              ASSIGN_OR_RETURN(DescribedTable call, DescribedScan(s.table));
              return DescribeDetail(text, call);
            },
            [&](const grammar::Insert& s) { return RunInsert(*this, text, s); },
            [&](const grammar::Update& s) { return RunUpdate(*this, text, s); },
            [&](const grammar::Delete& s) { return RunDelete(*this, text, s); },
            [&](const grammar::Merge& s) { return RunMerge(*this, text, s); },
            [&](const grammar::Optimize& s) { return RunOptimize(*this, text, s); },
            [&](const grammar::Vacuum& s) { return RunVacuum(*this, text, s); },
            [&](const grammar::Restore& s) { return RunRestore(*this, text, s); },
            [&](const grammar::Setting& s) { return some(ApplySetting(text, s)); },
            [&](const grammar::SetVariable& s) { return ApplySetVariable(text, s.set); },
            [&](const grammar::ShowVariable& s) { return ShowVariable(text, s.name); },
            [&](const grammar::CreateStreamingTable&) {
              return later("CREATE STREAMING TABLE", "pipelines");
            },
            [&](const grammar::CreateMaterializedView&) {
              return later("CREATE MATERIALIZED VIEW", "pipelines");
            },
            [&](const grammar::CreateFlow&) { return later("CREATE FLOW", "pipelines"); },
            [&](const grammar::CreateTemporaryView&) {
              return later("a pipeline's CREATE TEMPORARY VIEW", "pipelines");
            },
            [&](const grammar::CreateUser& s) { return RunCreateUser(*this, text, s); },
            [&](const grammar::CreateRole& s) { return RunCreateRole(*this, text, s); },
            [&](const grammar::DropPrincipal& s) { return RunDropPrincipal(*this, text, s); },
            [&](const grammar::GrantOrRevoke& s) { return RunGrantOrRevoke(*this, text, s); },
            [&](const grammar::ShowGrants& s) { return RunShowGrants(*this, text, s); },
            [&](const grammar::CreateToken& s) { return RunCreateToken(*this, text, s); },
            [&](const grammar::RevokeToken& s) { return RunRevokeToken(*this, text, s); },
            // DuckDB's, unless Run() sends COPY's rows to the caller.
            [](const grammar::CopyStdio&) -> StatementOutcome { return Out(); },
            [](const grammar::TransactionControl&) -> StatementOutcome { return Out(); },
        },
        parsed.body);
  }

  // Run(), as one statement of the session: an interrupt stops the statement it arrived
  // during, not the next one, so does the statement timeout (until its rows are read), and background
  // checkpoints that failed since the last statement become its notices.
  Result<StatementResult> RunStatement(const grammar::ParsedStatement& parsed, bool stream,
                                       const std::string* parquet_url = nullptr) {
    conn_->cancellation().Reset();
    RETURN_IF_ERROR(governor_->BeginStatement());
    if (TransactionState() == TransactionStatus::kAborted) return EndAbortedBlock(parsed);
    const uint64_t started = timeout_->Start();
    reads_.clear();
    Result<StatementResult> result = Run(parsed, stream, parquet_url);
    if (result.ok() && result->rows) {
      result->rows = timeout_->Guard(started, std::move(result->rows));
    } else {
      Status finished = timeout_->Finish(started, result.status());
      if (!finished.ok()) result = std::move(finished);
    }
    if (!result.ok()) {
      if (engine::TransactionBlockOf(*conn_) != engine::TransactionBlock::kNone) block_failed_ = true;
      return result.status();
    }
    result->command = CommandOf(parsed);
    RecordLineage(parsed, *result);
    for (std::string& failure : checkpoints.TakeFailures()) result->notices.push_back(std::move(failure));
    return result;
  }

  TransactionStatus TransactionState() {
    switch (engine::TransactionBlockOf(*conn_)) {
      case engine::TransactionBlock::kNone:
        block_failed_ = false;
        return TransactionStatus::kIdle;
      case engine::TransactionBlock::kAborted:
        return TransactionStatus::kAborted;
      case engine::TransactionBlock::kOpen:
        break;
    }
    return block_failed_ ? TransactionStatus::kAborted : TransactionStatus::kInBlock;
  }

  // In an aborted block only COMMIT and ROLLBACK run, and both roll back.
  Result<StatementResult> EndAbortedBlock(const grammar::ParsedStatement& parsed) {
    const auto* control = std::get_if<grammar::TransactionControl>(&parsed.body);
    if (control == nullptr || control->kind == engine::SqlTransaction::Kind::kBegin) {
      return Status::TransactionAborted(
          "current transaction is aborted, commands ignored until end of transaction block (ROLLBACK ends "
          "it)");
    }
    RETURN_IF_ERROR(conn_->Execute("ROLLBACK"));
    block_failed_ = false;
    StatementResult out;
    out.statement = parsed.text;
    out.command = "ROLLBACK";
    return out;
  }

  // COPY ... TO STDOUT for a caller that sends the rows on: its query's rows, with the
  // format they are to be written in.
  Result<StatementResult> CopyToCaller(const std::string& statement, const engine::SqlCopy& copy, bool stream,
                                       const std::string* parquet_url) {
    if (copy.from) {
      return Status::NotImplemented(
          "COPY ... FROM STDIN is not supported yet: load rows with INSERT, or COPY ... FROM 'file'");
    }
    ASSIGN_OR_RETURN(CopyFormat format, ParseCopyFormat(copy));
    ASSIGN_OR_RETURN(StatementResult out, RunOnDuckDb(statement, copy.query, stream, parquet_url));
    out.copy_out = format;
    return out;
  }

  Result<StatementResult> Run(const grammar::ParsedStatement& parsed, bool stream,
                              const std::string* parquet_url) {
    const bool sink = std::holds_alternative<grammar::Insert>(parsed.body) ||
                      std::holds_alternative<grammar::Merge>(parsed.body);
    if (!streams_allowed_ || !sink) {
      RETURN_IF_ERROR(RefuseStreams(parsed.streams, "a statement"));
    }
    const auto* copy = std::get_if<grammar::CopyStdio>(&parsed.body);
    if (copy != nullptr && options.copy_to_caller) {
      return CopyToCaller(parsed.text, copy->copy, stream, parquet_url);
    }
    ASSIGN_OR_RETURN(std::optional<StatementResult> handled, Dispatch(parsed));
    if (handled) return std::move(*handled);
    return RunOnDuckDb(parsed.text, parsed.duckdb_sql, stream, parquet_url);
  }

  // With `parquet_url`, a query's rows go to that Parquet file (ExecuteStatementToParquet).
  Result<StatementResult> RunOnDuckDb(const std::string& statement, const std::string& sql, bool stream,
                                      const std::string* parquet_url) {
    StatementResult out;
    out.statement = statement;
    // Names (warehouse tables, delta_scan, table_changes) are DuckDB's binder's to resolve,
    // through the lakehouse catalog and Basin's table functions: the text stays as it is.
    engine::TakeScanStats(*conn_);
    std::optional<std::string> copy =
        parquet_url ? engine::CopyQueryToParquetSql(sql, *parquet_url) : std::nullopt;
    if (copy) {
      ASSIGN_OR_RETURN(engine::QueryResult copied, conn_->Query(*copy));
      const std::string count = copied.row_count() == 1 ? copied.at(0, 0).value_or("") : "";
      int64_t rows = 0;
      if (std::from_chars(count.data(), count.data() + count.size(), rows).ec != std::errc()) {
        return Status::Internal("COPY to " + *parquet_url + " reported no row count");
      }
      out.parquet_rows = rows;
      out.returns_rows = true;
      engine::ScanStats stats = engine::TakeScanStats(*conn_);
      out.files_read = stats.files_read;
      out.files_total = stats.files_total;
      return out;
    }
    if (stream) {
      ASSIGN_OR_RETURN(out.rows, conn_->Stream(sql));
      out.returns_rows = !out.rows->column_names().empty();
      return out;
    }
    ASSIGN_OR_RETURN(out.result, conn_->Query(sql));
    engine::ScanStats stats = engine::TakeScanStats(*conn_);
    out.files_read = stats.files_read;
    out.files_total = stats.files_total;
    out.returns_rows = out.result.column_count() > 0;
    return out;
  }
};

Result<std::unique_ptr<Session>> Session::Open(const SessionOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  ASSIGN_OR_RETURN(impl->warehouse_, catalog::Warehouse::Open(options.warehouse_dir));
  engine::DatabaseOptions database;
  database.threads = options.threads;
  ASSIGN_OR_RETURN(impl->db, engine::Database::Open(database));
  ASSIGN_OR_RETURN(impl->conn_, engine::Connection::Open(impl->db));
  impl->governor_ = std::make_unique<Governor>(impl->warehouse_, *impl->conn_, options.user);
  auto lakehouse = std::make_shared<engine::Lakehouse>();
  lakehouse->warehouse = impl->warehouse_;
  impl->snapshots = options.snapshots ? options.snapshots : std::make_shared<engine::SnapshotCache>();
  lakehouse->snapshots = impl->snapshots;
  lakehouse->base_dir = options.warehouse_dir;
  lakehouse->open_table_store = OpenTableStore;
  impl->lineage_ = options.record_lineage ? LineageRecorder::For(options.warehouse_dir) : nullptr;
  if (!options.user.empty() || impl->lineage_) {
    lakehouse->authorize_read = [session = impl.get()](const std::optional<catalog::TableName>& table,
                                                       const std::string& location) {
      return session->AuthorizeRead(table, location);
    };
  }
  if (!options.user.empty()) {
    lakehouse->authorize_create_view = [governor = impl->governor_.get()](const std::string& schema) {
      return governor->Require(security::Privilege::kCreate, security::Securable::Schema(schema));
    };
  }
  lakehouse->table_changes = [session = impl.get()](const std::vector<std::string>& table, int64_t start,
                                                    std::optional<int64_t> end) {
    return session->ChangeFeed(table, start, end);
  };
  lakehouse->stream_table = [session = impl.get()](const std::vector<std::string>& table,
                                                   std::optional<int64_t> changes_from,
                                                   std::optional<int64_t> source) {
    return session->StreamTable(table, changes_from, source);
  };
  lakehouse->read_files = [session = impl.get()](const std::string& folder,
                                                 const std::map<std::string, std::string>& options,
                                                 std::optional<int64_t> source) {
    return session->ReadFiles(folder, options, source);
  };
  RETURN_IF_ERROR(engine::AttachLakehouse(*impl->conn_, std::move(lakehouse)));
  impl->timeout_ = std::make_unique<StatementTimeout>(*impl->conn_, options.statement_timeout_ms);
  engine::ScanSettings settings;
  settings.data_skipping = options.data_skipping;
  engine::SetScanSettings(*impl->conn_, settings);
  // The user's access from the start: what runs on the connection before the first statement
  // (a stream binding its source when it opens) is checked too. Each statement reads it again.
  RETURN_IF_ERROR(impl->governor_->BeginStatement());
  return std::unique_ptr<Session>(new Session(std::move(impl)));
}

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;

engine::Connection& Session::connection() { return *impl_->conn_; }
void Session::SetProgressCallback(std::function<void(const commands::Progress&)> callback) {
  impl_->progress = std::move(callback);
}
const SessionOptions& Session::options() const { return impl_->options; }
const std::shared_ptr<engine::SnapshotCache>& Session::snapshot_cache() const { return impl_->snapshots; }
void Session::AllowStreams(bool allowed) { impl_->streams_allowed_ = allowed; }
namespace {
// Installs `stream` as STREAM source number `source`'s, or with null, removes its.
template <typename Stream>
void Install(std::map<int64_t, Stream*>& streams, int64_t source, Stream* stream) {
  if (stream == nullptr) {
    streams.erase(source);
  } else {
    streams[source] = stream;
  }
}
}  // namespace

void Session::SetTableStream(int64_t source, TableStream* stream) {
  Install(impl_->table_streams_, source, stream);
}
void Session::SetFilesStream(int64_t source, FilesStream* stream) {
  Install(impl_->files_streams_, source, stream);
}

void Session::SetAsideRefusedRows(std::function<Status(const std::string&)> set_aside) {
  impl_->set_aside_refused_ = std::move(set_aside);
}
void Session::GateCommits(std::function<Status()> gate) { impl_->commit_gate_ = std::move(gate); }

void Session::LayOutFiles(engine::FileLayout layout) { impl_->file_layout_ = layout; }
void Session::DescribeSourcesWith(
    std::function<Result<std::vector<engine::ColumnType>>(const std::string& source_sql)> describe) {
  impl_->describe_source_ = std::move(describe);
}
void Session::ExpectOnWrites(std::shared_ptr<const commands::TableExpectations> expectations) {
  impl_->expectations_ = std::move(expectations);
}
SessionContext& Session::context() { return *impl_; }

Result<StatementResult> Session::ExecuteStatement(std::string_view script,
                                                  const engine::ScriptStatement& statement, bool stream) {
  ASSIGN_OR_RETURN(grammar::ParsedStatement parsed, grammar::ParseStatement(script, statement));
  return impl_->RunStatement(parsed, stream);
}

Result<StatementResult> Session::ExecuteStatementToParquet(std::string_view script,
                                                           const engine::ScriptStatement& statement,
                                                           const std::string& parquet_url) {
  ASSIGN_OR_RETURN(grammar::ParsedStatement parsed, grammar::ParseStatement(script, statement));
  return impl_->RunStatement(parsed, /*stream=*/false, &parquet_url);
}

Result<StatementResult> Session::ExecuteParsed(const grammar::ParsedStatement& parsed,
                                               const std::optional<delta::SetTransaction>& txn) {
  if (txn) {
    impl_->settings["txn_app_id"] = txn->app_id;
    impl_->settings["txn_version"] = std::to_string(txn->version);
  }
  return impl_->RunStatement(parsed, /*stream=*/false);
}

engine::ScanStats Session::TakeScanStats() { return engine::TakeScanStats(*impl_->conn_); }
TransactionStatus Session::transaction_status() { return impl_->TransactionState(); }

Result<std::vector<StatementResult>> Session::Execute(const std::string& text) {
  std::vector<engine::ScriptStatement> statements = engine::SplitSqlScript(text);
  std::vector<StatementResult> out;
  for (size_t i = 0; i < statements.size(); i++) {
    auto result = ExecuteStatement(text, statements[i]);
    if (!result.ok()) {
      if (statements.size() == 1) return result.status();
      return result.status().WithContext(
          "statement " + std::to_string(i + 1) + " (line " +
          std::to_string(engine::PositionInText(text, statements[i].offset).line) + ")");
    }
    out.push_back(std::move(result).value());
  }
  return out;
}

}  // namespace basin::sql
