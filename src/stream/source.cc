#include "stream/source.h"

#include <memory>
#include <vector>

#include "stream/dead_letters.h"
#include "stream/files_source.h"
#include "stream/kafka/kafka_source.h"
#include "stream/table_source.h"

namespace basin::stream {

Status BatchSource::ReadAhead(const std::function<Result<std::optional<nlohmann::json>>()>& planned,
                              BatchRead& batch, const std::function<Status()>& run) {
  ASSIGN_OR_RETURN(std::optional<nlohmann::json> entry, planned());
  if (!entry) return Status::Cancelled("the batch's plan found nothing new to read");
  return Read(*entry, batch, run);
}

Status WithStreamsAllowed(sql::Session& session, const std::function<Status()>& run) {
  session.AllowStreams(true);
  Status status = run();
  session.AllowStreams(false);
  return status;
}

std::optional<int64_t> ReportedInteger(const engine::QueryResult& result, std::string_view column) {
  if (result.row_count() != 1) return std::nullopt;
  for (size_t c = 0; c < result.column_count(); c++) {
    if (result.column_names[c] == column && result.at(0, c)) return std::stoll(*result.at(0, c));
  }
  return std::nullopt;
}

Status BindStreamSource(sql::Session& session, const sql::grammar::StreamSource& stream) {
  return WithStreamsAllowed(session, [&] {
    return session.connection().DescribeQuery("SELECT * FROM " + stream.relation).status();
  });
}

Result<std::unique_ptr<BatchSource>> OpenBatchSource(sql::Session& session,
                                                     const sql::grammar::StreamSource& stream,
                                                     const StreamSink& sink, DeadLetterWriter& dead_letters,
                                                     std::shared_ptr<ObjectStore> source_store,
                                                     const std::string& where) {
  if (stream.is_table || stream.is_changes) return NewTableSource(session, stream, sink, where);
  if (stream.is_files) return NewFilesSource(session, stream, std::move(source_store), dead_letters, where);
  if (stream.is_kafka) return kafka::NewKafkaSource(session, stream, dead_letters, where);
  return Status::NotImplemented(where + ": its STREAM source " + stream.source +
                                " is not read_kafka(...), read_files(...), table_changes(...) or a table");
}

namespace {

Status NestedReadsFrom(size_t first, size_t count,
                       const std::function<Status(size_t, const std::function<Status()>&)>& read,
                       const std::function<Status()>& run) {
  if (first == count) return run();
  return read(first, [&] { return NestedReadsFrom(first + 1, count, read, run); });
}

}  // namespace

Status WithNestedReads(size_t count,
                       const std::function<Status(size_t, const std::function<Status()>&)>& read,
                       const std::function<Status()>& run) {
  return NestedReadsFrom(0, count, read, run);
}

Result<std::vector<engine::ColumnType>> DescribeStreamQuery(sql::Session& session,
                                                            const sql::grammar::Query& query) {
  const std::string where = "describing a query's STREAM sources";
  std::vector<std::unique_ptr<DeadLetterWriter>> dead_letters;
  std::vector<std::unique_ptr<BatchSource>> sources;
  for (const sql::grammar::StreamSource& stream : query.streams) {
    dead_letters.push_back(std::make_unique<DeadLetterWriter>(session, "describe", stream.index));
    ASSIGN_OR_RETURN(
        std::unique_ptr<BatchSource> source,
        OpenBatchSource(session, stream, StreamSink{}, *dead_letters.back(), NewMemoryObjectStore(), where));
    sources.push_back(std::move(source));
  }
  std::vector<engine::ColumnType> columns;
  BatchRead read;
  auto nothing = [&](size_t i, const std::function<Status()>& rest) {
    return sources[i]->ReadNothing(std::nullopt, read, rest);
  };
  RETURN_IF_ERROR(WithNestedReads(sources.size(), nothing, [&] {
    return WithStreamsAllowed(session, [&]() -> Status {
      ASSIGN_OR_RETURN(columns, session.connection().DescribeQuery(query.sql));
      return Status::OK();
    });
  }));
  return columns;
}

}  // namespace basin::stream
