#include "delta/checkpoint_writer.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "delta/log_segment.h"

namespace basin::delta {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// The protocol's checkpoint schema as a from_json() structure. Columns a classic
// checkpoint never needs (commitInfo, cdc, checkpointMetadata, sidecar) are left out.
const std::string& CheckpointStructure() {
  static const std::string structure = [] {
    const json map = "MAP(VARCHAR, VARCHAR)";
    const json dv = {{"storageType", "VARCHAR"},
                     {"pathOrInlineDv", "VARCHAR"},
                     {"offset", "INTEGER"},
                     {"sizeInBytes", "INTEGER"},
                     {"cardinality", "BIGINT"}};
    json s;
    s["txn"] = {{"appId", "VARCHAR"}, {"version", "BIGINT"}, {"lastUpdated", "BIGINT"}};
    s["add"] = {{"path", "VARCHAR"},
                {"partitionValues", map},
                {"size", "BIGINT"},
                {"modificationTime", "BIGINT"},
                {"dataChange", "BOOLEAN"},
                {"stats", "VARCHAR"},
                {"tags", map},
                {"deletionVector", dv},
                {"baseRowId", "BIGINT"},
                {"defaultRowCommitVersion", "BIGINT"},
                {"clusteringProvider", "VARCHAR"}};
    s["remove"] = {{"path", "VARCHAR"},       {"deletionTimestamp", "BIGINT"},
                   {"dataChange", "BOOLEAN"}, {"extendedFileMetadata", "BOOLEAN"},
                   {"partitionValues", map},  {"size", "BIGINT"},
                   {"deletionVector", dv}};
    s["metaData"] = {{"id", "VARCHAR"},           {"name", "VARCHAR"},
                     {"description", "VARCHAR"},  {"format", {{"provider", "VARCHAR"}, {"options", map}}},
                     {"schemaString", "VARCHAR"}, {"partitionColumns", json::array({"VARCHAR"})},
                     {"configuration", map},      {"createdTime", "BIGINT"}};
    s["protocol"] = {{"minReaderVersion", "INTEGER"},
                     {"minWriterVersion", "INTEGER"},
                     {"readerFeatures", json::array({"VARCHAR"})},
                     {"writerFeatures", json::array({"VARCHAR"})}};
    s["domainMetadata"] = {{"domain", "VARCHAR"}, {"configuration", "VARCHAR"}, {"removed", "BOOLEAN"}};
    return s.dump();
  }();
  return structure;
}

constexpr const char* kColumns[] = {"txn", "add", "remove", "metaData", "protocol", "domainMetadata"};
constexpr char kRowsTable[] = "basin_checkpoint_rows";

std::string CheckpointKey(int64_t version) {
  char name[64];
  std::snprintf(name, sizeof(name), "%s%020lld.checkpoint.parquet", kLogFolder,
                static_cast<long long>(version));
  return name;
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// Removes the file DuckDB wrote, whatever happens after.
struct ScopedFile {
  std::string path;
  ~ScopedFile() {
    std::error_code ignored;
    fs::remove(path, ignored);
  }
};

Result<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (!in) return Status::IOError("cannot read " + path);
  return bytes.str();
}

// The snapshot's state as actions, in the order readers expect: protocol and metadata first.
Result<std::vector<Action>> CheckpointActions(const Snapshot& snapshot, int64_t now_ms) {
  ASSIGN_OR_RETURN(int64_t retention_ms, DeletedFileRetentionMs(snapshot.metadata));
  std::vector<Action> actions;
  actions.reserve(2 + snapshot.set_transactions.size() + snapshot.domain_metadata.size() +
                  snapshot.files.size() + snapshot.tombstones.size());
  actions.emplace_back(snapshot.protocol);
  actions.emplace_back(snapshot.metadata);
  for (const auto& [app, txn] : snapshot.set_transactions) actions.emplace_back(txn);
  for (const auto& [domain, dm] : snapshot.domain_metadata) actions.emplace_back(dm);
  for (const auto& add : snapshot.files) actions.emplace_back(add);
  // A tombstone without a deletion time counts as deleted at the epoch, as in Delta.
  const int64_t oldest_kept_ms = now_ms - retention_ms;
  for (const auto& remove : snapshot.tombstones) {
    if (remove.deletion_timestamp.value_or(0) > oldest_kept_ms) actions.emplace_back(remove);
  }
  return actions;
}

// Has DuckDB write `actions` as a Parquet checkpoint at the local path `out_path`.
Status WriteParquet(engine::Connection& conn, const std::vector<Action>& actions,
                    const std::string& out_path) {
  RETURN_IF_ERROR(
      conn.Execute(std::string("CREATE OR REPLACE TEMP TABLE ") + kRowsTable + " (action VARCHAR)"));
  struct DropRows {
    engine::Connection& conn;
    ~DropRows() { (void)conn.Execute(std::string("DROP TABLE IF EXISTS temp.") + kRowsTable); }
  } drop_rows{conn};
  {
    ASSIGN_OR_RETURN(auto appender, engine::Appender::Open(conn, "temp", kRowsTable));
    for (const auto& action : actions) {
      RETURN_IF_ERROR(appender->Append(SerializeAction(action)));
      RETURN_IF_ERROR(appender->EndRow());
    }
    RETURN_IF_ERROR(appender->Close());
  }
  std::string columns;
  for (const char* column : kColumns) {
    std::string quoted = engine::QuoteIdentifier(column);
    columns += (columns.empty() ? "a." : ", a.") + quoted + " AS " + quoted;
  }
  return conn.Execute("COPY (SELECT " + columns + " FROM (SELECT from_json(action, " +
                      engine::QuoteLiteral(CheckpointStructure()) + ") AS a FROM temp." + kRowsTable +
                      ")) TO " + engine::QuoteLiteral(out_path) + " (FORMAT parquet)");
}

// _last_checkpoint must not go backwards when an older checkpoint is (re)written late.
Status UpdateLastCheckpoint(ObjectStore& store, const CheckpointInfo& info) {
  const std::string key = std::string(kLogFolder) + "_last_checkpoint";
  auto existing = store.Get(key);
  if (existing.ok()) {
    json old = json::parse(*existing, nullptr, /*allow_exceptions=*/false);
    auto v = old.is_object() ? old.find("version") : old.end();
    if (old.is_object() && v != old.end() && v->is_number_integer() && v->get<int64_t>() > info.version) {
      return Status::OK();
    }
  } else if (!existing.status().IsNotFound()) {
    return existing.status();
  }
  json doc = {{"version", info.version},
              {"size", info.num_actions},
              {"sizeInBytes", info.size_bytes},
              {"numOfAddFiles", info.num_add_files}};
  return store.Put(key, doc.dump());
}

}  // namespace

Result<int64_t> CheckpointInterval(const Metadata& metadata) {
  auto it = metadata.configuration.find("delta.checkpointInterval");
  if (it == metadata.configuration.end()) return int64_t{10};
  int64_t interval = 0;
  const std::string& text = it->second;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), interval);
  if (ec != std::errc() || end != text.data() + text.size() || interval <= 0) {
    return Status::InvalidArgument("delta.checkpointInterval must be a positive integer, got '" + text + "'");
  }
  return interval;
}

Result<int64_t> DeletedFileRetentionMs(const Metadata& metadata) {
  auto it = metadata.configuration.find("delta.deletedFileRetentionDuration");
  if (it == metadata.configuration.end()) return int64_t{7} * 24 * 3600 * 1000;
  std::istringstream in(Lower(it->second));
  std::string word;
  in >> word;
  if (word == "interval") in >> word;
  int64_t amount = 0;
  auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), amount);
  std::string unit;
  in >> unit;
  std::string rest;
  in >> rest;
  if (!unit.empty() && unit.back() == 's') unit.pop_back();
  static const std::pair<const char*, int64_t> kUnits[] = {{"millisecond", 1},  {"second", 1000},
                                                           {"minute", 60'000},  {"hour", 3'600'000},
                                                           {"day", 86'400'000}, {"week", 604'800'000}};
  if (ec == std::errc() && end == word.data() + word.size() && amount >= 0 && rest.empty()) {
    for (const auto& [name, ms] : kUnits) {
      if (unit == name) return amount * ms;
    }
  }
  return Status::InvalidArgument(
      "delta.deletedFileRetentionDuration must look like 'interval 7 days', got '" + it->second + "'");
}

Result<CheckpointInfo> WriteCheckpoint(ObjectStore& store, engine::Connection& conn, const Snapshot& snapshot,
                                       int64_t now_ms) {
  const std::string key = CheckpointKey(snapshot.version);
  const std::string where = snapshot.table_root + ": writing checkpoint " + key;
  auto actions = CheckpointActions(snapshot, now_ms);
  if (!actions.ok()) return actions.status().WithContext(where);
  ASSIGN_OR_RETURN(auto uuid, conn.Query("SELECT gen_random_uuid()::VARCHAR"));
  ScopedFile local{
      (fs::temp_directory_path() / ("basin-checkpoint-" + uuid.at(0, 0).value_or("x") + ".parquet"))
          .string()};
  RETURN_IF_ERROR_CTX(WriteParquet(conn, *actions, local.path), where);
  auto bytes = ReadWholeFile(local.path);
  if (!bytes.ok()) return bytes.status().WithContext(where);
  RETURN_IF_ERROR_CTX(store.Put(key, *bytes), where);

  CheckpointInfo info;
  info.version = snapshot.version;
  info.num_actions = static_cast<int64_t>(actions->size());
  info.num_add_files = static_cast<int64_t>(snapshot.files.size());
  info.size_bytes = static_cast<int64_t>(bytes->size());
  RETURN_IF_ERROR_CTX(UpdateLastCheckpoint(store, info), where);
  return info;
}

Result<CheckpointInfo> CheckpointVersion(const std::shared_ptr<ObjectStore>& store,
                                         const std::string& table_root, engine::Connection& conn,
                                         int64_t version, int64_t now_ms) {
  SnapshotOptions options;
  options.version = version;
  options.keep_tombstones = true;
  ASSIGN_OR_RETURN(auto snapshot, LoadSnapshot(store, table_root, conn, options));
  return WriteCheckpoint(*store, conn, *snapshot, now_ms);
}

}  // namespace basin::delta
