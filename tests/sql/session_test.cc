#include "sql/session.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "delta/commit_writer.h"
#include "engine/parquet_writer.h"
#include "sql/session_context.h"
#include "testing/test_util.h"

namespace basin::sql {
namespace {

class SessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SessionOptions options;
    options.warehouse_dir = dir_.str();
    ASSERT_OK_AND_ASSIGN(session_, Session::Open(options));
  }

  // Creates table `name` in the warehouse: version 0 from `select_sqls[0]` (one file per
  // query), each later query appended as its own commit.
  void CreateTable(const std::string& name, const std::vector<std::string>& select_sqls,
                   const std::vector<std::string>& partition_columns = {}) {
    auto& conn = session_->connection();
    ASSERT_OK_AND_ASSIGN(auto store, OpenLocalObjectStore(dir_.str() + "/" + name));
    ASSERT_OK_AND_ASSIGN(delta::StructType schema, engine::InferDeltaSchema(conn, select_sqls[0]));
    engine::WriteOptions write;
    write.partition_columns = partition_columns;
    for (size_t version = 0; version < select_sqls.size(); version++) {
      std::vector<delta::Action> actions;
      if (version == 0) {
        actions.push_back(delta::Protocol{1, 2, std::nullopt, std::nullopt});
        delta::Metadata metadata;
        metadata.id = "00000000-0000-0000-0000-00000000000" + std::to_string(select_sqls.size() % 10);
        metadata.schema_string = delta::SchemaToJson(schema).dump();
        metadata.partition_columns = partition_columns;
        metadata.created_time = 1700000000000;
        actions.push_back(metadata);
      }
      ASSERT_OK_AND_ASSIGN(auto adds, engine::WriteDataFiles(conn, select_sqls[version], *store, write));
      for (auto& add : adds) actions.push_back(add);
      actions.push_back(delta::MakeCommitInfo(1700000000000 + static_cast<int64_t>(version) * 1000,
                                              version == 0 ? "CREATE TABLE" : "WRITE"));
      ASSERT_OK(delta::WriteCommit(*store, static_cast<int64_t>(version), actions));
    }
  }

  std::vector<StatementResult> Run(const std::string& sql) {
    auto r = session_->Execute(sql);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) return {};
    return std::move(*r);
  }

  engine::QueryResult One(const std::string& sql) {
    auto results = Run(sql);
    EXPECT_EQ(results.size(), 1u);
    return results.empty() ? engine::QueryResult{} : results[0].result;
  }

  testing::TempDir dir_;
  std::unique_ptr<Session> session_;
};

TEST_F(SessionTest, RewritesCallsKeepingAliasesAndJoins) {
  CreateTable("people", {"SELECT i AS id, 'p' || i AS name FROM range(5) t(i)"});
  CreateTable("orders", {"SELECT i AS order_id, i % 3 AS person_id, i * 10 AS amount FROM range(9) t(i)"});
  engine::QueryResult r =
      One("SELECT p.name, sum(o.amount) AS total FROM delta_scan('people') AS p "
          "JOIN delta_scan('orders') o ON o.person_id = p.id GROUP BY p.name ORDER BY p.name");
  ASSERT_EQ(r.row_count(), 3u);
  EXPECT_EQ(r.at(0, 0), "p0");
  EXPECT_EQ(r.at(0, 1), "90");  // 0 + 30 + 60
  EXPECT_EQ(r.at(2, 1), "150");
}

TEST_F(SessionTest, StringsAndCommentsMentioningDeltaScanAreUntouched) {
  CreateTable("t", {"SELECT 1 AS x"});
  engine::QueryResult r =
      One("SELECT 'delta_scan(''t'')' AS s, x /* delta_scan('nope') */ FROM delta_scan('t')");
  EXPECT_EQ(r.at(0, 0), "delta_scan('t')");
  EXPECT_EQ(r.at(0, 1), "1");
}

TEST_F(SessionTest, RunsSeveralStatementsInOrder) {
  CreateTable("t", {"SELECT i AS x FROM range(3) t(i)"});
  auto results = Run("CREATE TEMP TABLE copy AS SELECT * FROM delta_scan('t'); SELECT count(*) FROM copy;");
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[1].result.at(0, 0), "3");
  EXPECT_TRUE(results[1].returns_rows);
}

TEST_F(SessionTest, TimeTravelByVersion) {
  CreateTable("t", {"SELECT 1 AS x", "SELECT 2 AS x", "SELECT 3 AS x"});
  EXPECT_EQ(One("SELECT sum(x) FROM delta_scan('t')").at(0, 0), "6");
  EXPECT_EQ(One("SELECT sum(x) FROM delta_scan('t', version => 1)").at(0, 0), "3");
}

// The session caches snapshots; a commit made between statements must still be seen,
// by full scans, by skipping (whose parsed stats are cached too) and by DESCRIBE DETAIL.
TEST_F(SessionTest, CachedSnapshotsNeverGoStale) {
  CreateTable("t", {"SELECT 1 AS x", "SELECT 2 AS x"});
  EXPECT_EQ(One("SELECT sum(x) FROM delta_scan('t')").at(0, 0), "3");
  EXPECT_EQ(One("SELECT count(*) FROM delta_scan('t') WHERE x = 4").at(0, 0), "0");
  EXPECT_EQ(One("SELECT sum(x) FROM delta_scan('t', version => 0)").at(0, 0), "1");

  auto& conn = session_->connection();
  ASSERT_OK_AND_ASSIGN(auto store, OpenLocalObjectStore(dir_.str() + "/t"));
  ASSERT_OK_AND_ASSIGN(auto adds,
                       engine::WriteDataFiles(conn, "SELECT 4 AS x", *store, engine::WriteOptions{}));
  std::vector<delta::Action> actions(adds.begin(), adds.end());
  actions.push_back(delta::MakeCommitInfo(1700000005000, "WRITE"));
  ASSERT_OK(delta::WriteCommit(*store, 2, actions));

  EXPECT_EQ(One("SELECT sum(x) FROM delta_scan('t')").at(0, 0), "7");
  auto point = Run("SELECT count(*) FROM delta_scan('t') WHERE x = 4");
  ASSERT_EQ(point.size(), 1u);
  EXPECT_EQ(point[0].result.at(0, 0), "1");
  EXPECT_EQ(point[0].files_read, 1u);
  EXPECT_EQ(point[0].files_total, 3u);
  EXPECT_EQ(One("SELECT sum(x) FROM delta_scan('t', version => 0)").at(0, 0), "1");
  EXPECT_EQ(One("DESCRIBE DETAIL delta_scan('t')").at(0, 1), "2");

  // A table dropped and written again at the same path restarts at version 0.
  std::filesystem::remove_all(dir_.str() + "/t");
  CreateTable("t", {"SELECT 1000000 AS x"});
  EXPECT_EQ(One("SELECT sum(x) FROM delta_scan('t', version => 0)").at(0, 0), "1000000");
}

// A session opened with another's snapshot cache reads tables through it: the snapshot one
// loaded is the other's, not a second copy (a stream's compaction shares its stream's).
TEST_F(SessionTest, SharesAnotherSessionsSnapshotCache) {
  CreateTable("t", {"SELECT 1 AS x", "SELECT 2 AS x"});
  const std::string location = dir_.str() + "/t";
  ASSERT_OK_AND_ASSIGN(auto first, session_->context().LoadTable(location));
  SessionOptions options = session_->options();
  options.snapshots = session_->snapshot_cache();
  ASSERT_OK_AND_ASSIGN(auto sharing, Session::Open(options));
  EXPECT_EQ(sharing->snapshot_cache(), session_->snapshot_cache());
  ASSERT_OK_AND_ASSIGN(auto shared, sharing->context().LoadTable(location));
  EXPECT_EQ(shared.get(), first.get());
  ASSERT_OK_AND_ASSIGN(auto own, Session::Open(session_->options()));
  ASSERT_OK_AND_ASSIGN(auto apart, own->context().LoadTable(location));
  EXPECT_NE(apart.get(), first.get());
  EXPECT_EQ(apart->version, first->version);
}

TEST_F(SessionTest, DescribeHistoryAndDetail) {
  CreateTable("t", {"SELECT 1 AS x", "SELECT 2 AS x", "SELECT 3 AS x"});
  engine::QueryResult history = One("DESCRIBE HISTORY delta_scan('t') LIMIT 2");
  ASSERT_EQ(history.row_count(), 2u);
  EXPECT_EQ(history.column_names[0], "version");
  EXPECT_EQ(history.at(0, 0), "2");
  EXPECT_EQ(history.at(0, 2), "WRITE");
  EXPECT_EQ(One("describe history delta_scan('t')").row_count(), 3u);

  engine::QueryResult detail = One("DESCRIBE DETAIL delta_scan('t')");
  ASSERT_EQ(detail.row_count(), 1u);
  auto column = [&](const std::string& name) {
    for (size_t c = 0; c < detail.column_count(); c++) {
      if (detail.column_names[c] == name) return detail.at(0, c);
    }
    return std::optional<std::string>();
  };
  EXPECT_EQ(column("version"), "2");
  EXPECT_EQ(column("numFiles"), "3");
  EXPECT_EQ(column("numRecords"), "3");
}

TEST_F(SessionTest, ErrorsNameTheStatementAndTable) {
  auto r = session_->Execute("SELECT 1; SELECT * FROM delta_scan('missing_table')");
  ASSERT_ERROR_CODE(r, kNotFound);
  EXPECT_NE(r.status().message().find("statement 2"), std::string::npos) << r.status().ToString();
  EXPECT_NE(r.status().message().find("missing_table"), std::string::npos) << r.status().ToString();
}

// A catalog entry with a mistyped field reaches the user as Corruption naming the file,
// whether the name is resolved by Basin (DROP) or by DuckDB's binder (SELECT).
// DROP TABLE racing CREATE TABLE of the same name, from two sessions: the DROP removes the
// incarnation it looked up, never the files of the table created meanwhile, which stays
// readable with its rows.
TEST_F(SessionTest, DropRacingCreateOfTheSameNameKeepsTheNewTable) {
  SessionOptions options;
  options.warehouse_dir = dir_.str();
  ASSERT_OK_AND_ASSIGN(auto dropper, Session::Open(options));
  ASSERT_OK_AND_ASSIGN(auto creator, Session::Open(options));
  constexpr int kRounds = 25;
  for (int round = 0; round < kRounds; round++) {
    SCOPED_TRACE("round " + std::to_string(round));
    Run("CREATE TABLE t AS SELECT range AS id FROM range(100)");
    Status dropped;
    Status created = Status::Internal("not run");
    std::thread drop([&] { dropped = dropper->Execute("DROP TABLE t").status(); });
    std::thread create([&] {
      // Until the DROP frees the name; bounded so a lost DROP cannot hang the test.
      const std::string sql =
          "CREATE TABLE t AS SELECT range + " + std::to_string(round * 1000) + " AS id FROM range(50)";
      for (int tries = 1; tries <= 20000; tries++) {
        created = creator->Execute(sql).status();
        if (!created.IsAlreadyExists()) return;
      }
    });
    drop.join();
    create.join();
    ASSERT_OK(dropped);
    ASSERT_OK(created);
    auto rows = session_->Execute("SELECT count(*), sum(id) FROM t");
    ASSERT_OK(rows.status());
    ASSERT_EQ(rows->size(), 1u);
    EXPECT_EQ((*rows)[0].result.at(0, 0), "50");
    EXPECT_EQ((*rows)[0].result.at(0, 1), std::to_string(50 * round * 1000 + 49 * 50 / 2));
    Run("DROP TABLE t");
  }
  // Every incarnation's folder went with its DROP.
  std::vector<std::string> left;
  if (std::filesystem::exists(dir_.path() / "default")) {
    for (const auto& item : std::filesystem::recursive_directory_iterator(dir_.path() / "default")) {
      left.push_back(item.path().string());
    }
  }
  EXPECT_TRUE(left.empty()) << left.size() << " files or folders left, e.g. "
                            << (left.empty() ? "" : left[0]);
}

// Checkpoints are written after the commit returns (delta::CheckpointWorker): every one is
// on storage once the session is closed, and a DROP TABLE waits for its table's, so that a
// late checkpoint cannot bring the dropped table's folder back.
TEST_F(SessionTest, BackgroundCheckpointsAreWrittenBeforeDropAndClose) {
  namespace fs = std::filesystem;
  const fs::path log = dir_.path() / "default" / "t" / "_delta_log";
  for (int round = 0; round < 10; round++) {
    SCOPED_TRACE("round " + std::to_string(round));
    Run("CREATE TABLE t (id BIGINT) TBLPROPERTIES ('delta.checkpointInterval' = '1')");
    Run("INSERT INTO t VALUES (1)");
    Run("DROP TABLE t");
    ASSERT_FALSE(fs::exists(log / "00000000000000000001.checkpoint.parquet"));
    ASSERT_FALSE(fs::exists(dir_.path() / "default" / "t"));
  }
  Run("CREATE TABLE t (id BIGINT) TBLPROPERTIES ('delta.checkpointInterval' = '2')");
  for (int i = 0; i < 4; i++) Run("INSERT INTO t VALUES (" + std::to_string(i) + ")");
  session_.reset();
  EXPECT_TRUE(fs::exists(log / "00000000000000000002.checkpoint.parquet"));
  EXPECT_TRUE(fs::exists(log / "00000000000000000004.checkpoint.parquet"));
  std::ifstream last(log / "_last_checkpoint");
  std::string text((std::istreambuf_iterator<char>(last)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\"version\":4"), std::string::npos) << text;
}

TEST_F(SessionTest, CorruptCatalogEntryIsCorruptionNotInternal) {
  Run("CREATE TABLE t AS SELECT 1 AS x");
  std::ofstream(dir_.str() + "/_basin_catalog/default/t.json")
      << R"({"location": "default/t", "external": "no"})";
  for (const char* sql : {"SELECT * FROM t", "DROP TABLE t", "SHOW TABLES"}) {
    auto r = session_->Execute(sql);
    SCOPED_TRACE(sql);
    ASSERT_ERROR_CODE(r, kCorruption);
    EXPECT_NE(r.status().message().find("_basin_catalog/default/t.json"), std::string::npos)
        << r.status().ToString();
  }
}

TEST_F(SessionTest, TempTablesAreDroppedAfterEachStatement) {
  SKIP_WITHOUT_SHARED_TESTDATA(testdata);
  std::string path = (testdata / "delta/delta-kernel-rs/with-short-dv").string();
  EXPECT_EQ(One("SELECT count(*) FROM delta_scan(" + engine::QuoteLiteral(path) + ")").at(0, 0), "7");
  EXPECT_EQ(One("SELECT count(*) FROM duckdb_tables() WHERE temporary").at(0, 0), "0");
}

// Skipping must never change a result, and must actually skip on selective predicates.
TEST_F(SessionTest, SkippingNeverChangesResultsAndReadsFewerFiles) {
  std::vector<std::string> commits;
  for (int f = 0; f < 24; f++) {
    std::string base = std::to_string(f * 10);
    commits.push_back("SELECT (" + base + " + i)::BIGINT AS id, 'name' || lpad((" + base +
                      " + i)::VARCHAR, 4, '0') AS name, CASE WHEN i = 3 THEN NULL ELSE (" + base +
                      " + i) * 0.5 END AS score, DATE '2024-01-01' + (" + base + " + i)::INT AS day, " +
                      std::to_string(f % 4) + " AS part FROM range(10) t(i)");
  }
  CreateTable("many", commits, {"part"});
  CreateTable("small", {"SELECT i::BIGINT AS id FROM range(0, 240, 7) t(i)"});
  const std::vector<std::string> predicates = {
      "id = 57",
      "id < 15",
      "15 >= id",
      "id > 230",
      "id BETWEEN 100 AND 119",
      "id IN (3, 150, 999)",
      "id <> 5",
      "score IS NULL AND id < 50",
      "score IS NOT NULL",
      "name = 'name0042'",
      "name > 'name0200'",
      "day = DATE '2024-03-01'",
      "day < '2024-01-05'",
      "part = 2",
      "part = 1 AND id < 100",
      "id = 5 OR id = 200",
      "id = 5 OR name = 'name0200'",
      "(id < 10 OR day > DATE '2024-08-20') AND score IS NOT NULL",
      "NOT (id > 20 OR name IS NULL)",
      "id = 5 OR lower(name) = 'name0100'",
      "NOT (id = 5)",
      "id = 12.5",
      "score > 100.25",
      "m.id = 57",
      "s.id = 57",
  };
  int skipped_somewhere = 0;
  for (const std::string& predicate : predicates) {
    for (const std::string& query :
         {"SELECT id, name, score, day, part FROM delta_scan('many') m WHERE " + predicate + " ORDER BY ALL",
          "SELECT m.id, s.id FROM delta_scan('many') m JOIN delta_scan('small') s ON m.id = s.id WHERE " +
              predicate + " ORDER BY ALL",
          "SELECT s.id, m.id FROM delta_scan('small') s LEFT JOIN delta_scan('many') m ON m.id = s.id "
          "WHERE " +
              predicate + " ORDER BY ALL"}) {
      if (query.find("m.id = 57") != std::string::npos && query.find(" m ") == std::string::npos) continue;
      SessionOptions off_options;
      off_options.warehouse_dir = dir_.str();
      off_options.data_skipping = false;
      ASSERT_OK_AND_ASSIGN(auto off, Session::Open(off_options));
      auto with = session_->Execute(query);
      auto without = off->Execute(query);
      ASSERT_EQ(with.ok(), without.ok()) << query;
      if (!with.ok()) continue;  // e.g. s.id in the single-table query
      EXPECT_EQ((*with)[0].result.rows, (*without)[0].result.rows) << query;
      EXPECT_EQ((*without)[0].files_read, (*without)[0].files_total);
      EXPECT_LE((*with)[0].files_read, (*without)[0].files_read);
      if ((*with)[0].files_read < (*without)[0].files_read) skipped_somewhere++;
    }
  }
  EXPECT_GE(skipped_somewhere, 15);
  auto point = session_->Execute("SELECT * FROM delta_scan('many') WHERE id = 57");
  ASSERT_OK(point.status());
  EXPECT_EQ((*point)[0].files_read, 1u);
  EXPECT_EQ((*point)[0].files_total, 24u);

  // Filters DuckDB derives: an IN list, and the bounds a join's build side gives its probe
  // side while the query runs.
  for (const char* query : {
           "SELECT id FROM delta_scan('many') WHERE id IN (5, 57)",
           "SELECT m.id FROM delta_scan('many') m JOIN (VALUES (57), (58)) v(x) ON m.id = v.x",
           "SELECT id FROM delta_scan('many') WHERE id IN (SELECT 57 UNION ALL SELECT 58)",
       }) {
    auto derived = session_->Execute(query);
    ASSERT_TRUE(derived.ok()) << query << ": " << derived.status().ToString();
    EXPECT_FALSE((*derived)[0].result.rows.empty()) << query;
    EXPECT_LT((*derived)[0].files_read, 24u) << query;
    EXPECT_EQ((*derived)[0].files_total, 24u) << query;
  }

  // An OR across columns is no table filter: it is skipped on when the plan is made.
  auto across =
      session_->Execute("SELECT id FROM delta_scan('many') WHERE id = 5 OR name = 'name0200' ORDER BY id");
  ASSERT_OK(across.status());
  ASSERT_EQ((*across)[0].result.row_count(), 2u);
  EXPECT_EQ((*across)[0].result.at(0, 0), "5");
  EXPECT_EQ((*across)[0].result.at(1, 0), "200");
  EXPECT_EQ((*across)[0].files_read, 2u);
  EXPECT_EQ((*across)[0].files_total, 24u);
  auto plan =
      session_->Execute("EXPLAIN SELECT id FROM delta_scan('many') WHERE id = 5 OR name = 'name0200'");
  ASSERT_OK(plan.status());
  ASSERT_EQ((*plan)[0].result.row_count(), 1u);
  EXPECT_NE((*plan)[0].result.at(0, 1)->find("Files: 2 of 24"), std::string::npos)
      << *(*plan)[0].result.at(0, 1);

  // An INSERT reports what its query's scans read, as a SELECT does.
  ASSERT_OK(
      session_->Execute("CREATE TABLE picked AS SELECT id FROM delta_scan('many') WHERE false").status());
  auto insert = session_->Execute("INSERT INTO picked SELECT id FROM delta_scan('many') WHERE id = 57");
  ASSERT_OK(insert.status());
  EXPECT_EQ((*insert)[0].files_read, 1u);
  EXPECT_EQ((*insert)[0].files_total, 24u);
  EXPECT_EQ(One("SELECT count(*) FROM picked").at(0, 0), "1");
}

}  // namespace
}  // namespace basin::sql
