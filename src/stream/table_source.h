// A Delta table as a stream's source (`STREAM(table)`), as a BatchSource. The first batch
// reads the table's latest snapshot whole; each later batch reads the rows the commits
// after the previous batch's last version appended, up to the table's latest version:
//   {"kind": "table", "table": "default.bronze", "location": "...", "snapshotVersion": 4}
//   {"kind": "table", "table": "default.bronze", "location": "...", "startVersion": 5,
//    "endVersion": 9}
// Commits that change no data (OPTIMIZE) add nothing; a commit that removed or rewrote
// rows (DELETE, UPDATE, MERGE) stops the stream with an error naming it, as Delta's table
// source does without skipChangeCommits. For a complete sink (INSERT OVERWRITE) every batch
// reads the whole snapshot of its end version ({"snapshotVersion": 9}), whatever the commits
// did, and the sink is rewritten from it.
#pragma once

#include <memory>
#include <string>

#include "stream/source.h"

namespace basin::stream {

// InvalidArgument from the first plan when the table is the sink: a stream into its own
// source would read its own output forever.
std::unique_ptr<BatchSource> NewTableSource(sql::Session& session, std::string query, StreamSink sink,
                                            std::string where);

}  // namespace basin::stream
