// Crash safety of the Delta writer: writers killed with SIGKILL, a store failing random
// calls, and a store losing its unsynced writes, at random points of commits and
// checkpoints, must leave a table that reads back exactly its committed versions.
//
// Every commit attempt is described before Commit() runs (its commitInfo.txnId, the one
// file it adds, the files it removes), so each version found in the log can be matched to
// what a writer meant, and each version's rows checked by content against the commits up
// to it. BASIN_CRASH_SEED=<seed> repeats a run's random choices (faults, rows, kill delays;
// where a kill lands still depends on the machine's speed).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "delta/log_segment.h"
#include "engine/parquet_writer.h"
#include "engine/scan.h"
#include "storage/faulty_object_store.h"
#include "transaction_test_util.h"

namespace basin::delta {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using testing::TableFixture;

// Checkpoints after every third commit, so kills and faults often land in one.
constexpr int64_t kCheckpointInterval = 3;
const std::map<std::string, std::string> kConfiguration = {
    {"delta.checkpointInterval", std::to_string(kCheckpointInterval)}};
constexpr char kDay[] = "2024-01-01";  // the partition every row is in

uint64_t TestSeed(const char* test) {
  uint64_t seed = 0;
  if (const char* env = std::getenv("BASIN_CRASH_SEED")) {
    seed = std::strtoull(env, nullptr, 10);
  } else {
    std::random_device rd;
    seed = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  }
  std::printf("%s: seed %llu (BASIN_CRASH_SEED=%llu repeats this run)\n", test,
              static_cast<unsigned long long>(seed), static_cast<unsigned long long>(seed));
  return seed;
}

// One commit attempt as its writer meant it: an append of the ids [first_id, end_id) as
// one new file, or (with `removes`) a rewrite moving those files' rows into one new file.
struct Intent {
  std::string txn_id;
  std::string add_path;
  std::vector<std::string> removes;
  int64_t first_id = 0;
  int64_t end_id = 0;

  json ToJson() const {
    return {{"txn", txn_id}, {"add", add_path}, {"removes", removes}, {"ids", {first_id, end_id}}};
  }
  static std::optional<Intent> FromJson(const json& j) {
    if (!j.is_object() || !j.contains("add")) return std::nullopt;
    Intent intent;
    intent.txn_id = j.value("txn", "");
    intent.add_path = j.value("add", "");
    intent.removes = j.value("removes", std::vector<std::string>());
    auto ids = j.value("ids", std::vector<int64_t>());
    if (ids.size() != 2) return std::nullopt;
    intent.first_id = ids[0];
    intent.end_id = ids[1];
    return intent;
  }
};

struct PreparedCommit {
  std::unique_ptr<Transaction> txn;
  Intent intent;
};

// Loads the latest version and prepares the next commit: mostly an append of 1-20 new
// rows; one time in three, when there are files enough, a rewrite of 2-4 live files into
// one, so replay and checkpoints deal with removes and tombstones too.
Result<PreparedCommit> PrepareCommit(TableFixture& table, const TransactionOptions& options,
                                     std::mt19937_64& rng, int64_t& next_id) {
  ASSIGN_OR_RETURN(auto snapshot, table.Load());
  PreparedCommit out;
  out.txn = std::make_unique<Transaction>(snapshot, options);
  out.intent.txn_id = out.txn->txn_id();
  std::string select;
  std::optional<engine::ScanPlan> rewrite;
  if (snapshot->files.size() >= 2 && rng() % 3 == 0) {
    std::vector<size_t> picked(snapshot->files.size());
    std::iota(picked.begin(), picked.end(), 0);
    std::shuffle(picked.begin(), picked.end(), rng);
    picked.resize(std::min<size_t>(picked.size(), 2 + rng() % 3));
    std::vector<AddFile> read;
    for (size_t i : picked) {
      read.push_back(snapshot->files[i]);
      out.txn->Remove(RemoveOf(snapshot->files[i], /*data_change=*/false));
      out.intent.removes.push_back(snapshot->files[i].path);
    }
    out.txn->ReadFiles(read);
    out.txn->SetOperation("OPTIMIZE");
    engine::ScanOptions scan;
    scan.file_indexes = std::move(picked);
    ASSIGN_OR_RETURN(rewrite, engine::BuildScanSql(*snapshot, table.conn(), scan));
    select = "SELECT id, day FROM (" + rewrite->sql + ")";
  } else {
    const int64_t rows = 1 + static_cast<int64_t>(rng() % 20);
    out.intent.first_id = next_id;
    out.intent.end_id = next_id + rows;
    next_id += rows;
    select = "SELECT range AS id, '" + std::string(kDay) + "' AS day FROM range(" +
             std::to_string(out.intent.first_id) + ", " + std::to_string(out.intent.end_id) + ")";
  }
  engine::WriteOptions write;
  write.partition_columns = {"day"};
  auto adds = engine::WriteDataFiles(table.conn(), select, *table.store(), write);
  if (!adds.ok()) return adds.status();
  if (adds->size() != 1)
    return Status::Internal("expected one data file, got " + std::to_string(adds->size()));
  AddFile add = std::move(adds->front());
  add.data_change = !rewrite.has_value();
  out.intent.add_path = add.path;
  out.txn->Add(std::move(add));
  return out;
}

template <typename Container>
std::string Join(const Container& items) {
  std::ostringstream out;
  for (const auto& item : items) out << (out.tellp() > 0 ? ", " : "") << item;
  return "[" + out.str() + "]";
}

// The table the log should hold, rebuilt from the commits in it and the intents they were
// written from. A commit that matches no intent, repeats one, or holds only part of one
// is an error naming its version.
class Oracle {
 public:
  void AddIntent(const Intent& intent) { intents_[intent.txn_id] = intent; }

  // Reads every commit file of the log in `store`, version by version.
  Status Replay(ObjectStore& store) {
    live_.assign(1, {});  // version 0 creates the table, with no files
    landed_.clear();
    ASSIGN_OR_RETURN(LogListing listing, ListLog(store));
    if (listing.empty()) return Status::Corruption("the log is empty");
    const int64_t latest = listing.latest_version();
    for (int64_t v = 1; v <= latest; v++) {
      auto content = store.Get(CommitKey(v));
      if (!content.ok())
        return content.status().WithContext("version " + std::to_string(v) + " of " + std::to_string(latest));
      ASSIGN_OR_RETURN(auto actions, ParseCommitFile(*content, CommitKey(v)));
      RETURN_IF_ERROR(Apply(v, actions));
    }
    return Status::OK();
  }

  int64_t latest() const { return static_cast<int64_t>(live_.size()) - 1; }
  bool Landed(const std::string& txn_id) const { return landed_.count(txn_id) != 0; }

  Status CheckLandedAt(const std::string& txn_id, int64_t version) const {
    auto it = landed_.find(txn_id);
    if (it == landed_.end())
      return Status::Corruption("commit " + txn_id + " was acknowledged as version " +
                                std::to_string(version) + " but is not in the log (latest " +
                                std::to_string(latest()) + ")");
    if (it->second != version)
      return Status::Corruption("commit " + txn_id + " was acknowledged as version " +
                                std::to_string(version) + " but is version " + std::to_string(it->second));
    return Status::OK();
  }

  Status CheckAbsent(const std::string& txn_id) const {
    auto it = landed_.find(txn_id);
    if (it == landed_.end()) return Status::OK();
    return Status::Corruption("commit " + txn_id + " must not be in the log but is version " +
                              std::to_string(it->second));
  }

  // `snapshot` holds exactly the files of its version and, when `check_rows`, exactly
  // their rows: each id once, none missing.
  Status CheckSnapshot(const Snapshot& snapshot, engine::Connection& conn, bool check_rows) const {
    const int64_t v = snapshot.version;
    const std::string where = "version " + std::to_string(v);
    if (v < 0 || v > latest()) return Status::Corruption(where + " is not in the log");
    const std::set<std::string>& expected = live_[static_cast<size_t>(v)];
    std::set<std::string> files;
    for (const auto& f : snapshot.files) {
      if (!files.insert(f.path).second)
        return Status::Corruption(where + ": file " + f.path + " listed twice");
    }
    if (files != expected)
      return Status::Corruption(where + ": files " + Join(files) + ", expected " + Join(expected));
    if (!check_rows) return Status::OK();

    std::vector<int64_t> want;
    for (const auto& path : expected) {
      const auto& ids = file_ids_.at(path);
      want.insert(want.end(), ids.begin(), ids.end());
    }
    std::sort(want.begin(), want.end());
    ASSIGN_OR_RETURN(engine::ScanPlan plan, engine::BuildScanSql(snapshot, conn));
    auto result =
        conn.Query("SELECT count(*) FILTER (WHERE day IS DISTINCT FROM '" + std::string(kDay) +
                   "'), coalesce(string_agg(id::VARCHAR, ',' ORDER BY id), '') FROM (" + plan.sql + ")");
    if (!result.ok()) return result.status().WithContext(where);
    if (result->at(0, 0) != "0") return Status::Corruption(where + ": rows with a wrong day");
    std::vector<int64_t> got;
    std::istringstream ids(result->at(0, 1).value_or(""));
    for (std::string id; std::getline(ids, id, ',');) got.push_back(std::stoll(id));
    if (got == want) return Status::OK();
    std::vector<int64_t> missing, extra;
    std::set_difference(want.begin(), want.end(), got.begin(), got.end(), std::back_inserter(missing));
    std::set_difference(got.begin(), got.end(), want.begin(), want.end(), std::back_inserter(extra));
    return Status::Corruption(where + ": " + std::to_string(got.size()) + " rows, expected " +
                              std::to_string(want.size()) + "; missing ids " + Join(missing) +
                              ", extra or duplicated ids " + Join(extra));
  }

 private:
  Status Apply(int64_t v, const std::vector<Action>& actions) {
    std::string txn_id;
    std::vector<std::string> adds, removes;
    for (const auto& action : actions) {
      if (const auto* info = std::get_if<CommitInfo>(&action)) {
        auto id = info->raw.is_object() ? info->raw.find("txnId") : info->raw.end();
        if (id != info->raw.end() && id->is_string()) txn_id = id->get<std::string>();
      } else if (const auto* add = std::get_if<AddFile>(&action)) {
        adds.push_back(add->path);
      } else if (const auto* remove = std::get_if<RemoveFile>(&action)) {
        removes.push_back(remove->path);
      } else {
        return Status::Corruption("version " + std::to_string(v) + ": unexpected action " +
                                  SerializeAction(action));
      }
    }
    const std::string where = "version " + std::to_string(v) + " (txnId " + txn_id + ")";
    auto intent = intents_.find(txn_id);
    if (intent == intents_.end()) return Status::Corruption(where + ": no writer meant this commit");
    if (auto [first, inserted] = landed_.emplace(txn_id, v); !inserted)
      return Status::Corruption(where + ": the same commit already landed as version " +
                                std::to_string(first->second));
    std::vector<std::string> meant_removes = intent->second.removes;
    std::sort(meant_removes.begin(), meant_removes.end());
    std::sort(removes.begin(), removes.end());
    if (adds != std::vector<std::string>{intent->second.add_path} || removes != meant_removes)
      return Status::Corruption(where + ": adds " + Join(adds) + " and removes " + Join(removes) +
                                ", but its writer meant to add " + intent->second.add_path + " and remove " +
                                Join(meant_removes));

    std::set<std::string> live = live_.back();
    std::vector<int64_t> ids;
    for (int64_t id = intent->second.first_id; id < intent->second.end_id; id++) ids.push_back(id);
    for (const auto& path : removes) {
      if (live.erase(path) == 0)
        return Status::Corruption(where + ": removes " + path + ", which is not live");
      const auto& moved = file_ids_.at(path);
      ids.insert(ids.end(), moved.begin(), moved.end());
    }
    if (!live.insert(adds[0]).second) return Status::Corruption(where + ": adds " + adds[0] + " twice");
    std::sort(ids.begin(), ids.end());
    file_ids_[adds[0]] = std::move(ids);
    live_.push_back(std::move(live));
    return Status::OK();
  }

  std::map<std::string, Intent> intents_;                 // by txn id
  std::map<std::string, std::vector<int64_t>> file_ids_;  // rows of every file a landed commit added
  std::vector<std::set<std::string>> live_;               // live files by version
  std::map<std::string, int64_t> landed_;                 // txn id -> version
};

// Loads the latest version, and then each of `versions`, through `table` and checks them
// against `oracle`, rows included.
void CheckVersions(const Oracle& oracle, TableFixture& table, const std::set<int64_t>& versions) {
  ASSERT_OK_AND_ASSIGN(auto latest, table.Load());
  ASSERT_EQ(latest->version, oracle.latest());
  ASSERT_OK(oracle.CheckSnapshot(*latest, table.conn(), /*check_rows=*/true));
  for (int64_t v : versions) {
    SnapshotOptions at;
    at.version = v;
    ASSERT_OK_AND_ASSIGN(auto snapshot, table.Load(at));
    ASSERT_EQ(snapshot->version, v);
    ASSERT_OK(oracle.CheckSnapshot(*snapshot, table.conn(), /*check_rows=*/true));
  }
}

void CheckAllVersions(const Oracle& oracle, TableFixture& table) {
  std::set<int64_t> all;
  for (int64_t v = 0; v <= oracle.latest(); v++) all.insert(v);
  CheckVersions(oracle, table, all);
}

Status CreateTable(const std::shared_ptr<ObjectStore>& store) {
  TableFixture setup(store);
  return setup.Create(kConfiguration);
}

// --- writers killed with SIGKILL ---

constexpr int kKillRounds = 40;
constexpr int kProgressTimeoutMs = 30'000;    // a writer this slow is stuck
constexpr int kMaxCommitsPerWriter = 100000;  // a bound only; the writer is killed long before
constexpr int64_t kIdsPerRound = 10'000'000;
// In the names of the files engine/parquet_log_io.cc stages checkpoints in (in TMPDIR here).
constexpr char kCheckpointStagingName[] = "basin-checkpoint-";

bool AppendRecord(int fd, const json& record) {
  std::string line = record.dump() + "\n";
  return write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
}

// The writer's progress, one byte each on a pipe, for the parent to time its kill by.
constexpr char kReady = 'r';
constexpr char kCommitting = 'i';            // Commit() is about to run
constexpr char kCommittingCheckpoint = 'c';  // ... and a checkpoint is due after it

// The killed writer's process: commits until killed, appending each intent to the file
// `records` before Commit() and {"ack": version, "txn": id} after it returns. Returns an
// exit code, which the parent treats as a failure: it always kills the writer first.
int RunKilledWriter(const std::string& table_dir, const std::string& records, const std::string& tmp_dir,
                    uint64_t seed, int64_t first_id, uint32_t latency_ms, int progress_fd) {
  // Checkpoints are staged in TMPDIR: what a kill leaves there shows it cut one short.
  setenv("TMPDIR", tmp_dir.c_str(), 1);
  int fd = open(records.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return 2;
  auto local = OpenLocalObjectStore(table_dir);
  if (!local.ok()) return 2;
  // Latency on every store call widens the windows between the steps of a commit.
  FaultOptions slow;
  slow.latency_ms = latency_ms;
  TableFixture table(NewFaultyObjectStore(*local, slow));
  TransactionOptions options = TableFixture::Options();
  // Checkpoints are staged in TMPDIR, where the parent watches for one being written.
  auto staging = OpenLocalObjectStore(tmp_dir);
  if (!staging.ok()) return 3;
  table.log_io().set_staging_store(*staging);
  options.checkpoint_io = &table.log_io();
  std::mt19937_64 rng(seed);
  int64_t next_id = first_id;
  if (write(progress_fd, &kReady, 1) != 1) return 2;
  for (int i = 0; i < kMaxCommitsPerWriter; i++) {
    auto prepared = PrepareCommit(table, options, rng, next_id);
    if (!prepared.ok()) {
      std::fprintf(stderr, "writer: %s\n", prepared.status().ToString().c_str());
      return 3;
    }
    if (!AppendRecord(fd, prepared->intent.ToJson())) return 4;
    // One writer, so the commit lands as the version after the one it read.
    const bool checkpoint_due = (prepared->txn->read_version() + 1) % kCheckpointInterval == 0;
    if (write(progress_fd, checkpoint_due ? &kCommittingCheckpoint : &kCommitting, 1) != 1) return 2;
    auto result = prepared->txn->Commit();
    if (!result.ok()) {
      std::fprintf(stderr, "writer: %s\n", result.status().ToString().c_str());
      return 5;
    }
    if (!result->checkpoint_status.ok()) {
      std::fprintf(stderr, "writer checkpoint: %s\n", result->checkpoint_status.ToString().c_str());
      return 6;
    }
    if (!AppendRecord(fd, json{{"ack", result->version}, {"txn", prepared->intent.txn_id}})) return 4;
  }
  return 0;
}

// Reads the writer's progress until `count` of the `wanted` bytes came; false when the
// writer exited or went quiet for kProgressTimeoutMs.
bool WaitForProgress(int fd, std::initializer_list<char> wanted, int count) {
  for (int seen = 0; seen < count;) {
    pollfd readable{fd, POLLIN, 0};
    if (poll(&readable, 1, kProgressTimeoutMs) != 1) return false;
    char byte = 0;
    if (read(fd, &byte, 1) != 1) return false;
    if (std::find(wanted.begin(), wanted.end(), byte) != wanted.end()) seen++;
  }
  return true;
}

size_t CountFilesNamedWith(const fs::path& folder, const std::string& part) {
  size_t n = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(folder, ec)) {
    if (entry.path().filename().string().find(part) != std::string::npos) n++;
  }
  return n;
}

// Until a file named with `part` shows up in `folder` (or a second passed).
void WaitForFileNamedWith(const fs::path& folder, const std::string& part) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (CountFilesNamedWith(folder, part) == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

// A stale, garbage or ahead-of-the-log _last_checkpoint, as a crashed or foreign writer
// could leave: readers and the next writer must not care.
void PlantLastCheckpointHint(ObjectStore& store, int64_t latest, std::mt19937_64& rng) {
  const std::string key = std::string(kLogFolder) + "_last_checkpoint";
  std::string content;
  switch (rng() % 4) {
    case 0:
      content = "{\"version\": ";  // cut short
      break;
    case 1:
      content = json{{"version", latest + 1 + static_cast<int64_t>(rng() % 5)}, {"size", 3}}.dump();
      break;
    case 2:
      content = json{{"version", static_cast<int64_t>(rng() % (latest + 1))}, {"size", 3}}.dump();
      break;
    default:
      content = json{{"version", 0}, {"size", 2}, {"parts", 4}}.dump();  // a multi-part checkpoint that isn't
      break;
  }
  ASSERT_OK(store.Put(key, content));
}

TEST(CrashTest, WritersKilledWithSigkillLeaveExactlyTheirCommittedVersions) {
  std::mt19937_64 rng(TestSeed("sigkill"));
  basin::testing::TempDir dir;
  const std::string table_dir = (dir.path() / "table").string();
  const std::string records = (dir.path() / "records.jsonl").string();
  {
    ASSERT_OK_AND_ASSIGN(auto store, OpenLocalObjectStore(table_dir));
    ASSERT_OK(CreateTable(store));
  }
  Oracle oracle;
  std::vector<std::pair<std::string, int64_t>> acks;
  size_t records_read = 0;
  int64_t checked_through = 0;
  int kills_in_commit = 0, kills_after_landing = 0, kills_in_checkpoint = 0, kills_mid_put = 0;
  int intents_total = 0;
  size_t previous_log_temp_files = 0;

  for (int round = 0; round < kKillRounds; round++) {
    SCOPED_TRACE("round " + std::to_string(round));
    const uint64_t writer_seed = rng();
    const auto latency_ms = static_cast<uint32_t>(rng() % 3);
    const fs::path tmp_dir = dir.path() / ("tmp-" + std::to_string(round));
    fs::create_directories(tmp_dir);

    int progress[2];
    ASSERT_EQ(pipe(progress), 0);
    pid_t pid = testing::ForkChild([&] {
      close(progress[0]);
      return RunKilledWriter(table_dir, records, tmp_dir.string(), writer_seed, round * kIdsPerRound,
                             latency_ms, progress[1]);
    });
    ASSERT_GT(pid, 0);
    close(progress[1]);
    bool progressed = WaitForProgress(progress[0], {kReady}, 1);
    // Kill at a random time, or shortly after a commit starts, or after a commit with a
    // checkpoint starts, or while its checkpoint is being written.
    std::chrono::milliseconds delay;
    switch (rng() % 4) {
      case 0:
        delay = std::chrono::milliseconds(rng() % 400);
        break;
      case 1:
        progressed = progressed && WaitForProgress(progress[0], {kCommitting, kCommittingCheckpoint},
                                                   1 + static_cast<int>(rng() % 3));
        delay = std::chrono::milliseconds(rng() % 30);
        break;
      case 2:
        progressed = progressed && WaitForProgress(progress[0], {kCommittingCheckpoint}, 1);
        delay = std::chrono::milliseconds(10 + rng() % 90);
        break;
      default:
        progressed = progressed && WaitForProgress(progress[0], {kCommittingCheckpoint}, 1);
        WaitForFileNamedWith(tmp_dir, kCheckpointStagingName);
        delay = std::chrono::milliseconds(rng() % 4);
        break;
    }
    if (progressed) std::this_thread::sleep_for(delay);
    kill(pid, SIGKILL);
    const int exit_status = testing::WaitChild(pid);
    close(progress[0]);
    ASSERT_TRUE(progressed) << "the writer died or got stuck, exit status " << exit_status;
    ASSERT_EQ(exit_status, -SIGKILL) << "the writer stopped on its own (see its message above)";

    // This round's records; a line cut short by the kill was never acted on.
    std::string text;
    {
      std::ifstream in(records, std::ios::binary);
      text.assign(std::istreambuf_iterator<char>(in), {});
    }
    std::optional<Intent> last_intent;
    bool last_acked = false;
    size_t end = text.rfind('\n');
    std::istringstream lines(end == std::string::npos || end < records_read
                                 ? std::string()
                                 : text.substr(records_read, end + 1 - records_read));
    if (end != std::string::npos && end >= records_read) records_read = end + 1;
    std::error_code ignored;
    fs::resize_file(records, records_read, ignored);  // the next writer's lines start on their own
    for (std::string line; std::getline(lines, line);) {
      json record = json::parse(line, nullptr, /*allow_exceptions=*/false);
      if (auto intent = Intent::FromJson(record)) {
        oracle.AddIntent(*intent);
        last_intent = intent;
        last_acked = false;
        intents_total++;
      } else {
        ASSERT_TRUE(record.is_object() && record.contains("ack")) << line;
        acks.emplace_back(record.value("txn", ""), record.value("ack", int64_t{-1}));
        last_acked = true;
      }
    }

    ASSERT_OK_AND_ASSIGN(auto store, OpenLocalObjectStore(table_dir));
    ASSERT_OK(oracle.Replay(*store));
    for (const auto& [txn_id, version] : acks) ASSERT_OK(oracle.CheckLandedAt(txn_id, version));
    if (last_intent && !last_acked) {
      kills_in_commit++;
      if (oracle.Landed(last_intent->txn_id)) kills_after_landing++;
    }
    if (CountFilesNamedWith(tmp_dir, kCheckpointStagingName) > 0) kills_in_checkpoint++;
    // Temporary files of Put()s cut short stay in the log folder; readers skip them.
    const size_t log_temp_files = CountFilesNamedWith(fs::path(table_dir) / "_delta_log", ".basin-tmp-");
    if (log_temp_files > previous_log_temp_files) kills_mid_put++;
    previous_log_temp_files = log_temp_files;
    {
      // Versions reconstruct from files that never change once written, so each is checked
      // after the kill following its commit, plus a few older ones, and all at the end.
      std::set<int64_t> versions;
      for (int64_t v = checked_through + 1; v <= oracle.latest(); v++) versions.insert(v);
      for (int i = 0; i < 3; i++) versions.insert(static_cast<int64_t>(rng() % (oracle.latest() + 1)));
      TableFixture reader(store);
      CheckVersions(oracle, reader, versions);
      if (::testing::Test::HasFatalFailure()) return;
    }
    checked_through = oracle.latest();
    if (round % 4 == 3) PlantLastCheckpointHint(*store, oracle.latest(), rng);
  }
  {
    ASSERT_OK_AND_ASSIGN(auto store, OpenLocalObjectStore(table_dir));
    TableFixture reader(store);
    CheckAllVersions(oracle, reader);
  }
  std::printf(
      "sigkill: %d rounds, %lld versions, %d commits attempted; kills inside Commit(): %d (after the commit "
      "landed: %d), during a checkpoint write: %d, leaving a half-written log file: %d\n",
      kKillRounds, static_cast<long long>(oracle.latest()), intents_total, kills_in_commit,
      kills_after_landing, kills_in_checkpoint, kills_mid_put);
  // The test proves little unless some kills cut commits and checkpoints short.
  EXPECT_GT(kills_in_commit, 0);
  EXPECT_GT(kills_in_checkpoint, 0);
}

// --- a store failing random calls ---

constexpr int kFaultSeeds = 24;
constexpr int kCommitsPerFaultSeed = 10;

bool OutcomeUnknown(const Status& status) {
  return status.message().find("outcome unknown") != std::string::npos;
}

TEST(CrashTest, FailingStoreCallsNeverLeavePartialOrDuplicateCommits) {
  std::mt19937_64 rng(TestSeed("faults"));
  int committed_total = 0, unknown_total = 0, unknown_landed = 0, failed_total = 0;
  int checkpoints_written = 0, checkpoints_failed = 0, faulty_loads_checked = 0;
  uint64_t injected = 0;
  for (int s = 0; s < kFaultSeeds; s++) {
    FaultOptions faults;
    faults.seed = rng();
    faults.failure_probability = 0.05 + 0.01 * static_cast<double>(rng() % 30);
    faults.fail_after_write = rng() % 2 == 0;
    // Few attempts make commits give up, with a definite error or an unknown outcome.
    static constexpr int kMaxAttempts[] = {1, 2, 3, 10};
    const int max_attempts = kMaxAttempts[rng() % 4];
    SCOPED_TRACE("fault seed " + std::to_string(faults.seed) + ", probability " +
                 std::to_string(faults.failure_probability) + ", max attempts " +
                 std::to_string(max_attempts) +
                 (faults.fail_after_write ? ", writes land before failing" : ""));
    basin::testing::TempDir dir;
    ASSERT_OK_AND_ASSIGN(auto local, OpenLocalObjectStore(dir.str()));
    ASSERT_OK(CreateTable(local));
    auto faulty = NewFaultyObjectStore(local, FaultOptions{});
    TableFixture writer(faulty);
    TableFixture reader(local);
    TransactionOptions options = TableFixture::Options();
    options.checkpoint_io = &writer.log_io();
    options.max_attempts = max_attempts;
    std::mt19937_64 writer_rng(rng());
    int64_t next_id = 0;
    Oracle oracle;
    std::map<std::string, int64_t> committed;
    std::set<std::string> unknown, failed;
    for (int i = 0; i < kCommitsPerFaultSeed; i++) {
      // Faults during Commit() (and its checkpoint) only: preparing reads and writes too,
      // but its failures would just leave less to commit.
      faulty->SetOptions(FaultOptions{});
      ASSERT_OK_AND_ASSIGN(auto prepared, PrepareCommit(writer, options, writer_rng, next_id));
      oracle.AddIntent(prepared.intent);
      const std::string txn_id = prepared.intent.txn_id;
      FaultOptions commit_faults = faults;
      commit_faults.seed = faults.seed + static_cast<uint64_t>(i);
      faulty->SetOptions(commit_faults);
      auto result = prepared.txn->Commit();
      if (result.ok()) {
        committed[txn_id] = result->version;
        if (result->checkpoint_version) checkpoints_written++;
        if (!result->checkpoint_status.ok()) checkpoints_failed++;
      } else if (OutcomeUnknown(result.status())) {
        unknown.insert(txn_id);
      } else {
        failed.insert(txn_id);
      }

      ASSERT_OK(oracle.Replay(*local));
      for (const auto& [id, version] : committed) ASSERT_OK(oracle.CheckLandedAt(id, version));
      for (const auto& id : failed) ASSERT_OK(oracle.CheckAbsent(id));
      ASSERT_OK_AND_ASSIGN(auto latest, reader.Load());
      ASSERT_EQ(latest->version, oracle.latest());
      ASSERT_OK(oracle.CheckSnapshot(*latest, reader.conn(), /*check_rows=*/true));
      // Through the faults, loading fails or shows a version exactly as committed.
      if (auto seen = writer.Load(); seen.ok()) {
        // The snapshot is what is under test; its rows are read without faults.
        faulty->SetOptions(FaultOptions{});
        ASSERT_OK(oracle.CheckSnapshot(**seen, writer.conn(), /*check_rows=*/true));
        faulty_loads_checked++;
      }
    }
    CheckAllVersions(oracle, reader);
    if (::testing::Test::HasFatalFailure()) return;
    committed_total += static_cast<int>(committed.size());
    failed_total += static_cast<int>(failed.size());
    unknown_total += static_cast<int>(unknown.size());
    for (const auto& id : unknown) unknown_landed += oracle.Landed(id) ? 1 : 0;
    injected += faulty->injected_failures();
  }
  std::printf(
      "faults: %d seeds, %llu injected failures; commits: %d succeeded, %d failed, %d with unknown outcome "
      "(%d "
      "of them landed); checkpoints: %d written, %d failed; %d loads through the faults checked\n",
      kFaultSeeds, static_cast<unsigned long long>(injected), committed_total, failed_total, unknown_total,
      unknown_landed, checkpoints_written, checkpoints_failed, faulty_loads_checked);
  EXPECT_GT(committed_total, 0);
  EXPECT_GT(failed_total + unknown_total + checkpoints_failed, 0);
}

// --- a store losing unsynced writes (power loss) ---

constexpr int kPowerLossSeeds = 8;
constexpr int kCommitsPerPowerLossSeed = 16;

TEST(CrashTest, PowerLossKeepsExactlyTheSyncedCommits) {
  std::mt19937_64 rng(TestSeed("power loss"));
  int losses = 0, lost_commits = 0, syncs = 0;
  for (int s = 0; s < kPowerLossSeeds; s++) {
    FaultOptions buffered;
    buffered.buffer_writes = true;
    basin::testing::TempDir dir;
    ASSERT_OK_AND_ASSIGN(auto local, OpenLocalObjectStore(dir.str()));
    ASSERT_OK(CreateTable(local));
    auto faulty = NewFaultyObjectStore(local, buffered);
    TableFixture writer(faulty);
    TableFixture reader(local);
    TransactionOptions options = TableFixture::Options();
    options.checkpoint_io = &writer.log_io();
    std::mt19937_64 writer_rng(rng());
    int64_t next_id = 0;
    Oracle oracle;
    int64_t synced_version = 0;
    std::map<std::string, int64_t> committed;  // since the last sync
    for (int i = 0; i < kCommitsPerPowerLossSeed; i++) {
      SCOPED_TRACE("commit " + std::to_string(i));
      ASSERT_OK_AND_ASSIGN(auto prepared, PrepareCommit(writer, options, writer_rng, next_id));
      oracle.AddIntent(prepared.intent);
      ASSERT_OK_AND_ASSIGN(auto result, prepared.txn->Commit());
      ASSERT_OK(result.checkpoint_status);
      ASSERT_EQ(result.version, synced_version + static_cast<int64_t>(committed.size()) + 1);
      committed[prepared.intent.txn_id] = result.version;
      switch (rng() % 4) {
        case 0:
          ASSERT_OK(faulty->Sync());
          synced_version = result.version;
          committed.clear();
          syncs++;
          break;
        case 1: {
          faulty->DropUnsynced();
          losses++;
          lost_commits += static_cast<int>(committed.size());
          ASSERT_OK(oracle.Replay(*local));
          ASSERT_EQ(oracle.latest(), synced_version);
          for (const auto& [id, version] : committed) ASSERT_OK(oracle.CheckAbsent(id));
          committed.clear();
          CheckAllVersions(oracle, reader);
          if (::testing::Test::HasFatalFailure()) return;
          break;
        }
        default:
          break;
      }
    }
    ASSERT_OK(faulty->Sync());
    ASSERT_OK(oracle.Replay(*local));
    for (const auto& [id, version] : committed) ASSERT_OK(oracle.CheckLandedAt(id, version));
    CheckAllVersions(oracle, reader);
    if (::testing::Test::HasFatalFailure()) return;
  }
  std::printf("power loss: %d seeds, %d syncs, %d losses dropping %d acknowledged commits\n", kPowerLossSeeds,
              syncs, losses, lost_commits);
  EXPECT_GT(losses, 0);
}

}  // namespace
}  // namespace basin::delta
