// Random DELETE / UPDATE / MERGE / INSERT statements, with randomly drawn expressions in
// every clause (CASE, scalar and IN subqueries, EXISTS, lambdas, string functions, nested
// comments, quoted identifiers, dollar-quoted strings), run through a session twice: once on
// a warehouse Delta table and once on a DuckDB table of the same rows, the statement text
// differing only in the target's name. After every statement both tables must hold the
// same rows, or both statements must have failed. The seed is printed; set BASIN_SQL_SEED
// to replay a run, BASIN_SQL_STEPS to run longer.
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "sql/session.h"
#include "testing/test_util.h"

namespace basin::sql {
namespace {

class ExpressionGenerator {
 public:
  explicit ExpressionGenerator(uint64_t seed) : rng_(seed) {}

  int Int(int low, int high) { return std::uniform_int_distribution<int>(low, high)(rng_); }
  bool Chance(int percent) { return Int(1, 100) <= percent; }
  template <typename T>
  const T& Pick(const std::vector<T>& items) {
    return items[static_cast<size_t>(Int(0, static_cast<int>(items.size()) - 1))];
  }

  // A comment, sometimes, between tokens: DuckDB nests block comments.
  std::string Gap() {
    switch (Int(0, 9)) {
      case 0:
        return " /* it's a /* nested */ comment; */ ";
      case 1:
        return " -- line comment; with a quote '\n";
      default:
        return " ";
    }
  }

  // While set, expressions hold no subqueries: DuckDB's own MERGE cannot bind correlated
  // subqueries in its WHEN clauses (an internal error in 1.4), and it is the peer these
  // statements are checked against. Basin's MERGE takes them (tests/sql/dml/syntax.test).
  bool no_subqueries = false;

  // An integer expression over the columns of `q` (an alias, "x" or "s").
  std::string Int(const std::string& q, int depth = 0) {
    int choice = depth >= 3 ? Int(0, 2) : Int(0, 11);
    if (no_subqueries && choice == 5) choice = 0;
    switch (choice) {
      case 0:
        return q + ".id";
      case 1:
        return "coalesce(" + q + ".n, " + std::to_string(Int(0, 9)) + ")";
      case 2:
        return std::to_string(Int(-5, 20));
      case 3:
        return "(" + Int(q, depth + 1) + Gap() + Pick<std::string>({"+", "-", "*"}) + Gap() + Int(q, depth + 1) +
               ") % 1000";
      case 4:
        return "CASE WHEN " + Bool(q, depth + 1) + " THEN " + Int(q, depth + 1) + " ELSE " + Int(q, depth + 1) +
               " END";
      case 5:
        return "(SELECT coalesce(max(o.w), 0) FROM other AS o WHERE o.id < " + q + ".id)";
      case 6:
        return "length(" + Str(q, depth + 1) + ")";
      case 7:
        return "list_sum(list_transform([1, 2, 3], e -> e * coalesce(" + q + ".n, 1))) % 100";
      case 8:
        return "abs(" + Int(q, depth + 1) + ")";
      case 9:
        return "CAST(\"" + q + "\".\"k\" AS INTEGER)";
      case 10:
        return "greatest(" + Int(q, depth + 1) + ", " + Int(q, depth + 1) + ")";
      default:
        return "CASE " + q + ".k WHEN 0 THEN 10 WHEN 1 THEN 11 ELSE " + Int(q, depth + 1) + " END";
    }
  }

  std::string Str(const std::string& q, int depth = 0) {
    const int choice = depth >= 3 ? Int(0, 1) : Int(0, 6);
    switch (choice) {
      case 0:
        return q + ".v";
      case 1:
        return Pick<std::string>({"'a'", "'it''s'", "$$semi;colon$$", "$tag$x'y$tag$", "''"});
      case 2:
        return "(" + Str(q, depth + 1) + " || " + Str(q, depth + 1) + ")";
      case 3:
        return "upper(" + Str(q, depth + 1) + ")";
      case 4:
        return "CASE WHEN " + Bool(q, depth + 1) + " THEN " + Str(q, depth + 1) + " ELSE 'z' END";
      case 5:
        return "left(" + Str(q, depth + 1) + ", 6)";
      default:
        return "CAST(" + Int(q, depth + 1) + " AS VARCHAR)";
    }
  }

  std::string Bool(const std::string& q, int depth = 0) {
    int choice = depth >= 3 ? Int(0, 2) : Int(0, 10);
    if (no_subqueries && (choice == 5 || choice == 6)) choice = 2;
    switch (choice) {
      case 0:
        return Int(q, depth + 1) + Gap() + Pick<std::string>({"=", "<>", "<", "<=", ">", ">="}) + Gap() +
               Int(q, depth + 1);
      case 1:
        return q + ".n IS NULL";
      case 2:
        return q + ".id % " + std::to_string(Int(2, 7)) + " = " + std::to_string(Int(0, 1));
      case 3:
        return "(" + Bool(q, depth + 1) + Pick<std::string>({" AND ", " OR "}) + Bool(q, depth + 1) + ")";
      case 4:
        return "NOT (" + Bool(q, depth + 1) + ")";
      case 5:
        return q + ".id IN (SELECT o.id FROM other AS o WHERE o.w > " + std::to_string(Int(0, 30)) + ")";
      case 6:
        return "EXISTS (SELECT 1 FROM other AS o WHERE o.id = " + q + ".id AND o.w % 2 = 0)";
      case 7:
        return Str(q, depth + 1) + " LIKE '%" + std::to_string(Int(0, 9)) + "%'";
      case 8:
        return Int(q, depth + 1) + " BETWEEN " + std::to_string(Int(0, 10)) + " AND " + std::to_string(Int(10, 40));
      case 9:
        return q + ".k IN (" + std::to_string(Int(0, 3)) + ", " + std::to_string(Int(0, 3)) + ")";
      default:
        return "CASE WHEN " + Bool(q, depth + 1) + " THEN TRUE ELSE " + Bool(q, depth + 1) + " END";
    }
  }


  // One statement changing `{T}` (the target, aliased x).
  std::string Statement() {
    switch (Int(0, 4)) {
      case 0:
        return "DELETE FROM {T} AS x WHERE " + Bool("x");
      case 1: {
        std::string sql = "UPDATE {T} AS x SET n = " + Int("x") + ", v = " + Str("x");
        if (Chance(30)) sql += ", k = (" + Int("x") + ") % 4";
        if (Chance(85)) sql += Gap() + "WHERE " + Bool("x");
        return sql;
      }
      case 2: {
        std::string sql = "MERGE INTO {T} AS x USING (SELECT (range * " + Pick<std::string>({"1", "3", "7", "11"}) +
                          ") % 240 AS id, " +
                          "CAST(range % 4 AS INTEGER) AS k, 's' || range AS v, CAST(range % 13 AS INTEGER) AS n " +
                          "FROM range(" + std::to_string(Int(5, 40)) + ")) AS s ON x.id = s.id";
        const int clauses = Int(1, 4);
        bool unconditional_matched = false;
        no_subqueries = true;
        for (int i = 0; i < clauses; i++) {
          switch (Int(0, 3)) {
            case 0:
              if (unconditional_matched) break;
              if (Chance(70)) {
                sql += " WHEN MATCHED AND " + Bool("x") + " THEN UPDATE SET n = " + Int("s") + ", v = " + Str("x");
              } else {
                sql += " WHEN MATCHED THEN UPDATE SET v = " + Str("s");
                unconditional_matched = true;
              }
              break;
            case 1:
              if (unconditional_matched) break;
              sql += " WHEN MATCHED AND " + Bool("s") + " THEN DELETE";
              break;
            case 2:
              sql += " WHEN NOT MATCHED AND " + Bool("s") + " THEN INSERT VALUES (s.id, s.k, " + Str("s") + ", " +
                     Int("s") + ")";
              break;
            default:
              sql += " WHEN NOT MATCHED BY SOURCE AND " + Bool("x") + " THEN UPDATE SET n = " + Int("x");
              break;
          }
        }
        no_subqueries = false;
        return sql;
      }
      case 3:
        return "INSERT INTO {T} SELECT 1000 + range, CAST(range % 4 AS INTEGER), " + Str("o") +
               ", CAST(o.w AS INTEGER) FROM other AS o, range(2) WHERE " + Bool("o");
      default:
        return "INSERT INTO {T} BY NAME SELECT 2000 + o.id AS id, 'n' AS v, CAST(o.w % 4 AS INTEGER) AS k FROM other "
               "AS o WHERE o.id % " +
               std::to_string(Int(3, 9)) + " = 0";
    }
  }

 private:
  std::mt19937_64 rng_;
};

uint64_t EnvOr(const char* name, uint64_t fallback) {
  if (const char* text = std::getenv(name)) return std::strtoull(text, nullptr, 10);
  return fallback;
}

std::string Replace(std::string sql, const std::string& target) {
  for (size_t at = sql.find("{T}"); at != std::string::npos; at = sql.find("{T}")) sql.replace(at, 3, target);
  return sql;
}

int64_t CountOf(Session& session, const std::string& sql) {
  auto result = session.Execute(sql);
  EXPECT_TRUE(result.ok()) << result.status().ToString() << "\n" << sql;
  if (!result.ok()) return -1;
  return std::stoll(result->back().result.at(0, 0).value_or("-1"));
}

class SqlDifferentialTest : public ::testing::TestWithParam<bool> {};

TEST_P(SqlDifferentialTest, RandomStatementsAgreeWithDuckDb) {
  const bool deletion_vectors = GetParam();
  const uint64_t seed = EnvOr("BASIN_SQL_SEED", std::random_device{}());
  const uint64_t steps = EnvOr("BASIN_SQL_STEPS", 30);
  std::cout << "[sql differential] seed " << seed << " (BASIN_SQL_SEED=" << seed << " replays it)\n";
  ExpressionGenerator gen(seed);
  testing::TempDir dir;
  SessionOptions options;
  options.warehouse_dir = dir.str();
  ASSERT_OK_AND_ASSIGN(auto session, Session::Open(options));
  const std::string properties =
      deletion_vectors ? " TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')" : "";
  ASSERT_OK(session->Execute("CREATE TABLE target (id BIGINT, k INT, v STRING, n INT) PARTITIONED BY (k)" +
                             properties)
                .status());
  ASSERT_OK(session->Execute("CREATE TEMP TABLE duck (id BIGINT, k INTEGER, v VARCHAR, n INTEGER)").status());
  // Subqueries read `other`; its columns share the target's names so any expression fits.
  ASSERT_OK(session
                ->Execute("CREATE TEMP TABLE other AS SELECT range * 3 AS id, range % 31 AS w, 'o' || range AS v, "
                          "CAST(range % 7 AS INTEGER) AS n, CAST(range % 4 AS INTEGER) AS k FROM range(80)")
                .status());
  const std::string rows =
      "SELECT range, CAST(range % 4 AS INTEGER), 'v' || range, CASE WHEN range % 11 = 0 THEN NULL ELSE CAST(range "
      "% 17 AS INTEGER) END FROM range(200)";
  ASSERT_OK(session->Execute("INSERT INTO target " + rows).status());
  ASSERT_OK(session->Execute("INSERT INTO duck " + rows).status());

  for (uint64_t step = 0; step < steps; step++) {
    const std::string statement = gen.Statement();
    SCOPED_TRACE("seed " + std::to_string(seed) + ", step " + std::to_string(step) + ":\n" + statement);
    auto basin = session->Execute(Replace(statement, "target"));
    auto duckdb = session->Execute(Replace(statement, "duck"));
    ASSERT_EQ(basin.ok(), duckdb.ok()) << "basin: " << basin.status().ToString()
                                       << "\nduckdb: " << duckdb.status().ToString();
    const int64_t differences =
        CountOf(*session, "SELECT (SELECT count(*) FROM (SELECT * FROM target EXCEPT ALL SELECT * FROM duck)) + "
                          "(SELECT count(*) FROM (SELECT * FROM duck EXCEPT ALL SELECT * FROM target))");
    ASSERT_EQ(differences, 0);
  }
  EXPECT_EQ(CountOf(*session, "SELECT count(*) FROM target"), CountOf(*session, "SELECT count(*) FROM duck"));
}

INSTANTIATE_TEST_SUITE_P(Modes, SqlDifferentialTest, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "DeletionVectors" : "CopyOnWrite"; });

}  // namespace
}  // namespace basin::sql
