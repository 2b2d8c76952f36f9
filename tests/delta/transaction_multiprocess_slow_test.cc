// Four processes commit 50 blind appends each to one local table at the same time:
// put-if-absent on the file system plus rebase-and-retry must land every append exactly
// once, with no gaps, while the committers also write checkpoints.
#include <map>

#include "delta/commit_writer.h"
#include "delta/log_segment.h"
#include "transaction_test_util.h"

namespace basin::delta {
namespace {

using testing::TableFixture;
using testing::TestAdd;

constexpr int kProcesses = 4;
constexpr int kCommitsEach = 50;

std::string FileName(int process, int i) {
  return "p" + std::to_string(process) + "-" + std::to_string(i) + ".parquet";
}

// The child's work; returns its exit code. DuckDB is opened only after fork().
int CommitAppends(const std::string& root, int process) {
  auto store = OpenLocalObjectStore(root);
  if (!store.ok()) return 2;
  TableFixture table(*store);
  TransactionOptions options = TableFixture::Options();
  options.max_attempts = 100;  // four writers racing for every version
  options.backoff_max_ms = 20;
  options.checkpoint_io = &table.log_io();
  for (int i = 0; i < kCommitsEach; i++) {
    auto txn = table.Begin(options);
    if (!txn.ok()) {
      std::fprintf(stderr, "process %d: %s\n", process, txn.status().ToString().c_str());
      return 3;
    }
    (*txn)->Add(TestAdd(FileName(process, i)));
    auto result = (*txn)->Commit();
    if (!result.ok()) {
      std::fprintf(stderr, "process %d commit %d: %s\n", process, i, result.status().ToString().c_str());
      return 4;
    }
    if (!result->checkpoint_status.ok()) {
      std::fprintf(stderr, "process %d checkpoint: %s\n", process,
                   result->checkpoint_status.ToString().c_str());
      return 5;
    }
  }
  return 0;
}

TEST(TransactionMultiProcessTest, FourProcessesAppendConcurrently) {
  basin::testing::TempDir dir;
  {
    ASSERT_OK_AND_ASSIGN(auto store, OpenLocalObjectStore(dir.str()));
    TableFixture setup(store);
    ASSERT_OK(setup.Create());
  }
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; p++) {
    pid_t pid = testing::ForkChild([&] { return CommitAppends(dir.str(), p); });
    ASSERT_GE(pid, 0);
    children.push_back(pid);
  }
  for (pid_t pid : children) EXPECT_EQ(testing::WaitChild(pid), 0) << "child exit status";

  ASSERT_OK_AND_ASSIGN(auto store, OpenLocalObjectStore(dir.str()));
  ASSERT_OK_AND_ASSIGN(auto listing, ListLog(*store));
  ASSERT_EQ(listing.latest_version(), kProcesses * kCommitsEach);
  std::map<std::string, int> adds;
  for (int64_t v = 0; v <= listing.latest_version(); v++) {
    ASSERT_OK_AND_ASSIGN(std::string content, store->Get(CommitKey(v)));
    ASSERT_OK_AND_ASSIGN(auto actions, ParseCommitFile(content, CommitKey(v)));
    for (const auto& a : actions) {
      if (const auto* add = std::get_if<AddFile>(&a)) adds[add->path]++;
    }
  }
  ASSERT_EQ(adds.size(), static_cast<size_t>(kProcesses * kCommitsEach));
  for (int p = 0; p < kProcesses; p++) {
    for (int i = 0; i < kCommitsEach; i++) EXPECT_EQ(adds[FileName(p, i)], 1) << FileName(p, i);
  }
  EXPECT_EQ(listing.checkpoints.size(), static_cast<size_t>(kProcesses * kCommitsEach / 10));

  TableFixture reader(store);
  ASSERT_OK_AND_ASSIGN(auto snapshot, reader.Load());
  EXPECT_EQ(snapshot->version, kProcesses * kCommitsEach);
  EXPECT_EQ(snapshot->files.size(), static_cast<size_t>(kProcesses * kCommitsEach));
}

}  // namespace
}  // namespace basin::delta
