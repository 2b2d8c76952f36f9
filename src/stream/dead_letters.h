// Dead letters: the records of a stream's batch that did not parse or fit the declared
// schema, and the rows its sink's NOT NULL and CHECK constraints refused, kept in a Delta
// table of the warehouse with the error and where each came from, so that the stream keeps
// going and nothing is lost (docs/streams.md "Dead letters").
//
// A batch's dead letters are committed before its sink commit, with txn(appId = "<stream
// id>/dead-letters" for records, "<stream id>/dead-letters/<n>" for those of the statement's
// STREAM source n > 0, "<stream id>/refused-rows" for rows, version = batch id): a batch run
// again after a crash finds them committed and adds nothing, so none is dead-lettered twice.
//
// The table (created on first use when absent): stream_id STRING, batch_id BIGINT, topic
// STRING, partition INT, offset BIGINT (Kafka coordinates), file STRING, line BIGINT (file
// coordinates), key BINARY, value BINARY (the record's bytes as read), error STRING,
// dead_lettered_at TIMESTAMP.
//
// Thread safety: one thread (the runner's).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "basin/status.h"
#include "sql/session.h"

namespace basin::stream {

struct BatchRead;

struct DeadLetter {
  std::string error;
  std::optional<std::string> key;
  std::optional<std::string> value;
  // Where it came from: a Kafka record's topic, partition and offset, or (`file` not
  // empty) a file's key in its folder and line, from 1 (0: the whole file). A record
  // posted over HTTP has no topic (nor partition): its offset is its index in the request.
  std::string topic;
  int32_t partition = 0;
  int64_t offset = 0;
  std::string file;
  int64_t line = 0;
};

class DeadLetterWriter {
 public:
  // The writer of STREAM source number `source`'s dead letters.
  // REQUIRES: `session` outlives the writer.
  DeadLetterWriter(sql::Session& session, std::string stream_id, int64_t source);

  // PermissionDenied unless the session's user may write dead letters into `table`: MODIFY
  // on it, or CREATE on its schema while it does not exist (the first letters create it).
  Status CheckWritable(const std::string& table);

  // Commits `letters`, batch `batch_id`'s, into `table` (a warehouse table name as
  // written, "ops.payments_dlq"). The table's version after the write (the one that has
  // them; a re-run's is the table's current one); nullopt when `letters` is empty.
  Result<std::optional<int64_t>> Write(const std::string& table, int64_t batch_id,
                                       const std::vector<DeadLetter>& letters);

  // Writes `letters`, those of the `records` records of batch `read.batch_id`, into `table`
  // and counts them in `read`; InvalidArgument instead, writing none, when they are more
  // than `max_fraction` of the records. As WriteRows, first what `read` holds to commit
  // first (BatchRead::BeforeCommit).
  Status SetAside(const std::string& table, std::optional<double> max_fraction, int64_t records,
                  const std::vector<DeadLetter>& letters, BatchRead& read);

  // Commits the rows of `rows_sql` (columns value, the row as JSON text, and error) into
  // `table`, batch `read.batch_id`'s, with their own txn "<stream id><app_suffix>", and
  // counts them in `read`. Nothing when there are none. What `read` holds to commit before
  // anything else the batch writes (BatchRead::BeforeCommit) commits first.
  Status WriteRows(const std::string& table, const std::string& app_suffix, BatchRead& read,
                   const std::string& rows_sql);

  // Runs `run` (the batch's statement) with the rows its sink's NOT NULL and CHECK
  // constraints refuse committed into `table` (before the sink's commit, with their own txn,
  // "<stream id>/refused-rows") instead of failing it: value (the row as JSON), error (the
  // constraint), no coordinates. Counted in `read`, which also names `table` for what runs
  // in `run` (a stateful stream's late rows). With `table` empty, runs `run` alone.
  Status WithRefusedRowsSetAside(const std::string& table, BatchRead& read,
                                 const std::function<Status()>& run);

 private:
  Status Stage(const std::vector<DeadLetter>& letters);
  // `table` as a quoted name, created when absent (only then is CREATE on its schema
  // needed).
  Result<std::string> EnsureTable(const std::string& table);
  // INSERT INTO `name` of the stream and batch, and `columns_sql` (the other columns and
  // FROM), with txn(stream id + `app_suffix`, batch id). The table's version after it.
  Result<int64_t> Insert(const std::string& name, const std::string& app_suffix, int64_t batch_id,
                         const std::string& columns_sql);

  sql::Session& session_;
  const std::string stream_id_;
  const std::string records_app_;  // the txn appId's suffix of records that do not parse
  bool staging_ready_ = false;
};

}  // namespace basin::stream
