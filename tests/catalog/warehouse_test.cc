#include "catalog/warehouse.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "testing/test_util.h"

namespace basin::catalog {
namespace {

namespace fs = std::filesystem;

TEST(TableNameTest, DefaultSchemaAndLowerCase) {
  ASSERT_OK_AND_ASSIGN(TableName one, MakeTableName({"Events"}));
  EXPECT_EQ(one.ToString(), "default.events");
  ASSERT_OK_AND_ASSIGN(TableName two, MakeTableName({"Sales", "Orders"}));
  EXPECT_EQ(two.ToString(), "sales.orders");
}

TEST(TableNameTest, RefusesNamesThatAreNotFileNames) {
  ASSERT_ERROR_CODE(MakeTableName({}), kInvalidArgument);
  ASSERT_ERROR_CODE(MakeTableName({"a", "b", "c"}), kInvalidArgument);
  ASSERT_ERROR_CODE(MakeTableName({""}), kInvalidArgument);
  ASSERT_ERROR_CODE(MakeTableName({"a/b"}), kInvalidArgument);
  ASSERT_ERROR_CODE(MakeTableName({"..", "t"}), kInvalidArgument);
}

TEST(WarehouseTest, OpeningCreatesNothing) {
  testing::TempDir dir;
  std::string root = dir.str() + "/wh";
  ASSERT_OK_AND_ASSIGN(auto warehouse, Warehouse::Open(root));
  ASSERT_OK_AND_ASSIGN(auto tables, warehouse->List());
  EXPECT_TRUE(tables.empty());
  ASSERT_OK_AND_ASSIGN(auto missing, warehouse->Lookup({"default", "t"}));
  EXPECT_FALSE(missing.has_value());
  EXPECT_FALSE(fs::exists(root));
}

TEST(WarehouseTest, RegisterLookupListUnregister) {
  testing::TempDir dir;
  ASSERT_OK_AND_ASSIGN(auto warehouse, Warehouse::Open(dir.str()));
  TableName t{"default", "t"};
  TableName u{"sales", "u"};
  EXPECT_EQ(warehouse->DefaultLocation(t), dir.str() + "/default/t");
  ASSERT_OK(warehouse->Register({t, warehouse->DefaultLocation(t), false, 0, ""}));
  ASSERT_OK(warehouse->Register({u, "/elsewhere/u", true, 42, ""}));
  ASSERT_ERROR_CODE(warehouse->Register({t, "/x", false, 0, ""}), kAlreadyExists);

  ASSERT_OK_AND_ASSIGN(TableEntry got, warehouse->Get(t));
  EXPECT_EQ(got.location, dir.str() + "/default/t");
  EXPECT_FALSE(got.external);
  EXPECT_GT(got.created_time_ms, 0);
  ASSERT_OK_AND_ASSIGN(TableEntry external, warehouse->Get(u));
  EXPECT_EQ(external.location, "/elsewhere/u");
  EXPECT_TRUE(external.external);
  EXPECT_EQ(external.created_time_ms, 42);

  ASSERT_OK_AND_ASSIGN(auto all, warehouse->List());
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].name.ToString(), "default.t");
  EXPECT_EQ(all[1].name.ToString(), "sales.u");
  ASSERT_OK_AND_ASSIGN(auto sales, warehouse->List("SALES"));
  ASSERT_EQ(sales.size(), 1u);

  ASSERT_OK(warehouse->Unregister(got));
  ASSERT_ERROR_CODE(warehouse->Get(t), kNotFound);
  ASSERT_ERROR_CODE(warehouse->Unregister(got), kNotFound);
}

// A DROP holding an earlier lookup of the name never unregisters the table created since,
// and each managed incarnation gets a folder no other one has while it exists.
TEST(WarehouseTest, UnregisterRemovesOnlyTheIncarnationLookedUp) {
  auto store = NewMemoryObjectStore();
  auto clock = std::make_shared<ManualClock>(1'700'000'000'000);
  ASSERT_OK_AND_ASSIGN(auto warehouse, Warehouse::Open(store, "memory://wh", clock));
  TableName t{"default", "t"};
  ASSERT_OK_AND_ASSIGN(std::string first_folder, warehouse->ClaimManagedLocation(t));
  EXPECT_EQ(first_folder, "memory://wh/default/t");
  ASSERT_OK(store->Put("default/t/_delta_log/00000000000000000000.json", "{}\n"));
  ASSERT_OK(warehouse->Register({t, first_folder, false, 0, ""}));
  ASSERT_OK_AND_ASSIGN(TableEntry first, warehouse->Get(t));
  EXPECT_FALSE(first.id.empty());

  // While the first folder exists, the next incarnation gets another.
  ASSERT_OK_AND_ASSIGN(std::string second_folder, warehouse->ClaimManagedLocation(t));
  EXPECT_NE(second_folder, first_folder);
  EXPECT_TRUE(second_folder.starts_with("memory://wh/default/t-")) << second_folder;
  // Files nobody owns (a crash's leftovers) keep a folder from being claimed.
  ASSERT_OK(store->Put("default/u/stray.parquet", "left by a crash"));
  ASSERT_OK_AND_ASSIGN(std::string u_folder, warehouse->ClaimManagedLocation({"default", "u"}));
  EXPECT_TRUE(u_folder.starts_with("memory://wh/default/u-")) << u_folder;
  ASSERT_OK_AND_ASSIGN(auto stray_folder, store->List("default/u/"));
  ASSERT_EQ(stray_folder.size(), 1u);
  ASSERT_OK(warehouse->DeleteManagedFolder(u_folder));

  ASSERT_OK(warehouse->Unregister(first));
  ASSERT_OK(warehouse->Register({t, second_folder, false, first.created_time_ms, ""}));
  ASSERT_OK_AND_ASSIGN(TableEntry second, warehouse->Get(t));
  // A second DROP of the first incarnation: Conflict, and the new entry stays.
  ASSERT_ERROR_CODE(warehouse->Unregister(first), kConflict);
  ASSERT_OK_AND_ASSIGN(TableEntry still, warehouse->Get(t));
  EXPECT_EQ(still.id, second.id);
  EXPECT_EQ(still.location, second_folder);
  ASSERT_OK_AND_ASSIGN(auto all, warehouse->List());
  EXPECT_EQ(all.size(), 1u);

  // The first folder goes, owner object last; the second is untouched.
  ASSERT_OK(warehouse->DeleteManagedFolder(first_folder));
  ASSERT_OK_AND_ASSIGN(bool first_left, store->HasObjectsWithPrefix("default/t/"));
  EXPECT_FALSE(first_left);
  ASSERT_OK_AND_ASSIGN(bool second_left, store->HasObjectsWithPrefix(second_folder.substr(12) + "/"));
  EXPECT_TRUE(second_left);
  ASSERT_ERROR_CODE(warehouse->DeleteManagedFolder("memory://elsewhere/t"), kInvalidArgument);

  // A DROP in progress elsewhere (its marker is there) holds this one off, until the
  // marker is old enough to be a crashed DROP's.
  const std::string marker = "_basin_catalog/default/.t.dropping-" + second.id;
  ASSERT_OK(store->Put(marker, "{\"droppedTime\": 1700000000000}\n"));
  ASSERT_ERROR_CODE(warehouse->Unregister(second), kNotFound);
  ASSERT_OK_AND_ASSIGN(TableEntry kept, warehouse->Get(t));
  EXPECT_EQ(kept.id, second.id);
  clock->AdvanceMs(11 * 60 * 1000);
  ASSERT_OK(warehouse->Unregister(second));
  ASSERT_OK_AND_ASSIGN(all, warehouse->List());
  EXPECT_TRUE(all.empty());
  // No marker is left behind.
  ASSERT_OK_AND_ASSIGN(bool markers, store->HasObjectsWithPrefix("_basin_catalog/"));
  EXPECT_FALSE(markers);
}

TEST(WarehouseTest, LocationsInsideTheWarehouseMoveWithIt) {
  testing::TempDir dir;
  {
    ASSERT_OK_AND_ASSIGN(auto warehouse, Warehouse::Open(dir.str() + "/a"));
    ASSERT_OK(warehouse->Register({{"default", "t"}, dir.str() + "/a/default/t", false, 0, ""}));
  }
  fs::rename(dir.str() + "/a", dir.str() + "/b");
  ASSERT_OK_AND_ASSIGN(auto moved, Warehouse::Open(dir.str() + "/b"));
  ASSERT_OK_AND_ASSIGN(TableEntry entry, moved->Get({"default", "t"}));
  EXPECT_EQ(entry.location, dir.str() + "/b/default/t");
}

TEST(WarehouseTest, CorruptEntryNamesTheFile) {
  testing::TempDir dir;
  ASSERT_OK_AND_ASSIGN(auto warehouse, Warehouse::Open(dir.str()));
  ASSERT_OK(warehouse->Register({{"default", "t"}, dir.str() + "/default/t", false, 0, ""}));
  std::ofstream(dir.str() + "/_basin_catalog/default/t.json") << "{not json";
  auto got = warehouse->Get({"default", "t"});
  ASSERT_ERROR_CODE(got, kCorruption);
  EXPECT_NE(got.status().message().find("_basin_catalog/default/t.json"), std::string::npos);
}

TEST(WarehouseTest, LivesInAnyStoreAndTakesTimeFromItsClock) {
  auto store = NewMemoryObjectStore();
  auto clock = std::make_shared<ManualClock>(1'700'000'000'000);
  ASSERT_OK_AND_ASSIGN(auto warehouse, Warehouse::Open(store, "memory://wh/", clock));
  EXPECT_EQ(warehouse->root(), "memory://wh");
  TableName t{"default", "t"};
  EXPECT_EQ(warehouse->DefaultLocation(t), "memory://wh/default/t");
  ASSERT_OK(warehouse->Register({t, warehouse->DefaultLocation(t), false, 0, ""}));
  clock->AdvanceMs(5);
  ASSERT_OK(warehouse->Register({{"s", "u"}, "/elsewhere/./u/", true, 0, ""}));

  // The catalog is objects of the store: nothing else was written, anywhere.
  ASSERT_OK_AND_ASSIGN(auto objects, store->List(""));
  ASSERT_EQ(objects.size(), 2u);
  EXPECT_EQ(objects[0].key, "_basin_catalog/default/t.json");
  EXPECT_EQ(objects[1].key, "_basin_catalog/s/u.json");
  ASSERT_OK_AND_ASSIGN(std::string stored, store->Get("_basin_catalog/default/t.json"));
  EXPECT_NE(stored.find("\"location\": \"default/t\""), std::string::npos) << stored;

  ASSERT_OK_AND_ASSIGN(TableEntry got, warehouse->Get(t));
  EXPECT_EQ(got.location, "memory://wh/default/t");
  EXPECT_EQ(got.created_time_ms, 1'700'000'000'000);
  ASSERT_OK_AND_ASSIGN(TableEntry external, warehouse->Get({"s", "u"}));
  EXPECT_EQ(external.location, "/elsewhere/u");
  EXPECT_EQ(external.created_time_ms, 1'700'000'000'005);

  // The same store under another name moves the tables inside it along.
  ASSERT_OK_AND_ASSIGN(auto renamed, Warehouse::Open(store, "memory://other", clock));
  ASSERT_OK_AND_ASSIGN(TableEntry moved, renamed->Get(t));
  EXPECT_EQ(moved.location, "memory://other/default/t");
  ASSERT_OK_AND_ASSIGN(auto all, renamed->List());
  EXPECT_EQ(all.size(), 2u);
  ASSERT_OK(renamed->Unregister(moved));
  ASSERT_OK_AND_ASSIGN(auto missing, warehouse->Lookup(t));
  EXPECT_FALSE(missing.has_value());
}

TEST(WarehouseTest, LocationsAreComparedLexically) {
  testing::TempDir dir;
  ASSERT_OK_AND_ASSIGN(auto warehouse, Warehouse::Open(dir.str() + "/wh/../wh2/"));
  EXPECT_EQ(warehouse->root(), dir.str() + "/wh2");
  // Inside the warehouse once normalized: stored relative.
  ASSERT_OK(warehouse->Register({{"default", "t"}, dir.str() + "/wh2/x/../default//t", false, 0, ""}));
  ASSERT_OK_AND_ASSIGN(TableEntry t, warehouse->Get({"default", "t"}));
  EXPECT_EQ(t.location, dir.str() + "/wh2/default/t");
  std::ifstream file(dir.str() + "/wh2/_basin_catalog/default/t.json");
  std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\"location\": \"default/t\""), std::string::npos) << text;
  // A sibling folder whose name starts like the warehouse's is outside it.
  ASSERT_OK(warehouse->Register({{"default", "u"}, dir.str() + "/wh22/u", true, 0, ""}));
  ASSERT_OK_AND_ASSIGN(TableEntry u, warehouse->Get({"default", "u"}));
  EXPECT_EQ(u.location, dir.str() + "/wh22/u");
}

// Each way an entry file can be wrong is Corruption naming the file and what is wrong, never
// an exception from the JSON library (which the CLI reported as Internal).
TEST(WarehouseTest, MistypedEntryFieldsAreCorruptionNamingFileAndField) {
  const std::pair<const char*, const char*> kCorrupt[] = {
      {"", "not valid JSON"},
      {"[1, 2]", "JSON object"},
      {R"({"external": false})", "location"},
      {R"({"location": 5})", "location"},
      {R"({"location": ""})", "location"},
      {R"({"location": "default/t", "external": "yes"})", "external"},
      {R"({"location": "default/t", "createdTime": "yesterday"})", "createdTime"},
      {R"({"location": "default/t", "createdTime": 1.5})", "createdTime"},
  };
  for (const auto& [content, what] : kCorrupt) {
    testing::TempDir dir;
    ASSERT_OK_AND_ASSIGN(auto warehouse, Warehouse::Open(dir.str()));
    ASSERT_OK(warehouse->Register({{"default", "t"}, dir.str() + "/default/t", false, 0, ""}));
    std::ofstream(dir.str() + "/_basin_catalog/default/t.json") << content;
    auto got = warehouse->Get({"default", "t"});
    SCOPED_TRACE(content);
    ASSERT_ERROR_CODE(got, kCorruption);
    EXPECT_NE(got.status().message().find("_basin_catalog/default/t.json"), std::string::npos)
        << got.status().message();
    EXPECT_NE(got.status().message().find(what), std::string::npos) << got.status().message();
    ASSERT_ERROR_CODE(warehouse->List(), kCorruption);
  }
}

}  // namespace
}  // namespace basin::catalog
