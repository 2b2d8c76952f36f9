#include "server/pg/pg_connection.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "basin/version.h"
#include "server/copy_lines.h"
#include "server/pg/scram.h"
#include "server/pg/types.h"
#include "sql/pg_settings.h"

namespace basin::server::pg {
namespace {

using StartupParameters = std::map<std::string, std::string>;

constexpr char kMechanism[] = "SCRAM-SHA-256";

// Commands whose result a PostgreSQL client expects as a command tag alone (Basin's writes
// answer with a row of figures, which becomes the tag's count).
bool TagOnly(const std::string& command) {
  return command == "INSERT" || command == "UPDATE" || command == "DELETE" || command == "MERGE" ||
         command == "SET" || command == "RESET" || command == "BEGIN" || command == "COMMIT" ||
         command == "ROLLBACK" || command == "GRANT" || command == "REVOKE" || command == "REVOKE TOKEN" ||
         command == "ATTACH" || command == "DETACH" || command == "LOAD" || command == "PREPARE" ||
         command == "COPY" || command.starts_with("CREATE") || command.starts_with("DROP") ||
         command.starts_with("ALTER");
}

bool Counted(const std::string& command) {
  return command == "INSERT" || command == "UPDATE" || command == "DELETE" || command == "MERGE" ||
         command == "COPY";
}

// A write's count: Basin's num_affected_rows, or DuckDB's Count.
std::optional<std::string> AffectedRows(const QueryResult& result) {
  if (result.rows.empty()) return std::nullopt;
  for (size_t c = 0; c < result.column_names.size(); c++) {
    if (result.column_names[c] == "num_affected_rows" || result.column_names[c] == "Count") {
      return result.rows[0][c];
    }
  }
  return std::nullopt;
}

std::string CommandTag(const std::string& command, std::optional<std::string> count) {
  if (command == "INSERT") return "INSERT 0 " + count.value_or("0");
  if (command == "SHOW") return command;
  if (Counted(command) || command == "SELECT") return command + " " + count.value_or("0");
  return command;
}

std::string ErrorMessage(char type, const std::string& severity, const std::string& sqlstate,
                         const std::string& message) {
  std::string out;
  MessageBuilder(type)
      .Int8('S')
      .String(severity)
      .Int8('V')
      .String(severity)
      .Int8('C')
      .String(sqlstate)
      .Int8('M')
      .String(message)
      .Int8('\0')
      .AppendTo(out);
  return out;
}

std::string SqlStateOf(const Status& status) { return std::string(GetErrorCodeInfo(status.code()).sqlstate); }

// ReadyForQuery, with the transaction status a client shows ('I' idle, 'T' in a block,
// 'E' in an aborted block).
std::string ReadyForQuery(TransactionStatus status) {
  const char byte = status == TransactionStatus::kInBlock   ? 'T'
                    : status == TransactionStatus::kAborted ? 'E'
                                                            : 'I';
  std::string out;
  MessageBuilder('Z').Int8(byte).AppendTo(out);
  return out;
}

std::string AuthenticationMessage(int32_t kind, std::string_view data) {
  std::string out;
  MessageBuilder('R').Int32(kind).Bytes(data).AppendTo(out);
  return out;
}

struct Column {
  std::string name;
  PgType type;
};

// Formats of a Bind's result columns: none (all text), one (all), or one per column.
int16_t FormatOf(const std::vector<int16_t>& formats, size_t column) {
  if (formats.empty()) return 0;
  if (formats.size() == 1) return formats[0];
  return column < formats.size() ? formats[column] : 0;
}

// The types of a statement's parameters (by number - 1; "" where the binder tells nothing)
// and its result columns (nullopt: NoData), as Session::Describe gives them.
void DescribeInto(Session& session, const std::string& text, std::vector<std::string>& inferred,
                  std::optional<std::vector<Column>>& columns) {
  // A statement the binder cannot bind yet, as a CREATE's, tells nothing.
  Result<StatementDescription> described = session.Describe(text);
  if (!described.ok()) return;
  for (size_t i = 0; i < described->parameter_types.size() && i < inferred.size(); i++) {
    inferred[i] = described->parameter_types[i];
  }
  if (described->columns_known && !TagOnly(described->command) && !described->column_names.empty()) {
    columns.emplace();
    for (size_t c = 0; c < described->column_names.size(); c++) {
      columns->push_back(Column{described->column_names[c], PgTypeOf(described->column_types[c])});
    }
  }
}

std::string RowDescription(const std::vector<Column>& columns, const std::vector<int16_t>& formats) {
  MessageBuilder fields('T');
  fields.Int16(static_cast<int16_t>(columns.size()));
  for (size_t c = 0; c < columns.size(); c++) {
    fields.String(columns[c].name)
        .Int32(0)
        .Int16(0)
        .Int32(static_cast<int32_t>(columns[c].type.oid))
        .Int16(columns[c].type.size)
        .Int32(-1)
        .Int16(FormatOf(formats, c));
  }
  std::string out;
  fields.AppendTo(out);
  return out;
}

}  // namespace

struct PgConnection::Portal {
  std::string sql;  // parameters bound
  std::vector<int16_t> result_formats;
  bool started = false;
  bool done = false;
  std::string command;
  std::vector<Column> columns;
  bool returns_rows = false;
  std::unique_ptr<RowStream> rows;  // while rows remain to be sent
  std::vector<Row> buffered;        // rows read but not sent (a row limit fell inside a chunk)
  QueryResult whole;                // rows of a statement Basin answered itself
  size_t whole_sent = 0;
  int64_t sent = 0;
  std::string tag;
  std::vector<std::string> notices;
  std::optional<CopyFormat> copy;    // COPY ... TO STDOUT: rows go as CopyData lines
  int64_t started_ms = 0;            // for the audit log
  ServerMetrics::Time started_at{};  // for the metrics
  std::optional<int64_t> affected;   // rows a write changed, when it tells
};

struct PgConnection::State {
  struct Prepared {
    std::string text;
    std::vector<int32_t> parameter_types;  // as the client gave them; 0: untyped
    std::vector<std::string> inferred;     // DuckDB types of the untyped ones, "" when unknown
    // What the session's Describe told (at Parse for untyped parameters, else at the
    // statement's first Describe): the RowDescription's columns when known; nullopt: NoData.
    bool described = false;
    std::optional<std::vector<Column>> columns;
  };
  std::map<std::string, Prepared> statements;
  std::map<std::string, Portal> portals;
  bool skipping_to_sync = false;  // an extended-protocol error: messages up to Sync are ignored
};

PgConnection::PgConnection(std::unique_ptr<Socket> socket, const ServerContext& context, int32_t process_id,
                           int32_t secret_key)
    : socket_(std::move(socket)),
      context_(context),
      process_id_(process_id),
      secret_key_(secret_key),
      state_(std::make_unique<State>()) {}

PgConnection::~PgConnection() = default;

void PgConnection::Cancel() {
  std::lock_guard<std::mutex> lock(session_mutex_);
  if (session_) session_->Interrupt();
}

void PgConnection::Close() {
  closing_ = true;
  Cancel();
  socket_->ShutdownReads();
}

namespace {

// The startup packet's parameters, after any SSLRequest (answered 'S' and followed by the
// TLS handshake when `tls` is set, else 'N'). nullopt for a CancelRequest, which has been
// passed to `cancel`.
Result<std::optional<StartupParameters>> ReadStartup(Socket& socket, const TlsContext* tls,
                                                     const std::function<void(int32_t, int32_t)>& cancel) {
  for (int attempts = 0; attempts < 3; attempts++) {
    ASSIGN_OR_RETURN(Message startup, ReadStartupPacket(socket));
    MessageReader reader(startup.body, "startup");
    ASSIGN_OR_RETURN(int32_t code, reader.Int32());
    if (code == kSslRequestCode && tls != nullptr && !socket.tls()) {
      RETURN_IF_ERROR(socket.WriteAll("S"));
      RETURN_IF_ERROR(socket.StartTls(*tls));
      continue;
    }
    if (code == kSslRequestCode || code == kGssEncRequestCode) {
      RETURN_IF_ERROR(socket.WriteAll("N"));
      continue;
    }
    if (code == kCancelRequestCode) {
      ASSIGN_OR_RETURN(int32_t process_id, reader.Int32());
      ASSIGN_OR_RETURN(int32_t secret_key, reader.Int32());
      if (cancel) cancel(process_id, secret_key);
      return std::optional<StartupParameters>();
    }
    if (code != kProtocolVersion3) {
      const std::string message = "unsupported frontend protocol " + std::to_string(code >> 16) + "." +
                                  std::to_string(code & 0xffff) + ": Basin speaks 3.0";
      (void)socket.WriteAll(ErrorMessage('E', "FATAL", "0A000", message));
      return Status::InvalidArgument(message);
    }
    StartupParameters parameters;
    while (reader.remaining() > 1) {
      ASSIGN_OR_RETURN(std::string name, reader.String());
      ASSIGN_OR_RETURN(std::string value, reader.String());
      parameters[name] = value;
    }
    return std::optional<StartupParameters>(std::move(parameters));
  }
  return Status::InvalidArgument("the client sent a third SSL request");
}

}  // namespace

void RefuseConnection(Socket& socket, const std::shared_ptr<const TlsContext>& tls,
                      const std::string& sqlstate, const std::string& message) {
  Result<std::optional<StartupParameters>> startup = ReadStartup(socket, tls.get(), nullptr);
  if (!startup.ok() || !*startup) return;
  (void)socket.WriteAll(ErrorMessage('E', "FATAL", sqlstate, message));
}

namespace {

// SCRAM-SHA-256 with `user`'s verifier; a user that does not exist goes through the same
// exchange with a verifier no password matches, so the answer does not tell who exists.
Status Authenticate(Socket& socket, const std::string& user_name, const std::optional<security::User>& user) {
  std::string mechanisms;
  MessageBuilder('R').Int32(10).String(kMechanism).Int8('\0').AppendTo(mechanisms);
  RETURN_IF_ERROR(socket.WriteAll(mechanisms));
  ASSIGN_OR_RETURN(Message initial, ReadMessage(socket));
  if (initial.type != 'p') return Status::InvalidArgument("expected a SASLInitialResponse");
  MessageReader reader(initial.body, "SASLInitialResponse");
  ASSIGN_OR_RETURN(std::string mechanism, reader.String());
  if (mechanism != kMechanism) {
    return Status::InvalidArgument("the client chose SASL mechanism " + mechanism + ", not " + kMechanism);
  }
  ASSIGN_OR_RETURN(int32_t length, reader.Int32());
  if (length < 0 || static_cast<size_t>(length) > reader.remaining()) {
    return Status::InvalidArgument("a SASLInitialResponse's length is out of range");
  }
  ASSIGN_OR_RETURN(std::string client_first, reader.Bytes(static_cast<size_t>(length)));

  ScramVerifier verifier;
  if (user) {
    ASSIGN_OR_RETURN(verifier, security::ParseScramVerifier(user->scram_verifier));
  } else {
    ASSIGN_OR_RETURN(verifier, security::MakeScramVerifier("no such user: " + user_name));
    verifier.stored_key.assign(verifier.stored_key.size(), '\0');  // matches no password
  }
  ScramExchange exchange(verifier);
  ASSIGN_OR_RETURN(std::string server_first, exchange.ServerFirst(client_first));
  RETURN_IF_ERROR(socket.WriteAll(AuthenticationMessage(11, server_first)));
  ASSIGN_OR_RETURN(Message response, ReadMessage(socket));
  if (response.type != 'p') return Status::InvalidArgument("expected a SASLResponse");
  Result<std::string> server_final = exchange.ServerFinal(response.body);
  if (!server_final.ok() || !user) {
    return Status::InvalidArgument("password authentication failed for user \"" + user_name + "\"");
  }
  RETURN_IF_ERROR(socket.WriteAll(AuthenticationMessage(12, *server_final)));
  return socket.WriteAll(AuthenticationMessage(0, ""));
}

}  // namespace

Status PgConnection::Serve() {
  Socket& socket = *socket_;
  ASSIGN_OR_RETURN(std::optional<StartupParameters> startup,
                   ReadStartup(socket, context_.tls.get(), context_.cancel));
  if (!startup) return Status::OK();  // a CancelRequest
  if (context_.tls_required && !socket.tls()) {
    const std::string message =
        "this server accepts TLS connections only: connect with sslmode=require (or verify-full)";
    (void)socket.WriteAll(ErrorMessage('E', "FATAL", "28000", message));
    return Status::InvalidArgument("refused a connection without TLS");
  }
  const std::string user_name = (*startup)["user"];
  client_address_ = PeerAddress(socket);
  const std::string database = startup->contains("database") ? (*startup)["database"] : user_name;
  if (database != context_.database) {
    const std::string message =
        "database \"" + database + "\" does not exist (this server's is \"" + context_.database + "\")";
    (void)socket.WriteAll(ErrorMessage('E', "FATAL", "3D000", message));
    return Status::NotFound(message);
  }
  ASSIGN_OR_RETURN(std::optional<security::User> user, context_.users->Find(user_name));
  const int64_t signing_in_ms = context_.audit ? context_.audit->now_ms() : 0;
  Status authenticated = Authenticate(socket, user_name, user);
  if (!authenticated.ok()) {
    (void)socket.WriteAll(ErrorMessage('E', "FATAL", "28P01", authenticated.message()));
    if (context_.audit) {
      context_.audit->Record({.at_ms = signing_in_ms,
                              .user = user_name,
                              .protocol = "pg",
                              .client_address = client_address_,
                              .statement = "sign-in",
                              .outcome = Status::Unauthenticated(authenticated.message()),
                              .duration_ms = context_.audit->now_ms() - signing_in_ms});
    }
    return authenticated;
  }
  user_name_ = user_name;

  SessionOptions options;
  options.warehouse = context_.warehouse;
  options.copy_to_caller = true;
  options.statement_timeout_ms = context_.statement_timeout_ms;
  options.user = user_name;  // its grants decide what each statement may do
  options.record_lineage = true;
  options.tables = context_.tables;
  Result<std::unique_ptr<Session>> opened = Session::Open(options);
  if (!opened.ok()) {
    (void)socket.WriteAll(ErrorMessage('E', "FATAL", SqlStateOf(opened.status()), opened.status().message()));
    return opened.status();
  }
  {
    std::lock_guard<std::mutex> lock(session_mutex_);
    session_ = std::move(*opened);
  }

  std::string hello;
  // As SHOW answers them (sql/pg_settings.h), and the connection's own.
  std::vector<std::pair<std::string, std::string>> parameters = sql::PgReportedSettings();
  parameters.insert(parameters.end(), {
                                          {"TimeZone", "UTC"},  // every session starts in UTC
                                          {"is_superuser", user->admin ? "on" : "off"},
                                          {"session_authorization", user_name},
                                          {"application_name", (*startup)["application_name"]},
                                      });
  for (const auto& [name, value] : parameters) MessageBuilder('S').String(name).String(value).AppendTo(hello);
  MessageBuilder('K').Int32(process_id_).Int32(secret_key_).AppendTo(hello);
  hello += ReadyForQuery(TransactionStatus::kIdle);
  RETURN_IF_ERROR(socket.WriteAll(hello));

  for (;;) {
    Result<Message> read = ReadMessage(socket);
    if (!read.ok() && closing_) {
      (void)socket.WriteAll(
          ErrorMessage('E', "FATAL", "57P01", "terminating connection due to administrator command"));
      return Status::OK();
    }
    RETURN_IF_ERROR(read.status());
    const Message& message = *read;
    if (message.type == 'X') return Status::OK();
    Status handled = Handle(message);
    if (!handled.ok()) {
      out_.clear();
      (void)socket.WriteAll(ErrorMessage('E', "FATAL", "08P01", handled.message()));
      return handled;
    }
  }
}

Status PgConnection::Send(const std::string& bytes) {
  constexpr size_t kFlushBytes = 256 << 10;
  out_ += bytes;
  return out_.size() >= kFlushBytes ? Flush() : Status::OK();
}

Status PgConnection::Flush() {
  Status written = socket_->WriteAll(out_);
  out_.clear();
  return written;
}

Status PgConnection::Fail(Portal& portal, const Status& status) {
  portal.done = true;
  RecordEnd(portal, status, std::nullopt);
  return SendError(status);
}

void PgConnection::RecordEnd(const Portal& portal, const Status& outcome, std::optional<int64_t> rows) {
  if (context_.metrics) context_.metrics->RecordQuery(Protocol::kPg, outcome, portal.started_at);
  if (!context_.audit) return;
  const int64_t now_ms = context_.audit->now_ms();
  context_.audit->Record({.at_ms = portal.started_ms,
                          .user = user_name_,
                          .protocol = "pg",
                          .client_address = client_address_,
                          .statement = portal.sql,
                          .outcome = outcome,
                          .rows = rows,
                          .duration_ms = now_ms - portal.started_ms});
}

Status PgConnection::SendError(const Status& status) {
  state_->skipping_to_sync = true;  // (cleared at once after a simple query)
  return Send(ErrorMessage('E', "ERROR", SqlStateOf(status), status.message()));
}

Status PgConnection::Handle(const Message& message) {
  State& state = *state_;
  if (state.skipping_to_sync && message.type != 'S') return Status::OK();
  switch (message.type) {
    case 'Q': {
      MessageReader reader(message.body, "Query");
      ASSIGN_OR_RETURN(std::string text, reader.String());
      state.portals.erase("");
      RETURN_IF_ERROR(SimpleQuery(text));
      state.skipping_to_sync = false;  // an error ends a simple query's message, nothing after it
      RETURN_IF_ERROR(Send(ReadyForQuery(session_->transaction_status())));
      return Flush();
    }
    case 'P':
      return Parse(message);
    case 'B':
      return Bind(message);
    case 'D':
      return Describe(message);
    case 'E':
      return Execute(message);
    case 'C':
      return ClosePrepared(message);
    case 'H':
      return Flush();
    case 'S': {
      state.skipping_to_sync = false;
      state.portals.erase("");
      RETURN_IF_ERROR(Send(ReadyForQuery(session_->transaction_status())));
      return Flush();
    }
    case 'd':
    case 'c':
    case 'f':
      return Status::OK();  // COPY FROM STDIN data after its refusal
    default:
      return Status::InvalidArgument(std::string("unexpected message type '") + message.type + "'");
  }
}

Status PgConnection::SimpleQuery(const std::string& text) {
  const std::vector<StatementText> statements = SplitStatements(text);
  if (statements.empty()) {
    std::string empty;
    MessageBuilder('I').AppendTo(empty);
    return Send(empty);
  }
  for (const StatementText& statement : statements) {
    Portal portal;
    portal.sql = statement.text;
    RETURN_IF_ERROR(Start(portal, /*describe=*/true));
    if (portal.done && !portal.tag.empty()) continue;
    if (portal.done) return Status::OK();  // failed: the rest of the query is not run
    RETURN_IF_ERROR(SendRows(portal, 0));
    if (!portal.done) return Status::OK();  // failed while its rows were read
  }
  return Status::OK();
}

Status PgConnection::Start(Portal& portal, bool describe) {
  if (!portal.started) {
    portal.started = true;
    // One statement's rows stream at a time: another portal's are dropped.
    for (auto& [name, other] : state_->portals) {
      if (&other != &portal && other.rows) {
        other.rows.reset();
        other.done = true;
      }
    }
    StatementText statement;
    statement.text = portal.sql;
    if (context_.audit) portal.started_ms = context_.audit->now_ms();
    portal.started_at = ServerMetrics::Now();
    Result<StatementResult> result = session_->ExecuteStatement(portal.sql, statement, /*stream=*/true);
    if (!result.ok()) return Fail(portal, result.status());
    portal.command = result->command;
    portal.notices = std::move(result->notices);
    portal.copy = result->copy_out;
    if (TagOnly(portal.command) && !portal.copy) {
      if (result->rows) {
        // Basin answered with its row of figures, streamed: read it for the count.
        std::vector<Row> rows;
        Result<bool> more = result->rows->Next(&rows);
        if (!more.ok()) return Fail(portal, more.status());
        result->result.column_names = result->rows->column_names();
        result->result.rows = std::move(rows);
        result->rows.reset();
      }
      const std::optional<std::string> affected =
          Counted(portal.command) ? AffectedRows(result->result) : std::nullopt;
      if (affected) portal.affected = std::stoll(*affected);
      portal.tag = CommandTag(portal.command, affected);
    } else {
      portal.returns_rows = !portal.copy;  // a COPY is described as NoData
      const std::vector<std::string>& names =
          result->rows ? result->rows->column_names() : result->result.column_names;
      const std::vector<std::string>& types =
          result->rows ? result->rows->column_types() : result->result.column_types;
      for (size_t c = 0; c < names.size(); c++)
        portal.columns.push_back(Column{names[c], PgTypeOf(types[c])});
      portal.rows = std::move(result->rows);
      portal.whole = std::move(result->result);
    }
    for (const std::string& notice : portal.notices) {
      RETURN_IF_ERROR(Send(ErrorMessage('N', "NOTICE", "00000", notice)));
    }
  }
  if (!describe) return Status::OK();
  if (!portal.returns_rows) {
    std::string no_data;
    MessageBuilder('n').AppendTo(no_data);
    return Send(no_data);
  }
  return Send(RowDescription(portal.columns, portal.result_formats));
}

Status PgConnection::SendRows(Portal& portal, int64_t max_rows) {
  auto complete = [&]() {
    std::string message;
    MessageBuilder('C').String(portal.tag).AppendTo(message);
    return Send(message);
  };
  if (portal.done && !portal.tag.empty()) return complete();
  if (!portal.returns_rows && !portal.copy) {
    portal.done = true;
    RecordEnd(portal, Status::OK(), portal.affected);
    return complete();
  }
  if (portal.copy) {
    max_rows = 0;  // a COPY runs whole, as in PostgreSQL
    if (portal.sent == 0) RETURN_IF_ERROR(StartCopyOut(portal));
  }
  int64_t sent_now = 0;
  auto send_row = [&](Row& row) -> Status {
    for (size_t c = 0; c < row.size(); c++) {
      if (row[c]) *row[c] = ToPgText(portal.columns[c].type, std::move(*row[c]));
    }
    std::string bytes;
    if (portal.copy) {
      MessageBuilder('d').Bytes(CopyLine(*portal.copy, row)).AppendTo(bytes);
    } else {
      ASSIGN_OR_RETURN(bytes, DataRow(portal, row));
    }
    portal.sent++;
    sent_now++;
    return Send(bytes);
  };
  auto fail = [&](const Status& status) {
    portal.rows.reset();
    return Fail(portal, status);
  };
  for (;;) {
    if (max_rows > 0 && sent_now >= max_rows) {
      std::string suspended;
      MessageBuilder('s').AppendTo(suspended);
      return Send(suspended);
    }
    if (portal.whole_sent < portal.whole.rows.size()) {
      Status sent = send_row(portal.whole.rows[portal.whole_sent++]);
      if (!sent.ok()) return fail(sent);
      continue;
    }
    if (!portal.buffered.empty()) {
      Row row = std::move(portal.buffered.front());
      portal.buffered.erase(portal.buffered.begin());
      Status sent = send_row(row);
      if (!sent.ok()) return fail(sent);
      continue;
    }
    if (!portal.rows) break;
    std::vector<Row> chunk;
    Result<bool> more = portal.rows->Next(&chunk);
    if (!more.ok()) return fail(more.status());
    if (!*more) {
      portal.rows.reset();
      break;
    }
    portal.buffered = std::move(chunk);
  }
  portal.done = true;
  if (portal.copy) {
    std::string done;
    MessageBuilder('c').AppendTo(done);
    RETURN_IF_ERROR(Send(done));
    portal.tag = CommandTag("COPY", std::to_string(portal.sent));
  } else {
    const bool query = portal.command == "SELECT" || (!TagOnly(portal.command) && portal.command != "SHOW");
    portal.tag = CommandTag(query ? "SELECT" : portal.command, std::to_string(portal.sent));
  }
  RecordEnd(portal, Status::OK(), portal.sent);
  return complete();
}

Status PgConnection::StartCopyOut(Portal& portal) {
  // CopyOutResponse: textual, every column in text format.
  MessageBuilder response('H');
  response.Int8('\0').Int16(static_cast<int16_t>(portal.columns.size()));
  for (size_t c = 0; c < portal.columns.size(); c++) response.Int16(0);
  std::string bytes;
  response.AppendTo(bytes);
  if (portal.copy->header) {
    std::vector<std::string> names;
    for (const Column& column : portal.columns) names.push_back(column.name);
    MessageBuilder('d').Bytes(CopyHeaderLine(*portal.copy, names)).AppendTo(bytes);
  }
  return Send(bytes);
}

Result<std::string> PgConnection::DataRow(const Portal& portal, Row& row) const {
  MessageBuilder data('D');
  data.Int16(static_cast<int16_t>(row.size()));
  for (size_t c = 0; c < row.size(); c++) {
    if (!row[c]) {
      data.Int32(-1);
      continue;
    }
    if (FormatOf(portal.result_formats, c) == 1) {
      Result<std::string> binary = ToPgBinary(portal.columns[c].type, *row[c]);
      if (!binary.ok()) return binary.status().WithContext("column " + portal.columns[c].name);
      *row[c] = std::move(*binary);
    }
    data.Int32(static_cast<int32_t>(row[c]->size())).Bytes(*row[c]);
  }
  std::string bytes;
  data.AppendTo(bytes);
  return bytes;
}

Status PgConnection::Parse(const Message& message) {
  MessageReader reader(message.body, "Parse");
  ASSIGN_OR_RETURN(std::string name, reader.String());
  ASSIGN_OR_RETURN(std::string text, reader.String());
  ASSIGN_OR_RETURN(int16_t count, reader.Int16());
  if (count < 0) return Status::InvalidArgument("a Parse message's parameter count is negative");
  State::Prepared prepared;
  prepared.text = text;
  for (int16_t i = 0; i < count; i++) {
    ASSIGN_OR_RETURN(int32_t oid, reader.Int32());
    prepared.parameter_types.push_back(oid);
  }
  if (SplitStatements(text).size() > 1) {
    return SendError(Status::InvalidArgument("cannot insert multiple commands into a prepared statement"));
  }
  Result<StatementParameters> parameters = FindParameters(text);
  if (!parameters.ok()) {
    return SendError(parameters.status());
  }
  if (prepared.parameter_types.size() < static_cast<size_t>(parameters->count)) {
    prepared.parameter_types.resize(parameters->count, 0);
  }
  prepared.inferred.assign(prepared.parameter_types.size(), "");
  // Untyped parameters need the binder's types before Bind; otherwise the statement is
  // prepared again only if a client asks for its Describe.
  if (std::find(prepared.parameter_types.begin(), prepared.parameter_types.end(), 0) !=
      prepared.parameter_types.end()) {
    DescribeInto(*session_, text, prepared.inferred, prepared.columns);
    prepared.described = true;
  }
  if (!name.empty() && state_->statements.contains(name)) {
    return SendError(Status::AlreadyExists("prepared statement \"" + name + "\" already exists"));
  }
  state_->statements[name] = std::move(prepared);
  std::string complete;
  MessageBuilder('1').AppendTo(complete);
  return Send(complete);
}

Status PgConnection::Bind(const Message& message) {
  MessageReader reader(message.body, "Bind");
  ASSIGN_OR_RETURN(std::string portal_name, reader.String());
  ASSIGN_OR_RETURN(std::string statement_name, reader.String());
  ASSIGN_OR_RETURN(int16_t format_count, reader.Int16());
  std::vector<int16_t> formats;
  for (int16_t i = 0; i < format_count; i++) {
    ASSIGN_OR_RETURN(int16_t format, reader.Int16());
    formats.push_back(format);
  }
  ASSIGN_OR_RETURN(int16_t value_count, reader.Int16());
  std::vector<std::optional<std::string>> values;
  for (int16_t i = 0; i < value_count; i++) {
    ASSIGN_OR_RETURN(int32_t length, reader.Int32());
    if (length < 0) {
      values.emplace_back();
      continue;
    }
    ASSIGN_OR_RETURN(std::string value, reader.Bytes(static_cast<size_t>(length)));
    values.emplace_back(std::move(value));
  }
  ASSIGN_OR_RETURN(int16_t result_format_count, reader.Int16());
  Portal portal;
  for (int16_t i = 0; i < result_format_count; i++) {
    ASSIGN_OR_RETURN(int16_t format, reader.Int16());
    portal.result_formats.push_back(format);
  }
  auto statement = state_->statements.find(statement_name);
  if (statement == state_->statements.end()) {
    return SendError(Status::NotFound("prepared statement \"" + statement_name + "\" does not exist"));
  }
  const std::vector<int32_t>& types = statement->second.parameter_types;
  if (values.size() != types.size()) {
    return SendError(Status::InvalidArgument("bind message supplies " + std::to_string(values.size()) +
                                             " parameters, but prepared statement \"" + statement_name +
                                             "\" requires " + std::to_string(types.size())));
  }
  std::vector<std::string> literals;
  for (size_t i = 0; i < values.size(); i++) {
    const bool binary = FormatOf(formats, i) == 1;
    Result<std::string> literal =
        ParameterLiteral(types[i], values[i], binary, statement->second.inferred[i]);
    if (!literal.ok()) {
      return SendError(literal.status().WithContext("parameter $" + std::to_string(i + 1)));
    }
    literals.push_back(std::move(*literal));
  }
  Result<std::string> sql = BindParameters(statement->second.text, literals);
  if (!sql.ok()) {
    return SendError(sql.status());
  }
  portal.sql = std::move(*sql);
  state_->portals.erase(portal_name);
  state_->portals.emplace(portal_name, std::move(portal));
  std::string complete;
  MessageBuilder('2').AppendTo(complete);
  return Send(complete);
}

Status PgConnection::Describe(const Message& message) {
  MessageReader reader(message.body, "Describe");
  ASSIGN_OR_RETURN(std::string kind, reader.Bytes(1));
  ASSIGN_OR_RETURN(std::string name, reader.String());
  if (kind == "S") {
    auto statement = state_->statements.find(name);
    if (statement == state_->statements.end()) {
      return SendError(Status::NotFound("prepared statement \"" + name + "\" does not exist"));
    }
    MessageBuilder parameters('t');
    parameters.Int16(static_cast<int16_t>(statement->second.parameter_types.size()));
    State::Prepared& prepared = statement->second;
    if (!prepared.described) {
      DescribeInto(*session_, prepared.text, prepared.inferred, prepared.columns);
      prepared.described = true;
    }
    for (size_t i = 0; i < prepared.parameter_types.size(); i++) {
      const int32_t oid = prepared.parameter_types[i];
      const int32_t inferred = prepared.inferred[i].empty()
                                   ? static_cast<int32_t>(Oid::kText)
                                   : static_cast<int32_t>(PgTypeOf(prepared.inferred[i]).oid);
      parameters.Int32(oid == 0 ? inferred : oid);
    }
    std::string out;
    parameters.AppendTo(out);
    if (prepared.columns) {
      out += RowDescription(*prepared.columns, {});
    } else {
      // Statements without rows, and Basin's own, whose columns are known once they run.
      MessageBuilder('n').AppendTo(out);
    }
    return Send(out);
  }
  if (kind != "P") return Status::InvalidArgument("Describe of '" + kind + "': expected 'S' or 'P'");
  auto portal = state_->portals.find(name);
  if (portal == state_->portals.end()) {
    return SendError(Status::NotFound("portal \"" + name + "\" does not exist"));
  }
  return Start(portal->second, /*describe=*/true);
}

Status PgConnection::Execute(const Message& message) {
  MessageReader reader(message.body, "Execute");
  ASSIGN_OR_RETURN(std::string name, reader.String());
  ASSIGN_OR_RETURN(int32_t max_rows, reader.Int32());
  auto portal = state_->portals.find(name);
  if (portal == state_->portals.end()) {
    return SendError(Status::NotFound("portal \"" + name + "\" does not exist"));
  }
  RETURN_IF_ERROR(Start(portal->second, /*describe=*/false));
  if (portal->second.done && portal->second.tag.empty()) return Status::OK();  // it failed
  return SendRows(portal->second, max_rows);
}

Status PgConnection::ClosePrepared(const Message& message) {
  MessageReader reader(message.body, "Close");
  ASSIGN_OR_RETURN(std::string kind, reader.Bytes(1));
  ASSIGN_OR_RETURN(std::string name, reader.String());
  if (kind == "S") {
    state_->statements.erase(name);
  } else if (kind == "P") {
    state_->portals.erase(name);
  } else {
    return Status::InvalidArgument("Close of '" + kind + "': expected 'S' or 'P'");
  }
  std::string complete;
  MessageBuilder('3').AppendTo(complete);
  return Send(complete);
}

}  // namespace basin::server::pg
