#include "server/http/records_route.h"

#include <nlohmann/json.hpp>

#include "common/strings.h"
#include "security/crypto.h"
#include "server/http/catalog_routes.h"
#include "server/http/result_encoding.h"
#include "server/http/url_names.h"

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

// The body's records: a JSON array of objects or NDJSON.
Result<std::vector<json>> ParseRecords(const std::string& body) {
  const size_t first = body.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return Status::InvalidArgument("the body holds no records");
  std::vector<json> records;
  if (body[first] == '[') {
    json array = json::parse(body, nullptr, /*allow_exceptions=*/false);
    if (!array.is_array()) return Status::InvalidArgument("the body is not a valid JSON array");
    records.assign(std::make_move_iterator(array.begin()), std::make_move_iterator(array.end()));
  } else {
    size_t start = 0;
    for (size_t line = 1; start < body.size(); ++line) {
      size_t end = body.find('\n', start);
      if (end == std::string::npos) end = body.size();
      const std::string_view text(body.data() + start, end - start);
      start = end + 1;
      if (text.find_first_not_of(" \t\r") == std::string_view::npos) continue;
      json record = json::parse(text, nullptr, /*allow_exceptions=*/false);
      if (record.is_discarded())
        return Status::InvalidArgument("line " + std::to_string(line) + " is not JSON");
      records.push_back(std::move(record));
    }
  }
  if (records.empty()) return Status::InvalidArgument("the body holds no records");
  return records;
}

// The table's columns: DESCRIBE for nullability and generation, the table's own scan for
// DuckDB's type names, both on the user's session.
Result<std::vector<TableColumn>> Columns(Session& session, const TableName& name) {
  ASSIGN_OR_RETURN(std::vector<StatementResult> described, session.Execute("DESCRIBE " + name.Sql()));
  ASSIGN_OR_RETURN(std::vector<StatementResult> scanned,
                   session.Execute("SELECT * FROM " + name.Sql() + " LIMIT 0"));
  const QueryResult& describe = described.back().result;
  const QueryResult& scan = scanned.back().result;
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

std::vector<Problem> CheckRecords(const std::vector<json>& records, const std::vector<TableColumn>& columns) {
  std::vector<Problem> problems;
  for (size_t i = 0; i < records.size(); ++i) {
    const json& record = records[i];
    if (!record.is_object()) {
      problems.push_back({i, "", "a record must be a JSON object"});
      continue;
    }
    for (const auto& [field, value] : record.items()) {
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

std::string ValueSql(const json& value, const std::string& type) {
  if (value.is_null()) return "CAST(NULL AS " + type + ")";
  if (value.is_boolean()) return value.get<bool>() ? "TRUE" : "FALSE";
  if (value.is_number()) return "CAST(" + value.dump() + " AS " + type + ")";
  if (value.is_string()) return "CAST(" + QuoteLiteral(value.get<std::string>()) + " AS " + type + ")";
  return "CAST(CAST(" + QuoteLiteral(value.dump()) + " AS JSON) AS " + type + ")";
}

// INSERT INTO `name` BY NAME the records, over the columns that are not generated.
std::string InsertSql(const TableName& name, const std::vector<json>& records,
                      const std::vector<TableColumn>& columns) {
  std::string values;
  std::string aliases;
  for (const TableColumn& column : columns) {
    if (column.generated) continue;
    aliases += (aliases.empty() ? "" : ", ") + QuoteIdentifier(column.name);
  }
  for (const json& record : records) {
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

// Answers the request; returns how it ended, for the audit log, with the rows appended in
// `appended`.
Status PostRecords(const HttpContext& context, const httplib::Request& request, httplib::Response& response,
                   const std::string& user, std::optional<int64_t>* appended) {
  auto fail = [&response](const Status& error) {
    SendError(response, error);
    return error;
  };
  if (request.has_param("deadLetterTable")) {
    return fail(Status::NotImplemented("deadLetterTable is not supported by the HTTP API yet"));
  }
  Result<TableName> name = ParseTableName(request.matches[1].str());
  if (!name.ok()) return fail(name.status());
  std::optional<std::string> app_id;
  if (request.has_header("Idempotency-Key")) {
    Result<std::string> id = TxnAppId(request.get_header_value("Idempotency-Key"));
    if (!id.ok()) return fail(id.status());
    app_id = *id;
  }
  Result<std::vector<json>> records = ParseRecords(request.body);
  if (!records.ok()) return fail(records.status());
  Result<std::unique_ptr<Session>> session = context.OpenSession(user);
  if (!session.ok()) return fail(session.status());
  Result<std::vector<TableColumn>> columns = Columns(**session, *name);
  if (!columns.ok()) return fail(columns.status());
  std::vector<Problem> problems = CheckRecords(*records, *columns);
  if (!problems.empty()) {
    SendProblems(response, problems);
    return Status::InvalidArgument(std::to_string(problems.size()) + " records do not fit the table");
  }
  if (app_id) {
    Status set =
        (*session)
            ->Execute("SET basin.txn_app_id = " + QuoteLiteral(*app_id) + "; SET basin.txn_version = 1")
            .status();
    if (!set.ok()) return fail(set);
  }
  Result<std::vector<StatementResult>> inserted = (*session)->Execute(InsertSql(*name, *records, *columns));
  if (!inserted.ok()) return fail(inserted.status());
  const StatementResult& result = inserted->back();
  // The write's row: version, num_affected_rows, num_inserted_rows. A write skipped by its
  // txn inserts nothing, which a request with records never does otherwise.
  const Row& row = result.result.rows.at(0);
  const bool skipped = row.at(1) == std::optional<std::string>("0");
  *appended = skipped ? 0 : static_cast<int64_t>(records->size());
  SendJson(response, 200,
           {{"table", request.matches[1].str()},
            {"version", CellJson("BIGINT", row.at(0))},
            {"records", records->size()},
            {"skipped", skipped},
            {"notices", result.notices}});
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
