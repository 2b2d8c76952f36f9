// Rows a write leaves out and keeps, in the same pass as the rows it writes: while a
// RefusedRows lives, basin_refuse(token(), value, error) in a query adds (value, error) to it
// and is false, so that a filter `CASE WHEN <refused> THEN basin_refuse(...) ELSE TRUE END`
// lets the accepted rows through to the write and keeps the refused ones aside (a stream's
// rows that its sink's constraints refuse, for its dead-letter table), without reading the
// rows twice or staging them.
//
// Thread safety: a RefusedRows may be filled by the query's threads while its owner waits
// for the query; Take() after it.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "basin/status.h"

struct _duckdb_connection;  // NOLINT(bugprone-reserved-identifier)

namespace basin::engine {

class RefusedRows {
 public:
  RefusedRows();
  ~RefusedRows();
  RefusedRows(const RefusedRows&) = delete;
  RefusedRows& operator=(const RefusedRows&) = delete;

  // The first argument of basin_refuse that adds to this one (unique in the process).
  int64_t token() const { return token_; }

  // The (value, error) pairs added so far, in the order the query added them; clears them.
  std::vector<std::pair<std::string, std::string>> Take();

  // Called by basin_refuse.
  void Add(std::string value, std::string error);

 private:
  const int64_t token_;
  std::mutex mu_;
  std::vector<std::pair<std::string, std::string>> rows_;  // guarded by mu_
};

// Registers basin_refuse(token BIGINT, value VARCHAR, error VARCHAR) -> BOOLEAN (volatile)
// in the database of `conn`.
Status RegisterRefuseFunction(_duckdb_connection* conn);

}  // namespace basin::engine
