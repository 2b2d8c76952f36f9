#include "stream/kafka/read_kafka.h"

#include <duckdb.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/cancellation.h"
#include "engine/status_transport.h"
#include "engine/stream_calls.h"
#include "engine/vector_access.h"
#include "sql/session.h"
#include "sql/session_context.h"
#include "stream/kafka/background_read.h"
#include "stream/kafka/options.h"
#include "stream/kafka/planner.h"
#include "stream/kafka/reader.h"
#include "stream/record_columns.h"
#include "stream/record_format.h"

namespace basin::stream::kafka {
namespace {

// The named arguments taken as text, and those taken as numbers.
constexpr std::array<const char*, 8> kTextOptions = {
    "bootstrapServers", "subscribe", "subscribePattern", "startingOffsets",
    "valueFormat",      "schema",    "deadLetterTable",  "schemaRegistryUrl"};
constexpr char kMaxOffsetsOption[] = "maxOffsetsPerTrigger";
constexpr char kMaxDeadLetterFractionOption[] = "maxDeadLetterFraction";
// librdkafka properties as a MAP(VARCHAR, VARCHAR): {'security.protocol': 'SASL_SSL'} is the
// source option kafka.security.protocol.
constexpr char kKafkaOptionsOption[] = "kafkaOptions";

enum Column : idx_t { kKey, kValue, kTopic, kPartition, kOffset, kTimestamp, kTimestampType, kHeaders };

// What binding decided: the options and the ranges the query reads.
struct BindData {
  KafkaOptions options;
  std::vector<PartitionRange> ranges;
  KafkaBatch* batch = nullptr;                 // the stream's batch this call reads, if any
  KafkaReader* batch_reader = nullptr;         // the installed batch's client, when it lends one
  const CancellationToken* abandon = nullptr;  // the installed batch's
};

// One query's reading: the records read (and parsed) in the background, and the chunk
// handed out last, row by row into output chunks.
struct ScanState {
  std::unique_ptr<KafkaReader> own_reader;  // unless the batch lent one
  std::unique_ptr<BackgroundRead> read;
  ReadChunk chunk;
  size_t handed_out = 0;              // records or rows of `chunk` already in an output chunk
  bool done = false;                  // every range read and handed out
  std::unique_ptr<RowParser> parser;  // valueFormat json, csv or avro: for chunks handed over as read
};

template <typename T>
void Delete(void* p) {
  delete static_cast<T*>(p);
}

// A value's text (DuckDB casts numbers to VARCHAR exactly); "" for NULL.
std::string TextOf(duckdb_value value) {
  if (duckdb_is_null_value(value)) return std::string();
  char* raw = duckdb_get_varchar(value);
  std::string out(raw);
  duckdb_free(raw);
  return out;
}

// The options given as named arguments, as ParseKafkaOptions takes them.
OptionList GivenOptions(duckdb_bind_info info) {
  OptionList options;
  auto take = [&](const char* name) {
    engine::ValueGuard given{duckdb_bind_get_named_parameter(info, name)};
    if (given.value != nullptr && !duckdb_is_null_value(given.value))
      options.emplace_back(name, TextOf(given.value));
  };
  for (const char* name : kTextOptions) take(name);
  take(kMaxOffsetsOption);
  take(kMaxDeadLetterFractionOption);
  engine::ValueGuard properties{duckdb_bind_get_named_parameter(info, kKafkaOptionsOption)};
  if (properties.value != nullptr && !duckdb_is_null_value(properties.value)) {
    for (idx_t i = 0; i < duckdb_get_map_size(properties.value); i++) {
      engine::ValueGuard key{duckdb_get_map_key(properties.value, i)};
      engine::ValueGuard value{duckdb_get_map_value(properties.value, i)};
      options.emplace_back("kafka." + TextOf(key.value), TextOf(value.value));
    }
  }
  return options;
}

void AddColumns(duckdb_bind_info info) {
  auto add = [&](const char* name, duckdb_logical_type type) {
    duckdb_bind_add_result_column(info, name, type);
    duckdb_destroy_logical_type(&type);
  };
  add("key", duckdb_create_logical_type(DUCKDB_TYPE_BLOB));
  add("value", duckdb_create_logical_type(DUCKDB_TYPE_BLOB));
  add("topic", duckdb_create_logical_type(DUCKDB_TYPE_VARCHAR));
  add("partition", duckdb_create_logical_type(DUCKDB_TYPE_INTEGER));
  add("offset", duckdb_create_logical_type(DUCKDB_TYPE_BIGINT));
  add("timestamp", duckdb_create_logical_type(DUCKDB_TYPE_TIMESTAMP));
  add("timestampType", duckdb_create_logical_type(DUCKDB_TYPE_INTEGER));
  engine::LogicalTypeGuard key{duckdb_create_logical_type(DUCKDB_TYPE_VARCHAR)};
  engine::LogicalTypeGuard value{duckdb_create_logical_type(DUCKDB_TYPE_BLOB)};
  duckdb_logical_type members[] = {key.type, value.type};
  const char* names[] = {"key", "value"};
  engine::LogicalTypeGuard header{duckdb_create_struct_type(members, names, 2)};
  add("headers", duckdb_create_list_type(header.type));
}

// The batches installed, by DuckDB connection id and STREAM source.
std::mutex batches_mutex;
std::map<std::pair<uint64_t, int64_t>, KafkaBatch*> batches;  // GUARDED_BY(batches_mutex)

uint64_t ConnectionId(duckdb_client_context context) {
  const uint64_t id = duckdb_client_context_get_connection_id(context);
  duckdb_destroy_client_context(&context);
  return id;
}

// The batch a STREAM read_kafka(...) source reads (nullptr for a call that is no stream's
// source); InvalidArgument when none is installed for it.
Result<KafkaBatch*> BatchOf(duckdb_bind_info info) {
  engine::ValueGuard source{duckdb_bind_get_named_parameter(info, engine::kStreamSourceParameter)};
  if (source.value == nullptr || duckdb_is_null_value(source.value)) return nullptr;
  duckdb_client_context context = nullptr;
  duckdb_table_function_get_client_context(info, &context);
  const uint64_t id = ConnectionId(context);
  std::lock_guard<std::mutex> lock(batches_mutex);
  auto it = batches.find({id, duckdb_get_int64(source.value)});
  if (it == batches.end()) {
    return Status::InvalidArgument(
        "STREAM read_kafka(...) is read by a running stream: run the statement with basin stream run");
  }
  return it->second;
}

// From startingOffsets to the watermarks now.
Result<std::vector<PartitionRange>> BoundedRanges(const KafkaOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<KafkaReader> reader, KafkaReader::Open(options));
  ASSIGN_OR_RETURN(std::vector<TopicPartition> partitions, reader->ListPartitions(options.subscription));
  ASSIGN_OR_RETURN(PartitionWatermarks watermarks, reader->QueryWatermarks(partitions));
  return PlanRanges(options, std::nullopt, watermarks);
}

}  // namespace

Result<std::string> SampleSchema(KafkaReader& reader, const RecordOptions& records,
                                 const std::vector<PartitionRange>& ranges,
                                 const CancellationToken* abandon) {
  constexpr int64_t kSample = 1'000;
  std::vector<PartitionRange> sample;
  for (const PartitionRange& range : ranges) {
    if (range.size() > 0) sample.push_back(range);
  }
  const int64_t quota =
      std::max<int64_t>(1, kSample / std::max<int64_t>(1, static_cast<int64_t>(sample.size())));
  for (PartitionRange& range : sample)
    range.end_offset = std::min(range.end_offset, range.start_offset + quota);
  std::vector<std::string> values;
  RETURN_IF_ERROR(reader.Read(
      sample,
      [&](const KafkaRecord& record) {
        if (record.value) values.emplace_back(*record.value);
        return Status::OK();
      },
      abandon, KafkaReader::Headers::kSkipped));
  return InferRecordSchema(records, std::vector<std::string_view>(values.begin(), values.end()));
}

namespace {

// With valueFormat 'json' or 'csv' and no schema: the batch's schema, or one inferred from
// the ranges.
Status InferMissingSchema(BindData& data, KafkaBatch* batch) {
  RecordOptions& records = data.options.records;
  if (!records.InfersSchema()) return Status::OK();
  std::optional<std::string> text = batch != nullptr ? batch->Schema() : std::nullopt;
  if (!text) {
    std::unique_ptr<KafkaReader> own;
    KafkaReader* reader = data.batch_reader;
    if (reader == nullptr) {
      ASSIGN_OR_RETURN(own, KafkaReader::OpenToRead(data.options));
      reader = own.get();
    }
    ASSIGN_OR_RETURN(text, SampleSchema(*reader, records, data.ranges, data.abandon));
  }
  ASSIGN_OR_RETURN(records.schema, ParseRecordSchema(*text));
  return Status::OK();
}

Status BindStatus(duckdb_bind_info info) {
  const auto* authorize = static_cast<const std::function<Status()>*>(duckdb_bind_get_extra_info(info));
  if (authorize != nullptr && *authorize) RETURN_IF_ERROR((*authorize)());
  auto data = std::make_unique<BindData>();
  ASSIGN_OR_RETURN(data->options, ParseKafkaOptions(GivenOptions(info)));
  ASSIGN_OR_RETURN(KafkaBatch * batch, BatchOf(info));
  data->batch = batch;
  if (batch != nullptr) {
    ASSIGN_OR_RETURN(data->ranges, batch->Ranges(data->options));
    data->batch_reader = batch->Reader();
    data->abandon = batch->Abandon();
  } else {
    ASSIGN_OR_RETURN(data->ranges, BoundedRanges(data->options));
  }
  RETURN_IF_ERROR(InferMissingSchema(*data, batch));
  if (data->options.records.format != ValueFormat::kRaw) {
    AddRecordColumns(info, data->options.records.schema);
  } else {
    AddColumns(info);
  }
  duckdb_bind_set_cardinality(info, static_cast<idx_t>(TotalOffsets(data->ranges)), /*is_exact=*/false);
  duckdb_bind_set_bind_data(info, data.release(), Delete<BindData>);
  return Status::OK();
}

void Bind(duckdb_bind_info info) {
  if (Status st = BindStatus(info); !st.ok()) {
    duckdb_bind_set_error(info, engine::EncodeStatus(st.WithContext(kReadKafkaFunction)).c_str());
  }
}

void Init(duckdb_init_info info) {
  const auto* bind = static_cast<const BindData*>(duckdb_init_get_bind_data(info));
  auto state = std::make_unique<ScanState>();
  KafkaReader* reader = bind->batch_reader;
  if (reader == nullptr) {
    auto opened = KafkaReader::OpenToRead(bind->options);
    if (!opened.ok()) {
      duckdb_init_set_error(info,
                            engine::EncodeStatus(opened.status().WithContext(kReadKafkaFunction)).c_str());
      return;
    }
    state->own_reader = std::move(opened).value();
    reader = state->own_reader.get();
  }
  if (bind->batch != nullptr) state->read = bind->batch->TakeRead();
  if (!state->read) {
    state->read = std::make_unique<BackgroundRead>(*reader, bind->ranges, bind->abandon, duckdb_vector_size(),
                                                   bind->options.records);
  }
  if (bind->options.records.format != ValueFormat::kRaw) {
    // The records of the read that do not parse are found by it and by this scan together.
    state->parser = std::make_unique<RowParser>(bind->options.records, state->read->bad_records().get());
  }
  duckdb_init_set_max_threads(info, 1);
  duckdb_init_set_init_data(info, state.release(), Delete<ScanState>);
}

// Takes the next chunk to hand out; false when every range is read.
Result<bool> NextChunk(ScanState& state) {
  if (state.done) return false;
  state.read->Recycle(std::move(state.chunk));
  ASSIGN_OR_RETURN(std::optional<ReadChunk> chunk, state.read->Next());
  state.handed_out = 0;
  state.done = !chunk;
  state.chunk = chunk ? *std::move(chunk) : ReadChunk();
  return !state.done;
}

void SetBytes(duckdb_vector vector, idx_t row, const std::optional<std::string>& bytes) {
  if (!bytes) return engine::SetRowNull(vector, row);
  duckdb_vector_assign_string_element_len(vector, row, bytes->data(), bytes->size());
}

// Writes records[begin, begin + count) into the first rows of `output`.
void Emit(const std::vector<OwnedKafkaRecord>& records, size_t begin, size_t count,
          duckdb_data_chunk output) {
  auto vector = [&](Column c) { return duckdb_data_chunk_get_vector(output, c); };
  auto* partitions = static_cast<int32_t*>(duckdb_vector_get_data(vector(kPartition)));
  auto* offsets = static_cast<int64_t*>(duckdb_vector_get_data(vector(kOffset)));
  auto* timestamps = static_cast<duckdb_timestamp*>(duckdb_vector_get_data(vector(kTimestamp)));
  auto* types = static_cast<int32_t*>(duckdb_vector_get_data(vector(kTimestampType)));
  duckdb_vector headers = vector(kHeaders);
  auto* entries = static_cast<duckdb_list_entry*>(duckdb_vector_get_data(headers));
  duckdb_vector header_struct = duckdb_list_vector_get_child(headers);
  idx_t header_count = 0;
  for (size_t i = 0; i < count; i++) header_count += records[begin + i].headers.size();
  duckdb_list_vector_reserve(headers, header_count);
  duckdb_vector header_keys = duckdb_struct_vector_get_child(header_struct, 0);
  duckdb_vector header_values = duckdb_struct_vector_get_child(header_struct, 1);
  idx_t next_header = 0;
  for (size_t i = 0; i < count; i++) {
    const OwnedKafkaRecord& r = records[begin + i];
    const auto row = static_cast<idx_t>(i);
    SetBytes(vector(kKey), row, r.key);
    SetBytes(vector(kValue), row, r.value);
    duckdb_vector_assign_string_element_len(vector(kTopic), row, r.topic.data(), r.topic.size());
    partitions[row] = r.partition;
    offsets[row] = r.offset;
    if (r.timestamp_type == TimestampType::kNone) {
      engine::SetRowNull(vector(kTimestamp), row);
      engine::SetRowNull(vector(kTimestampType), row);
    } else {
      timestamps[row] = duckdb_timestamp{r.timestamp_ms * 1000};
      types[row] = r.timestamp_type == TimestampType::kCreateTime ? 0 : 1;
    }
    entries[row] = duckdb_list_entry{next_header, r.headers.size()};
    for (const auto& [name, value] : r.headers) {
      duckdb_vector_assign_string_element_len(header_keys, next_header, name.data(), name.size());
      SetBytes(header_values, next_header, value);
      next_header++;
    }
  }
  duckdb_list_vector_set_size(headers, header_count);
  duckdb_data_chunk_set_size(output, count);
}

// Writes the chunk's rows into `output` until it is full or the chunk is handed out: those
// parsed on the read's thread (handed on whole, without a copy), or its records parsed here
// straight into `output` (a bad one passed over or failing the query, as RowParser says).
Status EmitRows(ScanState& state, duckdb_data_chunk output) {
  if (state.chunk.parsed) {
    if (state.chunk.table) ReferenceRows(output, state.chunk.table->chunk, state.chunk.rows);
    state.handed_out = state.chunk.rows;
    return Status::OK();
  }
  RecordChunkRows rows(output, state.parser->schema());
  for (; state.handed_out < state.chunk.size() && rows.row() < duckdb_vector_size(); state.handed_out++) {
    ASSIGN_OR_RETURN(const bool made,
                     state.parser->Parse(ViewOf(state.chunk.records[state.handed_out]), rows));
    if (made) rows.set_row(rows.row() + 1);
  }
  duckdb_data_chunk_set_size(output, rows.row());
  return Status::OK();
}

void Scan(duckdb_function_info info, duckdb_data_chunk output) {
  auto& state = *static_cast<ScanState*>(duckdb_function_get_init_data(info));
  const auto* bind = static_cast<const BindData*>(duckdb_function_get_bind_data(info));
  for (;;) {
    while (state.handed_out == state.chunk.size()) {
      Result<bool> read = NextChunk(state);
      if (!read.ok()) {
        duckdb_function_set_error(
            info, engine::EncodeStatus(read.status().WithContext(kReadKafkaFunction)).c_str());
        return;
      }
      if (!*read) {
        duckdb_data_chunk_set_size(output, 0);
        return;
      }
      if (bind->batch != nullptr && state.chunk.newest_ms)
        bind->batch->SawRecordsUpTo(*state.chunk.newest_ms);
    }
    if (!state.parser) {
      const size_t count = std::min<size_t>(duckdb_vector_size(), state.chunk.size() - state.handed_out);
      Emit(state.chunk.records, state.handed_out, count, output);
      state.handed_out += count;
      return;
    }
    Status emitted = EmitRows(state, output);
    if (!emitted.ok()) {
      duckdb_function_set_error(info, engine::EncodeStatus(emitted.WithContext(kReadKafkaFunction)).c_str());
      return;
    }
    // Records that were all passed over leave the output empty, which would end the scan.
    if (duckdb_data_chunk_get_size(output) > 0) return;
  }
}

}  // namespace

ScopedKafkaBatch::ScopedKafkaBatch(duckdb_connection conn, int64_t source, KafkaBatch* batch)
    : source_(source) {
  duckdb_client_context context = nullptr;
  duckdb_connection_get_client_context(conn, &context);
  connection_id_ = ConnectionId(context);
  std::lock_guard<std::mutex> lock(batches_mutex);
  batches[{connection_id_, source_}] = batch;
}

ScopedKafkaBatch::~ScopedKafkaBatch() {
  std::lock_guard<std::mutex> lock(batches_mutex);
  batches.erase({connection_id_, source_});
}

Status RegisterReadKafka(duckdb_connection conn, std::function<Status()> authorize) {
  duckdb_table_function function = duckdb_create_table_function();
  duckdb_table_function_set_name(function, kReadKafkaFunction);
  duckdb_table_function_set_extra_info(function, new std::function<Status()>(std::move(authorize)),
                                       Delete<std::function<Status()>>);
  {
    engine::LogicalTypeGuard text{duckdb_create_logical_type(DUCKDB_TYPE_VARCHAR)};
    for (const char* name : kTextOptions)
      duckdb_table_function_add_named_parameter(function, name, text.type);
    engine::LogicalTypeGuard number{duckdb_create_logical_type(DUCKDB_TYPE_BIGINT)};
    duckdb_table_function_add_named_parameter(function, kMaxOffsetsOption, number.type);
    engine::LogicalTypeGuard fraction{duckdb_create_logical_type(DUCKDB_TYPE_DOUBLE)};
    duckdb_table_function_add_named_parameter(function, kMaxDeadLetterFractionOption, fraction.type);
    engine::LogicalTypeGuard properties{duckdb_create_map_type(text.type, text.type)};
    duckdb_table_function_add_named_parameter(function, kKafkaOptionsOption, properties.type);
    engine::LogicalTypeGuard source{duckdb_create_logical_type(DUCKDB_TYPE_BIGINT)};
    duckdb_table_function_add_named_parameter(function, engine::kStreamSourceParameter, source.type);
  }
  duckdb_table_function_set_bind(function, Bind);
  duckdb_table_function_set_init(function, Init);
  duckdb_table_function_set_function(function, Scan);
  const duckdb_state registered = duckdb_register_table_function(conn, function);
  duckdb_destroy_table_function(&function);
  if (registered != DuckDBSuccess) return Status::Internal("DuckDB refused to register read_kafka");
  return Status::OK();
}

Status RegisterReadKafka(sql::Session& session) {
  return RegisterReadKafka(session.connection().raw(), [&session] {
    return session.context().governor().RequireAdmin("read_kafka(...), which reads outside the warehouse,");
  });
}

}  // namespace basin::stream::kafka
