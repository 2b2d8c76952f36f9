#include "sql/session.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <list>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "commands/table_changes.h"
#include "delta/history.h"
#include "delta/log_segment.h"
#include "delta/skipping.h"
#include "delta/snapshot.h"
#include "engine/parquet_log_io.h"
#include "engine/predicate_parser.h"
#include "engine/scan.h"
#include "sql/lexer.h"
#include "sql/statements.h"
#include "sql/table_references.h"
#include "sql/token_cursor.h"

namespace basin::sql {

namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// obj[key] when it is a string, else "" (the syntax tree reuses keys with other types).
std::string Str(const json& obj, const char* key) {
  if (!obj.is_object()) return "";
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : "";
}

bool IsKeyword(const Token& t, std::string_view word) {
  if (t.kind != Token::Kind::kIdentifier || t.text.size() != word.size()) return false;
  for (size_t i = 0; i < word.size(); i++) {
    if (std::toupper(static_cast<unsigned char>(t.text[i])) != word[i]) return false;
  }
  return true;
}

// What the syntax tree says about one delta_scan call: the predicate of the SELECT whose
// FROM holds it, if data skipping may use that predicate for it.
struct CallContext {
  const json* where = nullptr;
  engine::PredicateScope scope;
};

// Table references of a FROM clause. `skippable` is false below the null-supplying side
// of an outer join (or any join but inner/cross), where dropping files changes results.
void CollectTableRefs(const json& ref, bool skippable, std::vector<std::pair<const json*, bool>>& out) {
  if (!ref.is_object()) return;
  std::string type = Str(ref, "type");
  if (type == "JOIN") {
    std::string join = Str(ref, "join_type");
    bool inner = join == "INNER" && (Str(ref, "ref_type").empty() || Str(ref, "ref_type") == "REGULAR");
    if (ref.contains("left")) CollectTableRefs(ref["left"], skippable && inner, out);
    if (ref.contains("right")) CollectTableRefs(ref["right"], skippable && inner, out);
    return;
  }
  if (type == "CROSS_PRODUCT") {
    if (ref.contains("left")) CollectTableRefs(ref["left"], skippable, out);
    if (ref.contains("right")) CollectTableRefs(ref["right"], skippable, out);
    return;
  }
  out.emplace_back(&ref, skippable);
}

std::string RefName(const json& ref) {
  std::string alias = Str(ref, "alias");
  if (!alias.empty()) return alias;
  if (Str(ref, "type") == "BASE_TABLE") return Str(ref, "table_name");
  return "";
}

// Finds every SELECT_NODE in the tree and records, by query_location, the context of each
// delta_scan table function in its FROM.
void CollectCalls(const json& node, std::map<uint64_t, CallContext>& out) {
  if (node.is_array()) {
    for (const json& child : node) CollectCalls(child, out);
    return;
  }
  if (!node.is_object()) return;
  if (Str(node, "type") == "SELECT_NODE" && node.contains("from_table")) {
    std::vector<std::pair<const json*, bool>> refs;
    CollectTableRefs(node["from_table"], true, refs);
    for (const auto& [ref, skippable] : refs) {
      if (Str(*ref, "type") != "TABLE_FUNCTION" || !ref->contains("function")) continue;
      const json& function = (*ref)["function"];
      if (Str(function, "function_name") != "delta_scan") continue;
      auto location_json = ref->find("query_location");
      if (location_json == ref->end() || !location_json->is_number_unsigned()) continue;
      uint64_t location = location_json->get<uint64_t>();
      CallContext context;
      if (skippable && node.contains("where_clause") && !node["where_clause"].is_null()) {
        context.where = &node["where_clause"];
      }
      std::string name = RefName(*ref);
      if (!name.empty()) context.scope.qualifiers.push_back(name);
      for (const auto& [other, unused] : refs) {
        if (other == ref) continue;
        std::string other_name = RefName(*other);
        if (!other_name.empty()) context.scope.other_qualifiers.push_back(other_name);
      }
      out[location] = std::move(context);
    }
  }
  for (const auto& [key, child] : node.items()) {
    if (child.is_structured()) CollectCalls(child, out);
  }
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

// A resolved query's scans: the temporary tables they created are dropped with it.
class OwnedResolvedQuery : public ResolvedQuery {
 public:
  explicit OwnedResolvedQuery(engine::Connection& conn) : conn_(conn) {}
  ~OwnedResolvedQuery() override {
    for (const auto& plan : plans) engine::DropScanTempTables(conn_, plan);
    for (const auto& table : temp_tables)
      (void)conn_.Query("DROP TABLE IF EXISTS " + engine::QuoteIdentifier(table));
  }
  OwnedResolvedQuery(const OwnedResolvedQuery&) = delete;
  OwnedResolvedQuery& operator=(const OwnedResolvedQuery&) = delete;

  std::vector<engine::ScanPlan> plans;
  std::vector<std::string> temp_tables;

 private:
  engine::Connection& conn_;
};

// SET basin.<name> = value / RESET basin.<name>: the setting's name and value (nullopt to
// reset); nullopt when the statement is not one.
struct SettingChange {
  std::string name;
  std::optional<std::string> value;
};

Result<std::optional<SettingChange>> ParseSettingChange(TokenCursor& tokens) {
  bool reset = tokens.AcceptKeywords({"RESET", "BASIN"});
  if (!reset && !tokens.AcceptKeywords({"SET", "BASIN"})) return std::optional<SettingChange>();
  if (!tokens.AcceptSymbol(".")) return std::optional<SettingChange>();  // SET basin = ...: DuckDB's
  SettingChange change;
  ASSIGN_OR_RETURN(change.name, tokens.Identifier("a setting name after basin."));
  std::transform(change.name.begin(), change.name.end(), change.name.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  if (!reset) {
    if (!tokens.AcceptSymbol("=") && !tokens.AcceptKeywords({"TO"})) return tokens.Error("'=' or TO");
    bool negative = tokens.AcceptSymbol("-");
    const Token& literal = tokens.Peek();
    if (tokens.AtEnd() || (literal.kind != Token::Kind::kString && literal.kind != Token::Kind::kNumber &&
                           literal.kind != Token::Kind::kIdentifier)) {
      return tokens.Error("a value");
    }
    change.value = (negative ? "-" : "") + literal.text;
    tokens.Reset(tokens.position() + 1);
  }
  RETURN_IF_ERROR(tokens.ExpectEnd());
  return std::optional<SettingChange>(std::move(change));
}

}  // namespace

struct Session::Impl : public SessionContext {
  // A snapshot of a recent statement, kept so repeated queries skip log replay and stats
  // parsing. Commits are never rewritten, so (folder, version) identifies a snapshot; the
  // commit file's size and mtime also guard against a table deleted and written again in
  // the same folder.
  struct CachedSnapshot {
    std::string folder;
    std::optional<ObjectInfo> commit;           // commit file `snapshot->version`, if still in the log
    std::shared_ptr<delta::Snapshot> snapshot;  // parses its stats on the first skipping use
  };
  static constexpr size_t kMaxCachedSnapshots = 8;

  SessionOptions options;
  std::shared_ptr<catalog::Warehouse> warehouse_;
  std::shared_ptr<engine::Database> db;
  std::unique_ptr<engine::Connection> conn_;
  std::unique_ptr<engine::DuckDBParquetLogIO> log_io;         // checkpoints, on `db`
  std::list<std::shared_ptr<CachedSnapshot>> snapshot_cache;  // most recently used first
  std::map<std::string, std::string> settings;                // SET basin.<name>
  std::function<void(const commands::Progress&)> progress;

  // --- SessionContext ---

  engine::Connection& conn() override { return *conn_; }
  const catalog::Warehouse& warehouse() const override { return *warehouse_; }

  Result<std::optional<catalog::TableEntry>> LookupTable(
      const std::vector<std::string>& name_parts) override {
    ASSIGN_OR_RETURN(catalog::TableName name, catalog::MakeTableName(name_parts));
    return warehouse_->Lookup(name);
  }

  Result<catalog::TableEntry> GetTable(const std::vector<std::string>& name_parts) override {
    ASSIGN_OR_RETURN(catalog::TableName name, catalog::MakeTableName(name_parts));
    return warehouse_->Get(name);
  }

  Result<std::shared_ptr<const delta::Snapshot>> LoadTable(
      const std::string& location, const delta::SnapshotOptions& snapshot_options) override {
    DeltaScanCall call;
    call.path = location;
    call.version = snapshot_options.version;
    call.timestamp = snapshot_options.timestamp;
    ASSIGN_OR_RETURN(auto cached, Load(call));
    return std::shared_ptr<const delta::Snapshot>(cached->snapshot);
  }

  Result<std::unique_ptr<ResolvedQuery>> ResolveQuery(const std::string& sql) override {
    auto out = std::make_unique<OwnedResolvedQuery>(*conn_);
    ASSIGN_OR_RETURN(std::string text, ResolveTableChanges(sql, *out));
    ASSIGN_OR_RETURN(text,
                     RewriteTableNames(
                         text, *conn_,
                         [this](const std::vector<std::string>& parts) -> Result<std::optional<std::string>> {
                           auto name = catalog::MakeTableName(parts);
                           if (!name.ok())
                             return std::optional<std::string>();  // not a name the warehouse can hold
                           ASSIGN_OR_RETURN(auto entry, warehouse_->Lookup(*name));
                           if (!entry) return std::optional<std::string>();
                           return std::optional<std::string>(entry->location);
                         }));
    RETURN_IF_ERROR(ResolveDeltaScans(text, *out));
    return std::unique_ptr<ResolvedQuery>(std::move(out));
  }

  commands::CommandContext MakeCommandContext() override {
    commands::CommandContext ctx;
    ctx.conn = conn_.get();
    ctx.txn_options.checkpoint_io = log_io.get();
    // Lost races are retried as long as the winners do not conflict: a busy table must not
    // turn a blind append into an error after a handful of attempts.
    ctx.txn_options.max_attempts = 1000;
    ctx.progress = progress;
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

  std::optional<std::string> Setting(const std::string& name) const override {
    auto it = settings.find(name);
    if (it == settings.end()) return std::nullopt;
    return it->second;
  }

  // --- snapshots ---

  Result<std::string> TableFolder(const std::string& path) const {
    fs::path folder(path);
    if (folder.is_relative() && !options.warehouse_dir.empty())
      folder = fs::path(options.warehouse_dir) / folder;
    std::error_code ec;
    if (!fs::is_directory(folder / "_delta_log", ec)) {
      return Status::NotFound("table " + path + ": no Delta table at " + folder.string() +
                              " (no _delta_log folder)");
    }
    return folder.lexically_normal().string();
  }

  Result<std::shared_ptr<ObjectStore>> OpenStore(const std::string& path) const {
    ASSIGN_OR_RETURN(std::string folder, TableFolder(path));
    return OpenLocalObjectStore(folder);
  }

  static bool SameObject(const std::optional<ObjectInfo>& a, const std::optional<ObjectInfo>& b) {
    if (!a || !b) return !a && !b;
    return a->key == b->key && a->size_bytes == b->size_bytes &&
           a->modification_time_ms == b->modification_time_ms;
  }

  // The snapshot `call` selects, from the cache when the log still holds the same commit.
  // Only the log is listed on a hit. Time travel by timestamp always replays the log.
  Result<std::shared_ptr<CachedSnapshot>> Load(const DeltaScanCall& call) {
    ASSIGN_OR_RETURN(std::string folder, TableFolder(call.path));
    ASSIGN_OR_RETURN(std::shared_ptr<ObjectStore> store, OpenLocalObjectStore(folder));
    delta::SnapshotOptions snapshot_options;
    snapshot_options.version = call.version;
    snapshot_options.timestamp = call.timestamp;
    std::optional<ObjectInfo> commit;
    bool cacheable = !call.timestamp;
    if (cacheable) {
      // A listing that fails or is empty is not cached; LoadSnapshot reports the problem.
      auto listing = delta::ListLog(*store);
      cacheable = listing.ok() && !listing->empty();
      if (cacheable) {
        // Pinning the listed version keeps the cache key right if a commit lands meanwhile.
        if (!snapshot_options.version) snapshot_options.version = listing->latest_version();
        auto found = listing->commits.find(*snapshot_options.version);
        if (found != listing->commits.end()) commit = found->second;
        for (auto it = snapshot_cache.begin(); it != snapshot_cache.end(); ++it) {
          const CachedSnapshot& entry = **it;
          if (entry.folder == folder && entry.snapshot->version == *snapshot_options.version &&
              SameObject(entry.commit, commit)) {
            snapshot_cache.splice(snapshot_cache.begin(), snapshot_cache, it);
            return snapshot_cache.front();
          }
        }
      }
    }
    // Snapshot errors name the table already.
    ASSIGN_OR_RETURN(auto snapshot, delta::LoadSnapshot(store, call.path, *log_io, snapshot_options));
    auto entry = std::make_shared<CachedSnapshot>(CachedSnapshot{folder, commit, std::move(snapshot)});
    if (cacheable) {
      snapshot_cache.push_front(entry);
      if (snapshot_cache.size() > kMaxCachedSnapshots) snapshot_cache.pop_back();
    }
    return entry;
  }

  // --- query resolution ---

  // table_changes(...) calls replaced by their change scans.
  Result<std::string> ResolveTableChanges(const std::string& sql, OwnedResolvedQuery& out) {
    ASSIGN_OR_RETURN(std::vector<TableChangesCall> calls, FindTableChangesCalls(sql));
    std::string text = sql;
    for (auto it = calls.rbegin(); it != calls.rend(); ++it) {
      ASSIGN_OR_RETURN(catalog::TableEntry entry, GetTable(it->name));
      ASSIGN_OR_RETURN(auto store, OpenStore(entry.location));
      ASSIGN_OR_RETURN(
          commands::ChangesScan scan,
          commands::TableChangesSql(*conn_, store, entry.location, it->start_version, it->end_version));
      out.temp_tables.insert(out.temp_tables.end(), scan.temp_tables.begin(), scan.temp_tables.end());
      text.replace(it->begin, it->end - it->begin, "(" + scan.sql + ")");
    }
    return text;
  }

  // The predicate contexts of the delta_scan calls, by offset; empty when DuckDB's parser
  // cannot serialize the statement (only SELECTs serialize), which means no skipping.
  std::map<uint64_t, CallContext> SkippingContexts(const std::string& statement, json& tree) {
    std::map<uint64_t, CallContext> out;
    auto r = conn_->Query("SELECT json_serialize_sql(" + engine::QuoteLiteral(statement) + ")");
    if (!r.ok() || r->row_count() != 1 || !r->at(0, 0)) return out;
    tree = json::parse(*r->at(0, 0), nullptr, false);
    if (tree.is_discarded() || !tree.is_object() || !tree.contains("error") || tree["error"] != false ||
        !tree.contains("statements"))
      return out;
    CollectCalls(tree["statements"], out);
    return out;
  }

  // delta_scan(...) calls in `text` replaced by scans of their snapshots, skipping files
  // by the WHERE clause of the SELECT whose FROM holds them.
  Status ResolveDeltaScans(std::string& text, OwnedResolvedQuery& out) {
    ASSIGN_OR_RETURN(std::vector<DeltaScanCall> calls, FindDeltaScanCalls(text));
    json tree;
    std::map<uint64_t, CallContext> contexts;
    if (!calls.empty() && options.data_skipping) contexts = SkippingContexts(text, tree);
    // Back to front, so earlier offsets stay valid as text is replaced.
    for (auto it = calls.rbegin(); it != calls.rend(); ++it) {
      ASSIGN_OR_RETURN(auto cached, Load(*it));
      const delta::Snapshot& snapshot = *cached->snapshot;
      engine::ScanOptions scan_options;
      auto context = contexts.find(it->begin);
      if (context != contexts.end() && context->second.where != nullptr) {
        scan_options.file_indexes = delta::FilesMatching(
            snapshot,
            engine::PredicateFromSyntaxTree(*context->second.where, snapshot.schema, context->second.scope));
      }
      ASSIGN_OR_RETURN(engine::ScanPlan plan, engine::BuildScanSql(snapshot, *conn_, scan_options));
      out.files_read += plan.files_read;
      out.files_total += plan.files_total;
      text.replace(it->begin, it->end - it->begin, "(" + plan.sql + ")");
      out.plans.push_back(std::move(plan));
    }
    out.sql = text;
    return Status::OK();
  }

  // --- statements ---

  // DESCRIBE HISTORY / DESCRIBE DETAIL of delta_scan(...) or a warehouse table; nullopt for
  // other statements.
  Result<std::optional<StatementResult>> TryDescribeHistoryOrDetail(const std::string& statement) {
    ASSIGN_OR_RETURN(std::vector<Token> tokens, Tokenize(statement));
    if (tokens.size() < 3 || !IsKeyword(tokens[0], "DESCRIBE") ||
        !(IsKeyword(tokens[1], "HISTORY") || IsKeyword(tokens[1], "DETAIL"))) {
      return std::optional<StatementResult>();
    }
    bool history = IsKeyword(tokens[1], "HISTORY");
    DeltaScanCall call;
    size_t next = 2;
    if (IsKeyword(tokens[2], "DELTA_SCAN")) {
      ASSIGN_OR_RETURN(std::vector<DeltaScanCall> calls, FindDeltaScanCalls(statement));
      if (calls.size() != 1) return Status::InvalidArgument("expected one delta_scan(...) after DESCRIBE");
      call = calls[0];
      while (next < tokens.size() && tokens[next].begin < call.end) next++;
    } else {
      TokenCursor cursor(statement, tokens);
      cursor.Reset(2);
      ASSIGN_OR_RETURN(std::vector<std::string> name,
                       cursor.QualifiedName("a table name or delta_scan(...)"));
      ASSIGN_OR_RETURN(catalog::TableEntry entry, GetTable(name));
      call.path = entry.location;
      next = cursor.position();
    }
    // What may follow: LIMIT n for history, nothing else.
    std::optional<size_t> limit;
    if (history && next + 1 < tokens.size() && IsKeyword(tokens[next], "LIMIT")) {
      TokenCursor cursor(statement, tokens);
      cursor.Reset(next + 1);
      ASSIGN_OR_RETURN(int64_t n, cursor.Integer("a row count after LIMIT"));
      if (n < 0) return Status::InvalidArgument("LIMIT must not be negative");
      limit = static_cast<size_t>(n);
      next += 2;
    }
    if (next != tokens.size()) {
      return Status::InvalidArgument("unexpected '" + tokens[next].text + "' after the table in DESCRIBE");
    }
    if (history) {
      ASSIGN_OR_RETURN(StatementResult result, DescribeHistory(statement, call.path, limit));
      return std::optional<StatementResult>(std::move(result));
    }
    return DescribeDetail(statement, call);
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
                                                        const DeltaScanCall& call) {
    StatementResult out;
    out.statement = statement;
    out.returns_rows = true;
    engine::QueryResult& r = out.result;
    ASSIGN_OR_RETURN(auto cached, Load(call));
    const std::shared_ptr<delta::Snapshot>& snapshot = cached->snapshot;
    r.column_names = {"location",       "version",        "minReaderVersion", "minWriterVersion",
                      "readerFeatures", "writerFeatures", "partitionColumns", "numFiles",
                      "sizeInBytes",    "numRecords",     "schema",           "properties"};
    r.column_types = {"VARCHAR", "BIGINT", "INTEGER", "INTEGER", "VARCHAR", "VARCHAR",
                      "VARCHAR", "BIGINT", "BIGINT",  "BIGINT",  "VARCHAR", "VARCHAR"};
    int64_t records = snapshot->num_records();
    json properties = json::object();
    for (const auto& [key, value] : snapshot->metadata.configuration) properties[key] = value;
    r.rows.push_back(
        {*TableFolder(call.path), std::to_string(snapshot->version),
         std::to_string(snapshot->protocol.min_reader_version),
         std::to_string(snapshot->protocol.min_writer_version), JoinList(snapshot->protocol.reader_features),
         JoinList(snapshot->protocol.writer_features), JoinList(snapshot->metadata.partition_columns),
         std::to_string(snapshot->files.size()), std::to_string(snapshot->size_bytes()),
         records >= 0 ? std::optional<std::string>(std::to_string(records)) : std::nullopt,
         snapshot->metadata.schema_string, properties.dump()});
    out.files_total = snapshot->files.size();
    return std::optional<StatementResult>(std::move(out));
  }

  Result<std::optional<StatementResult>> TrySetting(const std::string& statement, TokenCursor& tokens) {
    ASSIGN_OR_RETURN(std::optional<SettingChange> change, ParseSettingChange(tokens));
    if (!change) return std::optional<StatementResult>();
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
    return std::optional<StatementResult>(std::move(out));
  }

  Result<StatementResult> Run(const std::string& statement) {
    ASSIGN_OR_RETURN(TokenCursor tokens, TokenCursor::Of(statement));
    using Handler =
        Result<std::optional<StatementResult>> (*)(SessionContext&, const std::string&, TokenCursor&);
    static constexpr Handler kHandlers[] = {TryDdlStatement, TryWriteStatement, TryDmlStatement,
                                            TryMaintenanceStatement};
    ASSIGN_OR_RETURN(auto setting, TrySetting(statement, tokens));
    if (setting) return std::move(*setting);
    ASSIGN_OR_RETURN(auto described, TryDescribeHistoryOrDetail(statement));
    if (described) return std::move(*described);
    for (Handler handler : kHandlers) {
      tokens.Reset(0);
      ASSIGN_OR_RETURN(auto handled, handler(*this, statement, tokens));
      if (handled) return std::move(*handled);
    }

    StatementResult out;
    out.statement = statement;
    ASSIGN_OR_RETURN(std::unique_ptr<ResolvedQuery> resolved, ResolveQuery(statement));
    out.files_read = resolved->files_read;
    out.files_total = resolved->files_total;
    ASSIGN_OR_RETURN(out.result, conn_->Query(resolved->sql));
    out.returns_rows = out.result.column_count() > 0;
    return out;
  }
};

Result<std::unique_ptr<Session>> Session::Open(const SessionOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  ASSIGN_OR_RETURN(impl->warehouse_, catalog::Warehouse::Open(options.warehouse_dir));
  ASSIGN_OR_RETURN(impl->db, engine::Database::Open());
  ASSIGN_OR_RETURN(impl->conn_, engine::Connection::Open(impl->db));
  impl->log_io = std::make_unique<engine::DuckDBParquetLogIO>(impl->db);
  return std::unique_ptr<Session>(new Session(std::move(impl)));
}

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;

engine::Connection& Session::connection() { return *impl_->conn_; }
void Session::SetProgressCallback(std::function<void(const commands::Progress&)> callback) {
  impl_->progress = std::move(callback);
}
const SessionOptions& Session::options() const { return impl_->options; }

Result<std::vector<StatementResult>> Session::Execute(const std::string& text) {
  ASSIGN_OR_RETURN(std::vector<Statement> statements, SplitStatements(text));
  std::vector<StatementResult> out;
  for (size_t i = 0; i < statements.size(); i++) {
    auto result = impl_->Run(statements[i].text);
    if (!result.ok()) {
      if (statements.size() == 1) return result.status();
      return result.status().WithContext("statement " + std::to_string(i + 1) + " (line " +
                                         std::to_string(statements[i].line) + ")");
    }
    out.push_back(std::move(result).value());
  }
  return out;
}

}  // namespace basin::sql
