#include "sql/statements.h"

namespace basin::sql {

StatementResult CommandResultRow(const std::string& statement, const commands::CommandResult& result,
                                 const std::vector<std::string>& metric_columns) {
  StatementResult out;
  out.statement = statement;
  out.returns_rows = true;
  out.notices = result.notices;
  engine::QueryResult& r = out.result;
  r.column_names.push_back("version");
  r.column_types.push_back("BIGINT");
  std::vector<std::optional<std::string>> row;
  row.push_back(result.commit.version >= 0 ? std::optional<std::string>(std::to_string(result.commit.version))
                                           : std::nullopt);
  for (const std::string& column : metric_columns) {
    r.column_names.push_back(column);
    r.column_types.push_back("BIGINT");
    auto it = result.metrics.find(column);
    int64_t value = 0;
    if (it != result.metrics.end()) {
      if (it->is_number_integer()) {
        value = it->get<int64_t>();
      } else if (it->is_string()) {
        value = std::strtoll(it->get<std::string>().c_str(), nullptr, 10);
      }
    }
    row.push_back(std::to_string(value));
  }
  r.rows.push_back(std::move(row));
  return out;
}

Status NotYetRun(std::string_view what, std::string_view issue) {
  return Status::NotImplemented(std::string(what) + " is parsed but not run yet: it arrives with the " +
                                std::string(issue) + " issue");
}

Status RefuseStreams(const std::vector<grammar::StreamSource>& streams, std::string_view what) {
  if (streams.empty()) return Status::OK();
  const std::string reading = std::string(what) + " reading STREAM " + streams[0].source;
  return Status::InvalidArgument(reading +
                                 " runs as a stream, batch after batch: basin stream run --checkpoint DIR -c "
                                 "'...' (docs/streams.md)");
}

}  // namespace basin::sql
