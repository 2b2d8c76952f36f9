// DuckDB reading and writing Basin's object stores through basin:// URLs
// (engine/store_registry.h, engine/duckdb/store_file_system.cc), on the memory and local
// stores, through a real DuckDB connection.
#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "engine/duckdb.h"
#include "engine/store_registry.h"
#include "storage/faulty_object_store.h"
#include "testing/test_util.h"

namespace basin::engine {
namespace {

// Counts what DuckDB asks of the store, to check that listings spare it Head calls.
class CountingStore final : public ObjectStore {
 public:
  explicit CountingStore(std::shared_ptr<ObjectStore> base) : base_(std::move(base)) {}

  Result<std::unique_ptr<ReadableObject>> OpenRead(const std::string& key,
                                                   const ObjectReadOptions& options = {}) override {
    Count("OpenRead");
    if (options.size_bytes && options.modification_time_ms) Count("OpenRead with size and time");
    return base_->OpenRead(key, options);
  }
  Result<std::unique_ptr<WritableObject>> OpenWrite(const std::string& key,
                                                    const ObjectWriteOptions& options = {}) override {
    Count(options.mode == WriteMode::kFreshKey ? "OpenWrite fresh" : "OpenWrite replace");
    return base_->OpenWrite(key, options);
  }
  Result<ObjectInfo> Head(const std::string& key) override {
    Count("Head");
    return base_->Head(key);
  }
  Status PutIfAbsent(const std::string& key, const std::string& data) override {
    return base_->PutIfAbsent(key, data);
  }
  Status Delete(const std::string& key) override {
    Count("Delete");
    return base_->Delete(key);
  }
  Result<std::vector<ObjectInfo>> List(const std::string& prefix) override {
    Count("List");
    return base_->List(prefix);
  }
  Result<bool> HasObjectsWithPrefix(const std::string& prefix) override {
    Count("HasObjectsWithPrefix");
    return base_->HasObjectsWithPrefix(prefix);
  }
  bool CheapRandomReads() const override { return base_->CheapRandomReads(); }
  std::optional<std::string> LocalPath(const std::string& key) const override { return std::nullopt; }
  std::string Describe() const override { return "counting(" + base_->Describe() + ")"; }

  int count(const std::string& what) {
    std::lock_guard lock(mu_);
    return counts_[what];
  }
  void Reset() {
    std::lock_guard lock(mu_);
    counts_.clear();
  }

 private:
  void Count(const std::string& what) {
    std::lock_guard lock(mu_);
    counts_[what]++;
  }

  std::shared_ptr<ObjectStore> base_;
  std::mutex mu_;
  std::map<std::string, int> counts_;
};

struct Backend {
  std::string name;
  std::function<std::shared_ptr<ObjectStore>(const testing::TempDir&)> open;
};

class StoreFileSystemTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    store_ = std::make_shared<CountingStore>(GetParam().open(dir_));
    handle_ = RegisterStore(store_);
    ASSERT_OK_AND_ASSIGN(db_, Database::Open());
    ASSERT_OK_AND_ASSIGN(conn_, Connection::Open(db_));
  }

  std::string Url(const std::string& key) const { return StoreUrl(handle_, key); }
  std::string Quoted(const std::string& key) const { return QuoteLiteral(Url(key)); }

  // The single value of a one-row, one-column query.
  std::string Scalar(const std::string& sql) {
    auto result = conn_->Query(sql);
    EXPECT_TRUE(result.ok()) << sql << ": " << result.status().ToString();
    if (!result.ok() || result->row_count() != 1 || !result->at(0, 0)) return "<no value>";
    return *result->at(0, 0);
  }

  std::vector<std::string> Keys(const std::string& prefix) {
    auto listed = store_->List(prefix);
    EXPECT_TRUE(listed.ok()) << listed.status().ToString();
    std::vector<std::string> keys;
    if (listed.ok()) {
      for (const auto& info : *listed) {
        if (!IsLocalTempFile(info.key)) keys.push_back(info.key);
      }
    }
    return keys;
  }

  void WriteParquet(const std::string& key, int64_t begin, int64_t end) {
    ASSERT_OK(conn_->Execute("COPY (SELECT range AS i FROM range(" + std::to_string(begin) + ", " +
                             std::to_string(end) + ")) TO " + Quoted(key) + " (FORMAT parquet)"));
  }

  testing::TempDir dir_;
  std::shared_ptr<CountingStore> store_;
  StoreHandle handle_;
  std::shared_ptr<Database> db_;
  std::unique_ptr<Connection> conn_;
};

TEST_P(StoreFileSystemTest, CopyToAndReadParquetOfOneFile) {
  WriteParquet("one.parquet", 0, 100000);
  ASSERT_OK_AND_ASSIGN(std::string bytes, store_->Get("one.parquet"));
  EXPECT_EQ(bytes.substr(0, 4), "PAR1");
  EXPECT_EQ(bytes.substr(bytes.size() - 4), "PAR1");
  // Written as a fresh key, in place: no temporary copy, nothing else in the store.
  EXPECT_EQ(store_->count("OpenWrite fresh"), 1);
  EXPECT_EQ(store_->count("OpenWrite replace"), 0);
  EXPECT_EQ(Keys(""), std::vector<std::string>{"one.parquet"});
  EXPECT_EQ(Scalar("SELECT count(*) || ' ' || sum(i) FROM read_parquet(" + Quoted("one.parquet") + ")"),
            "100000 4999950000");
  // Random access: a filter on a late row group, and the last rows.
  EXPECT_EQ(Scalar("SELECT max(i) FROM read_parquet(" + Quoted("one.parquet") +
                   ") WHERE i BETWEEN 98000 AND 98010"),
            "98010");
  EXPECT_EQ(Scalar("SELECT count(*) FROM parquet_metadata(" + Quoted("one.parquet") + ")") != "0", true);
}

TEST_P(StoreFileSystemTest, ReadParquetOfAListAndGlobs) {
  WriteParquet("dir/a.parquet", 0, 10);
  WriteParquet("dir/b.parquet", 10, 30);
  WriteParquet("dir/sub/c.parquet", 30, 60);
  WriteParquet("other/d.parquet", 60, 100);
  ASSERT_OK(store_->Put("dir/notes.txt", "not parquet"));

  EXPECT_EQ(Scalar("SELECT count(*) FROM read_parquet([" + Quoted("dir/a.parquet") + ", " +
                   Quoted("other/d.parquet") + "])"),
            "50");
  EXPECT_EQ(Scalar("SELECT count(*) FROM read_parquet(" + Quoted("dir/*.parquet") + ")"), "30");
  EXPECT_EQ(Scalar("SELECT count(*) FROM read_parquet(" + Quoted("dir/**/*.parquet") + ")"), "60");
  EXPECT_EQ(Scalar("SELECT count(*) FROM read_parquet(" + Quoted("*/*.parquet") + ")"), "70");
  EXPECT_EQ(Scalar("SELECT count(*) FROM read_parquet(" + Quoted("dir/[ab].parquet") + ")"), "30");
  EXPECT_EQ(Scalar("SELECT string_agg(file, ',' ORDER BY file) FROM glob(" + Quoted("dir/*") + ")"),
            Url("dir/a.parquet") + "," + Url("dir/b.parquet") + "," + Url("dir/notes.txt"));
  EXPECT_EQ(Scalar("SELECT count(*) FROM glob(" + Quoted("dir/*.csv") + ")"), "0");
  auto nothing = conn_->Query("SELECT * FROM read_parquet(" + Quoted("dir/*.csv") + ")");
  ASSERT_FALSE(nothing.ok());
  EXPECT_NE(nothing.status().message().find("No files found"), std::string::npos)
      << nothing.status().ToString();
  // Several '**' are refused, as DuckDB refuses them for local paths.
  EXPECT_FALSE(conn_->Query("SELECT * FROM glob(" + Quoted("**/x/**/*.parquet") + ")").ok());
}

TEST_P(StoreFileSystemTest, ListedFilesAreOpenedWithoutHeadCalls) {
  for (int i = 0; i < 5; i++) WriteParquet("t/part-" + std::to_string(i) + ".parquet", i * 10, i * 10 + 10);
  store_->Reset();
  EXPECT_EQ(Scalar("SELECT count(*) FROM read_parquet(" + Quoted("t/*.parquet") + ")"), "50");
  EXPECT_EQ(store_->count("List"), 1);
  EXPECT_EQ(store_->count("Head"), 0);
  EXPECT_GE(store_->count("OpenRead"), 5);
  EXPECT_EQ(store_->count("OpenRead with size and time"), store_->count("OpenRead"));
  // A path without wildcards is looked up once, and then opened with what that found.
  store_->Reset();
  EXPECT_EQ(Scalar("SELECT count(*) FROM read_parquet(" + Quoted("t/part-3.parquet") + ")"), "10");
  EXPECT_EQ(store_->count("Head"), 1);
  EXPECT_EQ(store_->count("OpenRead with size and time"), store_->count("OpenRead"));
}

TEST_P(StoreFileSystemTest, SizesAndTimesOfFiles) {
  ASSERT_OK(store_->Put("blob/a.bin", std::string(1234, 'x')));
  ASSERT_OK_AND_ASSIGN(ObjectInfo info, store_->Head("blob/a.bin"));
  auto result =
      conn_->Query("SELECT size, epoch_ms(last_modified), content = repeat('x', 1234)::BLOB FROM read_blob(" +
                   Quoted("blob/a.bin") + ")");
  ASSERT_OK(result.status());
  ASSERT_EQ(result->row_count(), 1u);
  EXPECT_EQ(result->at(0, 0), "1234");
  // DuckDB keeps the time to the second here, as it does for local files.
  EXPECT_NEAR(std::stod(*result->at(0, 1)), static_cast<double>(info.modification_time_ms), 1000.0);
  EXPECT_EQ(result->at(0, 2), "true");
}

TEST_P(StoreFileSystemTest, PartitionedCopyReturnsStatsAndCreatesNoFolders) {
  ASSERT_OK_AND_ASSIGN(
      auto copied,
      conn_->QueryValues("COPY (SELECT i, i % 3 AS p, 'x' || (i % 2) AS q FROM range(90) t(i)) TO " +
                         Quoted("part") +
                         " (FORMAT parquet, PARTITION_BY (p, q), RETURN_STATS, "
                         "FILENAME_PATTERN 'f-{uuid}', APPEND)"));
  ASSERT_EQ(copied.rows.size(), 6u);
  int64_t rows = 0;
  std::set<std::string> keys;
  for (const auto& row : copied.rows) {
    std::optional<std::string> key = StoreKeyOf(handle_, row[0].text);
    ASSERT_TRUE(key.has_value()) << row[0].text;
    EXPECT_TRUE(key->starts_with("part/p=")) << *key;
    keys.insert(*key);
    rows += std::stoll(row[1].text);
    ASSERT_OK_AND_ASSIGN(ObjectInfo info, store_->Head(*key));
    EXPECT_EQ(std::to_string(info.size_bytes), row[2].text);
  }
  EXPECT_EQ(rows, 90);
  std::vector<std::string> listed = Keys("part/");
  EXPECT_EQ(std::set<std::string>(listed.begin(), listed.end()), keys);
  EXPECT_EQ(Scalar("SELECT count(*) || ' ' || sum(p) FROM read_parquet(" + Quoted("part/**/*.parquet") +
                   ", hive_partitioning = true) WHERE q = 'x1'"),
            "45 45");
  // Appending again adds files next to the first ones.
  ASSERT_OK(conn_->Execute("COPY (SELECT 1 AS i, 0 AS p, 'x0' AS q) TO " + Quoted("part") +
                           " (FORMAT parquet, PARTITION_BY (p, q), FILENAME_PATTERN 'f-{uuid}', APPEND)"));
  EXPECT_EQ(Keys("part/p=0/q=x0/").size(), 2u);
}

TEST_P(StoreFileSystemTest, FileSizeBytesRotatesFiles) {
  ASSERT_OK_AND_ASSIGN(
      auto copied, conn_->QueryValues("COPY (SELECT i, md5(i::VARCHAR) AS h FROM range(100000) t(i)) TO " +
                                      Quoted("rotated") +
                                      " (FORMAT parquet, FILE_SIZE_BYTES 200000, "
                                      "ROW_GROUP_SIZE 10000, RETURN_STATS)"));
  EXPECT_GT(copied.rows.size(), 2u);
  EXPECT_EQ(Keys("rotated/").size(), copied.rows.size());
  EXPECT_EQ(Scalar("SELECT count(DISTINCT i) FROM read_parquet(" + Quoted("rotated/*.parquet") + ")"),
            "100000");
}

TEST_P(StoreFileSystemTest, OverwriteModesOfACopyIntoAFolder) {
  const std::string copy_to = "COPY (SELECT i, i % 2 AS p FROM range(10) t(i)) TO " + Quoted("ow") +
                              " (FORMAT parquet, PARTITION_BY (p)";
  ASSERT_OK(conn_->Execute(copy_to + ")"));
  std::vector<std::string> first = Keys("ow/");
  ASSERT_EQ(first.size(), 2u);
  // A folder with files is refused by default...
  auto refused = conn_->Execute(copy_to + ")");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("not empty"), std::string::npos) << refused.ToString();
  // ... rewritten in place with OVERWRITE_OR_IGNORE (the same file names: a replace) ...
  ASSERT_OK(conn_->Execute("COPY (SELECT i + 100 AS i, i % 2 AS p FROM range(10) t(i)) TO " + Quoted("ow") +
                           " (FORMAT parquet, PARTITION_BY (p), OVERWRITE_OR_IGNORE)"));
  EXPECT_EQ(Keys("ow/"), first);
  EXPECT_GE(store_->count("OpenWrite replace"), 2);
  EXPECT_EQ(Scalar("SELECT min(i) FROM read_parquet(" + Quoted("ow/*/*.parquet") + ")"), "100");
  // ... and emptied first with OVERWRITE.
  ASSERT_OK(store_->Put("ow/p=0/stale.parquet", "stale"));
  ASSERT_OK(conn_->Execute("COPY (SELECT i, 5 AS p FROM range(3) t(i)) TO " + Quoted("ow") +
                           " (FORMAT parquet, PARTITION_BY (p), OVERWRITE)"));
  std::vector<std::string> after = Keys("ow/");
  ASSERT_EQ(after.size(), 1u);
  EXPECT_TRUE(after[0].starts_with("ow/p=5/")) << after[0];
}

TEST_P(StoreFileSystemTest, CopyOverAnExistingFileReplacesIt) {
  WriteParquet("same.parquet", 0, 10);
  // DuckDB writes to tmp_same.parquet, then moves it over the old file.
  WriteParquet("same.parquet", 100, 105);
  EXPECT_EQ(Scalar("SELECT count(*) || ' ' || min(i) FROM read_parquet(" + Quoted("same.parquet") + ")"),
            "5 100");
  EXPECT_EQ(Keys(""), std::vector<std::string>{"same.parquet"});
}

TEST_P(StoreFileSystemTest, ReadJsonAndCsv) {
  ASSERT_OK(store_->Put("in/events.json", "{\"id\": 1, \"name\": \"a\"}\n{\"id\": 2, \"name\": \"b\"}\n"));
  ASSERT_OK(store_->Put("in/people.csv", "id,name\n1,ann\n2,bob\n3,cy\n"));
  EXPECT_EQ(
      Scalar("SELECT string_agg(name, ',' ORDER BY id) FROM read_json(" + Quoted("in/events.json") + ")"),
      "a,b");
  EXPECT_EQ(Scalar("SELECT string_agg(name, ',' ORDER BY id) FROM read_csv(" + Quoted("in/people.csv") + ")"),
            "ann,bob,cy");
  EXPECT_EQ(Scalar("SELECT count(*) FROM read_csv(" + Quoted("in/*.csv") + ")"), "3");
  // And written as JSON and CSV.
  ASSERT_OK(conn_->Execute("COPY (SELECT 7 AS id) TO " + Quoted("out/x.json") + " (FORMAT json)"));
  ASSERT_OK_AND_ASSIGN(std::string json, store_->Get("out/x.json"));
  EXPECT_EQ(json, "{\"id\":7}\n");
  ASSERT_OK(conn_->Execute("COPY (SELECT 7 AS id) TO " + Quoted("out/x.csv") + " (FORMAT csv)"));
  ASSERT_OK_AND_ASSIGN(std::string csv, store_->Get("out/x.csv"));
  EXPECT_EQ(csv, "id\n7\n");
}

TEST_P(StoreFileSystemTest, AFailedCopyLeavesNothingBehind) {
  auto failed = conn_->Execute(
      "COPY (SELECT CASE WHEN i < 150000 THEN i ELSE error('boom at ' || i) END AS i FROM range(200000) "
      "t(i)) TO " +
      Quoted("failed.parquet") + " (FORMAT parquet, ROW_GROUP_SIZE 10000)");
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.message().find("boom"), std::string::npos) << failed.ToString();
  EXPECT_TRUE(Keys("").empty());
}

TEST_P(StoreFileSystemTest, ErrorsNameTheStoreAndTheFile) {
  auto missing = conn_->Query("SELECT * FROM read_parquet(" + Quoted("no/such.parquet") + ")");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find(Url("no/such.parquet")), std::string::npos)
      << missing.status().ToString();
  // A store that fails: the error says which store, which file, and why.
  auto faulty = NewFaultyObjectStore(GetParam().open(dir_), {});
  StoreHandle faulty_handle = RegisterStore(faulty);
  ASSERT_OK(faulty->Put("f.csv", "a\n1\n"));
  FaultOptions fail;
  fail.failure_probability = 1.0;
  faulty->SetOptions(fail);
  auto failed =
      conn_->Query("SELECT * FROM read_csv(" + QuoteLiteral(StoreUrl(faulty_handle, "f.csv")) + ")");
  ASSERT_ERROR_CODE(failed, kIOError);
  EXPECT_NE(failed.status().message().find("injected fault"), std::string::npos)
      << failed.status().ToString();
  EXPECT_NE(failed.status().message().find(faulty->Describe()), std::string::npos)
      << failed.status().ToString();
  EXPECT_NE(failed.status().message().find("f.csv"), std::string::npos) << failed.status().ToString();
  // A released store's URLs name nothing.
  const std::string gone = StoreUrl(faulty_handle, "f.csv");
  faulty_handle = StoreHandle();
  auto released = conn_->Query("SELECT * FROM read_csv(" + QuoteLiteral(gone) + ")");
  ASSERT_FALSE(released.ok());
  EXPECT_NE(released.status().message().find("no store is registered"), std::string::npos)
      << released.status().ToString();
}

INSTANTIATE_TEST_SUITE_P(
    Stores, StoreFileSystemTest,
    ::testing::Values(Backend{"memory", [](const testing::TempDir&) { return NewMemoryObjectStore(); }},
                      Backend{"local",
                              [](const testing::TempDir& dir) {
                                auto store = OpenLocalObjectStore(dir.str() + "/store");
                                EXPECT_TRUE(store.ok()) << store.status().ToString();
                                return store.ok() ? *store : nullptr;
                              }}),
    [](const ::testing::TestParamInfo<Backend>& info) { return info.param.name; });

// --- the registry ---

TEST(StoreRegistryTest, HandlesNumberAndReleaseStores) {
  auto store = NewMemoryObjectStore();
  StoreHandle first = RegisterStore(store);
  ASSERT_FALSE(first.empty());
  StoreHandle again = RegisterStore(store);
  EXPECT_EQ(again.id(), first.id());  // one number per store object
  StoreHandle other = RegisterStore(NewMemoryObjectStore());
  EXPECT_NE(other.id(), first.id());

  const std::string url = StoreUrl(first, "a/b.parquet");
  EXPECT_EQ(url, "basin://" + std::to_string(first.id()) + "/a/b.parquet");
  EXPECT_EQ(StoreUrl(first, ""), "basin://" + std::to_string(first.id()));
  EXPECT_EQ(StoreKeyOf(first, url), "a/b.parquet");
  EXPECT_EQ(StoreKeyOf(first, StoreUrl(first, "")), "");
  EXPECT_FALSE(StoreKeyOf(other, url).has_value());
  EXPECT_FALSE(StoreKeyOf(first, url.substr(0, url.size() - 12) + "0/x").has_value());

  ASSERT_OK_AND_ASSIGN(StoreUrlTarget target, ResolveStoreUrl(url + "/"));
  EXPECT_EQ(target.store, store);
  EXPECT_EQ(target.key, "a/b.parquet");
  ASSERT_ERROR_CODE(ResolveStoreUrl("basin://x/y"), kInvalidArgument);
  ASSERT_ERROR_CODE(ResolveStoreUrl("/tmp/y"), kInvalidArgument);
  ASSERT_ERROR_CODE(ResolveStoreUrl("basin://0/y"), kInvalidArgument);
  EXPECT_EQ(target.UrlOf("c"), "basin://" + std::to_string(first.id()) + "/c");

  // memory://<name>/<key>: storage's named memory store, no handle needed.
  ASSERT_OK_AND_ASSIGN(StoreUrlTarget memory, ResolveStoreUrl("memory://resolve-test/a/b.parquet"));
  EXPECT_EQ(memory.store, NamedMemoryStore("resolve-test"));
  EXPECT_EQ(memory.root, "memory://resolve-test");
  EXPECT_EQ(memory.key, "a/b.parquet");
  EXPECT_EQ(memory.UrlOf("c"), "memory://resolve-test/c");
  EXPECT_TRUE(IsStoreUrl("memory://resolve-test"));
  ASSERT_ERROR_CODE(ResolveStoreUrl("memory:///a"), kInvalidArgument);
  ForgetNamedMemoryStore("resolve-test");

  // Registered while any handle lives; moved handles keep it.
  first = StoreHandle();
  ASSERT_OK(ResolveStoreUrl(url).status());
  StoreHandle moved = std::move(again);
  EXPECT_TRUE(again.empty());  // NOLINT(bugprone-use-after-move): a moved-from handle is empty
  ASSERT_OK(ResolveStoreUrl(url).status());
  moved = StoreHandle();
  ASSERT_ERROR_CODE(ResolveStoreUrl(url), kNotFound);
  // A number is never given out again.
  StoreHandle renewed = RegisterStore(store);
  EXPECT_NE(StoreUrl(renewed, "a/b.parquet"), url);
}

TEST(StoreRegistryTest, ConcurrentRegistrationsAndLookups) {
  auto store = NewMemoryObjectStore();
  StoreHandle keep = RegisterStore(store);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 8; t++) {
    threads.emplace_back([&] {
      for (int i = 0; i < 500; i++) {
        StoreHandle handle = RegisterStore(store);
        if (handle.id() != keep.id() || !ResolveStoreUrl(StoreUrl(handle, "k")).ok()) failures++;
        StoreHandle fresh = RegisterStore(NewMemoryObjectStore());
        if (!ResolveStoreUrl(StoreUrl(fresh, "k")).ok()) failures++;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  ASSERT_OK(ResolveStoreUrl(StoreUrl(keep, "k")).status());
}

}  // namespace
}  // namespace basin::engine
