#include "commands/maintenance.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "delta/deletion_vector.h"
#include "delta/skipping.h"
#include "engine/predicate_parser.h"
#include "maintenance_fixture.h"
#include "testing/interop.h"

namespace basin::commands {
namespace {

using testing::TableFixture;

constexpr int64_t kHourMs = 3600 * 1000;
constexpr int64_t kDayMs = 24 * kHourMs;

template <typename T>
std::vector<const T*> ActionsOf(const std::vector<delta::Action>& actions) {
  std::vector<const T*> out;
  for (const auto& a : actions) {
    if (const T* t = std::get_if<T>(&a)) out.push_back(t);
  }
  return out;
}

const delta::CommitInfo* InfoOf(const std::vector<delta::Action>& actions) {
  auto infos = ActionsOf<delta::CommitInfo>(actions);
  return infos.empty() ? nullptr : infos[0];
}

// A table of `files` appends of 100 rows each (versions 1 to `files`): id, name, and day
// (partition) when partitioned. Returns the latest snapshot.
Result<std::shared_ptr<delta::Snapshot>> MakeSmallFiles(TableFixture& table, int files, bool partitioned) {
  if (partitioned) {
    RETURN_IF_ERROR(table.Create({{"id", "long"}, {"name", "string"}, {"day", "string"}}, {"day"}));
  } else {
    RETURN_IF_ERROR(table.Create({{"id", "long"}, {"name", "string"}}));
  }
  for (int f = 0; f < files; f++) {
    std::string select =
        "SELECT i AS id, 'n' || i::VARCHAR AS name" +
        std::string(partitioned ? ", CASE WHEN i % 2 = 0 THEN 'a' ELSE 'b' END AS day" : "") +
        " FROM range(" + std::to_string(f * 100) + ", " + std::to_string(f * 100 + 100) + ") t(i)";
    RETURN_IF_ERROR(table.Append(select));
  }
  return table.Load();
}

// A table of ids 0..9 in one file (version 1), with deletion vectors enabled. Returns the
// latest snapshot.
Result<std::shared_ptr<delta::Snapshot>> MakeDeletionVectorTable(TableFixture& table) {
  RETURN_IF_ERROR(table.Create({{"id", "long"}}, {}, {{"delta.enableDeletionVectors", "true"}},
                               delta::Protocol{3, 7, std::vector<std::string>{"deletionVectors"},
                                               std::vector<std::string>{"deletionVectors"}}));
  RETURN_IF_ERROR(table.Append("SELECT i AS id FROM range(10) t(i)"));
  return table.Load();
}

// Commits `dv` onto the first file of `snapshot`, as a DELETE by deletion vector would.
Status CommitDeletionVector(TableFixture& table, const std::shared_ptr<delta::Snapshot>& snapshot,
                            delta::DeletionVectorDescriptor dv) {
  delta::AddFile with_dv = snapshot->files[0];
  with_dv.deletion_vector = std::move(dv);
  delta::Transaction txn(snapshot, table.Options());
  txn.Remove(delta::RemoveOf(snapshot->files[0]));
  txn.Add(std::move(with_dv));
  return txn.Commit().status();
}

TEST(OptimizeTest, CompactsSmallFilesWithoutChangingRows) {
  TableFixture table;
  ASSERT_OK_AND_ASSIGN(auto before, MakeSmallFiles(table, 5, /*partitioned=*/false));
  ASSERT_EQ(before->files.size(), 5u);

  std::vector<std::string> phases;
  CommandContext ctx = table.Context();
  ctx.progress = [&](const Progress& p) { phases.push_back(p.phase); };
  ASSERT_OK_AND_ASSIGN(CommandResult result, Optimize(ctx, before, {}));
  EXPECT_EQ(result.commit.version, before->version + 1);
  EXPECT_EQ(result.metrics["numFilesRemoved"], 5);
  EXPECT_EQ(result.metrics["numFilesAdded"], 1);
  EXPECT_EQ(result.metrics["filesRemoved"]["totalFiles"], 5);
  EXPECT_NE(std::find(phases.begin(), phases.end(), "compacting"), phases.end());

  ASSERT_OK_AND_ASSIGN(auto after, table.Load());
  EXPECT_EQ(after->files.size(), 1u);
  ASSERT_OK_AND_ASSIGN(int64_t difference, table.RowDifference(*before, *after));
  EXPECT_EQ(difference, 0);
  ASSERT_OK_AND_ASSIGN(int64_t rows, table.CountRows(*after));
  EXPECT_EQ(rows, 500);

  ASSERT_OK_AND_ASSIGN(auto actions, table.Commit(result.commit.version));
  ASSERT_NE(InfoOf(actions), nullptr);
  EXPECT_EQ(InfoOf(actions)->operation, "OPTIMIZE");
  EXPECT_EQ(InfoOf(actions)->raw["operationMetrics"]["numRemovedFiles"], "5");
  auto adds = ActionsOf<delta::AddFile>(actions);
  auto removes = ActionsOf<delta::RemoveFile>(actions);
  ASSERT_EQ(adds.size(), 1u);
  ASSERT_EQ(removes.size(), 5u);
  EXPECT_FALSE(adds[0]->data_change);
  for (const auto* r : removes) EXPECT_FALSE(r->data_change);
  ASSERT_INTEROP(table.root(), 500);
}

TEST(OptimizeTest, NothingToDoCommitsNothing) {
  TableFixture table;
  ASSERT_OK_AND_ASSIGN(auto snapshot, MakeSmallFiles(table, 1, /*partitioned=*/false));
  ASSERT_OK_AND_ASSIGN(CommandResult result, Optimize(table.Context(), snapshot, {}));
  EXPECT_EQ(result.commit.version, -1);
  EXPECT_EQ(result.metrics["numFilesRemoved"], 0);
  ASSERT_OK_AND_ASSIGN(auto latest, table.Load());
  EXPECT_EQ(latest->version, snapshot->version);
}

TEST(OptimizeTest, CompactsEachPartitionAndHonoursThePartitionPredicate) {
  TableFixture table;
  // 3 files in each of day=a and day=b.
  ASSERT_OK_AND_ASSIGN(auto before, MakeSmallFiles(table, 3, /*partitioned=*/true));
  ASSERT_EQ(before->files.size(), 6u);

  OptimizeRequest only_a;
  only_a.where = "day = 'a'";
  ASSERT_OK_AND_ASSIGN(CommandResult result, Optimize(table.Context(), before, only_a));
  EXPECT_EQ(result.metrics["numFilesRemoved"], 3);
  EXPECT_EQ(result.metrics["partitionsOptimized"], 1);
  ASSERT_OK_AND_ASSIGN(auto after_a, table.Load());
  EXPECT_EQ(after_a->files.size(), 4u);
  for (const auto& f : after_a->files) {
    if (f.partition_values.at("day") == "a") {
      EXPECT_FALSE(f.data_change);
    }
  }

  ASSERT_OK_AND_ASSIGN(result, Optimize(table.Context(), after_a, {}));
  EXPECT_EQ(result.metrics["numFilesRemoved"], 3);  // day=a has one file left: not rewritten
  ASSERT_OK_AND_ASSIGN(auto after, table.Load());
  EXPECT_EQ(after->files.size(), 2u);
  ASSERT_OK_AND_ASSIGN(int64_t difference, table.RowDifference(*before, *after));
  EXPECT_EQ(difference, 0);

  OptimizeRequest bad;
  bad.where = "id > 3";
  ASSERT_ERROR_CODE(Optimize(table.Context(), after, bad), kInvalidArgument);
  ASSERT_INTEROP(table.root(), 300);
}

TEST(OptimizeTest, RewritesFilesWithDeletionVectorsWithoutTheDeletedRows) {
  TableFixture table;
  ASSERT_OK_AND_ASSIGN(auto snapshot, MakeDeletionVectorTable(table));
  // Rows 0, 3 and 7 deleted through an inline DV.
  std::string bitmap = delta::SerializeRoaringBitmapArray({0, 3, 7});
  ASSERT_OK(CommitDeletionVector(
      table, snapshot,
      delta::DeletionVectorDescriptor{'i', delta::EncodeInlineDeletionVector(bitmap), std::nullopt,
                                      static_cast<int32_t>(bitmap.size()), 3}));
  ASSERT_OK_AND_ASSIGN(auto before, table.Load());

  // A single file is worth rewriting when it drops deleted rows.
  ASSERT_OK_AND_ASSIGN(CommandResult result, Optimize(table.Context(), before, {}));
  EXPECT_EQ(result.metrics["numDeletionVectorsRemoved"], 1);
  ASSERT_OK_AND_ASSIGN(auto after, table.Load());
  ASSERT_EQ(after->files.size(), 1u);
  EXPECT_FALSE(after->files[0].deletion_vector.has_value());
  ASSERT_OK_AND_ASSIGN(int64_t difference, table.RowDifference(*before, *after));
  EXPECT_EQ(difference, 0);
  ASSERT_OK_AND_ASSIGN(int64_t rows, table.CountRows(*after));
  EXPECT_EQ(rows, 7);
}

// A context for `table` whose command runs `concurrent_commit` when it first reports the
// "committing" phase: another writer commits between the command's read and its commit.
CommandContext ContextWithConcurrentCommit(TableFixture& table, std::function<void()> concurrent_commit) {
  CommandContext ctx = table.Context();
  ctx.progress = [concurrent_commit = std::move(concurrent_commit), done = false](const Progress& p) mutable {
    if (p.phase != "committing" || done) return;
    done = true;
    concurrent_commit();
  };
  return ctx;
}

// A writer's automatic compaction packs size-tiered bins: a file an earlier compaction
// wrote is merged again only once the smaller files beside it weigh half as much, not by
// every compaction (rows of md5 text, so that a file's size follows its rows).
TEST(OptimizeTest, AutomaticCompactionMergesEarlierOutputOnlyOnceHalfAsMuchHasCome) {
  TableFixture table;
  ASSERT_OK(table.Create({{"id", "long"}, {"name", "string"}}));
  int64_t next_id = 0;
  auto append = [&](int files) -> Status {
    for (int f = 0; f < files; f++, next_id += 1000) {
      RETURN_IF_ERROR(table.Append("SELECT i AS id, md5(i::VARCHAR) AS name FROM range(" +
                                   std::to_string(next_id) + ", " + std::to_string(next_id + 1000) +
                                   ") t(i)"));
    }
    return Status::OK();
  };
  OptimizeRequest automatic;
  automatic.automatic = true;
  auto compact = [&]() -> Result<CommandResult> {
    ASSIGN_OR_RETURN(auto snapshot, table.Load());
    return Optimize(table.Context(), snapshot, automatic);
  };
  auto rows_per_file = [&]() -> Result<std::vector<int64_t>> {
    ASSIGN_OR_RETURN(auto snapshot, table.Load());
    std::vector<int64_t> rows;
    for (const delta::AddFile& file : snapshot->files) {
      rows.push_back(nlohmann::json::parse(delta::StatsJson(file).value_or("{}")).value("numRecords", -1));
    }
    std::sort(rows.begin(), rows.end());
    return rows;
  };

  // Four small files become one of 4,000 rows, committed as Delta's auto compaction.
  ASSERT_OK(append(4));
  ASSERT_OK_AND_ASSIGN(CommandResult first, compact());
  EXPECT_EQ(first.metrics["numFilesRemoved"], 4);
  ASSERT_OK_AND_ASSIGN(auto actions, table.Commit(first.commit.version));
  ASSERT_NE(InfoOf(actions), nullptr);
  EXPECT_EQ(InfoOf(actions)->raw["operationParameters"]["auto"], true);
  // One more weighs under half the 4,000 rows: nothing is worth a rewrite (OPTIMIZE would
  // merge both).
  ASSERT_OK(append(1));
  ASSERT_OK_AND_ASSIGN(CommandResult second, compact());
  EXPECT_EQ(second.commit.version, -1);
  // With another, the small files weigh half as much: all three become one file.
  ASSERT_OK(append(1));
  ASSERT_OK_AND_ASSIGN(CommandResult third, compact());
  EXPECT_EQ(third.metrics["numFilesRemoved"], 3);
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> after_third, rows_per_file());
  EXPECT_EQ(after_third, (std::vector<int64_t>{6000}));
  // Two more weigh a third of the 6,000 rows: they are merged, and it is left as it is.
  ASSERT_OK(append(2));
  ASSERT_OK_AND_ASSIGN(CommandResult fourth, compact());
  EXPECT_EQ(fourth.metrics["numFilesRemoved"], 2);
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> after_fourth, rows_per_file());
  EXPECT_EQ(after_fourth, (std::vector<int64_t>{2000, 6000}));
  ASSERT_INTEROP(table.root(), 8000);
}

TEST(OptimizeTest, ConcurrentAppendBetweenReadAndCommitCommitsBoth) {
  TableFixture table;
  ASSERT_OK_AND_ASSIGN(auto before, MakeSmallFiles(table, 4, /*partitioned=*/false));
  bool appended = false;
  CommandContext ctx = ContextWithConcurrentCommit(table, [&] {
    appended = true;
    ASSERT_OK(table.Append("SELECT i AS id, 'late' AS name FROM range(1000, 1010) t(i)").status());
  });
  ASSERT_OK_AND_ASSIGN(CommandResult result, Optimize(ctx, before, {}));
  ASSERT_TRUE(appended);
  EXPECT_EQ(result.commit.version, before->version + 2);  // after the append
  ASSERT_OK_AND_ASSIGN(auto after, table.Load());
  EXPECT_EQ(after->files.size(), 2u);  // the compacted file and the appended one
  ASSERT_OK_AND_ASSIGN(int64_t rows, table.CountRows(*after));
  EXPECT_EQ(rows, 410);
}

TEST(OptimizeTest, ConcurrentDeleteOfACompactedFileConflicts) {
  TableFixture table;
  ASSERT_OK_AND_ASSIGN(auto before, MakeSmallFiles(table, 3, /*partitioned=*/false));
  CommandContext ctx = ContextWithConcurrentCommit(table, [&] {
    delta::Transaction txn(before, table.Options());
    txn.Remove(delta::RemoveOf(before->files[0]));
    ASSERT_OK(txn.Commit().status());
  });
  ASSERT_ERROR_CODE(Optimize(ctx, before, {}), kConflict);
}

TEST(OptimizeTest, ZOrderClustersRowsSoRangeQueriesReadFewerFiles) {
  TableFixture table;
  ASSERT_OK(table.Create({{"x", "long"}, {"y", "long"}, {"payload", "string"}}, {},
                         {{"delta.targetFileSize", "64kb"}}));
  // Four files of uniformly random points: each spans the whole x and y range.
  for (int f = 0; f < 4; f++) {
    ASSERT_OK(table
                  .Append("SELECT (hash(i, 'x') % 1000)::BIGINT AS x, (hash(i, 'y') % 1000)::BIGINT AS y, "
                          "md5(i::VARCHAR) AS payload FROM range(" +
                          std::to_string(f * 10000) + ", " + std::to_string(f * 10000 + 10000) + ") t(i)")
                  .status());
  }
  ASSERT_OK_AND_ASSIGN(auto before, table.Load());
  const std::string range = "x BETWEEN 100 AND 200 AND y BETWEEN 600 AND 700";
  ASSERT_OK_AND_ASSIGN(delta::Predicate predicate, engine::ParsePredicate(range, before->schema));
  std::vector<size_t> matching_before = delta::FilesMatching(*before, predicate);
  EXPECT_EQ(matching_before.size(), before->files.size());

  OptimizeRequest request;
  request.zorder_by = {"x", "y"};
  ASSERT_OK_AND_ASSIGN(CommandResult result, Optimize(table.Context(), before, request));
  EXPECT_EQ(result.metrics["numFilesRemoved"], 4);
  ASSERT_OK_AND_ASSIGN(auto after, table.Load());
  ASSERT_GT(after->files.size(), 4u);
  ASSERT_OK_AND_ASSIGN(int64_t difference, table.RowDifference(*before, *after));
  EXPECT_EQ(difference, 0);
  std::vector<size_t> matching_after = delta::FilesMatching(*after, predicate);
  EXPECT_LT(matching_after.size() * 3, after->files.size())
      << matching_after.size() << " of " << after->files.size() << " files match after Z-ordering";
  ASSERT_OK_AND_ASSIGN(auto actions, table.Commit(result.commit.version));
  EXPECT_EQ(InfoOf(actions)->raw["operationParameters"]["zOrderBy"], "[\"x\",\"y\"]");
  ASSERT_INTEROP(table.root(), 40000);
}

TEST(OptimizeTest, ZOrderRefusesPartitionAndUnknownColumns) {
  TableFixture table;
  ASSERT_OK_AND_ASSIGN(auto snapshot, MakeSmallFiles(table, 2, /*partitioned=*/true));
  OptimizeRequest request;
  request.zorder_by = {"day"};
  ASSERT_ERROR_CODE(Optimize(table.Context(), snapshot, request), kInvalidArgument);
  request.zorder_by = {"nope"};
  ASSERT_ERROR_CODE(Optimize(table.Context(), snapshot, request), kInvalidArgument);
}

// --- VACUUM ---

void WriteFile(const std::filesystem::path& path) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << "junk";
}

TEST(VacuumTest, DeletesOnlyUnreferencedFilesOlderThanTheRetention) {
  TableFixture table;
  // Commits happen "ten days from now", so files written now are older than a 7-day window.
  table.SetClock(table.clock() + 10 * kDayMs);
  ASSERT_OK_AND_ASSIGN(auto two_files, MakeSmallFiles(table, 2, /*partitioned=*/false));  // v1, v2
  ASSERT_OK(Optimize(table.Context(), two_files, {}).status());  // v3 tombstones both files
  const std::filesystem::path root = table.root();
  WriteFile(root / "orphan.parquet");
  WriteFile(root / "_change_data" / "cdc-orphan.parquet");
  WriteFile(root / "_tmp_spark" / "keep.parquet");
  WriteFile(root / ".hidden.parquet");
  ASSERT_OK_AND_ASSIGN(auto latest, table.Load());

  VacuumRequest dry;
  dry.dry_run = true;
  ASSERT_OK_AND_ASSIGN(VacuumResult listed, Vacuum(table.Context(), latest, dry));
  EXPECT_EQ(listed.files, (std::vector<std::string>{"_change_data/cdc-orphan.parquet", "orphan.parquet"}));
  EXPECT_TRUE(std::filesystem::exists(root / "orphan.parquet"));
  ASSERT_OK_AND_ASSIGN(auto unchanged, table.Load());
  EXPECT_EQ(unchanged->version, latest->version);  // a dry run commits nothing

  ASSERT_OK_AND_ASSIGN(VacuumResult deleted, Vacuum(table.Context(), latest, {}));
  EXPECT_EQ(deleted.files, listed.files);
  EXPECT_FALSE(std::filesystem::exists(root / "orphan.parquet"));
  EXPECT_TRUE(std::filesystem::exists(root / "_tmp_spark" / "keep.parquet"));
  EXPECT_TRUE(std::filesystem::exists(root / ".hidden.parquet"));
  // The tombstoned files are inside the window: time travel to v1 still works.
  ASSERT_OK_AND_ASSIGN(auto v1, table.LoadVersion(1));
  ASSERT_OK_AND_ASSIGN(int64_t v1_rows, table.CountRows(*v1));
  EXPECT_EQ(v1_rows, 100);

  auto history = delta::ReadHistory(table.store(), 2);
  ASSERT_OK(history.status());
  EXPECT_EQ((*history)[0].operation, "VACUUM END");
  EXPECT_EQ((*history)[1].operation, "VACUUM START");
  EXPECT_EQ((*history)[1].operation_metrics["numFilesToDelete"], "2");

  // Eight days later the tombstones have expired.
  table.SetClock(table.clock() + 8 * kDayMs);
  ASSERT_OK_AND_ASSIGN(latest, table.Load());
  ASSERT_OK_AND_ASSIGN(deleted, Vacuum(table.Context(), latest, {}));
  EXPECT_EQ(deleted.files.size(), 2u);
  ASSERT_OK_AND_ASSIGN(latest, table.Load());
  ASSERT_OK_AND_ASSIGN(int64_t rows, table.CountRows(*latest));
  EXPECT_EQ(rows, 200);
  ASSERT_OK_AND_ASSIGN(v1, table.LoadVersion(1));
  ASSERT_ERROR_CODE(table.CountRows(*v1), kNotFound);
  ASSERT_INTEROP(table.root(), 200);
}

TEST(VacuumTest, KeepsFilesYoungerThanTheRetention) {
  TableFixture table;
  ASSERT_OK_AND_ASSIGN(auto latest, MakeSmallFiles(table, 1, /*partitioned=*/false));
  WriteFile(std::filesystem::path(table.root()) / "fresh-orphan.parquet");
  VacuumRequest dry;
  dry.dry_run = true;
  ASSERT_OK_AND_ASSIGN(VacuumResult listed, Vacuum(table.Context(), latest, dry));
  EXPECT_TRUE(listed.files.empty());
}

// The cut-off comes from the command's clock (not the commit clock), and a partition
// folder that loses its last file is gone, as folders are on object stores.
TEST(VacuumTest, RetentionIsMeasuredOnTheCommandClockAndEmptiedFoldersGo) {
  TableFixture table;
  ASSERT_OK_AND_ASSIGN(auto latest, MakeSmallFiles(table, 1, /*partitioned=*/true));
  const std::filesystem::path root = table.root();
  WriteFile(root / "day=zz" / "orphan.parquet");
  WriteFile(root / "day=a" / "orphan.parquet");
  CommandContext ctx = table.Context();
  ASSERT_OK_AND_ASSIGN(VacuumResult now, Vacuum(ctx, latest, {}));
  EXPECT_TRUE(now.files.empty());
  ctx.clock = std::make_shared<ManualClock>(table.clock() + 8 * kDayMs);
  ASSERT_OK_AND_ASSIGN(VacuumResult later, Vacuum(ctx, latest, {}));
  EXPECT_EQ(later.files, (std::vector<std::string>{"day=a/orphan.parquet", "day=zz/orphan.parquet"}));
  EXPECT_FALSE(std::filesystem::exists(root / "day=zz"));
  EXPECT_TRUE(std::filesystem::is_directory(root / "day=a"));  // still holds a data file
  auto history = delta::ReadHistory(table.store(), 1);
  ASSERT_OK(history.status());
  EXPECT_EQ((*history)[0].operation, "VACUUM END");
  EXPECT_EQ((*history)[0].operation_metrics["numVacuumedDirectories"], "1");
  ASSERT_OK_AND_ASSIGN(latest, table.Load());
  ASSERT_OK_AND_ASSIGN(int64_t rows, table.CountRows(*latest));
  EXPECT_EQ(rows, 100);
}

// A tombstone exactly as old as the retention has expired (Spark's rule, and the checkpoint
// writer's): with RETAIN 0 HOURS, a VACUUM in the millisecond of the commit that removed
// the files deletes them.
TEST(VacuumTest, ATombstoneAsOldAsTheRetentionHasExpired) {
  TableFixture table;
  // Commits "ten days from now": the files written now are older than any cut-off below.
  table.SetClock(table.clock() + 10 * kDayMs);
  ASSERT_OK_AND_ASSIGN(auto two_files, MakeSmallFiles(table, 2, /*partitioned=*/false));
  ASSERT_OK(Optimize(table.Context(), two_files, {}).status());  // tombstones both, at clock()
  ASSERT_OK_AND_ASSIGN(auto latest, table.Load());
  CommandContext ctx = table.Context();
  ctx.clock = std::make_shared<ManualClock>(table.clock() + 7 * kDayMs - 1);  // a millisecond short
  VacuumRequest dry;
  dry.dry_run = true;
  ASSERT_OK_AND_ASSIGN(VacuumResult inside, Vacuum(ctx, latest, dry));
  EXPECT_TRUE(inside.files.empty());
  ctx.clock = std::make_shared<ManualClock>(table.clock() + 7 * kDayMs);  // the default retention
  ASSERT_OK_AND_ASSIGN(VacuumResult at, Vacuum(ctx, latest, dry));
  EXPECT_EQ(at.files.size(), 2u);
  ctx.clock = std::make_shared<ManualClock>(table.clock());
  VacuumRequest now;
  now.retain_hours = 0;
  now.retention_check = false;
  ASSERT_OK_AND_ASSIGN(VacuumResult deleted, Vacuum(ctx, latest, now));
  EXPECT_EQ(deleted.files, at.files);
  ASSERT_OK_AND_ASSIGN(latest, table.Load());
  ASSERT_OK_AND_ASSIGN(int64_t rows, table.CountRows(*latest));
  EXPECT_EQ(rows, 200);
}

TEST(VacuumTest, RefusesAShortRetentionUnlessTheCheckIsOff) {
  TableFixture table;
  ASSERT_OK_AND_ASSIGN(auto latest, MakeSmallFiles(table, 1, /*partitioned=*/false));
  table.SetClock(table.clock() + 2 * kHourMs);
  WriteFile(std::filesystem::path(table.root()) / "orphan.parquet");
  VacuumRequest request;
  request.retain_hours = 1;
  ASSERT_ERROR_CODE(Vacuum(table.Context(), latest, request), kInvalidArgument);
  request.retention_check = false;
  ASSERT_OK_AND_ASSIGN(VacuumResult deleted, Vacuum(table.Context(), latest, request));
  EXPECT_EQ(deleted.files, std::vector<std::string>{"orphan.parquet"});
}

TEST(VacuumTest, KeepsDeletionVectorFilesOfActiveFiles) {
  TableFixture table;
  ASSERT_OK_AND_ASSIGN(auto snapshot, MakeDeletionVectorTable(table));
  std::string uuid(16, '\x01');
  std::string dv_path = delta::EncodeDeletionVectorPath("", uuid);
  delta::DeletionVectorDescriptor dv{'u', dv_path, 1, 0, 2};
  std::string bitmap = delta::SerializeRoaringBitmapArray({1, 2});
  dv.size_in_bytes = static_cast<int32_t>(bitmap.size());
  ASSERT_OK_AND_ASSIGN(std::string dv_key, delta::DeletionVectorKey(dv));
  ASSERT_OK(table.store()->Put(dv_key, delta::EncodeDeletionVectorFile(bitmap)));
  ASSERT_OK(CommitDeletionVector(table, snapshot, dv));

  table.SetClock(table.clock() + 30 * kDayMs);
  ASSERT_OK_AND_ASSIGN(auto latest, table.Load());
  VacuumRequest dry;
  dry.dry_run = true;
  ASSERT_OK_AND_ASSIGN(VacuumResult listed, Vacuum(table.Context(), latest, dry));
  EXPECT_TRUE(listed.files.empty()) << listed.files[0];
  ASSERT_OK_AND_ASSIGN(int64_t rows, table.CountRows(*latest));
  EXPECT_EQ(rows, 8);
}

// --- RESTORE ---

TEST(RestoreTest, RestoresTheFilesAndMetadataOfAnOlderVersion) {
  TableFixture table;
  ASSERT_OK_AND_ASSIGN(auto v2, MakeSmallFiles(table, 2, /*partitioned=*/false));
  ASSERT_OK_AND_ASSIGN(auto v1, table.LoadVersion(1));
  // v3: delete the first file and change a property.
  delta::Transaction txn(v2, table.Options());
  txn.Remove(delta::RemoveOf(v1->files[0]));
  delta::Metadata changed = v2->metadata;
  changed.configuration["owner"] = "someone";
  txn.UpdateMetadata(changed);
  ASSERT_OK(txn.Commit().status());
  ASSERT_OK_AND_ASSIGN(auto v3, table.Load());

  RestoreRequest request;
  request.version = 1;
  ASSERT_OK_AND_ASSIGN(CommandResult result, Restore(table.Context(), v3, request));
  EXPECT_EQ(result.commit.version, 4);
  EXPECT_EQ(result.metrics["numRestoredFiles"], 1);
  EXPECT_EQ(result.metrics["numRemovedFiles"], 1);
  EXPECT_EQ(result.metrics["numOfFilesAfterRestore"], 1);
  ASSERT_OK_AND_ASSIGN(auto restored, table.Load());
  ASSERT_OK_AND_ASSIGN(int64_t difference, table.RowDifference(*v1, *restored));
  EXPECT_EQ(difference, 0);
  EXPECT_EQ(restored->metadata.configuration.count("owner"), 0u);
  ASSERT_OK_AND_ASSIGN(auto actions, table.Commit(4));
  EXPECT_EQ(InfoOf(actions)->operation, "RESTORE");
  for (const auto* add : ActionsOf<delta::AddFile>(actions)) EXPECT_TRUE(add->data_change);

  request.version = 9;
  ASSERT_ERROR_CODE(Restore(table.Context(), restored, request), kInvalidArgument);
  ASSERT_INTEROP(table.root(), 100);
}

TEST(RestoreTest, RestoresByTimestampWithInCommitTimestamps) {
  TableFixture table;
  const int64_t t0 = 1700000000000;
  table.SetClock(t0);
  ASSERT_OK(table.Create({{"id", "long"}, {"name", "string"}}, {},
                         {{"delta.enableInCommitTimestamps", "true"}},
                         delta::Protocol{1, 7, std::nullopt, std::vector<std::string>{"inCommitTimestamp"}}));
  table.SetClock(t0 + kHourMs);
  ASSERT_OK(table.Append("SELECT 1::BIGINT AS id, 'one' AS name").status());
  table.SetClock(t0 + 2 * kHourMs);
  ASSERT_OK(table.Append("SELECT 2::BIGINT AS id, 'two' AS name").status());
  ASSERT_OK_AND_ASSIGN(auto latest, table.Load());
  RestoreRequest request;
  request.timestamp = "2023-11-14 23:43:20";  // t0 + 1.5 h: version 1
  table.SetClock(t0 + 3 * kHourMs);
  ASSERT_OK_AND_ASSIGN(CommandResult result, Restore(table.Context(), latest, request));
  ASSERT_OK_AND_ASSIGN(auto restored, table.Load());
  ASSERT_OK_AND_ASSIGN(auto rows, table.SortedRows("SELECT count(*) FROM (" +
                                                   engine::BuildScanSql(*restored, table.conn())->sql + ")"));
  EXPECT_EQ(rows, std::vector<std::string>{"1|"});
  EXPECT_EQ(result.metrics["numRemovedFiles"], 1);
}

TEST(RestoreTest, FailsNamingAVacuumedFile) {
  TableFixture table;
  ASSERT_OK_AND_ASSIGN(auto v2, MakeSmallFiles(table, 2, /*partitioned=*/false));
  ASSERT_OK(Optimize(table.Context(), v2, {}).status());  // v3
  ASSERT_OK_AND_ASSIGN(auto v1, table.LoadVersion(1));
  const std::string gone = v1->files[0].path;
  ASSERT_OK(table.store()->Delete(gone));
  ASSERT_OK_AND_ASSIGN(auto latest, table.Load());
  RestoreRequest request;
  request.version = 1;
  auto result = Restore(table.Context(), latest, request);
  ASSERT_ERROR_CODE(result, kNotFound);
  EXPECT_NE(result.status().message().find(gone), std::string::npos) << result.status().ToString();
}

}  // namespace
}  // namespace basin::commands
