// The public API (include/basin/): each facade, its errors, idempotent appends, time
// travel and streamed rows. Uses only basin/ headers, as a program outside Basin would.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "basin/object_store.h"
#include "basin/session.h"
#include "basin/table.h"
#include "basin/version.h"
#include "basin/warehouse.h"
#include "testing/test_util.h"

namespace basin {
namespace {

using testing::TempDir;

class ApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(Warehouse opened, Warehouse::Open(dir_.str()));
    warehouse_.emplace(std::move(opened));
  }

  // sales.orders (id bigint NOT NULL, day date, amount decimal(10,2)) partitioned by day.
  Table CreateOrders() {
    auto table = warehouse_->CreateTable(
        "sales.orders", {{"id", "bigint", false}, {"day", "date"}, {"amount", "decimal(10,2)"}},
        {.partition_columns = {"day"},
         .properties = {{"delta.appendOnly", "true"}},
         .description = "orders"});
    EXPECT_TRUE(table.ok()) << table.status().ToString();
    return std::move(table).value();
  }

  // Appends `query` in one transaction, with a txn id when `app_id` is given.
  Result<CommitResult> Append(const Table& table, const std::string& query, const std::string& app_id = "",
                              int64_t version = 0) {
    ASSIGN_OR_RETURN(Transaction txn, table.BeginTransaction());
    if (!app_id.empty()) RETURN_IF_ERROR(txn.SetTxn(app_id, version));
    RETURN_IF_ERROR(txn.Append(query));
    return txn.Commit();
  }

  std::unique_ptr<Session> OpenSession() {
    auto session = Session::Open({.warehouse = dir_.str()});
    EXPECT_TRUE(session.ok()) << session.status().ToString();
    return std::move(session).value();
  }

  TempDir dir_;
  std::optional<Warehouse> warehouse_;
};

TEST_F(ApiTest, CreatesListsGetsAndDropsTables) {
  Table orders = CreateOrders();
  EXPECT_EQ(orders.name(), "sales.orders");
  ASSERT_OK_AND_ASSIGN(Table other, warehouse_->CreateTable("t", {{"x", "int"}}));
  EXPECT_EQ(other.name(), "default.t");
  ASSERT_OK_AND_ASSIGN(std::vector<std::string> names, warehouse_->ListTables());
  EXPECT_EQ(names, (std::vector<std::string>{"default.t", "sales.orders"}));

  ASSERT_OK_AND_ASSIGN(Table found, warehouse_->GetTable("SALES.Orders"));
  EXPECT_EQ(found.location(), orders.location());

  ASSERT_OK(warehouse_->DropTable("default.t"));
  ASSERT_OK_AND_ASSIGN(names, warehouse_->ListTables());
  EXPECT_EQ(names, (std::vector<std::string>{"sales.orders"}));
  EXPECT_FALSE(std::filesystem::exists(other.location()));
}

TEST_F(ApiTest, ErrorsNameWhatFailed) {
  EXPECT_ERROR_WITH(warehouse_->GetTable("sales.missing"), kNotFound, "sales.missing");
  EXPECT_ERROR_WITH(warehouse_->DropTable("missing"), kNotFound, "default.missing");
  EXPECT_ERROR_WITH(warehouse_->GetTable("a.b.c"), kInvalidArgument, "a.b.c");
  CreateOrders();
  EXPECT_ERROR_WITH(warehouse_->CreateTable("sales.orders", {{"id", "bigint"}}), kAlreadyExists,
                    "sales.orders");
  EXPECT_ERROR_WITH(warehouse_->CreateTable("bad", {{"x", "no_such_type"}}), kInvalidArgument, "column x");
  EXPECT_ERROR_WITH(warehouse_->CreateTable("bad", {{"x", "int, y int"}}), kInvalidArgument, "column x");
  EXPECT_ERROR_WITH(warehouse_->CreateTable("bad", {{"x", "int"}}, {.partition_columns = {"nope"}}),
                    kInvalidArgument, "nope");
  EXPECT_ERROR_WITH(warehouse_->CreateTable("bad", {}), kInvalidArgument, "columns");
  EXPECT_ERROR_WITH(Warehouse::Open("s3://bucket/wh"), kNotImplemented, "s3://bucket/wh");
  EXPECT_ERROR_WITH(Table::OpenAt((dir_.path() / "nothing").string()), kNotFound, "nothing");
  ASSERT_OK_AND_ASSIGN(Table orders, warehouse_->GetTable("sales.orders"));
  EXPECT_ERROR_WITH(orders.SnapshotAtVersion(7), kNotFound, "7");
}

// A warehouse in memory: the same calls, nothing on disk, and a session sees its tables.
TEST(ApiMemoryTest, WarehouseInMemory) {
  const std::string location = "memory://api-test";
  ASSERT_OK_AND_ASSIGN(Warehouse warehouse, Warehouse::Open(location));
  EXPECT_EQ(warehouse.location(), location);
  ASSERT_OK_AND_ASSIGN(Table table, warehouse.CreateTable("t", {{"x", "int"}}));
  EXPECT_EQ(table.location(), location + "/default/t");
  ASSERT_OK_AND_ASSIGN(Transaction txn, table.BeginTransaction());
  ASSERT_OK(txn.Append("SELECT range::INT FROM range(10)"));
  ASSERT_OK_AND_ASSIGN(CommitResult committed, txn.Commit());
  EXPECT_EQ(committed.version, 1);
  auto session = Session::Open({.warehouse = location});
  ASSERT_OK(session.status());
  ASSERT_OK_AND_ASSIGN(std::vector<StatementResult> results, (*session)->Execute("SELECT sum(x) FROM t"));
  EXPECT_EQ(results.at(0).result.rows, (std::vector<Row>{{"45"}}));
  ASSERT_OK(warehouse.DropTable("t"));
  ASSERT_OK_AND_ASSIGN(bool left, NamedMemoryStore("api-test")->HasObjectsWithPrefix("default/"));
  EXPECT_FALSE(left);
  ForgetNamedMemoryStore("api-test");
}

TEST_F(ApiTest, SnapshotDescribesTheTable) {
  Table orders = CreateOrders();
  ASSERT_OK_AND_ASSIGN(Snapshot empty, orders.LatestSnapshot());
  EXPECT_EQ(empty.version(), 0);
  EXPECT_EQ(empty.num_files(), 0u);
  EXPECT_EQ(empty.num_records(), 0);
  EXPECT_EQ(empty.partition_columns(), std::vector<std::string>{"day"});
  EXPECT_EQ(empty.properties().at("delta.appendOnly"), "true");
  EXPECT_EQ(empty.description(), "orders");
  ASSERT_EQ(empty.columns().size(), 3u);
  EXPECT_EQ(empty.columns()[0].name, "id");
  EXPECT_EQ(empty.columns()[0].type, "long");
  EXPECT_FALSE(empty.columns()[0].nullable);
  EXPECT_EQ(empty.columns()[2].type, "decimal(10,2)");
  EXPECT_FALSE(empty.column_mapping());

  ASSERT_OK_AND_ASSIGN(CommitResult one,
                       Append(orders, "VALUES (1, DATE '2024-01-01', 9.5), (2, DATE '2024-01-02', 3)"));
  EXPECT_EQ(one.version, 1);
  EXPECT_EQ(one.num_rows, 2);
  EXPECT_EQ(one.num_files, 2);
  ASSERT_OK_AND_ASSIGN(Snapshot latest, orders.LatestSnapshot());
  EXPECT_EQ(latest.version(), 1);
  EXPECT_EQ(latest.num_records(), 2);
  std::vector<DataFile> files = latest.files();
  ASSERT_EQ(files.size(), 2u);
  int64_t size = 0;
  for (const DataFile& file : files) {
    EXPECT_EQ(file.num_records, 1) << file.path;
    EXPECT_NE(file.path.find("day=2024-01-0"), std::string::npos) << file.path;
    size += file.size_bytes;
  }
  EXPECT_EQ(latest.size_bytes(), size);

  // The older version is still there, by version and by time.
  ASSERT_OK_AND_ASSIGN(Snapshot v0, orders.SnapshotAtVersion(0));
  EXPECT_EQ(v0.num_files(), 0u);
  ASSERT_OK_AND_ASSIGN(Snapshot by_time, orders.SnapshotAtTimestamp(latest.timestamp_ms()));
  EXPECT_EQ(by_time.version(), 1);

  ASSERT_OK_AND_ASSIGN(std::vector<HistoryEntry> history, orders.History());
  ASSERT_EQ(history.size(), 2u);
  EXPECT_EQ(history[0].version, 1);
  EXPECT_EQ(history[0].operation, "WRITE");
  EXPECT_EQ(history[1].operation, "CREATE TABLE");
  ASSERT_OK_AND_ASSIGN(history, orders.History(1));
  EXPECT_EQ(history.size(), 1u);

  // The same table by location, outside the warehouse.
  ASSERT_OK_AND_ASSIGN(Table at, Table::OpenAt(orders.location()));
  EXPECT_EQ(at.name(), "");
  ASSERT_OK_AND_ASSIGN(Snapshot same, at.LatestSnapshot());
  EXPECT_EQ(same.table_id(), latest.table_id());
}

TEST_F(ApiTest, TxnIdMakesARetryCommitOnce) {
  Table orders = CreateOrders();
  const std::string rows = "SELECT 1, DATE '2024-01-01', 1.5";
  ASSERT_OK_AND_ASSIGN(CommitResult first, Append(orders, rows, "loader", 7));
  EXPECT_FALSE(first.skipped);
  EXPECT_EQ(first.version, 1);
  ASSERT_OK_AND_ASSIGN(CommitResult retry, Append(orders, rows, "loader", 7));
  EXPECT_TRUE(retry.skipped);
  EXPECT_EQ(retry.version, 1);
  ASSERT_OK_AND_ASSIGN(CommitResult older, Append(orders, rows, "loader", 3));
  EXPECT_TRUE(older.skipped);
  ASSERT_OK_AND_ASSIGN(CommitResult next, Append(orders, rows, "loader", 8));
  EXPECT_FALSE(next.skipped);
  EXPECT_EQ(next.version, 2);
  ASSERT_OK_AND_ASSIGN(Snapshot latest, orders.LatestSnapshot());
  EXPECT_EQ(latest.num_records(), 2);
}

TEST_F(ApiTest, TransactionsCommitConcurrentlyFromSeveralThreads) {
  Table orders = CreateOrders();
  constexpr int kThreads = 3, kCommits = 3;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCommits; i++) {
        // A copy of the handle per thread, and days that differ per thread.
        Table mine = orders;
        auto done = Append(mine, "SELECT " + std::to_string(t * 100 + i) + ", DATE '2024-01-0" +
                                     std::to_string(t + 1) + "', 1");
        if (!done.ok() || done->skipped) failures++;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  ASSERT_OK_AND_ASSIGN(Snapshot latest, orders.LatestSnapshot());
  EXPECT_EQ(latest.version(), kThreads * kCommits);
  EXPECT_EQ(latest.num_records(), kThreads * kCommits);
}

TEST_F(ApiTest, TimeTravelBeforeTheFirstCommitIsNotFound) {
  Table orders = CreateOrders();
  ASSERT_OK_AND_ASSIGN(Snapshot v0, orders.LatestSnapshot());
  EXPECT_ERROR_WITH(orders.SnapshotAtTimestamp(v0.timestamp_ms() - 24 * 3600 * 1000), kNotFound, "");
}

TEST_F(ApiTest, TransactionAppendsSeveralQueriesInOneCommit) {
  Table orders = CreateOrders();
  ASSERT_OK_AND_ASSIGN(Transaction txn, orders.BeginTransaction());
  ASSERT_OK(txn.Append("SELECT 1, DATE '2024-01-01', 1"));
  ASSERT_OK(txn.Append("SELECT i, DATE '2024-01-02', i * 2 FROM range(2, 5) t(i)"));
  EXPECT_ERROR_WITH(txn.Append("SELECT * FROM no_such_table"), kNotFound, "no_such_table");
  EXPECT_ERROR_WITH(txn.Append("SELEC 1"), kInvalidArgument, "sales.orders");
  EXPECT_ERROR_WITH(txn.SetTxn("", 1), kInvalidArgument, "app id");
  ASSERT_OK_AND_ASSIGN(CommitResult done, txn.Commit());
  EXPECT_EQ(done.version, 1);
  EXPECT_EQ(done.num_rows, 4);
  EXPECT_ERROR_WITH(txn.Commit(), kInvalidArgument, "already committed");
  EXPECT_ERROR_WITH(txn.Append("SELECT 1, NULL, 1"), kInvalidArgument, "already committed");

  ASSERT_OK_AND_ASSIGN(Transaction empty, orders.BeginTransaction());
  EXPECT_ERROR_WITH(empty.Commit(), kInvalidArgument, "nothing to commit");

  // Rows that do not fit the table fail the commit and leave the table as it was.
  EXPECT_ERROR_WITH(Append(orders, "SELECT NULL, DATE '2024-01-01', 1"), kInvalidArgument, "id");
  ASSERT_OK_AND_ASSIGN(Snapshot latest, orders.LatestSnapshot());
  EXPECT_EQ(latest.version(), 1);
}

TEST_F(ApiTest, SessionRunsScriptsAndStreamsRows) {
  Table orders = CreateOrders();
  ASSERT_OK(Append(orders, "SELECT i, DATE '2024-01-01' + (i % 3)::INT, i FROM range(5000) t(i)"));
  std::unique_ptr<Session> session = OpenSession();

  ASSERT_OK_AND_ASSIGN(std::vector<StatementResult> results,
                       session->Execute("SELECT count(*) FROM sales.orders; "
                                        "SELECT id FROM sales.orders VERSION AS OF 0"));
  ASSERT_EQ(results.size(), 2u);
  ASSERT_TRUE(results[0].returns_rows);
  EXPECT_EQ(results[0].result.column_names, std::vector<std::string>{"count_star()"});
  EXPECT_EQ(results[0].result.rows, (std::vector<Row>{{"5000"}}));
  EXPECT_EQ(results[1].result.row_count(), 0u);

  const std::string script =
      "SELECT 1;\n  SELECT id, NULL AS nothing FROM sales.orders WHERE day = DATE '2024-01-02'";
  std::vector<StatementText> statements = SplitStatements(script);
  ASSERT_EQ(statements.size(), 2u);
  EXPECT_EQ(statements[1].line, 2u);
  EXPECT_EQ(statements[1].column, 3u);
  EXPECT_EQ(script.substr(statements[1].offset, statements[1].text.size()), statements[1].text);

  ASSERT_OK_AND_ASSIGN(StatementResult streamed, session->ExecuteStatement(script, statements[1], true));
  ASSERT_NE(streamed.rows, nullptr);
  EXPECT_EQ(streamed.rows->column_names(), (std::vector<std::string>{"id", "nothing"}));
  EXPECT_EQ(streamed.rows->column_types()[0], "BIGINT");
  size_t rows = 0, chunks = 0;
  std::vector<Row> chunk;
  while (true) {
    ASSERT_OK_AND_ASSIGN(bool more, streamed.rows->Next(&chunk));
    if (!more) break;
    chunks++;
    for (const Row& row : chunk) {
      ASSERT_EQ(row.size(), 2u);
      EXPECT_TRUE(row[0].has_value());
      EXPECT_FALSE(row[1].has_value());  // NULL
      rows++;
    }
  }
  EXPECT_EQ(rows, 1667u);
  EXPECT_GE(chunks, 1u);
  streamed.rows.reset();
  ScanStats stats = session->TakeScanStats();
  EXPECT_EQ(stats.files_total, 3u);
  EXPECT_EQ(stats.files_read, 1u);

  EXPECT_TRUE(IsCompleteInput("SELECT ';'\n;"));
  EXPECT_FALSE(IsCompleteInput("SELECT 1"));
  EXPECT_ERROR_WITH(session->Execute("SELECT 1;\nSELEC 2"), kInvalidArgument, "line 2");
}

TEST_F(ApiTest, SessionWritesSeenByTablesAndNotices) {
  Table orders = CreateOrders();
  std::unique_ptr<Session> session = OpenSession();
  ASSERT_OK(
      session->Execute("SET basin.txn_app_id = 'job'; SET basin.txn_version = 1; "
                       "INSERT INTO sales.orders VALUES (1, DATE '2024-01-01', 1)"));
  ASSERT_OK_AND_ASSIGN(std::vector<StatementResult> again,
                       session->Execute("SET basin.txn_version = 1; "
                                        "INSERT INTO sales.orders VALUES (1, DATE '2024-01-01', 1)"));
  ASSERT_EQ(again.size(), 2u);
  EXPECT_FALSE(again[1].notices.empty());
  ASSERT_OK_AND_ASSIGN(Snapshot latest, orders.LatestSnapshot());
  EXPECT_EQ(latest.version(), 1);
  // Tables created in SQL are the warehouse's.
  ASSERT_OK(session->Execute("CREATE TABLE made_in_sql (x INT)"));
  ASSERT_OK(warehouse_->GetTable("made_in_sql"));
}

TEST_F(ApiTest, SessionsSharingATableCacheSeeEachOthersCommits) {
  std::shared_ptr<TableCache> tables = NewTableCache(2);
  auto open = [&] { return Session::Open({.warehouse = dir_.str(), .tables = tables}).value(); };
  std::unique_ptr<Session> writer = open();
  std::unique_ptr<Session> reader = open();
  auto count = [&](Session& session, const std::string& sql) -> std::optional<std::string> {
    auto results = session.Execute(sql);
    EXPECT_TRUE(results.ok()) << sql << ": " << results.status().ToString();
    return results.ok() ? results->back().result.rows.at(0).at(0) : std::nullopt;
  };
  ASSERT_OK(writer->Execute("CREATE TABLE t AS SELECT range AS i FROM range(3)"));
  EXPECT_EQ(count(*reader, "SELECT count(*) FROM t"), "3");
  // The reader's cached snapshot is brought up to date by the writer's commits, whichever
  // session read the table last.
  ASSERT_OK(writer->Execute("INSERT INTO t VALUES (3)"));
  EXPECT_EQ(count(*reader, "SELECT count(*) FROM t"), "4");
  EXPECT_EQ(count(*writer, "SELECT count(*) FROM t"), "4");
  ASSERT_OK(reader->Execute("DELETE FROM t WHERE i < 2"));
  EXPECT_EQ(count(*writer, "SELECT count(*) FROM t"), "2");
  EXPECT_EQ(count(*writer, "SELECT count(*) FROM t VERSION AS OF 1"), "4");
  // More table versions than the cache keeps: older ones are read again from the log.
  for (int version = 0; version <= 2; version++) {
    const std::string sql = "SELECT count(*) FROM t VERSION AS OF " + std::to_string(version);
    EXPECT_EQ(count(*reader, sql), count(*writer, sql));
  }
  // A table dropped by one session and created again by another is the new table to both.
  ASSERT_OK(reader->Execute("DROP TABLE t"));
  EXPECT_ERROR_WITH(writer->Execute("SELECT count(*) FROM t"), kNotFound, "does not exist");
  ASSERT_OK(writer->Execute("CREATE TABLE t AS SELECT 'x' AS s"));
  EXPECT_EQ(count(*reader, "SELECT s FROM t"), "x");
}

TEST_F(ApiTest, InterruptStopsARunningStatement) {
  std::unique_ptr<Session> session = Session::Open({.warehouse = dir_.str(), .track_progress = true}).value();
  std::atomic<bool> done{false};
  std::thread interrupter([&] {
    while (!done.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      session->Interrupt();
      (void)session->Progress();
    }
  });
  auto result = session->Execute("SELECT count(*) FROM range(10000000000) a");
  done.store(true);
  interrupter.join();
  EXPECT_ERROR_WITH(result, kCancelled, "");
  // The next statement runs.
  ASSERT_OK_AND_ASSIGN(std::vector<StatementResult> after, session->Execute("SELECT 42"));
  EXPECT_EQ(after[0].result.rows, (std::vector<Row>{{"42"}}));
}

TEST_F(ApiTest, ProgressCallbackSeesCommandPhases) {
  std::unique_ptr<Session> session = OpenSession();
  ASSERT_OK(session->Execute("CREATE TABLE t (x INT)"));
  std::vector<std::string> phases;
  session->SetProgressCallback([&](const CommandProgress& progress) { phases.push_back(progress.phase); });
  ASSERT_OK(session->Execute("INSERT INTO t SELECT * FROM range(10)"));
  session->SetProgressCallback(nullptr);
  EXPECT_NE(std::find(phases.begin(), phases.end(), "committing"), phases.end());
}

TEST(ApiVersionTest, NamesBasinAndDuckDb) {
  EXPECT_STREQ(kVersion, "0.1.0");
  EXPECT_EQ(DuckDbVersion().rfind("v1.", 0), 0u) << DuckDbVersion();
}

}  // namespace
}  // namespace basin
