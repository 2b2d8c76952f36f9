// A reference model of AUTO CDC (stream/cdc.h) for tests: random change streams, and the
// tables SCD type 1 and type 2 make of them, computed by applying every change in sequence
// order, one at a time. Tests compare it with what Basin made of the same changes sent in
// another order over several runs.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace basin::pipeline {

// One change of a table (id BIGINT, name VARCHAR, op VARCHAR, seq BIGINT).
struct Change {
  int64_t id = 0;
  std::optional<std::string> name;
  bool deletes = false;
  int64_t seq = 0;
};

// `count` changes of `keys` keys with distinct sequences, a fifth of them deletes, names
// from a small set (so that an upsert often repeats the row), some sent twice, all in a
// random order.
inline std::vector<Change> RandomChanges(std::mt19937_64& rng, int64_t keys, int64_t count) {
  std::vector<Change> changes;
  std::uniform_int_distribution<int64_t> key(1, keys);
  std::uniform_int_distribution<int> percent(0, 99);
  const char* names[] = {"a", "b", "c"};
  for (int64_t seq = 1; seq <= count; seq++) {
    Change change{key(rng), std::nullopt, percent(rng) < 20, seq};
    const int pick = percent(rng);
    if (!change.deletes && pick >= 10) change.name = names[pick % 3];
    changes.push_back(change);
    if (percent(rng) < 10) changes.push_back(change);  // a duplicate
  }
  std::shuffle(changes.begin(), changes.end(), rng);
  return changes;
}

// The changes as rows of a VALUES list.
inline std::string ChangeValues(const std::vector<Change>& changes) {
  std::string values;
  for (const Change& c : changes) {
    values += std::string(values.empty() ? "" : ", ") + "(" + std::to_string(c.id) + ", " +
              (c.name ? "'" + *c.name + "'" : "NULL") + ", '" + (c.deletes ? "DELETE" : "UPSERT") + "', " +
              std::to_string(c.seq) + ")";
  }
  return values;
}

// Every key's changes, in sequence order, once each.
inline std::map<int64_t, std::vector<Change>> ByKeyInOrder(std::vector<Change> changes) {
  std::sort(changes.begin(), changes.end(), [](const Change& a, const Change& b) { return a.seq < b.seq; });
  std::map<int64_t, std::vector<Change>> out;
  int64_t last = -1;
  for (const Change& change : changes) {
    if (change.seq != last) out[change.id].push_back(change);
    last = change.seq;
  }
  return out;
}

inline std::string Text(const std::optional<std::string>& value) { return value.value_or("NULL"); }

// SCD type 1: "id=name;" for each key present, by id.
inline std::string ModelType1(const std::vector<Change>& changes) {
  std::string out;
  for (const auto& [id, ordered] : ByKeyInOrder(changes)) {
    if (!ordered.back().deletes) out += std::to_string(id) + "=" + Text(ordered.back().name) + ";";
  }
  return out;
}

// SCD type 2: "id=name@start-end;" for each version, by id and start ("-" for the current).
inline std::string ModelType2(const std::vector<Change>& changes) {
  std::string out;
  for (const auto& [id, ordered] : ByKeyInOrder(changes)) {
    std::optional<Change> open;  // the current version's first change
    auto close = [&](const std::string& end) {
      out += std::to_string(id) + "=" + Text(open->name) + "@" + std::to_string(open->seq) + "-" + end + ";";
      open.reset();
    };
    for (const Change& change : ordered) {
      if (change.deletes) {
        if (open) close(std::to_string(change.seq));
        continue;
      }
      if (open && open->name == change.name) continue;  // the same row again: the version goes on
      if (open) close(std::to_string(change.seq));
      open = change;
    }
    if (open) close("");
  }
  return out;
}

// Query results as the models print them: rows of (id, name) or (id, name, start, end).
inline std::string Printed(const std::vector<std::vector<std::optional<std::string>>>& rows) {
  std::string out;
  for (const auto& row : rows) {
    out += Text(row.at(0)) + "=" + Text(row.at(1));
    if (row.size() == 4) out += "@" + Text(row[2]) + "-" + row[3].value_or("");
    out += ";";
  }
  return out;
}

}  // namespace basin::pipeline
