// Transactions: commits, conflict rules, automatic rebase, idempotent txn, in-commit
// timestamps, and commits through a store that fails at random.
#include "delta/transaction.h"

#include <atomic>
#include <chrono>
#include <optional>
#include <set>
#include <thread>

#include "common/cancellation.h"
#include "common/metrics.h"
#include "delta/commit_writer.h"
#include "delta/log_segment.h"
#include "storage/faulty_object_store.h"
#include "testing/forwarding_store.h"
#include "transaction_test_util.h"

namespace basin::delta {
namespace {

using testing::TableFixture;
using testing::TestAdd;
using testing::TestMetadata;
using testing::TestRemove;

class TransactionTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_OK(table_.Create()); }

  // Commits a transaction with `adds` on the latest version.
  Result<CommitResult> Append(std::vector<std::string> paths) {
    ASSIGN_OR_RETURN(auto txn, table_.Begin());
    for (const auto& p : paths) txn->Add(TestAdd(p));
    return txn->Commit();
  }

  std::set<std::string> FilePaths() {
    auto snapshot = table_.Load();
    EXPECT_OK(snapshot.status());
    std::set<std::string> paths;
    if (snapshot.ok()) {
      for (const auto& f : (*snapshot)->files) paths.insert(f.path);
    }
    return paths;
  }

  TableFixture table_{NewMemoryObjectStore()};
};

TEST_F(TransactionTest, CommitsNextVersionWithCommitInfo) {
  ASSERT_OK_AND_ASSIGN(auto snapshot, table_.Load());
  Transaction txn(snapshot, TableFixture::Options());
  txn.Add(TestAdd("a.parquet"));
  txn.SetOperation("WRITE", {{"mode", "Append"}});
  txn.SetOperationMetrics({{"numFiles", "1"}});
  ASSERT_OK_AND_ASSIGN(CommitResult result, txn.Commit());
  EXPECT_EQ(result.version, 1);
  EXPECT_FALSE(result.skipped);
  EXPECT_EQ(result.attempts, 1);
  EXPECT_EQ(FilePaths(), std::set<std::string>{"a.parquet"});

  ASSERT_OK_AND_ASSIGN(auto history, ReadHistory(table_.store(), 1));
  ASSERT_EQ(history.size(), 1u);
  EXPECT_EQ(history[0].version, 1);
  EXPECT_EQ(history[0].operation, "WRITE");
  EXPECT_EQ(history[0].engine_info, std::string(kEngineInfo));
  EXPECT_EQ(history[0].is_blind_append, true);
  EXPECT_EQ(history[0].operation_metrics["numFiles"], "1");
  ASSERT_OK_AND_ASSIGN(std::string content, table_.store()->Get(CommitKey(1)));
  EXPECT_NE(content.find(txn.txn_id()), std::string::npos);
  EXPECT_EQ(content.rfind("{\"commitInfo\"", 0), 0u) << "commitInfo must be the first action";

  ASSERT_ERROR_CODE(txn.Commit(), kInvalidArgument);
}

TEST_F(TransactionTest, CreatingAnExistingTableConflicts) {
  Transaction txn = Transaction::CreateTable(table_.store(), "table", TableFixture::Options());
  txn.UpdateProtocol(Protocol{1, 2, std::nullopt, std::nullopt});
  txn.UpdateMetadata(TestMetadata());
  auto result = txn.Commit();
  ASSERT_ERROR_CODE(result, kConflict);
  EXPECT_NE(result.status().message().find("version 0"), std::string::npos) << result.status().ToString();

  Transaction incomplete = Transaction::CreateTable(NewMemoryObjectStore(), "other", TableFixture::Options());
  ASSERT_ERROR_CODE(incomplete.Commit(), kInvalidArgument);
}

TEST_F(TransactionTest, BlindAppendsRebaseOverEachOther) {
  ASSERT_OK_AND_ASSIGN(auto snapshot, table_.Load());
  Transaction first(snapshot, TableFixture::Options());
  Transaction second(snapshot, TableFixture::Options());
  first.Add(TestAdd("a.parquet"));
  second.Add(TestAdd("b.parquet"));
  ASSERT_OK_AND_ASSIGN(CommitResult r1, first.Commit());
  ASSERT_OK_AND_ASSIGN(CommitResult r2, second.Commit());
  EXPECT_EQ(r1.version, 1);
  EXPECT_EQ(r2.version, 2);
  EXPECT_EQ(r2.attempts, 2);
  EXPECT_EQ(FilePaths(), (std::set<std::string>{"a.parquet", "b.parquet"}));
}

TEST_F(TransactionTest, AppendAfterReadingWholeTableConflictsWithConcurrentAdd) {
  ASSERT_OK(Append({"a.parquet"}));
  ASSERT_OK_AND_ASSIGN(auto snapshot, table_.Load());
  Transaction reader(snapshot, TableFixture::Options());
  reader.ReadWholeTable();
  reader.ReadFiles(snapshot->files);
  reader.Add(TestAdd("derived.parquet"));
  {  // version 2: an INSERT ... SELECT (it read a.parquet), so not a blind append, which
     // would serialize after the reader (conflict_predicate_test.cc)
    Transaction insert(snapshot, TableFixture::Options());
    insert.ReadFiles({TestAdd("a.parquet")});
    insert.Add(TestAdd("b.parquet"));
    ASSERT_OK(insert.Commit());
  }
  auto result = reader.Commit();
  ASSERT_ERROR_CODE(result, kConflict);
  const std::string message = result.status().message();
  EXPECT_NE(message.find("version 2"), std::string::npos) << message;
  EXPECT_NE(message.find("WRITE"), std::string::npos) << message;
  EXPECT_NE(message.find("b.parquet"), std::string::npos) << message;
  EXPECT_EQ(FilePaths(), (std::set<std::string>{"a.parquet", "b.parquet"}));
}

// The process-wide counter `name` of the commit loop.
int64_t CommitCounter(const std::string& name) {
  return metrics::ProcessRegistry().AddCounter(name, "").With().value();
}

TEST_F(TransactionTest, CountsConflictsAndRetriesInTheProcessRegistry) {
  ASSERT_OK(Append({"a.parquet"}));
  const int64_t conflicts = CommitCounter("basin_commit_conflicts_total");
  const int64_t retries = CommitCounter("basin_commit_retries_total");
  ASSERT_OK_AND_ASSIGN(auto snapshot, table_.Load());
  Transaction blind(snapshot, TableFixture::Options());
  blind.Add(TestAdd("blind.parquet"));
  Transaction remover(snapshot, TableFixture::Options());
  remover.ReadFiles(snapshot->files);
  remover.Remove(TestRemove("a.parquet"));
  ASSERT_OK(Append({"b.parquet"}));  // version 2, which both wanted

  // A blind append passes the concurrent append: one race, one retry.
  ASSERT_OK_AND_ASSIGN(CommitResult appended, blind.Commit());
  EXPECT_EQ(appended.attempts, 2);
  EXPECT_EQ(CommitCounter("basin_commit_conflicts_total"), conflicts + 1);
  EXPECT_EQ(CommitCounter("basin_commit_retries_total"), retries + 1);

  // Removing a file that the concurrent commits did not touch passes them too (two
  // commits in the way, still one race), ...
  ASSERT_OK(remover.Commit());
  EXPECT_EQ(CommitCounter("basin_commit_conflicts_total"), conflicts + 2);
  EXPECT_EQ(CommitCounter("basin_commit_retries_total"), retries + 2);

  // ... removing one that a concurrent commit removed fails: a race, no retry.
  ASSERT_OK_AND_ASSIGN(auto latest, table_.Load());
  Transaction late(snapshot, TableFixture::Options());
  late.ReadFiles(snapshot->files);
  late.Remove(TestRemove("a.parquet"));
  ASSERT_ERROR_CODE(late.Commit(), kConflict);
  EXPECT_EQ(CommitCounter("basin_commit_conflicts_total"), conflicts + 3);
  EXPECT_EQ(CommitCounter("basin_commit_retries_total"), retries + 2);
  EXPECT_EQ(latest->version, 4);
}

TEST_F(TransactionTest, RemovingAFileThisTransactionReadConflicts) {
  ASSERT_OK(Append({"a.parquet", "b.parquet"}));
  ASSERT_OK_AND_ASSIGN(auto snapshot, table_.Load());
  // An UPDATE that read a.parquet and rewrites it.
  Transaction update(snapshot, TableFixture::Options());
  update.ReadFiles({TestAdd("a.parquet")});
  update.Remove(TestRemove("a.parquet"));
  update.Add(TestAdd("a2.parquet"));
  // A DELETE that removed a.parquet first.
  Transaction del(snapshot, TableFixture::Options());
  del.ReadFiles({TestAdd("a.parquet")});
  del.Remove(TestRemove("a.parquet"));
  del.SetOperation("DELETE");
  ASSERT_OK(del.Commit());
  auto result = update.Commit();
  ASSERT_ERROR_CODE(result, kConflict);
  EXPECT_NE(result.status().message().find("DELETE"), std::string::npos) << result.status().ToString();
  EXPECT_NE(result.status().message().find("a.parquet"), std::string::npos) << result.status().ToString();

  // Reading (not removing) a file that a concurrent DELETE removed conflicts too.
  ASSERT_OK_AND_ASSIGN(auto snapshot2, table_.Load());
  Transaction reader(snapshot2, TableFixture::Options());
  reader.ReadFiles({TestAdd("b.parquet")});
  reader.Add(TestAdd("c.parquet"));
  Transaction del_b(snapshot2, TableFixture::Options());
  del_b.Remove(TestRemove("b.parquet"));
  ASSERT_OK(del_b.Commit());
  ASSERT_ERROR_CODE(reader.Commit(), kConflict);
}

TEST_F(TransactionTest, CompactionConflictsWithReadersOfItsFilesNotWithAppends) {
  ASSERT_OK(Append({"a.parquet", "b.parquet"}));
  ASSERT_OK_AND_ASSIGN(auto snapshot, table_.Load());
  Transaction optimize(snapshot, TableFixture::Options());
  optimize.ReadFiles(snapshot->files);
  optimize.Remove(TestRemove("a.parquet", /*data_change=*/false));
  optimize.Remove(TestRemove("b.parquet", /*data_change=*/false));
  optimize.Add(TestAdd("ab.parquet", /*data_change=*/false));
  optimize.SetOperation("OPTIMIZE");
  Transaction append(snapshot, TableFixture::Options());
  append.Add(TestAdd("c.parquet"));
  // Read a.parquet, writes elsewhere: as in Delta Lake, its read set is gone once compacted.
  Transaction reader(snapshot, TableFixture::Options());
  reader.ReadFiles({TestAdd("a.parquet")});
  reader.Add(TestAdd("d.parquet"));
  Transaction rewriter(snapshot, TableFixture::Options());  // rewrites a.parquet: must not
  rewriter.ReadFiles({TestAdd("a.parquet")});
  rewriter.Remove(TestRemove("a.parquet"));
  rewriter.Add(TestAdd("a2.parquet"));

  ASSERT_OK(optimize.Commit());
  ASSERT_OK(append.Commit());
  auto read = reader.Commit();
  ASSERT_ERROR_CODE(read, kConflict);
  EXPECT_NE(read.status().message().find("ConcurrentDeleteReadException"), std::string::npos)
      << read.status().ToString();
  auto rewritten = rewriter.Commit();
  ASSERT_ERROR_CODE(rewritten, kConflict);
  EXPECT_NE(rewritten.status().message().find("OPTIMIZE"), std::string::npos)
      << rewritten.status().ToString();
  EXPECT_EQ(FilePaths(), (std::set<std::string>{"ab.parquet", "c.parquet"}));

  // The other order: an append first, then the compaction rebases over it.
  ASSERT_OK_AND_ASSIGN(auto snapshot2, table_.Load());
  Transaction optimize2(snapshot2, TableFixture::Options());
  optimize2.ReadFiles({TestAdd("ab.parquet"), TestAdd("c.parquet")});
  optimize2.Remove(TestRemove("ab.parquet", false));
  optimize2.Remove(TestRemove("c.parquet", false));
  optimize2.Add(TestAdd("abc.parquet", false));
  ASSERT_OK(Append({"e.parquet"}));
  ASSERT_OK(optimize2.Commit());
  EXPECT_EQ(FilePaths(), (std::set<std::string>{"abc.parquet", "e.parquet"}));
}

TEST_F(TransactionTest, MetadataOrProtocolChangeConflicts) {
  ASSERT_OK_AND_ASSIGN(auto snapshot, table_.Load());
  Transaction append(snapshot, TableFixture::Options());
  append.Add(TestAdd("a.parquet"));
  Transaction alter(snapshot, TableFixture::Options());
  alter.UpdateMetadata(TestMetadata({{"delta.appendOnly", "false"}}));
  alter.SetOperation("SET TBLPROPERTIES");
  ASSERT_OK(alter.Commit());
  auto result = append.Commit();
  ASSERT_ERROR_CODE(result, kConflict);
  EXPECT_NE(result.status().message().find("metadata"), std::string::npos) << result.status().ToString();
  EXPECT_NE(result.status().message().find("SET TBLPROPERTIES"), std::string::npos);

  ASSERT_OK_AND_ASSIGN(auto snapshot2, table_.Load());
  Transaction append2(snapshot2, TableFixture::Options());
  append2.Add(TestAdd("a.parquet"));
  Transaction upgrade(snapshot2, TableFixture::Options());
  upgrade.UpdateProtocol(Protocol{1, 3, std::nullopt, std::nullopt});
  ASSERT_OK(upgrade.Commit());
  auto result2 = append2.Commit();
  ASSERT_ERROR_CODE(result2, kConflict);
  EXPECT_NE(result2.status().message().find("protocol"), std::string::npos) << result2.status().ToString();
}

TEST_F(TransactionTest, IdempotentTxnIsSkippedWhenAlreadyCommitted) {
  ASSERT_OK_AND_ASSIGN(auto txn, table_.Begin());
  txn->SetTransactionId("stream-1", 5);
  txn->Add(TestAdd("batch5.parquet"));
  ASSERT_OK_AND_ASSIGN(CommitResult first, txn->Commit());
  EXPECT_FALSE(first.skipped);

  // The same batch again (a retry after a crash): nothing is written.
  ASSERT_OK_AND_ASSIGN(auto retry, table_.Begin());
  retry->SetTransactionId("stream-1", 5);
  retry->Add(TestAdd("batch5-again.parquet"));
  ASSERT_OK_AND_ASSIGN(CommitResult skipped, retry->Commit());
  EXPECT_TRUE(skipped.skipped);
  EXPECT_EQ(skipped.version, first.version);
  EXPECT_EQ(skipped.attempts, 0);
  ASSERT_OK_AND_ASSIGN(auto snapshot, table_.Load());
  EXPECT_EQ(snapshot->version, first.version);
  EXPECT_EQ(snapshot->set_transactions.at("stream-1").version, 5);

  ASSERT_OK_AND_ASSIGN(auto next, table_.Begin());
  next->SetTransactionId("stream-1", 6);
  next->Add(TestAdd("batch6.parquet"));
  ASSERT_OK_AND_ASSIGN(CommitResult committed, next->Commit());
  EXPECT_FALSE(committed.skipped);
  EXPECT_EQ(FilePaths(), (std::set<std::string>{"batch5.parquet", "batch6.parquet"}));
}

TEST_F(TransactionTest, ConcurrentTxnOfSameAppIsSkippedOrConflicts) {
  ASSERT_OK_AND_ASSIGN(auto snapshot, table_.Load());
  Transaction winner(snapshot, TableFixture::Options());
  winner.SetTransactionId("app", 3);
  winner.Add(TestAdd("w.parquet"));
  Transaction same_batch(snapshot, TableFixture::Options());
  same_batch.SetTransactionId("app", 3);
  same_batch.Add(TestAdd("dup.parquet"));
  Transaction later_batch(snapshot, TableFixture::Options());
  later_batch.SetTransactionId("app", 4);
  later_batch.Add(TestAdd("later.parquet"));
  Transaction other_app(snapshot, TableFixture::Options());
  other_app.SetTransactionId("other", 1);
  other_app.Add(TestAdd("other.parquet"));

  ASSERT_OK(winner.Commit());
  ASSERT_OK_AND_ASSIGN(CommitResult skipped, same_batch.Commit());
  EXPECT_TRUE(skipped.skipped);
  EXPECT_EQ(skipped.version, 1);
  auto conflict = later_batch.Commit();
  ASSERT_ERROR_CODE(conflict, kConflict);
  EXPECT_NE(conflict.status().message().find("'app'"), std::string::npos) << conflict.status().ToString();
  ASSERT_OK(other_app.Commit());
  EXPECT_EQ(FilePaths(), (std::set<std::string>{"w.parquet", "other.parquet"}));
}

TEST_F(TransactionTest, GivesUpAfterMaxAttempts) {
  ASSERT_OK_AND_ASSIGN(auto snapshot, table_.Load());
  TransactionOptions options = TableFixture::Options();
  options.max_attempts = 1;
  Transaction loser(snapshot, options);
  loser.Add(TestAdd("late.parquet"));
  ASSERT_OK(Append({"a.parquet"}));
  ASSERT_ERROR_CODE(loser.Commit(), kConflict);
}

TEST(TransactionIctTest, InCommitTimestampsIncreaseStrictly) {
  TableFixture table(NewMemoryObjectStore());
  ASSERT_OK(table.Create({{"delta.enableInCommitTimestamps", "true"}}));
  TransactionOptions options = TableFixture::Options();
  options.clock_ms = [] { return int64_t{5000}; };  // a clock that stands still
  int64_t previous = -1;
  for (int i = 0; i < 3; i++) {
    ASSERT_OK_AND_ASSIGN(auto txn, table.Begin(options));
    txn->Add(TestAdd("f" + std::to_string(i) + ".parquet"));
    ASSERT_OK(txn->Commit());
    ASSERT_OK_AND_ASSIGN(auto snapshot, table.Load());
    EXPECT_GE(snapshot->timestamp_ms, 5000);
    EXPECT_GT(snapshot->timestamp_ms, previous);
    previous = snapshot->timestamp_ms;
  }
  // A writer that rebased over a concurrent commit still goes after that commit's ICT.
  ASSERT_OK_AND_ASSIGN(auto snapshot, table.Load());
  Transaction a(snapshot, options), b(snapshot, options);
  a.Add(TestAdd("a.parquet"));
  b.Add(TestAdd("b.parquet"));
  ASSERT_OK(a.Commit());
  ASSERT_OK_AND_ASSIGN(CommitResult rb, b.Commit());
  SnapshotOptions before_b, at_version_b;
  before_b.version = rb.version - 1;
  at_version_b.version = rb.version;
  ASSERT_OK_AND_ASSIGN(auto at_a, table.Load(before_b));
  ASSERT_OK_AND_ASSIGN(auto at_b, table.Load(at_version_b));
  EXPECT_EQ(at_b->timestamp_ms, at_a->timestamp_ms + 1);
  EXPECT_EQ(at_a->timestamp_ms, previous + 1);
}

TEST(TransactionThreadsTest, ConcurrentBlindAppendsOnLocalStoreAllLand) {
  basin::testing::TempDir dir;
  ASSERT_OK_AND_ASSIGN(auto store, OpenLocalObjectStore(dir.str()));
  TableFixture table(store);
  ASSERT_OK(table.Create());
  ASSERT_OK_AND_ASSIGN(auto snapshot, table.Load());
  constexpr int kThreads = 4, kCommits = 10;
  std::vector<std::thread> threads;
  std::vector<Status> failures(kThreads);
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCommits; i++) {
        TransactionOptions options = TableFixture::Options();
        options.max_attempts = 50;
        Transaction txn(snapshot, options);  // a stale snapshot: every commit rebases
        txn.Add(TestAdd("t" + std::to_string(t) + "-" + std::to_string(i) + ".parquet"));
        auto result = txn.Commit();
        if (!result.ok()) {
          failures[t] = result.status();
          return;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (const auto& st : failures) ASSERT_OK(st);
  ASSERT_OK_AND_ASSIGN(auto after, table.Load());
  EXPECT_EQ(after->version, kThreads * kCommits);
  EXPECT_EQ(after->files.size(), static_cast<size_t>(kThreads * kCommits));
}

// Commits through a store that fails calls at random (some failures after the write took
// effect): every commit that reported success is in the log exactly once, at its version;
// failed ones are in it at most once; the log has no gaps.
TEST(TransactionFaultTest, RandomStorageFailuresNeverDuplicateOrLoseCommits) {
  auto base = NewMemoryObjectStore();
  TableFixture setup(base);
  ASSERT_OK(setup.Create());
  for (uint64_t seed : {1, 2, 3}) {
    FaultOptions faults;
    faults.failure_probability = 0.25;
    faults.fail_after_write = seed != 2;
    faults.seed = seed;
    auto faulty = NewFaultyObjectStore(base, faults);
    TableFixture table(faulty);
    std::map<std::string, int64_t> committed;  // file -> version reported
    std::set<std::string> failed;              // certainly not committed
    std::set<std::string> unknown;             // "outcome unknown"
    int retried = 0;
    for (int i = 0; i < 30; i++) {
      std::string file = "s" + std::to_string(seed) + "-" + std::to_string(i) + ".parquet";
      faulty->SetOptions(FaultOptions{});  // the snapshot is read reliably; the commit is not
      ASSERT_OK_AND_ASSIGN(auto snapshot, table.Load());
      faults.seed = seed * 1000 + i;
      faulty->SetOptions(faults);
      Transaction txn(snapshot, TableFixture::Options());
      txn.Add(TestAdd(file));
      auto result = txn.Commit();
      if (result.ok()) {
        if (result->attempts > 1) retried++;
        committed[file] = result->version;
      } else {
        EXPECT_EQ(result.status().code(), ErrorCode::kIOError) << result.status().ToString();
        bool is_unknown = result.status().message().find("outcome unknown") != std::string::npos;
        (is_unknown ? unknown : failed).insert(file);
      }
    }
    EXPECT_GT(committed.size(), 20u) << "seed " << seed;
    // Failures before the write make commits retry; after it, they are recognised by txnId.
    if (!faults.fail_after_write) {
      EXPECT_GT(retried, 0) << "seed " << seed;
    }
    EXPECT_GT(faulty->injected_failures(), 0u);
    // Read back through the reliable base store.
    ASSERT_OK_AND_ASSIGN(auto listing, ListLog(*base));
    std::map<std::string, int> seen;
    for (int64_t v = 0; v <= listing.latest_version(); v++) {
      ASSERT_TRUE(listing.commits.count(v)) << "missing version " << v;
      ASSERT_OK_AND_ASSIGN(std::string content, base->Get(CommitKey(v)));
      ASSERT_OK_AND_ASSIGN(auto actions, ParseCommitFile(content, CommitKey(v)));
      for (const auto& a : actions) {
        if (const auto* add = std::get_if<AddFile>(&a)) {
          seen[add->path]++;
          auto it = committed.find(add->path);
          if (it != committed.end()) {
            EXPECT_EQ(it->second, v) << add->path;
          }
        }
      }
    }
    for (const auto& [file, version] : committed) EXPECT_EQ(seen[file], 1) << file;
    for (const auto& file : failed) EXPECT_EQ(seen[file], 0) << file;
    for (const auto& file : unknown) EXPECT_LE(seen[file], 1) << file;
    for (const auto& [file, count] : seen) EXPECT_EQ(count, 1) << file;
  }
}

// A store on which another writer always takes the next version first: each commit
// PutIfAbsent finds that version just written by a blind append (which conflicts with no
// blind append), so a transaction loses every race and keeps backing off.
class AlwaysBeatenStore final : public ::basin::testing::ForwardingStore {
 public:
  using ForwardingStore::ForwardingStore;

  Status PutIfAbsent(const std::string& key, const std::string& data) override {
    const std::string prefix = "_delta_log/";
    if (key.starts_with(prefix) && key.ends_with(".json")) {
      const int64_t version = std::stoll(key.substr(prefix.size()));
      std::vector<Action> winner{MakeCommitInfo(1700000000000, "WRITE"),
                                 TestAdd("winner-" + std::to_string(version) + ".parquet")};
      RETURN_IF_ERROR(WriteCommit(base(), version, winner));
      races_lost_++;
    }
    return ForwardingStore::PutIfAbsent(key, data);
  }

  int races_lost() const { return races_lost_.load(); }

 private:
  std::atomic<int> races_lost_{0};
};

// Ctrl-C while a commit waits to retry: cancelling the token from another thread wakes the
// backoff wait at once, and Commit() fails with Cancelled, having committed nothing.
TEST(TransactionCancelTest, CancellingDuringRetryBackoffReturnsPromptly) {
  auto base = NewMemoryObjectStore();
  TableFixture setup(base);
  ASSERT_OK(setup.Create());
  auto beaten = std::make_shared<AlwaysBeatenStore>(base);
  TableFixture table(beaten);
  CancellationToken cancellation;
  TransactionOptions options = TableFixture::Options();
  options.max_attempts = 1000000;
  options.backoff_initial_ms = 60000;  // each wait is up to a minute
  options.backoff_max_ms = 60000;
  options.seed = 42;
  options.cancellation = &cancellation;
  ASSERT_OK_AND_ASSIGN(auto txn, table.Begin(options));
  txn->Add(TestAdd("mine.parquet"));

  std::optional<Result<CommitResult>> result;
  std::thread committer([&] { result = txn->Commit(); });
  for (int i = 0; i < 5000 && beaten->races_lost() < 1; i++) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_GE(beaten->races_lost(), 1) << "the transaction never lost a race";
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // well into a wait
  const auto cancelled_at = std::chrono::steady_clock::now();
  cancellation.Cancel();
  committer.join();
  EXPECT_LT(std::chrono::steady_clock::now() - cancelled_at, std::chrono::seconds(2));
  ASSERT_TRUE(result.has_value());
  ASSERT_ERROR_CODE(*result, kCancelled);
  EXPECT_NE(result->status().message().find("nothing was committed"), std::string::npos)
      << result->status().ToString();

  ASSERT_OK_AND_ASSIGN(auto snapshot, setup.Load());
  for (const AddFile& file : snapshot->files) EXPECT_NE(file.path, "mine.parquet");
  EXPECT_EQ(snapshot->files.size(), static_cast<size_t>(beaten->races_lost()));
}

// A token cancelled before Commit() stops it before its first write.
TEST(TransactionCancelTest, AlreadyCancelledCommitWritesNothing) {
  TableFixture table(NewMemoryObjectStore());
  ASSERT_OK(table.Create());
  CancellationToken cancellation;
  cancellation.Cancel();
  TransactionOptions options = TableFixture::Options();
  options.cancellation = &cancellation;
  ASSERT_OK_AND_ASSIGN(auto txn, table.Begin(options));
  txn->Add(TestAdd("mine.parquet"));
  ASSERT_ERROR_CODE(txn->Commit(), kCancelled);
  ASSERT_OK_AND_ASSIGN(auto snapshot, table.Load());
  EXPECT_EQ(snapshot->version, 0);
}

}  // namespace
}  // namespace basin::delta
