#include "delta/checkpoint.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "common/temp_path.h"
#include "delta/paths.h"

namespace basin::delta {

namespace {

// The action columns a checkpoint may hold; others (commitInfo, cdc) never matter here.
constexpr const char* kCheckpointColumns[] = {"add", "remove",         "metaData",           "protocol",
                                              "txn", "domainMetadata", "checkpointMetadata", "sidecar"};

Status WriteLocalFile(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  out.close();
  if (!out) return Status::IOError("cannot write temporary file " + path);
  return Status::OK();
}

// Top-level field names of a DuckDB STRUCT type as DESCRIBE prints it
// ('STRUCT(path VARCHAR, "offset" INTEGER, m MAP(VARCHAR, VARCHAR))'); empty otherwise.
std::vector<std::string> StructFieldNames(std::string_view type) {
  std::vector<std::string> names;
  constexpr std::string_view kPrefix = "STRUCT(";
  if (type.substr(0, kPrefix.size()) != kPrefix || type.back() != ')') return names;
  std::string_view body = type.substr(kPrefix.size(), type.size() - kPrefix.size() - 1);
  size_t i = 0;
  while (i < body.size()) {
    while (i < body.size() && body[i] == ' ') i++;
    std::string name;
    if (i < body.size() && body[i] == '"') {
      for (i++; i < body.size(); i++) {
        if (body[i] == '"' && i + 1 < body.size() && body[i + 1] == '"') {
          name += '"';
          i++;
        } else if (body[i] == '"') {
          i++;
          break;
        } else {
          name += body[i];
        }
      }
    } else {
      while (i < body.size() && body[i] != ' ') name += body[i++];
    }
    names.push_back(std::move(name));
    // Skip the field's type up to the next top-level comma.
    int depth = 0;
    bool quoted = false;
    for (; i < body.size(); i++) {
      char c = body[i];
      if (c == '"') quoted = !quoted;
      if (quoted) continue;
      if (c == '(') depth++;
      if (c == ')') depth--;
      if (c == ',' && depth == 0) break;
    }
    i++;
  }
  return names;
}

// The `add` column without what replay never reads: partitionValues_parsed (the map
// has the same values) and stats_parsed where the JSON stats are present.
std::string AddProjection(const std::string& type) {
  std::string add = engine::QuoteIdentifier("add");
  std::vector<std::string> fields = StructFieldNames(type);
  bool has_stats = std::find(fields.begin(), fields.end(), "stats") != fields.end();
  bool trims = std::find(fields.begin(), fields.end(), "partitionValues_parsed") != fields.end() ||
               (has_stats && std::find(fields.begin(), fields.end(), "stats_parsed") != fields.end());
  if (!trims) return add;
  std::string packed;
  for (const auto& field : fields) {
    if (field == "partitionValues_parsed") continue;
    std::string value = add + "." + engine::QuoteIdentifier(field);
    if (field == "stats_parsed" && has_stats) {
      value = "CASE WHEN " + add + ".\"stats\" IS NULL THEN " + value + " END";
    }
    packed += (packed.empty() ? "" : ", ") + engine::QuoteIdentifier(field) + " := " + value;
  }
  return "CASE WHEN " + add + " IS NULL THEN NULL ELSE struct_pack(" + packed + ") END AS " + add;
}

// Runs the DuckDB side on a local Parquet file at `path`; `name` is for messages.
Status ReadLocalParquetActions(engine::Connection& conn, const std::string& path, const std::string& name,
                               std::vector<Action>* out) {
  std::string source = "read_parquet(" + engine::QuoteLiteral(path) + ")";
  auto described = conn.Query("DESCRIBE SELECT * FROM " + source);
  if (!described.ok())
    return Status::Corruption(name + ": cannot read checkpoint Parquet: " + described.status().message());
  std::string columns;
  std::string any_action;
  for (const auto& row : described->rows) {
    if (!row[0] || !row[1]) continue;
    for (const char* wanted : kCheckpointColumns) {
      if (*row[0] != wanted) continue;
      std::string quoted = engine::QuoteIdentifier(wanted);
      columns += (columns.empty() ? "" : ", ") + (*row[0] == "add" ? AddProjection(*row[1]) : quoted);
      any_action += (any_action.empty() ? "" : " OR ") + quoted + " IS NOT NULL";
    }
  }
  if (columns.empty()) return Status::Corruption(name + ": not a Delta checkpoint (no action columns)");
  auto rows = conn.Query("SELECT to_json(t) FROM (SELECT " + columns + " FROM " + source + " WHERE " +
                         any_action + ") t");
  if (!rows.ok())
    return Status::Corruption(name + ": cannot read checkpoint Parquet: " + rows.status().message());
  out->reserve(out->size() + rows->row_count());
  for (size_t i = 0; i < rows->row_count(); i++) {
    const auto& cell = rows->at(i, 0);
    if (!cell) continue;
    ASSIGN_OR_RETURN(auto action, ParseAction(*cell, name + " row " + std::to_string(i + 1)));
    if (action) out->push_back(std::move(*action));
  }
  return Status::OK();
}

// A checkpoint file that vanished between listing and reading is a broken log, not a
// missing table.
Status MissingAsCorruption(const Status& status, const std::string& key) {
  if (status.IsNotFound()) return Status::Corruption(key + ": checkpoint file is missing");
  return status;
}

}  // namespace

Status ReadParquetActions(ObjectStore& store, engine::Connection& conn, const std::string& key,
                          std::vector<Action>* out) {
  if (auto local = store.LocalPath(key)) {
    if (!std::filesystem::exists(*local)) return Status::Corruption(key + ": checkpoint file is missing");
    return ReadLocalParquetActions(conn, *local, key, out);
  }
  auto data = store.Get(key);
  if (!data.ok()) return MissingAsCorruption(data.status(), key);
  // DuckDB reads Parquet from local files only.
  TempPath copy("basin-log-", ".parquet");
  RETURN_IF_ERROR(WriteLocalFile(copy.path(), *data));
  return ReadLocalParquetActions(conn, copy.path(), key, out);
}

Result<std::vector<Action>> ReadCheckpointFiles(ObjectStore& store, engine::Connection& conn,
                                                const CheckpointFiles& checkpoint) {
  std::vector<Action> actions;
  for (const auto& file : checkpoint.files) {
    const std::string& key = file.key;
    bool json = key.size() >= 5 && key.compare(key.size() - 5, 5, ".json") == 0;
    if (json) {
      auto content = store.Get(key);
      if (!content.ok()) return MissingAsCorruption(content.status(), key);
      ASSIGN_OR_RETURN(auto parsed, ParseCommitFile(*content, key));
      for (auto& a : parsed) actions.push_back(std::move(a));
    } else {
      RETURN_IF_ERROR(ReadParquetActions(store, conn, key, &actions));
    }
  }
  return actions;
}

Status ReadSidecars(ObjectStore& store, engine::Connection& conn, const std::vector<Sidecar>& sidecars,
                    std::vector<Action>* out) {
  for (const auto& sidecar : sidecars) {
    std::string decoded = DecodeDataPath(sidecar.path);
    if (IsAbsoluteDataPath(decoded)) {
      RETURN_IF_ERROR(ReadLocalParquetActions(conn, decoded, "sidecar " + sidecar.path, out));
    } else {
      RETURN_IF_ERROR(ReadParquetActions(store, conn, std::string(kLogFolder) + "_sidecars/" + decoded, out));
    }
  }
  return Status::OK();
}

}  // namespace basin::delta
