#include "storage/faulty_object_store.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include "testing/test_util.h"

namespace basin {
namespace {

bool IsInjected(const Status& st) {
  return st.code() == ErrorCode::kIOError && st.retryable() &&
         st.message().find("injected fault") != std::string::npos;
}

TEST(FaultyObjectStore, FailsExactlyTheNthCall) {
  auto base = NewMemoryObjectStore();
  FaultOptions options;
  options.fail_nth_call = 3;
  auto store = NewFaultyObjectStore(base, options);
  ASSERT_OK(store->Put("a", "1"));      // call 1
  ASSERT_OK(store->Get("a"));           // call 2
  Status third = store->Put("b", "2");  // call 3
  EXPECT_TRUE(IsInjected(third)) << third.ToString();
  EXPECT_NE(third.message().find("'b'"), std::string::npos) << third.ToString();
  ASSERT_ERROR_CODE(base->Get("b"), kNotFound);  // the failed write did nothing
  ASSERT_OK(store->Put("b", "2"));               // call 4: a retry succeeds
  for (int i = 0; i < 20; i++) ASSERT_OK(store->Head("a"));
  EXPECT_EQ(store->calls(), 24u);
  EXPECT_EQ(store->injected_failures(), 1u);
}

TEST(FaultyObjectStore, SetOptionsRestartsTheCount) {
  auto store = NewFaultyObjectStore(NewMemoryObjectStore(), {});
  for (int i = 0; i < 5; i++) ASSERT_OK(store->Put("k" + std::to_string(i), "v"));
  FaultOptions options;
  options.fail_nth_call = 2;
  store->SetOptions(options);
  ASSERT_OK(store->List(""));
  EXPECT_TRUE(IsInjected(store->List("").status()));
  ASSERT_OK(store->List(""));
  EXPECT_EQ(store->calls(), 8u);
  EXPECT_EQ(store->options().fail_nth_call, 2u);
}

TEST(FaultyObjectStore, EveryOperationCanFail) {
  auto base = NewMemoryObjectStore();
  ASSERT_OK(base->Put("k", "value"));
  FaultOptions options;
  options.failure_probability = 1.0;
  auto store = NewFaultyObjectStore(base, options);
  EXPECT_TRUE(IsInjected(store->Get("k").status()));
  EXPECT_TRUE(IsInjected(store->GetRange("k", 0, 1).status()));
  EXPECT_TRUE(IsInjected(store->Head("k").status()));
  EXPECT_TRUE(IsInjected(store->Put("k", "x")));
  EXPECT_TRUE(IsInjected(store->PutIfAbsent("n", "x")));
  EXPECT_TRUE(IsInjected(store->Delete("k")));
  EXPECT_TRUE(IsInjected(store->List("").status()));
  EXPECT_EQ(store->injected_failures(), 7u);
  ASSERT_OK_AND_ASSIGN(std::string data, base->Get("k"));
  EXPECT_EQ(data, "value");
  ASSERT_ERROR_CODE(base->Get("n"), kNotFound);
}

// Which of `calls` Head() calls fail, as a bit pattern.
std::vector<bool> FailurePattern(FaultyObjectStore& store, int calls) {
  std::vector<bool> failed;
  for (int i = 0; i < calls; i++) failed.push_back(!store.Head("k").ok());
  return failed;
}

TEST(FaultyObjectStore, ProbabilityIsReproducibleFromTheSeed) {
  auto base = NewMemoryObjectStore();
  ASSERT_OK(base->Put("k", "v"));
  FaultOptions options;
  options.failure_probability = 0.3;
  options.seed = 42;
  auto first = NewFaultyObjectStore(base, options);
  auto second = NewFaultyObjectStore(base, options);
  std::vector<bool> a = FailurePattern(*first, 1000);
  std::vector<bool> b = FailurePattern(*second, 1000);
  EXPECT_EQ(a, b);
  size_t failures = std::count(a.begin(), a.end(), true);
  EXPECT_GT(failures, 230u);  // about 300; a broken draw (never, always) would miss
  EXPECT_LT(failures, 370u);

  options.seed = 43;
  auto other_seed = NewFaultyObjectStore(base, options);
  EXPECT_NE(FailurePattern(*other_seed, 1000), a);

  // Reseeding through SetOptions replays the same sequence.
  first->SetOptions(FaultOptions{.failure_probability = 0.3, .seed = 42});
  EXPECT_EQ(FailurePattern(*first, 1000), a);
}

TEST(FaultyObjectStore, FailAfterWriteAppliesTheWrite) {
  auto base = NewMemoryObjectStore();
  FaultOptions options;
  options.fail_nth_call = 1;
  options.fail_after_write = true;
  auto store = NewFaultyObjectStore(base, options);
  Status st = store->PutIfAbsent("_delta_log/00000000000000000001.json", "commit");
  EXPECT_TRUE(IsInjected(st)) << st.ToString();
  // The commit landed although the caller was told it failed; a retry must notice.
  ASSERT_OK_AND_ASSIGN(std::string data, base->Get("_delta_log/00000000000000000001.json"));
  EXPECT_EQ(data, "commit");
  ASSERT_ERROR_CODE(store->PutIfAbsent("_delta_log/00000000000000000001.json", "commit"), kAlreadyExists);
}

TEST(FaultyObjectStore, LatencyDelaysEachCall) {
  FaultOptions options;
  options.latency_ms = 20;
  auto store = NewFaultyObjectStore(NewMemoryObjectStore(), options);
  auto start = std::chrono::steady_clock::now();
  ASSERT_OK(store->Put("k", "v"));
  ASSERT_OK(store->Get("k"));
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_GE(elapsed, std::chrono::milliseconds(40));
}

TEST(FaultyObjectStore, DropUnsyncedLosesExactlyTheUnsyncedWrites) {
  auto base = NewMemoryObjectStore();
  ASSERT_OK(base->Put("kept", "old"));
  ASSERT_OK(base->Put("deleted-then-dropped", "still here"));
  FaultOptions options;
  options.buffer_writes = true;
  auto store = NewFaultyObjectStore(base, options);

  ASSERT_OK(store->Put("synced", "s"));
  ASSERT_OK(store->PutIfAbsent("_delta_log/00000000000000000000.json", "v0"));
  ASSERT_OK(store->Sync());
  EXPECT_EQ(store->unsynced_writes(), 0u);

  ASSERT_OK(store->Put("unsynced", "u"));
  ASSERT_OK(store->Put("kept", "new"));
  ASSERT_OK(store->Delete("deleted-then-dropped"));
  ASSERT_OK(store->PutIfAbsent("_delta_log/00000000000000000001.json", "v1"));
  EXPECT_EQ(store->unsynced_writes(), 4u);

  // Before the crash this store's readers see everything; the base sees only synced data.
  ASSERT_OK_AND_ASSIGN(std::string seen, store->Get("kept"));
  EXPECT_EQ(seen, "new");
  ASSERT_ERROR_CODE(store->Get("deleted-then-dropped"), kNotFound);
  ASSERT_ERROR_CODE(store->PutIfAbsent("_delta_log/00000000000000000001.json", "again"), kAlreadyExists);
  ASSERT_ERROR_CODE(store->PutIfAbsent("_delta_log/00000000000000000000.json", "again"), kAlreadyExists);
  ASSERT_OK_AND_ASSIGN(auto listed, store->List("_delta_log/"));
  EXPECT_EQ(listed.size(), 2u);
  ASSERT_ERROR_CODE(base->Get("unsynced"), kNotFound);
  EXPECT_FALSE(store->LocalPath("unsynced").has_value());

  store->DropUnsynced();
  EXPECT_EQ(store->unsynced_writes(), 0u);
  ASSERT_OK_AND_ASSIGN(std::string synced, store->Get("synced"));
  EXPECT_EQ(synced, "s");
  ASSERT_OK_AND_ASSIGN(std::string v0, store->Get("_delta_log/00000000000000000000.json"));
  EXPECT_EQ(v0, "v0");
  ASSERT_ERROR_CODE(store->Get("unsynced"), kNotFound);
  ASSERT_ERROR_CODE(store->Get("_delta_log/00000000000000000001.json"), kNotFound);
  ASSERT_OK_AND_ASSIGN(std::string kept, store->Get("kept"));
  EXPECT_EQ(kept, "old");
  ASSERT_OK_AND_ASSIGN(std::string undeleted, store->Get("deleted-then-dropped"));
  EXPECT_EQ(undeleted, "still here");
  ASSERT_OK_AND_ASSIGN(auto after, store->List(""));
  std::vector<std::string> keys;
  for (const auto& info : after) keys.push_back(info.key);
  EXPECT_EQ(keys, (std::vector<std::string>{"_delta_log/00000000000000000000.json", "deleted-then-dropped",
                                            "kept", "synced"}));
  // The lost version can be committed again, as after a real crash.
  ASSERT_OK(store->PutIfAbsent("_delta_log/00000000000000000001.json", "v1 retried"));
}

TEST(FaultyObjectStore, SyncAppliesWritesAndDeletes) {
  auto base = NewMemoryObjectStore();
  ASSERT_OK(base->Put("gone", "x"));
  FaultOptions options;
  options.buffer_writes = true;
  auto store = NewFaultyObjectStore(base, options);
  ASSERT_OK(store->Put("new", "n"));
  ASSERT_OK(store->Delete("gone"));
  ASSERT_OK(store->Sync());
  store->DropUnsynced();  // nothing left to lose
  ASSERT_OK_AND_ASSIGN(std::string data, base->Get("new"));
  EXPECT_EQ(data, "n");
  ASSERT_ERROR_CODE(base->Get("gone"), kNotFound);
}

TEST(FaultyObjectStore, DescribeNamesTheBase) {
  auto store = NewFaultyObjectStore(NewMemoryObjectStore(), {});
  EXPECT_EQ(store->Describe(), "faulty(memory)");
}

}  // namespace
}  // namespace basin
