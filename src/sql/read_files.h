// read_files('folder', format => 'json' | 'csv' | 'parquet', ...): a folder of files as a
// table, in Databricks' spelling (docs/sql.md). Outside a stream it reads every file in the
// folder and below it; inside one (`STREAM read_files(...)`, stream/files_source.h) the
// files of the running batch. Files are read by DuckDB's JSON, CSV and Parquet readers
// through the folder's ObjectStore (basin:// URLs), so a memory:// folder works as a local
// one does.
//
// Options: format (required), schema => 'id BIGINT, amount DECIMAL(12,2)' (the columns and
// their types; without it DuckDB infers them from the files read), header => true|false
// (CSV; DuckDB detects it otherwise), and for streams maxFilesPerTrigger => n and
// maxBytesPerTrigger => '64mb'. Hidden files (a path part starting with '.' or '_', as
// Spark's _SUCCESS) are not read.
//
// Thread safety: functions only.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "basin/object_store.h"
#include "basin/status.h"
#include "engine/lakehouse.h"

namespace basin::sql {

enum class FileFormat { kJson, kCsv, kParquet };

// A file of the folder: its key below the folder, size and modification time.
struct InputFile {
  std::string key;
  int64_t size = 0;
  int64_t modification_time_ms = 0;
};

// A column the files are read as, with its DuckDB type ("BIGINT", "DECIMAL(12,2)").
struct FileColumn {
  std::string name;
  std::string type;
};
using FileSchema = std::vector<FileColumn>;

struct ReadFilesRequest {
  std::string folder;  // as given
  FileFormat format = FileFormat::kJson;
  std::optional<FileSchema> schema;  // declared
  std::optional<bool> header;        // CSV
  std::optional<int64_t> max_files;  // a stream's batch: at most this many files
  std::optional<int64_t> max_bytes;  // and about this many bytes
};

// The request of read_files(folder, options) (options by lowercase name, as text).
// InvalidArgument naming the option for a missing format, a value it cannot take, or a
// schema that does not parse (its line and column).
Result<ReadFilesRequest> ParseReadFilesRequest(const std::string& folder,
                                               const std::map<std::string, std::string>& options);

// Every file below `store`'s root but hidden ones and a local store's temporary files, by
// modification time, then key: the order a stream takes new files in.
Result<std::vector<InputFile>> ListInputFiles(ObjectStore& store);

// The query reading `files` of `store` as `request` says, with `schema`'s columns when
// given; it keeps `store` registered (basin:// URLs) while the query runs. No files with
// no schema is InvalidArgument (there are no columns to infer); with one, no rows.
Result<engine::Lakehouse::ChangeFeed> ReadFilesFeed(const ReadFilesRequest& request,
                                                    const std::shared_ptr<ObjectStore>& store,
                                                    const std::vector<InputFile>& files,
                                                    const std::optional<FileSchema>& schema);

}  // namespace basin::sql
