// basin::Session (include/basin/session.h) over sql::Session.
#include "basin/session.h"

#include <utility>

#include "engine/duckdb.h"
#include "engine/lakehouse.h"
#include "engine/sql_text.h"
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
  out.returns_rows = in.returns_rows;
  out.result.column_names = std::move(in.result.column_names);
  out.result.column_types = std::move(in.result.column_types);
  out.result.rows = std::move(in.result.rows);
  if (in.rows) out.rows = std::make_unique<EngineRowStream>(std::move(in.rows));
  out.files_read = in.files_read;
  out.files_total = in.files_total;
  out.notices = std::move(in.notices);
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

struct Session::Impl {
  SessionOptions options;
  std::unique_ptr<sql::Session> session;
};

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;

Result<std::unique_ptr<Session>> Session::Open(const SessionOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  ASSIGN_OR_RETURN(impl->session, sql::Session::Open({.warehouse_dir = options.warehouse,
                                                      .data_skipping = options.data_skipping}));
  RETURN_IF_ERROR(stream::kafka::RegisterReadKafka(impl->session->connection().raw()));
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

ScanStats Session::TakeScanStats() {
  engine::ScanStats stats = impl_->session->TakeScanStats();
  return {static_cast<size_t>(stats.files_read), static_cast<size_t>(stats.files_total)};
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
