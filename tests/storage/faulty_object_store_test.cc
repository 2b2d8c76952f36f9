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
  EXPECT_TRUE(IsInjected(store->OpenRead("k").status()));
  EXPECT_TRUE(IsInjected(store->OpenWrite("n").status()));
  EXPECT_EQ(store->injected_failures(), 9u);
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

TEST(FaultyObjectStore, StreamingCallsCountAndFail) {
  auto base = NewMemoryObjectStore();
  ASSERT_OK(base->Put("k", "0123456789"));
  auto store = NewFaultyObjectStore(base, {});
  // OpenRead, then each ReadAt, is a call.
  ASSERT_OK_AND_ASSIGN(auto reader, store->OpenRead("k"));
  char buffer[4];
  ASSERT_OK(reader->ReadAt(2, 4, buffer));
  EXPECT_EQ(std::string(buffer, 4), "2345");
  EXPECT_EQ(store->calls(), 2u);
  FaultOptions options;
  options.fail_nth_call = 1;
  store->SetOptions(options);
  EXPECT_TRUE(IsInjected(reader->ReadAt(0, 1, buffer)));
  ASSERT_OK(reader->ReadAt(0, 1, buffer));  // the next read goes through
  // OpenWrite and Close are calls; Appends are not.
  options.fail_nth_call = 3;
  store->SetOptions(options);
  ASSERT_OK_AND_ASSIGN(auto writer, store->OpenWrite("new", {WriteMode::kFreshKey}));  // call 1
  for (int i = 0; i < 10; i++) ASSERT_OK(writer->Append("x"));
  ASSERT_OK(store->Head("k"));      // call 2
  Status closed = writer->Close();  // call 3
  EXPECT_TRUE(IsInjected(closed)) << closed.ToString();
  EXPECT_NE(closed.message().find("'new'"), std::string::npos) << closed.ToString();
  // A failed Close leaves nothing, here or in the base store.
  ASSERT_ERROR_CODE(store->Head("new"), kNotFound);
  ASSERT_ERROR_CODE(base->Head("new"), kNotFound);
  EXPECT_FALSE(writer->Append("y").ok());
  EXPECT_EQ(store->calls(), 5u + 3u);
}

TEST(FaultyObjectStore, FailAfterWriteOnCloseLeavesTheObject) {
  auto base = NewMemoryObjectStore();
  FaultOptions options;
  options.fail_nth_call = 2;
  options.fail_after_write = true;
  auto store = NewFaultyObjectStore(base, options);
  ASSERT_OK_AND_ASSIGN(auto writer, store->OpenWrite("part.parquet", {WriteMode::kFreshKey}));
  ASSERT_OK(writer->Append("PAR1"));
  EXPECT_TRUE(IsInjected(writer->Close()));
  ASSERT_OK_AND_ASSIGN(std::string landed, base->Get("part.parquet"));
  EXPECT_EQ(landed, "PAR1");
}

TEST(FaultyObjectStore, BufferedObjectsAreLostWithTheUnsyncedWrites) {
  auto base = NewMemoryObjectStore();
  FaultOptions options;
  options.buffer_writes = true;
  auto store = NewFaultyObjectStore(base, options);
  ASSERT_OK_AND_ASSIGN(auto writer, store->OpenWrite("_last_checkpoint", {WriteMode::kAtomicReplace}));
  ASSERT_OK(writer->Append("bytes"));
  ASSERT_OK(writer->Close());
  // This store's readers see it, streaming too; the base store does not, until Sync.
  ASSERT_OK_AND_ASSIGN(auto reader, store->OpenRead("_last_checkpoint"));
  EXPECT_EQ(reader->size_bytes(), 5u);
  char buffer[5];
  ASSERT_OK(reader->ReadAt(0, 5, buffer));
  EXPECT_EQ(std::string(buffer, 5), "bytes");
  ASSERT_ERROR_CODE(base->Head("_last_checkpoint"), kNotFound);
  ASSERT_ERROR_CODE(store->OpenWrite("_last_checkpoint", {WriteMode::kFreshKey}), kAlreadyExists);
  EXPECT_EQ(store->unsynced_writes(), 1u);
  store->DropUnsynced();
  ASSERT_ERROR_CODE(store->OpenRead("_last_checkpoint"), kNotFound);
  // An open reader keeps the bytes it opened.
  ASSERT_OK(reader->ReadAt(1, 3, buffer));
  EXPECT_EQ(std::string(buffer, 3), "yte");

  ASSERT_OK_AND_ASSIGN(writer, store->OpenWrite("_last_checkpoint", {WriteMode::kAtomicReplace}));
  ASSERT_OK(writer->Append("b"));
  ASSERT_OK(writer->Close());
  ASSERT_OK(store->Sync());
  ASSERT_OK_AND_ASSIGN(std::string synced, base->Get("_last_checkpoint"));
  EXPECT_EQ(synced, "b");
}

// A fresh key's Close is durable by contract, so it is not held back with unsynced writes.
TEST(FaultyObjectStore, FreshKeyObjectsAreDurableAtClose) {
  auto base = NewMemoryObjectStore();
  FaultOptions options;
  options.buffer_writes = true;
  auto store = NewFaultyObjectStore(base, options);
  ASSERT_OK_AND_ASSIGN(auto writer, store->OpenWrite("data/a.parquet", {WriteMode::kFreshKey}));
  ASSERT_OK(writer->Append("PAR1"));
  ASSERT_OK(writer->Close());
  EXPECT_EQ(store->unsynced_writes(), 0u);
  store->DropUnsynced();
  ASSERT_OK_AND_ASSIGN(std::string data, base->Get("data/a.parquet"));
  EXPECT_EQ(data, "PAR1");
}

TEST(FaultyObjectStore, DescribeNamesTheBase) {
  auto store = NewFaultyObjectStore(NewMemoryObjectStore(), {});
  EXPECT_EQ(store->Describe(), "faulty(memory)");
}

}  // namespace
}  // namespace basin
