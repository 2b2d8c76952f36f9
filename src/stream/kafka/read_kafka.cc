#include "stream/kafka/read_kafka.h"

#include <duckdb.h>

#include <algorithm>
#include <array>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/status_transport.h"
#include "engine/vector_access.h"
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
  KafkaReader* batch_reader = nullptr;         // the installed batch's client, when it lends one
  const CancellationToken* abandon = nullptr;  // the installed batch's
};

// One query's reading: the ranges still left (each start moves on as slices are read),
// and the slice read last, handed out chunk by chunk.
struct ScanState {
  std::unique_ptr<KafkaReader> own_reader;  // unless the batch lent one
  KafkaReader* reader = nullptr;
  const CancellationToken* abandon = nullptr;
  std::vector<PartitionRange> ranges;  // what is left to read once `ahead` is read
  // The next slice, read on a thread of its own while the scan hands out the current one.
  std::future<Result<std::vector<OwnedKafkaRecord>>> ahead;
  std::vector<OwnedKafkaRecord> slice;
  size_t handed_out = 0;                 // records of `slice` already in an output chunk
  std::unique_ptr<RecordParser> parser;  // valueFormat json or csv
  std::vector<RecordCell> cells;
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

// The batches installed, by DuckDB connection id.
std::mutex batches_mutex;
std::map<uint64_t, KafkaBatch*> batches;  // GUARDED_BY(batches_mutex)

uint64_t ConnectionId(duckdb_client_context context) {
  const uint64_t id = duckdb_client_context_get_connection_id(context);
  duckdb_destroy_client_context(&context);
  return id;
}

KafkaBatch* BatchOf(duckdb_bind_info info) {
  duckdb_client_context context = nullptr;
  duckdb_table_function_get_client_context(info, &context);
  const uint64_t id = ConnectionId(context);
  std::lock_guard<std::mutex> lock(batches_mutex);
  auto it = batches.find(id);
  return it == batches.end() ? nullptr : it->second;
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
      abandon));
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
  auto data = std::make_unique<BindData>();
  ASSIGN_OR_RETURN(data->options, ParseKafkaOptions(GivenOptions(info)));
  KafkaBatch* batch = BatchOf(info);
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
  state->reader = bind->batch_reader;
  if (state->reader == nullptr) {
    auto reader = KafkaReader::OpenToRead(bind->options);
    if (!reader.ok()) {
      duckdb_init_set_error(info,
                            engine::EncodeStatus(reader.status().WithContext(kReadKafkaFunction)).c_str());
      return;
    }
    state->own_reader = std::move(reader).value();
    state->reader = state->own_reader.get();
  }
  state->ranges = bind->ranges;
  state->abandon = bind->abandon;
  if (bind->options.records.format != ValueFormat::kRaw) {
    state->parser = MakeRecordParser(bind->options.records);
  }
  duckdb_init_set_max_threads(info, 1);
  duckdb_init_set_init_data(info, state.release(), Delete<ScanState>);
}

// The next slice: the next offsets of every range not read yet, about kSliceRecords in all
// (at least kMinSliceOffsets of each), to read in one fetch of all their partitions (a fetch
// costs about the same whatever it brings, so slices of one partition at a time would spend
// most of the scan waiting), taken off `state.ranges`. Empty when every range is read.
std::vector<PartitionRange> TakeSlice(ScanState& state) {
  constexpr int64_t kSliceRecords = 16'384;
  constexpr int64_t kMinSliceOffsets = 256;
  std::vector<PartitionRange> slice;
  for (const PartitionRange& range : state.ranges) {
    if (range.size() > 0) slice.push_back(range);
  }
  if (slice.empty()) return slice;
  const int64_t quota =
      std::max<int64_t>(kMinSliceOffsets, kSliceRecords / static_cast<int64_t>(slice.size()));
  for (PartitionRange& range : slice)
    range.end_offset = std::min(range.end_offset, range.start_offset + quota);
  for (PartitionRange& range : state.ranges) {
    for (const PartitionRange& taken : slice) {
      if (taken.tp == range.tp && taken.start_offset == range.start_offset)
        range.start_offset = taken.end_offset;
    }
  }
  return slice;
}

// The records of `slice`, read with `reader`.
Result<std::vector<OwnedKafkaRecord>> ReadRecords(KafkaReader& reader,
                                                  const std::vector<PartitionRange>& slice,
                                                  const CancellationToken* abandon) {
  std::vector<OwnedKafkaRecord> records;
  RETURN_IF_ERROR(reader.Read(
      slice,
      [&](const KafkaRecord& record) {
        records.push_back(Own(record));
        return Status::OK();
      },
      abandon));
  return records;
}

// Starts reading `slice` on a thread of its own; the reader is that thread's alone until
// state.ahead's result is taken.
void ReadAhead(ScanState& state, std::vector<PartitionRange> slice) {
  state.ahead =
      std::async(std::launch::async, ReadRecords, std::ref(*state.reader), std::move(slice), state.abandon);
}

bool AllRead(const ScanState& state) {
  return std::all_of(state.ranges.begin(), state.ranges.end(),
                     [](const PartitionRange& range) { return range.size() == 0; });
}

// Makes the slice read ahead the current one and starts reading the one after it
// (ReadAhead), so that fetching overlaps parsing and writing; a scan of one slice reads it
// here. False when every
// range is read.
Result<bool> ReadSlice(ScanState& state) {
  if (!state.ahead.valid()) {
    std::vector<PartitionRange> first = TakeSlice(state);
    if (first.empty()) return false;
    if (AllRead(state)) {
      ASSIGN_OR_RETURN(state.slice, ReadRecords(*state.reader, first, state.abandon));
      state.handed_out = 0;
      return true;
    }
    ReadAhead(state, std::move(first));
  }
  ASSIGN_OR_RETURN(state.slice, state.ahead.get());
  state.handed_out = 0;
  if (std::vector<PartitionRange> next = TakeSlice(state); !next.empty()) ReadAhead(state, std::move(next));
  return true;
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

// Parses records of the slice into the rows of `output` until it is full or the slice is
// handed out. A record that does not parse is skipped when the source has a dead-letter
// table (a stream's batch sends it there before the statement runs), else it fails the query.
Status EmitParsed(ScanState& state, bool skip_bad, duckdb_data_chunk output) {
  const RecordSchema& schema = state.parser->schema();
  idx_t rows = 0;
  for (; state.handed_out < state.slice.size() && rows < duckdb_vector_size(); state.handed_out++) {
    const OwnedKafkaRecord& record = state.slice[state.handed_out];
    Status parsed = ParseRecordValue(*state.parser, record.value, record.topic, record.partition,
                                     record.offset, &state.cells);
    if (!parsed.ok()) {
      if (parsed.code() != ErrorCode::kInvalidArgument) return parsed;
      if (skip_bad) continue;
      return Status::InvalidArgument(parsed.message() +
                                     " (give deadLetterTable => 'name' to set such records aside)");
    }
    SetRecordRow(output, rows++, schema, state.cells);
  }
  duckdb_data_chunk_set_size(output, rows);
  return Status::OK();
}

void Scan(duckdb_function_info info, duckdb_data_chunk output) {
  auto& state = *static_cast<ScanState*>(duckdb_function_get_init_data(info));
  const auto* bind = static_cast<const BindData*>(duckdb_function_get_bind_data(info));
  for (;;) {
    while (state.handed_out == state.slice.size()) {
      Result<bool> read = ReadSlice(state);
      if (!read.ok()) {
        duckdb_function_set_error(
            info, engine::EncodeStatus(read.status().WithContext(kReadKafkaFunction)).c_str());
        return;
      }
      if (!*read) {
        duckdb_data_chunk_set_size(output, 0);
        return;
      }
    }
    if (!state.parser) {
      const size_t count = std::min<size_t>(duckdb_vector_size(), state.slice.size() - state.handed_out);
      Emit(state.slice, state.handed_out, count, output);
      state.handed_out += count;
      return;
    }
    Status emitted = EmitParsed(state, !bind->options.records.dead_letter_table.empty(), output);
    if (!emitted.ok()) {
      duckdb_function_set_error(info, engine::EncodeStatus(emitted.WithContext(kReadKafkaFunction)).c_str());
      return;
    }
    // A slice of dead letters only leaves the chunk empty, which would end the scan.
    if (duckdb_data_chunk_get_size(output) > 0) return;
  }
}

}  // namespace

Status ParseRecordValue(RecordParser& parser, std::optional<std::string_view> value, std::string_view topic,
                        int32_t partition, int64_t offset, std::vector<RecordCell>* cells) {
  Status parsed =
      value ? parser.Parse(*value, cells) : Status::InvalidArgument("the record has no value (a tombstone)");
  if (parsed.ok()) return parsed;
  const std::string where =
      ToString(TopicPartition{std::string(topic), partition}) + " offset " + std::to_string(offset);
  // Not the record's fault (a schema registry out of reach): the batch fails, as it came.
  if (parsed.code() != ErrorCode::kInvalidArgument) return parsed.WithContext(where);
  return Status::InvalidArgument(where + ": " + parsed.message());
}

ScopedKafkaBatch::ScopedKafkaBatch(duckdb_connection conn, KafkaBatch* batch) {
  duckdb_client_context context = nullptr;
  duckdb_connection_get_client_context(conn, &context);
  connection_id_ = ConnectionId(context);
  std::lock_guard<std::mutex> lock(batches_mutex);
  batches[connection_id_] = batch;
}

ScopedKafkaBatch::~ScopedKafkaBatch() {
  std::lock_guard<std::mutex> lock(batches_mutex);
  batches.erase(connection_id_);
}

Status RegisterReadKafka(duckdb_connection conn) {
  duckdb_table_function function = duckdb_create_table_function();
  duckdb_table_function_set_name(function, kReadKafkaFunction);
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
  }
  duckdb_table_function_set_bind(function, Bind);
  duckdb_table_function_set_init(function, Init);
  duckdb_table_function_set_function(function, Scan);
  const duckdb_state registered = duckdb_register_table_function(conn, function);
  duckdb_destroy_table_function(&function);
  if (registered != DuckDBSuccess) return Status::Internal("DuckDB refused to register read_kafka");
  return Status::OK();
}

}  // namespace basin::stream::kafka
