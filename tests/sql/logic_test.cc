// Runs every tests/sql/**/*.test file (docs/sqllogictest.md) as one test case, each on its
// own fresh warehouse folder, and prints a closing summary. Also checks that the runner
// catches what it claims to catch, so a file that passes means something.
#include <gtest/gtest.h>

#include <cctype>
#include <iostream>

#include "basin/object_store.h"
#include "testing/interop.h"
#include "testing/sqllogictest.h"
#include "testing/test_util.h"

namespace basin::testing::slt {
namespace {

namespace fs = std::filesystem;

struct Summary {
  size_t files = 0, files_failed = 0, files_skipped = 0;
  size_t records = 0, failures = 0;
};

Summary& TotalSummary() {
  static Summary summary;
  return summary;
}

class SummaryPrinter : public ::testing::Environment {
 public:
  void TearDown() override {
    const Summary& s = TotalSummary();
    if (s.files == 0) return;
    std::cout << "[sqllogictest] " << s.files << " file(s): " << s.files - s.files_failed - s.files_skipped
              << " passed, " << s.files_failed << " failed, " << s.files_skipped << " skipped; " << s.records
              << " record(s) run, " << s.failures << " failure(s)" << std::endl;
  }
};

const auto* const kSummaryPrinter = ::testing::AddGlobalTestEnvironment(new SummaryPrinter);

// Runs the file at `path` on the warehouse at `warehouse_dir`, adding to the summary.
void RunFile(const fs::path& path, const std::string& warehouse_dir) {
  const std::string name = fs::relative(path, SqlTestRoot().parent_path().parent_path()).string();
  Summary& summary = TotalSummary();
  summary.files++;
  ASSERT_OK_AND_ASSIGN(Script script, ParseScriptFile(path, name));
  RunOptions options;
  options.warehouse_dir = warehouse_dir;
  options.testdata = SharedTestDataDir();
  RunReport report = RunScript(script, options);
  summary.records += report.records_run;
  summary.failures += report.failures.size();
  for (const std::string& failure : report.failures) ADD_FAILURE() << failure;
  if (!report.failures.empty()) summary.files_failed++;
  if (report.skip_reason) {
    summary.files_skipped++;
    GTEST_SKIP() << *report.skip_reason;
  }
}

class LogicTest : public ::testing::TestWithParam<fs::path> {};

TEST_P(LogicTest, Passes) {
  TempDir warehouse;
  RunFile(GetParam(), warehouse.path().string());
  if (HasFailure() || IsSkipped()) return;
  // Every Delta table the file left in its warehouse must read the same to independent
  // readers (hyparquet, DuckDB's node bindings): row counts and stats of every file.
  std::vector<fs::path> tables;
  for (const auto& entry : fs::recursive_directory_iterator(warehouse.path())) {
    if (entry.is_directory() && entry.path().filename() == "_delta_log")
      tables.push_back(entry.path().parent_path());
  }
  if (tables.empty()) return;
  SKIP_OR_FAIL_WITHOUT_INTEROP();
  for (const fs::path& table : tables) {
    Status interop = CheckInterop(table.string());
    EXPECT_TRUE(interop.ok()) << GetParam().filename().string() << ": table "
                              << fs::relative(table, warehouse.path()).string()
                              << " fails the interop check: " << interop.ToString();
  }
}

// The same files on a warehouse in memory: every table, catalog and checkpoint access goes
// through the object store, so nothing may assume a local folder.
class LogicTestInMemory : public ::testing::TestWithParam<fs::path> {};

TEST_P(LogicTestInMemory, Passes) {
  static int warehouses = 0;
  const std::string name = "slt-" + std::to_string(++warehouses);
  RunFile(GetParam(), std::string(kMemoryStoreScheme) + name);
  ForgetNamedMemoryStore(name);
}

std::string CaseName(const ::testing::TestParamInfo<fs::path>& info) {
  std::string name = fs::relative(info.param, SqlTestRoot()).replace_extension().string();
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Files, LogicTest, ::testing::ValuesIn(FindTestFiles(SqlTestRoot())), CaseName);
INSTANTIATE_TEST_SUITE_P(Files, LogicTestInMemory, ::testing::ValuesIn(FindTestFiles(SqlTestRoot())),
                         CaseName);

// The runner on inline scripts.
class RunnerTest : public ::testing::Test {
 protected:
  RunReport Run(const std::string& text) {
    auto script = ParseScript(text, "inline.test");
    EXPECT_TRUE(script.ok()) << script.status().ToString();
    if (!script.ok()) return {};
    RunOptions options;
    options.warehouse_dir = warehouse_.path();
    options.testdata = SharedTestDataDir();
    return RunScript(*script, options);
  }

  // Asserts exactly one failure, reported at `line`, whose text holds `what`.
  void ExpectOneFailure(const std::string& text, int line, const std::string& what) {
    RunReport report = Run(text);
    ASSERT_EQ(report.failures.size(), 1u) << text;
    EXPECT_EQ(report.failures[0].rfind("inline.test:" + std::to_string(line) + ":", 0), 0u)
        << report.failures[0];
    EXPECT_NE(report.failures[0].find(what), std::string::npos) << report.failures[0];
  }

  TempDir warehouse_;
};

// A memory:// warehouse keeps its catalog, logs and data files in the named store, and the
// script's reads of ${WAREHOUSE} paths (glob, read_ndjson_objects) find them there.
TEST(LogicTestInMemoryStore, TablesLiveInTheNamedStore) {
  ASSERT_OK_AND_ASSIGN(Script script,
                       ParseScript("statement ok\n"
                                   "CREATE TABLE t AS SELECT 1 AS x\n"
                                   "\n"
                                   "query I\n"
                                   "SELECT count(*) FROM glob('${WAREHOUSE}/default/t/*.parquet')\n"
                                   "----\n"
                                   "1\n",
                                   "memory.test"));
  RunOptions options;
  options.warehouse_dir = std::string(kMemoryStoreScheme) + "runner-check";
  RunReport report = RunScript(script, options);
  EXPECT_TRUE(report.failures.empty()) << report.failures.at(0);
  std::shared_ptr<ObjectStore> store = NamedMemoryStore("runner-check");
  ASSERT_OK_AND_ASSIGN(bool entry, store->HasObjectsWithPrefix("_basin_catalog/default/t.json"));
  EXPECT_TRUE(entry);
  ASSERT_OK_AND_ASSIGN(bool log, store->HasObjectsWithPrefix("default/t/_delta_log/"));
  EXPECT_TRUE(log);
  ForgetNamedMemoryStore("runner-check");
}

TEST_F(RunnerTest, PassingScriptHasNoFailures) {
  RunReport report =
      Run("# a comment\n"
          "statement ok\n"
          "CREATE TABLE t AS SELECT * FROM (VALUES (1, 'a b', NULL), (2, '', 'x')) v(i, s, n)\n"
          "\n"
          "query ITT\n"
          "SELECT * FROM t ORDER BY i\n"
          "----\n"
          "1\ta b\tNULL\n"
          "2\t(empty)\tx\n"
          "\n"
          "query IR rowsort\n"
          "SELECT i, i / 2 FROM t\n"
          "----\n"
          "2   1.0\n"
          "1   0.5\n"
          "\n"
          "query I valuesort\n"
          "SELECT i FROM t UNION ALL SELECT 7\n"
          "----\n"
          "7\n"
          "2\n"
          "1\n"
          "\n"
          "query I\n"
          "SELECT i FROM t WHERE i > 5\n"
          "\n"
          "statement error NotFound\n"
          "SELECT * FROM no_such_table\n"
          "----\n"
          "no_such_table\n");
  EXPECT_TRUE(report.failures.empty()) << report.failures[0];
  EXPECT_EQ(report.records_run, 6u);
}

TEST_F(RunnerTest, WrongValueIsReportedWithBothResults) {
  ExpectOneFailure("query II\nSELECT 1, 2\n----\n1\t3\n", 1, "expected:\n  1\t3\nactual:\n  1\t2");
}

TEST_F(RunnerTest, RowOrderCountsUnlessSorted) {
  const std::string sql = "SELECT * FROM (VALUES (1), (2)) v(i) ORDER BY i DESC\n----\n1\n2\n";
  ExpectOneFailure("query I\n" + sql, 1, "first difference at row 1");
  EXPECT_TRUE(Run("query I rowsort\n" + sql).failures.empty());
}

TEST_F(RunnerTest, MissingAndExtraRowsFail) {
  ExpectOneFailure("query I\nSELECT 1\n", 1, "expected 0 row(s), got 1");
  ExpectOneFailure("query I\nSELECT 1\n----\n1\n1\n", 1, "expected 2 row(s), got 1");
}

TEST_F(RunnerTest, ColumnCountAndTypesAreChecked) {
  ExpectOneFailure("query I\nSELECT 1, 2\n----\n1\t2\n", 1, "declares 1 column(s)");
  ExpectOneFailure("query I\nSELECT 'x'\n----\nx\n", 1, "is VARCHAR, declared 'I'");
  ExpectOneFailure("query R\nSELECT 1\n----\n1\n", 1, "is INTEGER, declared 'R'");
  ExpectOneFailure("query II\nSELECT 1, 2\n----\n1\n", 1, "expected row 1 has 1 value(s)");
}

TEST_F(RunnerTest, ErrorCodesAndMessagesAreChecked) {
  ExpectOneFailure("statement ok\nSELECT * FROM missing\n", 1, "statement failed: NotFound");
  ExpectOneFailure("statement error\nSELECT 1\n", 1, "expected an error but the statement succeeded");
  ExpectOneFailure("statement error InvalidArgument\nSELECT * FROM missing\n", 1,
                   "expected InvalidArgument, got NotFound");
  ExpectOneFailure("statement error NotFound\nSELECT * FROM missing\n----\nsome other text\n", 1,
                   "does not contain the expected text");
}

TEST_F(RunnerTest, RestartOpensANewSessionOnTheSameWarehouse) {
  RunReport report =
      Run("statement ok\n"
          "CREATE TEMP TABLE t AS SELECT 1\n"
          "\n"
          "statement ok\n"
          "COPY (SELECT 42 AS x) TO '${WAREHOUSE}/kept.parquet'\n"
          "\n"
          "restart\n"
          "\n"
          "statement error NotFound\n"
          "SELECT * FROM t\n"
          "\n"
          "query I\n"
          "SELECT x FROM read_parquet('${WAREHOUSE}/kept.parquet')\n"
          "----\n"
          "42\n");
  EXPECT_TRUE(report.failures.empty()) << report.failures[0];
}

TEST_F(RunnerTest, LoopsExpandAndNameTheIteration) {
  RunReport report =
      Run("loop i 0 3\n"
          "\n"
          "query I\n"
          "SELECT ${i} WHERE ${i} <> 1\n"
          "----\n"
          "${i}\n"
          "\n"
          "endloop\n");
  ASSERT_EQ(report.records_run, 3u);
  ASSERT_EQ(report.failures.size(), 1u);
  EXPECT_EQ(report.failures[0].rfind("inline.test:3 (i=1): wrong query result", 0), 0u) << report.failures[0];
}

TEST_F(RunnerTest, UnknownVariableFails) {
  ExpectOneFailure("statement ok\nSELECT '${NOPE}'\n", 1, "${NOPE}");
}

TEST_F(RunnerTest, RequireSkipsWithoutTestdata) {
  auto script = ParseScript("require testdata\n\nstatement ok\nSELECT 1\n", "inline.test");
  ASSERT_OK(script.status());
  RunOptions options;
  options.warehouse_dir = warehouse_.path();
  RunReport report = RunScript(*script, options);
  ASSERT_TRUE(report.skip_reason.has_value());
  EXPECT_NE(report.skip_reason->find("inline.test:1"), std::string::npos) << *report.skip_reason;
  EXPECT_EQ(report.records_run, 0u);
}

TEST(ParserTest, MalformedRecordsNameTheLine) {
  const char* const kBad[] = {
      "query X\nSELECT 1\n", "statement error Nonsense\nSELECT 1\n",
      "query I\n----\n1\n",  "statement ok\nSELECT 1\n----\n1\n",
      "loop i 0\n",          "loop i 0 2\n\nstatement ok\nSELECT 1\n",
      "endloop\n",           "require network\n",
      "restart\nSELECT 1\n", "query I sometimes\nSELECT 1\n",
      "frobnicate\n",
  };
  for (const char* text : kBad) {
    auto script = ParseScript(std::string("\n") + text, "bad.test");
    ASSERT_EQ(script.status().code(), ErrorCode::kInvalidArgument) << text;
    EXPECT_EQ(script.status().message().rfind("bad.test:2: ", 0), 0u) << script.status().message();
  }
}

}  // namespace
}  // namespace basin::testing::slt
