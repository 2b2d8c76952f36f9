// The behaviour every ObjectStore backend must have (see include/basin/object_store.h).
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <functional>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "basin/object_store.h"
#include "storage/faulty_object_store.h"
#include "storage/prefixed_object_store.h"
#include "testing/test_util.h"

namespace basin {
namespace {

using basin::testing::TempDir;

struct Backend {
  std::string name;
  bool local = false;  // keeps objects as files under a folder (LocalPath, other processes)
  std::function<std::shared_ptr<ObjectStore>(const TempDir&)> open;
  // Where the store's root is below TempDir/root, for local stores.
  std::string local_subfolder = "";
};

std::shared_ptr<ObjectStore> OpenLocal(const TempDir& dir) {
  auto store = OpenLocalObjectStore(dir.str() + "/root");
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  return store.ok() ? *store : nullptr;
}

std::vector<Backend> Backends() {
  return {
      {"local", true, OpenLocal},
      {"memory", false, [](const TempDir&) { return NewMemoryObjectStore(); }},
      {"faulty_memory", false,
       [](const TempDir&) { return NewFaultyObjectStore(NewMemoryObjectStore(), {}); }},
      {"faulty_local", true, [](const TempDir& dir) { return NewFaultyObjectStore(OpenLocal(dir), {}); }},
      // Unsynced writes must look, to this store's own readers, exactly like synced ones.
      {"faulty_buffered", false,
       [](const TempDir&) {
         FaultOptions options;
         options.buffer_writes = true;
         return NewFaultyObjectStore(NewMemoryObjectStore(), options);
       }},
      {"prefixed_memory", false,
       [](const TempDir&) { return NewPrefixedObjectStore(NewMemoryObjectStore(), "tables/t"); }},
      {"prefixed_local", true,
       [](const TempDir& dir) { return NewPrefixedObjectStore(OpenLocal(dir), "tables/t"); }, "tables/t"},
  };
}

class ObjectStoreConformance : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    store_ = GetParam().open(dir_);
    ASSERT_NE(store_, nullptr);
  }

  std::vector<std::string> Keys(const std::string& prefix) {
    auto listed = store_->List(prefix);
    EXPECT_TRUE(listed.ok()) << listed.status().ToString();
    std::vector<std::string> keys;
    if (listed.ok()) {
      for (const auto& info : *listed) keys.push_back(info.key);
    }
    return keys;
  }

  // Keys(prefix) without a local store's temporary files of writes in progress.
  std::vector<std::string> ObjectKeys(const std::string& prefix) {
    std::vector<std::string> keys = Keys(prefix);
    std::erase_if(keys, [](const std::string& key) { return IsLocalTempFile(key); });
    return keys;
  }

  TempDir dir_;
  std::shared_ptr<ObjectStore> store_;
};

TEST_P(ObjectStoreConformance, PutThenGet) {
  ASSERT_OK(store_->Put("a/b/c.txt", "hello"));
  ASSERT_OK_AND_ASSIGN(std::string data, store_->Get("a/b/c.txt"));
  EXPECT_EQ(data, "hello");
}

TEST_P(ObjectStoreConformance, BinaryAndEmptyObjects) {
  std::string binary("\0\x01\xff\n\r", 5);
  ASSERT_OK(store_->Put("bin", binary));
  ASSERT_OK(store_->Put("empty", ""));
  ASSERT_OK_AND_ASSIGN(std::string got, store_->Get("bin"));
  EXPECT_EQ(got, binary);
  ASSERT_OK_AND_ASSIGN(std::string empty, store_->Get("empty"));
  EXPECT_EQ(empty, "");
  ASSERT_OK_AND_ASSIGN(ObjectInfo info, store_->Head("empty"));
  EXPECT_EQ(info.size_bytes, 0u);
}

TEST_P(ObjectStoreConformance, PutOverwrites) {
  ASSERT_OK(store_->Put("k", "first, longer value"));
  ASSERT_OK(store_->Put("k", "second"));
  ASSERT_OK_AND_ASSIGN(std::string data, store_->Get("k"));
  EXPECT_EQ(data, "second");
  ASSERT_OK_AND_ASSIGN(ObjectInfo info, store_->Head("k"));
  EXPECT_EQ(info.size_bytes, 6u);
}

TEST_P(ObjectStoreConformance, MissingObjectsAreNotFound) {
  ASSERT_ERROR_CODE(store_->Get("nope"), kNotFound);
  ASSERT_ERROR_CODE(store_->GetRange("nope", 0, 1), kNotFound);
  ASSERT_ERROR_CODE(store_->Head("nope/deeper"), kNotFound);
  // A folder is not an object.
  ASSERT_OK(store_->Put("dir/file", "x"));
  ASSERT_ERROR_CODE(store_->Get("dir"), kNotFound);
  ASSERT_ERROR_CODE(store_->Head("dir"), kNotFound);
  // A path through an object is not an object either.
  ASSERT_ERROR_CODE(store_->Get("dir/file/below"), kNotFound);
}

TEST_P(ObjectStoreConformance, GetRange) {
  ASSERT_OK(store_->Put("r", "0123456789"));
  ASSERT_OK_AND_ASSIGN(std::string middle, store_->GetRange("r", 3, 4));
  EXPECT_EQ(middle, "3456");
  ASSERT_OK_AND_ASSIGN(std::string tail, store_->GetRange("r", 8, 2));
  EXPECT_EQ(tail, "89");
  ASSERT_OK_AND_ASSIGN(std::string none, store_->GetRange("r", 10, 0));
  EXPECT_EQ(none, "");
}

TEST_P(ObjectStoreConformance, GetRangePastTheEndIsCorruptionNamingTheKey) {
  ASSERT_OK(store_->Put("short", "0123"));
  for (auto [offset, length] :
       std::vector<std::pair<uint64_t, uint64_t>>{{2, 3}, {5, 0}, {0, UINT64_MAX}, {UINT64_MAX, 2}}) {
    auto got = store_->GetRange("short", offset, length);
    ASSERT_ERROR_CODE(got, kCorruption);
    EXPECT_NE(got.status().message().find("short"), std::string::npos) << got.status().ToString();
  }
}

TEST_P(ObjectStoreConformance, Head) {
  int64_t before_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  ASSERT_OK(store_->Put("x/y", "12345"));
  ASSERT_OK_AND_ASSIGN(ObjectInfo info, store_->Head("x/y"));
  EXPECT_EQ(info.key, "x/y");
  EXPECT_EQ(info.size_bytes, 5u);
  // File systems may round times down to their granularity; allow a few seconds either way.
  EXPECT_GT(info.modification_time_ms, before_ms - 5000);
  EXPECT_LT(info.modification_time_ms, before_ms + 60000);
}

TEST_P(ObjectStoreConformance, Delete) {
  ASSERT_OK(store_->Put("d/one", "1"));
  ASSERT_OK(store_->Delete("d/one"));
  ASSERT_ERROR_CODE(store_->Get("d/one"), kNotFound);
  EXPECT_TRUE(Keys("d/").empty());
  // Deleting what is absent is fine.
  ASSERT_OK(store_->Delete("d/one"));
  ASSERT_OK(store_->Delete("never/existed"));
}

TEST_P(ObjectStoreConformance, ListIsSortedBytewiseAndRecursive) {
  // Put in an order unrelated to the sorted one; include names that sort differently
  // bytewise than by locale or by "folders first" ('.' < '/' < '0' < 'A' < '_' < 'a' < 0xC3).
  std::vector<std::string> keys = {"t/_delta_log/00000000000000000010.json",
                                   "t/_delta_log/00000000000000000002.json",
                                   "t/b.parquet",
                                   "t/a/x.parquet",
                                   "t/a.b",
                                   "t/A",
                                   "t/\xc3\xa9t\xc3\xa9",
                                   "t/_delta_log/_sidecars/s.parquet",
                                   "u/other"};
  for (const auto& key : keys) ASSERT_OK(store_->Put(key, key));
  std::vector<std::string> expected = {"t/A",
                                       "t/_delta_log/00000000000000000002.json",
                                       "t/_delta_log/00000000000000000010.json",
                                       "t/_delta_log/_sidecars/s.parquet",
                                       "t/a.b",
                                       "t/a/x.parquet",
                                       "t/b.parquet",
                                       "t/\xc3\xa9t\xc3\xa9"};
  EXPECT_EQ(Keys("t/"), expected);

  ASSERT_OK_AND_ASSIGN(auto infos, store_->List("t/_delta_log/"));
  ASSERT_EQ(infos.size(), 3u);
  EXPECT_EQ(infos[0].key, "t/_delta_log/00000000000000000002.json");
  EXPECT_EQ(infos[0].size_bytes, infos[0].key.size());
}

TEST_P(ObjectStoreConformance, ListAfterStartsPastAKey) {
  for (const std::string key : {"log/0001.json", "log/0002.json", "log/0002.checkpoint.parquet",
                                "log/0010.json", "log/_last_checkpoint", "logbook/x"}) {
    ASSERT_OK(store_->Put(key, "v"));
  }
  auto keys_after = [&](const std::string& start_after) {
    std::vector<std::string> keys;
    auto listed = store_->ListAfter("log/", start_after);
    EXPECT_TRUE(listed.ok()) << listed.status().ToString();
    if (listed.ok()) {
      for (const auto& info : *listed) keys.push_back(info.key);
    }
    return keys;
  };
  // Every file of version 0002 sorts after the bare version prefix.
  EXPECT_EQ(keys_after("log/0002"), (std::vector<std::string>{"log/0002.checkpoint.parquet", "log/0002.json",
                                                              "log/0010.json", "log/_last_checkpoint"}));
  EXPECT_EQ(keys_after("log/0002.json"), (std::vector<std::string>{"log/0010.json", "log/_last_checkpoint"}));
  EXPECT_EQ(keys_after("").size(), 5u);
  EXPECT_TRUE(keys_after("log/~").empty());
}

TEST_P(ObjectStoreConformance, ListPrefixes) {
  for (const std::string key : {"log/0001.json", "log/0002.json", "log/0010.json",
                                "log/0001.checkpoint.parquet", "logbook/x", "lo", "other/log/0001.json"}) {
    ASSERT_OK(store_->Put(key, "v"));
  }
  EXPECT_EQ(Keys("log/000"),
            (std::vector<std::string>{"log/0001.checkpoint.parquet", "log/0001.json", "log/0002.json"}));
  EXPECT_EQ(Keys("log/0001"), (std::vector<std::string>{"log/0001.checkpoint.parquet", "log/0001.json"}));
  // Without the '/', "log" is a plain string prefix: it also matches "logbook/".
  EXPECT_EQ(Keys("log"), (std::vector<std::string>{"log/0001.checkpoint.parquet", "log/0001.json",
                                                   "log/0002.json", "log/0010.json", "logbook/x"}));
  EXPECT_EQ(Keys("log/").size(), 4u);
  EXPECT_EQ(Keys("").size(), 7u);
  EXPECT_EQ(Keys("lo"), Keys("l"));
  // Nothing matching is an empty list, not NotFound.
  EXPECT_TRUE(Keys("missing/").empty());
  EXPECT_TRUE(Keys("log/9").empty());
  // A prefix naming one object lists it.
  EXPECT_EQ(Keys("log/0010.json"), (std::vector<std::string>{"log/0010.json"}));
}

TEST_P(ObjectStoreConformance, KeysMayNotEscapeTheRoot) {
  for (const std::string key : {"../escape", "a/../../escape", "a/..", "/abs", "", "a//b", "a/./b", "a/"}) {
    ASSERT_ERROR_CODE(store_->Put(key, "x"), kInvalidArgument);
    ASSERT_ERROR_CODE(store_->PutIfAbsent(key, "x"), kInvalidArgument);
    ASSERT_ERROR_CODE(store_->Get(key), kInvalidArgument);
    ASSERT_ERROR_CODE(store_->Head(key), kInvalidArgument);
    ASSERT_ERROR_CODE(store_->Delete(key), kInvalidArgument);
  }
  ASSERT_ERROR_CODE(store_->List("../"), kInvalidArgument);
  ASSERT_ERROR_CODE(store_->List("a/../"), kInvalidArgument);
  ASSERT_ERROR_CODE(store_->List("/"), kInvalidArgument);
  EXPECT_FALSE(std::filesystem::exists(dir_.path() / "escape"));
}

TEST_P(ObjectStoreConformance, PutIfAbsentCreatesOnce) {
  ASSERT_OK(store_->PutIfAbsent("_delta_log/00000000000000000000.json", "first"));
  auto second = store_->PutIfAbsent("_delta_log/00000000000000000000.json", "second");
  ASSERT_ERROR_CODE(second, kAlreadyExists);
  EXPECT_FALSE(second.retryable());
  ASSERT_OK_AND_ASSIGN(std::string data, store_->Get("_delta_log/00000000000000000000.json"));
  EXPECT_EQ(data, "first");
  // After a delete the key is free again.
  ASSERT_OK(store_->Delete("_delta_log/00000000000000000000.json"));
  ASSERT_OK(store_->PutIfAbsent("_delta_log/00000000000000000000.json", "third"));
  ASSERT_OK_AND_ASSIGN(std::string again, store_->Get("_delta_log/00000000000000000000.json"));
  EXPECT_EQ(again, "third");
  // Objects written with Put count as present too.
  ASSERT_OK(store_->Put("p", "put"));
  ASSERT_ERROR_CODE(store_->PutIfAbsent("p", "x"), kAlreadyExists);
}

TEST_P(ObjectStoreConformance, ConcurrentPutIfAbsentHasExactlyOneWinner) {
  constexpr int kThreads = 8;
  constexpr int kRounds = 20;
  // Large enough that a torn or interleaved write would show.
  auto payload = [](int thread) { return std::string(64 * 1024, static_cast<char>('a' + thread)); };
  for (int round = 0; round < kRounds; round++) {
    std::string key = "race/" + std::to_string(round);
    std::atomic<int> winners{0};
    std::atomic<int> losers{0};
    std::atomic<int> others{0};
    std::atomic<int> winner_id{-1};
    std::atomic<bool> go{false};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; t++) {
      threads.emplace_back([&, t] {
        while (!go.load()) std::this_thread::yield();
        Status st = store_->PutIfAbsent(key, payload(t));
        if (st.ok()) {
          winners++;
          winner_id = t;
        } else if (st.IsAlreadyExists()) {
          losers++;
        } else {
          others++;
        }
      });
    }
    go = true;
    for (auto& thread : threads) thread.join();
    ASSERT_EQ(winners.load(), 1) << key;
    ASSERT_EQ(losers.load(), kThreads - 1) << key;
    ASSERT_EQ(others.load(), 0) << key;
    ASSERT_OK_AND_ASSIGN(std::string data, store_->Get(key));
    EXPECT_EQ(data, payload(winner_id.load())) << key;
  }
  // Losers leave nothing behind that looks like the key.
  ASSERT_OK_AND_ASSIGN(auto listed, store_->List("race/"));
  std::set<std::string> keys;
  for (const auto& info : listed) {
    if (info.key.find("/.") == std::string::npos) keys.insert(info.key);
  }
  EXPECT_EQ(keys.size(), static_cast<size_t>(kRounds));
}

TEST_P(ObjectStoreConformance, ConcurrentPutsLeaveOneWholeValue) {
  constexpr int kThreads = 4;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; i++)
        EXPECT_OK(store_->Put("same", std::string(32 * 1024, static_cast<char>('a' + t))));
    });
  }
  std::atomic<bool> stop{false};
  std::thread reader([&] {
    while (!stop.load()) {
      auto got = store_->Get("same");
      if (!got.ok()) continue;  // not written yet
      ASSERT_EQ(got->size(), 32u * 1024);
      EXPECT_EQ(got->find_first_not_of((*got)[0]), std::string::npos) << "torn read";
    }
  });
  for (auto& thread : threads) thread.join();
  stop = true;
  reader.join();
}

TEST_P(ObjectStoreConformance, LocalPath) {
  ASSERT_OK(store_->Put("f/data.parquet", "PAR1"));
  auto path = store_->LocalPath("f/data.parquet");
  if (!GetParam().local) {
    EXPECT_FALSE(path.has_value());
    return;
  }
  ASSERT_TRUE(path.has_value());
  const std::filesystem::path root = (dir_.path() / "root" / GetParam().local_subfolder).lexically_normal();
  EXPECT_EQ(*path, (root / "f" / "data.parquet").string());
  EXPECT_TRUE(std::filesystem::is_regular_file(*path));
  ASSERT_TRUE(store_->LocalPath("").has_value());
  std::string root_text = root.string();
  while (root_text.back() == '/') root_text.pop_back();
  EXPECT_EQ(*store_->LocalPath(""), root_text);
  EXPECT_FALSE(store_->LocalPath("../x").has_value());
}

// --- streaming reads and writes ---

// `size` bytes that differ at every offset a test might read, so a misplaced read shows.
std::string Pattern(size_t size, uint32_t seed) {
  std::string out(size, '\0');
  std::mt19937 rng(seed);
  for (char& c : out) c = static_cast<char>(rng());
  return out;
}

std::string ReadRange(ReadableObject& object, uint64_t offset, uint64_t length) {
  std::string out(static_cast<size_t>(length), '\0');
  Status st = object.ReadAt(offset, length, out.data());
  EXPECT_TRUE(st.ok()) << st.ToString();
  return out;
}

TEST_P(ObjectStoreConformance, OpenReadReadsAnyRangeWithoutReopening) {
  const std::string data = Pattern(100000, 1);
  ASSERT_OK(store_->Put("r/obj", data));
  ASSERT_OK_AND_ASSIGN(ObjectInfo head, store_->Head("r/obj"));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ReadableObject> object, store_->OpenRead("r/obj"));
  EXPECT_EQ(object->size_bytes(), data.size());
  ASSERT_TRUE(object->modification_time_ms().has_value());
  EXPECT_EQ(*object->modification_time_ms(), head.modification_time_ms);
  // Backwards, forwards, overlapping, the last byte, nothing at the end.
  EXPECT_EQ(ReadRange(*object, 99990, 10), data.substr(99990));
  EXPECT_EQ(ReadRange(*object, 0, 4), data.substr(0, 4));
  EXPECT_EQ(ReadRange(*object, 50000, 30000), data.substr(50000, 30000));
  EXPECT_EQ(ReadRange(*object, 49999, 2), data.substr(49999, 2));
  EXPECT_EQ(ReadRange(*object, 100000, 0), "");
  // Past the end: Corruption naming the key, before touching `out`.
  for (auto [offset, length] : std::vector<std::pair<uint64_t, uint64_t>>{
           {99999, 2}, {100001, 0}, {0, UINT64_MAX}, {UINT64_MAX, 1}}) {
    char unused = 0;
    Status st = object->ReadAt(offset, length, &unused);
    ASSERT_ERROR_CODE(st, kCorruption);
    EXPECT_NE(st.message().find("r/obj"), std::string::npos) << st.ToString();
  }
}

TEST_P(ObjectStoreConformance, OpenReadTakesWhatTheCallerKnows) {
  const std::string data = Pattern(5000, 2);
  ASSERT_OK(store_->Put("known", data));
  ObjectReadOptions options;
  options.size_bytes = data.size();
  options.modification_time_ms = 1234;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ReadableObject> object, store_->OpenRead("known", options));
  EXPECT_EQ(object->size_bytes(), data.size());
  EXPECT_EQ(ReadRange(*object, 4000, 1000), data.substr(4000));
  // A store that looked may report the real time; one that did not reports the given one.
  ASSERT_TRUE(object->modification_time_ms().has_value());
  // A size that is too large makes reads past the real end fail, not invent bytes.
  options.size_bytes = data.size() + 10;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ReadableObject> wrong, store_->OpenRead("known", options));
  char buffer[20];
  Status st = wrong->ReadAt(data.size() - 5, 10, buffer);
  EXPECT_FALSE(st.ok());
}

TEST_P(ObjectStoreConformance, OpenReadOfMissingObjectsIsNotFound) {
  ASSERT_ERROR_CODE(store_->OpenRead("nope"), kNotFound);
  ASSERT_OK(store_->Put("dir/file", "x"));
  ASSERT_ERROR_CODE(store_->OpenRead("dir"), kNotFound);
  ASSERT_ERROR_CODE(store_->OpenRead("dir/file/below"), kNotFound);
  ASSERT_ERROR_CODE(store_->OpenRead("../x"), kInvalidArgument);
}

TEST_P(ObjectStoreConformance, AReaderKeepsTheBytesItOpened) {
  const std::string before = Pattern(64 * 1024, 3);
  ASSERT_OK(store_->Put("replaced", before));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ReadableObject> object, store_->OpenRead("replaced"));
  ASSERT_OK(store_->Put("replaced", Pattern(32 * 1024, 4)));
  std::string got(before.size(), '\0');
  // Old bytes or an error; never the new object's bytes, nor a mix.
  if (object->ReadAt(0, got.size(), got.data()).ok()) {
    EXPECT_EQ(got, before);
  }
  ASSERT_OK(store_->Delete("replaced"));
  if (object->ReadAt(1000, 100, got.data()).ok()) {
    EXPECT_EQ(got.substr(0, 100), before.substr(1000, 100));
  }
}

TEST_P(ObjectStoreConformance, ConcurrentReadersOfOneObject) {
  const std::string data = Pattern(1 << 20, 5);
  ASSERT_OK(store_->Put("shared.parquet", data));
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<ReadableObject> one, store_->OpenRead("shared.parquet"));
  constexpr int kThreads = 8;
  std::atomic<int> mismatches{0};
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(static_cast<uint64_t>(t));
      // Half the threads share one reader, the others open their own.
      std::shared_ptr<ReadableObject> object = one;
      if (t % 2 == 1) {
        auto opened = store_->OpenRead("shared.parquet");
        if (!opened.ok()) {
          errors++;
          return;
        }
        object = std::move(opened).value();
      }
      std::string buffer;
      for (int i = 0; i < 200; i++) {
        const uint64_t offset = rng() % data.size();
        const uint64_t length = rng() % std::min<uint64_t>(data.size() - offset, 70000);
        buffer.resize(length);
        if (!object->ReadAt(offset, length, buffer.data()).ok()) {
          errors++;
        } else if (buffer != std::string_view(data).substr(offset, length)) {
          mismatches++;
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(mismatches.load(), 0);
}

TEST_P(ObjectStoreConformance, AtomicReplaceWriterIsInvisibleUntilClose) {
  ASSERT_OK(store_->Put("w/obj", "old"));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<WritableObject> writer,
                       store_->OpenWrite("w/obj", {WriteMode::kAtomicReplace}));
  ASSERT_OK(writer->Append("new "));
  ASSERT_OK(writer->Append(""));
  ASSERT_OK(writer->Append("bytes"));
  EXPECT_EQ(writer->size_bytes(), 9u);
  ASSERT_OK_AND_ASSIGN(std::string during, store_->Get("w/obj"));
  EXPECT_EQ(during, "old");
  EXPECT_EQ(ObjectKeys("w/"), std::vector<std::string>{"w/obj"});
  ASSERT_OK(writer->Close());
  ASSERT_OK_AND_ASSIGN(std::string after, store_->Get("w/obj"));
  EXPECT_EQ(after, "new bytes");
  ASSERT_OK_AND_ASSIGN(ObjectInfo info, store_->Head("w/obj"));
  EXPECT_EQ(info.size_bytes, 9u);
  EXPECT_EQ(Keys("w/"), std::vector<std::string>{"w/obj"});
  // A closed writer takes nothing more.
  EXPECT_FALSE(writer->Append("x").ok());
  EXPECT_FALSE(writer->Close().ok());
}

TEST_P(ObjectStoreConformance, FreshKeyWriterCreatesNewObjectsOnly) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<WritableObject> writer,
                       store_->OpenWrite("part=1/data.parquet", {WriteMode::kFreshKey}));
  ASSERT_OK(writer->Append("PAR1"));
  ASSERT_OK(writer->Append("body"));
  ASSERT_OK(writer->Close());
  ASSERT_OK_AND_ASSIGN(std::string data, store_->Get("part=1/data.parquet"));
  EXPECT_EQ(data, "PAR1body");
  // The key is taken now, by this writer's object or by a Put.
  ASSERT_ERROR_CODE(store_->OpenWrite("part=1/data.parquet", {WriteMode::kFreshKey}), kAlreadyExists);
  ASSERT_OK(store_->Put("put", "p"));
  ASSERT_ERROR_CODE(store_->OpenWrite("put", {WriteMode::kFreshKey}), kAlreadyExists);
  ASSERT_OK_AND_ASSIGN(std::string untouched, store_->Get("put"));
  EXPECT_EQ(untouched, "p");
  ASSERT_ERROR_CODE(store_->OpenWrite("a//b", {WriteMode::kFreshKey}), kInvalidArgument);
  ASSERT_ERROR_CODE(store_->OpenWrite("../b", {WriteMode::kAtomicReplace}), kInvalidArgument);
}

TEST_P(ObjectStoreConformance, WritersAbortedMidwayLeaveNothingVisible) {
  ASSERT_OK(store_->Put("keep/old", "old"));
  for (WriteMode mode : {WriteMode::kFreshKey, WriteMode::kAtomicReplace}) {
    SCOPED_TRACE(mode == WriteMode::kFreshKey ? "fresh key" : "atomic replace");
    // Explicitly aborted, in a new folder.
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<WritableObject> aborted,
                         store_->OpenWrite("new/folder/a.parquet", {mode}));
    ASSERT_OK(aborted->Append(Pattern(300000, 6)));
    aborted->Abort();
    EXPECT_FALSE(aborted->Close().ok());
    // Dropped without Close, as a writer that failed half way is.
    {
      ASSERT_OK_AND_ASSIGN(std::unique_ptr<WritableObject> dropped,
                           store_->OpenWrite("new/b.parquet", {mode}));
      ASSERT_OK(dropped->Append(Pattern(1000, 7)));
    }
    ASSERT_ERROR_CODE(store_->Head("new/folder/a.parquet"), kNotFound);
    ASSERT_ERROR_CODE(store_->Head("new/b.parquet"), kNotFound);
    EXPECT_TRUE(Keys("new").empty());
    EXPECT_EQ(Keys(""), std::vector<std::string>{"keep/old"});
    ASSERT_OK_AND_ASSIGN(bool any, store_->HasObjectsWithPrefix("new/"));
    EXPECT_FALSE(any);
  }
  // Replacing an object and aborting keeps the old one.
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<WritableObject> replace,
                       store_->OpenWrite("keep/old", {WriteMode::kAtomicReplace}));
  ASSERT_OK(replace->Append("new"));
  replace.reset();
  ASSERT_OK_AND_ASSIGN(std::string kept, store_->Get("keep/old"));
  EXPECT_EQ(kept, "old");
  if (GetParam().local) {
    // Neither temporary files nor the folders made for the aborted objects are left.
    const std::filesystem::path root = dir_.path() / "root" / GetParam().local_subfolder;
    EXPECT_FALSE(std::filesystem::exists(root / "new"));
    EXPECT_EQ(std::distance(std::filesystem::directory_iterator(root / "keep"), {}), 1);
  }
}

TEST_P(ObjectStoreConformance, LargeObjectsStreamInAndOut) {
  constexpr size_t kChunk = 1 << 20;
  constexpr size_t kChunks = 24;
  const std::string chunk = Pattern(kChunk, 8);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<WritableObject> writer,
                       store_->OpenWrite("big.bin", {WriteMode::kFreshKey}));
  for (size_t i = 0; i < kChunks; i++) {
    std::string piece = chunk;
    piece[0] = static_cast<char>(i);  // each chunk differs from the others
    ASSERT_OK(writer->Append(piece));
  }
  ASSERT_OK(writer->Append("tail"));
  ASSERT_OK(writer->Close());
  const uint64_t size = kChunk * kChunks + 4;
  ASSERT_OK_AND_ASSIGN(ObjectInfo info, store_->Head("big.bin"));
  EXPECT_EQ(info.size_bytes, size);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ReadableObject> reader, store_->OpenRead("big.bin"));
  ASSERT_EQ(reader->size_bytes(), size);
  for (size_t i = 0; i < kChunks; i += 5) {
    std::string got = ReadRange(*reader, i * kChunk, kChunk);
    EXPECT_EQ(got[0], static_cast<char>(i));
    EXPECT_EQ(got.substr(1), chunk.substr(1)) << "chunk " << i;
  }
  EXPECT_EQ(ReadRange(*reader, size - 6, 6), chunk.substr(kChunk - 2) + "tail");
  ASSERT_OK_AND_ASSIGN(std::string whole, store_->Get("big.bin"));
  EXPECT_EQ(whole.size(), size);
  ASSERT_OK_AND_ASSIGN(std::string range, store_->GetRange("big.bin", 3 * kChunk + 1, 10));
  EXPECT_EQ(range, chunk.substr(1, 10));
}

TEST_P(ObjectStoreConformance, HasObjectsWithPrefix) {
  ASSERT_OK(store_->Put("t/p=1/a.parquet", "a"));
  ASSERT_OK(store_->Put("t/b.parquet", "b"));
  for (const std::string prefix : {"", "t/", "t/p=1/", "t/p=", "t/b.parquet"}) {
    ASSERT_OK_AND_ASSIGN(bool any, store_->HasObjectsWithPrefix(prefix));
    EXPECT_TRUE(any) << prefix;
  }
  for (const std::string prefix : {"t/p=2/", "u/", "t/b.parquet/", "t/c"}) {
    ASSERT_OK_AND_ASSIGN(bool any, store_->HasObjectsWithPrefix(prefix));
    EXPECT_FALSE(any) << prefix;
  }
  ASSERT_ERROR_CODE(store_->HasObjectsWithPrefix("../"), kInvalidArgument);
}

TEST_P(ObjectStoreConformance, DeletingTheLastObjectOfAFolderRemovesTheFolder) {
  ASSERT_OK(store_->Put("t/p=1/q=2/a.parquet", "a"));
  ASSERT_OK(store_->Put("t/keep.parquet", "k"));
  ASSERT_OK(store_->Delete("t/p=1/q=2/a.parquet"));
  ASSERT_OK_AND_ASSIGN(bool any, store_->HasObjectsWithPrefix("t/p=1/"));
  EXPECT_FALSE(any);
  EXPECT_EQ(Keys("t/"), std::vector<std::string>{"t/keep.parquet"});
  if (GetParam().local) {
    const std::filesystem::path root = dir_.path() / "root" / GetParam().local_subfolder;
    EXPECT_FALSE(std::filesystem::exists(root / "t" / "p=1"));
    EXPECT_TRUE(std::filesystem::is_directory(root / "t"));
  }
  // The folder comes back with the next object in it.
  ASSERT_OK(store_->Put("t/p=1/q=2/b.parquet", "b"));
  ASSERT_OK_AND_ASSIGN(std::string b, store_->Get("t/p=1/q=2/b.parquet"));
  EXPECT_EQ(b, "b");
}

// Writers creating objects in a folder while a deleter empties it (and so, on local disks,
// removes it) all succeed: a writer whose folder vanished makes it again.
TEST_P(ObjectStoreConformance, WritesSurviveConcurrentDeletesOfTheirFolder) {
  constexpr int kWriters = 4;
  constexpr int kObjectsEach = 40;
  std::atomic<bool> done{false};
  std::atomic<int> failures{0};
  std::thread deleter([&] {
    while (!done.load()) {
      auto listed = store_->List("churn/");
      if (!listed.ok()) continue;
      for (const auto& info : *listed) {
        // A local store's temporary files are listed; only a crashed writer's are garbage.
        if (!IsLocalTempFile(info.key)) (void)store_->Delete(info.key);
      }
    }
  });
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; w++) {
    writers.emplace_back([&, w] {
      for (int i = 0; i < kObjectsEach; i++) {
        const std::string key =
            "churn/p=" + std::to_string(i % 3) + "/" + std::to_string(w) + "-" + std::to_string(i);
        Status st = (i % 2 == 0) ? store_->Put(key, "x") : [&] {
          auto writer = store_->OpenWrite(key, {WriteMode::kFreshKey});
          if (!writer.ok()) return writer.status();
          RETURN_IF_ERROR((*writer)->Append("y"));
          return (*writer)->Close();
        }();
        if (!st.ok()) {
          ADD_FAILURE() << st.ToString();
          failures++;
        }
      }
    });
  }
  for (auto& writer : writers) writer.join();
  done = true;
  deleter.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST_P(ObjectStoreConformance, VersionTagsNameTheBytes) {
  ASSERT_OK(store_->Put("v/obj", "same size 1"));
  ASSERT_OK_AND_ASSIGN(ObjectInfo first, store_->Head("v/obj"));
  EXPECT_FALSE(first.version_tag.empty());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ReadableObject> reader, store_->OpenRead("v/obj"));
  EXPECT_EQ(reader->version_tag(), first.version_tag);
  ASSERT_OK_AND_ASSIGN(auto listed, store_->List("v/"));
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].version_tag, first.version_tag);
  // Replaced at once by as many bytes: the time may not tell, the tag does.
  ASSERT_OK(store_->Put("v/obj", "same size 2"));
  ASSERT_OK_AND_ASSIGN(ObjectInfo second, store_->Head("v/obj"));
  EXPECT_NE(second.version_tag, first.version_tag);
  ASSERT_OK(store_->Delete("v/obj"));
  ASSERT_OK(store_->PutIfAbsent("v/obj", "same size 3"));
  ASSERT_OK_AND_ASSIGN(ObjectInfo third, store_->Head("v/obj"));
  EXPECT_NE(third.version_tag, second.version_tag);
  EXPECT_NE(third.version_tag, first.version_tag);
  // A reader given what a listing said reports that tag without asking.
  ObjectReadOptions known;
  known.size_bytes = third.size_bytes;
  known.modification_time_ms = third.modification_time_ms;
  known.version_tag = third.version_tag;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ReadableObject> told, store_->OpenRead("v/obj", known));
  EXPECT_EQ(told->version_tag(), third.version_tag);
}

TEST_P(ObjectStoreConformance, RandomReadsAreCheapOnTheseBackends) {
  EXPECT_TRUE(store_->CheapRandomReads());
}

TEST_P(ObjectStoreConformance, DescribeIsNotEmpty) { EXPECT_FALSE(store_->Describe().empty()); }

// Several processes race to commit sequential versions, as Delta writers do: each tries
// the next version and moves on when it loses. Every version must land exactly once.
TEST_P(ObjectStoreConformance, MultiProcessPutIfAbsentCommitsEachVersionOnce) {
  if (!GetParam().local) GTEST_SKIP() << "only stores backed by files are shared between processes";
  constexpr int kProcesses = 4;
  constexpr int kCommitsEach = 25;
  auto version_key = [](int version) {
    char name[64];
    std::snprintf(name, sizeof(name), "_delta_log/%020d.json", version);
    return std::string(name);
  };
  std::string root = *store_->LocalPath("");
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; p++) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      // Each child opens its own store, as a separate writer would.
      auto store = OpenLocalObjectStore(root);
      if (!store.ok()) ::_exit(2);
      int version = 0;
      for (int commit = 0; commit < kCommitsEach;) {
        Status st = (*store)->PutIfAbsent(
            version_key(version), "writer " + std::to_string(p) + " commit " + std::to_string(commit));
        if (st.ok()) {
          commit++;
        } else if (!st.IsAlreadyExists()) {
          ::_exit(3);
        }
        version++;
      }
      ::_exit(0);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_EQ(WEXITSTATUS(status), 0);
  }
  std::set<std::string> contents;
  for (int version = 0; version < kProcesses * kCommitsEach; version++) {
    ASSERT_OK_AND_ASSIGN(std::string data, store_->Get(version_key(version)));
    EXPECT_TRUE(contents.insert(data).second) << "duplicate commit " << data;
  }
  EXPECT_EQ(contents.size(), static_cast<size_t>(kProcesses * kCommitsEach));
  ASSERT_ERROR_CODE(store_->Head(version_key(kProcesses * kCommitsEach)), kNotFound);
  // No temporary files are left behind.
  ASSERT_OK_AND_ASSIGN(auto listed, store_->List("_delta_log/"));
  EXPECT_EQ(listed.size(), static_cast<size_t>(kProcesses * kCommitsEach));
}

INSTANTIATE_TEST_SUITE_P(AllBackends, ObjectStoreConformance, ::testing::ValuesIn(Backends()),
                         [](const ::testing::TestParamInfo<Backend>& info) { return info.param.name; });

// Backend-specific behaviour the suite cannot express.
TEST(LocalObjectStore, RootMustBeAFolder) {
  TempDir dir;
  std::string file = dir.str() + "/file";
  {
    std::FILE* f = std::fopen(file.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fclose(f);
  }
  ASSERT_ERROR_CODE(OpenLocalObjectStore(file), kInvalidArgument);
  ASSERT_OK(OpenLocalObjectStore(dir.str() + "/new/nested/root"));
  EXPECT_TRUE(std::filesystem::is_directory(dir.path() / "new" / "nested" / "root"));
}

TEST(LocalObjectStore, SeesFilesWrittenByOthersAndReportsIOErrors) {
  TempDir dir;
  ASSERT_OK_AND_ASSIGN(auto store, OpenLocalObjectStore(dir.str()));
  ASSERT_OK(store->Put("locked/x", "1"));
  // Another writer (or a reopened store) sees the same files.
  ASSERT_OK_AND_ASSIGN(auto again, OpenLocalObjectStore(dir.str() + "/"));
  ASSERT_OK_AND_ASSIGN(std::string data, again->Get("locked/x"));
  EXPECT_EQ(data, "1");
  // A folder cannot be created where a file is: an IOError naming the path.
  auto st = store->Put("locked/x/y", "2");
  ASSERT_ERROR_CODE(st, kIOError);
  EXPECT_NE(st.message().find("locked/x"), std::string::npos) << st.ToString();
}

TEST(MemoryObjectStore, StampsObjectsWithItsClock) {
  auto clock = std::make_shared<ManualClock>(1'000'000);
  auto store = NewMemoryObjectStore(clock);
  ASSERT_OK(store->Put("a", "1"));
  clock->AdvanceMs(250);
  ASSERT_OK_AND_ASSIGN(auto writer, store->OpenWrite("b", {WriteMode::kFreshKey}));
  ASSERT_OK(writer->Close());
  ASSERT_OK_AND_ASSIGN(auto listed, store->List(""));
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0].modification_time_ms, 1'000'000);
  EXPECT_EQ(listed[1].modification_time_ms, 1'000'250);
}

TEST(LocalObjectStore, OpeningWithoutCreateRootLeavesNoTrace) {
  TempDir dir;
  const std::filesystem::path root = dir.path() / "later" / "root";
  LocalStoreOptions options;
  options.create_root = false;
  ASSERT_OK_AND_ASSIGN(auto store, OpenLocalObjectStore(root.string(), options));
  ASSERT_ERROR_CODE(store->Get("x"), kNotFound);
  ASSERT_ERROR_CODE(store->OpenRead("x"), kNotFound);
  ASSERT_OK_AND_ASSIGN(auto listed, store->List(""));
  EXPECT_TRUE(listed.empty());
  ASSERT_OK_AND_ASSIGN(bool any, store->HasObjectsWithPrefix(""));
  EXPECT_FALSE(any);
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "later"));
  // The first write creates the root, for keys at the top as well as in folders.
  ASSERT_OK(store->PutIfAbsent("top", "1"));
  EXPECT_TRUE(std::filesystem::is_regular_file(root / "top"));
  LocalStoreOptions again = options;
  ASSERT_OK_AND_ASSIGN(auto other, OpenLocalObjectStore((dir.path() / "other").string(), again));
  ASSERT_OK_AND_ASSIGN(auto writer, other->OpenWrite("a/b", {WriteMode::kFreshKey}));
  ASSERT_OK(writer->Close());
  EXPECT_TRUE(std::filesystem::is_regular_file(dir.path() / "other" / "a" / "b"));
  // A file where the root should be is refused either way.
  ASSERT_ERROR_CODE(OpenLocalObjectStore((root / "top").string(), options), kInvalidArgument);
}

}  // namespace
}  // namespace basin
