// basin::Session (include/basin/session.h) over sql::Session.
#include "basin/session.h"

#include <algorithm>
#include <utility>

#include "api/table_cache.h"
#include "engine/duckdb.h"
#include "engine/lakehouse.h"
#include "engine/sql_text.h"
#include "engine/store_registry.h"
#include "sql/describe_statement.h"
#include "sql/session.h"
#include "stream/kafka/read_kafka.h"

namespace basin {

namespace {

class EngineRowStream final : public RowStream {
 public:
  explicit EngineRowStream(std::unique_ptr<engine::QueryStream> stream) : stream_(std::move(stream)) {}
  const std::vector<std::string>& column_names() const override { return stream_->column_names(); }
  const std::vector<std::string>& column_types() const override { return stream_->column_types(); }
  Result<bool> Next(std::vector<Row>* rows) override { return stream_->Next(rows); }

 private:
  std::unique_ptr<engine::QueryStream> stream_;
};

StatementResult FromSql(sql::StatementResult in) {
  StatementResult out;
  out.statement = std::move(in.statement);
  out.command = std::move(in.command);
  out.returns_rows = in.returns_rows;
  out.result.column_names = std::move(in.result.column_names);
  out.result.column_types = std::move(in.result.column_types);
  out.result.rows = std::move(in.result.rows);
  if (in.rows) out.rows = std::make_unique<EngineRowStream>(std::move(in.rows));
  out.files_read = in.files_read;
  out.files_total = in.files_total;
  out.notices = std::move(in.notices);
  out.copy_out = in.copy_out;
  out.parquet_rows = in.parquet_rows;
  return out;
}

}  // namespace

std::vector<StatementText> SplitStatements(std::string_view script) {
  std::vector<StatementText> out;
  // Positions are counted from the previous statement's, so a long script is read once.
  size_t line = 1, line_start = 0, counted_to = 0;
  for (engine::ScriptStatement& statement : engine::SplitSqlScript(script)) {
    for (size_t i = counted_to; i < statement.offset; i++) {
      if (script[i] == '\n') {
        line++;
        line_start = i + 1;
      }
    }
    counted_to = statement.offset;
    size_t column = engine::PositionInText(script.substr(line_start), statement.offset - line_start).column;
    out.push_back({std::move(statement.text), statement.offset, line, column});
  }
  return out;
}

bool IsCompleteInput(std::string_view text) { return engine::IsCompleteSqlInput(text); }

namespace {

// A placeholder: the token "$<digits>", which DuckDB's scanner may also give as "$"
// followed at once by a number.
struct Placeholder {
  size_t begin = 0;
  size_t end = 0;
  int number = 0;
};

Result<std::vector<Placeholder>> Placeholders(std::string_view statement) {
  engine::SqlParse<std::vector<engine::SqlToken>> tokens = engine::TokenizeSql(statement);
  if (!tokens.ok())
    return Status::InvalidArgument(tokens.error().message + " at offset " +
                                   std::to_string(tokens.error().offset));
  std::vector<Placeholder> out;
  const std::vector<engine::SqlToken>& list = tokens.value();
  for (size_t i = 0; i < list.size(); i++) {
    const engine::SqlToken& token = list[i];
    std::string_view text = statement.substr(token.begin, token.end - token.begin);
    size_t end = token.end;
    if (text == "$" && i + 1 < list.size() && list[i + 1].begin == token.end &&
        list[i + 1].kind == engine::SqlTokenKind::kNumber) {
      end = list[i + 1].end;
      text = statement.substr(token.begin, end - token.begin);
      i++;
    }
    if (text.size() < 2 || text[0] != '$' ||
        text.find_first_not_of("0123456789", 1) != std::string_view::npos) {
      continue;
    }
    if (text.size() > 6)
      return Status::InvalidArgument("parameter " + std::string(text) + " is out of range");
    out.push_back(Placeholder{token.begin, end, std::stoi(std::string(text.substr(1)))});
  }
  return out;
}

}  // namespace

Result<StatementParameters> FindParameters(std::string_view statement) {
  ASSIGN_OR_RETURN(std::vector<Placeholder> placeholders, Placeholders(statement));
  StatementParameters found;
  for (const Placeholder& p : placeholders) found.count = std::max(found.count, p.number);
  return found;
}

Result<std::string> BindParameters(std::string_view statement, const std::vector<std::string>& literals) {
  ASSIGN_OR_RETURN(std::vector<Placeholder> placeholders, Placeholders(statement));
  std::string out;
  size_t copied = 0;
  for (const Placeholder& p : placeholders) {
    if (p.number < 1 || static_cast<size_t>(p.number) > literals.size()) {
      return Status::InvalidArgument("there is no parameter $" + std::to_string(p.number) + " (" +
                                     std::to_string(literals.size()) + " given)");
    }
    out.append(statement.substr(copied, p.begin - copied));
    out.append(literals[p.number - 1]);
    copied = p.end;
  }
  out.append(statement.substr(copied));
  return out;
}

struct Session::Impl {
  SessionOptions options;
  std::unique_ptr<sql::Session> session;
};

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;

std::shared_ptr<TableCache> NewTableCache(size_t table_versions) {
  return std::make_shared<TableCache>(table_versions);
}

Result<std::unique_ptr<Session>> Session::Open(const SessionOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  ASSIGN_OR_RETURN(impl->session, sql::Session::Open({.warehouse_dir = options.warehouse,
                                                      .data_skipping = options.data_skipping,
                                                      .copy_to_caller = options.copy_to_caller,
                                                      .statement_timeout_ms = options.statement_timeout_ms,
                                                      .user = options.user,
                                                      .record_lineage = options.record_lineage,
                                                      .snapshots = options.tables}));
  RETURN_IF_ERROR(stream::kafka::RegisterReadKafka(*impl->session));
  if (options.track_progress) {
    // DuckDB tracks progress without drawing its own bar.
    RETURN_IF_ERROR(impl->session->connection().Execute(
        "SET enable_progress_bar = true; SET enable_progress_bar_print = false"));
  }
  return std::unique_ptr<Session>(new Session(std::move(impl)));
}

Result<std::vector<StatementResult>> Session::Execute(const std::string& script) {
  ASSIGN_OR_RETURN(std::vector<sql::StatementResult> results, impl_->session->Execute(script));
  std::vector<StatementResult> out;
  out.reserve(results.size());
  for (sql::StatementResult& result : results) out.push_back(FromSql(std::move(result)));
  return out;
}

Result<StatementResult> Session::ExecuteStatement(std::string_view script, const StatementText& statement,
                                                  bool stream) {
  engine::ScriptStatement inner{statement.text, statement.offset};
  ASSIGN_OR_RETURN(sql::StatementResult result, impl_->session->ExecuteStatement(script, inner, stream));
  return FromSql(std::move(result));
}

Result<StatementResult> Session::ExecuteStatementToParquet(std::string_view script,
                                                           const StatementText& statement,
                                                           std::shared_ptr<ObjectStore> store,
                                                           const std::string& key) {
  engine::ScriptStatement inner{statement.text, statement.offset};
  // DuckDB writes through the store (a governed session may write only basin:// URLs).
  const engine::StoreHandle handle = engine::RegisterStore(std::move(store));
  ASSIGN_OR_RETURN(sql::StatementResult result,
                   impl_->session->ExecuteStatementToParquet(script, inner, engine::StoreUrl(handle, key)));
  return FromSql(std::move(result));
}

ScanStats Session::TakeScanStats() {
  engine::ScanStats stats = impl_->session->TakeScanStats();
  return {static_cast<size_t>(stats.files_read), static_cast<size_t>(stats.files_total)};
}

TransactionStatus Session::transaction_status() {
  switch (impl_->session->transaction_status()) {
    case sql::TransactionStatus::kIdle:
      return TransactionStatus::kIdle;
    case sql::TransactionStatus::kInBlock:
      return TransactionStatus::kInBlock;
    case sql::TransactionStatus::kAborted:
      return TransactionStatus::kAborted;
  }
  return TransactionStatus::kIdle;
}

Result<StatementDescription> Session::Describe(std::string_view statement) {
  return sql::DescribeStatement(*impl_->session, statement);
}

void Session::Interrupt() { impl_->session->connection().Interrupt(); }

double Session::Progress() { return impl_->session->connection().Progress(); }

void Session::SetProgressCallback(std::function<void(const CommandProgress&)> callback) {
  if (!callback) {
    impl_->session->SetProgressCallback(nullptr);
    return;
  }
  impl_->session->SetProgressCallback([callback = std::move(callback)](const commands::Progress& progress) {
    callback(CommandProgress{progress.phase, progress.done, progress.total});
  });
}

const SessionOptions& Session::options() const { return impl_->options; }

}  // namespace basin
