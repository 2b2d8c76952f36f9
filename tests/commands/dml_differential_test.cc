// Random DELETE / UPDATE / MERGE / append sequences applied to a Delta table with deletion
// vectors, one with copy-on-write, and a plain DuckDB table running the same SQL natively;
// after every step all three must hold the same rows. The seed is printed; set
// BASIN_DML_SEED to replay a run.
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>

#include "commands/dml.h"
#include "commands/dml_test_util.h"
#include "testing/interop.h"

namespace basin::commands {
namespace {

using testing::Column;
using testing::DmlFixture;

class Generator {
 public:
  explicit Generator(uint64_t seed) : rng_(seed) {}

  int Int(int low, int high) { return std::uniform_int_distribution<int>(low, high)(rng_); }
  bool Chance(int percent) { return Int(1, 100) <= percent; }

  // A condition on the target's columns, qualified with `q` ("" or "t.").
  std::string Predicate(const std::string& q, int depth = 0) {
    if (depth < 1 && Chance(30)) {
      return "(" + Predicate(q, depth + 1) + (Chance(50) ? " AND " : " OR ") + Predicate(q, depth + 1) + ")";
    }
    switch (Int(0, 4)) {
      case 0:
        return q + "id % " + std::to_string(Int(2, 7)) + " = " + std::to_string(Int(0, 1));
      case 1:
        return q + "k = " + std::to_string(Int(0, 3));
      case 2:
        return q + "n < " + std::to_string(Int(0, 17));
      case 3:
        return q + "v LIKE '%" + std::to_string(Int(0, 9)) + "%'";
      default:
        return q + "n IS NULL";
    }
  }

 private:
  std::mt19937_64 rng_;
};

uint64_t Seed() {
  if (const char* text = std::getenv("BASIN_DML_SEED")) return std::strtoull(text, nullptr, 10);
  return std::random_device{}();
}

std::string Rows(int64_t from, int64_t to) {
  return "SELECT range AS id, CAST(range % 4 AS INTEGER) AS k, 'v' || range AS v, "
         "CASE WHEN range % 11 = 0 THEN NULL ELSE CAST(range % 17 AS INTEGER) END AS n FROM range(" +
         std::to_string(from) + ", " + std::to_string(to) + ")";
}

TEST(DmlDifferentialTest, RandomSequencesAgreeWithDuckDb) {
  const uint64_t seed = Seed();
  std::cout << "[dml differential] seed " << seed << " (BASIN_DML_SEED=" << seed << " replays it)\n";
  Generator gen(seed);
  DmlFixture f;
  const std::vector<Column> columns = {{"id", "long"}, {"k", "integer"}, {"v", "string"}, {"n", "integer"}};
  ASSERT_OK(f.Create("dv", columns, {"k"}, {{"delta.enableDeletionVectors", "true"}}));
  ASSERT_OK(f.Create("cow", columns, {"k"}));
  ASSERT_OK(f.conn().Execute("CREATE TABLE duck (id BIGINT, k INTEGER, v VARCHAR, n INTEGER)"));
  int64_t next_id = 0;
  auto append = [&](int64_t count) -> Status {
    const std::string rows = Rows(next_id, next_id + count);
    next_id += count;
    RETURN_IF_ERROR(f.Append("dv", rows));
    RETURN_IF_ERROR(f.Append("cow", rows));
    return f.conn().Execute("INSERT INTO duck " + rows);
  };
  for (int i = 0; i < 4; i++) ASSERT_OK(append(50));

  std::vector<std::string> log;
  for (int step = 0; step < 24; step++) {
    std::string sql;
    std::function<Result<CommandResult>(std::shared_ptr<const delta::Snapshot>)> run;
    switch (gen.Int(0, 3)) {
      case 0: {
        DeleteRequest request;
        request.where = gen.Predicate("");
        sql = "DELETE FROM duck WHERE " + request.where;
        run = [&f, request](auto snapshot) { return Delete(f.Context(), snapshot, request); };
        break;
      }
      case 1: {
        UpdateRequest request;
        request.assignments = {{"n", "n + " + std::to_string(gen.Int(1, 5))}, {"v", "v || 'u'"}};
        if (gen.Chance(40)) request.assignments.emplace_back("k", "(k + 1) % 4");
        request.where = gen.Predicate("");
        sql = "UPDATE duck SET ";
        for (size_t i = 0; i < request.assignments.size(); i++) {
          sql += (i > 0 ? ", " : "") + request.assignments[i].first + " = " + request.assignments[i].second;
        }
        sql += " WHERE " + request.where;
        run = [&f, request](auto snapshot) { return Update(f.Context(), snapshot, request); };
        break;
      }
      case 2: {
        MergeRequest request;
        request.source_sql =
            "SELECT id, CAST(id % 4 AS INTEGER) AS k, 's' || id AS v, CAST(id % 13 AS INTEGER) AS n "
            "FROM (SELECT DISTINCT (range * " +
            std::to_string(gen.Int(1, 5)) + " + " + std::to_string(gen.Int(0, 40)) + ") % " +
            std::to_string(next_id + 20) + " AS id FROM range(" + std::to_string(gen.Int(1, 60)) + "))";
        request.source_alias = "s";
        request.target_alias = "t";
        request.on = "t.id = s.id";
        std::string clauses;
        using K = MergeClause::Kind;
        auto add = [&](K kind, std::string condition, std::string action_sql,
                       std::vector<Assignment> assignments, bool insert) {
          MergeClause clause;
          clause.kind = kind;
          clause.condition = condition;
          clause.assignments = std::move(assignments);
          if (insert) {
            clause.insert_columns = {"id", "k", "v", "n"};
            clause.insert_values = {"s.id", "s.k", "s.v", "s.n"};
          }
          request.clauses.push_back(clause);
          const char* when = kind == K::kMatchedUpdate || kind == K::kMatchedDelete ? "MATCHED"
                             : kind == K::kNotMatchedInsert                         ? "NOT MATCHED"
                                                                                    : "NOT MATCHED BY SOURCE";
          clauses += std::string(" WHEN ") + when + (condition.empty() ? "" : " AND " + condition) +
                     " THEN " + action_sql;
        };
        if (gen.Chance(50)) add(K::kMatchedDelete, "s.n % 2 = 0", "DELETE", {}, false);
        if (gen.Chance(40))
          add(K::kMatchedUpdate, "t.n < 8", "UPDATE SET n = s.n + 100", {{"n", "s.n + 100"}}, false);
        if (gen.Chance(70))
          add(K::kMatchedUpdate, "", "UPDATE SET n = s.n, v = t.v || 'm'",
              {{"n", "s.n"}, {"v", "t.v || 'm'"}}, false);
        if (gen.Chance(70)) {
          add(K::kNotMatchedInsert, gen.Chance(50) ? "s.n < 6" : "",
              "INSERT (id, k, v, n) VALUES (s.id, s.k, s.v, s.n)", {}, true);
        }
        if (gen.Chance(30)) {
          if (gen.Chance(50)) {
            add(K::kNotMatchedBySourceDelete, gen.Predicate("t."), "DELETE", {}, false);
          } else {
            add(K::kNotMatchedBySourceUpdate, gen.Predicate("t."), "UPDATE SET n = t.n + 1000",
                {{"n", "t.n + 1000"}}, false);
          }
        }
        if (request.clauses.empty()) add(K::kMatchedDelete, "", "DELETE", {}, false);
        sql = "MERGE INTO duck AS t USING (" + request.source_sql + ") AS s ON t.id = s.id" + clauses;
        run = [&f, request](auto snapshot) { return Merge(f.Context(), snapshot, request); };
        break;
      }
      default: {
        int64_t count = gen.Int(1, 30);
        sql = "append " + std::to_string(count);
        log.push_back(sql);
        ASSERT_OK(append(count));
        continue;
      }
    }
    log.push_back(sql);
    std::string trail;
    for (const std::string& line : log) trail += "\n  " + line;
    SCOPED_TRACE("seed " + std::to_string(seed) + ", step " + std::to_string(step) + ":" + trail);
    ASSERT_OK(f.conn().Execute(sql));
    for (const char* table : {"dv", "cow"}) {
      ASSERT_OK_AND_ASSIGN(auto snapshot, f.Load(table));
      ASSERT_OK(run(snapshot).status());
      ASSERT_OK_AND_ASSIGN(std::string scan, f.ScanSql(table));
      ASSERT_OK_AND_ASSIGN(int64_t difference, f.Difference(scan, "duck"));
      ASSERT_EQ(difference, 0) << table << " differs from DuckDB";
    }
  }
  ASSERT_OK_AND_ASSIGN(auto counted, f.conn().Query("SELECT count(*) FROM duck"));
  const int64_t live = std::stoll(counted.at(0, 0).value_or("0"));
  ASSERT_INTEROP(f.Root("dv"), live);
  ASSERT_INTEROP(f.Root("cow"), live);
}

}  // namespace
}  // namespace basin::commands
