// A folder of files as a stream's source (`STREAM read_files('folder', format => ...)`, like
// Auto Loader), as a BatchSource. Each batch reads files of the folder no earlier batch
// read, oldest first (by modification time, then path), at most maxFilesPerTrigger (1,000
// by default) and about maxBytesPerTrigger of them (a batch reads at least one file). A
// file is read once, whatever the restarts: its path is never planned again, even when it
// is rewritten or its modification time is older than files already read.
//
// The batch's entry in offsets/<N>.json lists its files, with the schema they are read
// with (docs/stream-checkpoints.md):
//   {"kind": "files", "seq": 7, "files": [{"path": "2026/12/a.json", "size": 1234,
//    "modificationTime": 1764600000000}], "schema": [{"name": "id", "type": "BIGINT"}]}
// The schema is the declared one (schema => '...') or the one DuckDB infers from the first
// batch's files, kept from then on, so later files are read with the same columns.
// schemaEvolutionMode (sql/read_files.h) says what columns later files add do: with
// addNewColumns (the default without a declared schema) and failOnNewColumns, planning a
// batch whose files have such columns stops the stream with a message naming them; first,
// addNewColumns keeps the schema widened with them in the source's folder (schema.json),
// read by the next run. rescue reads unknown fields into _rescued_data; none leaves them out.
//
// With deadLetterTable (JSON lines), a batch's records that are not JSON objects or do not
// fit the schema go to that table (file and line, the line's text, the error) before the
// statement reads the others, as a Kafka source's do (stream/dead_letters.h).
//
// The paths already read are kept in the source's checkpoint folder, sources/0/: the
// paths of each batch in files/<seq>.json (written when the next batch is planned, once
// the batch's entry is durable), compacted every 100 batches into seen/<seq>.json (every
// path up to that batch, sorted), so a restart reads one compaction and at most 99 lists.
#pragma once

#include <memory>
#include <string>

#include "basin/object_store.h"
#include "stream/source.h"

namespace basin::stream {

// `stream` is a STREAM read_files(...) source; `source_store` is its checkpoint folder.
Result<std::unique_ptr<BatchSource>> NewFilesSource(sql::Session& session,
                                                    const sql::grammar::StreamSource& stream,
                                                    std::shared_ptr<ObjectStore> source_store,
                                                    DeadLetterWriter& dead_letters, std::string where);

}  // namespace basin::stream
