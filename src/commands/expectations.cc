#include "commands/expectations.h"

#include <algorithm>
#include <charconv>
#include <initializer_list>

#include "common/strings.h"

namespace basin::commands {
namespace {

// SQL: whether a row fails `rule`.
std::string Fails(const Expectation& rule) { return "NOT COALESCE((" + rule.condition + "), FALSE)"; }

// SQL: whether a row fails one of the rules whose action is one of `actions`; "" for none.
std::string FailsAny(const std::vector<Expectation>& rules,
                     std::initializer_list<Expectation::Action> actions) {
  std::string any;
  for (const Expectation& rule : rules) {
    if (std::find(actions.begin(), actions.end(), rule.action) == actions.end()) continue;
    any += (any.empty() ? "" : " OR ") + Fails(rule);
  }
  return any;
}

int64_t Count(const std::optional<std::string>& cell) {
  int64_t value = 0;
  if (cell) std::from_chars(cell->data(), cell->data() + cell->size(), value);
  return value;
}

}  // namespace

Result<std::string> ApplyExpectations(engine::Connection& conn, const TableExpectations& expectations,
                                      const std::string& rows_table,
                                      const std::optional<delta::SetTransaction>& txn) {
  const std::vector<Expectation>& rules = expectations.rules;
  if (rules.empty()) return "SELECT * FROM " + rows_table;
  const std::string quarantined = FailsAny(rules, {Expectation::Action::kQuarantine});
  // One pass counts the rows, the failures of every rule, and the rows quarantined.
  std::string counts = "SELECT count(*)";
  for (const Expectation& rule : rules) counts += ", count(*) FILTER (WHERE " + Fails(rule) + ")";
  counts += ", count(*) FILTER (WHERE " + (quarantined.empty() ? std::string("FALSE") : quarantined) + ")";
  Result<engine::QueryResult> counted = conn.Query(counts + " FROM " + rows_table);
  if (!counted.ok()) {
    std::string names;
    for (const Expectation& rule : rules) names += (names.empty() ? "" : ", ") + rule.name;
    return counted.status().WithContext("checking the expectations " + names);
  }
  const int64_t rows = Count(counted->at(0, 0));
  std::vector<int64_t> failed;
  for (size_t i = 0; i < rules.size(); i++) failed.push_back(Count(counted->at(0, i + 1)));
  for (size_t i = 0; i < rules.size(); i++) {
    const Expectation& rule = rules[i];
    if (rule.action != Expectation::Action::kFailUpdate || failed[i] == 0) continue;
    ASSIGN_OR_RETURN(engine::QueryResult first,
                     conn.Query("SELECT CAST(to_json(__basin_row) AS VARCHAR) FROM " + rows_table +
                                " AS __basin_row WHERE " + Fails(rule) + " LIMIT 1"));
    return Status::InvalidArgument("expectation " + rule.name + " (" + rule.condition + ") failed on " +
                                   std::to_string(failed[i]) + " of " + std::to_string(rows) +
                                   " row(s), and it is ON VIOLATION FAIL UPDATE: the update commits nothing; "
                                   "the first: " +
                                   first.at(0, 0).value_or("?"));
  }
  if (expectations.counted) RETURN_IF_ERROR(expectations.counted(failed, rows, txn));

  {
    if (const int64_t n = Count(counted->at(0, rules.size() + 1)); n > 0) {
      if (!expectations.quarantine) return Status::Internal("expectations with QUARANTINE but no quarantine");
      std::string names;
      for (const Expectation& rule : rules) {
        names += std::string(names.empty() ? "" : ", ") + "CASE WHEN " + Fails(rule) + " THEN " +
                 QuoteLiteral(rule.name) + " END";
      }
      RETURN_IF_ERROR(expectations.quarantine("SELECT *, list_filter([" + names +
                                                  "], __basin_name -> __basin_name IS NOT NULL) AS "
                                                  "failed_expectations FROM " +
                                                  rows_table + " WHERE " + quarantined,
                                              n, txn));
    }
  }
  const std::string removed =
      FailsAny(rules, {Expectation::Action::kDropRow, Expectation::Action::kQuarantine});
  return "SELECT * FROM " + rows_table + (removed.empty() ? "" : " WHERE NOT (" + removed + ")");
}

}  // namespace basin::commands
