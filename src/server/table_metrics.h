// The warehouse's tables as GET /metrics shows them: per table (labels schema, table) its
// version, files, small files (under a quarter of delta.targetFileSize, the target OPTIMIZE
// packs files toward), bytes, and the age of its latest commit.
//
// A scrape lists the catalog and brings each table's kept snapshot forward
// (delta::UpdateSnapshot): an unchanged table costs a look-up of its next commit, and its
// figures, kept per location and version, are not computed again; a changed one reads only
// its new commits. Tables that are dropped are forgotten at the next scrape.
//
// Thread safety: Collect() may be called from any thread; scrapes run one at a time (a
// mutex of this object's own, which no statement takes).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
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

 private:
  struct Kept {
    std::shared_ptr<const delta::Snapshot> snapshot;
    TableFigures figures;
  };
  // `location`'s figures, from the kept snapshot when its version did not change.
  Result<TableFigures> Figures(const std::string& location);

  const std::string warehouse_;
  const std::shared_ptr<const Clock> clock_;
  std::mutex mutex_;  // one scrape at a time
  std::unique_ptr<delta::ParquetLogIO> log_io_;
  std::map<std::string, Kept> kept_;  // by table location; GUARDED_BY(mutex_)
};

}  // namespace basin::server
