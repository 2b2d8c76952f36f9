// basin::Transaction (include/basin/transaction.h): an append through commands::Write, on
// a session of its own, as INSERT INTO runs it (sql/write_statements.cc).
#include "basin/transaction.h"

#include <utility>

#include "api/state.h"
#include "commands/write.h"
#include "sql/session_context.h"

namespace basin {

struct Transaction::Impl {
  std::unique_ptr<sql::Session> session;
  std::string table;     // "schema.table", or the location, for messages
  std::string location;  // the table's
  std::vector<std::string> queries;
  std::optional<delta::SetTransaction> txn_id;
  bool committed = false;
};

Transaction::Transaction(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Transaction::Transaction(Transaction&&) noexcept = default;
Transaction& Transaction::operator=(Transaction&&) noexcept = default;
Transaction::~Transaction() = default;

Result<Transaction> Table::BeginTransaction() const {
  auto impl = std::make_unique<Transaction::Impl>();
  ASSIGN_OR_RETURN(impl->session, api::OpenSqlSession(impl_->warehouse->location, /*data_skipping=*/true));
  impl->table = impl_->name.empty() ? impl_->location : impl_->name;
  impl->location = impl_->location;
  return Transaction(std::move(impl));
}

Status Transaction::Append(const std::string& query_sql) {
  if (impl_->committed)
    return Status::InvalidArgument("transaction on " + impl_->table + " already committed");
  // Binding the query finds missing tables and columns now, without reading its rows.
  auto described = impl_->session->context().conn().DescribeQuery(query_sql);
  if (!described.ok()) return described.status().WithContext("append to " + impl_->table);
  impl_->queries.push_back(query_sql);
  return Status::OK();
}

Status Transaction::SetTxn(const std::string& app_id, int64_t version) {
  if (impl_->committed)
    return Status::InvalidArgument("transaction on " + impl_->table + " already committed");
  if (app_id.empty()) return Status::InvalidArgument("a txn app id must not be empty");
  if (version < 0) {
    return Status::InvalidArgument("txn version must be non-negative, got " + std::to_string(version));
  }
  impl_->txn_id = delta::SetTransaction{app_id, version, std::nullopt};
  return Status::OK();
}

Result<CommitResult> Transaction::Commit() {
  if (impl_->committed)
    return Status::InvalidArgument("transaction on " + impl_->table + " already committed");
  if (impl_->queries.empty()) {
    return Status::InvalidArgument("transaction on " + impl_->table + ": nothing to commit (no Append)");
  }
  impl_->committed = true;
  sql::SessionContext& session = impl_->session->context();
  commands::WriteRequest request;
  request.mode = commands::WriteMode::kAppend;
  if (impl_->queries.size() == 1) {
    request.source_sql = impl_->queries[0];
  } else {
    for (const std::string& query : impl_->queries) {
      if (!request.source_sql.empty()) request.source_sql += "\nUNION ALL\n";
      request.source_sql += "SELECT * FROM (" + query + "\n)";
    }
  }
  ASSIGN_OR_RETURN(auto table, session.LoadTable(impl_->location));
  commands::CommandContext ctx = session.MakeCommandContext();
  ctx.txn_id = impl_->txn_id;
  auto written = commands::Write(ctx, table, request);
  if (!written.ok()) return written.status().WithContext(impl_->table);
  CommitResult out;
  out.version = written->commit.version;
  out.skipped = written->commit.skipped;
  out.num_rows = written->metrics.value("numOutputRows", int64_t{0});
  out.num_files = written->metrics.value("numFiles", int64_t{0});
  out.notices = std::move(written->notices);
  return out;
}

}  // namespace basin
