// FileList (delta/file_list.h): updates keep exactly the files a replay would, share the
// chunks a commit did not touch, and keep the number of chunks small however many small
// commits land.
#include "delta/file_list.h"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>

namespace basin::delta {
namespace {

AddFile File(const std::string& path, std::optional<std::string> dv = std::nullopt) {
  AddFile add;
  add.path = path;
  if (dv) {
    add.deletion_vector = DeletionVectorDescriptor{};
    add.deletion_vector->path_or_inline_dv = *dv;
  }
  return add;
}

KeyToRemove KeyOf(const AddFile& add) {
  return KeyToRemove{ReplayKeyHash(add.path, add.deletion_vector), add.ReplayKey()};
}

std::multiset<std::string> Keys(const FileList& files) {
  std::multiset<std::string> out;
  for (const AddFile& add : files) out.insert(add.ReplayKey());
  return out;
}

TEST(FileListTest, IndexingAndIterationAgree) {
  std::vector<AddFile> files;
  for (int i = 0; i < 10'000; i++) files.push_back(File("f" + std::to_string(i)));
  const FileList list(files);
  ASSERT_EQ(list.size(), files.size());
  EXPECT_GT(list.num_chunks(), 1u);  // more than one chunk's worth
  size_t i = 0;
  for (const AddFile& add : list) {
    EXPECT_EQ(add.path, files[i].path);
    EXPECT_EQ(list[i].path, files[i].path);
    i++;
  }
  EXPECT_EQ(i, files.size());
  EXPECT_TRUE(FileList().empty());
  EXPECT_EQ(FileList().begin(), FileList().end());
}

TEST(FileListTest, UpdatedRemovesExactKeysAndReportsKeptIndexes) {
  std::vector<AddFile> files;
  for (int i = 0; i < 9'000; i++) files.push_back(File("f" + std::to_string(i)));
  files.push_back(File("same", "dv-a"));
  files.push_back(File("same", "dv-b"));
  const FileList list(files);
  // Remove one plain file, one of two entries of the same path (by its DV), and a key that
  // is not there.
  std::vector<KeyToRemove> removed{KeyOf(files[4'100]), KeyOf(files[9'000]), KeyOf(File("absent"))};
  std::vector<uint32_t> kept;
  const FileList next = list.Updated(removed, {File("new1"), File("new2")}, &kept);
  ASSERT_EQ(next.size(), files.size() - 2 + 2);
  ASSERT_EQ(kept.size(), files.size() - 2);
  for (size_t i = 0; i < kept.size(); i++) EXPECT_EQ(next[i].path, list[kept[i]].path);
  EXPECT_EQ(next[kept.size()].path, "new1");
  EXPECT_EQ(next[kept.size() + 1].path, "new2");
  std::multiset<std::string> expected = Keys(list);
  expected.erase(expected.find(files[4'100].ReplayKey()));
  expected.erase(expected.find(files[9'000].ReplayKey()));
  expected.insert("new1");
  expected.insert("new2");
  EXPECT_EQ(Keys(next), expected);
  // The old list is unchanged: lists are values.
  EXPECT_EQ(list.size(), files.size());
  EXPECT_EQ(list[4'100].path, "f4100");
}

TEST(FileListTest, PercentEncodedPathsMatchTheirDecodedKey) {
  const FileList list({File("a%20b.parquet"), File("c.parquet")});
  AddFile remove_key = File("a b.parquet");  // the same file, as a remove may spell it decoded
  ASSERT_EQ(remove_key.ReplayKey(), list[0].ReplayKey());
  const FileList next = list.Updated({KeyOf(remove_key)}, {});
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next[0].path, "c.parquet");
}

TEST(FileListTest, ManySmallCommitsStayInFewChunksAndMatchAReplay) {
  std::mt19937 rng(7);
  FileList list;
  std::multiset<std::string> model;
  std::vector<std::string> live;
  int next_id = 0;
  for (int commit = 0; commit < 3'000; commit++) {
    std::vector<AddFile> added;
    const int adds = 1 + static_cast<int>(rng() % 3);
    for (int a = 0; a < adds; a++) added.push_back(File("p" + std::to_string(next_id++)));
    std::vector<KeyToRemove> removed;
    if (!live.empty() && rng() % 4 == 0) {  // a commit that also removes a random file
      const size_t victim = rng() % live.size();
      removed.push_back(KeyOf(File(live[victim])));
      model.erase(model.find(live[victim]));
      live[victim] = live.back();
      live.pop_back();
    }
    for (const AddFile& add : added) {
      model.insert(add.ReplayKey());
      live.push_back(add.path);
    }
    list = list.Updated(removed, std::move(added));
  }
  EXPECT_EQ(Keys(list), model);
  // A few thousand files: a handful of chunks, not one per commit.
  EXPECT_LE(list.num_chunks(), 2 * (list.size() / FileList::kMaxChunkFiles + 1) + 16) << list.size();
}

TEST(FileListTest, AnAppendSharesEveryOldChunk) {
  std::vector<AddFile> files;
  for (int i = 0; i < 3 * static_cast<int>(FileList::kMaxChunkFiles); i++)
    files.push_back(File("f" + std::to_string(i)));
  const FileList list(files);
  const FileList next = list.Updated({}, {File("one more")});
  ASSERT_EQ(next.size(), list.size() + 1);
  // Shared, not copied: the same AddFile objects.
  for (size_t i = 0; i < list.size(); i++) ASSERT_EQ(&next[i], &list[i]) << i;
}

}  // namespace
}  // namespace basin::delta
