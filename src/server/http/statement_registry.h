// The HTTP API's statements: each runs on a session of its own, and its result stays
// open as a cursor (the RowStream, so memory stays bounded) read page by page, in order,
// until it is read to its end, cancelled, dropped, or idle for too long. The registry bounds
// how many each user has, and stops them all at shutdown.
//
// Thread safety: the registry's methods may be called from any thread. A Statement's methods
// too: Execute/ReadPage/Run/NextRows run one at a time (a mutex), Interrupt() and running()
// from any thread while they do.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "basin/clock.h"
#include "basin/object_store.h"
#include "basin/server.h"
#include "basin/session.h"

namespace basin::server::http {

// Rows [index * page_size, (index + 1) * page_size) of a result.
struct Page {
  int64_t index = 0;
  std::vector<Row> rows;
  bool has_more = false;
};

class Statement {
 public:
  Statement(std::string id, std::string user, std::unique_ptr<Session> session, int64_t page_size);

  const std::string& id() const { return id_; }
  const std::string& user() const { return user_; }
  // Whether it is executing or reading rows.
  bool running() const { return running_.load(); }
  int64_t last_used_ms() const { return last_used_ms_.load(); }
  void Touch(int64_t now_ms) { last_used_ms_.store(now_ms); }

  // Runs `text` (one statement); its rows are then read with ReadPage or NextRows.
  Status Execute(const std::string& text);
  // As Execute, but a query's rows are written as the Parquet object `key` of `store`
  // (result().parquet_rows tells it), not read; other statements' rows are read as Execute's.
  Status ExecuteToParquet(const std::string& text, std::shared_ptr<ObjectStore> store,
                          const std::string& key);
  // Page `index`, which must be the next one (0 after Execute). InvalidArgument otherwise.
  Result<Page> ReadPage(int64_t index);
  // The next rows (at most 2048), for a caller reading everything; false at the end.
  Result<bool> NextRows(std::vector<Row>* rows);

  // Execute, then page 0: the outcome that Outcome() gives from then on, for a statement
  // started without waiting.
  void Run(const std::string& text);
  struct Outcome {
    Status status;
    std::optional<Page> first_page;  // none once page 1 has been read
  };
  // REQUIRES: Run() has returned (!running()).
  Outcome outcome();

  const StatementResult& result() const { return result_; }  // command, notices, columns
  const std::vector<std::string>& column_names() const;
  const std::vector<std::string>& column_types() const;

  // Stops what runs, and refuses what would run next, with Cancelled. Any thread.
  void Interrupt();

 private:
  // Cancelled once interrupted: an interrupt between two steps is not lost.
  Status CheckInterrupted() const;
  // Runs `execute` on the one statement of `text` and keeps its result for reading.
  Status ExecuteWith(const std::string& text,
                     const std::function<Result<StatementResult>(const StatementText&)>& execute);
  // Fills `rows` to `count` rows from the buffer and the stream; false when the stream ended.
  Status Fill(size_t count, std::vector<Row>* rows);

  const std::string id_;
  const std::string user_;
  const int64_t page_size_;
  std::atomic<bool> running_{false};
  std::atomic<bool> interrupted_{false};
  std::atomic<int64_t> last_used_ms_{0};

  std::mutex mutex_;
  std::unique_ptr<Session> session_;
  StatementResult result_;           // GUARDED_BY(mutex_)
  std::unique_ptr<RowStream> rows_;  // GUARDED_BY(mutex_); declared after session_: dies first
  std::vector<Row> buffered_;        // GUARDED_BY(mutex_): read from rows_, not yet returned
  bool ended_ = false;               // GUARDED_BY(mutex_)
  int64_t next_page_ = 0;            // GUARDED_BY(mutex_)
  Outcome outcome_;                  // GUARDED_BY(mutex_)
};

class StatementRegistry {
 public:
  StatementRegistry(std::shared_ptr<const Clock> clock, const HttpLimits& limits);
  ~StatementRegistry();  // Close()

  // A new statement of `user` on `session`. IOError (retryable) when the user has
  // max_statements_per_user already; Cancelled once the registry is closed.
  Result<std::shared_ptr<Statement>> Add(const std::string& user, std::unique_ptr<Session> session,
                                         int64_t page_size);
  // `user`'s statement `id`; NotFound for any other (another user's included).
  Result<std::shared_ptr<Statement>> Find(const std::string& id, const std::string& user);
  void Remove(const std::string& id);
  // Runs `work` on a thread of its own, which Close() waits for. Cancelled once closed.
  Status RunInBackground(std::function<void()> work);
  // Drops the results nobody read for cursor_idle_timeout_ms.
  void ExpireIdle();
  // Refuses new statements, interrupts the running ones, waits for background work and
  // drops every result.
  void Close();

 private:
  std::shared_ptr<const Clock> clock_;
  const HttpLimits limits_;
  std::mutex mutex_;
  std::condition_variable background_done_;
  bool closed_ = false;                                      // GUARDED_BY(mutex_)
  int background_ = 0;                                       // GUARDED_BY(mutex_)
  std::map<std::string, std::shared_ptr<Statement>> by_id_;  // GUARDED_BY(mutex_)
};

}  // namespace basin::server::http
