#include "server/table_metrics.h"

#include <algorithm>

#include "basin/object_store.h"
#include "catalog/warehouse.h"
#include "commands/table_features.h"
#include "engine/parquet_log_io.h"

namespace basin::server {

Result<TableFigures> FiguresOf(const delta::Snapshot& snapshot) {
  ASSIGN_OR_RETURN(int64_t target_bytes, commands::TargetFileSizeBytes(snapshot.metadata));
  TableFigures figures;
  figures.version = snapshot.version;
  figures.commit_timestamp_ms = snapshot.timestamp_ms;
  for (const delta::AddFile& file : snapshot.files) {
    figures.files++;
    figures.bytes += file.size;
    if (file.size < target_bytes / 4) figures.small_files++;
  }
  return figures;
}

// Scrapes only read logs: the log reader is given no database to write checkpoints with.
TableMetrics::TableMetrics(std::string warehouse, std::shared_ptr<const Clock> clock)
    : warehouse_(std::move(warehouse)),
      clock_(std::move(clock)),
      log_io_(std::make_unique<engine::DuckDBParquetLogIO>(nullptr)) {}

TableMetrics::~TableMetrics() = default;

Result<TableFigures> TableMetrics::Figures(const std::string& location) {
  auto kept = kept_.find(location);
  std::shared_ptr<const delta::Snapshot> latest;
  if (kept != kept_.end()) {
    ASSIGN_OR_RETURN(latest, delta::UpdateSnapshot(kept->second.snapshot, *log_io_));
    if (latest->version == kept->second.figures.version) return kept->second.figures;
  } else {
    ASSIGN_OR_RETURN(std::shared_ptr<ObjectStore> store, OpenStoreAt(location));
    ASSIGN_OR_RETURN(latest, delta::LoadSnapshot(store, location, *log_io_));
  }
  ASSIGN_OR_RETURN(TableFigures figures, FiguresOf(*latest));
  kept_[location] = Kept{latest, figures};
  return figures;
}

std::vector<metrics::FamilySamples> TableMetrics::Collect(
    const std::function<bool(const catalog::TableName&)>& visible) {
  using metrics::MetricType;
  std::vector<metrics::FamilySamples> families = {
      {"basin_table_version", "The table's latest version.", MetricType::kGauge, {}},
      {"basin_table_files", "Data files in the table's latest version.", MetricType::kGauge, {}},
      {"basin_table_small_files",
       "Data files under a quarter of the table's delta.targetFileSize.",
       MetricType::kGauge,
       {}},
      {"basin_table_bytes", "Bytes of the data files in the table's latest version.", MetricType::kGauge, {}},
      {"basin_table_last_commit_age_seconds",
       "Seconds since the table's latest commit.",
       MetricType::kGauge,
       {}},
  };
  metrics::FamilySamples errors{"basin_table_scrape_errors",
                                "Tables left out of this scrape: their log could not be read.",
                                MetricType::kGauge,
                                {}};
  std::lock_guard<std::mutex> lock(mutex_);
  Result<std::shared_ptr<catalog::Warehouse>> warehouse = catalog::Warehouse::Open(warehouse_);
  Result<std::vector<catalog::TableEntry>> tables =
      warehouse.ok() ? (*warehouse)->List() : Result<std::vector<catalog::TableEntry>>(warehouse.status());
  int64_t failed = tables.ok() ? 0 : 1;
  std::map<std::string, Kept> listed;  // what is kept for the next scrape: tables that still exist
  for (const catalog::TableEntry& table : tables.ok() ? *tables : std::vector<catalog::TableEntry>()) {
    if (!visible(table.name)) {
      // Another user's scrape may show it: what is kept for it stays.
      if (auto kept = kept_.find(table.location); kept != kept_.end())
        listed[table.location] = std::move(kept->second);
      continue;
    }
    Result<TableFigures> figures = Figures(table.location);
    if (!figures.ok()) {
      failed++;
      continue;
    }
    listed[table.location] = std::move(kept_[table.location]);
    const metrics::Labels labels = {{"schema", table.name.schema}, {"table", table.name.table}};
    const double age_seconds = std::max<int64_t>(0, clock_->NowMs() - figures->commit_timestamp_ms) / 1000.0;
    const double values[] = {static_cast<double>(figures->version), static_cast<double>(figures->files),
                             static_cast<double>(figures->small_files), static_cast<double>(figures->bytes),
                             age_seconds};
    for (size_t f = 0; f < families.size(); f++) families[f].samples.push_back({"", labels, values[f]});
  }
  kept_ = std::move(listed);
  errors.samples.push_back({"", {}, static_cast<double>(failed)});
  families.push_back(std::move(errors));
  return families;
}

}  // namespace basin::server
