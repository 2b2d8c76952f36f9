// A Delta table as a stream's source (`STREAM(table)`), as a BatchSource. The first batch
// reads the table's latest snapshot whole; each later batch reads the rows the commits
// after the previous batch's last version appended, up to the table's latest version:
//   {"kind": "table", "table": "default.bronze", "location": "...", "snapshotVersion": 4}
//   {"kind": "table", "table": "default.bronze", "location": "...", "startVersion": 5,
//    "endVersion": 9}
// Commits that change no data (OPTIMIZE) add nothing; a commit that removed or rewrote
// rows (DELETE, UPDATE, MERGE) stops the stream with an error naming it, as Delta's table
// source does without skipChangeCommits.
//
// Options, as Delta's table source has them: STREAM(t, startingVersion => 5) makes the
// first batch read the rows commits 5 and later appended instead of the snapshot ('latest':
// from the commit after the latest when the stream first plans; startingTimestamp => '...':
// from the first commit at or after that time); skipChangeCommits => true skips commits that
// removed or rewrote rows, their added rows included, instead of stopping;
// maxFilesPerTrigger => n ends a batch after the commits that add at most n files together
// and maxBytesPerTrigger => '512mb' after those that add at most that many bytes (the
// first limit reached ends it; at least one commit; the first batch's snapshot is read
// whole). What a batch reads is
// recorded in its entry ("startVersion", "endVersion", "skipChangeCommits"), so a batch runs
// again as it was planned.
//
// STREAM table_changes('t', 5) is the table's change feed from version 5 (every changed
// row with _change_type, _commit_version and _commit_timestamp, as table_changes gives
// them); its entries carry "changes": true.
//
// For a complete sink (INSERT OVERWRITE) every batch reads the whole snapshot of its end
// version ({"snapshotVersion": 9}), whatever the commits did, and the sink is rewritten
// from it; the options and the change feed do not apply to it.
#pragma once

#include <memory>
#include <string>

#include "stream/source.h"

namespace basin::stream {

// `stream` is a STREAM(t, ...) or STREAM table_changes(...) source: InvalidArgument for an
// option it does not know, a bad value, or options and the change feed with a complete
// sink. InvalidArgument from the first plan when the table is the sink (a stream into its
// own source would read its own output forever) or the starting version is past the latest.
Result<std::unique_ptr<BatchSource>> NewTableSource(sql::Session& session,
                                                    const sql::grammar::StreamSource& stream, StreamSink sink,
                                                    std::string where);

}  // namespace basin::stream
