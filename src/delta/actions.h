// Delta Lake log actions, as the protocol defines them (PROTOCOL.md "Actions").
// ParseAction/ParseCommitFile (simdjson) is the one parser of JSON log lines: commits,
// log compactions, V2 JSON checkpoints. Parquet checkpoints are read column by column
// straight into these structs (delta/parquet_io.h).
//
// Paths are kept exactly as the log holds them (URL-encoded, relative to the table root
// or absolute URIs); see DecodeDataPath() in delta/paths.h.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "basin/status.h"

namespace basin::delta {

using PartitionValues = std::map<std::string, std::optional<std::string>>;

class ParsedStats;  // delta/parsed_stats.h

struct DeletionVectorDescriptor {
  char storage_type = 'u';  // 'u' relative path (with random prefix), 'i' inline, 'p' absolute path
  std::string path_or_inline_dv;
  std::optional<int32_t> offset;  // byte offset in the DV file; absent for 'i'
  int32_t size_in_bytes = 0;
  int64_t cardinality = 0;  // number of deleted rows

  // storage_type + path_or_inline_dv (+ '@' offset): identity of the DV for log replay.
  std::string UniqueId() const;
};

struct AddFile {
  std::string path;
  PartitionValues partition_values;
  int64_t size = 0;
  int64_t modification_time = 0;
  bool data_change = true;
  // Statistics as JSON text, as commits and most checkpoints hold them. A checkpoint with
  // only `stats_parsed` leaves `stats` unset and its typed values in row `parsed_stats_row`
  // of `parsed_stats`, which the stats index reads without a text round trip; StatsJson()
  // gives either form as text.
  std::optional<std::string> stats;
  std::shared_ptr<const ParsedStats> parsed_stats;
  uint32_t parsed_stats_row = 0;
  std::map<std::string, std::string> tags;
  std::optional<DeletionVectorDescriptor> deletion_vector;
  std::optional<int64_t> base_row_id;
  std::optional<int64_t> default_row_commit_version;
  std::optional<std::string> clustering_provider;

  // Replay key: path plus DV unique id (PROTOCOL.md "Action Reconciliation").
  std::string ReplayKey() const;
};

struct RemoveFile {
  std::string path;
  std::optional<int64_t> deletion_timestamp;
  bool data_change = true;
  bool extended_file_metadata = false;
  PartitionValues partition_values;
  std::optional<int64_t> size;
  std::optional<DeletionVectorDescriptor> deletion_vector;

  std::string ReplayKey() const;
};

struct Protocol {
  int32_t min_reader_version = 1;
  int32_t min_writer_version = 2;
  std::optional<std::vector<std::string>> reader_features;  // present iff reader version 3
  std::optional<std::vector<std::string>> writer_features;  // present iff writer version 7

  bool HasReaderFeature(const std::string& name) const;
  bool HasWriterFeature(const std::string& name) const;
};

struct Metadata {
  std::string id;
  std::optional<std::string> name;
  std::optional<std::string> description;
  std::string format_provider = "parquet";
  std::map<std::string, std::string> format_options;
  std::string schema_string;  // JSON text of the table schema (delta/schema.h parses it)
  std::vector<std::string> partition_columns;
  std::map<std::string, std::string> configuration;
  std::optional<int64_t> created_time;
};

// A table configuration's delta.columnMapping.mode, lower-cased: "none" when unset, else as
// written ("name", "id", or what a writer put there).
std::string ColumnMappingMode(const std::map<std::string, std::string>& configuration);

// Whether the table's files name columns by physical name (column mapping "name" or "id").
bool ColumnMappingEnabled(const Metadata& metadata);

struct SetTransaction {
  std::string app_id;
  int64_t version = 0;
  std::optional<int64_t> last_updated;
};

struct CommitInfo {    // NOLINT(bugprone-exception-escape): nlohmann::json's constructor
  nlohmann::json raw;  // the whole object; operation, operationParameters, metrics, engineInfo...
  std::optional<int64_t> in_commit_timestamp;
  std::optional<int64_t> timestamp;
  std::optional<std::string> operation;
};

struct DomainMetadata {
  std::string domain;
  std::string configuration;
  bool removed = false;
};

struct CheckpointMetadata {
  int64_t version = 0;
  std::map<std::string, std::string> tags;
};

struct Sidecar {
  std::string path;  // relative to _delta_log/_sidecars/, or absolute
  int64_t size_in_bytes = 0;
  int64_t modification_time = 0;
};

struct CdcFile {
  std::string path;
  PartitionValues partition_values;
  int64_t size = 0;
  bool data_change = false;
};

// An action type this reader does not know; kept so replay can ignore it knowingly.
struct UnknownAction {
  std::string name;
  nlohmann::json raw;  // the action's body, so a rewrite of the log can carry it along
};

using Action = std::variant<AddFile, RemoveFile, Protocol, Metadata, SetTransaction, CommitInfo,
                            DomainMetadata, CheckpointMetadata, Sidecar, CdcFile, UnknownAction>;

// Parses one JSON object holding exactly one action ({"add": {...}}), or a checkpoint row
// in JSON form (one non-null action column among nulls). `where` names the source for
// errors ("_delta_log/00000000000000000003.json line 2"). Returns nullopt for a row with no
// action. Corruption (naming `where` and the field) for malformed input; never crashes.
// Thread safety: any thread (each thread reuses its own parser).
Result<std::optional<Action>> ParseAction(std::string_view json_text, const std::string& where);

// Calls `visit` with each action of a JSON commit file's content, one per non-empty line,
// in order, stopping at the first error (a malformed line's Corruption, naming `where` and
// the line number, or `visit`'s). With a non-empty `needle`, only lines containing it are
// parsed. Replay uses this to avoid holding every action of a large commit at once. The
// first line of `content` is line `first_line` of its file (for errors).
Status ForEachAction(std::string_view content, const std::string& where, std::string_view needle,
                     const std::function<Status(Action&)>& visit, size_t first_line = 1);

// All actions of a JSON commit file's content, one per non-empty line. Errors name
// `where` and the line number.
Result<std::vector<Action>> ParseCommitFile(std::string_view content, const std::string& where);
// As ParseCommitFile, parsing only the lines that contain `needle`: a cheap way to pick
// one action type out of a large commit ("\"commitInfo\"").
Result<std::vector<Action>> ParseCommitLinesContaining(std::string_view content, const std::string& where,
                                                       std::string_view needle);

// One JSON line (no newline) in the log's form: {"add":{...}}. Optional fields that are
// unset are omitted. ParseAction(SerializeAction(a)) gives back `a`.
std::string SerializeAction(const Action& action);

// The action's name in the log: "add", "metaData", ... (UnknownAction: its name).
std::string ActionName(const Action& action);

// The remove action that takes `add` out of the table, keeping its partition values, size
// and deletion vector (extendedFileMetadata).
RemoveFile RemoveOf(const AddFile& add, bool data_change = true);

// `add`'s stats numRecords (physical rows, before its deletion vector); nullopt when the
// stats are absent or unreadable.
std::optional<int64_t> StatsNumRecords(const AddFile& add);

// `add`'s statistics as JSON text, whichever form it holds them in; nullopt when it has none.
std::optional<std::string> StatsJson(const AddFile& add);

}  // namespace basin::delta
