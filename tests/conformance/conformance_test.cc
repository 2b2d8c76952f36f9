// Conformance suite: every Delta table under <testdata>/delta/<source>/<case>/ is read through
// sql::Session (`SELECT * FROM delta_scan(...)`) and checked against what its writer says it
// holds: the expected Parquet rows (delta-kernel-rs-golden, dat), otherwise the row count
// from testdata/README.md, or the error a conforming reader must raise.
//
// Rows are compared as multisets inside DuckDB: both sides become temp tables, columns are
// aligned by name (case-insensitively), each column is cast to the two types' common
// supertype, and (basin EXCEPT ALL expected) and (expected EXCEPT ALL basin) must both be
// empty with equal counts. The Comparator tests below prove the comparison itself rejects
// wrong results.
//
// Each case is its own parameterized test; a summary line "N passed, N failed" follows them.

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "basin/object_store.h"
#include "delta/snapshot.h"
#include "engine/duckdb.h"
#include "engine/parquet_log_io.h"
#include "sql/session.h"
#include "testing/test_util.h"
#include "testing/testdata_catalogue.h"

namespace basin {
namespace {

namespace fs = std::filesystem;
using engine::QuoteIdentifier;
using engine::QuoteLiteral;

// ---------------------------------------------------------------------------------------
// What the README says each case holds beyond the row counts at the latest version
// (testing::DeltaTestTables()).

// Row counts at earlier versions, from the README's case descriptions.
const std::map<std::string, std::map<int64_t, int64_t>>& TimeTravelCounts() {
  static const auto* table = new std::map<std::string, std::map<int64_t, int64_t>>{
      {"delta-kernel-rs-golden/time-travel-start-start20-start40", {{0, 10}, {1, 20}, {2, 30}}},
      {"delta-kernel-rs/compacted-log-files-table", {{15, 8}}},
      // One 10-row file re-added with a different DV per commit: 'u' at v1, inline at v3-v5.
      {"delta-kernel-rs/cdf-table-with-dv", {{0, 10}, {1, 8}, {2, 10}, {3, 6}, {4, 8}, {5, 9}, {6, 10}}},
  };
  return *table;
}

// Latest SetTransaction versions by appId, from the README.
const std::map<std::string, std::map<std::string, int64_t>>& ExpectedTransactions() {
  static const auto* table = new std::map<std::string, std::map<std::string, int64_t>>{
      {"delta-kernel-rs/app-txn-checkpoint", {{"my-app", 3}, {"my-app2", 2}}},
  };
  return *table;
}

// Rewrites of expected columns (SQL over the expected rows) where the expected data is not
// what the protocol says a reader must return.
const std::map<std::string, std::map<std::string, std::string>>& ExpectedColumnFixes() {
  static const auto* table = new std::map<std::string, std::map<std::string, std::string>>{
      // The log holds the partition value "2021-09-08 11:11:11" with no offset, which the
      // protocol reads as UTC; the Spark that wrote the expected rows read it in its session
      // time zone, America/Los_Angeles (18:11:11Z). Delta Kernel's own tests skip the column.
      {"delta-kernel-rs-golden/data-reader-partition-values",
       {{"as_timestamp", "timezone('America/Los_Angeles', as_timestamp)::TIMESTAMPTZ"}}},
  };
  return *table;
}

// ---------------------------------------------------------------------------------------
// Case discovery.

struct ConformanceCase {
  std::string source;
  std::string name;
  fs::path dir;   // <testdata>/delta/<source>/<case>
  fs::path root;  // the table root: dir/delta when it has a _delta_log, else dir

  std::string id() const { return source + "/" + name; }
};

void PrintTo(const ConformanceCase& c, std::ostream* os) { *os << c.id(); }

std::vector<ConformanceCase> DiscoverCases() {
  std::vector<ConformanceCase> cases;
  auto testdata = testing::SharedTestDataDir();
  if (!testdata || !fs::is_directory(*testdata / "delta")) return cases;
  std::error_code ec;
  for (const auto& source : fs::directory_iterator(*testdata / "delta", ec)) {
    if (!source.is_directory()) continue;
    for (const auto& entry : fs::directory_iterator(source.path(), ec)) {
      if (!entry.is_directory()) continue;
      ConformanceCase c;
      c.source = source.path().filename().string();
      c.name = entry.path().filename().string();
      c.dir = entry.path();
      c.root = testing::DeltaTableRoot(c.dir);
      cases.push_back(std::move(c));
    }
  }
  std::sort(cases.begin(), cases.end(), [](const auto& a, const auto& b) { return a.id() < b.id(); });
  return cases;
}

const std::vector<ConformanceCase>& AllCases() {
  static const auto* cases = new std::vector<ConformanceCase>(DiscoverCases());
  return *cases;
}

// ---------------------------------------------------------------------------------------
// Multiset comparison of two DuckDB tables.

// A case's checks return Status: OK passes; anything else carries the failure reason.
Status Mismatch(std::string what) { return Status::Internal(std::move(what)); }

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char ch) { return std::tolower(ch); });
  return s;
}

struct Column {
  std::string name;
  std::string type;
};

Result<std::vector<Column>> DescribeTable(engine::Connection& conn, const std::string& table) {
  ASSIGN_OR_RETURN(auto described, conn.Query("SELECT column_name, column_type FROM (DESCRIBE " +
                                              QuoteIdentifier(table) + ")"));
  std::vector<Column> columns;
  for (const auto& row : described.rows) columns.push_back({row[0].value_or(""), row[1].value_or("")});
  return columns;
}

Result<int64_t> ScalarInt(engine::Connection& conn, const std::string& sql) {
  ASSIGN_OR_RETURN(auto result, conn.Query(sql));
  if (result.row_count() != 1 || result.column_count() != 1 || !result.at(0, 0)) {
    return Mismatch("expected one integer from: " + sql);
  }
  const std::string& text = *result.at(0, 0);
  int64_t value = 0;
  auto [end, err] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (err != std::errc() || end != text.data() + text.size()) {
    return Mismatch("not an integer: '" + text + "' from: " + sql);
  }
  return value;
}

// Timestamps of any unit or zone compare as instants (the session runs in UTC), decimals by
// value at any precision; everything else must be the same type.
std::string TypeFamily(const std::string& duckdb_type) {
  static const std::regex decimal(R"(DECIMAL\(\d+,\s*\d+\))");
  static const std::regex timestamp(R"(TIMESTAMP( WITH TIME ZONE|TZ|_NS|_MS|_S)?)");
  std::string family = std::regex_replace(duckdb_type, decimal, "DECIMAL");
  family = std::regex_replace(family, timestamp, "TIMESTAMP");
  family.erase(std::remove(family.begin(), family.end(), '"'), family.end());
  return Lower(family);
}

// Casting to text first: the C API's text rendering leaves nested values NULL.
constexpr char kSampleRows[] = "SELECT CAST(COLUMNS(*) AS VARCHAR) FROM ";

std::string FormatRows(const engine::QueryResult& rows) {
  std::string out;
  for (const auto& row : rows.rows) {
    out += "\n      (";
    for (size_t c = 0; c < row.size(); c++) {
      if (c > 0) out += ", ";
      out += row[c] ? *row[c] : "NULL";
    }
    out += ")";
  }
  return out;
}

// OK iff `actual` and `expected` hold the same multiset of rows over the same column names.
Status CompareTables(engine::Connection& conn, const std::string& actual, const std::string& expected) {
  ASSIGN_OR_RETURN(auto actual_columns, DescribeTable(conn, actual));
  ASSIGN_OR_RETURN(auto expected_columns, DescribeTable(conn, expected));
  std::map<std::string, Column> actual_by_name;
  for (const auto& col : actual_columns) actual_by_name[Lower(col.name)] = col;
  std::string problems;
  std::string actual_select, expected_select;
  for (const auto& want : expected_columns) {
    auto it = actual_by_name.find(Lower(want.name));
    if (it == actual_by_name.end()) {
      problems += " missing column '" + want.name + "';";
      continue;
    }
    const Column have = it->second;
    actual_by_name.erase(it);
    if (TypeFamily(have.type) != TypeFamily(want.type)) {
      problems += " column '" + want.name + "' is " + have.type + ", expected " + want.type + ";";
      continue;
    }
    std::string actual_expr = QuoteIdentifier(have.name);
    std::string expected_expr = QuoteIdentifier(want.name);
    if (have.type != want.type) {
      // DuckDB's supertype of the two, e.g. DECIMAL(5,2) + DECIMAL(10,5) -> DECIMAL(13,5). It has
      // none for some timestamp pairs (TIMESTAMP_NS, TIMESTAMPTZ): Basin's type is used there.
      auto common = conn.Query("SELECT typeof([NULL::" + have.type + ", NULL::" + want.type + "][1])");
      const std::string target =
          common.ok() && common->row_count() == 1 && common->at(0, 0) ? *common->at(0, 0) : have.type;
      actual_expr = "CAST(" + actual_expr + " AS " + target + ")";
      expected_expr = "CAST(" + expected_expr + " AS " + target + ")";
    }
    const std::string alias = " AS " + QuoteIdentifier(want.name);
    actual_select += (actual_select.empty() ? "" : ", ") + actual_expr + alias;
    expected_select += (expected_select.empty() ? "" : ", ") + expected_expr + alias;
  }
  for (const auto& [_, extra] : actual_by_name) problems += " unexpected column '" + extra.name + "';";
  if (!problems.empty()) return Mismatch("schema differs:" + problems);
  if (expected_select.empty()) return Mismatch("expected table has no columns");

  ASSIGN_OR_RETURN(int64_t actual_rows, ScalarInt(conn, "SELECT count(*) FROM " + QuoteIdentifier(actual)));
  ASSIGN_OR_RETURN(int64_t expected_rows,
                   ScalarInt(conn, "SELECT count(*) FROM " + QuoteIdentifier(expected)));
  const std::string a = "SELECT " + actual_select + " FROM " + QuoteIdentifier(actual);
  const std::string e = "SELECT " + expected_select + " FROM " + QuoteIdentifier(expected);
  const std::string only_actual = "(" + a + " EXCEPT ALL " + e + ")";
  const std::string only_expected = "(" + e + " EXCEPT ALL " + a + ")";
  ASSIGN_OR_RETURN(int64_t extra, ScalarInt(conn, "SELECT count(*) FROM " + only_actual));
  ASSIGN_OR_RETURN(int64_t missing, ScalarInt(conn, "SELECT count(*) FROM " + only_expected));
  if (actual_rows == expected_rows && extra == 0 && missing == 0) return Status::OK();

  std::string detail = std::to_string(actual_rows) + " rows, expected " + std::to_string(expected_rows) +
                       "; " + std::to_string(extra) + " unexpected, " + std::to_string(missing) + " missing";
  if (extra > 0) {
    ASSIGN_OR_RETURN(auto sample, conn.Query(kSampleRows + only_actual + " LIMIT 3"));
    detail += "\n    unexpected:" + FormatRows(sample);
  }
  if (missing > 0) {
    ASSIGN_OR_RETURN(auto sample, conn.Query(kSampleRows + only_expected + " LIMIT 3"));
    detail += "\n    missing:" + FormatRows(sample);
  }
  return Mismatch(detail);
}

// ---------------------------------------------------------------------------------------
// Running one case.

std::string DeltaScan(const fs::path& root, std::optional<int64_t> version) {
  std::string call = "delta_scan(" + QuoteLiteral(root.string());
  if (version) call += ", version => " + std::to_string(*version);
  return call + ")";
}

std::string VersionLabel(std::optional<int64_t> version) {
  return version ? "v" + std::to_string(*version) : "latest";
}

class CaseChecker {
 public:
  static Result<CaseChecker> Open(const ConformanceCase& c) {
    ASSIGN_OR_RETURN(auto session, sql::Session::Open(sql::SessionOptions{}));
    return CaseChecker(c, std::move(session));
  }

  Status Run() {
    const auto& expectations = testing::DeltaTestTables();
    auto readme = expectations.find(c_.id());
    if (readme != expectations.end() && readme->second.error) return CheckRefused(*readme->second.error);

    bool compared = false;
    if (c_.source == "dat") {
      RETURN_IF_ERROR(CheckDatVersions());
      compared = true;
    } else if (fs::is_directory(c_.dir / "expected")) {
      RETURN_IF_ERROR(CheckGoldenExpected());
      compared = true;
    }
    if (readme != expectations.end()) {
      RETURN_IF_ERROR(CheckCount(std::nullopt, readme->second.rows));
    } else if (!compared) {
      return Mismatch("no expected data and no row count in testdata/README.md for this case");
    }
    if (auto it = TimeTravelCounts().find(c_.id()); it != TimeTravelCounts().end()) {
      for (const auto& [version, rows] : it->second) RETURN_IF_ERROR(CheckCount(version, rows));
    }
    if (auto it = ExpectedTransactions().find(c_.id()); it != ExpectedTransactions().end()) {
      RETURN_IF_ERROR(CheckTransactions(it->second));
    }
    return Status::OK();
  }

 private:
  CaseChecker(ConformanceCase c, std::unique_ptr<sql::Session> session)
      : c_(std::move(c)), session_(std::move(session)) {}

  engine::Connection& conn() { return session_->connection(); }

  Result<std::vector<sql::StatementResult>> Sql(const std::string& text) { return session_->Execute(text); }

  Status CheckRefused(ErrorCode want) {
    auto result = Sql("SELECT count(*) FROM " + DeltaScan(c_.root, std::nullopt));
    const std::string want_name(GetErrorCodeInfo(want).name);
    if (result.ok()) return Mismatch("read succeeded; expected a " + want_name + " error");
    if (result.status().code() != want) {
      return Mismatch("expected a " + want_name + " error, got " + result.status().ToString());
    }
    return Status::OK();
  }

  // count(*) (which Basin answers from the log's statistics when it can) and a count of
  // every row read and decoded (hash of the whole row) must both be `want`.
  Status CheckCount(std::optional<int64_t> version, int64_t want) {
    const std::string sql = "SELECT count(*), count(hash(t)) FROM " + DeltaScan(c_.root, version) + " AS t";
    ASSIGN_OR_RETURN(auto results, Sql(sql));
    if (results.size() != 1 || results[0].result.row_count() != 1 || !results[0].result.at(0, 0)) {
      return Mismatch("'" + sql + "' returned no count");
    }
    for (size_t column = 0; column < 2; column++) {
      const std::string text = results[0].result.at(0, column).value_or("NULL");
      if (text != std::to_string(want)) {
        return Mismatch(VersionLabel(version) + ": " + (column == 0 ? "count(*)" : "rows read") + " is " + text +
                        ", expected " + std::to_string(want));
      }
    }
    RETURN_IF_ERROR(CheckStatsCount(version, want));
    return Status::OK();
  }

  // A bare count(*) (answered from the statistics when they are exact) agrees.
  Status CheckStatsCount(std::optional<int64_t> version, int64_t want) {
    ASSIGN_OR_RETURN(auto results, Sql("SELECT count(*) FROM " + DeltaScan(c_.root, version)));
    const std::string text = results.back().result.at(0, 0).value_or("NULL");
    if (text != std::to_string(want)) {
      return Mismatch(VersionLabel(version) + ": bare count(*) is " + text + ", expected " + std::to_string(want));
    }
    return Status::OK();
  }

  // Loads Basin's rows into temp table basin_result and `files` into expected_rows, and
  // compares them.
  Status CompareWithParquet(std::optional<int64_t> version, const std::vector<fs::path>& files) {
    if (files.empty()) return Mismatch(VersionLabel(version) + ": no expected Parquet files found");
    RETURN_IF_ERROR_CTX(
        Sql("CREATE OR REPLACE TEMP TABLE basin_result AS SELECT * FROM " + DeltaScan(c_.root, version)),
        VersionLabel(version) + ": scan");
    std::string list;
    for (const auto& f : files) list += (list.empty() ? "" : ", ") + QuoteLiteral(f.string());
    RETURN_IF_ERROR_CTX(
        conn().Execute("CREATE OR REPLACE TEMP TABLE expected_rows AS SELECT * FROM read_parquet([" + list +
                       "])"),
        VersionLabel(version) + ": reading expected rows");
    if (auto fixes = ExpectedColumnFixes().find(c_.id()); fixes != ExpectedColumnFixes().end()) {
      for (const auto& [column, expr] : fixes->second) {
        RETURN_IF_ERROR_CTX(
            conn().Execute("UPDATE expected_rows SET " + QuoteIdentifier(column) + " = " + expr),
            "fixing expected column " + column);
      }
    }
    return CompareTables(conn(), "basin_result", "expected_rows").WithContext(VersionLabel(version));
  }

  // Spark's expected/ folder: part files of a full read at the latest version.
  Status CheckGoldenExpected() {
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(c_.dir / "expected")) {
      const std::string name = entry.path().filename().string();
      if (entry.is_regular_file() && name[0] != '.' && entry.path().extension() == ".parquet") {
        files.push_back(entry.path());
      }
    }
    std::sort(files.begin(), files.end());
    return CompareWithParquet(std::nullopt, files);
  }

  // DAT: expected/{latest,v0,v1,...}/table_content.parquet + table_version_metadata.json.
  Status CheckDatVersions() {
    size_t checked = 0;
    std::vector<fs::path> dirs;
    for (const auto& entry : fs::directory_iterator(c_.dir / "expected")) {
      if (entry.is_directory()) dirs.push_back(entry.path());
    }
    std::sort(dirs.begin(), dirs.end());
    for (const auto& dir : dirs) {
      const std::string label = dir.filename().string();
      std::optional<int64_t> version;
      if (label != "latest") {
        int64_t v = 0;
        auto [end, err] = std::from_chars(label.data() + 1, label.data() + label.size(), v);
        if (label[0] != 'v' || err != std::errc() || end != label.data() + label.size()) {
          return Mismatch("unexpected folder expected/" + label);
        }
        version = v;
      }
      RETURN_IF_ERROR(CompareWithParquet(version, {dir / "table_content.parquet"}));
      RETURN_IF_ERROR(CheckDatVersionMetadata(version, dir / "table_version_metadata.json"));
      checked++;
    }
    if (checked == 0) return Mismatch("no expected/<version> folders");
    return Status::OK();
  }

  Status CheckDatVersionMetadata(std::optional<int64_t> version, const fs::path& file) {
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    auto want = nlohmann::json::parse(text.str(), nullptr, false);
    if (want.is_discarded() || !want.is_object()) return Mismatch("cannot parse " + file.string());
    ASSIGN_OR_RETURN(auto snapshot, LoadAt(version));
    const std::string where = VersionLabel(version) + ": ";
    if (want.value("version", int64_t{-1}) != snapshot->version) {
      return Mismatch(where + "snapshot version " + std::to_string(snapshot->version) + ", expected " +
                      want.value("version", nlohmann::json()).dump());
    }
    if (want.value("min_reader_version", -1) != snapshot->protocol.min_reader_version ||
        want.value("min_writer_version", -1) != snapshot->protocol.min_writer_version) {
      return Mismatch(where + "protocol r" + std::to_string(snapshot->protocol.min_reader_version) + "/w" +
                      std::to_string(snapshot->protocol.min_writer_version) + ", expected r" +
                      want.value("min_reader_version", nlohmann::json()).dump() + "/w" +
                      want.value("min_writer_version", nlohmann::json()).dump());
    }
    if (want.contains("properties") && want["properties"].is_object()) {
      std::map<std::string, std::string> properties;
      for (const auto& [key, value] : want["properties"].items()) {
        properties[key] = value.is_string() ? value.get<std::string>() : value.dump();
      }
      if (properties != snapshot->metadata.configuration) return Mismatch(where + "table properties differ");
    }
    return Status::OK();
  }

  Status CheckTransactions(const std::map<std::string, int64_t>& want) {
    ASSIGN_OR_RETURN(auto snapshot, LoadAt(std::nullopt));
    for (const auto& [app_id, version] : want) {
      auto it = snapshot->set_transactions.find(app_id);
      if (it == snapshot->set_transactions.end()) return Mismatch("no txn for appId " + app_id);
      if (it->second.version != version) {
        return Mismatch("txn " + app_id + " is at " + std::to_string(it->second.version) + ", expected " +
                        std::to_string(version));
      }
    }
    return Status::OK();
  }

  Result<std::shared_ptr<delta::Snapshot>> LoadAt(std::optional<int64_t> version) {
    ASSIGN_OR_RETURN(auto store, OpenLocalObjectStore(c_.root.string()));
    delta::SnapshotOptions options;
    options.version = version;
    engine::DuckDBParquetLogIO log_io;
    return delta::LoadSnapshot(store, c_.root.string(), log_io, options);
  }

  ConformanceCase c_;
  std::unique_ptr<sql::Session> session_;
};

Status CheckCase(const ConformanceCase& c) {
  ASSIGN_OR_RETURN(auto checker, CaseChecker::Open(c));
  return checker.Run();
}

// ---------------------------------------------------------------------------------------
// Per-case tests and the summary line.

struct Tally {
  std::mutex mu;
  int passed = 0;
  int failed = 0;
};

Tally& CaseTally() {
  static auto* tally = new Tally();
  return *tally;
}

class SummaryEnvironment : public ::testing::Environment {
 public:
  void TearDown() override {
    std::lock_guard<std::mutex> lock(CaseTally().mu);
    std::printf("%d passed, %d failed\n", CaseTally().passed, CaseTally().failed);
    std::fflush(stdout);
  }
};

[[maybe_unused]] ::testing::Environment* const summary_environment =
    ::testing::AddGlobalTestEnvironment(new SummaryEnvironment);

class ConformanceCaseTest : public ::testing::TestWithParam<ConformanceCase> {};

TEST_P(ConformanceCaseTest, MatchesExpected) {
  const ConformanceCase& c = GetParam();
  Status outcome = CheckCase(c);
  {
    std::lock_guard<std::mutex> lock(CaseTally().mu);
    (outcome.ok() ? CaseTally().passed : CaseTally().failed)++;
  }
  if (outcome.ok()) {
    std::printf("PASS %s\n", c.id().c_str());
  } else {
    std::printf("FAIL %s: %s\n", c.id().c_str(), outcome.message().c_str());
  }
  std::fflush(stdout);
  EXPECT_TRUE(outcome.ok()) << c.id() << ": " << outcome.message();
}

std::string CaseTestName(const ::testing::TestParamInfo<ConformanceCase>& info) {
  std::string name = info.param.id();
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Delta, ConformanceCaseTest, ::testing::ValuesIn(AllCases()), CaseTestName);
// Without the shared test data there are no cases; TestDataIsComplete reports the skip.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ConformanceCaseTest);

// A case missing from disk would otherwise drop out of the suite silently.
TEST(Conformance, TestDataIsComplete) {
  SKIP_WITHOUT_SHARED_TESTDATA(testdata);
  std::map<std::string, bool> found;
  for (const auto& c : AllCases()) found[c.id()] = true;
  for (const auto& [id, _] : testing::DeltaTestTables()) {
    EXPECT_TRUE(found.count(id)) << id << " is listed in testdata/README.md but not under "
                                 << testdata / "delta";
  }
  EXPECT_EQ(AllCases().size(), testing::DeltaTestTables().size());
}

// ---------------------------------------------------------------------------------------
// The comparison must reject wrong results, or the suite proves nothing.

class ComparatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(auto db, engine::Database::Open());
    ASSERT_OK_AND_ASSIGN(conn_, engine::Connection::Open(db));
    ASSERT_OK(
        conn_->Execute("CREATE TABLE expected_rows AS SELECT * FROM (VALUES "
                       "(1, 'a', 1.50::DECIMAL(5,2), TIMESTAMP '2024-01-01 10:00:00', {'x': [1, 2]}), "
                       "(2, 'b', 2.25::DECIMAL(5,2), TIMESTAMP '2024-01-02 10:00:00', {'x': [3]}), "
                       "(2, 'b', 2.25::DECIMAL(5,2), TIMESTAMP '2024-01-02 10:00:00', {'x': [3]}), "
                       "(3, NULL, NULL, NULL, NULL)) t(id, s, d, ts, nested)"));
  }

  // basin_result := expected_rows transformed by `select` (a SELECT over expected_rows).
  Status Compare(const std::string& select) {
    RETURN_IF_ERROR(conn_->Execute("CREATE OR REPLACE TABLE basin_result AS " + select));
    return CompareTables(*conn_, "basin_result", "expected_rows");
  }

  std::unique_ptr<engine::Connection> conn_;
};

TEST_F(ComparatorTest, AcceptsSameRowsInAnyOrderAndEquivalentTypes) {
  EXPECT_OK(Compare("SELECT * FROM expected_rows"));
  EXPECT_OK(Compare("SELECT * FROM expected_rows ORDER BY id DESC"));
  // Upper-case names, a wider decimal, the timestamp as an instant (INT96 vs TIMESTAMPTZ).
  EXPECT_OK(
      Compare("SELECT id AS ID, s AS S, d::DECIMAL(20,10) AS d, ts::TIMESTAMPTZ AS ts, nested "
              "FROM expected_rows"));
  EXPECT_OK(Compare("SELECT nested, ts, d, s, id FROM expected_rows"));
}

TEST_F(ComparatorTest, RejectsWrongRows) {
  EXPECT_FALSE(Compare("SELECT * FROM expected_rows LIMIT 0").ok());
  EXPECT_FALSE(Compare("SELECT * FROM expected_rows WHERE id <> 3").ok());
  // Same set of distinct rows, but a duplicate lost and another added.
  EXPECT_FALSE(
      Compare("SELECT DISTINCT * FROM expected_rows UNION ALL SELECT * FROM expected_rows WHERE id = 1")
          .ok());
  EXPECT_FALSE(
      Compare("SELECT * FROM expected_rows UNION ALL SELECT * FROM expected_rows WHERE id = 3").ok());
  EXPECT_FALSE(Compare("SELECT id, s, d + 0.01 AS d, ts, nested FROM expected_rows").ok());
  EXPECT_FALSE(Compare("SELECT id, s, d, ts + INTERVAL 1 HOUR AS ts, nested FROM expected_rows").ok());
  EXPECT_FALSE(Compare("SELECT id, s, d, ts, {'x': [1]} AS nested FROM expected_rows").ok());
  EXPECT_FALSE(Compare("SELECT id, coalesce(s, '') AS s, d, ts, nested FROM expected_rows").ok());
}

TEST_F(ComparatorTest, RejectsWrongSchema) {
  EXPECT_FALSE(Compare("SELECT id, s, d, ts FROM expected_rows").ok());
  EXPECT_FALSE(Compare("SELECT *, 1 AS extra FROM expected_rows").ok());
  EXPECT_FALSE(Compare("SELECT id::VARCHAR AS id, s, d, ts, nested FROM expected_rows").ok());
  EXPECT_FALSE(Compare("SELECT id, s, d::DOUBLE AS d, ts, nested FROM expected_rows").ok());
}

}  // namespace
}  // namespace basin
