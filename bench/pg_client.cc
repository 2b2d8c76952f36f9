#include "pg_client.h"

#include <libpq-fe.h>

#include <charconv>
#include <memory>

namespace basin::bench {
namespace {

struct ResultDeleter {
  void operator()(PGresult* result) const { PQclear(result); }
};
using ResultPtr = std::unique_ptr<PGresult, ResultDeleter>;

// Basin's code for a server's SQLSTATE (error_codes.h), so that Basin's errors keep theirs;
// Internal for the states the table does not hold.
ErrorCode CodeOfSqlstate(std::string_view sqlstate) {
  for (int code = static_cast<int>(ErrorCode::kInvalidArgument);
       code <= static_cast<int>(ErrorCode::kInternal); code++) {
    const ErrorCodeInfo& info = GetErrorCodeInfo(static_cast<ErrorCode>(code));
    if (info.sqlstate == sqlstate) return info.code;
  }
  return ErrorCode::kInternal;
}

// The rows of a successful `result`, or its error naming `what`.
Result<PgResult> TakeResult(ResultPtr result, pg_conn* conn, const std::string& what) {
  const ExecStatusType status = result ? PQresultStatus(result.get()) : PGRES_FATAL_ERROR;
  if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) {
    const char* sqlstate = result ? PQresultErrorField(result.get(), PG_DIAG_SQLSTATE) : nullptr;
    const std::string message = result ? PQresultErrorMessage(result.get()) : PQerrorMessage(conn);
    return Status(sqlstate ? CodeOfSqlstate(sqlstate) : ErrorCode::kIOError,
                  what + " failed (SQLSTATE " + (sqlstate ? sqlstate : "none") + "): " + message);
  }
  PgResult out;
  const int rows = PQntuples(result.get());
  const int columns = PQnfields(result.get());
  out.rows.reserve(rows);
  for (int r = 0; r < rows; r++) {
    auto& row = out.rows.emplace_back();
    for (int c = 0; c < columns; c++) {
      if (PQgetisnull(result.get(), r, c)) {
        row.emplace_back();
      } else {
        row.emplace_back(std::string(PQgetvalue(result.get(), r, c), PQgetlength(result.get(), r, c)));
      }
    }
  }
  const std::string_view affected = PQcmdTuples(result.get());
  std::from_chars(affected.data(), affected.data() + affected.size(), out.affected_rows);
  return out;
}

}  // namespace

Result<PgClient> PgClient::Connect(const std::string& conninfo) {
  pg_conn* conn = PQconnectdb(conninfo.c_str());
  if (conn == nullptr) return Status::IOError("libpq could not allocate a connection");
  PgClient client(conn);
  if (PQstatus(conn) != CONNECTION_OK) {
    return Status::IOError(std::string("cannot connect to ") + PQhost(conn) + ":" + PQport(conn) + ": " +
                           PQerrorMessage(conn));
  }
  return client;
}

PgClient::PgClient(PgClient&& other) noexcept : conn_(other.conn_) { other.conn_ = nullptr; }

PgClient& PgClient::operator=(PgClient&& other) noexcept {
  std::swap(conn_, other.conn_);
  return *this;
}

PgClient::~PgClient() {
  if (conn_ != nullptr) PQfinish(conn_);
}

Status PgClient::Prepare(const std::string& name, const std::string& sql,
                         const std::vector<uint32_t>& parameter_oids) {
  ResultPtr result(PQprepare(conn_, name.c_str(), sql.c_str(), static_cast<int>(parameter_oids.size()),
                             parameter_oids.data()));
  return TakeResult(std::move(result), conn_, "preparing " + sql).status();
}

Result<PgResult> PgClient::ExecutePrepared(const std::string& name,
                                           const std::vector<std::string>& parameters) {
  std::vector<const char*> values;
  values.reserve(parameters.size());
  for (const std::string& parameter : parameters) values.push_back(parameter.c_str());
  ResultPtr result(PQexecPrepared(conn_, name.c_str(), static_cast<int>(values.size()), values.data(),
                                  nullptr, nullptr, /*resultFormat=*/0));
  return TakeResult(std::move(result), conn_, "statement " + name);
}

Result<PgResult> PgClient::Execute(const std::string& sql) {
  return TakeResult(ResultPtr(PQexec(conn_, sql.c_str())), conn_, sql.substr(0, 80));
}

Result<std::string> PgClient::QueryValue(const std::string& sql) {
  ASSIGN_OR_RETURN(PgResult result, Execute(sql));
  if (result.rows.empty() || result.rows[0].empty() || !result.rows[0][0]) {
    return Status::InvalidArgument("expected a value from: " + sql);
  }
  return *result.rows[0][0];
}

bool PgAcceptsConnections(const std::string& conninfo) { return PQping(conninfo.c_str()) == PQPING_OK; }

}  // namespace basin::bench
