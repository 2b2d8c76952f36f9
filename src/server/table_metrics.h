// The warehouse's tables as GET /metrics shows them: per table (labels schema, table) its
// version, files, small files (under a quarter of delta.targetFileSize, the target OPTIMIZE
// packs files toward), bytes, and the age of its latest commit.
//
// Per table only the figures are kept (with the table's metadata and the file of the commit
// they are at), never its snapshot, so memory grows with the number of tables, not of
// files. A scrape lists the catalog and brings each table's figures forward
// (delta/log_tail.h): an unchanged table costs a look-up of its next commit; a changed one
// reads only its new commits and adds their `add` actions' sizes and takes away their
// `remove` actions'. The table is read whole (its snapshot loaded, counted and dropped) the
// first time, and when its new commits cannot be followed: a remove without its size, a
// commit whose adds change no data and which removes nothing (files the table holds added
// again, as a writer recomputing statistics does), a change of delta.targetFileSize (small
// files are counted against it), a log cleaned up past the kept version or a table written
// anew. Tables that are dropped are forgotten at the next scrape. A file added again in a
// commit that also removes files (no writer does so) would be counted twice until the
// table is next read whole.
//
// Thread safety: Collect() may be called from any thread; scrapes run one at a time (a
// mutex of this object's own, which no statement takes).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "basin/clock.h"
#include "catalog/warehouse.h"
#include "common/metrics.h"
#include "delta/parquet_io.h"
#include "delta/snapshot.h"

namespace basin::server {

// What one table's figures are at one version.
struct TableFigures {
  int64_t version = -1;
  int64_t files = 0;
  int64_t small_files = 0;  // under a quarter of the table's target file size
  int64_t bytes = 0;
  int64_t commit_timestamp_ms = 0;
};

// The figures of `snapshot`. InvalidArgument for a delta.targetFileSize that does not parse.
Result<TableFigures> FiguresOf(const delta::Snapshot& snapshot);

class TableMetrics {
 public:
  // The tables of the warehouse at `warehouse` (a folder or "memory://<name>"); commits'
  // ages are measured on `clock`.
  TableMetrics(std::string warehouse, std::shared_ptr<const Clock> clock);
  ~TableMetrics();

  // The families basin_table_* for the tables `visible` admits (and
  // basin_table_scrape_errors: those of them left out because their log could not be read).
  // A catalog that cannot be listed gives no table series and one error. Tables not
  // admitted are neither read nor counted, and what is kept for them stays.
  std::vector<metrics::FamilySamples> Collect(const std::function<bool(const catalog::TableName&)>& visible);

  // Tables read whole since this object was made: what scrapes cost beyond following logs.
  int64_t full_reads() const;

 private:
  struct Kept {
    TableFigures figures;
    delta::Metadata metadata;               // at figures.version: its target file size, in-commit timestamps
    int64_t target_bytes = 0;               // the table's target file size
    std::optional<ObjectInfo> commit_file;  // commit figures.version's file, which the log must still hold
    std::shared_ptr<ObjectStore> store;
  };
  // `location`'s latest figures: the kept ones brought forward, else read whole.
  Result<TableFigures> Figures(const std::string& location);
  // Applies the commits after `kept`'s version to it; false (and `kept` as it was) when
  // they cannot be followed.
  Result<bool> FollowLog(const std::string& location, Kept& kept) const;

  const std::string warehouse_;
  const std::shared_ptr<const Clock> clock_;
  mutable std::mutex mutex_;  // one scrape at a time
  std::unique_ptr<delta::ParquetLogIO> log_io_;
  std::map<std::string, Kept> kept_;  // by table location; GUARDED_BY(mutex_)
  int64_t full_reads_ = 0;            // GUARDED_BY(mutex_)
};

}  // namespace basin::server
