// Conflict detection by what a transaction read: predicate read sets judged against the
// partition values and stats of concurrently added and removed files, compaction,
// WriteSerializable vs Serializable, and domain metadata.
#include <set>

#include "delta/conflict_checker.h"
#include "delta/log_segment.h"
#include "delta/skipping.h"
#include "delta/transaction.h"
#include "engine/predicate_parser.h"
#include "transaction_test_util.h"

namespace basin::delta {
namespace {

using nlohmann::json;
using testing::TableFixture;

// A data file in partition `day` holding ids min_id..max_id.
AddFile FileIn(const std::string& path, const std::string& day, int64_t min_id, int64_t max_id,
               bool data_change = true) {
  AddFile a;
  a.path = path;
  a.partition_values = {{"day", day}};
  a.size = 1000;
  a.modification_time = 1700000000000;
  a.data_change = data_change;
  a.stats = json{{"numRecords", max_id - min_id + 1},
                 {"minValues", {{"id", min_id}}},
                 {"maxValues", {{"id", max_id}}},
                 {"nullCount", {{"id", 0}}}}
                .dump();
  return a;
}

RemoveFile RemovalOf(const AddFile& file, bool data_change = true) {
  RemoveFile r;
  r.path = file.path;
  r.data_change = data_change;
  r.partition_values = file.partition_values;
  r.extended_file_metadata = true;
  r.size = file.size;
  return r;
}

void ExpectMessageHas(const Status& status, const std::vector<std::string>& parts) {
  for (const auto& part : parts) {
    EXPECT_NE(status.message().find(part), std::string::npos)
        << "missing '" << part << "' in " << status.ToString();
  }
}

// Table partitioned by day with a1 (day a, ids 1-10), a2 (day a, ids 21-30) and
// b1 (day b, ids 11-20) at version 1.
class ConflictPredicateTest : public ::testing::Test {
 protected:
  void SetUp() override { Init({}); }

  void Init(std::map<std::string, std::string> configuration) {
    table_ = std::make_unique<TableFixture>(NewMemoryObjectStore());
    ASSERT_OK(table_->Create(std::move(configuration)));
    ASSERT_OK_AND_ASSIGN(auto txn, table_->Begin());
    for (const auto& f : {a1_, a2_, b1_}) txn->Add(f);
    ASSERT_OK(txn->Commit());
    Reload();
  }

  void Reload() {
    auto snapshot = table_->Load();
    ASSERT_OK(snapshot.status());
    snapshot_ = *snapshot;
  }

  // The predicate of a WHERE condition over the table, as commands record it.
  Predicate Where(const std::string& condition, const engine::PredicateScope& scope = {}) {
    auto predicate = engine::ParsePredicate(condition, snapshot_->schema, scope);
    EXPECT_OK(predicate.status());
    return predicate.ok() ? *predicate : Predicate();
  }

  std::vector<AddFile> Matching(const Predicate& predicate) {
    std::vector<AddFile> files;
    for (size_t i : FilesMatching(*snapshot_, predicate)) files.push_back(snapshot_->files[i]);
    return files;
  }

  // A DELETE or UPDATE of the rows where `condition` holds: reads them, removes the files
  // holding them and adds `rewritten`.
  std::unique_ptr<Transaction> Rewrite(const std::string& condition, std::vector<AddFile> rewritten,
                                       const std::string& operation = "DELETE") {
    auto txn = std::make_unique<Transaction>(snapshot_, TableFixture::Options());
    Predicate predicate = Where(condition);
    std::vector<AddFile> read = Matching(predicate);
    txn->ReadPredicate(predicate);
    txn->ReadFiles(read);
    for (const auto& f : read) txn->Remove(RemovalOf(f));
    for (auto& f : rewritten) txn->Add(std::move(f));
    txn->SetOperation(operation, {{"predicate", condition}});
    return txn;
  }

  // A MERGE that only inserts: reads the target rows where `condition` holds, adds `files`.
  std::unique_ptr<Transaction> MergeInsert(const std::string& condition, std::vector<AddFile> files) {
    auto txn = std::make_unique<Transaction>(snapshot_, TableFixture::Options());
    Predicate predicate = Where(condition);
    txn->ReadPredicate(predicate);
    txn->ReadFiles(Matching(predicate));
    for (auto& f : files) txn->Add(std::move(f));
    txn->SetOperation("MERGE");
    return txn;
  }

  std::unique_ptr<Transaction> BlindAppend(std::vector<AddFile> files) {
    auto txn = std::make_unique<Transaction>(snapshot_, TableFixture::Options());
    for (auto& f : files) txn->Add(std::move(f));
    return txn;
  }

  // OPTIMIZE of `files` into one file `into` in partition `day`.
  std::unique_ptr<Transaction> Compact(const std::vector<AddFile>& files, const std::string& into,
                                       const std::string& day) {
    auto txn = std::make_unique<Transaction>(snapshot_, TableFixture::Options());
    txn->ReadFiles(files);
    for (const auto& f : files) txn->Remove(RemovalOf(f, /*data_change=*/false));
    txn->Add(FileIn(into, day, 1, 30, /*data_change=*/false));
    txn->SetOperation("OPTIMIZE");
    return txn;
  }

  std::set<std::string> FilePaths() {
    auto snapshot = table_->Load();
    EXPECT_OK(snapshot.status());
    std::set<std::string> paths;
    if (snapshot.ok()) {
      for (const auto& f : (*snapshot)->files) paths.insert(f.path);
    }
    return paths;
  }

  const AddFile a1_ = FileIn("a1.parquet", "a", 1, 10);
  const AddFile a2_ = FileIn("a2.parquet", "a", 21, 30);
  const AddFile b1_ = FileIn("b1.parquet", "b", 11, 20);
  std::unique_ptr<TableFixture> table_;
  std::shared_ptr<const Snapshot> snapshot_;
};

TEST_F(ConflictPredicateTest, DisjointPartitionRewritesDoNotConflict) {
  auto delete_a = Rewrite("day = 'a'", {});
  auto update_b = Rewrite("day = 'b'", {FileIn("b2.parquet", "b", 11, 20)}, "UPDATE");
  auto merge_b = MergeInsert("day = 'b'", {FileIn("b3.parquet", "b", 40, 41)});
  ASSERT_OK_AND_ASSIGN(CommitResult updated, update_b->Commit());
  EXPECT_EQ(updated.version, 2);
  ASSERT_OK_AND_ASSIGN(CommitResult deleted, delete_a->Commit());
  EXPECT_EQ(deleted.version, 3);
  EXPECT_EQ(deleted.attempts, 2) << "the DELETE rebased over the UPDATE";
  // The MERGE read partition b, which the UPDATE rewrote: it must not commit.
  auto merged = merge_b->Commit();
  ASSERT_ERROR_CODE(merged, kConflict);
  ExpectMessageHas(merged.status(),
                   {"version 2", "UPDATE", "b2.parquet", "day=b", "ConcurrentAppendException"});
  EXPECT_EQ(FilePaths(), std::set<std::string>{"b2.parquet"});
}

TEST_F(ConflictPredicateTest, AppendsIntoOtherPartitionsDoNotConflictWithRewrites) {
  auto delete_a = Rewrite("day = 'a'", {});
  auto merge_b = MergeInsert("day = 'b'", {FileIn("b2.parquet", "b", 50, 60)});  // not a blind append
  auto append_c = BlindAppend({FileIn("c1.parquet", "c", 70, 80)});
  ASSERT_OK(merge_b->Commit());
  ASSERT_OK(append_c->Commit());
  ASSERT_OK_AND_ASSIGN(CommitResult deleted, delete_a->Commit());
  EXPECT_EQ(deleted.version, 4);
  EXPECT_EQ(FilePaths(), (std::set<std::string>{"b1.parquet", "b2.parquet", "c1.parquet"}));

  // And the other order: the rewrite lands first, the appends rebase over it.
  Reload();
  auto delete_b = Rewrite("day = 'b'", {});
  auto merge_c = MergeInsert("day = 'c'", {FileIn("c2.parquet", "c", 90, 91)});
  ASSERT_OK(delete_b->Commit());
  ASSERT_OK(merge_c->Commit());
  EXPECT_EQ(FilePaths(), (std::set<std::string>{"c1.parquet", "c2.parquet"}));
}

TEST_F(ConflictPredicateTest, AddIntoTheReadPartitionConflicts) {
  auto delete_a = Rewrite("day = 'a'", {});
  // Reads partition b, writes into partition a: rows the DELETE should have seen.
  auto merge = MergeInsert("day = 'b'", {FileIn("a9.parquet", "a", 100, 110)});
  ASSERT_OK_AND_ASSIGN(CommitResult merged, merge->Commit());
  EXPECT_EQ(merged.version, 2);
  auto deleted = delete_a->Commit();
  ASSERT_ERROR_CODE(deleted, kConflict);
  ExpectMessageHas(deleted.status(),
                   {"version 2", "(MERGE)", "a9.parquet", "day=a", "ConcurrentAppendException"});
  EXPECT_EQ(FilePaths(), (std::set<std::string>{"a1.parquet", "a2.parquet", "b1.parquet", "a9.parquet"}));
}

TEST_F(ConflictPredicateTest, RewritesOfTheSamePartitionConflict) {
  auto first = Rewrite("day = 'a'", {FileIn("a3.parquet", "a", 1, 10)}, "UPDATE");
  auto second = Rewrite("day = 'a' AND id > 20", {});  // stats: only a2.parquet
  ASSERT_OK(first->Commit());
  auto result = second->Commit();
  ASSERT_ERROR_CODE(result, kConflict);
  ExpectMessageHas(result.status(), {"version 2", "UPDATE", "a2.parquet", "ConcurrentDeleteReadException"});
}

TEST_F(ConflictPredicateTest, PredicateCountsTheFilesItMatchedAsRead) {
  // Read through a predicate only, without listing files (an INSERT ... SELECT).
  auto reader_a = std::make_unique<Transaction>(snapshot_, TableFixture::Options());
  reader_a->ReadPredicate(Where("day = 'a'"));
  reader_a->Add(FileIn("c1.parquet", "c", 1, 10));
  auto reader_b = std::make_unique<Transaction>(snapshot_, TableFixture::Options());
  reader_b->ReadPredicate(Where("day = 'b'"));
  reader_b->Add(FileIn("c2.parquet", "c", 11, 20));

  ASSERT_OK(Rewrite("id BETWEEN 1 AND 5", {})->Commit());  // removes a1 (by stats)
  auto result = reader_a->Commit();
  ASSERT_ERROR_CODE(result, kConflict);
  ExpectMessageHas(result.status(), {"version 2", "DELETE", "a1.parquet", "ConcurrentDeleteReadException"});
  ASSERT_OK(reader_b->Commit());
}

TEST_F(ConflictPredicateTest, StatsRuleOutFilesOutsideTheReadRange) {
  // Same partition, different id ranges: decided by minValues/maxValues.
  auto update_low = Rewrite("id <= 10", {FileIn("a3.parquet", "a", 1, 10)}, "UPDATE");  // a1 only
  auto update_low2 = Rewrite("id < 5", {FileIn("a4.parquet", "a", 1, 4)}, "UPDATE");
  ASSERT_OK(MergeInsert("id > 1000", {FileIn("a5.parquet", "a", 1001, 1005)})->Commit());
  ASSERT_OK(Rewrite("id BETWEEN 21 AND 30", {})->Commit());  // removes a2 only
  ASSERT_OK_AND_ASSIGN(CommitResult updated, update_low->Commit());
  EXPECT_EQ(updated.version, 4);

  // A concurrent add whose range overlaps conflicts, as does one without stats.
  auto overlapping = update_low2->Commit();
  ASSERT_ERROR_CODE(overlapping, kConflict);
  ExpectMessageHas(overlapping.status(), {"version 4", "UPDATE", "a3.parquet", "ConcurrentAppendException"});

  Reload();
  auto update = Rewrite("id <= 10", {}, "UPDATE");
  AddFile no_stats = FileIn("a6.parquet", "a", 500, 600);
  no_stats.stats.reset();
  ASSERT_OK(MergeInsert("id > 1000", {no_stats})->Commit());
  auto result = update->Commit();
  ASSERT_ERROR_CODE(result, kConflict);
  ExpectMessageHas(result.status(), {"a6.parquet", "ConcurrentAppendException"});
}

TEST_F(ConflictPredicateTest, PredicatesUnion) {
  auto txn = std::make_unique<Transaction>(snapshot_, TableFixture::Options());
  txn->ReadPredicate(Where("day = 'x'"));
  txn->ReadPredicate(Where("day = 'y'"));
  txn->Add(FileIn("z1.parquet", "z", 1, 2));
  ASSERT_OK(MergeInsert("day = 'b'", {FileIn("x1.parquet", "x", 1, 2)})->Commit());
  ASSERT_OK(MergeInsert("day = 'b'", {FileIn("q1.parquet", "q", 1, 2)})->Commit());
  auto result = txn->Commit();
  ASSERT_ERROR_CODE(result, kConflict);
  ExpectMessageHas(result.status(), {"version 2", "x1.parquet"});
}

TEST_F(ConflictPredicateTest, UnknownPredicateReadsTheWholeTable) {
  auto txn = std::make_unique<Transaction>(snapshot_, TableFixture::Options());
  txn->ReadPredicate(Predicate::Unknown("lower(day) = 'z'"));
  txn->Add(FileIn("z1.parquet", "z", 1, 2));
  ASSERT_OK(MergeInsert("day = 'b'", {FileIn("q1.parquet", "q", 1, 2)})->Commit());
  auto result = txn->Commit();
  ASSERT_ERROR_CODE(result, kConflict);
  ExpectMessageHas(result.status(), {"q1.parquet", "read in whole", "ConcurrentAppendException"});
}

TEST_F(ConflictPredicateTest, BlindAppendsSerializeAfterReadersUnderWriteSerializable) {
  auto delete_a = Rewrite("day = 'a'", {});
  auto append_a = BlindAppend({FileIn("a9.parquet", "a", 1, 2)});
  auto append_a2 = BlindAppend({FileIn("a10.parquet", "a", 1, 2)});
  ASSERT_OK(append_a->Commit());
  ASSERT_OK(append_a2->Commit());  // blind appends never conflict with each other
  ASSERT_OK(delete_a->Commit());
  // The appended rows survive the DELETE, as if appended after it.
  EXPECT_EQ(FilePaths(), (std::set<std::string>{"b1.parquet", "a9.parquet", "a10.parquet"}));
  ASSERT_OK_AND_ASSIGN(std::string content, table_->store()->Get(CommitKey(4)));
  EXPECT_NE(content.find("\"isolationLevel\":\"WriteSerializable\""), std::string::npos) << content;
}

TEST_F(ConflictPredicateTest, BlindAppendsIntoTheReadPartitionConflictUnderSerializable) {
  Init({{"delta.isolationLevel", "Serializable"}});
  auto delete_a = Rewrite("day = 'a'", {});
  auto delete_b = Rewrite("day = 'b'", {});
  ASSERT_OK(BlindAppend({FileIn("a9.parquet", "a", 1, 2)})->Commit());
  auto result = delete_a->Commit();
  ASSERT_ERROR_CODE(result, kConflict);
  ExpectMessageHas(result.status(), {"version 2", "WRITE", "a9.parquet", "ConcurrentAppendException"});
  ASSERT_OK_AND_ASSIGN(CommitResult deleted, delete_b->Commit());
  ASSERT_OK_AND_ASSIGN(std::string content, table_->store()->Get(CommitKey(deleted.version)));
  EXPECT_NE(content.find("\"isolationLevel\":\"Serializable\""), std::string::npos) << content;
}

TEST_F(ConflictPredicateTest, CompactionDoesNotConflictWithAppends) {
  auto optimize = Compact({a1_, a2_}, "a12.parquet", "a");
  auto append_a = BlindAppend({FileIn("a9.parquet", "a", 1, 2)});
  auto merge_a = MergeInsert("day = 'b'", {FileIn("a10.parquet", "a", 1, 2)});
  ASSERT_OK(append_a->Commit());
  ASSERT_OK(optimize->Commit());
  ASSERT_OK(merge_a->Commit());
  EXPECT_EQ(FilePaths(), (std::set<std::string>{"a12.parquet", "b1.parquet", "a9.parquet", "a10.parquet"}));
}

TEST_F(ConflictPredicateTest, CompactionConflictsWithReadersAndRewritersOfItsFiles) {
  auto optimize = Compact({a1_, a2_}, "a12.parquet", "a");
  auto delete_a = Rewrite("day = 'a' AND id > 20", {});  // reads and removes a2
  auto reader = std::make_unique<Transaction>(snapshot_, TableFixture::Options());
  reader->ReadFiles({a1_});  // read a1, writes elsewhere
  reader->Add(FileIn("c1.parquet", "c", 1, 10));
  auto predicate_reader = std::make_unique<Transaction>(snapshot_, TableFixture::Options());
  predicate_reader->ReadPredicate(Where("id < 3"));  // matches a1 by stats
  predicate_reader->Add(FileIn("c2.parquet", "c", 1, 10));
  auto delete_b = Rewrite("day = 'b'", {});

  ASSERT_OK_AND_ASSIGN(CommitResult optimized, optimize->Commit());
  EXPECT_EQ(optimized.version, 2);
  for (Transaction* txn : {delete_a.get(), reader.get(), predicate_reader.get()}) {
    auto result = txn->Commit();
    ASSERT_ERROR_CODE(result, kConflict);
    ExpectMessageHas(result.status(), {"version 2", "OPTIMIZE", "ConcurrentDeleteReadException"});
  }
  // Compacting partition a leaves a DELETE of partition b alone (the compacted file's
  // add is dataChange=false, and its removes are not files the DELETE read).
  ASSERT_OK(delete_b->Commit());
  EXPECT_EQ(FilePaths(), std::set<std::string>{"a12.parquet"});
}

TEST_F(ConflictPredicateTest, WholeTableReadConflictsWithAnyRemove) {
  auto reader = std::make_unique<Transaction>(snapshot_, TableFixture::Options());
  reader->ReadWholeTable();
  reader->Add(FileIn("c1.parquet", "c", 1, 10));
  ASSERT_OK(Compact({b1_}, "b2.parquet", "b")->Commit());
  auto result = reader->Commit();
  ASSERT_ERROR_CODE(result, kConflict);
  ExpectMessageHas(result.status(), {"b1.parquet", "read in whole", "ConcurrentDeleteReadException"});
}

TEST_F(ConflictPredicateTest, ColumnsOfOtherTablesAreNotThisTables) {
  // t.day names this table; s.day belongs to a joined source and says nothing about it.
  engine::PredicateScope scope{{"t"}, {"s"}};
  auto txn = std::make_unique<Transaction>(snapshot_, TableFixture::Options());
  txn->ReadPredicate(Where("t.day = 'a' AND s.day = 'b'", scope));
  txn->Add(FileIn("c1.parquet", "c", 1, 10));
  ASSERT_OK(MergeInsert("day = 'b'", {FileIn("b2.parquet", "b", 1, 2)})->Commit());
  ASSERT_OK(txn->Commit());
}

class DomainMetadataConflictTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Transaction create = Transaction::CreateTable(store_, "table", TableFixture::Options());
    create.UpdateProtocol(Protocol{1, 7, std::nullopt, std::vector<std::string>{"domainMetadata"}});
    create.UpdateMetadata(testing::TestMetadata());
    ASSERT_OK(create.Commit());
  }

  std::unique_ptr<Transaction> SetDomain(const std::shared_ptr<const Snapshot>& snapshot,
                                         const std::string& domain, const std::string& configuration) {
    auto txn = std::make_unique<Transaction>(snapshot, TableFixture::Options());
    txn->SetDomainMetadata(DomainMetadata{domain, configuration, false});
    txn->SetOperation("SET DOMAIN");
    return txn;
  }

  std::shared_ptr<ObjectStore> store_ = NewMemoryObjectStore();
  TableFixture table_{store_};
};

TEST_F(DomainMetadataConflictTest, SameDomainConflictsOtherDomainsDoNot) {
  ASSERT_OK_AND_ASSIGN(auto snapshot, table_.Load());
  auto first = SetDomain(snapshot, "basin.test", R"({"n":1})");
  auto same = SetDomain(snapshot, "basin.test", R"({"n":2})");
  auto other = SetDomain(snapshot, "basin.other", R"({"n":3})");
  auto append = std::make_unique<Transaction>(snapshot, TableFixture::Options());
  append->Add(testing::TestAdd("a.parquet"));
  ASSERT_OK(first->Commit());
  auto result = same->Commit();
  ASSERT_ERROR_CODE(result, kConflict);
  ExpectMessageHas(result.status(),
                   {"version 1", "SET DOMAIN", "basin.test", "ConcurrentTransactionException"});
  ASSERT_OK(other->Commit());
  ASSERT_OK(append->Commit());

  ASSERT_OK_AND_ASSIGN(auto latest, table_.Load());
  ASSERT_EQ(latest->domain_metadata.size(), 2u);
  EXPECT_EQ(latest->domain_metadata.at("basin.test").configuration, R"({"n":1})");
  EXPECT_EQ(latest->domain_metadata.at("basin.other").configuration, R"({"n":3})");

  // Removing a domain is a change to it as well.
  auto remove = std::make_unique<Transaction>(latest, TableFixture::Options());
  remove->SetDomainMetadata(DomainMetadata{"basin.other", "", true});
  auto change = SetDomain(latest, "basin.other", R"({"n":4})");
  ASSERT_OK(remove->Commit());
  ASSERT_ERROR_CODE(change->Commit(), kConflict);
  ASSERT_OK_AND_ASSIGN(auto after, table_.Load());
  EXPECT_EQ(after->domain_metadata.count("basin.other"), 0u);
}

TEST(DomainMetadataFeatureTest, RequiresTheWriterFeature) {
  TableFixture table(NewMemoryObjectStore());
  ASSERT_OK(table.Create());  // protocol 1/2: no table features
  ASSERT_OK_AND_ASSIGN(auto txn, table.Begin());
  txn->SetDomainMetadata(DomainMetadata{"basin.test", "{}", false});
  ASSERT_ERROR_CODE(txn->Commit(), kInvalidArgument);
  ASSERT_OK_AND_ASSIGN(auto snapshot, table.Load());
  EXPECT_EQ(snapshot->version, 0);
}

}  // namespace
}  // namespace basin::delta
