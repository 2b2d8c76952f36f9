// read_kafka(...): a Kafka source as a DuckDB table function, in Databricks' spelling
// (docs/kafka.md):
//
//   SELECT key, value::VARCHAR, topic, partition, offset, timestamp
//   FROM read_kafka(bootstrapServers => '127.0.0.1:9092', subscribe => 'payments',
//                   startingOffsets => 'earliest');
//
// Named arguments are the source options of stream/kafka/options.h (bootstrapServers,
// subscribe, subscribePattern, startingOffsets, maxOffsetsPerTrigger, valueFormat, schema,
// deadLetterTable, maxDeadLetterFraction, and the kafka.* properties as a map:
// kafkaOptions => MAP {'security.protocol': 'SASL_SSL'}), checked by the same parser. A query reads a bounded
// range: from startingOffsets to the high watermarks the partitions have when the query is bound (at most
// maxOffsetsPerTrigger offsets, when given, shared between partitions as a micro-batch would be), so it ends,
// and two runs against a topic that does not change return the same rows. Positions are never stored in a
// consumer group.
//
// Columns, as Databricks names and types them: key BLOB, value BLOB, topic VARCHAR,
// partition INTEGER, offset BIGINT, timestamp TIMESTAMP (NULL when the record has none),
// timestampType INTEGER (0 create time, 1 log append time, NULL when none), headers
// STRUCT(key VARCHAR, value BLOB)[]. A tombstone has a NULL value.
//
// Memory: a scan reads its ranges on a thread of its own (BackgroundRead), at most 8
// chunks of a DuckDB vector's records ahead of the query, whatever the range's size.
//
// Errors are raised in the query with the Status code carried through DuckDB
// (engine/status_transport.h): InvalidArgument for a bad option (naming it), NotFound when
// startingOffsets lie below what the topic still holds, IOError when the cluster cannot be
// reached.
//
// As a stream's source (`STREAM read_kafka(...)`, a call with basin_stream_source,
// engine/stream_calls.h), the batch installed on the connection for that source
// (KafkaBatch) decides the ranges instead.
//
// Thread safety: registration is per database, from any thread; each query has its own
// reader.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "basin/status.h"
#include "common/cancellation.h"
#include "stream/kafka/background_read.h"
#include "stream/kafka/options.h"
#include "stream/kafka/reader.h"
#include "stream/kafka/types.h"
#include "stream/record_format.h"

struct _duckdb_connection;                             // NOLINT(bugprone-reserved-identifier)
typedef struct _duckdb_connection* duckdb_connection;  // NOLINT

namespace basin::sql {
class Session;
}  // namespace basin::sql

namespace basin::stream::kafka {

inline constexpr char kReadKafkaFunction[] = "read_kafka";

// A stream's micro-batch, as read_kafka sees it on the connection that runs the batch's
// statement (stream/runner.h installs one): instead of reading from startingOffsets to the
// watermarks, read_kafka reads the ranges the batch gives it for the options it was bound
// with. Called while the statement is bound, on the connection's thread.
class KafkaBatch {
 public:
  virtual ~KafkaBatch() = default;
  virtual Result<std::vector<PartitionRange>> Ranges(const KafkaOptions& options) = 0;
  // A client of the batch's cluster for read_kafka to read with, kept from batch to batch
  // (a new client's connecting costs a one-record batch most of its time); null to have
  // read_kafka open its own. It must outlive the query, which uses it from one thread.
  virtual KafkaReader* Reader() { return nullptr; }
  // Cancelled when the batch is abandoned: read_kafka's reads then end (Cancelled) instead
  // of waiting for records. Null for none; it must outlive the query.
  virtual const CancellationToken* Abandon() { return nullptr; }
  // With valueFormat 'json' and no schema option: the schema text the records are read
  // with, fixed when the stream began (nullopt: read_kafka infers one from the ranges).
  virtual std::optional<std::string> Schema() { return std::nullopt; }
  // The read of the batch's ranges with Reader(), started before the statement was bound
  // (its first fetch overlaps the parsing and binding); the first scan takes it, later
  // scans (null) start their own.
  virtual std::unique_ptr<BackgroundRead> TakeRead() { return nullptr; }
  // The scan read records, the newest produced (or appended) at `timestamp_ms`: the batch's
  // source time, for its end-to-end latency. Called from the scan's thread.
  virtual void SawRecordsUpTo(int64_t timestamp_ms) {}
};

// The schema text of the parsed (json, csv or avro) records in `ranges` (InferRecordSchema over
// at most the first 1,000 of them, shared between the ranges), read with `reader`.
Result<std::string> SampleSchema(KafkaReader& reader, const RecordOptions& records,
                                 const std::vector<PartitionRange>& ranges, const CancellationToken* abandon);

// Makes STREAM source number `source` of a statement run on DuckDB connection `conn`, a
// read_kafka call, read `batch` while the guard lives.
// REQUIRES: one guard per connection and source at a time; `batch` outlives the guard.
class ScopedKafkaBatch {
 public:
  ScopedKafkaBatch(duckdb_connection conn, int64_t source, KafkaBatch* batch);
  ScopedKafkaBatch(const ScopedKafkaBatch&) = delete;
  ScopedKafkaBatch& operator=(const ScopedKafkaBatch&) = delete;
  ~ScopedKafkaBatch();

 private:
  uint64_t connection_id_;
  int64_t source_;
};

// Makes read_kafka callable on every connection of `conn`'s database. Internal when DuckDB
// refuses the registration (as it does when it is registered already).
// `authorize` is asked before each call is bound (a governed session's rule for who may
// reach Kafka clusters); its error fails the query. Empty: every call may.
Status RegisterReadKafka(duckdb_connection conn, std::function<Status()> authorize = {});
// read_kafka on `session`'s connection, for administrators only when the session has a
// user (docs/governance.md: a topic is outside the warehouse, as files are).
Status RegisterReadKafka(sql::Session& session);

}  // namespace basin::stream::kafka
