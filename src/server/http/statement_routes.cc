#include "server/http/statement_routes.h"

#include <nlohmann/json.hpp>

#include "common/strings.h"
#include "server/copy_lines.h"
#include "server/http/result_encoding.h"
#include "server/http/statement_registry.h"

namespace basin::server::http {
namespace {

using json = nlohmann::json;

constexpr char kStatementsPath[] = "/api/v1/statements";
constexpr std::string_view kParquetType = "application/vnd.apache.parquet";
constexpr size_t kParquetChunkBytes = size_t{1} << 20;

// CSV results: a header line, NULL as an empty field, an empty string as "", lines ending
// in LF (as DuckDB's and PostgreSQL's COPY write them).
const CopyFormat kCsv{.kind = CopyFormat::Kind::kCsv, .delimiter = ',', .null_string = ""};

// What a POST asks.
struct StatementRequest {
  std::string text;  // parameters bound
  bool wait = true;
  int64_t page_size = 0;
};

// A JSON parameter as a SQL literal.
std::string ParameterLiteral(const json& value) {
  if (value.is_null()) return "NULL";
  if (value.is_boolean()) return value.get<bool>() ? "TRUE" : "FALSE";
  if (value.is_number()) return value.dump();
  if (value.is_string()) return QuoteLiteral(value.get<std::string>());
  return QuoteLiteral(value.dump());  // an array or object: its JSON text
}

Result<int64_t> PositiveInteger(const json& value, const std::string& what, int64_t max) {
  if (!value.is_number_integer() || value.get<int64_t>() < 1 || value.get<int64_t>() > max) {
    return Status::InvalidArgument(what + " must be an integer from 1 to " + std::to_string(max));
  }
  return value.get<int64_t>();
}

Result<StatementRequest> ParseStatementRequest(const httplib::Request& request, const HttpLimits& limits) {
  json body = json::parse(request.body, nullptr, /*allow_exceptions=*/false);
  if (!body.is_object() || !body.contains("statement") || !body["statement"].is_string()) {
    return Status::InvalidArgument("the body must be a JSON object with a \"statement\" string");
  }
  StatementRequest parsed;
  parsed.text = body["statement"].get<std::string>();
  if (static_cast<int64_t>(parsed.text.size()) > limits.max_statement_bytes) {
    return Status::InvalidArgument("the statement has " + std::to_string(parsed.text.size()) +
                                   " bytes, more than the limit of " +
                                   std::to_string(limits.max_statement_bytes));
  }
  if (body.contains("parameters")) {
    if (!body["parameters"].is_array()) return Status::InvalidArgument("\"parameters\" must be an array");
    std::vector<std::string> literals;
    for (const json& value : body["parameters"]) literals.push_back(ParameterLiteral(value));
    ASSIGN_OR_RETURN(StatementParameters found, FindParameters(parsed.text));
    if (static_cast<size_t>(found.count) != literals.size()) {
      return Status::InvalidArgument("the statement has " + std::to_string(found.count) + " parameters, " +
                                     std::to_string(literals.size()) + " were given");
    }
    ASSIGN_OR_RETURN(parsed.text, BindParameters(parsed.text, literals));
  }
  if (body.contains("wait")) {
    if (!body["wait"].is_boolean()) return Status::InvalidArgument("\"wait\" must be true or false");
    parsed.wait = body["wait"].get<bool>();
  }
  parsed.page_size = limits.page_size;
  if (body.contains("page_size")) {
    ASSIGN_OR_RETURN(parsed.page_size,
                     PositiveInteger(body["page_size"], "\"page_size\"", limits.max_page_size));
  }
  return parsed;
}

std::string StatementPath(const Statement& statement) {
  return std::string(kStatementsPath) + "/" + statement.id();
}

json RunningJson(const Statement& statement) {
  return {{"statement_id", statement.id()}, {"status", "RUNNING"}, {"next", StatementPath(statement)}};
}

// A page of `statement`'s result; the statement is dropped once its last page is read.
void SendPage(httplib::Response& response, const HttpContext& context, const Statement& statement,
              const Page& page) {
  const std::vector<std::string>& types = statement.column_types();
  json rows = json::array();
  for (const Row& row : page.rows) {
    json cells = json::array();
    for (size_t i = 0; i < row.size(); ++i) cells.push_back(CellJson(types[i], row[i]));
    rows.push_back(std::move(cells));
  }
  json body = {{"statement_id", statement.id()},
               {"status", "FINISHED"},
               {"command", statement.result().command},
               {"columns", ColumnsJson(statement.column_names(), types)},
               {"rows", std::move(rows)},
               {"row_count", page.rows.size()},
               {"page", page.index},
               {"notices", statement.result().notices}};
  if (page.has_more) {
    body["next"] = StatementPath(statement) + "?page=" + std::to_string(page.index + 1);
  } else {
    context.statements->Remove(statement.id());
  }
  SendJson(response, 200, body);
}

// Answers with what Run() gave: its first page or its error.
void SendOutcome(httplib::Response& response, const HttpContext& context, Statement& statement) {
  Statement::Outcome outcome = statement.outcome();
  if (!outcome.status.ok()) {
    context.statements->Remove(statement.id());
    SendError(response, outcome.status);
    return;
  }
  if (!outcome.first_page) {
    SendError(response, Status::InvalidArgument("page 0 of statement " + statement.id() +
                                                " was followed by others; read the next with ?page=n"));
    return;
  }
  SendPage(response, context, statement, *outcome.first_page);
}

// The whole result as CSV, streamed with chunked transfer: a header line, then the rows.
void SendCsv(httplib::Response& response, const HttpContext& context, std::shared_ptr<Statement> statement) {
  response.status = 200;
  response.set_header("X-Basin-Statement-Id", statement->id());
  auto header_sent = std::make_shared<bool>(false);
  response.set_chunked_content_provider(
      "text/csv; charset=utf-8",
      [statement, header_sent](size_t, httplib::DataSink& sink) {
        std::string text;
        if (!*header_sent) {
          *header_sent = true;
          const std::vector<std::string>& names = statement->column_names();
          text = CopyHeaderLine(kCsv, names);
        }
        std::vector<Row> rows;
        Result<bool> more = statement->NextRows(&rows);
        // An error after the header can only end the response: the client sees a
        // chunked body without its last chunk.
        if (!more.ok()) return false;
        for (const Row& row : rows) text += CopyLine(kCsv, row);
        if (!text.empty() && !sink.write(text.data(), text.size())) return false;
        if (!*more) sink.done();
        return true;
      },
      [&context, id = statement->id()](bool) { context.statements->Remove(id); });
}

// The Parquet file `key` of the scratch store, streamed as it is read; deleted once sent (or
// once the client has gone).
void SendParquet(httplib::Response& response, const HttpContext& context, const Statement& statement,
                 const std::string& key) {
  Result<std::unique_ptr<ReadableObject>> opened = context.scratch->OpenRead(key);
  if (!opened.ok()) {
    (void)context.scratch->Delete(key);
    return SendError(response, opened.status().WithContext("the Parquet result"));
  }
  std::shared_ptr<ReadableObject> file = std::move(*opened);
  response.status = 200;
  response.set_header("X-Basin-Statement-Id", statement.id());
  response.set_header("X-Basin-Row-Count", std::to_string(statement.result().parquet_rows.value_or(0)));
  response.set_content_provider(
      file->size_bytes(), std::string(kParquetType),
      [file](size_t offset, size_t length, httplib::DataSink& sink) {
        std::string chunk(std::min(length, kParquetChunkBytes), '\0');
        // A read error can only end the response short of its Content-Length.
        if (!file->ReadAt(offset, chunk.size(), chunk.data()).ok()) return false;
        return sink.write(chunk.data(), chunk.size());
      },
      [scratch = context.scratch, key](bool) { (void)scratch->Delete(key); });
}

bool AcceptsCsv(const httplib::Request& request) {
  return request.get_header_value("Accept").find("text/csv") != std::string::npos;
}

bool AcceptsParquet(const httplib::Request& request) {
  const std::string accept = request.get_header_value("Accept");
  return accept.find(kParquetType) != std::string::npos ||
         accept.find("application/x-parquet") != std::string::npos;
}

// Runs the statement with a query's rows written to a Parquet file of the scratch store, and
// answers that file; a statement that is not a query answers its first page as JSON.
void RunToParquet(const HttpContext& context, httplib::Response& response,
                  std::shared_ptr<Statement> statement, const std::string& text,
                  const std::function<void(const Status&)>& audit) {
  const std::string key = "result-" + statement->id() + ".parquet";
  Status executed = statement->ExecuteToParquet(text, context.scratch, key);
  audit(executed);
  if (!executed.ok()) {
    (void)context.scratch->Delete(key);
    context.statements->Remove(statement->id());
    return SendError(response, executed);
  }
  if (!statement->result().parquet_rows) {
    Result<Page> page = statement->ReadPage(0);
    if (!page.ok()) {
      context.statements->Remove(statement->id());
      return SendError(response, page.status());
    }
    return SendPage(response, context, *statement, *page);
  }
  // The file holds the whole result: the statement's session is no longer needed.
  context.statements->Remove(statement->id());
  SendParquet(response, context, *statement, key);
}

void PostStatement(const HttpContext& context, const httplib::Request& request, httplib::Response& response,
                   const std::string& user) {
  Result<StatementRequest> parsed = ParseStatementRequest(request, context.limits);
  if (!parsed.ok()) return SendError(response, parsed.status());
  Result<std::unique_ptr<Session>> session = context.OpenSession(user);
  if (!session.ok()) return SendError(response, session.status());
  Result<std::shared_ptr<Statement>> added =
      context.statements->Add(user, std::move(*session), parsed->page_size);
  if (!added.ok()) return SendError(response, added.status());
  std::shared_ptr<Statement> statement = *added;
  // Written and counted once the statement has run (its rows may be read later).
  auto audit = [&context, &request, &user, text = parsed->text, started_ms = context.clock->NowMs(),
                started = ServerMetrics::Now()](const Status& outcome) {
    context.Audit(request.remote_addr, user, text, started_ms, outcome);
    context.metrics->RecordQuery(Protocol::kHttp, outcome, started);
  };
  if (AcceptsParquet(request)) return RunToParquet(context, response, statement, parsed->text, audit);
  if (AcceptsCsv(request)) {
    Status executed = statement->Execute(parsed->text);
    audit(executed);
    if (!executed.ok()) {
      context.statements->Remove(statement->id());
      return SendError(response, executed);
    }
    return SendCsv(response, context, statement);
  }
  if (!parsed->wait) {
    // The request is gone when the statement ends: what the audit needs is copied.
    Status started = context.statements->RunInBackground(
        [&context, statement, text = parsed->text, started_ms = context.clock->NowMs(),
         started = ServerMetrics::Now(), client = request.remote_addr, user] {
          statement->Run(text);
          context.Audit(client, user, text, started_ms, statement->outcome().status);
          context.metrics->RecordQuery(Protocol::kHttp, statement->outcome().status, started);
        });
    if (!started.ok()) {
      context.statements->Remove(statement->id());
      return SendError(response, started);
    }
    return SendJson(response, 202, RunningJson(*statement));
  }
  statement->Run(parsed->text);
  audit(statement->outcome().status);
  SendOutcome(response, context, *statement);
}

void GetStatement(const HttpContext& context, const httplib::Request& request, httplib::Response& response,
                  const std::string& user) {
  Result<std::shared_ptr<Statement>> statement = context.statements->Find(request.matches[1], user);
  if (!statement.ok()) return SendError(response, statement.status());
  if ((*statement)->running()) return SendJson(response, 200, RunningJson(**statement));
  int64_t page = 0;
  if (request.has_param("page")) {
    json number = json::parse(request.get_param_value("page"), nullptr, /*allow_exceptions=*/false);
    if (!number.is_number_unsigned())
      return SendError(response, Status::InvalidArgument("?page= must be a number"));
    page = number.get<int64_t>();
  }
  if (page == 0) return SendOutcome(response, context, **statement);
  Result<Page> read = (*statement)->ReadPage(page);
  if (!read.ok()) {
    // A page out of order leaves the cursor as it was; any other error ends the statement.
    if (read.status().code() != ErrorCode::kInvalidArgument) context.statements->Remove((*statement)->id());
    return SendError(response, read.status());
  }
  SendPage(response, context, **statement, *read);
}

void DeleteStatement(const HttpContext& context, const httplib::Request& request, httplib::Response& response,
                     const std::string& user) {
  Result<std::shared_ptr<Statement>> statement = context.statements->Find(request.matches[1], user);
  if (!statement.ok()) return SendError(response, statement.status());
  const bool was_running = (*statement)->running();
  (*statement)->Interrupt();
  context.statements->Remove((*statement)->id());
  SendJson(response, 200,
           {{"statement_id", (*statement)->id()}, {"status", was_running ? "CANCELLED" : "CLOSED"}});
}

}  // namespace

void AddStatementRoutes(httplib::Server& server, const HttpContext& context) {
  const std::string one = std::string(kStatementsPath) + "/([0-9a-f]{16})";
  server.Post(kStatementsPath,
              WithUser(context, [&context](const auto& request, auto& response, const auto& user) {
                PostStatement(context, request, response, user);
              }));
  server.Get(one, WithUser(context, [&context](const auto& request, auto& response, const auto& user) {
               GetStatement(context, request, response, user);
             }));
  server.Delete(one, WithUser(context, [&context](const auto& request, auto& response, const auto& user) {
                  DeleteStatement(context, request, response, user);
                }));
}

}  // namespace basin::server::http
