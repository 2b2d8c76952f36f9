#include "stream/dead_letters.h"

#include <algorithm>
#include <cstdio>
#include <string_view>
#include <utility>

#include "common/strings.h"
#include "engine/duckdb.h"
#include "sql/grammar/parse.h"
#include "sql/session_context.h"
#include "stream/source.h"

namespace basin::stream {
namespace {

// DuckDB's temporary table a batch's letters are appended to before the INSERT reads them
// (raw bytes as hex text: the appender takes text, which a BLOB column would unescape).
constexpr char kStagingTable[] = "basin_dead_letter_rows";

// 0.05 as "0.05": the shortest text that reads back as `fraction`.
std::string FormatFraction(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", fraction);
  return text;
}

Status AppendOptional(engine::Appender& appender, const std::optional<std::string>& bytes) {
  return bytes ? appender.Append(std::string_view(HexEncode(*bytes))) : appender.AppendNull();
}

}  // namespace

DeadLetterWriter::DeadLetterWriter(sql::Session& session, std::string stream_id, int64_t source)
    : session_(session),
      stream_id_(std::move(stream_id)),
      records_app_(source == 0 ? "/dead-letters" : "/dead-letters/" + std::to_string(source)) {}

Status DeadLetterWriter::Stage(const std::vector<DeadLetter>& letters) {
  engine::Connection& conn = session_.connection();
  if (!staging_ready_) {
    RETURN_IF_ERROR(conn.Execute(std::string("CREATE TEMP TABLE IF NOT EXISTS ") + kStagingTable +
                                 " (topic VARCHAR, partition INTEGER, \"offset\" BIGINT, file VARCHAR, "
                                 "line BIGINT, key_hex VARCHAR, value_hex VARCHAR, error VARCHAR)"));
    staging_ready_ = true;
  }
  RETURN_IF_ERROR(conn.Execute(std::string("DELETE FROM temp.") + kStagingTable));
  ASSIGN_OR_RETURN(auto appender, engine::Appender::Open(conn, "temp", kStagingTable));
  for (const DeadLetter& letter : letters) {
    if (letter.file.empty()) {
      const bool kafka = !letter.topic.empty();  // else a record posted over HTTP
      RETURN_IF_ERROR(kafka ? appender->Append(std::string_view(letter.topic)) : appender->AppendNull());
      RETURN_IF_ERROR(kafka ? appender->Append(int64_t{letter.partition}) : appender->AppendNull());
      RETURN_IF_ERROR(appender->Append(letter.offset));
      RETURN_IF_ERROR(appender->AppendNull());
      RETURN_IF_ERROR(appender->AppendNull());
    } else {
      for (int coordinate = 0; coordinate < 3; coordinate++) RETURN_IF_ERROR(appender->AppendNull());
      RETURN_IF_ERROR(appender->Append(std::string_view(letter.file)));
      RETURN_IF_ERROR(letter.line > 0 ? appender->Append(letter.line) : appender->AppendNull());
    }
    RETURN_IF_ERROR(AppendOptional(*appender, letter.key));
    RETURN_IF_ERROR(AppendOptional(*appender, letter.value));
    RETURN_IF_ERROR(appender->Append(std::string_view(letter.error)));
    RETURN_IF_ERROR(appender->EndRow());
  }
  return appender->Close();
}

Status DeadLetterWriter::CheckWritable(const std::string& table) {
  ASSIGN_OR_RETURN(std::vector<std::string> parts, sql::grammar::ParseQualifiedName(table));
  ASSIGN_OR_RETURN(catalog::TableName name, catalog::MakeTableName(parts));
  sql::SessionContext& context = session_.context();
  ASSIGN_OR_RETURN(std::optional<catalog::TableEntry> existing, context.LookupTable(parts));
  if (existing) return context.governor().RequireOnTable(security::Privilege::kModify, existing->name);
  return context.governor().Require(security::Privilege::kCreate, security::Securable::Schema(name.schema));
}

Result<std::string> DeadLetterWriter::EnsureTable(const std::string& table) {
  ASSIGN_OR_RETURN(std::vector<std::string> parts, sql::grammar::ParseQualifiedName(table));
  std::string name;
  for (const std::string& part : parts) name += (name.empty() ? "" : ".") + QuoteIdentifier(part);
  // CREATE TABLE IF NOT EXISTS would need CREATE on the schema even when the table exists.
  ASSIGN_OR_RETURN(std::optional<catalog::TableEntry> existing, session_.context().LookupTable(parts));
  if (existing) return name;
  RETURN_IF_ERROR(session_
                      .Execute("CREATE TABLE IF NOT EXISTS " + name +
                               " (stream_id STRING, batch_id BIGINT, topic STRING, partition INT, "
                               "\"offset\" BIGINT, file STRING, line BIGINT, key BINARY, value BINARY, "
                               "error STRING, dead_lettered_at TIMESTAMP)")
                      .status());
  return name;
}

Result<int64_t> DeadLetterWriter::Insert(const std::string& name, const std::string& app_suffix,
                                         int64_t batch_id, const std::string& columns_sql) {
  const std::string batch = std::to_string(batch_id);
  ASSIGN_OR_RETURN(std::vector<sql::StatementResult> results,
                   session_.Execute("SET basin.txn_app_id = " + QuoteLiteral(stream_id_ + app_suffix) +
                                    "; SET basin.txn_version = " + batch + "; INSERT INTO " + name +
                                    " BY NAME SELECT " + QuoteLiteral(stream_id_) + " AS stream_id, " +
                                    batch + " AS batch_id, " + columns_sql));
  if (auto version = ReportedInteger(results.back().result, "version")) return *version;
  return Status::Internal("the INSERT reported no table version");
}

Result<std::optional<int64_t>> DeadLetterWriter::Write(const std::string& table, int64_t batch_id,
                                                       const std::vector<DeadLetter>& letters) {
  if (letters.empty()) return std::optional<int64_t>();
  const std::string where = "dead-letter table " + table;
  Result<std::string> name = EnsureTable(table);
  if (!name.ok()) return name.status().WithContext(where);
  RETURN_IF_ERROR(Stage(letters).WithContext(where));
  Result<int64_t> version =
      Insert(*name, records_app_, batch_id,
             "topic, partition, \"offset\", file, line, unhex(key_hex) AS key, "
             "unhex(value_hex) AS value, error, current_timestamp AS dead_lettered_at FROM temp." +
                 std::string(kStagingTable));
  if (!version.ok()) return version.status().WithContext(where);
  return std::optional<int64_t>(*version);
}

Status DeadLetterWriter::WriteRows(const std::string& table, const std::string& app_suffix, BatchRead& read,
                                   const std::string& rows_sql) {
  RETURN_IF_ERROR(read.BeforeCommit());  // see SetAside
  const std::string where = "dead-letter table " + table;
  ASSIGN_OR_RETURN(engine::QueryResult count,
                   session_.connection().Query("SELECT count(*) FROM (" + rows_sql + ")"));
  const int64_t rows = std::stoll(count.at(0, 0).value_or("0"));
  if (rows == 0) return Status::OK();
  Result<std::string> name = EnsureTable(table);
  if (!name.ok()) return name.status().WithContext(where);
  Result<int64_t> version =
      Insert(*name, app_suffix, read.batch_id,
             "encode(value) AS value, error, current_timestamp AS dead_lettered_at FROM (" + rows_sql + ")");
  if (!version.ok()) return version.status().WithContext(where);
  read.dead_letters += rows;
  read.dead_letter_version = std::max(read.dead_letter_version.value_or(-1), *version);
  return Status::OK();
}

Status DeadLetterWriter::WithRefusedRowsSetAside(const std::string& table, BatchRead& read,
                                                 const std::function<Status()>& run) {
  if (table.empty()) return run();
  read.dead_letter_table = table;
  // Their own txn: a batch's records that did not parse are committed first with another.
  session_.SetAsideRefusedRows([&](const std::string& refused_rows_sql) -> Status {
    return WriteRows(table, "/refused-rows", read, refused_rows_sql);
  });
  Status ran = run();
  session_.SetAsideRefusedRows(nullptr);
  return ran;
}

Status DeadLetterWriter::SetAside(const std::string& table, std::optional<double> max_fraction,
                                  int64_t records, const std::vector<DeadLetter>& letters, BatchRead& read) {
  // What the batch's sources set aside at its first commit goes first: not from within the
  // commit that creates the dead-letter table (it would create it too).
  RETURN_IF_ERROR(read.BeforeCommit());
  const auto dead = static_cast<int64_t>(letters.size());
  if (max_fraction && dead > 0 && static_cast<double>(dead) > *max_fraction * static_cast<double>(records)) {
    return Status::InvalidArgument(std::to_string(dead) + " of " + std::to_string(records) +
                                   " records do not parse, more than maxDeadLetterFraction " +
                                   FormatFraction(*max_fraction) +
                                   " allows; the first: " + letters.front().error);
  }
  ASSIGN_OR_RETURN(std::optional<int64_t> version, Write(table, read.batch_id, letters));
  if (version) read.dead_letter_version = std::max(read.dead_letter_version.value_or(-1), *version);
  read.dead_letters += dead;
  return Status::OK();
}

}  // namespace basin::stream
