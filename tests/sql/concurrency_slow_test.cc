// Concurrency through the SQL layer: several processes, each with its own sql::Session on
// one warehouse, run INSERT, MERGE and OPTIMIZE on one table at once. Every statement must
// either commit or fail with Conflict; afterwards the table at every version holds exactly
// what the successful statements, replayed in commit order, produce: every row once, none
// from a failed statement, every MERGE's markers where it left them.
//
// The children are this binary run again (testing::SpawnTestChild: the parent has DuckDB
// open, so no fork) with only the hidden test SqlConcurrencyChild.DISABLED_Run and a JSON
// spec in $BASIN_SQL_CONCURRENCY_CHILD. Each child logs one JSON line per statement; the
// parent replays the logs. The racing test prints its seeds; BASIN_TEST_SEED=n runs only n.
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "sql/session.h"
#include "testing/child_process.h"
#include "testing/interop.h"
#include "testing/test_util.h"

namespace basin::sql {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr const char* kSpecEnv = "BASIN_SQL_CONCURRENCY_CHILD";
constexpr const char* kChildTest = "SqlConcurrencyChild.DISABLED_Run";
constexpr const char* kCreateTable = "CREATE TABLE t (id BIGINT, marker BIGINT, origin VARCHAR)";
constexpr int64_t kChildTimeoutMs = 240000;  // a hung child fails the test rather than hanging it
constexpr int64_t kBarrierTimeoutMs = 120000;

// Id ranges are disjoint per writer, so an id says which statement may have written it.
constexpr int64_t kInitialRows = 200;          // [0, 200), origin 'init', inserted before the race
constexpr int64_t kMergeIdBase = 500000;       // MERGE's inserts, origin 'm', below the writers' ids
constexpr int64_t kWriterIdBase = 1000000;     // inserter p: from (p + 1) * kWriterIdBase
constexpr int64_t kMergeHighIdBase = 9000000;  // MERGE's inserts above the writers' ids

constexpr int kRacingSeedsPerMode = 3;
constexpr int64_t kRaceMs = 3000;

// A statement log entry (one JSON object):
//   kind      create | insert | merge | optimize
//   sql       the statement; process: who ran it
//   ok        committed (or had nothing to commit); false: failed with Conflict
//   error     the Conflict's message, when !ok
//   version   the version committed; null when nothing was (OPTIMIZE with nothing to do)
//   inserted  ids the statement adds, with `origin` and marker `marker` (0 for INSERT)
//   updated   ids whose marker the statement (MERGE) sets to `marker`
//   result    the statement's result row, column -> text

// Runs one statement given as a log entry without its outcome, and fills the outcome in.
// A Conflict is an outcome; any other failure is the returned error.
Result<json> RunStatement(Session& session, json entry) {
  const std::string sql = entry["sql"].get<std::string>();
  auto results = session.Execute(sql);
  if (!results.ok()) {
    if (!results.status().IsConflict()) return results.status().WithContext(sql);
    entry["ok"] = false;
    entry["error"] = results.status().ToString();
    return entry;
  }
  entry["ok"] = true;
  json row = json::object();
  if (!results->empty() && results->back().result.row_count() == 1) {
    const engine::QueryResult& r = results->back().result;
    for (size_t c = 0; c < r.column_count(); c++) {
      row[r.column_names[c]] = r.at(0, c) ? json(*r.at(0, c)) : json(nullptr);
    }
  }
  entry["result"] = row;
  entry["version"] = nullptr;
  if (row.contains("version") && row["version"].is_string())
    entry["version"] = std::stoll(row["version"].get<std::string>());
  return entry;
}

Result<engine::QueryResult> Query(Session& session, const std::string& sql) {
  ASSIGN_OR_RETURN(auto results, session.Execute(sql));
  if (results.empty()) return Status::Internal("no result for " + sql);
  return std::move(results.back().result);
}

std::string ValuesList(const std::vector<int64_t>& ids, const std::string& rest) {
  std::string out;
  for (int64_t id : ids)
    out += std::string(out.empty() ? "" : ", ") + "(" + std::to_string(id) + ", " + rest + ")";
  return out;
}

std::string ReadFileText(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// --- the children ---

// One child's work, as its spec says:
//   role        insert | merge | optimize
//   warehouse   the warehouse folder; the table is `t`
//   seed, index the random choices come from both
//   statements  insert: stop after this many committed (0: no limit)
//   run_ms      stop starting statements this long after the start signal
//   pause_ms    sleep up to this long (uniformly) between statements
//   id_base, origin   insert: first id and the origin column
//   ready_file, go_file, log   the start barrier and the statement log
class ChildRun {
 public:
  explicit ChildRun(json spec)
      : spec_(std::move(spec)),
        rng_(spec_["seed"].get<uint64_t>() * 1000003 + spec_["index"].get<uint64_t>()) {}

  Status Run() {
    SessionOptions options;
    options.warehouse_dir = spec_["warehouse"].get<std::string>();
    ASSIGN_OR_RETURN(session_, Session::Open(options));
    log_.open(spec_["log"].get<std::string>());
    if (!log_) return Status::IOError("cannot write " + spec_["log"].get<std::string>());
    RETURN_IF_ERROR(WaitForStart());
    const std::string role = spec_["role"].get<std::string>();
    if (role == "insert") return RunInserts();
    if (role == "merge") return RunMerges();
    if (role == "optimize") return RunOptimizes();
    return Status::InvalidArgument("unknown role " + role);
  }

 private:
  // Every child opens its session first, so the statements start together.
  Status WaitForStart() {
    std::ofstream(spec_["ready_file"].get<std::string>()).put('1');
    const fs::path go = spec_["go_file"].get<std::string>();
    auto give_up = Clock::now() + std::chrono::milliseconds(kBarrierTimeoutMs);
    while (!fs::exists(go)) {
      if (Clock::now() > give_up) return Status::Internal("no start signal " + go.string());
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    deadline_ = Clock::now() + std::chrono::milliseconds(spec_["run_ms"].get<int64_t>());
    return Status::OK();
  }

  bool TimeLeft() const { return Clock::now() < deadline_; }

  int64_t Uniform(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng_); }

  void Pause() {
    std::this_thread::sleep_for(std::chrono::milliseconds(Uniform(0, spec_["pause_ms"].get<int64_t>())));
  }

  Result<json> Run(json entry) {
    entry["process"] = spec_["role"].get<std::string>() + std::to_string(spec_["index"].get<int>());
    ASSIGN_OR_RETURN(json done, RunStatement(*session_, std::move(entry)));
    log_ << done.dump() << std::endl;
    return done;
  }

  // INSERTs of 1 to 4 new rows each, until `statements` have committed or time is up.
  Status RunInserts() {
    const int64_t wanted = spec_["statements"].get<int64_t>();
    const std::string origin = spec_["origin"].get<std::string>();
    int64_t next_id = spec_["id_base"].get<int64_t>();
    int64_t committed = 0;
    while ((wanted == 0 || committed < wanted) && TimeLeft()) {
      std::vector<int64_t> ids;
      for (int64_t n = Uniform(1, 4); n > 0; n--) ids.push_back(next_id++);
      json entry = {{"kind", "insert"},
                    {"sql", "INSERT INTO t VALUES " + ValuesList(ids, "0, '" + origin + "'")},
                    {"inserted", ids},
                    {"origin", origin},
                    {"marker", 0}};
      ASSIGN_OR_RETURN(json done, Run(std::move(entry)));
      if (done["ok"].get<bool>()) committed++;
      Pause();
    }
    if (wanted != 0 && committed < wanted) {
      return Status::Internal("committed " + std::to_string(committed) + " of " + std::to_string(wanted) +
                              " INSERTs in time");
    }
    return Status::OK();
  }

  // Upserts: existing ids (initial rows, this process's earlier inserts, now and then the
  // writer's rows) get the statement's marker, new ids are inserted. Only existing ids are
  // chosen for updates (nothing deletes rows), so each statement's updated and inserted row
  // counts are known in advance. The MERGE reads the key range of its source: new ids
  // below the writer's keep that range to the initial rows and its own, new ids above
  // them make it span the writer's files too, so that it reads (and, copy-on-write,
  // rewrites) files OPTIMIZE is compacting. The writer's blind appends never conflict
  // with it: tables are WriteSerializable (docs/transactions.md).
  Status RunMerges() {
    std::vector<int64_t> own;
    int64_t next_low_id = kMergeIdBase;
    int64_t next_high_id = kMergeHighIdBase;
    for (int64_t marker = 1; TimeLeft(); marker++) {
      std::set<int64_t> existing;
      for (int64_t n = Uniform(0, 3); n > 0; n--) existing.insert(Uniform(0, kInitialRows - 1));
      if (!own.empty()) {
        for (int64_t n = Uniform(0, 2); n > 0; n--) existing.insert(own[Uniform(0, own.size() - 1)]);
      }
      if (Uniform(0, 2) == 0) {
        ASSIGN_OR_RETURN(
            auto writer_rows,
            Query(*session_, "SELECT id FROM t WHERE origin = 'w' ORDER BY hash(id, " +
                                 std::to_string(marker) + ") LIMIT " + std::to_string(Uniform(1, 3))));
        for (const auto& row : writer_rows.rows) existing.insert(std::stoll(*row[0]));
      }
      std::vector<int64_t> fresh;
      int64_t& next_id = Uniform(0, 2) == 0 ? next_high_id : next_low_id;
      for (int64_t n = Uniform(existing.empty() ? 1 : 0, 3); n > 0; n--) fresh.push_back(next_id++);
      std::vector<int64_t> source(existing.begin(), existing.end());
      source.insert(source.end(), fresh.begin(), fresh.end());
      std::shuffle(source.begin(), source.end(), rng_);
      json entry = {
          {"kind", "merge"},
          {"sql", "MERGE INTO t USING (SELECT * FROM (VALUES " + ValuesList(source, std::to_string(marker)) +
                      ") v(id, marker)) AS s ON t.id = s.id "
                      "WHEN MATCHED THEN UPDATE SET marker = s.marker "
                      "WHEN NOT MATCHED THEN INSERT (id, marker, origin) VALUES (s.id, s.marker, 'm')"},
          {"updated", std::vector<int64_t>(existing.begin(), existing.end())},
          {"inserted", fresh},
          {"origin", "m"},
          {"marker", marker}};
      ASSIGN_OR_RETURN(json done, Run(std::move(entry)));
      if (done["ok"].get<bool>()) own.insert(own.end(), fresh.begin(), fresh.end());
      Pause();
    }
    return Status::OK();
  }

  Status RunOptimizes() {
    while (TimeLeft()) {
      ASSIGN_OR_RETURN(json done, Run(json{{"kind", "optimize"}, {"sql", "OPTIMIZE t"}}));
      Pause();
    }
    return Status::OK();
  }

  json spec_;
  std::mt19937_64 rng_;
  std::unique_ptr<Session> session_;
  std::ofstream log_;
  Clock::time_point deadline_;
};

// Runs only in the children the tests start.
TEST(SqlConcurrencyChild, DISABLED_Run) {
  const char* text = std::getenv(kSpecEnv);
  if (text == nullptr) GTEST_SKIP() << "runs only as a child of the SQL concurrency tests";
  json spec = json::parse(text, nullptr, false);
  ASSERT_FALSE(spec.is_discarded()) << text;
  ChildRun run(std::move(spec));
  ASSERT_OK(run.Run());
}

// --- the parent ---

// Whether a child has exited, without reaping it.
bool ChildExited(pid_t pid) {
  siginfo_t info{};
  return waitid(P_PID, pid, &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid == pid;
}

// Starts a child per spec, releases them together once all have their sessions open, waits
// for them, and appends their statement logs to `log`.
void RunChildren(const fs::path& dir, std::vector<json> specs, std::vector<json>* log) {
  const fs::path go = dir / "go";
  std::vector<pid_t> pids;
  std::vector<fs::path> outputs;
  for (size_t i = 0; i < specs.size(); i++) {
    json& spec = specs[i];
    spec["index"] = i;
    spec["ready_file"] = (dir / ("ready-" + std::to_string(i))).string();
    spec["go_file"] = go.string();
    spec["log"] = (dir / ("child-" + std::to_string(i) + ".jsonl")).string();
    outputs.push_back(dir / ("child-" + std::to_string(i) + ".out"));
    pid_t pid = basin::testing::SpawnTestChild(kChildTest, {std::string(kSpecEnv) + "=" + spec.dump()},
                                               outputs.back());
    ASSERT_GE(pid, 0) << "cannot start child " << i;
    pids.push_back(pid);
  }
  auto give_up = Clock::now() + std::chrono::milliseconds(kBarrierTimeoutMs);
  for (size_t i = 0; i < specs.size(); i++) {
    while (!fs::exists(specs[i]["ready_file"].get<std::string>()) && !ChildExited(pids[i]) &&
           Clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  std::ofstream(go).put('1');
  bool all_ok = true;
  for (size_t i = 0; i < specs.size(); i++) {
    int rc = basin::testing::WaitChildFor(pids[i], kChildTimeoutMs);
    all_ok = all_ok && rc == 0;
    EXPECT_EQ(rc, 0) << specs[i]["role"] << " child " << i << " failed; its output:\n"
                     << ReadFileText(outputs[i]);
  }
  ASSERT_TRUE(all_ok);
  for (const json& spec : specs) {
    std::ifstream in(spec["log"].get<std::string>());
    for (std::string line; std::getline(in, line);) {
      json entry = json::parse(line, nullptr, false);
      ASSERT_FALSE(entry.is_discarded()) << "bad log line: " << line;
      log->push_back(std::move(entry));
    }
  }
}

// Runs a statement of the parent's setup, which must commit, and logs it.
void RunSetup(Session& session, json entry, std::vector<json>* log) {
  entry["process"] = "setup";
  ASSERT_OK_AND_ASSIGN(json done, RunStatement(session, std::move(entry)));
  ASSERT_TRUE(done["ok"].get<bool>()) << done.dump();
  log->push_back(std::move(done));
}

struct Row {
  int64_t marker = 0;
  std::string origin;
  bool operator==(const Row&) const = default;
};

// Replays the committed statements of `log` in version order and checks the table `t`
// against it: the log's versions are exactly the table's, with the operations the
// statements name; every version reads back with the rows, ids and markers the replay
// expects; the latest holds exactly the expected rows. Returns the expected row count.
void CheckAgainstLog(Session& session, const std::vector<json>& log, int64_t* live_rows) {
  std::map<int64_t, const json*> by_version;
  std::map<int64_t, std::string> failed_ids;  // id -> the failed statement that held it
  for (const json& entry : log) {
    if (!entry["ok"].get<bool>()) {
      for (const json& id : entry.value("inserted", json::array()))
        failed_ids[id.get<int64_t>()] = entry["sql"].get<std::string>();
      continue;
    }
    if (entry["version"].is_null()) continue;
    int64_t version = entry["version"].get<int64_t>();
    ASSERT_TRUE(by_version.emplace(version, &entry).second)
        << "two statements report version " << version << ":\n"
        << by_version[version]->dump() << "\n"
        << entry.dump();
  }

  ASSERT_OK_AND_ASSIGN(auto history, Query(session, "DESCRIBE HISTORY t"));
  const std::map<std::string, std::string> operations = {
      {"insert", "WRITE"}, {"merge", "MERGE"}, {"optimize", "OPTIMIZE"}, {"create", "CREATE TABLE"}};
  for (size_t r = 0; r < history.row_count(); r++) {
    int64_t version = std::stoll(*history.at(r, 0));
    auto it = by_version.find(version);
    ASSERT_NE(it, by_version.end()) << "version " << version << " (" << history.at(r, 2).value_or("?")
                                    << ") was committed by no successful statement";
    EXPECT_EQ(history.at(r, 2).value_or(""), operations.at((*it->second)["kind"].get<std::string>()))
        << "version " << version << ": " << it->second->dump();
  }
  ASSERT_EQ(history.row_count(), by_version.size())
      << "the log has " << history.row_count() << " commits, successful statements report "
      << by_version.size();

  std::map<int64_t, Row> rows;  // the replayed table
  for (const auto& [version, entry] : by_version) {
    const json& e = *entry;
    SCOPED_TRACE("version " + std::to_string(version) + ": " + e.dump());
    int64_t marker = e.value("marker", int64_t{0});
    for (const json& id : e.value("updated", json::array())) {
      auto it = rows.find(id.get<int64_t>());
      ASSERT_NE(it, rows.end()) << "the test updates only existing ids";
      it->second.marker = marker;
    }
    for (const json& id : e.value("inserted", json::array())) {
      ASSERT_TRUE(rows.emplace(id.get<int64_t>(), Row{marker, e["origin"].get<std::string>()}).second)
          << "the test inserts only new ids";
    }
    if (e["kind"] == "merge") {
      EXPECT_EQ(e["result"].value("num_updated_rows", ""), std::to_string(e["updated"].size()));
      EXPECT_EQ(e["result"].value("num_inserted_rows", ""), std::to_string(e["inserted"].size()));
    }
    // The table at this version: row count, distinct ids, and checksums of ids and markers.
    int64_t id_sum = 0;
    int64_t marker_sum = 0;
    for (const auto& [id, row] : rows) {
      id_sum += id;
      marker_sum += (id % 9973 + 1) * (row.marker + 1);
    }
    ASSERT_OK_AND_ASSIGN(auto got,
                         Query(session,
                               "SELECT count(*), count(DISTINCT id), coalesce(sum(id), 0), "
                               "coalesce(sum((id % 9973 + 1) * (marker + 1)), 0) FROM t VERSION AS OF " +
                                   std::to_string(version)));
    std::vector<std::string> expected = {std::to_string(rows.size()), std::to_string(rows.size()),
                                         std::to_string(id_sum), std::to_string(marker_sum)};
    std::vector<std::string> actual;
    for (const auto& cell : got.rows.at(0)) actual.push_back(cell.value_or("NULL"));
    ASSERT_EQ(actual, expected) << "rows, distinct ids, id sum, marker checksum at version " << version;
  }

  // The latest version row by row, for a precise report.
  ASSERT_OK_AND_ASSIGN(auto latest, Query(session, "SELECT id, marker, origin FROM t ORDER BY id, marker"));
  std::map<int64_t, std::vector<Row>> actual;
  for (const auto& r : latest.rows)
    actual[std::stoll(*r[0])].push_back(Row{std::stoll(r[1].value_or("-1")), r[2].value_or("NULL")});
  int reported = 0;
  auto report = [&](const std::string& what) {
    if (reported++ < 20) ADD_FAILURE() << what;
  };
  for (const auto& [id, found] : actual) {
    auto it = rows.find(id);
    if (it == rows.end()) {
      auto failed = failed_ids.find(id);
      report("id " + std::to_string(id) + " present but no successful statement wrote it" +
             (failed == failed_ids.end() ? std::string() : "; it is from the failed " + failed->second));
    } else if (found.size() != 1) {
      report("id " + std::to_string(id) + " present " + std::to_string(found.size()) + " times");
    } else if (!(found[0] == it->second)) {
      report("id " + std::to_string(id) + " holds marker " + std::to_string(found[0].marker) + " origin " +
             found[0].origin + ", expected marker " + std::to_string(it->second.marker) + " origin " +
             it->second.origin);
    }
  }
  for (const auto& [id, row] : rows) {
    if (!actual.contains(id)) report("id " + std::to_string(id) + " (origin " + row.origin + ") is missing");
  }
  *live_rows = static_cast<int64_t>(rows.size());
}

std::map<std::string, std::map<std::string, int>> Outcomes(const std::vector<json>& log) {
  std::map<std::string, std::map<std::string, int>> out;  // kind -> outcome -> count
  for (const json& e : log) {
    std::string outcome = !e["ok"].get<bool>() ? "conflict" : e["version"].is_null() ? "no-op" : "committed";
    out[e["kind"].get<std::string>()][outcome]++;
  }
  return out;
}

// "insert: 30 committed 2 conflict ..." and the first Conflict message of each kind.
std::string Describe(const std::vector<json>& log) {
  std::map<std::string, std::map<std::string, int>> outcomes = Outcomes(log);
  std::string out;
  for (const auto& [kind, counts] : outcomes) {
    out += " " + kind + ":";
    for (const auto& [outcome, n] : counts) out += " " + std::to_string(n) + " " + outcome;
  }
  // Conflicts by kind and by the Delta exception they correspond to (or "other"), with
  // the first message of each.
  std::map<std::pair<std::string, std::string>, std::pair<int, std::string>> conflicts;
  for (const json& e : log) {
    if (e["ok"].get<bool>()) continue;
    const std::string error = e["error"].get<std::string>();
    const std::string marker = "[Delta Lake: ";
    size_t at = error.find(marker);
    std::string type = at == std::string::npos
                           ? "other"
                           : error.substr(at + marker.size(), error.find(']', at) - at - marker.size());
    auto& [count, first] = conflicts[{e["kind"].get<std::string>(), type}];
    if (count++ == 0) first = error;
  }
  for (const auto& [key, found] : conflicts) {
    out +=
        "\n  " + key.first + " " + key.second + " x" + std::to_string(found.first) + ", e.g. " + found.second;
  }
  return out;
}

// Whether any commit of the table at `location` carries a deletion vector.
bool LogHasDeletionVectors(const fs::path& location) {
  for (const auto& file : fs::directory_iterator(location / "_delta_log")) {
    if (file.path().extension() == ".json" &&
        ReadFileText(file.path()).find("\"deletionVector\":{") != std::string::npos) {
      return true;
    }
  }
  return false;
}

// Four processes commit 50 INSERTs each at once: 200 appends after the CREATE, every row
// once, every version readable. Blind appends never conflict with each other, but an
// INSERT can lose all of its commit attempts (TransactionOptions::max_attempts) to the
// other writers and fail with Conflict; its process then goes on with new ids, so that it
// still commits 50, and the failed statement's ids must be absent.
TEST(SqlConcurrencyTest, FourProcessesInsertFiftyTimesEach) {
  constexpr int kProcesses = 4;
  constexpr int kInsertsEach = 50;
  basin::testing::TempDir dir;
  SessionOptions options;
  options.warehouse_dir = (dir.path() / "warehouse").string();
  ASSERT_OK_AND_ASSIGN(auto session, Session::Open(options));
  std::vector<json> log;
  ASSERT_NO_FATAL_FAILURE(RunSetup(*session, json{{"kind", "create"}, {"sql", kCreateTable}}, &log));

  std::vector<json> specs;
  for (int p = 0; p < kProcesses; p++) {
    specs.push_back(json{{"role", "insert"},
                         {"warehouse", options.warehouse_dir},
                         {"seed", 42},
                         {"statements", kInsertsEach},
                         {"run_ms", kChildTimeoutMs / 2},
                         {"pause_ms", 0},
                         {"id_base", (p + 1) * kWriterIdBase},
                         {"origin", "p" + std::to_string(p)}});
  }
  ASSERT_NO_FATAL_FAILURE(RunChildren(dir.path(), specs, &log));
  auto outcomes = Outcomes(log);
  std::printf("[ info ]%s\n", Describe(log).c_str());
  EXPECT_EQ(outcomes["insert"]["committed"], kProcesses * kInsertsEach);

  int64_t live_rows = 0;
  ASSERT_NO_FATAL_FAILURE(CheckAgainstLog(*session, log, &live_rows));
  ASSERT_INTEROP((dir.path() / "warehouse" / "default" / "t").string(), live_rows);
}

// A writer appending, a MERGE upserting and an OPTIMIZE compacting one table at once, on a
// table with deletion vectors and on a copy-on-write one.
class SqlRacingTest : public ::testing::TestWithParam<bool> {};

std::vector<uint64_t> RacingSeeds() {
  if (const char* fixed = std::getenv("BASIN_TEST_SEED")) return {std::stoull(fixed)};
  std::random_device device;
  std::vector<uint64_t> seeds;
  for (int i = 0; i < kRacingSeedsPerMode; i++) seeds.push_back(device() % 1000000);
  return seeds;
}

TEST_P(SqlRacingTest, AppendMergeOptimize) {
  const bool deletion_vectors = GetParam();
  for (uint64_t seed : RacingSeeds()) {
    std::printf("[ seed ] BASIN_TEST_SEED=%llu (%s)\n", static_cast<unsigned long long>(seed),
                deletion_vectors ? "deletion vectors" : "copy-on-write");
    SCOPED_TRACE("BASIN_TEST_SEED=" + std::to_string(seed));
    basin::testing::TempDir dir;
    SessionOptions options;
    options.warehouse_dir = (dir.path() / "warehouse").string();
    const fs::path location = dir.path() / "warehouse" / "default" / "t";
    ASSERT_OK_AND_ASSIGN(auto session, Session::Open(options));
    std::vector<json> log;
    ASSERT_NO_FATAL_FAILURE(RunSetup(
        *session,
        json{{"kind", "create"},
             {"sql", std::string(kCreateTable) + " TBLPROPERTIES ('delta.enableDeletionVectors' = '" +
                         (deletion_vectors ? "true" : "false") + "')"}},
        &log));
    // The initial rows in a few files, so that the first OPTIMIZE has work.
    for (int64_t from = 0; from < kInitialRows; from += kInitialRows / 4) {
      std::vector<int64_t> ids;
      for (int64_t id = from; id < from + kInitialRows / 4; id++) ids.push_back(id);
      ASSERT_NO_FATAL_FAILURE(
          RunSetup(*session,
                   json{{"kind", "insert"},
                        {"sql", "INSERT INTO t SELECT range, 0, 'init' FROM range(" + std::to_string(from) +
                                    ", " + std::to_string(ids.back() + 1) + ")"},
                        {"inserted", ids},
                        {"origin", "init"},
                        {"marker", 0}},
                   &log));
    }

    json common = {
        {"warehouse", options.warehouse_dir}, {"seed", seed}, {"run_ms", kRaceMs}, {"statements", 0}};
    json writer = common;
    writer.update(json{{"role", "insert"}, {"pause_ms", 100}, {"id_base", kWriterIdBase}, {"origin", "w"}});
    json merger = common;
    merger.update(json{{"role", "merge"}, {"pause_ms", 50}});
    json optimizer = common;
    optimizer.update(json{{"role", "optimize"}, {"pause_ms", 400}});
    ASSERT_NO_FATAL_FAILURE(RunChildren(dir.path(), {writer, merger, optimizer}, &log));
    auto outcomes = Outcomes(log);
    std::printf("[ info ] seed %llu:%s\n", static_cast<unsigned long long>(seed), Describe(log).c_str());

    int64_t live_rows = 0;
    ASSERT_NO_FATAL_FAILURE(CheckAgainstLog(*session, log, &live_rows));
    // The race proves little unless each kind of statement committed at least once.
    EXPECT_GT(outcomes["merge"]["committed"], 0);
    EXPECT_GT(outcomes["insert"]["committed"], 4);
    if (outcomes["merge"]["committed"] > 0) {
      EXPECT_EQ(LogHasDeletionVectors(location), deletion_vectors);
    }
    ASSERT_INTEROP(location.string(), live_rows);
  }
}

INSTANTIATE_TEST_SUITE_P(TableModes, SqlRacingTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "DeletionVectors" : "CopyOnWrite";
                         });

}  // namespace
}  // namespace basin::sql
