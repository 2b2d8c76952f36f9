#include "server/http/records_route.h"

#include <map>
#include <tuple>
#include <nlohmann/json.hpp>

#include "common/strings.h"
#include "common/uuid.h"
#include "security/crypto.h"
#include "server/http/catalog_routes.h"
#include "server/http/result_encoding.h"
#include "server/http/url_names.h"
#include "sql/session.h"
#include "stream/dead_letters.h"
#include "stream/source.h"

namespace basin::server::http {
namespace {

using json = nlohmann::json;

constexpr size_t kMaxReportedProblems = 100;
constexpr size_t kMaxIdempotencyKeyLength = 256;

struct TableColumn {
  std::string name;
  std::string type;  // DuckDB's name
  bool nullable = true;
  bool generated = false;
};

// A record that does not fit: which one, which field, why.
struct Problem {
  size_t record = 0;
  std::string field;
  std::string message;
};

// A posted record: its JSON (discarded when an NDJSON line is not JSON) and its text as sent
// (an NDJSON line; an array's element as JSON text), which a dead letter keeps.
struct PostedRecord {
  json value;
  std::string text;
};

// The body's records: a JSON array of objects or NDJSON. An NDJSON line that is not JSON is
// an error unless `keep_unparsed` (it is then a record whose value is discarded).
Result<std::vector<PostedRecord>> ParseRecords(const std::string& body, bool keep_unparsed) {
  const size_t first = body.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return Status::InvalidArgument("the body holds no records");
  std::vector<PostedRecord> records;
  if (body[first] == '[') {
    json array = json::parse(body, nullptr, /*allow_exceptions=*/false);
    if (!array.is_array()) return Status::InvalidArgument("the body is not a valid JSON array");
    for (json& value : array) {
      std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
      records.push_back({std::move(value), std::move(text)});
    }
  } else {
    size_t start = 0;
    for (size_t line = 1; start < body.size(); ++line) {
      size_t end = body.find('\n', start);
      if (end == std::string::npos) end = body.size();
      const std::string_view text(body.data() + start, end - start);
      start = end + 1;
      if (text.find_first_not_of(" \t\r") == std::string_view::npos) continue;
      json record = json::parse(text, nullptr, /*allow_exceptions=*/false);
      if (record.is_discarded() && !keep_unparsed)
        return Status::InvalidArgument("line " + std::to_string(line) + " is not JSON");
      records.push_back({std::move(record), std::string(text)});
    }
  }
  if (records.empty()) return Status::InvalidArgument("the body holds no records");
  return records;
}

// The table's columns: DESCRIBE for nullability and generation, the table's own scan for
// DuckDB's type names, both on the user's session.
Result<std::vector<TableColumn>> Columns(sql::Session& session, const TableName& name) {
  ASSIGN_OR_RETURN(std::vector<sql::StatementResult> described, session.Execute("DESCRIBE " + name.Sql()));
  ASSIGN_OR_RETURN(std::vector<sql::StatementResult> scanned,
                   session.Execute("SELECT * FROM " + name.Sql() + " LIMIT 0"));
  const auto& describe = described.back().result;
  const auto& scan = scanned.back().result;
  std::vector<TableColumn> columns;
  for (size_t i = 0; i < describe.rows.size() && i < scan.column_types.size(); ++i) {
    const Row& row = describe.rows[i];
    TableColumn column;
    column.name = row[0].value_or("");
    column.type = scan.column_types[i];
    column.nullable = row[2].value_or("true") == "true";
    column.generated = row[4].has_value();
    columns.push_back(std::move(column));
  }
  return columns;
}

// Why `value` cannot fill a column of DuckDB type `type`; empty when it can. Strings are
// left to DuckDB's casts (dates, decimals), which fail the whole request when they fail.
std::string KindProblem(const std::string& type, const json& value) {
  static const std::vector<std::string_view> kIntegers = {
      "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT"};
  const bool nested = type.ends_with("]") || type.starts_with("STRUCT") || type.starts_with("MAP");
  if (nested) return value.is_array() || value.is_object() ? "" : "expects a JSON array or object";
  if (std::find(kIntegers.begin(), kIntegers.end(), type) != kIntegers.end()) {
    return value.is_number_integer() ? "" : "expects an integer";
  }
  if (type == "FLOAT" || type == "DOUBLE") return value.is_number() ? "" : "expects a number";
  if (type.starts_with("DECIMAL")) return value.is_number() || value.is_string() ? "" : "expects a number";
  if (type == "BOOLEAN") return value.is_boolean() ? "" : "expects true or false";
  return value.is_string() ? "" : "expects a string";
}

std::vector<Problem> CheckRecords(const std::vector<PostedRecord>& records,
                                  const std::vector<TableColumn>& columns) {
  std::vector<Problem> problems;
  for (size_t i = 0; i < records.size(); ++i) {
    const json& record = records[i].value;
    if (record.is_discarded()) {
      problems.push_back({i, "", "the line is not JSON"});
      continue;
    }
    if (!record.is_object()) {
      problems.push_back({i, "", "a record must be a JSON object"});
      continue;
    }
    for (const auto& item : record.items()) {
      // Not a structured binding: clang 14 refuses a lambda's capture of one.
      const std::string& field = item.key();
      const json& value = item.value();
      auto column =
          std::find_if(columns.begin(), columns.end(), [&](const TableColumn& c) { return c.name == field; });
      if (column == columns.end()) {
        problems.push_back({i, field, "the table has no such column"});
      } else if (column->generated) {
        problems.push_back({i, field, "is a generated column"});
      } else if (!value.is_null()) {
        std::string problem = KindProblem(column->type, value);
        if (!problem.empty()) problems.push_back({i, field, problem + " for " + column->type});
      }
    }
    for (const TableColumn& column : columns) {
      const bool missing = !record.contains(column.name) || record[column.name].is_null();
      if (!column.nullable && !column.generated && missing)
        problems.push_back({i, column.name, "is required"});
    }
  }
  return problems;
}

// `value` as SQL of type `type`, converted by `cast` ("CAST", or "TRY_CAST": NULL when it
// does not convert).
std::string ValueSql(const json& value, const std::string& type, std::string_view cast = "CAST") {
  const std::string as = " AS " + type + ")";
  if (value.is_null()) return "CAST(NULL" + as;
  if (value.is_boolean()) return value.get<bool>() ? "TRUE" : "FALSE";
  if (value.is_number()) return std::string(cast) + "(" + value.dump() + as;
  if (value.is_string()) return std::string(cast) + "(" + QuoteLiteral(value.get<std::string>()) + as;
  return std::string(cast) + "(CAST(" + QuoteLiteral(value.dump()) + " AS JSON)" + as;
}

// The values of `records` (those without `problems`) that do not convert to their column's
// type: a date string that is no date, a number too large for its column. One query, on
// the user's session (it reads no table).
Result<std::vector<Problem>> CastProblems(sql::Session& session, const std::vector<PostedRecord>& records,
                                          const std::vector<TableColumn>& columns,
                                          const std::vector<Problem>& problems) {
  std::string checks;
  for (size_t i = 0; i < records.size(); ++i) {
    const auto has_problem = [i](const Problem& p) { return p.record == i; };
    if (std::any_of(problems.begin(), problems.end(), has_problem)) continue;
    for (const TableColumn& column : columns) {
      if (column.generated || column.type == "VARCHAR" || !records[i].value.contains(column.name)) continue;
      const json& value = records[i].value[column.name];
      if (value.is_null() || value.is_boolean()) continue;
      checks += std::string(checks.empty() ? "" : ", ") + "(" + std::to_string(i) + ", " +
                QuoteLiteral(column.name) + ", " + ValueSql(value, column.type, "TRY_CAST") + " IS NULL)";
    }
  }
  std::vector<Problem> found;
  if (checks.empty()) return found;
  ASSIGN_OR_RETURN(std::vector<sql::StatementResult> checked,
                   session.Execute("SELECT record, field FROM (VALUES " + checks +
                                   ") AS checks(record, field, failed) WHERE failed ORDER BY record"));
  for (const Row& row : checked.back().result.rows) {
    const std::string& field = row.at(1).value_or("");
    auto column =
        std::find_if(columns.begin(), columns.end(), [&](const TableColumn& c) { return c.name == field; });
    found.push_back({std::stoul(row.at(0).value_or("0")), field,
                     "does not convert to " + (column == columns.end() ? std::string() : column->type)});
  }
  return found;
}

// INSERT INTO `name` BY NAME the records numbered `chosen`, over the columns that are not
// generated.
std::string InsertSql(const TableName& name, const std::vector<PostedRecord>& records,
                      const std::vector<size_t>& chosen, const std::vector<TableColumn>& columns) {
  std::string values;
  std::string aliases;
  for (const TableColumn& column : columns) {
    if (column.generated) continue;
    aliases += (aliases.empty() ? "" : ", ") + QuoteIdentifier(column.name);
  }
  for (size_t i : chosen) {
    const json& record = records[i].value;
    values += values.empty() ? "(" : ", (";
    bool first = true;
    for (const TableColumn& column : columns) {
      if (column.generated) continue;
      values += first ? "" : ", ";
      first = false;
      values += ValueSql(record.contains(column.name) ? record[column.name] : json(), column.type);
    }
    values += ")";
  }
  return "INSERT INTO " + name.Sql() + " BY NAME SELECT * FROM (VALUES " + values + ") AS records(" +
         aliases + ")";
}

Result<std::string> TxnAppId(const std::string& key) {
  if (key.empty() || key.size() > kMaxIdempotencyKeyLength) {
    return Status::InvalidArgument("Idempotency-Key must have 1 to 256 characters");
  }
  return "http-records/" + HexEncode(security::Sha256(key)).substr(0, 32);
}

void SendProblems(httplib::Response& response, const std::vector<Problem>& problems) {
  json listed = json::array();
  for (size_t i = 0; i < problems.size() && i < kMaxReportedProblems; ++i) {
    listed.push_back(
        {{"record", problems[i].record}, {"field", problems[i].field}, {"message", problems[i].message}});
  }
  const Problem& first = problems.front();
  const Status error = Status::InvalidArgument(
      std::to_string(problems.size()) + " problems in the records, nothing was committed; first: record " +
      std::to_string(first.record) + ", field '" + first.field + "' " + first.message);
  json body = ErrorJson(error);
  body["error"]["records"] = std::move(listed);
  SendJson(response, GetErrorCodeInfo(error.code()).http_status, body);
}

// What a request asks besides its records.
struct RecordsRequest {
  TableName table;
  std::optional<std::string> idempotency_key;
  std::optional<std::string> app_id;  // the records' txn appId, with a key
  // ?deadLetterTable=: where the records that do not fit go instead of failing the request.
  std::optional<TableName> dead_letter_table;
};

Result<RecordsRequest> ParseRecordsRequest(const httplib::Request& request) {
  RecordsRequest parsed;
  ASSIGN_OR_RETURN(parsed.table, ParseTableName(request.matches[1].str()));
  if (request.has_header("Idempotency-Key")) {
    parsed.idempotency_key = request.get_header_value("Idempotency-Key");
    ASSIGN_OR_RETURN(parsed.app_id, TxnAppId(*parsed.idempotency_key));
  }
  if (request.has_param("deadLetterTable")) {
    Result<TableName> table = ParseTableName(request.get_param_value("deadLetterTable"));
    if (!table.ok()) return table.status().WithContext("deadLetterTable");
    parsed.dead_letter_table = std::move(*table);
  }
  return parsed;
}

// `name` as the dead-letter writer takes it: schema.table, each part an identifier.
std::string PlainName(const TableName& name) { return (name.schema ? *name.schema + "." : "") + name.table; }

// The dead letters of the records that have problems (each record once, its problems
// joined), and the numbers of the others.
std::pair<std::vector<stream::DeadLetter>, std::vector<size_t>> SplitRecords(
    const std::vector<PostedRecord>& records, const std::vector<Problem>& problems,
    const std::optional<std::string>& idempotency_key) {
  std::map<size_t, std::string> errors;
  for (const Problem& problem : problems) {
    std::string& error = errors[problem.record];
    error += (error.empty() ? "" : "; ") +
             (problem.field.empty() ? problem.message : "field '" + problem.field + "' " + problem.message);
  }
  std::vector<stream::DeadLetter> letters;
  std::vector<size_t> good;
  for (size_t i = 0; i < records.size(); ++i) {
    auto error = errors.find(i);
    if (error == errors.end()) {
      good.push_back(i);
      continue;
    }
    stream::DeadLetter letter;
    letter.error = error->second;
    letter.key = idempotency_key;
    letter.value = records[i].text;
    letter.offset = static_cast<int64_t>(i);
    letters.push_back(std::move(letter));
  }
  return {std::move(letters), std::move(good)};
}

// Answers the request; returns how it ended, for the audit log, with the rows appended in
// `appended`.
Status PostRecords(const HttpContext& context, const httplib::Request& request, httplib::Response& response,
                   const std::string& user, std::optional<int64_t>* appended) {
  auto fail = [&response](const Status& error) {
    SendError(response, error);
    return error;
  };
  Result<RecordsRequest> asked = ParseRecordsRequest(request);
  if (!asked.ok()) return fail(asked.status());
  const std::optional<TableName>& dead_letter_table = asked->dead_letter_table;
  if (dead_letter_table && PlainName(*dead_letter_table) == PlainName(asked->table)) {
    return fail(Status::InvalidArgument("deadLetterTable must be another table than the one appended to"));
  }
  Result<std::vector<PostedRecord>> records = ParseRecords(request.body, dead_letter_table.has_value());
  if (!records.ok()) return fail(records.status());
  Result<std::unique_ptr<sql::Session>> session = context.OpenSqlSession(user);
  if (!session.ok()) return fail(session.status());
  sql::Session& on = **session;
  Result<std::vector<TableColumn>> columns = Columns(on, asked->table);
  if (!columns.ok()) return fail(columns.status());
  std::vector<Problem> problems = CheckRecords(*records, *columns);
  Result<std::vector<Problem>> cast_problems = CastProblems(on, *records, *columns, problems);
  if (!cast_problems.ok()) return fail(cast_problems.status());
  problems.insert(problems.end(), cast_problems->begin(), cast_problems->end());
  std::stable_sort(problems.begin(), problems.end(),
                   [](const Problem& a, const Problem& b) { return a.record < b.record; });
  if (!problems.empty() && !dead_letter_table) {
    SendProblems(response, problems);
    return Status::InvalidArgument(std::to_string(problems.size()) + " records do not fit the table");
  }
  // Not a structured binding: clang 14 refuses a lambda's capture of one.
  std::vector<stream::DeadLetter> letters;
  std::vector<size_t> good;
  std::tie(letters, good) = SplitRecords(*records, problems, asked->idempotency_key);

  // Dead letters go in with the records' txn, as a stream's batch's: a retry with the same
  // key commits none twice. Without a key the request's own id stands for one.
  const std::string request_id = asked->app_id.value_or("http-records/" + NewUuid());
  stream::DeadLetterWriter writer(on, request_id + "/" + PlainName(asked->table), /*source=*/0);
  stream::BatchRead read;
  read.batch_id = 1;
  std::optional<Row> inserted_row;
  std::vector<std::string> notices;
  const auto insert = [&]() -> Status {
    if (good.empty()) return Status::OK();
    std::string sql;
    if (asked->app_id) {
      sql = "SET basin.txn_app_id = " + QuoteLiteral(*asked->app_id) + "; SET basin.txn_version = 1; ";
    }
    ASSIGN_OR_RETURN(std::vector<sql::StatementResult> results,
                     on.Execute(sql + InsertSql(asked->table, *records, good, *columns)));
    // The write's row: version, num_affected_rows, num_inserted_rows.
    inserted_row = results.back().result.rows.at(0);
    notices = std::move(results.back().notices);
    return Status::OK();
  };
  if (dead_letter_table) {
    const std::string dlq = PlainName(*dead_letter_table);
    // Whatever the records, so that a request's rights do not depend on its data.
    Status writable = writer.CheckWritable(dlq);
    if (!writable.ok()) return fail(writable.WithContext("deadLetterTable " + dlq));
    Status set_aside =
        writer.SetAside(dlq, std::nullopt, static_cast<int64_t>(records->size()), letters, read);
    if (set_aside.ok()) set_aside = writer.WithRefusedRowsSetAside(dlq, read, insert);
    if (!set_aside.ok()) return fail(set_aside);
  } else {
    Status inserted = insert();
    if (!inserted.ok()) return fail(inserted);
  }
  // A write skipped by its txn affects no row, which a write of records never does otherwise.
  const bool skipped = inserted_row && inserted_row->at(1) == std::optional<std::string>("0") &&
                       read.dead_letters == static_cast<int64_t>(letters.size());
  const int64_t rows = inserted_row ? std::stoll(inserted_row->at(1).value_or("0")) : 0;
  *appended = rows;
  json answer = {{"table", request.matches[1].str()},
                 {"version", inserted_row ? CellJson("BIGINT", inserted_row->at(0)) : json()},
                 {"records", records->size()},
                 {"appended", rows},
                 {"skipped", skipped},
                 {"notices", notices}};
  if (dead_letter_table) {
    answer["dead_lettered"] = read.dead_letters;
    answer["dead_letter_version"] = read.dead_letter_version ? json(*read.dead_letter_version) : json();
  }
  SendJson(response, 200, answer);
  return Status::OK();
}

}  // namespace

void AddRecordsRoute(httplib::Server& server, const HttpContext& context) {
  server.Post(std::string(kTableNamePattern) + "/records",
              WithUser(context, [&context](const auto& request, auto& response, const auto& user) {
                const int64_t started_ms = context.clock->NowMs();
                std::optional<int64_t> appended;
                const Status outcome = PostRecords(context, request, response, user, &appended);
                context.Audit(request.remote_addr, user, "POST " + request.path, started_ms, outcome,
                              appended);
              }));
}

}  // namespace basin::server::http
