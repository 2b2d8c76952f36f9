#include "stream/source.h"

#include "stream/files_source.h"
#include "stream/kafka/kafka_source.h"
#include "stream/table_source.h"

namespace basin::stream {

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

}  // namespace basin::stream
