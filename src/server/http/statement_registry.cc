#include "server/http/statement_registry.h"

#include <thread>

#include "common/strings.h"
#include "security/crypto.h"

namespace basin::server::http {
namespace {

// A result Basin answered whole (DESCRIBE, a write's row), read as a stream.
class WholeResultStream final : public RowStream {
 public:
  explicit WholeResultStream(QueryResult result) : result_(std::move(result)) {}
  const std::vector<std::string>& column_names() const override { return result_.column_names; }
  const std::vector<std::string>& column_types() const override { return result_.column_types; }
  Result<bool> Next(std::vector<Row>* rows) override {
    constexpr size_t kChunkRows = 2048;
    rows->clear();
    const size_t end = std::min(result_.rows.size(), next_ + kChunkRows);
    for (; next_ < end; ++next_) rows->push_back(std::move(result_.rows[next_]));
    return !rows->empty();
  }

 private:
  QueryResult result_;
  size_t next_ = 0;
};

// Sets `flag` for the scope.
class RunningScope {
 public:
  explicit RunningScope(std::atomic<bool>& flag) : flag_(flag) { flag_.store(true); }
  ~RunningScope() { flag_.store(false); }
  RunningScope(const RunningScope&) = delete;
  RunningScope& operator=(const RunningScope&) = delete;

 private:
  std::atomic<bool>& flag_;
};

}  // namespace

Statement::Statement(std::string id, std::string user, std::unique_ptr<Session> session, int64_t page_size)
    : id_(std::move(id)), user_(std::move(user)), page_size_(page_size), session_(std::move(session)) {}

void Statement::Interrupt() {
  interrupted_.store(true);
  session_->Interrupt();
}

Status Statement::CheckInterrupted() const {
  if (interrupted_.load()) return Status::Cancelled("statement " + id_ + " was cancelled");
  return Status::OK();
}

Status Statement::ExecuteWith(const std::string& text,
                              const std::function<Result<StatementResult>(const StatementText&)>& execute) {
  std::lock_guard<std::mutex> lock(mutex_);
  RunningScope running(running_);
  RETURN_IF_ERROR(CheckInterrupted());
  const std::vector<StatementText> statements = SplitStatements(text);
  if (statements.size() != 1) {
    return Status::InvalidArgument("\"statement\" must hold exactly one statement, got " +
                                   std::to_string(statements.size()));
  }
  ASSIGN_OR_RETURN(result_, execute(statements[0]));
  rows_ =
      result_.rows ? std::move(result_.rows) : std::make_unique<WholeResultStream>(std::move(result_.result));
  return Status::OK();
}

Status Statement::Execute(const std::string& text) {
  return ExecuteWith(text, [&](const StatementText& statement) {
    return session_->ExecuteStatement(text, statement, /*stream=*/true);
  });
}

Status Statement::ExecuteToParquet(const std::string& text, std::shared_ptr<ObjectStore> store,
                                   const std::string& key) {
  return ExecuteWith(text, [&](const StatementText& statement) {
    return session_->ExecuteStatementToParquet(text, statement, store, key);
  });
}

const std::vector<std::string>& Statement::column_names() const { return rows_->column_names(); }
const std::vector<std::string>& Statement::column_types() const { return rows_->column_types(); }

Status Statement::Fill(size_t count, std::vector<Row>* rows) {
  RETURN_IF_ERROR(CheckInterrupted());
  std::vector<Row> chunk;
  while (rows->size() < count) {
    if (buffered_.empty()) {
      if (ended_) break;
      ASSIGN_OR_RETURN(bool more, rows_->Next(&chunk));
      if (!more) {
        ended_ = true;
        break;
      }
      buffered_ = std::move(chunk);
      chunk.clear();
    }
    const size_t take = std::min(count - rows->size(), buffered_.size());
    std::move(buffered_.begin(), buffered_.begin() + static_cast<std::ptrdiff_t>(take),
              std::back_inserter(*rows));
    buffered_.erase(buffered_.begin(), buffered_.begin() + static_cast<std::ptrdiff_t>(take));
  }
  return Status::OK();
}

Result<Page> Statement::ReadPage(int64_t index) {
  std::lock_guard<std::mutex> lock(mutex_);
  RunningScope running(running_);
  if (index != next_page_) {
    return Status::InvalidArgument("pages are read in order: the next page of statement " + id_ + " is " +
                                   std::to_string(next_page_) + ", not " + std::to_string(index));
  }
  Page page;
  page.index = index;
  RETURN_IF_ERROR(Fill(static_cast<size_t>(page_size_), &page.rows));
  // One chunk more, at most, tells whether there is a next page.
  if (buffered_.empty() && !ended_) {
    ASSIGN_OR_RETURN(bool more, rows_->Next(&buffered_));
    ended_ = !more;
  }
  page.has_more = !buffered_.empty();
  ++next_page_;
  if (index > 0) outcome_.first_page.reset();
  return page;
}

Result<bool> Statement::NextRows(std::vector<Row>* rows) {
  std::lock_guard<std::mutex> lock(mutex_);
  RunningScope running(running_);
  rows->clear();
  RETURN_IF_ERROR(Fill(2048, rows));
  return !rows->empty();
}

void Statement::Run(const std::string& text) {
  Status executed = Execute(text);
  Result<Page> page = executed.ok() ? ReadPage(0) : Result<Page>(executed);
  std::lock_guard<std::mutex> lock(mutex_);
  outcome_.status = page.status();
  if (page.ok()) outcome_.first_page = std::move(*page);
}

Statement::Outcome Statement::outcome() {
  std::lock_guard<std::mutex> lock(mutex_);
  return outcome_;
}

StatementRegistry::StatementRegistry(std::shared_ptr<const Clock> clock, const HttpLimits& limits)
    : clock_(std::move(clock)), limits_(limits) {}

StatementRegistry::~StatementRegistry() { Close(); }

Result<std::shared_ptr<Statement>> StatementRegistry::Add(const std::string& user,
                                                          std::unique_ptr<Session> session,
                                                          int64_t page_size) {
  ASSIGN_OR_RETURN(std::string id_bytes, security::RandomBytes(8));
  auto statement = std::make_shared<Statement>(HexEncode(id_bytes), user, std::move(session), page_size);
  statement->Touch(clock_->NowMs());
  std::lock_guard<std::mutex> lock(mutex_);
  if (closed_) return Status::Cancelled("the server is shutting down");
  int of_user = 0;
  for (const auto& [id, existing] : by_id_) of_user += existing->user() == user ? 1 : 0;
  if (of_user >= limits_.max_statements_per_user) {
    return Status::IOError("user " + user + " has " + std::to_string(of_user) +
                               " statements running or open, the most allowed; read or DELETE one",
                           /*retryable=*/true);
  }
  by_id_[statement->id()] = statement;
  return statement;
}

Result<std::shared_ptr<Statement>> StatementRegistry::Find(const std::string& id, const std::string& user) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = by_id_.find(id);
  if (found == by_id_.end() || found->second->user() != user) {
    return Status::NotFound("no statement " + id + " (it ended, expired or was cancelled)");
  }
  found->second->Touch(clock_->NowMs());
  return found->second;
}

void StatementRegistry::Remove(const std::string& id) {
  std::shared_ptr<Statement> removed;  // destroyed outside the lock: it closes a session
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = by_id_.find(id);
  if (found == by_id_.end()) return;
  removed = std::move(found->second);
  by_id_.erase(found);
}

Status StatementRegistry::RunInBackground(std::function<void()> work) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (closed_) return Status::Cancelled("the server is shutting down");
  ++background_;
  std::thread([this, work = std::move(work)] {
    work();
    std::lock_guard<std::mutex> done(mutex_);
    --background_;
    background_done_.notify_all();
  }).detach();
  return Status::OK();
}

void StatementRegistry::ExpireIdle() {
  const int64_t now_ms = clock_->NowMs();
  std::vector<std::shared_ptr<Statement>> expired;
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = by_id_.begin(); it != by_id_.end();) {
    const bool idle =
        !it->second->running() && now_ms - it->second->last_used_ms() > limits_.cursor_idle_timeout_ms;
    if (idle) {
      expired.push_back(std::move(it->second));
      it = by_id_.erase(it);
    } else {
      ++it;
    }
  }
}

void StatementRegistry::Close() {
  std::map<std::string, std::shared_ptr<Statement>> dropped;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    closed_ = true;
    for (const auto& [id, statement] : by_id_) statement->Interrupt();
    background_done_.wait(lock, [&] { return background_ == 0; });
    dropped.swap(by_id_);
  }
}

}  // namespace basin::server::http
