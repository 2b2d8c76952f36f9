// read_files('folder', format => 'json' | 'csv' | 'parquet', ...): a folder of files as a
// table, in Databricks' spelling (docs/sql.md). Outside a stream it reads every file in the
// folder and below it; inside one (`STREAM read_files(...)`, stream/files_source.h) the
// files of the running batch. Files are read by DuckDB's JSON, CSV and Parquet readers
// through the folder's ObjectStore (basin:// URLs), so a memory:// folder works as a local
// one does.
//
// Options: format (required), schema => 'id BIGINT, amount DECIMAL(12,2)' (the columns and
// their types; without it DuckDB infers them from the files read), header => true|false
// (CSV; DuckDB detects it otherwise), and for streams deadLetterTable => 'name' and
// maxDeadLetterFraction => 0.1 (JSON files), maxFilesPerTrigger => n and
// maxBytesPerTrigger => '64mb', and schemaEvolutionMode (SchemaEvolution). Hidden files (a
// path part starting with '.' or '_', as Spark's _SUCCESS) are not read.
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

// What a stream does with columns its files have beyond the schema it reads them with, in
// Auto Loader's spelling (schemaEvolutionMode => 'addNewColumns' | 'rescue' |
// 'failOnNewColumns' | 'none'; stream/files_source.h acts on them):
enum class SchemaEvolution {
  kAddNewColumns,     // stop, naming them; the schema is widened with them for the next run
  kRescue,            // keep the schema; unknown fields and values of the wrong type go to
                      // a _rescued_data JSON column (also outside streams)
  kFailOnNewColumns,  // stop, naming them, until the schema or the files change
  kNone,              // leave them out
};

// The column that SchemaEvolution::kRescue adds.
inline constexpr char kRescuedDataColumn[] = "_rescued_data";

struct ReadFilesRequest {
  std::string folder;  // as given
  FileFormat format = FileFormat::kJson;
  std::optional<FileSchema> schema;  // declared
  std::optional<bool> header;        // CSV
  std::optional<int64_t> max_files;  // a stream's batch: at most this many files
  std::optional<int64_t> max_bytes;  // and about this many bytes
  // A stream's files: the warehouse table their records that do not parse or fit the schema
  // go to (stream/dead_letters.h, ReadFilesDeadLetters), or for Parquet (with a declared
  // schema), the files DuckDB cannot read; empty: none, such a file fails the batch. With
  // one, JSON files are read as JSON lines.
  std::string dead_letter_table;
  std::optional<double> max_dead_letter_fraction;  // of a batch's records, with a table
  // Unset: kAddNewColumns without a declared schema, kNone with one (as Auto Loader).
  std::optional<SchemaEvolution> evolution;

  SchemaEvolution EvolutionMode() const {
    return evolution.value_or(schema ? SchemaEvolution::kNone : SchemaEvolution::kAddNewColumns);
  }
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
// given (and kRescuedDataColumn after them in rescue mode); it keeps `store` registered
// (basin:// URLs) while the query runs. Without a schema DuckDB infers the columns from
// every file (by name). No files with no schema is InvalidArgument (there are no columns to
// infer); with one, no rows.
Result<engine::Lakehouse::ChangeFeed> ReadFilesFeed(const ReadFilesRequest& request,
                                                    const std::shared_ptr<ObjectStore>& store,
                                                    const std::vector<InputFile>& files,
                                                    const std::optional<FileSchema>& schema);

// A stream's batch of files with a dead-letter table: the queries of their records that are
// dead letters: run `prepare_sql` (when not empty), then `letters_sql`, whose rows are file
// (the key), line (from 1), text (the line), error, and on every row `records`, how many the
// files hold. JSON files are read as JSON lines (blank lines are none): a line that is not a
// JSON object or (outside rescue mode) has a value that does not fit its column is a dead
// letter ("not valid JSON", "not a JSON object", "column amount: \"x\" is not a
// DECIMAL(12,2)"); for CSV files, a line DuckDB's CSV reader cannot read with the schema
// (its error). ReadFilesFeed's query over the same files reads the others. REQUIRES: files
// are not empty; the format is JSON or CSV (Parquet files are checked a file at a time,
// ReadWholeParquetFile).
struct FilesDeadLetters {
  std::string prepare_sql;
  std::string letters_sql;
  std::shared_ptr<const void> keepalive;  // keeps the files' store registered
};
Result<FilesDeadLetters> ReadFilesDeadLetters(const ReadFilesRequest& request,
                                              const std::shared_ptr<ObjectStore>& store,
                                              const std::vector<InputFile>& files, const FileSchema& schema);

// The query that decodes every value of Parquet `file` of `store` (one row, the file's row
// count): with a dead-letter table, a stream's batch runs it on each of its Parquet files,
// and a file it fails on (not for a store's failure) is set aside whole.
Result<engine::Lakehouse::ChangeFeed> ReadWholeParquetFile(const std::shared_ptr<ObjectStore>& store,
                                                           const InputFile& file);

}  // namespace basin::sql
